/**
 * SSRF guard for webhook targets: a URL is accepted only when it is https and every address
 * its host resolves to is public (domain/webhook-url.ts). The same guard answers the
 * connect-time DNS lookup of the sender, so a connection only ever goes to an address that
 * was judged in that very lookup. In the embedded demo only (`localReceivers`), a receiver on
 * this machine's loopback is accepted too, pinned to its loopback address.
 */
import { promises as dnsPromises, type LookupAddress, type LookupOptions } from 'node:dns';
import { isIP, type LookupFunction } from 'node:net';
import { InvalidUrlError } from '../../domain/errors.js';
import { isIpLiteral, isPublicUnicastAddress, judgeResolvedAddresses, localReceiverAddress, parseWebhookUrl } from '../../domain/webhook-url.js';

/** Host name -> its addresses; an empty list when the name does not resolve. */
export type Resolver = (host: string) => Promise<string[]>;

export interface CheckedHost {
  /** Lower-case host name, IPv6 without brackets. */
  host: string;
  /** The judged addresses: the only ones a connection to this host may use. */
  addresses: string[];
  /** True when the address came from WEBHOOK_HOST_OVERRIDES (tests only) or the embedded demo's local-receiver rule. */
  overridden: boolean;
}

export interface CheckedTarget extends CheckedHost {
  url: URL;
}

export interface WebhookUrlGuardOptions {
  resolve?: Resolver;
  /** Test-only host name -> loopback address (config.webhookHostOverrides). */
  hostOverrides: Map<string, string>;
  /** The embedded demo's local receivers on 127.0.0.1, [::1] or localhost (config.localWebhookReceivers). */
  localReceivers?: boolean;
}

/**
 * getaddrinfo, as a connection would use it; verbatim keeps the resolver's order.
 * Any failure (NXDOMAIN, SERVFAIL, timeout) is "does not resolve", never a crash.
 */
export const systemResolver: Resolver = async (host) => {
  try {
    const answers = await dnsPromises.lookup(host, { all: true, verbatim: true });
    return answers.map((answer) => answer.address);
  } catch {
    return [];
  }
};

function isLoopback(address: string): boolean {
  return (isIP(address) === 4 && address.startsWith('127.')) || address === '::1';
}

function normaliseHost(host: string): string {
  const lower = host.toLowerCase();
  return lower.startsWith('[') && lower.endsWith(']') ? lower.slice(1, -1) : lower;
}

export class WebhookUrlGuard {
  private readonly resolve: Resolver;
  private readonly hostOverrides: Map<string, string>;
  private readonly localReceivers: boolean;

  constructor(options: WebhookUrlGuardOptions) {
    this.resolve = options.resolve ?? systemResolver;
    this.localReceivers = options.localReceivers ?? false;
    this.hostOverrides = new Map();
    for (const [name, address] of options.hostOverrides) {
      // config.ts already enforces this; repeated here because the override is the one
      // bypass of the public-address rule and must never point anywhere but this machine.
      if (!isLoopback(address)) throw new TypeError(`webhook host override for ${name} must be a loopback address`);
      this.hostOverrides.set(name.toLowerCase(), address);
    }
  }

  /** Parses and judges a webhook URL; throws InvalidUrlError saying why it is refused. */
  async check(rawUrl: unknown): Promise<CheckedTarget> {
    const parsed = parseWebhookUrl(rawUrl, { localReceivers: this.localReceivers });
    if (!parsed.ok) throw new InvalidUrlError(parsed.reason);
    const checked = await this.checkHost(parsed.host);
    return { url: parsed.url, ...checked };
  }

  /** The host part of check(): what the connect-time lookup runs for every new connection. */
  async checkHost(rawHost: string): Promise<CheckedHost> {
    const host = normaliseHost(rawHost);
    if (host === '') throw new InvalidUrlError('url must have a host');
    // The demo's local receiver: exactly these loopback hosts, never resolved.
    const local = this.localReceivers ? localReceiverAddress(host) : null;
    if (local !== null) return { host, addresses: [local], overridden: true };
    // IP literals first and without DNS, so an override keyed by an IP-looking name can
    // never turn a literal private address into an allowed one.
    if (isIpLiteral(host)) {
      if (!isPublicUnicastAddress(host)) throw new InvalidUrlError('url host is a non-public address');
      return { host, addresses: [host], overridden: false };
    }
    const override = this.hostOverrides.get(host);
    if (override !== undefined) return { host, addresses: [override], overridden: true };
    let addresses: string[];
    try {
      addresses = await this.resolve(host);
    } catch {
      addresses = [];
    }
    const judgement = judgeResolvedAddresses(addresses);
    if (!judgement.ok) throw new InvalidUrlError(judgement.reason);
    return { host, addresses: [...addresses], overridden: false };
  }
}

function lookupError(message: string, code: string): NodeJS.ErrnoException {
  const error: NodeJS.ErrnoException = new Error(message);
  error.code = code;
  return error;
}

/**
 * A net/tls `lookup` that answers only for the checked host and only with its checked
 * addresses, so the socket cannot connect anywhere else whatever DNS says meanwhile.
 */
export function createPinnedLookup(target: Pick<CheckedHost, 'host' | 'addresses'>): LookupFunction {
  return (hostname, options: LookupOptions, callback) => {
    if (normaliseHost(hostname) !== target.host) {
      callback(lookupError(`webhook lookup for ${hostname} does not match checked host ${target.host}`, 'ERR_WEBHOOK_HOST_NOT_CHECKED'), '');
      return;
    }
    const wanted = options.family === 4 || options.family === 'IPv4' ? 4 : options.family === 6 || options.family === 'IPv6' ? 6 : 0;
    const answers: LookupAddress[] = target.addresses
      .map((address) => ({ address, family: isIP(address) }))
      .filter((answer) => answer.family !== 0 && (wanted === 0 || answer.family === wanted));
    const first = answers[0];
    if (first === undefined) {
      callback(lookupError(`webhook host ${hostname} has no checked address of the requested family`, 'ENOTFOUND'), '');
      return;
    }
    // Node asks with all: true when autoSelectFamily (happy eyeballs) is on, the default.
    if (options.all) callback(null, answers);
    else callback(null, first.address, first.family);
  };
}

/**
 * The connect-time lookup for a shared Agent: runs guard.checkHost for the host being
 * connected (override, literal or fresh DNS + judgement) and answers with exactly those
 * addresses. A non-public answer fails the connection with the InvalidUrlError itself.
 */
export function createGuardedLookup(guard: WebhookUrlGuard): LookupFunction {
  return (hostname, options, callback) => {
    guard.checkHost(hostname).then(
      (checked) => createPinnedLookup(checked)(hostname, options, callback),
      (error: unknown) => callback(error as NodeJS.ErrnoException, ''),
    );
  };
}
