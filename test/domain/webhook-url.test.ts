import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import {
  MAX_WEBHOOK_URL_LENGTH,
  isIpLiteral,
  isLoopbackListenHost,
  isPublicUnicastAddress,
  judgeResolvedAddresses,
  localReceiverAddress,
  parseWebhookUrl,
} from '../../src/domain/webhook-url.js';

function hostOf(raw: string): string {
  const parsed = parseWebhookUrl(raw);
  if (!parsed.ok) throw new Error(`expected ${raw} to parse, got: ${parsed.reason}`);
  return parsed.host;
}

function reasonOf(raw: unknown): string {
  const parsed = parseWebhookUrl(raw);
  if (parsed.ok) throw new Error(`expected ${String(raw)} to be refused`);
  return parsed.reason;
}

function dotted(n: number): string {
  return [n >>> 24, (n >>> 16) & 0xff, (n >>> 8) & 0xff, n & 0xff].join('.');
}

describe('parseWebhookUrl', () => {
  it('accepts an https URL and returns the lower-case host', () => {
    const parsed = parseWebhookUrl('HTTPS://Hooks.Example.COM:8443/in/bound?x=1');
    expect(parsed).toMatchObject({ ok: true, host: 'hooks.example.com' });
    if (!parsed.ok) return;
    expect(parsed.url.href).toBe('https://hooks.example.com:8443/in/bound?x=1');
    expect(parsed.url.port).toBe('8443');
  });

  it('returns IPv6 literal hosts without brackets, compressed', () => {
    expect(hostOf('https://[2606:4700:4700::1111]/hook')).toBe('2606:4700:4700::1111');
    expect(hostOf('https://[2606:4700:4700:0:0:0:0:1111]:8443/')).toBe('2606:4700:4700::1111');
    expect(hostOf('https://[::1]/')).toBe('::1');
  });

  // WHATWG URL normalises every IPv4 spelling to a dotted quad; the judgement relies on that.
  it.each([
    ['https://2130706433/', '127.0.0.1'],
    ['https://0x7f.1/', '127.0.0.1'],
    ['https://0x7f000001/', '127.0.0.1'],
    ['https://017700000001/', '127.0.0.1'],
    ['https://0177.0.0.1/', '127.0.0.1'],
    ['https://127.1/', '127.0.0.1'],
    ['https://127.0.1/', '127.0.0.1'],
    ['https://127.0.0.1./', '127.0.0.1'],
    ['https://%31%32%37.0.0.1/', '127.0.0.1'],
    ['https://\uff11\uff12\uff17.0.0.1/', '127.0.0.1'],
    ['https://10.1/', '10.0.0.1'],
    ['https://3232235521/', '192.168.0.1'],
    ['https://0xC0.0xA8.0.1/', '192.168.0.1'],
    ['https://0251.0376.0251.0376/', '169.254.169.254'],
    ['https://0xA9FEA9FE/', '169.254.169.254'],
    ['https://0/', '0.0.0.0'],
  ])('normalises %s to %s, which is refused as non-public', (raw, expected) => {
    const host = hostOf(raw);
    expect(host).toBe(expected);
    expect(isIpLiteral(host)).toBe(true);
    expect(isPublicUnicastAddress(host)).toBe(false);
  });

  it('normalises a decimal public IPv4 spelling too', () => {
    expect(hostOf('https://134744072/')).toBe('8.8.8.8');
    expect(isPublicUnicastAddress('8.8.8.8')).toBe(true);
  });

  it.each([
    ['https://[::ffff:127.0.0.1]/', '::ffff:7f00:1'],
    ['https://[::ffff:7f00:1]/', '::ffff:7f00:1'],
    ['https://[::FFFF:10.0.0.1]/', '::ffff:a00:1'],
    ['https://[::127.0.0.1]/', '::7f00:1'],
    ['https://[0:0:0:0:0:0:0:1]/', '::1'],
    ['https://[fd00:ec2::254]/', 'fd00:ec2::254'],
  ])('keeps IPv6 literal %s as %s, which is refused as non-public', (raw, expected) => {
    const host = hostOf(raw);
    expect(host).toBe(expected);
    expect(isIpLiteral(host)).toBe(true);
    expect(isPublicUnicastAddress(host)).toBe(false);
  });

  it.each([
    ['http://hooks.example.com/', 'url must use https'],
    ['HTTP://hooks.example.com/', 'url must use https'],
    ['ftp://hooks.example.com/', 'url must use https'],
    ['wss://hooks.example.com/', 'url must use https'],
    ['file:///etc/passwd', 'url must use https'],
    ['javascript:alert(1)', 'url must use https'],
    ['https://user:pass@hooks.example.com/', 'url must not contain a username or password'],
    ['https://user@hooks.example.com/', 'url must not contain a username or password'],
    ['https://:pass@hooks.example.com/', 'url must not contain a username or password'],
    ['https://hooks.example.com/#frag', 'url must not contain a fragment'],
    ['https://hooks.example.com/#', 'url must not contain a fragment'],
    ['https://hooks.example.com:0/in', 'url must not use port 0'],
    ['https://', 'url is not a valid absolute URL'],
    ['https://:443/', 'url is not a valid absolute URL'],
    ['https://@/', 'url is not a valid absolute URL'],
    ['https://[fe80::1%25eth0]/', 'url is not a valid absolute URL'],
    ['https://foo.0x7f/', 'url is not a valid absolute URL'],
    ['https://999.1.1.1/', 'url is not a valid absolute URL'],
    ['hooks.example.com/path', 'url is not a valid absolute URL'],
    ['/relative/path', 'url is not a valid absolute URL'],
    ['', 'url is not a valid absolute URL'],
  ])('refuses %s: %s', (raw, reason) => {
    expect(reasonOf(raw)).toBe(reason);
  });

  it.each([undefined, null, 42, true, {}, ['https://hooks.example.com/'], new URL('https://hooks.example.com/')])(
    'refuses the non-string %s',
    (raw) => {
      expect(reasonOf(raw)).toBe('url must be a string');
    },
  );

  it(`accepts ${MAX_WEBHOOK_URL_LENGTH} characters and refuses one more`, () => {
    const prefix = 'https://hooks.example.com/';
    const longest = prefix + 'a'.repeat(MAX_WEBHOOK_URL_LENGTH - prefix.length);
    expect(longest).toHaveLength(2048);
    expect(parseWebhookUrl(longest).ok).toBe(true);
    expect(reasonOf(`${longest}a`)).toBe('url must be at most 2048 characters');
  });

  it('parses every uint32 decimal host to its dotted quad', () => {
    fc.assert(
      fc.property(fc.integer({ min: 0, max: 0xffffffff }), (n) => {
        expect(hostOf(`https://${n}/`)).toBe(dotted(n));
        expect(hostOf(`https://0x${n.toString(16)}/`)).toBe(dotted(n));
      }),
    );
  });
});

