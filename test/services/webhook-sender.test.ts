/**
 * The sender against a local HTTPS receiver. Network rule for this file: connections only
 * ever go to loopback. Injected resolvers hand out a public address at most once, and only
 * for a lookup after which no connection can follow (it is the first lookup, and every
 * later lookup answers loopback), so nothing can reach a public address even if the
 * sender were broken.
 */
import { request as httpsRequest } from 'node:https';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { WebhookSender } from '../../src/services/webhooks/http-sender.js';
import { WebhookUrlGuard, type Resolver } from '../../src/services/webhooks/url-guard.js';
import { startHttpsReceiver, type HttpsReceiver } from '../helpers/https-receiver.js';

const USER_AGENT = 'picks-service-webhooks/test';
const PUBLIC_ANSWER = '8.8.8.8';
const overrides = () => new Map([['hooks.test', '127.0.0.1']]);

/** Answers PUBLIC_ANSWER on the first call and 127.0.0.1 on every later one. */
function rebindingResolver(): Resolver & { calls: string[] } {
  const calls: string[] = [];
  const resolve = async (host: string) => {
    calls.push(host);
    return calls.length === 1 ? [PUBLIC_ANSWER] : ['127.0.0.1'];
  };
  return Object.assign(resolve, { calls });
}

/** For guards that must never need DNS: records the call and answers nothing. */
function noDns(): Resolver & { calls: string[] } {
  const calls: string[] = [];
  return Object.assign(
    async (host: string) => {
      calls.push(host);
      return [];
    },
    { calls },
  );
}

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

let receiver: HttpsReceiver;
const senders: WebhookSender[] = [];

function makeSender(options: { resolve?: Resolver; timeoutMs?: number; maxResponseBytes?: number } = {}): WebhookSender {
  const guard = new WebhookUrlGuard({ resolve: options.resolve ?? noDns(), hostOverrides: overrides() });
  const sender = new WebhookSender({
    guard,
    userAgent: USER_AGENT,
    ...(options.timeoutMs === undefined ? {} : { timeoutMs: options.timeoutMs }),
    ...(options.maxResponseBytes === undefined ? {} : { maxResponseBytes: options.maxResponseBytes }),
  });
  senders.push(sender);
  return sender;
}

const BODY = '{"id":"evt_1","type":"pick.published","data":{"odds":2.1}}';

beforeAll(async () => {
  receiver = await startHttpsReceiver();
});

afterEach(async () => {
  await Promise.all(senders.splice(0).map((sender) => sender.close()));
  receiver.requests.length = 0;
  receiver.setResponse({ status: 200, body: '' });
});

afterAll(async () => {
  await receiver.close();
});

describe('test TLS setup', () => {
  it('trusts the fixture CA through NODE_EXTRA_CA_CERTS in the test worker (default trust store)', async () => {
    expect(process.env.NODE_EXTRA_CA_CERTS).toBe('test/fixtures/tls/ca.pem');
    receiver.setResponse({ status: 204 });
    const status = await new Promise<number>((resolve, reject) => {
      const req = httpsRequest({ host: '127.0.0.1', servername: 'localhost', port: receiver.port, path: '/probe', method: 'GET' }, (res) => {
        res.resume();
        resolve(res.statusCode ?? 0);
      });
      req.on('error', reject);
      req.end();
    });
    expect(status).toBe(204);
  });
});

