import { describe, expect, it } from 'vitest';
import { ErrorCode, InvalidUrlError } from '../../src/domain/errors.js';
import { WebhookUrlGuard, createGuardedLookup, createPinnedLookup, type Resolver } from '../../src/services/webhooks/url-guard.js';

// Resolvers are always injected: these tests never touch real DNS or any network.
function fixedResolver(answers: Record<string, string[]>): Resolver & { calls: string[] } {
  const calls: string[] = [];
  const resolve = async (host: string) => {
    calls.push(host);
    return answers[host] ?? [];
  };
  return Object.assign(resolve, { calls });
}

const noOverrides = new Map<string, string>();

async function refusal(promise: Promise<unknown>): Promise<InvalidUrlError> {
  const error = await promise.then(
    () => null,
    (e: unknown) => e,
  );
  expect(error).toBeInstanceOf(InvalidUrlError);
  const invalid = error as InvalidUrlError;
  expect(invalid.code).toBe(ErrorCode.invalidUrl);
  return invalid;
}

type LookupResult = { error: NodeJS.ErrnoException | null; address: unknown; family?: number | undefined };

function runLookup(lookup: ReturnType<typeof createPinnedLookup>, host: string, options: object): Promise<LookupResult> {
  return new Promise((resolve) => {
    lookup(host, options, (error, address, family) => resolve({ error, address, family }));
  });
}

