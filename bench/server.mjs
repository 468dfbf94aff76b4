/**
 * The benchmark server process (forked by bench/run.mjs; talks to it over IPC only).
 *
 * Builds the real app from dist/ the way src/serve.ts does (loadConfig -> createRuntime ->
 * buildApp), logger off, on 127.0.0.1 and a free port, seeds N picks and one enterprise key
 * whose limits are huge (the limiter always decides, never rejects). Beside it, in the same
 * process and event loop, a bare Fastify instance on its own loopback port answers
 *   GET /__bench/baseline-picks         the bytes of a real /api/v1/picks?limit=50 body
 *   GET /__bench/baseline-public        the bytes of a real /api/public/picks/today body
 *   GET /__bench/baseline-track-record  the bytes of a real /api/v1/track-record?days_back=365 body
 *   GET /__bench/baseline-analysis      the bytes of a real /api/v1/match-analyses/<id> body
 * captured at start-up, with the same content-type. (The real app calls ready() inside
 * buildApp, after which Fastify refuses new routes, so the baseline cannot live in the same
 * Fastify instance without changing src/; it shares the process, the event loop and the
 * cores, which is what the comparison needs.)
 *
 * Environment (set by run.mjs): BENCH_MODE embedded|services, BENCH_PICKS, BENCH_DATA_DIR
 * (embedded), BENCH_DB_URL and BENCH_REDIS_URL (services), BENCH_LEDGER=1 (the ledger flood:
 * the seeded visible picks get their public ledger entries, appended as the app appends the
 * entries of picks older than the ledger, and the ledger page is captured too).
 */
import { createHash, randomBytes } from 'node:crypto';
import { monitorEventLoopDelay } from 'node:perf_hooks';
import Fastify from 'fastify';
import { buildApp } from '../dist/src/app.js';
import { loadConfig } from '../dist/src/config.js';
import { createRuntime } from '../dist/src/runtime.js';
import { startMetricsListener } from '../dist/src/server/metrics-listener.js';
import { HOST, serveCommands } from './common.mjs';
import { percentile } from './lib/stats.mjs';
import { seedAnalysesSql, seedPicksSql } from './seed.mjs';
import { rebuildTrackRecord } from '../dist/src/persistence/track-record-repository.js';
import { BENCH_TIER_LIMITS, dropLimiterCounters, profileCommands, serverEnv, shutdownSoon, truncateTables } from './server-common.mjs';

export const LIST_PATH = '/api/v1/picks?limit=50';
export const PUBLIC_PATH = '/api/public/picks/today';
export const TRACK_RECORD_PATH = '/api/v1/track-record?days_back=365';
/** The flood's page: the first 500 entries, the largest page, as the anonymous clients of issue 38 asked it. */
export const LEDGER_PATH = '/api/public/ledger?limit=500';
const analysisPath = (matchId) => `/api/v1/match-analyses/${matchId}`;

if (!process.send) {
  process.stderr.write('bench/server.mjs is started by bench/run.mjs (npm run bench), not directly.\n');
  process.exit(2);
}

const mode = process.env.BENCH_MODE;
const picks = Number(process.env.BENCH_PICKS ?? 10_000);
const withLedger = process.env.BENCH_LEDGER === '1';
const adminToken = `bench-admin-${randomBytes(16).toString('hex')}`;

export function summarise(samplesMs) {
  const sorted = Float64Array.from(samplesMs).sort();
  const sum = sorted.reduce((a, b) => a + b, 0);
  const r = (v) => (v === null ? null : Math.round(v * 1000) / 1000);
  return {
    n: sorted.length,
    mean: r(sorted.length ? sum / sorted.length : null),
    p50: r(percentile(sorted, 50)),
    p90: r(percentile(sorted, 90)),
    p99: r(percentile(sorted, 99)),
    max: r(sorted.length ? sorted[sorted.length - 1] : null),
  };
}