describe('isIpLiteral', () => {
  it.each([
    ['127.0.0.1', true],
    ['8.8.8.8', true],
    ['::1', true],
    ['2606:4700:4700::1111', true],
    ['::ffff:7f00:1', true],
    ['hooks.test', false],
    ['localhost', false],
    ['0x7f.1', false],
    ['127.1', false],
    ['[::1]', false],
    ['', false],
  ])('%s -> %s', (host, expected) => {
    expect(isIpLiteral(host)).toBe(expected);
  });
});

describe('isPublicUnicastAddress: IPv4', () => {
  // Each range with its first and last address, plus the neighbours just outside.
  it.each([
    ['0.0.0.0', '"this network" 0/8'],
    ['0.255.255.255', '"this network" 0/8'],
    ['10.0.0.0', 'RFC 1918 10/8'],
    ['10.255.255.255', 'RFC 1918 10/8'],
    ['100.64.0.0', 'CGNAT 100.64/10'],
    ['100.127.255.255', 'CGNAT 100.64/10'],
    ['127.0.0.0', 'loopback 127/8'],
    ['127.0.0.1', 'loopback 127/8'],
    ['127.255.255.255', 'loopback 127/8'],
    ['169.254.0.0', 'link-local 169.254/16'],
    ['169.254.169.254', 'cloud metadata'],
    ['169.254.255.255', 'link-local 169.254/16'],
    ['172.16.0.0', 'RFC 1918 172.16/12'],
    ['172.31.255.255', 'RFC 1918 172.16/12'],
    ['192.0.0.0', 'IETF 192.0.0/24'],
    ['192.0.0.255', 'IETF 192.0.0/24'],
    ['192.0.2.0', 'TEST-NET-1'],
    ['192.0.2.255', 'TEST-NET-1'],
    ['192.88.99.0', '6to4 relay anycast'],
    ['192.88.99.255', '6to4 relay anycast'],
    ['192.168.0.0', 'RFC 1918 192.168/16'],
    ['192.168.255.255', 'RFC 1918 192.168/16'],
    ['198.18.0.0', 'benchmarking 198.18/15'],
    ['198.19.255.255', 'benchmarking 198.18/15'],
    ['198.51.100.0', 'TEST-NET-2'],
    ['198.51.100.255', 'TEST-NET-2'],
    ['203.0.113.0', 'TEST-NET-3'],
    ['203.0.113.255', 'TEST-NET-3'],
    ['224.0.0.0', 'multicast 224/4'],
    ['239.255.255.255', 'multicast 224/4'],
    ['240.0.0.0', 'reserved 240/4'],
    ['255.255.255.254', 'reserved 240/4'],
    ['255.255.255.255', 'broadcast'],
    // ipaddr.js names these 'as112' and 'amt'; only 'unicast' is accepted, so they are refused.
    ['192.175.48.1', 'AS112 (ipaddr.js as112)'],
    ['192.31.196.1', 'AS112 (ipaddr.js as112)'],
    ['192.52.193.1', 'AMT (ipaddr.js amt)'],
  ])('%s is not public (%s)', (address) => {
    expect(isPublicUnicastAddress(address)).toBe(false);
  });

  it.each([
    '1.0.0.0',
    '1.1.1.1',
    '8.8.8.8',
    '9.255.255.255',
    '11.0.0.0',
    '100.63.255.255',
    '100.128.0.0',
    '126.255.255.255',
    '128.0.0.0',
    '169.253.255.255',
    '169.255.0.0',
    '172.15.255.255',
    '172.32.0.0',
    '191.255.255.255',
    '192.0.1.0',
    '192.0.3.0',
    '192.88.98.255',
    '192.88.100.0',
    '192.167.255.255',
    '192.169.0.0',
    '198.17.255.255',
    '198.20.0.0',
    '198.51.99.255',
    '198.51.101.0',
    '203.0.112.255',
    '203.0.114.0',
    '223.255.255.255',
  ])('%s is public', (address) => {
    expect(isPublicUnicastAddress(address)).toBe(true);
  });

  it.each(['', 'localhost', '1.2.3', '1.2.3.4.5', '256.1.1.1', '0x7f.0.0.1', '0177.0.0.1', '2130706433', '08.8.8.8', ' 8.8.8.8', '8.8.8.8 ', '8.8.8.8/32'])(
    'unparsable or non-canonical %j is not public',
    (address) => {
      expect(isPublicUnicastAddress(address)).toBe(false);
    },
  );

  it('refuses non-string input', () => {
    expect(isPublicUnicastAddress(undefined as unknown as string)).toBe(false);
    expect(isPublicUnicastAddress(134744072 as unknown as string)).toBe(false);
  });
});