describe('WebhookSender.send', () => {
  it('POSTs the body with JSON content type and user agent; 2xx is ok', async () => {
    receiver.setResponse({ status: 200, body: 'thanks' });
    const sender = makeSender();
    const outcome = await sender.send({
      url: receiver.url('hooks.test', '/in/bound?tenant=7'),
      headers: { 'X-Service-Signature': 'sha256=abc', 'Content-Type': 'text/plain' },
      body: BODY,
    });
    expect(outcome).toMatchObject({ ok: true, statusCode: 200, errorKind: null, errorMessage: null, responseBody: 'thanks' });
    expect(outcome.durationMs).toBeGreaterThanOrEqual(0);
    const [received] = await receiver.waitForRequests(1);
    expect(received).toMatchObject({ method: 'POST', path: '/in/bound?tenant=7' });
    expect(received!.headers['content-type']).toBe('application/json');
    expect(received!.headers['user-agent']).toBe(USER_AGENT);
    expect(received!.headers['x-service-signature']).toBe('sha256=abc');
    expect(received!.headers.host).toBe(`hooks.test:${receiver.port}`);
    expect(received!.body.toString('utf8')).toBe(BODY);
  });

  it('counts any 2xx as delivered and reports an empty body as ""', async () => {
    receiver.setResponse({ status: 204 });
    const outcome = await makeSender().send({ url: receiver.url(), headers: {}, body: BODY });
    expect(outcome).toMatchObject({ ok: true, statusCode: 204, responseBody: '' });
  });

  it('reuses a pooled keep-alive connection for the next delivery to the same origin', async () => {
    const sender = makeSender();
    expect((await sender.send({ url: receiver.url(), headers: {}, body: BODY })).ok).toBe(true);
    // undici hands the connection back to the pool just after the body ends; a send issued
    // in the same tick would open a second connection, so give it a moment.
    await sleep(20);
    expect((await sender.send({ url: receiver.url(), headers: {}, body: BODY })).ok).toBe(true);
    const [first, second] = await receiver.waitForRequests(2);
    expect(second!.remotePort).toBe(first!.remotePort);
  });

  it('reports 500 as http_status with the response body', async () => {
    receiver.setResponse({ status: 500, body: 'boom' });
    const outcome = await makeSender().send({ url: receiver.url(), headers: {}, body: BODY });
    expect(outcome).toMatchObject({
      ok: false,
      statusCode: 500,
      errorKind: 'http_status',
      errorMessage: 'receiver answered 500',
      responseBody: 'boom',
    });
  });

  it('does not follow a redirect and reports it as a failure', async () => {
    receiver.setResponse({ redirect: receiver.url('hooks.test', '/elsewhere') });
    const outcome = await makeSender().send({ url: receiver.url(), headers: {}, body: BODY });
    expect(outcome).toMatchObject({ ok: false, statusCode: 302, errorKind: 'redirect' });
    expect(outcome.errorMessage).toContain('/elsewhere');
    await sleep(200);
    expect(receiver.requests.map((r) => r.path)).toEqual(['/webhook']);
  });

  it('times out a receiver that never answers', async () => {
    receiver.setResponse('hang');
    const outcome = await makeSender({ timeoutMs: 300 }).send({ url: receiver.url(), headers: {}, body: BODY });
    expect(outcome).toMatchObject({ ok: false, statusCode: null, errorKind: 'timeout', responseBody: null });
    expect(outcome.durationMs).toBeGreaterThanOrEqual(250);
    expect(outcome.durationMs).toBeLessThan(3_000);
    expect(receiver.requests).toHaveLength(1);
  });

  it('times out a receiver that answers too late', async () => {
    receiver.setResponse({ status: 200, delayMs: 1_000 });
    const outcome = await makeSender({ timeoutMs: 300 }).send({ url: receiver.url(), headers: {}, body: BODY });
    expect(outcome).toMatchObject({ ok: false, errorKind: 'timeout' });
  });

  it('keeps only the first 4096 bytes of a large response body', async () => {
    receiver.setResponse({ status: 200, body: Buffer.alloc(8 * 1024 * 1024, 'x') });
    const outcome = await makeSender().send({ url: receiver.url(), headers: {}, body: BODY });
    expect(outcome).toMatchObject({ ok: true, statusCode: 200 });
    expect(outcome.responseBody).toBe('x'.repeat(4096));
  });

  it('honours a smaller maxResponseBytes, also for error statuses', async () => {
    receiver.setResponse({ status: 503, body: 'abcdefghij' });
    const outcome = await makeSender({ maxResponseBytes: 4 }).send({ url: receiver.url(), headers: {}, body: BODY });
    expect(outcome).toMatchObject({ ok: false, statusCode: 503, errorKind: 'http_status', responseBody: 'abcd' });
  });

  it('decodes the body read with replacement: NUL and invalid UTF-8 become U+FFFD', async () => {
    receiver.setResponse({ status: 200, body: Buffer.from([0x61, 0x00, 0x62, 0xff, 0xed, 0xa0, 0x80, 0x63]) });
    const outcome = await makeSender().send({ url: receiver.url(), headers: {}, body: BODY });
    expect(outcome).toMatchObject({ ok: true, statusCode: 200, responseBody: 'a\uFFFDb\uFFFD\uFFFD\uFFFD\uFFFDc' });
  });

  it('a character cut by the 4096-byte limit is left out, not half kept', async () => {
    // 4,094 bytes, then a 4-byte character that crosses the limit.
    receiver.setResponse({ status: 500, body: `${'x'.repeat(4_094)}\u{1F600}tail` });
    const outcome = await makeSender().send({ url: receiver.url(), headers: {}, body: BODY });
    expect(outcome).toMatchObject({ ok: false, statusCode: 500, errorKind: 'http_status', responseBody: 'x'.repeat(4_094) });
  });

  it('refuses a non-https or private-literal URL without connecting', async () => {
    const sender = makeSender();
    const http = await sender.send({ url: `http://hooks.test:${receiver.port}/webhook`, headers: {}, body: BODY });
    expect(http).toMatchObject({ ok: false, statusCode: null, errorKind: 'invalid_url', errorMessage: 'url must use https' });
    const literal = await sender.send({ url: receiver.url('127.0.0.1'), headers: {}, body: BODY });
    expect(literal).toMatchObject({ ok: false, errorKind: 'invalid_url', errorMessage: 'url host is a non-public address' });
    await sleep(100);
    expect(receiver.requests).toHaveLength(0);
  });

  it('reports a certificate that does not match the host as tls', async () => {
    const guard = new WebhookUrlGuard({ resolve: noDns(), hostOverrides: new Map([['wrong-name.example', '127.0.0.1']]) });
    const sender = new WebhookSender({ guard, userAgent: USER_AGENT });
    senders.push(sender);
    const outcome = await sender.send({ url: receiver.url('wrong-name.example'), headers: {}, body: BODY });
    expect(outcome).toMatchObject({ ok: false, statusCode: null, errorKind: 'tls' });
    expect(outcome.errorMessage).toContain('ERR_TLS_CERT_ALTNAME_INVALID');
    expect(receiver.requests).toHaveLength(0);
  });

  it('reports a refused connection as connection', async () => {
    const closed = await startHttpsReceiver();
    const url = closed.url();
    await closed.close();
    const outcome = await makeSender().send({ url, headers: {}, body: BODY });
    expect(outcome).toMatchObject({ ok: false, statusCode: null, errorKind: 'connection' });
    expect(outcome.errorMessage).toContain('ECONNREFUSED');
  });
});

