/**
 * Webhook tooling (docs/WEBHOOKS.md "Testing an endpoint", "Replaying failed deliveries",
 * "Secrets"): the test delivery, the replay of failed and cancelled deliveries, and the
 * 24 h signature overlap after a secret rotation, checked end to end against a local HTTPS
 * receiver (hooks.test -> 127.0.0.1) with the `standardwebhooks` package a customer would use.
 */
import { Ajv2020 } from 'ajv/dist/2020.js';
import addFormats from 'ajv-formats';
import { createHmac } from 'node:crypto';
import { Webhook } from 'standardwebhooks';
import { afterEach, describe, expect, it } from 'vitest';
import { systemClock } from '../../src/domain/clock.js';
import { createKeyring, decryptSecret } from '../../src/domain/secrets.js';
import { verifyWebhookSignature } from '../../src/domain/signature.js';
import { WEBHOOK_USER_AGENT } from '../../src/domain/webhook.js';
import { WebhookService } from '../../src/services/webhooks/subscriptions.js';
import { WebhookUrlGuard } from '../../src/services/webhooks/url-guard.js';
import { createTestApp, ManualClock, WEBHOOK_SECRET_KEY, type TestApp, type TestAppOptions } from '../helpers/app.js';
import { CREATE_KEY, pickInput, PUBLISH } from '../helpers/fixtures.js';
import { startHttpsReceiver, type HttpsReceiver, type ReceivedRequest } from '../helpers/https-receiver.js';

const BASE = '/api/v1/webhooks';
const HOUR_MS = 60 * 60 * 1000;

const opened: { close(): Promise<void> }[] = [];
afterEach(async () => {
  for (const item of opened.splice(0).reverse()) await item.close();
});

async function app(options: TestAppOptions = {}): Promise<TestApp> {
  const created = await createTestApp({ ...options, env: { WEBHOOK_HOST_OVERRIDES: 'hooks.test=127.0.0.1', ...options.env } });
  opened.push(created);
  return created;
}

async function receiver(): Promise<HttpsReceiver> {
  const started = await startHttpsReceiver();
  opened.push(started);
  return started;
}

async function createKey(testApp: TestApp, tier = 'GROWTH'): Promise<string> {
  const created = await testApp.graphql<{ createApiKey: { key: string } }>(CREATE_KEY, { input: { tier } });
  return created.data!.createApiKey.key;
}

function call(testApp: TestApp, method: 'GET' | 'POST' | 'PATCH', url: string, key: string, body?: unknown) {
  return testApp.app.inject({
    method,
    url,
    headers: { authorization: `Bearer ${key}`, ...(body === undefined ? {} : { 'content-type': 'application/json' }) },
    ...(body === undefined ? {} : { payload: typeof body === 'string' ? body : JSON.stringify(body) }),
  });
}

async function subscribe(testApp: TestApp, key: string, url: string): Promise<{ id: string; secret: string }> {
  const res = await call(testApp, 'POST', BASE, key, { url, events: ['pick.published'] });
  expect(res.statusCode, res.body).toBe(201);
  return { id: res.json().subscription_id, secret: res.json().hmac_secret };
}

async function publish(testApp: TestApp, team: string): Promise<void> {
  const result = await testApp.graphql(PUBLISH, { input: pickInput({ homeTeam: team, selection: team }) });
  expect(result.errors).toBeUndefined();
}

/** Relays the whole outbox and runs the dispatcher until nothing is due. */
async function drive(testApp: TestApp): Promise<void> {
  const deadline = Date.now() + 10_000;
  for (;;) {
    await testApp.runtime.relay.relayOnce();
    const [left] = await testApp.runtime.orm.em.fork().execute<{ n: number }[]>('select count(*)::int as n from outbox_events where relayed_at is null');
    if (Number(left!.n) === 0) break;
    if (Date.now() > deadline) throw new Error('the outbox was not relayed within 10 s');
    await new Promise((resolve) => setTimeout(resolve, 10));
  }
  while ((await testApp.runtime.dispatcher.dispatchOnce()) > 0) await testApp.runtime.dispatcher.idle();
  await testApp.runtime.dispatcher.idle();
}