describe('isPublicUnicastAddress: IPv6', () => {
  it.each([
    ['::', 'unspecified'],
    ['::1', 'loopback'],
    ['0:0:0:0:0:0:0:1', 'loopback, uncompressed'],
    ['::ffff:127.0.0.1', 'IPv4-mapped loopback'],
    ['::ffff:7f00:1', 'IPv4-mapped loopback, hex'],
    ['::ffff:10.0.0.1', 'IPv4-mapped RFC 1918'],
    ['::ffff:169.254.169.254', 'IPv4-mapped metadata'],
    ['::ffff:0.0.0.0', 'IPv4-mapped this-network'],
    ['::ffff:0:7f00:1', 'IPv4-translated (RFC 6145)'],
    ['::ffff:0:808:808', 'IPv4-translated (RFC 6145), even of a public IPv4'],
    ['::7f00:1', 'deprecated IPv4-compatible'],
    ['::808:808', 'deprecated IPv4-compatible, even of a public IPv4'],
    ['fc00::', 'unique local fc00::/7'],
    ['fd00::1', 'unique local fc00::/7'],
    ['fd00:ec2::254', 'AWS metadata (unique local)'],
    ['fdff:ffff:ffff:ffff:ffff:ffff:ffff:ffff', 'unique local fc00::/7'],
    ['fe80::', 'link-local fe80::/10'],
    ['fe80::1', 'link-local fe80::/10'],
    ['febf:ffff:ffff:ffff:ffff:ffff:ffff:ffff', 'link-local fe80::/10'],
    ['fe80::1%eth0', 'link-local with zone id'],
    ['fec0::1', 'deprecated site-local'],
    ['ff00::', 'multicast ff00::/8'],
    ['ff02::1', 'multicast ff00::/8'],
    ['ffff:ffff:ffff:ffff:ffff:ffff:ffff:ffff', 'multicast ff00::/8'],
    ['100::', 'discard 100::/64'],
    ['100::ffff:ffff:ffff:ffff', 'discard 100::/64'],
    ['2001::', 'teredo 2001::/32'],
    ['2001:0:4136:e378:8000:63bf:3fff:fdd2', 'teredo 2001::/32'],
    ['2001:0:ffff:ffff:ffff:ffff:ffff:ffff', 'teredo 2001::/32'],
    ['2001:2::', 'benchmarking 2001:2::/48'],
    ['2001:2:0:ffff:ffff:ffff:ffff:ffff', 'benchmarking 2001:2::/48'],
    ['2001:20::', 'ORCHIDv2 2001:20::/28'],
    ['2001:2f:ffff:ffff:ffff:ffff:ffff:ffff', 'ORCHIDv2 2001:20::/28'],
    ['2001:10::1', 'deprecated ORCHID 2001:10::/28'],
    ['2001:1ff:ffff:ffff:ffff:ffff:ffff:ffff', 'IETF protocol assignments 2001::/23'],
    ['2001:db8::', 'documentation 2001:db8::/32'],
    ['2001:db8::1', 'documentation 2001:db8::/32'],
    ['2001:db8:ffff:ffff:ffff:ffff:ffff:ffff', 'documentation 2001:db8::/32'],
    ['3fff::', 'documentation 3fff::/20'],
    ['3fff:fff:ffff:ffff:ffff:ffff:ffff:ffff', 'documentation 3fff::/20'],
    ['64:ff9b::7f00:1', 'NAT64 of loopback'],
    ['64:ff9b::10.0.0.1', 'NAT64 of RFC 1918'],
    ['64:ff9b::a9fe:a9fe', 'NAT64 of metadata'],
    ['64:ff9b:1::808:808', 'local-use NAT64 64:ff9b:1::/48'],
    ['2002:7f00:1::', '6to4 of loopback'],
    ['2002:a00:1::1', '6to4 of 10.0.0.1'],
    ['2002:c0a8:101::1', '6to4 of 192.168.1.1'],
    ['2002:a9fe:a9fe::1', '6to4 of metadata'],
    ['2002::', '6to4 of 0.0.0.0'],
    ['1fff:ffff:ffff:ffff:ffff:ffff:ffff:ffff', 'outside global unicast 2000::/3'],
    ['4000::1', 'outside global unicast 2000::/3'],
    ['5f00::1', 'segment routing 5f00::/16'],
  ])('%s is not public (%s)', (address) => {
    expect(isPublicUnicastAddress(address)).toBe(false);
  });

  it.each([
    '2606:4700:4700::1111',
    '2001:4860:4860::8888',
    '2a00:1450:4001:80b::200e',
    '2000::',
    '2001:200::',
    '2001:db7:ffff:ffff:ffff:ffff:ffff:ffff',
    '2001:db9::',
    '2003::1',
    '3fff:1000::',
    '3fff:ffff:ffff:ffff:ffff:ffff:ffff:ffff',
    // IPv4-mapped, NAT64 and 6to4 addresses are judged by the IPv4 address they carry.
    '::ffff:8.8.8.8',
    '::ffff:808:808',
    '64:ff9b::8.8.8.8',
    '64:ff9b::101:101',
    '2002:808:808::1',
  ])('%s is public', (address) => {
    expect(isPublicUnicastAddress(address)).toBe(true);
  });

  it.each([':::', '::g', '[::1]', '2606:4700:4700::1111%eth0', '2001:db8::1::1', '12345::'])(
    'unparsable or zoned %j is not public',
    (address) => {
      expect(isPublicUnicastAddress(address)).toBe(false);
    },
  );
});