describe('WebhookUrlGuard.check', () => {
  it('accepts a host whose answers are all public', async () => {
    const resolve = fixedResolver({ 'hooks.example.com': ['93.184.215.14', '2606:2800:21f:cb07:6820:80da:af6b:8b2c'] });
    const guard = new WebhookUrlGuard({ resolve, hostOverrides: noOverrides });
    const target = await guard.check('https://Hooks.Example.com/in?x=1');
    expect(target).toEqual({
      url: new URL('https://hooks.example.com/in?x=1'),
      host: 'hooks.example.com',
      addresses: ['93.184.215.14', '2606:2800:21f:cb07:6820:80da:af6b:8b2c'],
      overridden: false,
    });
    expect(resolve.calls).toEqual(['hooks.example.com']);
  });

  it.each([
    [['127.0.0.1']],
    [['10.1.2.3']],
    [['169.254.169.254']],
    [['::1']],
    [['fd00:ec2::254']],
    [['::ffff:127.0.0.1']],
  ])('refuses a host resolving to %j', async (answers) => {
    const guard = new WebhookUrlGuard({ resolve: fixedResolver({ 'evil.example': answers }), hostOverrides: noOverrides });
    const error = await refusal(guard.check('https://evil.example/'));
    expect(error.message).toBe('url host resolves to a non-public address');
  });

  it('refuses a host with mixed public and private answers', async () => {
    const guard = new WebhookUrlGuard({
      resolve: fixedResolver({ 'mixed.example': ['8.8.8.8', '192.168.1.10'] }),
      hostOverrides: noOverrides,
    });
    expect((await refusal(guard.check('https://mixed.example/'))).message).toBe('url host resolves to a non-public address');
  });

  it('refuses a host that does not resolve, or whose resolver fails', async () => {
    const empty = new WebhookUrlGuard({ resolve: fixedResolver({}), hostOverrides: noOverrides });
    expect((await refusal(empty.check('https://nowhere.example/'))).message).toBe('url host does not resolve');
    const failing = new WebhookUrlGuard({
      resolve: async () => {
        throw Object.assign(new Error('queryA ESERVFAIL'), { code: 'ESERVFAIL' });
      },
      hostOverrides: noOverrides,
    });
    expect((await refusal(failing.check('https://broken.example/'))).message).toBe('url host does not resolve');
  });

  it('refuses a malformed URL with the parser reason, before any lookup', async () => {
    const resolve = fixedResolver({ 'hooks.example.com': ['8.8.8.8'] });
    const guard = new WebhookUrlGuard({ resolve, hostOverrides: noOverrides });
    expect((await refusal(guard.check('http://hooks.example.com/'))).message).toBe('url must use https');
    expect((await refusal(guard.check('https://u:p@hooks.example.com/'))).message).toBe(
      'url must not contain a username or password',
    );
    expect((await refusal(guard.check(42))).message).toBe('url must be a string');
    expect(resolve.calls).toEqual([]);
  });

  it('judges IP literals directly, without DNS', async () => {
    const resolve = fixedResolver({});
    const guard = new WebhookUrlGuard({ resolve, hostOverrides: new Map([['127.0.0.1', '127.0.0.1']]) });
    expect(await guard.check('https://8.8.8.8:8443/x')).toMatchObject({ host: '8.8.8.8', addresses: ['8.8.8.8'], overridden: false });
    expect(await guard.check('https://[2606:4700:4700::1111]/')).toMatchObject({
      host: '2606:4700:4700::1111',
      addresses: ['2606:4700:4700::1111'],
    });
    for (const raw of [
      'https://127.0.0.1/',
      'https://2130706433/',
      'https://0x7f.1/',
      'https://[::1]/',
      'https://[::ffff:7f00:1]/',
      'https://169.254.169.254/latest/meta-data/',
      'https://[fd00:ec2::254]/',
    ]) {
      expect((await refusal(guard.check(raw))).message).toBe('url host is a non-public address');
    }
    // An override keyed by an IP-looking name never applies: literals are judged first.
    expect(resolve.calls).toEqual([]);
  });

  it('applies an override only to the exact host name, with no DNS', async () => {
    const resolve = fixedResolver({});
    const guard = new WebhookUrlGuard({ resolve, hostOverrides: new Map([['hooks.test', '127.0.0.1']]) });
    expect(await guard.check('https://HOOKS.test:8443/in')).toMatchObject({
      host: 'hooks.test',
      addresses: ['127.0.0.1'],
      overridden: true,
    });
    expect(resolve.calls).toEqual([]);
    for (const raw of ['https://a.hooks.test/', 'https://hooks.test.evil.example/', 'https://hooks.tes/', 'https://hooks.test./']) {
      expect((await refusal(guard.check(raw))).message).toBe('url host does not resolve');
    }
    expect(resolve.calls).toEqual(['a.hooks.test', 'hooks.test.evil.example', 'hooks.tes', 'hooks.test.']);
  });

  it('refuses an override that does not point at loopback', () => {
    expect(() => new WebhookUrlGuard({ hostOverrides: new Map([['hooks.test', '10.0.0.1']]) })).toThrow(TypeError);
    expect(() => new WebhookUrlGuard({ hostOverrides: new Map([['hooks.test', '8.8.8.8']]) })).toThrow(TypeError);
    expect(() => new WebhookUrlGuard({ hostOverrides: new Map([['hooks.test', '::1']]) })).not.toThrow();
  });

  it('resolves again on every check (no caching of an earlier verdict)', async () => {
    let answer = ['8.8.8.8'];
    const calls: string[] = [];
    const guard = new WebhookUrlGuard({
      resolve: async (host) => {
        calls.push(host);
        return answer;
      },
      hostOverrides: noOverrides,
    });
    await guard.check('https://rebind.example/');
    answer = ['127.0.0.1'];
    await refusal(guard.check('https://rebind.example/'));
    expect(calls).toEqual(['rebind.example', 'rebind.example']);
  });
});

