/**
 * Webhook delivery end to end: outbox -> fan-out -> dispatcher -> a local HTTPS receiver
 * (reached through WEBHOOK_HOST_OVERRIDES, trusted through NODE_EXTRA_CA_CERTS). Runs on
 * PGlite in plain `npm test` and on PostgreSQL when DATABASE_URL is set.
 */
import type { ServiceLog } from '../../src/services/log.js';
import { createHmac, randomUUID, timingSafeEqual } from 'node:crypto';
import { afterEach, describe, expect, it } from 'vitest';
import { createKeyring } from '../../src/domain/secrets.js';
import { WEBHOOK_USER_AGENT } from '../../src/domain/webhook.js';
import { recordAttemptResults, type AttemptResult, type AttemptWriteFailure } from '../../src/persistence/webhook-attempts.js';
import { LEASE_MS, WebhookDispatcher, type DeliverySender } from '../../src/services/webhooks/dispatcher.js';
import { WebhookSender } from '../../src/services/webhooks/http-sender.js';
import { WebhookUrlGuard } from '../../src/services/webhooks/url-guard.js';
import { createTestApp, ManualClock, WEBHOOK_SECRET_KEY, type TestApp, type TestAppOptions } from '../helpers/app.js';
import { CREATE_KEY, pickInput, PUBLISH, SETTLE } from '../helpers/fixtures.js';
import { startHttpsReceiver, type HttpsReceiver, type ReceivedRequest } from '../helpers/https-receiver.js';

const CREATE = `mutation($input: CreateWebhookSubscriptionInput!) {
  createWebhookSubscription(input: $input) { secret subscription { id url events status } } }`;
const UPDATE = `mutation($id: ID!, $input: UpdateWebhookSubscriptionInput!) { updateWebhookSubscription(id: $id, input: $input) { id status } }`;
const DELIVERIES = `query($id: ID!) { webhookSubscription(id: $id) { status deliveries(first: 50) { nodes {
  id eventId eventType status attemptCount nextAttemptAt lastStatusCode lastError
  attempts { attemptNumber attemptedAt durationMs statusCode errorKind responseBody } } } } }`;

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

async function growthKey(testApp: TestApp): Promise<string> {
  const created = await testApp.graphql<{ createApiKey: { key: string } }>(CREATE_KEY, { input: { tier: 'GROWTH' } });
  return created.data!.createApiKey.key;
}

async function subscribe(testApp: TestApp, key: string, url: string, events = ['PICK_PUBLISHED']) {
  const result = await testApp.graphql<{ createWebhookSubscription: { secret: string; subscription: { id: string } } }>(
    CREATE,
    { input: { url, events } },
    `Bearer ${key}`,
  );
  expect(result.errors).toBeUndefined();
  return { id: result.data!.createWebhookSubscription.subscription.id, secret: result.data!.createWebhookSubscription.secret };
}

async function publish(testApp: TestApp, team = 'Hook FC'): Promise<string> {
  const result = await testApp.graphql<{ publishPick: { id: string } }>(PUBLISH, { input: pickInput({ homeTeam: team, selection: team }) });
  expect(result.errors).toBeUndefined();
  return result.data!.publishPick.id;
}

type DeliveryView = {
  id: string;
  status: string;
  attemptCount: number;
  nextAttemptAt: string | null;
  attempts: { attemptNumber: number; statusCode: number | null; errorKind: string | null; responseBody: string | null }[];
};

async function deliveries(testApp: TestApp, key: string, id: string): Promise<{ status: string; nodes: DeliveryView[] }> {
  const result = await testApp.graphql<{ webhookSubscription: { status: string; deliveries: { nodes: DeliveryView[] } } }>(DELIVERIES, { id }, `Bearer ${key}`);
  expect(result.errors).toBeUndefined();
  return { status: result.data!.webhookSubscription.status, nodes: result.data!.webhookSubscription.deliveries.nodes };
}

/**
 * Relays the whole outbox (fan-out happens there). relayOnce() also answers 0 while the
 * background relay holds the lock, so wait until no event is left unrelayed.
 */