async function main() {
  const env = await serverEnv({
    mode,
    modeVar: 'BENCH_MODE',
    adminToken,
    dataDir: process.env.BENCH_DATA_DIR,
    dbUrl: process.env.BENCH_DB_URL,
    redisUrl: process.env.BENCH_REDIS_URL,
    // BENCH_METRICS_PORT=off measures without the metrics listener and the Node.js runtime metrics.
    extra: { TIER_LIMITS: JSON.stringify(BENCH_TIER_LIMITS), ...(process.env.BENCH_METRICS_PORT ? { METRICS_PORT: process.env.BENCH_METRICS_PORT } : {}) },
  });
  const config = loadConfig(env);
  const started = performance.now();
  const runtime = await createRuntime(config, { adminToken, migrate: true });

  // Fresh data every run: the bench database (or temp DATA_DIR) is ours alone.
  const em = runtime.orm.em.fork();
  await truncateTables(runtime.orm, ['picks', 'api_keys', 'monthly_usage', 'track_record_days']);
  await em.execute(seedPicksSql(picks));
  await em.execute(seedAnalysesSql());
  // Picks inserted with SQL: rebuild the track record's day sums and summaries.
  await rebuildTrackRecord(em);
  // Their ledger entries the way a start appends those of picks older than the ledger (in published_at order).
  const ledgerStarted = performance.now();
  const ledgerEntries = withLedger ? await runtime.services.ledger.appendMissing() : 0;
  const ledgerAppendMs = Math.round(performance.now() - ledgerStarted);
  await em.execute('analyze');
  const [{ visible }] = await em.execute(`select count(*)::int as visible from picks where status in ('published', 'settled')`);
  // The analysis target: the visible pick with an analysis that kicks off last (a fixed choice for a given N).
  const [analysed] = await em.execute(
    `select a.match_id as id, (select count(*)::int from match_analyses) as analyses from match_analyses a join picks p on p.id = a.match_id
     where p.status in ('published', 'settled') order by p.kickoff_at desc, p.id desc limit 1`,
  );
  if (!analysed) throw new Error('seed: no visible pick has an analysis');
  const { key, apiKey } = await runtime.services.apiKeys.create({ tier: 'enterprise', label: 'bench' });
  const seededMs = performance.now() - started;

  const app = await buildApp(runtime, { logger: false });
  await app.listen({ port: 0, host: HOST });
  // As the service runs by default: its metrics listener on (a free port here), the Node.js
  // runtime metrics collected, so their cost is in every figure.
  const metricsListener = config.metrics.port === null ? null : await startMetricsListener(runtime.metrics, HOST, 0);

  // Bodies of the real endpoints, captured once; the baselines answer with these bytes.
  const list = await app.inject({ method: 'GET', url: LIST_PATH, headers: { authorization: `Bearer ${key}` } });
  if (list.statusCode !== 200) throw new Error(`list capture: HTTP ${list.statusCode} ${list.body.slice(0, 300)}`);
  const listJson = list.json();
  if (listJson.count !== 50 || listJson.data.length !== 50) throw new Error(`list capture: expected 50 picks, got ${listJson.count}`);
  const pub = await app.inject({ method: 'GET', url: PUBLIC_PATH });
  if (pub.statusCode !== 200) throw new Error(`public capture: HTTP ${pub.statusCode} ${pub.body.slice(0, 300)}`);
  const pubJson = pub.json();
  if (pubJson.count !== 20) throw new Error(`public capture: expected 20 picks of today, got ${pubJson.count}`);
  const trackRecord = await app.inject({ method: 'GET', url: TRACK_RECORD_PATH, headers: { authorization: `Bearer ${key}` } });
  if (trackRecord.statusCode !== 200) throw new Error(`track-record capture: HTTP ${trackRecord.statusCode} ${trackRecord.body.slice(0, 300)}`);
  if (!(trackRecord.json().overall?.total_settled > 0)) throw new Error('track-record capture: no settled pick in the last 365 days');
  const analysis = await app.inject({ method: 'GET', url: analysisPath(analysed.id), headers: { authorization: `Bearer ${key}` } });
  if (analysis.statusCode !== 200) throw new Error(`analysis capture: HTTP ${analysis.statusCode} ${analysis.body.slice(0, 300)}`);
  const captured = {
    list: { body: list.rawPayload, contentType: list.headers['content-type'] },
    public: { body: pub.rawPayload, contentType: pub.headers['content-type'], count: pubJson.count },
    trackRecord: { body: trackRecord.rawPayload, contentType: trackRecord.headers['content-type'] },
    analysis: { body: analysis.rawPayload, contentType: analysis.headers['content-type'] },
  };
  if (withLedger) {
    const ledger = await app.inject({ method: 'GET', url: LEDGER_PATH });
    if (ledger.statusCode !== 200) throw new Error(`ledger capture: HTTP ${ledger.statusCode} ${ledger.body.slice(0, 300)}`);
    const count = ledger.json().entries.length;
    if (count !== 500) throw new Error(`ledger capture: expected 500 entries, got ${count} (BENCH_PICKS too small?)`);
    captured.ledger = { body: ledger.rawPayload, contentType: ledger.headers['content-type'], count };
  }

  // Each baseline answers with the captured bytes of its endpoint, nothing else.
  const bare = Fastify({ logger: false });
  const baselineRoutes = { 'baseline-picks': 'list', 'baseline-public': 'public', 'baseline-track-record': 'trackRecord', 'baseline-analysis': 'analysis' };
  for (const [route, name] of Object.entries(baselineRoutes)) {
    const { body, contentType } = captured[name];
    bare.get(`/__bench/${route}`, (_req, reply) => reply.type(contentType).send(body));
  }
  await bare.listen({ port: 0, host: HOST });

  // In-situ limiter timing: every consume() the request path makes, and which engine decided.
  const limiter = runtime.limiter;
  const realConsume = limiter.consume.bind(limiter);
  let insitu = [];
  let modes = {};
  limiter.consume = async (...args) => {
    const t0 = performance.now();
    try {
      return await realConsume(...args);
    } finally {
      insitu.push(performance.now() - t0);
      const m = limiter.mode();
      modes[m] = (modes[m] ?? 0) + 1;
    }
  };
  // The `list-admin` reference: the list without the API-key lookup and without the limiter,
  // the path the admin token took before /api/v1 refused it. A bench-only credential that the
  // auth service answers without a lookup and the limiter admits with the real key's decision.
  const unmeteredToken = `bench-unmetered-${randomBytes(16).toString('hex')}`;
  const unmeteredKeyId = '00000000-0000-7000-8000-00000000bec1';
  const auth = runtime.services.auth;
  const realPrincipalFor = auth.principalFor.bind(auth);
  auth.principalFor = (header, accessToken) =>
    header === `Bearer ${unmeteredToken}` ? Promise.resolve({ kind: 'apiKey', apiKeyId: unmeteredKeyId, tier: 'enterprise' }) : realPrincipalFor(header, accessToken);
  let lastDecision = null;
  const meteredConsume = limiter.consume;
  limiter.consume = async (apiKeyId, ...rest) => {
    // Not counted: the key's last decision again (the first time, one real decision for the bench key).
    if (apiKeyId === unmeteredKeyId) return lastDecision ?? (lastDecision = await meteredConsume(apiKey.id, ...rest));
    return (lastDecision = await meteredConsume(apiKeyId, ...rest));
  };
  // How often the read services actually run: a call that a cache above the service (the
  // public adapter's bodies, the GraphQL read cache) answered does not reach them.
  const noServiceCalls = () => ({ list: 0, today: 0, trackRecord: 0, analysis: 0, ledgerPage: 0 });
  let serviceCalls = noServiceCalls();
  const counted = [
    ['list', runtime.services.picks, 'list'],
    ['today', runtime.services.picks, 'today'],
    ['trackRecord', runtime.services.trackRecord, 'get'],
    ['analysis', runtime.services.analyses, 'get'],
    ['ledgerPage', runtime.services.ledger, 'page'],
  ];
  for (const [name, service, method] of counted) {
    if (typeof service?.[method] !== 'function') continue;
    const real = service[method].bind(service);
    service[method] = (...args) => {
      serviceCalls[name] += 1;
      return real(...args);
    };
  }
  // The GraphQL read cache's counters, where the app has one (cumulative; deltas per window).
  const readCacheStats = () => (typeof app.readCacheStats === 'function' ? app.readCacheStats() : null);
  let readCacheAtReset = readCacheStats();
  // Visibility broadcasts from other processes sharing Redis drop the public cache: count them.
  let invalidations = 0;
  runtime.onVisibilityChange(() => {
    invalidations += 1;
  });

  // How long timers wait for the event loop: what any await on I/O (Redis, PostgreSQL) pays on top.
  const loopDelay = monitorEventLoopDelay({ resolution: 1 });
  loopDelay.enable();

  const sha = (buf) => createHash('sha256').update(buf).digest('hex');

  const commands = {
    async cpuMark() {
      return { cpu: process.cpuUsage(), t: performance.now(), elu: performance.eventLoopUtilization() };
    },
    async resetInsitu() {
      insitu = [];
      modes = {};
      invalidations = 0;
      serviceCalls = noServiceCalls();
      readCacheAtReset = readCacheStats();
      loopDelay.reset();
      return true;
    },
    /**
     * Waits until the work left behind by a finished load run is done: a client that hangs up
     * does not cancel its request, so a slow target leaves a queue that would slow the next
     * one. Done when a database round trip (queued behind that work) and an event-loop turn
     * are both fast twice in a row.
     */
    async quiesce({ maxMs }) {
      const deadline = performance.now() + (maxMs ?? 60_000);
      let calm = 0;
      while (calm < 2 && performance.now() < deadline) {
        const t0 = performance.now();
        await runtime.orm.em.fork().execute('select 1');
        await new Promise((resolve) => setImmediate(resolve));
        calm = performance.now() - t0 < 5 ? calm + 1 : 0;
        await new Promise((resolve) => setTimeout(resolve, 100));
      }
      await new Promise((resolve) => setTimeout(resolve, 500));
      return calm >= 2;
    },
    async readInsitu() {
      const ms = (ns) => Math.round(ns / 1e3) / 1e3;
      // The histogram includes the 1 ms sampling interval itself: subtract it.
      const eventLoopDelayMs = { p50: ms(Math.max(0, loopDelay.percentile(50) - 1e6)), p99: ms(Math.max(0, loopDelay.percentile(99) - 1e6)), max: ms(Math.max(0, loopDelay.max - 1e6)) };
      const now = readCacheStats();
      const readCache = now && readCacheAtReset ? { hits: now.hits - readCacheAtReset.hits, stored: now.stored - readCacheAtReset.stored } : null;
      return { consume: summarise(insitu), modes, publicCacheInvalidations: invalidations, serviceCalls, readCache, eventLoopDelayMs };
    },
    /** Sequential limiter.consume() calls on the bench key, nothing else running. */
    async limiterDirect({ warmup, n }) {
      const policy = config.tierLimits.enterprise;
      for (let i = 0; i < warmup; i += 1) await realConsume(apiKey.id, policy);
      const samples = [];
      const modeCounts = {};
      const cpu0 = process.cpuUsage();
      for (let i = 0; i < n; i += 1) {
        const t0 = performance.now();
        const decision = await realConsume(apiKey.id, policy);
        samples.push(performance.now() - t0);
        if (!decision.allowed) throw new Error('limiter rejected a bench request: the bench limits are too small');
        modeCounts[limiter.mode()] = (modeCounts[limiter.mode()] ?? 0) + 1;
      }
      const cpu = process.cpuUsage(cpu0);
      // Server-process CPU per call (client side only: Redis' own CPU is not in it).
      return { ...summarise(samples), cpuUsPerCall: Math.round(((cpu.user + cpu.system) / n) * 10) / 10, modes: modeCounts };
    },
    ...profileCommands(200),
    async stop() {
      return shutdownSoon('bench server', async () => {
        await bare.close();
        await app.close();
        if (mode === 'services') await dropLimiterCounters(config.redisUrl, [apiKey.id]);
        await runtime.close();
        await metricsListener?.close();
      });
    },
  };

  serveCommands(commands);

  process.send({
    type: 'ready',
    appPort: app.server.address().port,
    barePort: bare.server.address().port,
    apiKey: key,
    unmeteredToken,
    picks,
    visiblePicks: visible,
    seedAndStartMs: Math.round(seededMs),
    limiterMode: limiter.mode(),
    analysisMatchId: analysed.id,
    analyses: analysed.analyses,
    ledgerEntries,
    ledgerAppendMs,
    paths: { list: LIST_PATH, public: PUBLIC_PATH, trackRecord: TRACK_RECORD_PATH, analysis: analysisPath(analysed.id), ledger: LEDGER_PATH },
    bodies: Object.fromEntries(
      Object.entries(captured).map(([name, { body, contentType, count }]) => [name, { bytes: body.length, sha256: sha(body), contentType, ...(count === undefined ? {} : { count }) }]),
    ),
  });
}

main().catch((error) => {
  process.stderr.write(`bench server failed: ${error?.stack ?? error}\n`);
  process.exit(1);
});