function header(request: ReceivedRequest, name: string): string {
  const value = request.headers[name];
  return Array.isArray(value) ? value.join(',') : (value ?? '');
}

function standardHeaders(request: ReceivedRequest): Record<string, string> {
  return {
    'webhook-id': header(request, 'webhook-id'),
    'webhook-timestamp': header(request, 'webhook-timestamp'),
    'webhook-signature': header(request, 'webhook-signature'),
  };
}

/** The Standard Webhooks signatures of a request, each as the v1 HMAC of one secret would be. */
function standardSignatureOf(secret: string, request: ReceivedRequest): string {
  const key = Buffer.from(secret.slice('whsec_'.length), 'base64');
  return `v1,${createHmac('sha256', key).update(`${header(request, 'webhook-id')}.${header(request, 'webhook-timestamp')}.`).update(request.body).digest('base64')}`;
}

async function openapiValidator(testApp: TestApp) {
  const openapi = (await testApp.app.inject({ method: 'GET', url: '/api/v1/openapi.json' })).json();
  const ajv = new Ajv2020({ strict: false, allErrors: true });
  (addFormats as unknown as { default: (ajv: unknown) => void }).default(ajv);
  return (path: string, method: string, status: number, body: unknown) => {
    const schema = openapi.paths[path]?.[method]?.responses[String(status)]?.content?.['application/json']?.schema;
    expect(schema, `no schema for ${method} ${path} ${status}`).toBeDefined();
    const validate = ajv.compile(schema);
    expect(validate(body), JSON.stringify(validate.errors)).toBe(true);
  };
}