async function relayAll(testApp: TestApp): Promise<void> {
  const deadline = Date.now() + 10_000;
  for (;;) {
    await testApp.runtime.relay.relayOnce();
    const [left] = await testApp.runtime.orm.em.fork().execute<{ n: number }[]>('select count(*)::int as n from outbox_events where relayed_at is null');
    if (Number(left!.n) === 0) return;
    if (Date.now() > deadline) throw new Error('the outbox was not relayed within 10 s');
    await new Promise((resolve) => setTimeout(resolve, 10));
  }
}

/** Relays the outbox and runs the dispatcher until nothing is due. */
async function drive(testApp: TestApp): Promise<void> {
  await relayAll(testApp);
  while ((await testApp.runtime.dispatcher.dispatchOnce()) > 0) await testApp.runtime.dispatcher.idle();
  await testApp.runtime.dispatcher.idle();
}

function header(request: ReceivedRequest, name: string): string {
  const value = request.headers[name];
  return Array.isArray(value) ? value.join(',') : (value ?? '');
}

describe('webhook deliveries', () => {
  it('delivers a signed pick.published within 1 s of the commit; both signatures verify with node:crypto alone', async () => {
    const testApp = await app();
    const hooks = await receiver();
    const key = await growthKey(testApp);
    const { id: subscriptionId, secret } = await subscribe(testApp, key, hooks.url('hooks.test', '/in'));
    const committed = Date.now();
    const pickId = await publish(testApp, 'Signed FC');
    const [request] = await hooks.waitForRequests(1, 2_000);
    expect(request!.receivedAt.getTime() - committed).toBeLessThan(1_000);

    expect(request!.method).toBe('POST');
    expect(request!.path).toBe('/in');
    const raw = request!.body;
    const body = JSON.parse(raw.toString('utf8'));
    expect(body).toMatchObject({ type: 'pick.published', data: { id: pickId, home_team: 'Signed FC', status: 'published', result: null } });
    expect(body.id).toMatch(/^[0-9a-f-]{36}$/);
    expect(new Date(body.created_at).toISOString()).toBe(body.created_at);
    expect(Object.keys(body.data).sort()).toEqual(
      ['id', 'sport', 'league', 'home_team', 'away_team', 'kickoff_at', 'pick', 'odds', 'edge_pct', 'confidence', 'status', 'settled_at', 'result', 'stake_pct', 'market', 'selection', 'line', 'warnings', 'closing_odds', 'final_score', 'ledger_seq', 'ledger_hash', 'bookmaker', 'reference_fair_odds', 'edge_pct_post_tax', 'kelly_fraction', 'published_at', 'availability', 'best_odds_since_published'].sort(),
    );

    // Where to bet and the price to beat (pickInput: Bet365 at 2.2 against fair 2.0, the default 5.3 % tax).
    expect(body.data).toMatchObject({ bookmaker: { name: 'Bet365', slug: 'bet365' }, odds: 2.2, reference_fair_odds: 2 });
    expect(body.data.edge_pct_post_tax).toBeCloseTo((2.2 * (1 - 0.053) / 2 - 1) * 100, 4);
    expect(typeof body.data.kelly_fraction).toBe('number');
    expect(new Date(body.data.published_at).toISOString()).toBe(body.data.published_at);

    expect(header(request!, 'content-type')).toBe('application/json');
    expect(header(request!, 'x-service-event')).toBe('pick.published');
    expect(header(request!, 'user-agent')).toBe(WEBHOOK_USER_AGENT);
    const deliveryId = header(request!, 'x-service-delivery');
    expect(deliveryId).toMatch(/^[0-9a-f-]{36}$/);

    // Spec 6.1: sha256= + hex HMAC-SHA256 of the raw body keyed with the secret string.
    const expected = Buffer.from(`sha256=${createHmac('sha256', secret).update(raw).digest('hex')}`);
    const presented = Buffer.from(header(request!, 'x-service-signature'));
    expect(presented.length).toBe(expected.length);
    expect(timingSafeEqual(presented, expected)).toBe(true);
    // Standard Webhooks v1: base64 HMAC keyed with the decoded secret over id.timestamp.body.
    const timestamp = header(request!, 'webhook-timestamp');
    expect(Math.abs(Number(timestamp) - Date.now() / 1000)).toBeLessThan(30);
    expect(header(request!, 'webhook-id')).toBe(deliveryId);
    const standardKey = Buffer.from(secret.slice('whsec_'.length), 'base64');
    const standard = createHmac('sha256', standardKey).update(`${deliveryId}.${timestamp}.`).update(raw).digest('base64');
    expect(header(request!, 'webhook-signature')).toBe(`v1,${standard}`);

    await testApp.runtime.dispatcher.idle();
    const log = await deliveries(testApp, key, subscriptionId);
    expect(log.nodes).toHaveLength(1);
    expect(log.nodes[0]).toMatchObject({ id: deliveryId, status: 'SUCCEEDED', attemptCount: 1, nextAttemptAt: null });
    expect(log.nodes[0]!.attempts).toMatchObject([{ attemptNumber: 1, statusCode: 200, errorKind: null }]);
  });

  it('sends only the subscribed event types', async () => {
    const testApp = await app({ runtime: { startDispatcher: false } });
    const hooks = await receiver();
    const key = await growthKey(testApp);
    await subscribe(testApp, key, hooks.url('hooks.test', '/settled'), ['PICK_SETTLED']);
    const pickId = await publish(testApp);
    await drive(testApp);
    expect(hooks.requests).toHaveLength(0);
    const settled = await testApp.graphql(SETTLE, { input: { id: pickId, result: 'WON', closingOdds: 2.1 } });
    expect(settled.errors).toBeUndefined();
    await drive(testApp);
    expect(hooks.requests).toHaveLength(1);
    expect(header(hooks.requests[0]!, 'x-service-event')).toBe('pick.settled');
    expect(JSON.parse(hooks.requests[0]!.body.toString()).data).toMatchObject({ id: pickId, status: 'settled', result: 'won' });
  });

  it('a subscription receives the events of its own instant and later, none created before it', async () => {
    const clock = new ManualClock('2026-11-22T12:00:00.000Z');
    const testApp = await app({ clock, runtime: { startDispatcher: false } });
    const hooks = await receiver();
    const key = await growthKey(testApp);
    // The events wait in the outbox while later subscriptions are created: fan-out happens at relay.
    await testApp.runtime.relay.stop();
    const early = await publish(testApp, 'Early FC');
    const sameInstant = await subscribe(testApp, key, hooks.url('hooks.test', '/same-instant'));
    clock.advance(1);
    const later = await subscribe(testApp, key, hooks.url('hooks.test', '/later'));
    const next = await publish(testApp, 'Next FC');
    await drive(testApp);

    const received = (path: string) =>
      hooks.requests.filter((request) => request.path === path).map((request) => JSON.parse(request.body.toString('utf8')).data.id as string).sort();
    expect(received('/same-instant')).toEqual([early, next].sort());
    expect(received('/later')).toEqual([next]);
    expect((await deliveries(testApp, key, later.id)).nodes).toHaveLength(1);
    expect((await deliveries(testApp, key, sameInstant.id)).nodes).toHaveLength(2);
  });

  it('retries after 1 min, 5 min, 30 min, 2 h and 12 h, then exhausts the subscription, cancels its deliveries and creates none until reactivated', async () => {
    const clock = new ManualClock('2026-11-22T12:00:00.000Z');
    const testApp = await app({ clock, runtime: { startDispatcher: false } });
    const hooks = await receiver();
    hooks.setResponse({ status: 500, body: 'x'.repeat(10_000) });
    const key = await growthKey(testApp);
    const { id: subscriptionId } = await subscribe(testApp, key, hooks.url('hooks.test', '/failing'));
    await publish(testApp, 'Retry FC');
    await drive(testApp);
    expect(hooks.requests).toHaveLength(1);

    const gapsMs = [60_000, 300_000, 1_800_000, 7_200_000, 43_200_000];
    for (const [index, gap] of gapsMs.entries()) {
      const before = (await deliveries(testApp, key, subscriptionId)).nodes[0]!;
      expect(before.status).toBe('PENDING');
      expect(before.attemptCount).toBe(index + 1);
      expect(new Date(before.nextAttemptAt!).getTime()).toBe(clock.now().getTime() + gap);
      clock.advance(gap - 1);
      await drive(testApp);
      expect(hooks.requests).toHaveLength(index + 1); // not a millisecond early
      clock.advance(1);
      await drive(testApp);
      expect(hooks.requests).toHaveLength(index + 2);
    }
    // Same delivery id on every attempt; the stored answer is capped at 4 KiB.
    expect(new Set(hooks.requests.map((request) => header(request, 'x-service-delivery'))).size).toBe(1);
    const finished = await deliveries(testApp, key, subscriptionId);
    expect(finished.status).toBe('EXHAUSTED');
    expect(finished.nodes[0]).toMatchObject({ status: 'FAILED', attemptCount: 6, nextAttemptAt: null });
    expect(finished.nodes[0]!.attempts.map((attempt) => attempt.statusCode)).toEqual([500, 500, 500, 500, 500, 500]);
    expect(finished.nodes[0]!.attempts.every((attempt) => attempt.errorKind === 'http_status' && attempt.responseBody!.length === 4_096)).toBe(true);

    // Exhausted: new events create no deliveries.
    await publish(testApp, 'Ignored FC');
    await drive(testApp);
    expect((await deliveries(testApp, key, subscriptionId)).nodes).toHaveLength(1);
    expect(hooks.requests).toHaveLength(6);

    // Reactivated: the next event is delivered again.
    hooks.setResponse({ status: 204 });
    const reactivated = await testApp.graphql<{ updateWebhookSubscription: { status: string } }>(UPDATE, { id: subscriptionId, input: { status: 'ACTIVE' } }, `Bearer ${key}`);
    expect(reactivated.data!.updateWebhookSubscription.status).toBe('ACTIVE');
    await publish(testApp, 'Back FC');
    await drive(testApp);
    expect(hooks.requests).toHaveLength(7);
    const after = await deliveries(testApp, key, subscriptionId);
    expect(after.nodes[0]).toMatchObject({ status: 'SUCCEEDED', attemptCount: 1 });
  });

  it('exhaustion cancels the other pending deliveries of the subscription', async () => {
    const clock = new ManualClock('2026-11-22T12:00:00.000Z');
    const testApp = await app({ clock, env: { WEBHOOK_RETRY_SCHEDULE: '1s,1s,1s,1s,1s' }, runtime: { startDispatcher: false } });
    const hooks = await receiver();
    hooks.setResponse({ status: 503 });
    const key = await growthKey(testApp);
    const { id: subscriptionId } = await subscribe(testApp, key, hooks.url('hooks.test', '/down'));
    await publish(testApp, 'First FC');
    await drive(testApp);
    for (let attempt = 2; attempt <= 5; attempt += 1) {
      clock.advance(1_000);
      await drive(testApp);
    }
    expect(hooks.requests).toHaveLength(5);
    const first = header(hooks.requests[0]!, 'x-service-delivery');
    // Half way to the first event's last retry, a second event fails its first attempt: it is
    // pending, due again only after that last retry.
    clock.advance(500);
    await publish(testApp, 'Second FC');
    await drive(testApp);
    expect(hooks.requests).toHaveLength(6);
    const second = header(hooks.requests[5]!, 'x-service-delivery');
    expect(second).not.toBe(first);
    clock.advance(500);
    await drive(testApp);
    expect(hooks.requests.map((request) => header(request, 'x-service-delivery'))).toEqual([first, first, first, first, first, second, first]);

    const log = await deliveries(testApp, key, subscriptionId);
    expect(log.status).toBe('EXHAUSTED');
    const byId = new Map(log.nodes.map((delivery) => [delivery.id, delivery]));
    expect([...byId.keys()].sort()).toEqual([first, second].sort());
    expect(byId.get(first)).toMatchObject({ status: 'FAILED', attemptCount: 6, nextAttemptAt: null });
    expect(byId.get(second)).toMatchObject({ status: 'CANCELLED', attemptCount: 1, nextAttemptAt: null });
    // The cancelled delivery is not sent when its retry would have been due.
    clock.advance(60_000);
    await drive(testApp);
    expect(hooks.requests).toHaveLength(7);
  });

  it('a receiver answering with a NUL byte does not hold back the other results of its batch: each delivery is recorded once, none is re-sent after the lease', async () => {
    const clock = new ManualClock('2026-11-22T12:00:00.000Z');
    const testApp = await app({ clock, runtime: { startDispatcher: false } });
    const nul = await receiver();
    const healthy = await receiver();
    nul.setResponse({ status: 200, body: 'a\0b' });
    healthy.setResponse({ status: 200, body: 'ok' });
    // Two customers: the NUL answer must not cost the other one its delivery.
    const nulKey = await growthKey(testApp);
    const healthyKey = await growthKey(testApp);
    const { id: nulSubscription } = await subscribe(testApp, nulKey, nul.url('hooks.test', '/nul'));
    const { id: healthySubscription } = await subscribe(testApp, healthyKey, healthy.url('hooks.test', '/healthy'));
    await publish(testApp, 'Nul FC');
    await relayAll(testApp);

    const logged = recordingLog();
    // A wide flush window: both results (answered within it) are written in one batch.
    const dispatcher = dispatcherFor(testApp, { completionFlushMs: 2_000, log: logged });
    opened.push({ close: () => dispatcher.stop() });
    expect(await dispatcher.dispatchOnce()).toBe(2);
    await dispatcher.idle();
    expect(nul.requests).toHaveLength(1);
    expect(healthy.requests).toHaveLength(1);

    // Past the lease: nothing is due again, nothing is sent again.
    clock.advance(LEASE_MS + 1_000);
    expect(await dispatcher.dispatchOnce()).toBe(0);
    await dispatcher.idle();
    expect(nul.requests).toHaveLength(1);
    expect(healthy.requests).toHaveLength(1);

    const nulLog = await deliveries(testApp, nulKey, nulSubscription);
    expect(nulLog.nodes).toHaveLength(1);
    expect(nulLog.nodes[0]).toMatchObject({ status: 'SUCCEEDED', attemptCount: 1 });
    expect(nulLog.nodes[0]!.attempts).toEqual([expect.objectContaining({ attemptNumber: 1, statusCode: 200, responseBody: 'a\uFFFDb' })]);
    const healthyLog = await deliveries(testApp, healthyKey, healthySubscription);
    expect(healthyLog.nodes).toHaveLength(1);
    expect(healthyLog.nodes[0]).toMatchObject({ status: 'SUCCEEDED', attemptCount: 1 });
    expect(healthyLog.nodes[0]!.attempts).toEqual([expect.objectContaining({ attemptNumber: 1, statusCode: 200, responseBody: 'ok' })]);
    // Sanitised before the write: nothing failed on the way.
    expect(logged.entries).toEqual([]);
  });

  it('DNS rebinding: a host that resolved public at creation and loopback at delivery is not contacted', async () => {
    const answers = ['93.184.216.34'];
    const resolve = async (host: string) => (host === 'rebind.example' ? [answers.shift() ?? '127.0.0.1'] : []);
    const testApp = await app({ runtime: { startDispatcher: false, resolveWebhookHost: resolve } });
    const hooks = await receiver();
    const key = await growthKey(testApp);
    const { id: subscriptionId } = await subscribe(testApp, key, `https://rebind.example:${hooks.port}/x`);
    expect(answers).toEqual([]); // the public answer was used by the creation check only
    await publish(testApp, 'Rebind FC');
    await drive(testApp);
    expect(hooks.requests).toHaveLength(0);
    const log = await deliveries(testApp, key, subscriptionId);
    expect(log.nodes[0]).toMatchObject({ status: 'PENDING', attemptCount: 1 });
    expect(log.nodes[0]!.attempts).toMatchObject([{ attemptNumber: 1, statusCode: null, errorKind: 'invalid_url' }]);
  });

  it('a hanging receiver does not delay another subscription', async () => {
    const testApp = await app({ runtime: { webhookTimeoutMs: 5_000 } });
    const slow = await receiver();
    const fast = await receiver();
    slow.setResponse('hang');
    const key = await growthKey(testApp);
    await subscribe(testApp, key, slow.url('hooks.test', '/slow'));
    await subscribe(testApp, key, fast.url('hooks.test', '/fast'));
    const started = Date.now();
    // More events than the per-subscription concurrency: the slow receiver's slots fill up.
    for (let i = 0; i < 20; i += 1) await publish(testApp, `Busy ${i} FC`);
    await fast.waitForRequests(20, 3_000);
    expect(Date.now() - started).toBeLessThan(3_000);
    expect(slow.requests.length).toBeGreaterThan(0);
    expect(slow.requests.length).toBeLessThanOrEqual(16);
  });

  it('two dispatchers on one database never send the same attempt twice', async () => {
    const testApp = await app({ runtime: { startDispatcher: false } });
    const hooks = await receiver();
    hooks.setResponse({ status: 200, delayMs: 5 });
    const keys = [await growthKey(testApp), await growthKey(testApp)];
    for (const [index, key] of keys.entries()) {
      for (let i = 0; i < 3; i += 1) await subscribe(testApp, key, hooks.url('hooks.test', `/k${index}/s${i}`));
    }
    for (let i = 0; i < 15; i += 1) await publish(testApp, `Pair ${i} FC`);
    await relayAll(testApp);
    const other = dispatcherFor(testApp, {});
    opened.push({ close: () => other.stop() });
    testApp.runtime.dispatcher.start();
    other.start();
    await hooks.waitForRequests(90, 10_000);
    await new Promise((resolve) => setTimeout(resolve, 300));
    const ids = hooks.requests.map((request) => header(request, 'x-service-delivery'));
    expect(ids).toHaveLength(90);
    expect(new Set(ids).size).toBe(90);
  });

  it('an attempt orphaned by a crashed dispatcher is taken over when its lease ends, with the same delivery id, and completes once', async () => {
    const testApp = await app({ runtime: { startDispatcher: false } });
    const hooks = await receiver();
    hooks.setResponse('hang');
    const key = await growthKey(testApp);
    const { id: subscriptionId } = await subscribe(testApp, key, hooks.url('hooks.test', '/crash'));
    await publish(testApp, 'Crash FC');
    await relayAll(testApp);
    // The "crashed" dispatcher: claims with a short lease, its attempt never completes.
    const crashed = dispatcherFor(testApp, { leaseMs: 1_000, timeoutMs: 60_000, crashed: true });
    expect(await crashed.dispatchOnce()).toBe(1);
    await hooks.waitForRequests(1, 2_000);
    hooks.setResponse({ status: 200 });
    const successor = dispatcherFor(testApp, {});
    opened.push({ close: () => successor.stop() });
    expect(await successor.dispatchOnce()).toBe(0); // still leased
    const takenOverBy = Date.now() + 5_000;
    while ((await successor.dispatchOnce()) === 0 && Date.now() < takenOverBy) await new Promise((resolve) => setTimeout(resolve, 100));
    await successor.idle();
    expect(hooks.requests).toHaveLength(2);
    expect(header(hooks.requests[1]!, 'x-service-delivery')).toBe(header(hooks.requests[0]!, 'x-service-delivery'));
    const log = await deliveries(testApp, key, subscriptionId);
    expect(log.nodes[0]).toMatchObject({ status: 'SUCCEEDED', attemptCount: 1 });
    expect(log.nodes[0]!.attempts).toHaveLength(1);
    expect(await successor.dispatchOnce()).toBe(0);
  });
});

