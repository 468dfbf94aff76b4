/**
 * Webhook target rules (spec: https only, publicly reachable host). Pure: the DNS lookup
 * and the connection live in services/webhooks; this module only judges strings.
 *
 * One exception, for the embedded demo on a developer's machine only (config
 * `localWebhookReceivers`, docs/WEBHOOKS.md "URL rule"): a local receiver on this machine's
 * loopback, http or https, so webhooks can be tried without a public host or a certificate.
 */
import ipaddr from 'ipaddr.js';

export const MAX_WEBHOOK_URL_LENGTH = 2048;

export type ParsedWebhookUrl = { ok: true; url: URL; host: string } | { ok: false; reason: string };
export type AddressJudgement = { ok: true } | { ok: false; reason: string };

export interface WebhookUrlRules {
  /**
   * The embedded demo's local receivers: http or https on 127.0.0.1, [::1] or localhost. Never
   * on with DATABASE_URL, in production or on a non-loopback listener (src/config.ts).
   */
  localReceivers?: boolean;
}

/**
 * The loopback hosts a local receiver may use, and the address each connects to. `localhost`
 * is pinned to 127.0.0.1 rather than resolved, so what was judged is what is connected to.
 * Other loopback spellings (127.0.0.2, ::ffff:127.0.0.1, names resolving to loopback) stay refused.
 */
const LOCAL_RECEIVER_HOSTS: ReadonlyMap<string, string> = new Map([
  ['127.0.0.1', '127.0.0.1'],
  ['::1', '::1'],
  ['localhost', '127.0.0.1'],
]);

/** The loopback address of a local receiver's host (lower-case, IPv6 without brackets), or null. */
export function localReceiverAddress(host: string): string | null {
  return LOCAL_RECEIVER_HOSTS.get(host) ?? null;
}

/** True for a listen address (HOST) that only this machine can reach: 127.0.0.0/8, ::1 or localhost. */
export function isLoopbackListenHost(host: string): boolean {
  const bare = host.startsWith('[') && host.endsWith(']') ? host.slice(1, -1) : host;
  if (bare.toLowerCase() === 'localhost') return true;
  if (!ipaddr.isValid(bare)) return false;
  const address = ipaddr.process(bare);
  return address.range() === 'loopback';
}

/**
 * Parses with the WHATWG URL parser, the same one the sender uses, so what we judge is what
 * we connect to. It already normalises IPv4 spellings (2130706433, 0x7f.1, 017700000001,
 * 127.1, percent-encoded or full-width digits) to a dotted quad, so no second parser is
 * needed to catch them.
 */
export function parseWebhookUrl(raw: unknown, rules: WebhookUrlRules = {}): ParsedWebhookUrl {
  if (typeof raw !== 'string') return { ok: false, reason: 'url must be a string' };
  if (raw.length > MAX_WEBHOOK_URL_LENGTH) {
    return { ok: false, reason: `url must be at most ${MAX_WEBHOOK_URL_LENGTH} characters` };
  }
  let url: URL;
  try {
    url = new URL(raw);
  } catch {
    return { ok: false, reason: 'url is not a valid absolute URL' };
  }
  let host = url.hostname.toLowerCase();
  if (host.startsWith('[') && host.endsWith(']')) host = host.slice(1, -1);
  if (url.protocol !== 'https:') {
    const localHttp = rules.localReceivers === true && url.protocol === 'http:' && localReceiverAddress(host) !== null;
    if (!localHttp) {
      return { ok: false, reason: rules.localReceivers ? 'url must use https (or http on 127.0.0.1, [::1] or localhost in the embedded demo)' : 'url must use https' };
    }
  }
  if (url.username !== '' || url.password !== '') {
    return { ok: false, reason: 'url must not contain a username or password' };
  }
  // Fragments are never sent to the server, so one in a webhook URL is a mistake (or an
  // attempt to smuggle something past a reviewer); refuse it rather than drop it silently.
  // href, not hash: "https://x/#" has an empty hash but still carries a fragment.
  if (url.href.includes('#')) return { ok: false, reason: 'url must not contain a fragment' };
  if (host === '') return { ok: false, reason: 'url must have a host' };
  // Port 0 names no listening port: nothing could ever receive there.
  if (url.port === '0') return { ok: false, reason: 'url must not use port 0' };
  return { ok: true, url, host };
}

/**
 * True when host (as returned by parseWebhookUrl: lower-case, IPv6 without brackets) is an
 * IP address rather than a name. IPv4 must be the dotted quad the URL parser produces.
 */
export function isIpLiteral(host: string): boolean {
  if (host.includes(':')) return ipaddr.IPv6.isValid(host);
  return ipaddr.IPv4.isValidFourPartDecimal(host);
}

function cidrs(list: string[]): Array<[ipaddr.IPv4 | ipaddr.IPv6, number]> {
  return list.map((cidr) => ipaddr.parseCIDR(cidr));
}