describe('POST /api/v1/webhooks/:id/test', () => {
  it('sends one signed sample pick.published now (test: true, X-Service-Test), answers its outcome, is not retried or logged, counts one request', async () => {
    const testApp = await app({ runtime: { startDispatcher: false } });
    const hooks = await receiver();
    hooks.setResponse({ status: 200, body: 'thanks' });
    const key = await createKey(testApp);
    const { id, secret } = await subscribe(testApp, key, hooks.url('hooks.test', '/test-in'));
    const before = Number((await call(testApp, 'GET', BASE, key)).headers['x-ratelimit-remaining']);

    const res = await call(testApp, 'POST', `${BASE}/${id}/test`, key);
    expect(res.statusCode, res.body).toBe(200);
    expect(Number(res.headers['x-ratelimit-remaining'])).toBe(before - 1);
    const outcome = res.json();
    (await openapiValidator(testApp))('/api/v1/webhooks/{id}/test', 'post', 200, outcome);
    expect(outcome).toEqual({
      delivery_id: expect.stringMatching(/^[0-9a-f-]{36}$/),
      event_type: 'pick.published',
      test: true,
      succeeded: true,
      status_code: 200,
      duration_ms: expect.any(Number),
      error_kind: null,
      error: null,
      response_body: 'thanks',
    });

    expect(hooks.requests).toHaveLength(1);
    const [request] = hooks.requests;
    expect(request!.path).toBe('/test-in');
    expect(header(request!, 'x-service-event')).toBe('pick.published');
    expect(header(request!, 'x-service-test')).toBe('true');
    expect(header(request!, 'x-service-delivery')).toBe(outcome.delivery_id);
    expect(header(request!, 'webhook-id')).toBe(outcome.delivery_id);
    expect(header(request!, 'user-agent')).toBe(WEBHOOK_USER_AGENT);
    const body = JSON.parse(request!.body.toString('utf8'));
    expect(body).toMatchObject({ type: 'pick.published', test: true, data: { status: 'published', result: null, settled_at: null } });
    expect(Object.keys(body.data).sort()).toEqual(
      ['id', 'sport', 'league', 'home_team', 'away_team', 'kickoff_at', 'pick', 'odds', 'edge_pct', 'confidence', 'status', 'settled_at', 'result', 'stake_pct', 'market', 'selection', 'line', 'warnings', 'closing_odds', 'final_score', 'ledger_seq', 'ledger_hash', 'bookmaker', 'reference_fair_odds', 'edge_pct_post_tax', 'kelly_fraction', 'published_at', 'availability', 'best_odds_since_published'].sort(),
    );
    // Both signatures, as for a real delivery: X-Service-Signature and Standard Webhooks (the package customers use).
    expect(verifyWebhookSignature(secret, request!.body, header(request!, 'x-service-signature'))).toBe(true);
    expect(new Webhook(secret).verify(request!.body.toString('utf8'), standardHeaders(request!))).toMatchObject({ test: true });

    // Nothing queued, nothing logged, nothing sent later.
    await drive(testApp);
    expect(hooks.requests).toHaveLength(1);
    const log = await call(testApp, 'GET', `${BASE}/${id}/deliveries`, key);
    expect(log.json().count).toBe(0);
  });

  it('a failing endpoint is reported (status, error kind), not retried; an unreachable one too', async () => {
    const testApp = await app({ runtime: { startDispatcher: false } });
    const hooks = await receiver();
    hooks.setResponse({ status: 503, body: 'down for maintenance' });
    const key = await createKey(testApp);
    const { id } = await subscribe(testApp, key, hooks.url('hooks.test', '/down'));
    const failed = await call(testApp, 'POST', `${BASE}/${id}/test`, key, { ignored: true });
    expect(failed.statusCode).toBe(200);
    expect(failed.json()).toMatchObject({ succeeded: false, status_code: 503, error_kind: 'http_status', error: 'HTTP 503', response_body: 'down for maintenance' });
    await drive(testApp);
    expect(hooks.requests).toHaveLength(1);

    // A port nobody listens on (the receiver closed): a connection error, no status.
    const closed = await receiver();
    const { id: gone } = await subscribe(testApp, key, closed.url('hooks.test', '/gone'));
    await closed.close();
    const unreachable = await call(testApp, 'POST', `${BASE}/${gone}/test`, key);
    expect(unreachable.statusCode).toBe(200);
    expect(unreachable.json()).toMatchObject({ succeeded: false, status_code: null, error_kind: 'connection', response_body: null });
  });

  it("another key's subscription is 404, a starter key 403, no key 401", async () => {
    const testApp = await app({ runtime: { startDispatcher: false } });
    const owner = await createKey(testApp);
    const { id } = await subscribe(testApp, owner, 'https://hooks.test:9/owned');
    const other = await call(testApp, 'POST', `${BASE}/${id}/test`, await createKey(testApp, 'ENTERPRISE'));
    expect(other.statusCode).toBe(404);
    expect(other.json().error).toBe('not_found');
    const starter = await call(testApp, 'POST', `${BASE}/${id}/test`, await createKey(testApp, 'STARTER'));
    expect(starter.statusCode).toBe(403);
    expect(starter.json()).toMatchObject({ error: 'tier_upgrade_required', minimum_tier: 'growth' });
    const anonymous = await testApp.app.inject({ method: 'POST', url: `${BASE}/${id}/test` });
    expect(anonymous.statusCode).toBe(401);
    const wrongMethod = await call(testApp, 'GET', `${BASE}/${id}/test`, owner);
    expect(wrongMethod.statusCode).toBe(405);
    expect(wrongMethod.headers.allow).toBe('POST');
  });
});