describe('writing attempt results', () => {
  it('a row the database refuses does not fail its batch: the others are written as they are, it is written without receiver text, each failure reported', async () => {
    const clock = new ManualClock('2026-11-22T12:00:00.000Z');
    const testApp = await app({ clock, runtime: { startDispatcher: false } });
    const key = await growthKey(testApp);
    const subscriptions = [];
    for (const path of ['/nul-ok', '/healthy', '/nul-error']) subscriptions.push((await subscribe(testApp, key, `https://hooks.test${path}`)).id);
    await publish(testApp, 'Rows FC');
    await relayAll(testApp);
    const em = testApp.runtime.orm.em.fork();
    const rows = await em.execute<{ id: string; subscription_id: string }[]>('select id, subscription_id from webhook_deliveries');
    expect(rows).toHaveLength(3);
    const deliveryOf = (subscriptionId: string) => rows.find((row) => row.subscription_id === subscriptionId)!.id;
    const [nulOk, healthy, nulError] = subscriptions.map(deliveryOf) as [string, string, string];
    // Leased as a dispatcher would have them.
    const leaseToken = '00000000-0000-4000-8000-00000000aaaa';
    await em.execute('update webhook_deliveries set lease_token = ?, locked_until = ?', [leaseToken, new Date(clock.now().getTime() + LEASE_MS)]);

    const now = clock.now();
    const result = (deliveryId: string, subscriptionId: string, fields: Partial<AttemptResult>): AttemptResult => ({
      attemptId: randomUUID(),
      deliveryId,
      leaseToken,
      subscriptionId,
      attemptNumber: 1,
      attemptedAt: now,
      finishedAt: now,
      durationMs: 12,
      statusCode: 200,
      errorKind: null,
      responseBody: null,
      lastError: null,
      next: null,
      ...fields,
    });
    const failures: AttemptWriteFailure[] = [];
    // Unsanitised on purpose: PostgreSQL text cannot hold NUL, so these two rows fail.
    const unwritten = await recordAttemptResults(
      testApp.runtime.orm,
      [
        result(nulOk, subscriptions[0]!, { responseBody: 'a\0b' }),
        result(healthy, subscriptions[1]!, { responseBody: 'ok' }),
        result(nulError, subscriptions[2]!, {
          statusCode: 500,
          errorKind: 'http_status',
          responseBody: 'no\0pe',
          lastError: 'HTTP 500 \0',
          next: { kind: 'retry', at: new Date(now.getTime() + 60_000) },
        }),
      ],
      (failure) => failures.push(failure),
    );
    expect(unwritten.size).toBe(0);
    expect(failures.map((failure) => ('deliveryIds' in failure ? { stage: failure.stage, ids: failure.deliveryIds } : { stage: failure.stage, ids: [failure.deliveryId] }))).toEqual([
      { stage: 'batch', ids: [nulOk, healthy, nulError] },
      { stage: 'row', ids: [nulOk] },
      { stage: 'row', ids: [nulError] },
    ]);

    const stored = await em.execute<{ id: string; status: string; attempt_count: number; last_status_code: number | null; last_error: string | null; lease_token: string | null }[]>(
      'select id, status, attempt_count, last_status_code, last_error, lease_token from webhook_deliveries',
    );
    const delivery = (id: string) => stored.find((row) => row.id === id);
    expect(delivery(nulOk)).toMatchObject({ status: 'succeeded', attempt_count: 1, last_status_code: 200, last_error: null, lease_token: null });
    expect(delivery(healthy)).toMatchObject({ status: 'succeeded', attempt_count: 1, last_status_code: 200, last_error: null, lease_token: null });
    expect(delivery(nulError)).toMatchObject({ status: 'pending', attempt_count: 1, last_status_code: 500, last_error: 'HTTP 500', lease_token: null });
    const attempts = await em.execute<{ delivery_id: string; attempt_number: number; status_code: number | null; response_body: string | null }[]>(
      'select delivery_id, attempt_number, status_code, response_body from webhook_delivery_attempts order by delivery_id',
    );
    expect(attempts).toHaveLength(3);
    const attemptOf = (id: string) => attempts.find((row) => row.delivery_id === id);
    expect(attemptOf(nulOk)).toMatchObject({ attempt_number: 1, status_code: 200, response_body: null });
    expect(attemptOf(healthy)).toMatchObject({ attempt_number: 1, status_code: 200, response_body: 'ok' });
    expect(attemptOf(nulError)).toMatchObject({ attempt_number: 1, status_code: 500, response_body: null });
  });

  it('a result the database refuses even without receiver text is logged at error level with its delivery id and sent again after the lease', async () => {
    const clock = new ManualClock('2026-11-22T12:00:00.000Z');
    const testApp = await app({ clock, runtime: { startDispatcher: false } });
    const hooks = await receiver();
    const key = await growthKey(testApp);
    await subscribe(testApp, key, hooks.url('hooks.test', '/ok'));
    await publish(testApp, 'Unwritable FC');
    await relayAll(testApp);
    const logged = recordingLog();
    // The real send, reported with a duration no integer column holds: a row no form of which can be written.
    const real = new WebhookSender({ guard: new WebhookUrlGuard({ hostOverrides: testApp.config.webhookHostOverrides }), userAgent: WEBHOOK_USER_AGENT });
    opened.push({ close: () => real.close() });
    const unwritable: DeliverySender = { send: async (input) => ({ ...(await real.send(input)), durationMs: 2 ** 40 }) };
    const dispatcher = new WebhookDispatcher(testApp.runtime.orm, clock, unwritable, createKeyring(Buffer.from(WEBHOOK_SECRET_KEY, 'hex')), {
      retryScheduleMs: testApp.config.webhookRetryScheduleMs,
      log: logged,
    });
    opened.push({ close: () => dispatcher.stop() });
    expect(await dispatcher.dispatchOnce()).toBe(1);
    await dispatcher.idle();
    const deliveryId = header(hooks.requests[0]!, 'x-service-delivery');
    expect(logged.entries.map((entry) => entry.level)).toEqual(['error', 'error', 'error']);
    expect(logged.entries.map((entry) => entry.details)).toEqual([
      expect.objectContaining({ deliveries: [deliveryId] }),
      expect.objectContaining({ delivery: deliveryId }),
      expect.objectContaining({ deliveries: [deliveryId] }),
    ]);
    // Nothing recorded: still pending under its lease, then sent again (at least once).
    expect(await dispatcher.dispatchOnce()).toBe(0);
    clock.advance(LEASE_MS);
    expect(await dispatcher.dispatchOnce()).toBe(1);
    await dispatcher.idle();
    expect(hooks.requests.map((request) => header(request, 'x-service-delivery'))).toEqual([deliveryId, deliveryId]);
  });
});