describe('isPublicUnicastAddress: properties', () => {
  const v4In = (base: number, prefix: number) =>
    fc.integer({ min: 0, max: 2 ** (32 - prefix) - 1 }).map((offset) => dotted((base + offset) >>> 0));
  const v4 = fc.integer({ min: 0, max: 0xffffffff }).map(dotted);
  const hex16 = fc.integer({ min: 0, max: 0xffff }).map((n) => n.toString(16));

  it.each([
    ['0.0.0.0/8', 0x00000000, 8],
    ['10/8', 0x0a000000, 8],
    ['100.64/10', 0x64400000, 10],
    ['127/8', 0x7f000000, 8],
    ['169.254/16', 0xa9fe0000, 16],
    ['172.16/12', 0xac100000, 12],
    ['192.168/16', 0xc0a80000, 16],
    ['198.18/15', 0xc6120000, 15],
    ['224/3 (multicast, reserved, broadcast)', 0xe0000000, 3],
  ])('no address in %s is public, nor its IPv4-mapped, NAT64 or 6to4 form', (_name, base, prefix) => {
    fc.assert(
      fc.property(v4In(base, prefix), (address) => {
        const [a, b, c, d] = address.split('.').map(Number) as [number, number, number, number];
        const high = ((a << 8) | b).toString(16);
        const low = ((c << 8) | d).toString(16);
        expect(isPublicUnicastAddress(address)).toBe(false);
        expect(isPublicUnicastAddress(`::ffff:${address}`)).toBe(false);
        expect(isPublicUnicastAddress(`::ffff:${high}:${low}`)).toBe(false);
        expect(isPublicUnicastAddress(`64:ff9b::${address}`)).toBe(false);
        expect(isPublicUnicastAddress(`2002:${high}:${low}::1`)).toBe(false);
      }),
    );
  });

  it('judges an IPv4-mapped or NAT64 address exactly like the IPv4 address it carries', () => {
    fc.assert(
      fc.property(v4, (address) => {
        const expected = isPublicUnicastAddress(address);
        expect(isPublicUnicastAddress(`::ffff:${address}`)).toBe(expected);
        expect(isPublicUnicastAddress(`64:ff9b::${address}`)).toBe(expected);
      }),
    );
  });

  it('no address in fc00::/7, fe80::/10 or ff00::/8 is public', () => {
    const suffix = fc.array(hex16, { minLength: 7, maxLength: 7 }).map((parts) => parts.join(':'));
    const inRange = (base: number, prefix: number) =>
      fc
        .tuple(fc.integer({ min: 0, max: 2 ** (16 - prefix) - 1 }), suffix)
        .map(([offset, rest]) => `${(base + offset).toString(16)}:${rest}`);
    fc.assert(
      fc.property(fc.oneof(inRange(0xfc00, 7), inRange(0xfe80, 10), inRange(0xff00, 8)), (address) => {
        expect(isPublicUnicastAddress(address)).toBe(false);
      }),
    );
  });
});