describe('secret rotation overlap', () => {
  it('for 24 h webhook-signature carries the new and the old signature (Standard Webhooks receivers of either secret verify); X-Service-Signature only the new; then only the new', async () => {
    const clock = new ManualClock(new Date().toISOString());
    const testApp = await app({ clock, runtime: { startDispatcher: false } });
    const hooks = await receiver();
    const key = await createKey(testApp);
    const { id, secret: oldSecret } = await subscribe(testApp, key, hooks.url('hooks.test', '/rotating'));

    await publish(testApp, 'Before FC');
    await drive(testApp);
    expect(header(hooks.requests[0]!, 'webhook-signature').split(' ')).toHaveLength(1);

    const rotated = await call(testApp, 'POST', `${BASE}/${id}/rotate-secret`, key);
    expect(rotated.statusCode).toBe(200);
    const newSecret = rotated.json().hmac_secret as string;
    expect(newSecret).not.toBe(oldSecret);

    // A real delivery and a test delivery right after the rotation: both signatures.
    await publish(testApp, 'Overlap FC');
    await drive(testApp);
    expect((await call(testApp, 'POST', `${BASE}/${id}/test`, key)).json().succeeded).toBe(true);
    for (const request of hooks.requests.slice(1)) {
      expect(header(request, 'webhook-signature')).toBe(`${standardSignatureOf(newSecret, request)} ${standardSignatureOf(oldSecret, request)}`);
      const payload = request.body.toString('utf8');
      expect(new Webhook(newSecret).verify(payload, standardHeaders(request))).toBeTruthy();
      expect(new Webhook(oldSecret).verify(payload, standardHeaders(request))).toBeTruthy();
      // The spec's header keeps its one documented value, under the new secret.
      expect(header(request, 'x-service-signature')).toMatch(/^sha256=[0-9a-f]{64}$/);
      expect(verifyWebhookSignature(newSecret, request.body, header(request, 'x-service-signature'))).toBe(true);
      expect(verifyWebhookSignature(oldSecret, request.body, header(request, 'x-service-signature'))).toBe(false);
    }

    // Not a millisecond past 24 h: still both. At 24 h: the new one alone.
    clock.advance(24 * HOUR_MS - 1);
    await call(testApp, 'POST', `${BASE}/${id}/test`, key);
    expect(header(hooks.requests.at(-1)!, 'webhook-signature').split(' ')).toHaveLength(2);
    clock.advance(1);
    await call(testApp, 'POST', `${BASE}/${id}/test`, key);
    await publish(testApp, 'After FC');
    await drive(testApp);
    for (const request of hooks.requests.slice(-2)) {
      expect(header(request, 'webhook-signature')).toBe(standardSignatureOf(newSecret, request));
    }
  });

  it('a second rotation within the overlap keeps only the secret it replaced beside the new one', async () => {
    const testApp = await app({ runtime: { startDispatcher: false } });
    const hooks = await receiver();
    const key = await createKey(testApp);
    const { id, secret: first } = await subscribe(testApp, key, hooks.url('hooks.test', '/twice'));
    const second = (await call(testApp, 'POST', `${BASE}/${id}/rotate-secret`, key)).json().hmac_secret as string;
    const third = (await call(testApp, 'POST', `${BASE}/${id}/rotate-secret`, key)).json().hmac_secret as string;
    await call(testApp, 'POST', `${BASE}/${id}/test`, key);
    const [request] = hooks.requests;
    expect(header(request!, 'webhook-signature')).toBe(`${standardSignatureOf(third, request!)} ${standardSignatureOf(second, request!)}`);
    expect(() => new Webhook(first).verify(request!.body.toString('utf8'), standardHeaders(request!))).toThrow();
  });
});

describe('secrets in their overlap at rest', () => {
  it('the replaced secret is stored encrypted too, and an encryption-key rotation (webhooks:reencrypt) moves it to the new key', async () => {
    const testApp = await app({ runtime: { startDispatcher: false } });
    const key = await createKey(testApp);
    const { id, secret: oldSecret } = await subscribe(testApp, key, 'https://hooks.test:9/at-rest');
    expect((await call(testApp, 'POST', `${BASE}/${id}/rotate-secret`, key)).statusCode).toBe(200);
    const stored = async () =>
      (await testApp.runtime.orm.em.fork().execute<{ previous_secret_ciphertext: string }[]>('select previous_secret_ciphertext from webhook_subscriptions where id = ?', [id]))[0]!
        .previous_secret_ciphertext;
    const sealed = await stored();
    expect(sealed).not.toContain(oldSecret.slice('whsec_'.length, 20));
    expect(decryptSecret(sealed, createKeyring(Buffer.from(WEBHOOK_SECRET_KEY, 'hex')), id)).toBe(oldSecret);

    const newKey = Buffer.alloc(32, 9);
    const service = new WebhookService(testApp.runtime.orm, systemClock, new WebhookUrlGuard({ hostOverrides: new Map() }), createKeyring(newKey, [Buffer.from(WEBHOOK_SECRET_KEY, 'hex')]));
    await service.reencryptSecrets();
    expect(decryptSecret(await stored(), createKeyring(newKey), id)).toBe(oldSecret);
    expect(() => decryptSecret(sealed, createKeyring(newKey), id)).toThrow(/not configured/);
  });
});