describe('createPinnedLookup', () => {
  const lookup = createPinnedLookup({ host: 'hooks.test', addresses: ['127.0.0.1', '::1'] });

  it('answers with the checked addresses only, in both callback shapes', async () => {
    expect(await runLookup(lookup, 'hooks.test', { all: true })).toEqual({
      error: null,
      address: [
        { address: '127.0.0.1', family: 4 },
        { address: '::1', family: 6 },
      ],
      family: undefined,
    });
    expect(await runLookup(lookup, 'HOOKS.TEST', {})).toEqual({ error: null, address: '127.0.0.1', family: 4 });
    expect(await runLookup(lookup, 'hooks.test', { family: 6 })).toEqual({ error: null, address: '::1', family: 6 });
  });

  it('refuses any other host name', async () => {
    const result = await runLookup(lookup, 'other.test', { all: true });
    expect(result.error?.code).toBe('ERR_WEBHOOK_HOST_NOT_CHECKED');
  });

  it('fails when no checked address has the requested family', async () => {
    const v4only = createPinnedLookup({ host: 'hooks.test', addresses: ['127.0.0.1'] });
    expect((await runLookup(v4only, 'hooks.test', { family: 6 })).error?.code).toBe('ENOTFOUND');
  });
});

describe('createGuardedLookup', () => {
  it('re-checks through the guard and refuses a non-public answer with InvalidUrlError', async () => {
    let answer = ['127.0.0.1'];
    const guard = new WebhookUrlGuard({ resolve: async () => answer, hostOverrides: new Map([['hooks.test', '127.0.0.1']]) });
    const lookup = createGuardedLookup(guard);
    const refused = await runLookup(lookup, 'rebind.example', { all: true });
    expect(refused.error).toBeInstanceOf(InvalidUrlError);
    answer = [];
    expect((await runLookup(lookup, 'rebind.example', { all: true })).error).toBeInstanceOf(InvalidUrlError);
    expect(await runLookup(lookup, 'hooks.test', { all: true })).toMatchObject({
      error: null,
      address: [{ address: '127.0.0.1', family: 4 }],
    });
  });
});

describe('WebhookUrlGuard with the embedded demo\'s local receivers', () => {
  it('pins 127.0.0.1, [::1] and localhost to loopback without DNS, and only with the rule on', async () => {
    const resolve = fixedResolver({ localhost: ['10.0.0.9'] });
    const demo = new WebhookUrlGuard({ resolve, hostOverrides: noOverrides, localReceivers: true });
    expect(await demo.check('http://localhost:4000/webhooks')).toMatchObject({ host: 'localhost', addresses: ['127.0.0.1'], overridden: true });
    expect(await demo.check('http://127.0.0.1:4000/webhooks')).toMatchObject({ host: '127.0.0.1', addresses: ['127.0.0.1'] });
    expect(await demo.check('http://[::1]:4000/webhooks')).toMatchObject({ host: '::1', addresses: ['::1'] });
    // The connect-time lookup answers the same pinned address.
    const looked = await runLookup(createGuardedLookup(demo), 'localhost', {});
    expect(looked).toMatchObject({ error: null, address: '127.0.0.1', family: 4 });
    expect(resolve.calls).toEqual([]);

    const strict = new WebhookUrlGuard({ resolve, hostOverrides: noOverrides });
    expect((await refusal(strict.check('http://127.0.0.1:4000/webhooks'))).message).toBe('url must use https');
    expect((await refusal(strict.check('https://127.0.0.1:4443/webhooks'))).message).toBe('url host is a non-public address');
    expect((await refusal(strict.check('https://localhost:4443/webhooks'))).message).toBe('url host resolves to a non-public address');
  });

  it('refuses other private targets with the rule on', async () => {
    const demo = new WebhookUrlGuard({ resolve: fixedResolver({ 'intranet.example': ['10.0.0.1'] }), hostOverrides: noOverrides, localReceivers: true });
    expect((await refusal(demo.check('https://10.0.0.1/'))).message).toBe('url host is a non-public address');
    expect((await refusal(demo.check('https://127.0.0.2/'))).message).toBe('url host is a non-public address');
    expect((await refusal(demo.check('https://intranet.example/'))).message).toBe('url host resolves to a non-public address');
    expect((await refusal(demo.check('http://intranet.example/'))).message).toMatch(/^url must use https/);
  });
});