describe('WebhookSender DNS rebinding', () => {
  it('re-checks at send: public when the subscription was created, loopback now -> invalid_url, no request', async () => {
    const resolve = rebindingResolver();
    const guard = new WebhookUrlGuard({ resolve, hostOverrides: overrides() });
    const url = receiver.url('rebind.example');
    // Creation-time check: the only lookup that answers a public address; nothing connects.
    expect(await guard.check(url)).toMatchObject({ addresses: [PUBLIC_ANSWER], overridden: false });
    const sender = new WebhookSender({ guard, userAgent: USER_AGENT });
    senders.push(sender);
    const outcome = await sender.send({ url, headers: {}, body: BODY });
    expect(outcome).toMatchObject({
      ok: false,
      statusCode: null,
      errorKind: 'invalid_url',
      errorMessage: 'url host resolves to a non-public address',
      responseBody: null,
    });
    expect(resolve.calls).toEqual(['rebind.example', 'rebind.example']);
    await sleep(200);
    expect(receiver.requests).toHaveLength(0);
  });

  it('re-checks at connect: public at the send pre-check, loopback at connect-time lookup -> refused', async () => {
    const resolve = rebindingResolver();
    const sender = makeSender({ resolve });
    const outcome = await sender.send({ url: receiver.url('rebind2.example'), headers: {}, body: BODY });
    expect(outcome).toMatchObject({
      ok: false,
      statusCode: null,
      errorKind: 'invalid_url',
      errorMessage: 'url host resolves to a non-public address',
    });
    // First lookup: the send pre-check (public); second: the Agent's connect-time lookup.
    expect(resolve.calls).toEqual(['rebind2.example', 'rebind2.example']);
    await sleep(200);
    expect(receiver.requests).toHaveLength(0);
  });
});