describe('POST /api/v1/webhooks/:id/replay', () => {
  it('queues the failed and cancelled deliveries since a time again, with the retry schedule from its start; succeeded ones are not resent', async () => {
    const clock = new ManualClock('2026-11-22T12:00:00.000Z');
    const testApp = await app({ clock, env: { WEBHOOK_RETRY_SCHEDULE: '1s,1s,1s,1s,1s' }, runtime: { startDispatcher: false } });
    const hooks = await receiver();
    const key = await createKey(testApp);
    const { id } = await subscribe(testApp, key, hooks.url('hooks.test', '/flaky'));

    // One delivery succeeds; then the endpoint fails until the subscription is exhausted: one
    // delivery failed after its sixth attempt, one cancelled.
    await publish(testApp, 'Fine FC');
    await drive(testApp);
    hooks.setResponse({ status: 500 });
    clock.advance(60_000);
    const since = clock.now().toISOString();
    await publish(testApp, 'Failed FC');
    await drive(testApp);
    for (let retry = 1; retry <= 4; retry += 1) {
      clock.advance(1_000);
      await drive(testApp);
    }
    await publish(testApp, 'Cancelled FC');
    await drive(testApp);
    clock.advance(1_000);
    await drive(testApp);
    const exhausted = (await call(testApp, 'GET', `${BASE}/${id}/deliveries`, key)).json();
    expect(exhausted.data.map((delivery: { status: string }) => delivery.status)).toEqual(['cancelled', 'failed', 'succeeded']);
    expect((await call(testApp, 'GET', `${BASE}/${id}`, key)).json().status).toBe('exhausted');
    const sentBefore = hooks.requests.length;

    // Replayed while exhausted: queued, but nothing is sent until the subscription is reactivated.
    hooks.setResponse({ status: 500 });
    const replay = await call(testApp, 'POST', `${BASE}/${id}/replay`, key, { since });
    expect(replay.statusCode, replay.body).toBe(200);
    expect(replay.json()).toEqual({ queued: 2, since: new Date(since).toISOString() });
    (await openapiValidator(testApp))('/api/v1/webhooks/{id}/replay', 'post', 200, replay.json());
    await drive(testApp);
    expect(hooks.requests).toHaveLength(sentBefore);
    expect((await call(testApp, 'PATCH', `${BASE}/${id}`, key, { status: 'active' })).statusCode).toBe(200);

    // The retry schedule runs from its start again: a failure is retried 1 s later, not exhausted.
    await drive(testApp);
    expect(hooks.requests).toHaveLength(sentBefore + 2);
    const retrying = (await call(testApp, 'GET', `${BASE}/${id}/deliveries`, key)).json();
    const failedOne = retrying.data[1];
    expect(failedOne).toMatchObject({ status: 'pending', attempt_count: 7, next_attempt_at: new Date(clock.now().getTime() + 1_000).toISOString() });
    expect(failedOne.attempts.map((attempt: { attempt_number: number }) => attempt.attempt_number)).toEqual([1, 2, 3, 4, 5, 6, 7]);
    expect((await call(testApp, 'GET', `${BASE}/${id}`, key)).json().status).toBe('active');

    hooks.setResponse({ status: 200 });
    clock.advance(1_000);
    await drive(testApp);
    const recovered = (await call(testApp, 'GET', `${BASE}/${id}/deliveries`, key)).json();
    expect(recovered.data.map((delivery: { status: string }) => delivery.status)).toEqual(['succeeded', 'succeeded', 'succeeded']);
    // The same delivery ids as before the replay (receivers de-duplicate on them).
    const ids = new Set(hooks.requests.map((request) => header(request, 'x-service-delivery')));
    expect(ids.size).toBe(3);

    // Nothing left to replay.
    expect((await call(testApp, 'POST', `${BASE}/${id}/replay`, key, { since })).json().queued).toBe(0);
  });

  it('a replayed delivery that fails through the whole schedule again exhausts the subscription as documented', async () => {
    const clock = new ManualClock('2026-11-22T12:00:00.000Z');
    const testApp = await app({ clock, env: { WEBHOOK_RETRY_SCHEDULE: '1s,2s,3s,4s,5s' }, runtime: { startDispatcher: false } });
    const hooks = await receiver();
    hooks.setResponse({ status: 500 });
    const key = await createKey(testApp);
    const { id } = await subscribe(testApp, key, hooks.url('hooks.test', '/broken'));
    const since = clock.now().toISOString();
    await publish(testApp, 'Broken FC');
    await drive(testApp);
    for (const gap of [1_000, 2_000, 3_000, 4_000, 5_000]) {
      clock.advance(gap);
      await drive(testApp);
    }
    expect(hooks.requests).toHaveLength(6);
    expect((await call(testApp, 'PATCH', `${BASE}/${id}`, key, { status: 'active' })).statusCode).toBe(200);
    expect((await call(testApp, 'POST', `${BASE}/${id}/replay`, key, { since })).json().queued).toBe(1);
    await drive(testApp);
    for (const gap of [1_000, 2_000, 3_000, 4_000]) {
      clock.advance(gap);
      await drive(testApp);
      expect((await call(testApp, 'GET', `${BASE}/${id}`, key)).json().status).toBe('active');
    }
    clock.advance(5_000);
    await drive(testApp);
    expect(hooks.requests).toHaveLength(12);
    expect((await call(testApp, 'GET', `${BASE}/${id}`, key)).json().status).toBe('exhausted');
    const [delivery] = (await call(testApp, 'GET', `${BASE}/${id}/deliveries`, key)).json().data;
    expect(delivery).toMatchObject({ status: 'failed', attempt_count: 12, next_attempt_at: null });
  });

  it('since: required, ISO 8601 with a zone, not before the 30-day log retention; each refusal a documented 400 that queues nothing', async () => {
    const clock = new ManualClock('2026-11-22T12:00:00.000Z');
    const testApp = await app({ clock, runtime: { startDispatcher: false } });
    const key = await createKey(testApp);
    const { id } = await subscribe(testApp, key, 'https://hooks.test:9/bounds');
    const cases: [unknown, string, string | undefined][] = [
      [{}, 'invalid_request', undefined],
      [{ since: null }, 'invalid_parameter', 'since'],
      [{ since: 1_700_000_000 }, 'invalid_parameter', 'since'],
      [{ since: 'yesterday' }, 'invalid_parameter', 'since'],
      [{ since: '2026-11-20T12:00:00' }, 'invalid_parameter', 'since'],
      [{ since: '2026-10-23T11:59:59Z' }, 'invalid_parameter', 'since'],
      ['not json', 'invalid_request', undefined],
    ];
    for (const [body, code, parameter] of cases) {
      const res = await call(testApp, 'POST', `${BASE}/${id}/replay`, key, body);
      expect(res.statusCode, JSON.stringify(body)).toBe(400);
      expect(res.json()).toMatchObject({ error: code, ...(parameter ? { parameter } : {}) });
    }
    const oldest = await call(testApp, 'POST', `${BASE}/${id}/replay`, key, { since: '2026-10-23T12:00:00Z' });
    expect(oldest.statusCode).toBe(200);
    expect(oldest.json()).toEqual({ queued: 0, since: '2026-10-23T12:00:00.000Z' });
    const missing = await call(testApp, 'POST', `${BASE}/00000000-0000-7000-8000-000000000000/replay`, key, { since: '2026-11-22T00:00:00Z' });
    expect(missing.statusCode).toBe(404);
  });
});