describe('judgeResolvedAddresses', () => {
  it('refuses a host that does not resolve', () => {
    expect(judgeResolvedAddresses([])).toEqual({ ok: false, reason: 'url host does not resolve' });
  });

  it('accepts only when every address is public', () => {
    expect(judgeResolvedAddresses(['8.8.8.8'])).toEqual({ ok: true });
    expect(judgeResolvedAddresses(['1.1.1.1', '2606:4700:4700::1111'])).toEqual({ ok: true });
  });

  it.each([
    [['10.0.0.1']],
    [['8.8.8.8', '10.0.0.1']],
    [['127.0.0.1', '8.8.8.8']],
    [['2606:4700:4700::1111', '::1']],
    [['1.1.1.1', 'fd00:ec2::254']],
    [['8.8.8.8', 'not-an-address']],
  ])('refuses %j: one non-public answer is enough', (addresses) => {
    expect(judgeResolvedAddresses(addresses)).toEqual({ ok: false, reason: 'url host resolves to a non-public address' });
  });
});

describe('the embedded demo\'s local receivers (localReceivers)', () => {
  const demo = { localReceivers: true };

  it.each([
    ['http://127.0.0.1:4000/webhooks', '127.0.0.1'],
    ['http://localhost:4000/webhooks', 'localhost'],
    ['http://LOCALHOST:4000/', 'localhost'],
    ['http://[::1]:4000/webhooks', '::1'],
    ['https://localhost:4443/webhooks', 'localhost'],
    ['http://127.1:4000/', '127.0.0.1'],
  ])('accepts %s with the rule on', (raw, host) => {
    expect(parseWebhookUrl(raw, demo)).toMatchObject({ ok: true, host });
  });

  it.each(['http://127.0.0.1:4000/webhooks', 'http://localhost:4000/webhooks', 'http://[::1]:4000/'])('refuses %s without it: https only', (raw) => {
    expect(parseWebhookUrl(raw)).toEqual({ ok: false, reason: 'url must use https' });
  });

  it.each([
    'http://hooks.example.com/',
    'http://10.0.0.1/',
    'http://127.0.0.2:4000/',
    'http://[::ffff:127.0.0.1]:4000/',
    'http://localhost.:4000/',
    'http://0.0.0.0:4000/',
    'ftp://127.0.0.1/',
  ])('still refuses %s with the rule on: plain http is for the loopback hosts only', (raw) => {
    expect(parseWebhookUrl(raw, demo)).toEqual({ ok: false, reason: 'url must use https (or http on 127.0.0.1, [::1] or localhost in the embedded demo)' });
  });

  it('keeps the other rules: no credentials, no fragment', () => {
    expect(parseWebhookUrl('http://user:pw@127.0.0.1:4000/', demo)).toEqual({ ok: false, reason: 'url must not contain a username or password' });
    expect(parseWebhookUrl('http://127.0.0.1:4000/#x', demo)).toEqual({ ok: false, reason: 'url must not contain a fragment' });
  });

  it('pins localhost to 127.0.0.1 and names no other host', () => {
    expect(localReceiverAddress('localhost')).toBe('127.0.0.1');
    expect(localReceiverAddress('127.0.0.1')).toBe('127.0.0.1');
    expect(localReceiverAddress('::1')).toBe('::1');
    for (const host of ['127.0.0.2', 'localhost.', 'hooks.test', '0.0.0.0', '::ffff:7f00:1']) expect(localReceiverAddress(host)).toBeNull();
  });

  it('isLoopbackListenHost: only a listener this machine alone can reach', () => {
    for (const host of ['127.0.0.1', '127.0.0.5', 'localhost', '::1', '[::1]']) expect(isLoopbackListenHost(host)).toBe(true);
    for (const host of ['0.0.0.0', '::', '192.168.1.10', 'example.com', '']) expect(isLoopbackListenHost(host)).toBe(false);
  });
});