// Explicit deny lists, parsed once. Every IPv4 entry is also a non-'unicast' range in
// ipaddr.js 2.5; listing them here pins the policy so a library upgrade that renames or
// drops a range cannot silently widen it.
const NON_PUBLIC_V4 = cidrs([
  '0.0.0.0/8', // "this network"
  '10.0.0.0/8', // RFC 1918
  '100.64.0.0/10', // carrier-grade NAT
  '127.0.0.0/8', // loopback
  '169.254.0.0/16', // link-local, including cloud metadata 169.254.169.254
  '172.16.0.0/12', // RFC 1918
  '192.0.0.0/24', // IETF protocol assignments
  '192.0.2.0/24', // TEST-NET-1
  '192.88.99.0/24', // 6to4 relay anycast (deprecated)
  '192.168.0.0/16', // RFC 1918
  '198.18.0.0/15', // benchmarking
  '198.51.100.0/24', // TEST-NET-2
  '203.0.113.0/24', // TEST-NET-3
  '224.0.0.0/4', // multicast
  '240.0.0.0/4', // reserved, including broadcast 255.255.255.255
]);

// Only global unicast (2000::/3) is allocated for public IPv6 today; everything outside it
// (::/8 including IPv4-compatible ::a.b.c.d, 100::/64, fc00::/7, fe80::/10, ff00::/8, ...)
// is refused even where ipaddr.js would answer 'unicast'.
const GLOBAL_UNICAST_V6 = ipaddr.parseCIDR('2000::/3');

// Inside 2000::/3 but not public. ipaddr.js names all of these too (teredo, benchmarking,
// orchid2, reserved, ...); listed for the same reason as NON_PUBLIC_V4.
const NON_PUBLIC_V6 = cidrs([
  '2001::/23', // IETF protocol assignments: teredo 2001::/32, benchmarking 2001:2::/48, ORCHIDv2 2001:20::/28, ...
  '2001:db8::/32', // documentation
  '3fff::/20', // documentation (RFC 9637)
]);

// Translation prefixes whose embedded IPv4 address decides: a DNS64 resolver answers
// 64:ff9b::a.b.c.d for IPv4-only hosts, so refusing the prefix wholesale would break every
// IPv4-only receiver on an IPv6-only network, while 64:ff9b::10.0.0.1 must stay refused.
const NAT64_WELL_KNOWN = ipaddr.parseCIDR('64:ff9b::/96');
const SIX_TO_FOUR = ipaddr.parseCIDR('2002::/16');

function inAny(address: ipaddr.IPv4 | ipaddr.IPv6, list: Array<[ipaddr.IPv4 | ipaddr.IPv6, number]>): boolean {
  return list.some((range) => address.kind() === range[0].kind() && address.match(range));
}

function embeddedIpv4(high: number, low: number): ipaddr.IPv4 {
  return new ipaddr.IPv4([high >> 8, high & 0xff, low >> 8, low & 0xff]);
}

function isPublicV4(address: ipaddr.IPv4): boolean {
  return address.range() === 'unicast' && !inAny(address, NON_PUBLIC_V4);
}

function isPublicV6(address: ipaddr.IPv6): boolean {
  const parts = address.parts;
  if (address.isIPv4MappedAddress()) return isPublicV4(address.toIPv4Address());
  if (address.match(NAT64_WELL_KNOWN)) return isPublicV4(embeddedIpv4(parts[6]!, parts[7]!));
  if (address.match(SIX_TO_FOUR)) return isPublicV4(embeddedIpv4(parts[1]!, parts[2]!));
  return address.range() === 'unicast' && address.match(GLOBAL_UNICAST_V6) && !inAny(address, NON_PUBLIC_V6);
}

/**
 * True only for an address a public webhook receiver may have: ipaddr.js range 'unicast'
 * plus the explicit lists above. IPv4 must be a dotted quad (what DNS and the URL parser
 * produce); IPv6 with a zone id, or anything unparsable, is false.
 */
export function isPublicUnicastAddress(address: string): boolean {
  if (typeof address !== 'string') return false;
  if (address.includes(':')) {
    if (!ipaddr.IPv6.isValid(address)) return false;
    const parsed = ipaddr.IPv6.parse(address);
    // A zone id only makes sense for link-local targets; it never names a public host.
    if (parsed.zoneId !== undefined) return false;
    return isPublicV6(parsed);
  }
  if (!ipaddr.IPv4.isValidFourPartDecimal(address)) return false;
  return isPublicV4(ipaddr.IPv4.parse(address));
}

/** Every address a host resolves to must be public: one private answer is enough to refuse. */
export function judgeResolvedAddresses(addresses: string[]): AddressJudgement {
  if (addresses.length === 0) return { ok: false, reason: 'url host does not resolve' };
  for (const address of addresses) {
    if (!isPublicUnicastAddress(address)) return { ok: false, reason: 'url host resolves to a non-public address' };
  }
  return { ok: true };
}