type LogEntry = { level: 'warn' | 'error' | 'info'; details: object; message: string };

/** A log that keeps what the dispatcher reports. */
function recordingLog(): ServiceLog & { entries: LogEntry[] } {
  const entries: LogEntry[] = [];
  const record = (level: LogEntry['level']) => (details: object, message?: string) => void entries.push({ level, details, message: message ?? '' });
  return { entries, warn: record('warn'), error: record('error'), info: record('info') } as ServiceLog & { entries: LogEntry[] };
}

/** A second dispatcher on the test app's database (what another instance would run). */
function dispatcherFor(
  testApp: TestApp,
  options: { leaseMs?: number; timeoutMs?: number; crashed?: boolean; completionFlushMs?: number; log?: ReturnType<typeof recordingLog> },
): WebhookDispatcher {
  const guard = new WebhookUrlGuard({ hostOverrides: testApp.config.webhookHostOverrides });
  const sender = new WebhookSender({ guard, userAgent: WEBHOOK_USER_AGENT, timeoutMs: options.timeoutMs });
  // A crashed dispatcher is never closed: its attempt ends when the receiver goes away.
  if (!options.crashed) opened.push({ close: () => sender.close() });
  return new WebhookDispatcher(testApp.runtime.orm, testApp.clock, sender, createKeyring(Buffer.from(WEBHOOK_SECRET_KEY, 'hex')), {
    retryScheduleMs: testApp.config.webhookRetryScheduleMs,
    leaseMs: options.leaseMs,
    pollIntervalMs: 50,
    completionFlushMs: options.completionFlushMs,
    log: options.log,
  });
}
