/**
 * The operator's metrics (docs/OPERATIONS.md, "Metrics"): the real app, its metrics listener on
 * 127.0.0.1, and traffic of every kind — an engine poll over a local v4 feed, a manual pick
 * published and settled, a webhook delivered to a local HTTPS receiver, a 429, open streams —
 * each seen to move its families in a scrape. Expectations come from the traffic sent, not from
 * the registry: the scrape is read with a parser of the text format of its own.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ManualClock } from '../../src/domain/clock.js';
import { METRICS } from '../../src/services/metrics/catalog.js';
import { startMetricsListener, type MetricsListener } from '../../src/server/metrics-listener.js';
import { loadConfig } from '../../src/config.js';
import { readFileSync } from 'node:fs';
import { METRICS_DOC, renderMetricsDocs } from '../../src/services/metrics/docs.js';
import { type TestApp, LEDGER_SIGNING_KEY } from '../helpers/app.js';
import { CREATE_KEY, pickInput, PUBLISH, SETTLE } from '../helpers/fixtures.js';
import { startHttpsReceiver, type HttpsReceiver } from '../helpers/https-receiver.js';
import { powerPrices, startEngineApp, startOddsFeedServer, v4Bookmaker, v4OddsEvent, type OddsFeedServer } from '../helpers/odds-feed-server.js';
import { parseExposition, samplesOf, total, type Exposition } from '../helpers/prometheus-text.js';
import { connectSse, type SseConnection } from '../helpers/sse.js';

const NOW = new Date('2026-11-24T12:00:00Z');
const KICKOFF = new Date('2026-11-24T15:00:00Z');
const FRESH = new Date(NOW.getTime() - 30_000);
const SPORT = 'soccer_epl';
// Fair 0.5 / 0.25 / 0.25 by construction; Tipico's Chelsea 4.6 against a fair 4.0 is the one value bet.
const PINNACLE = powerPrices({ Arsenal: 0.5, Chelsea: 0.25, Draw: 0.25 }, 1.05);
const STARTER_HOURLY = 2;

const CREATE_WEBHOOK = `mutation($input: CreateWebhookSubscriptionInput!) { createWebhookSubscription(input: $input) { subscription { id } } }`;

describe('metrics on their own listener', () => {
  let feed: OddsFeedServer;
  let receiver: HttpsReceiver;
  let t: TestApp;
  let clock: ManualClock;
  let listener: MetricsListener;
  let port: number;

  beforeAll(async () => {
    feed = await startOddsFeedServer();
    receiver = await startHttpsReceiver();
    clock = new ManualClock(NOW);
    ({ app: t } = await startEngineApp(feed, clock, [SPORT], {
      WEBHOOK_HOST_OVERRIDES: 'hooks.test=127.0.0.1',
      TIER_LIMITS: JSON.stringify({ starter: { hourly: STARTER_HOURLY, monthly: 1000 } }),
    }));
    listener = await startMetricsListener(t.runtime.metrics, '127.0.0.1', 0);
    await t.app.listen({ port: 0, host: '127.0.0.1' });
    port = (t.app.server.address() as { port: number }).port;
  });
  afterAll(async () => {
    await listener.close();
    await t.close();
    await receiver.close();
    await feed.close();
  });

  async function scrape(): Promise<Exposition> {
    const response = await fetch(`http://127.0.0.1:${listener.address.port}/metrics`);
    expect(response.status).toBe(200);
    expect(response.headers.get('content-type')).toMatch(/^text\/plain; version=0\.0\.4/);
    return parseExposition(await response.text());
  }

  async function key(tier: 'STARTER' | 'GROWTH' | 'ENTERPRISE'): Promise<string> {
    return (await t.graphql<{ createApiKey: { key: string } }>(CREATE_KEY, { input: { tier } })).data!.createApiKey.key;
  }

  it('moves the engine and feed families with a poll of the local v4 feed', async () => {
    feed.headers['x-requests-remaining'] = '480';
    feed.headers['x-requests-used'] = '20';
    feed.set('odds', SPORT, [
      v4OddsEvent({
        id: 'm1',
        commenceTime: KICKOFF,
        homeTeam: 'Arsenal',
        awayTeam: 'Chelsea',
        bookmakers: [v4Bookmaker('pinnacle', 'Pinnacle', PINNACLE, FRESH), v4Bookmaker('tipico', 'Tipico', { Arsenal: 1.9, Chelsea: 4.6, Draw: 3.8 }, FRESH)],
      }),
    ]);
    const before = await scrape();
    expect(await t.runtime.poller!.pollNow(['odds'])).toBe(true);
    const after = await scrape();

    expect(total(after, 'picks_feed_requests_total', { endpoint: 'odds', status: '200' }) - total(before, 'picks_feed_requests_total', { endpoint: 'odds', status: '200' })).toBe(1);
    expect(total(after, 'picks_feed_credits_remaining')).toBe(480);
    expect(total(after, 'picks_feed_credits_used')).toBe(20);
    expect(total(after, 'picks_engine_poll_duration_seconds_count', { sport: SPORT }) - total(before, 'picks_engine_poll_duration_seconds_count', { sport: SPORT })).toBe(1);
    // Wall-clock seconds of the poll's end: the engine's own timer, not the test's manual clock.
    const lastPoll = total(after, 'picks_engine_last_poll_timestamp_seconds', { sport: SPORT });
    expect(Math.abs(lastPoll - Date.now() / 1000)).toBeLessThan(60);
    // One pick: Chelsea at Tipico. Arsenal and the draw are below the minimum edge at every book.
    expect(total(after, 'picks_engine_candidates_total', { decision: 'published', reason: 'none' })).toBe(1);
    expect(total(after, 'picks_engine_candidates_total', { decision: 'rejected', reason: 'below_min_edge' })).toBe(2);
    expect(total(after, 'picks_picks_published_total', { source: 'engine' })).toBe(1);
    expect(total(after, 'picks_ledger_entries')).toBe(total(before, 'picks_ledger_entries') + 1);
  });

  it('counts a feed answer that failed by its status', async () => {
    feed.fail('odds', SPORT, { kind: 'status', status: 401 });
    expect(await t.runtime.poller!.pollNow(['odds'])).toBe(true);
    const after = await scrape();
    expect(total(after, 'picks_feed_requests_total', { endpoint: 'odds', status: '401' })).toBe(1);
    const ready = (await t.app.inject({ method: 'GET', url: '/readyz' })).json() as { status: string; feed: { last_error: string | null } };
    // Information, not a reason to leave the load balancer.
    expect(ready.status).toBe('ready');
    expect(ready.feed.last_error).toBe('odds soccer_epl: HTTP 401');
  });

  it('moves the pick, webhook, outbox and ledger families with a pick published and settled', async () => {
    // Earlier tests' events leave the outbox first (a slow relay may not have passed yet). The
    // manual clock has not moved since the engine's pick, and a subscription receives the events
    // of its own instant: subscribed while that pick waited, the hook would receive it too.
    await expect.poll(async () => total(await scrape(), 'picks_outbox_pending'), { timeout: 20_000 }).toBe(0);
    const growth = await key('GROWTH');
    const subscribed = await t.graphql(CREATE_WEBHOOK, { input: { url: receiver.url('hooks.test', '/hook'), events: ['PICK_PUBLISHED'] } }, `Bearer ${growth}`);
    expect(subscribed.errors).toBeUndefined();
    const before = await scrape();
    expect(total(before, 'picks_webhook_subscriptions', { state: 'active' })).toBe(1);
    expect(total(before, 'picks_webhook_subscriptions', { state: 'exhausted' })).toBe(0);

    // The relay held back: the events wait in the outbox, the oldest as old as the clock says.
    await t.runtime.relay.stop();
    const publish = async (team: string) => {
      const published = await t.graphql<{ publishPick: { id: string } }>(PUBLISH, { input: pickInput({ homeTeam: team, selection: team }) });
      expect(published.errors).toBeUndefined();
      return published.data!.publishPick.id;
    };
    const first = await publish('Metrics FC');
    clock.advance(4_000);
    await publish('Gauges FC');
    clock.advance(3_000);
    const waiting = await scrape();
    expect(total(waiting, 'picks_outbox_pending')).toBe(2);
    expect(total(waiting, 'picks_outbox_oldest_pending_seconds')).toBe(7);
    expect(total(waiting, 'picks_picks_published_total', { source: 'manual' })).toBe(total(before, 'picks_picks_published_total', { source: 'manual' }) + 2);

    t.runtime.relay.start();
    await receiver.waitForRequests(2);
    await expect.poll(async () => total(await scrape(), 'picks_webhook_deliveries_total', { event: 'pick.published', result: 'delivered' })).toBe(2);
    const delivered = await scrape();
    expect(total(delivered, 'picks_outbox_pending')).toBe(0);
    expect(total(delivered, 'picks_outbox_oldest_pending_seconds')).toBe(0);
    // Committed 7 s and 3 s (manual clock) before their first attempts.
    expect(total(delivered, 'picks_webhook_delivery_lag_seconds_count')).toBe(2);
    expect(total(delivered, 'picks_webhook_delivery_lag_seconds_sum')).toBe(10);
    expect(total(delivered, 'picks_webhook_delivery_lag_seconds_bucket', { le: '2.5' })).toBe(0);
    expect(total(delivered, 'picks_webhook_delivery_lag_seconds_bucket', { le: '5' })).toBe(1);
    expect(total(delivered, 'picks_webhook_delivery_lag_seconds_bucket', { le: '10' })).toBe(2);

    const settled = await t.graphql(SETTLE, { input: { id: first, result: 'WON', closingOdds: 2.1 } });
    expect(settled.errors).toBeUndefined();
    const after = await scrape();
    expect(total(after, 'picks_picks_settled_total', { result: 'won' })).toBe(1);
    // Two published and one settled: three entries more in the public ledger.
    expect(total(after, 'picks_ledger_entries')).toBe(total(before, 'picks_ledger_entries') + 3);
  });

  it('counts limiter decisions and the 429 by tier, route and status', async () => {
    const starter = await key('STARTER');
    const before = await scrape();
    const statuses: number[] = [];
    for (let i = 0; i <= STARTER_HOURLY; i += 1) {
      statuses.push((await t.app.inject({ method: 'GET', url: '/api/v1/picks', headers: { authorization: `Bearer ${starter}` } })).statusCode);
    }
    expect(statuses).toEqual([200, 200, 429]);
    const after = await scrape();
    const moved = (name: string, labels: Record<string, string>) => total(after, name, labels) - total(before, name, labels);
    const engine = t.config.redisUrl ? 'redis' : 'memory';
    expect(moved('picks_rate_limit_decisions_total', { tier: 'starter', outcome: 'allowed', engine })).toBe(STARTER_HOURLY);
    expect(moved('picks_rate_limit_decisions_total', { tier: 'starter', outcome: 'hourly_limited', engine })).toBe(1);
    expect(moved('picks_http_requests_total', { surface: 'rest', route: '/api/v1/picks', method: 'GET', status: '200' })).toBe(STARTER_HOURLY);
    expect(moved('picks_http_requests_total', { surface: 'rest', route: '/api/v1/picks', method: 'GET', status: '429' })).toBe(1);
    expect(moved('picks_http_request_duration_seconds_count', { surface: 'rest', route: '/api/v1/picks', method: 'GET' })).toBe(STARTER_HOURLY + 1);
  });

  it('labels by route template and surface, never by raw path', async () => {
    const before = await scrape();
    await t.app.inject({ method: 'GET', url: '/api/v1/match-analyses/00000000-0000-4000-8000-000000000001' });
    await t.app.inject({ method: 'GET', url: '/no/such/path/12345' });
    await t.app.inject({ method: 'GET', url: '/api/public/picks/today' });
    await t.app.inject({ method: 'GET', url: '/dashboard/login' });
    await t.app.inject({ method: 'GET', url: '/healthz' });
    const refusedStream = await t.app.inject({ method: 'POST', url: '/api/v1/picks/stream' });
    const after = await scrape();
    const moved = (labels: Record<string, string>) => total(after, 'picks_http_requests_total', labels) - total(before, 'picks_http_requests_total', labels);
    expect(moved({ surface: 'rest', route: '/api/v1/match-analyses/:matchId', method: 'GET', status: '401' })).toBe(1);
    expect(moved({ surface: 'pages', route: 'unmatched', method: 'GET', status: '404' })).toBe(1);
    expect(moved({ surface: 'public', route: '/api/public/picks/today', method: 'GET', status: '200' })).toBe(1);
    expect(moved({ surface: 'dashboard', route: '/dashboard/login', method: 'GET' })).toBe(1);
    expect(moved({ surface: 'pages', route: '/healthz', method: 'GET', status: '200' })).toBe(1);
    // A stream route's refusal is counted once, like any answer, and is no latency.
    expect(moved({ surface: 'stream', route: '/api/v1/picks/stream', method: 'POST', status: String(refusedStream.statusCode) })).toBe(1);
    expect(samplesOf(after, 'picks_http_request_duration_seconds_count', { surface: 'stream' })).toEqual([]);
    // A histogram as Prometheus reads one: cumulative buckets ending at +Inf, which is the count.
    const series = { surface: 'public', route: '/api/public/picks/today', method: 'GET' };
    const buckets = samplesOf(after, 'picks_http_request_duration_seconds_bucket', series);
    expect(buckets.map((bucket) => bucket.labels.le)).toEqual([...METRICS.httpDuration.buckets.map(String), '+Inf']);
    expect(buckets.map((bucket) => bucket.value)).toEqual([...buckets.map((bucket) => bucket.value)].sort((a, b) => a - b));
    expect(buckets.at(-1)!.value).toBe(total(after, 'picks_http_request_duration_seconds_count', series));
    expect(total(after, 'picks_http_request_duration_seconds_sum', series)).toBeGreaterThan(0);
    const routes = new Set(samplesOf(after, 'picks_http_requests_total').map((sample) => sample.labels.route!));
    expect([...routes].filter((route) => /\d{3,}|0000/.test(route))).toEqual([]);
  });

  it('counts open streams by surface while they are open', async () => {
    const enterprise = await key('ENTERPRISE');
    const streams: SseConnection[] = [];
    try {
      streams.push(await connectSse(port, '/api/v1/picks/stream', { authorization: `Bearer ${enterprise}` }));
      streams.push(await connectSse(port, '/api/public/picks/stream'));
      const minted = await t.app.inject({ method: 'POST', url: '/api/v1/stream-tokens', headers: { authorization: `Bearer ${enterprise}` } });
      expect(minted.statusCode, minted.body).toBe(201);
      for (let i = 0; i < 2; i += 1) streams.push(await connectSse(port, `/api/v1/picks/stream?access_token=${minted.json().token as string}`));
      for (const stream of streams) expect(stream.status).toBe(200);
      const open = await scrape();
      // The key's own stream and the two a browser opened with its token.
      expect(total(open, 'picks_streams_open', { surface: 'rest' })).toBe(3);
      expect(total(open, 'picks_streams_open', { surface: 'public' })).toBe(1);
      expect(total(open, 'picks_streams_open', { surface: 'token' })).toBe(2);
      expect(total(open, 'picks_streams_open', { surface: 'graphql' })).toBe(0);
    } finally {
      for (const stream of streams) stream.close();
    }
    await expect.poll(async () => total(await scrape(), 'picks_streams_open')).toBe(0);
    const closed = await scrape();
    // A stream is counted when it ends, and its life is not a latency.
    expect(total(closed, 'picks_http_requests_total', { surface: 'stream', route: '/api/v1/picks/stream', status: '200' })).toBe(3);
    expect(total(closed, 'picks_http_requests_total', { surface: 'stream', route: '/api/public/picks/stream', status: '200' })).toBe(1);
    expect(samplesOf(closed, 'picks_http_request_duration_seconds_count', { surface: 'stream' })).toEqual([]);
  });

  it('exposes every family of the catalog, with the declared labels and values, and the Node.js defaults', async () => {
    const exposition = await scrape();
    const absentHere = new Set<string>([
      ...(t.config.redisUrl ? [] : [METRICS.redisConnected.name]),
      ...(t.databaseTarget.kind === 'postgres' ? [] : [METRICS.dbPoolConnections.name]),
      // Without ODDS_FEED_MONTHLY_CREDITS (test/integration/feed-credits.test.ts has them).
      METRICS.feedBudgetCredits.name,
      METRICS.feedNextPoll.name,
      METRICS.feedPollsStopped.name,
    ]);
    for (const family of Object.values(METRICS)) {
      if (absentHere.has(family.name)) {
        expect(samplesOf(exposition, family.name), family.name).toEqual([]);
        continue;
      }
      expect(exposition.types.get(family.name), family.name).toBe(family.type);
      const sampleNames = family.type === 'histogram' ? [`${family.name}_bucket`, `${family.name}_sum`, `${family.name}_count`] : [family.name];
      for (const sample of exposition.samples.filter((s) => sampleNames.includes(s.name))) {
        const declared = Object.keys(family.labels);
        const names = Object.keys(sample.labels).filter((label) => label !== 'le');
        expect(names.sort(), `${sample.name} labels`).toEqual([...declared].sort());
        for (const [label, values] of Object.entries(family.labels)) {
          if (Array.isArray(values)) expect(values, `${sample.name}{${label}}`).toContain(sample.labels[label]);
        }
      }
    }
    if (t.config.redisUrl) expect(total(exposition, METRICS.redisConnected.name)).toBe(1);
    if (t.databaseTarget.kind === 'postgres') expect(total(exposition, METRICS.dbPoolConnections.name, { state: 'idle' }) + total(exposition, METRICS.dbPoolConnections.name, { state: 'busy' })).toBeGreaterThan(0);
    for (const name of ['process_cpu_user_seconds_total', 'process_resident_memory_bytes', 'nodejs_eventloop_lag_seconds', 'nodejs_heap_size_used_bytes', 'nodejs_gc_duration_seconds']) {
      expect(exposition.types.has(name), name).toBe(true);
    }
  });

  it('serves only GET /metrics, and never on the public port', async () => {
    const other = await fetch(`http://127.0.0.1:${listener.address.port}/`);
    expect(other.status).toBe(404);
    await other.arrayBuffer();
    const post = await fetch(`http://127.0.0.1:${listener.address.port}/metrics`, { method: 'POST' });
    expect(post.status).toBe(404);
    await post.arrayBuffer();
    const publicPort = await t.app.inject({ method: 'GET', url: '/metrics' });
    expect(publicPort.statusCode).toBe(404);
    expect(publicPort.body).not.toContain('picks_http_requests_total');
  });
});

describe('METRICS_HOST and METRICS_PORT', () => {
  const base = { ADMIN_TOKEN: 'test-admin-token-0123456789', WEBHOOK_SECRET_KEY: '0'.repeat(64), LEDGER_SIGNING_KEY };

  it('defaults to 127.0.0.1:9464, and off turns the listener off', () => {
    expect(loadConfig(base).metrics).toEqual({ host: '127.0.0.1', port: 9464 });
    expect(loadConfig({ ...base, METRICS_PORT: 'off' }).metrics.port).toBeNull();
    expect(loadConfig({ ...base, METRICS_PORT: 'OFF' }).metrics.port).toBeNull();
    expect(loadConfig({ ...base, METRICS_PORT: '9100', METRICS_HOST: '10.0.0.5' }).metrics).toEqual({ host: '10.0.0.5', port: 9100 });
  });

  it.each([
    ['no', 'must be an integer between 0 and 65535 (got "no")'],
    ['65536', 'must be an integer between 0 and 65535 (got "65536")'],
    ['-1', 'must be an integer between 0 and 65535 (got "-1")'],
    ['3000', 'must differ from PORT: the metrics never share the public listener'],
  ])('refuses METRICS_PORT=%s in one line', (raw, problem) => {
    expect(() => loadConfig({ ...base, METRICS_PORT: raw })).toThrow(`Invalid configuration: METRICS_PORT ${problem}`);
  });
});

describe('the Metrics table of docs/OPERATIONS.md', () => {
  it('is the one generated from the catalog (npm run config:docs), naming every family', () => {
    const markdown = readFileSync(METRICS_DOC, 'utf8');
    expect(markdown).toContain('<!-- metrics:start -->');
    expect(markdown).toBe(renderMetricsDocs(markdown));
    for (const family of Object.values(METRICS)) expect(markdown).toContain(`| \`${family.name}\` | ${family.type} |`);
  });
});
