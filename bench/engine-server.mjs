/**
 * The value engine benchmark's server (forked by bench/engine-run.mjs; control over IPC).
 *
 * The real app from dist/ as src/serve.ts builds it (loadConfig -> createRuntime -> buildApp,
 * logger off, NODE_ENV=production, 127.0.0.1, a free port) with ODDS_FEED_URL pointing at the
 * bench feed (bench/engine-feed.mjs), ODDS_FEED_SPORTS=soccer_epl, REFERENCE_BOOKMAKERS and
 * ODDS_FEED_MARKETS as the orchestrator says (the feed's references and markets: by default
 * pinnacle,betfair_ex_eu:0.5 and h2h,spreads,totals), the poller's timers off
 * (startPoller: false): every poll is runtime.poller.pollNow(['odds']), the same code the
 * timers run. Its dispatcher and outbox relay run as in production; one enterprise key (it
 * may stream) holds a webhook subscription to https://hooks.test:<receiver port>/engine
 * (WEBHOOK_HOST_OVERRIDES maps hooks.test to 127.0.0.1; the test CA is trusted through
 * NODE_EXTRA_CA_CERTS, set by the orchestrator).
 *
 * Where a poll's time goes, measured on this instance without touching the engine's code
 * (wrappers on the objects the runtime built, like bench/webhooks-server.mjs does):
 *   fetch     the feed source's odds(): HTTP request, body read, JSON.parse
 *   validate  from odds() resolving to ingestOdds() being called: parseOddsEvents
 *   store     the engine's write transaction (events, odds_latest/odds_history, each
 *             reference's markets in reference_markets, kickoff moves, closing lines): its
 *             transactional() call, and each statement in it (em.execute, or executeBound
 *             through the transaction's getKysely().executeQuery)
 *   lookup    the engine's other queries outside picks (the stored events, the pick slots
 *             already taken for the events)
 *   picks     creating the poll's picks (publish path: picks, analyses, outbox events)
 *   compute   the rest of ingestOdds: building the price rows and the reference observations
 *             (referenceObservations) and detectValue for every event (each reference's devig,
 *             the weighted consensus, the offers)
 *   gc        the garbage collector's pauses within the poll (already inside the parts above),
 *             and the part each fell in
 * and, for a cross-check, the pure steps timed again on the same body after the poll: parse
 * (parseOddsEvents), devig (each market's reference consensus: referenceObservations +
 * referenceConsensus), detect (detectValue, which devigs again); both solve every market's
 * devig, remembering none, as before the engine remembered solutions (its steady polls reuse them).
 *
 * IPC commands:
 *   poll    {}  one odds poll; its wall time (from pollNow() and from the feed request's
 *               start to pollNow() resolving: every write committed), the parts above and
 *               the ids of the picks it created
 *   afterPoll {}  after the poll's picks were delivered: the odds_history rows the poll wrote
 *               and the pure steps timed on its body
 *   pickFor { eventId, market, selection }  the id and status of the engine's pick for that outcome, or null
 *   storage {}  rows and sizes of odds_history, odds_latest, odds_events, reference_markets
 *   stop    {}
 *
 * Environment (set by engine-run.mjs): ENGINE_MODE embedded|services, ENGINE_DATA_DIR
 * (embedded), ENGINE_DB_URL + ENGINE_REDIS_URL (services), ENGINE_FEED_URL,
 * ENGINE_RECEIVER_PORT, ENGINE_REFERENCE_BOOKMAKERS (REFERENCE_BOOKMAKERS; pinnacle when
 * absent), ENGINE_FEED_MARKETS (ODDS_FEED_MARKETS; h2h,spreads,totals when absent).
 */
import { randomBytes } from 'node:crypto';
import { constants as perfConstants, PerformanceObserver } from 'node:perf_hooks';
import { buildApp } from '../dist/src/app.js';
import { loadConfig } from '../dist/src/config.js';
import * as devigModule from '../dist/src/domain/devig.js';
import { parseOddsEvents } from '../dist/src/domain/odds-feed.js';
import { referenceConsensus } from '../dist/src/domain/reference-consensus.js';
import { detectValue, referenceObservations } from '../dist/src/domain/value-detection.js';
import { createRuntime } from '../dist/src/runtime.js';
import { HOST, serveCommands, wallNow } from './common.mjs';
import { BENCH_TIER_LIMITS, dropLimiterCounters, profileCommands, serverEnv, shutdownSoon, truncateTables } from './server-common.mjs';

/** The pure steps solve every market's devig, remembering none (source before the engine remembered solutions: always). */
const withoutRememberedSolutions = devigModule.withoutRememberedSolutions ?? ((work) => work());

if (!process.send) {
  process.stderr.write('bench/engine-server.mjs is started by bench/engine-run.mjs (npm run bench:engine), not directly.\n');
  process.exit(2);
}

const mode = process.env.ENGINE_MODE;
const adminToken = `bench-admin-${randomBytes(16).toString('hex')}`;

const problems = { count: 0, byMessage: {}, samples: [], info: {} };
const note = (level) => (details, message) => {
  problems.count += 1;
  const key = `${level}: ${message}`;
  problems.byMessage[key] = (problems.byMessage[key] ?? 0) + 1;
  if (problems.samples.length < 5) problems.samples.push({ level, message, details: JSON.parse(JSON.stringify(details ?? {}, (_k, v) => (v instanceof Error ? v.message : v))) });
};
// Info lines (the references disagreeing on a selection, say) are only counted.
const log = {
  info(_details, message) {
    problems.info[message] = (problems.info[message] ?? 0) + 1;
  },
  warn: note('warn'),
  error: note('error'),
};

const em0 = (runtime) => runtime.orm.em.fork();

/**
 * Watches the garbage collector's pauses on this thread; the returned function stops and gives
 * those from `from` on (wall clock ms): their total, the mark-compact ones', and each pause's
 * offset from `from`; null when the observer heard of no pause at all (the embedded mode's
 * server, with PGlite loaded, hears of none: not measured there, rather than none).
 */
function watchGc() {
  const pauses = [];
  const take = (entries) => {
    for (const entry of entries) pauses.push({ at: performance.timeOrigin + entry.startTime, ms: entry.duration, major: entry.detail?.kind === perfConstants.NODE_PERFORMANCE_GC_MAJOR });
  };
  const observer = new PerformanceObserver((list) => take(list.getEntries()));
  observer.observe({ entryTypes: ['gc'] });
  return (from) => {
    take(observer.takeRecords());
    observer.disconnect();
    if (pauses.length === 0) return null;
    const within = pauses.filter((pause) => pause.at >= from);
    return {
      gcMs: within.reduce((sum, pause) => sum + pause.ms, 0),
      gcMajorMs: within.filter((pause) => pause.major).reduce((sum, pause) => sum + pause.ms, 0),
      pauses: within.map((pause) => ({ atMs: Math.round(pause.at - from), ms: Math.round(pause.ms * 10) / 10, major: pause.major })),
    };
  };
}

/** Wraps `target[name]` (an async method) so each call adds its wall time to `onDone`. */
function timeMethod(target, name, onDone) {
  const original = target[name].bind(target);
  target[name] = async (...args) => {
    const t0 = wallNow();
    try {
      return await original(...args);
    } finally {
      onDone(t0, wallNow(), args);
    }
  };
}

/**
 * A Kysely instance (or transaction) whose executeQuery calls (executeBound's path) report
 * their wall time and SQL to `onDone`; everything else goes to the real one.
 */
function timedKysely(kysely, onDone) {
  return new Proxy(kysely, {
    get(target, prop) {
      const value = Reflect.get(target, prop, target);
      if (typeof value !== 'function') return value;
      if (prop !== 'executeQuery') return value.bind(target);
      return async (query, ...rest) => {
        const t0 = wallNow();
        try {
          return await value.call(target, query, ...rest);
        } finally {
          onDone(t0, wallNow(), [query?.sql ?? '']);
        }
      };
    },
  });
}

/** Times `em`'s SQL: its execute() calls and the executeQuery calls of its getKysely() (executeBound). */
function timeSql(em, onDone) {
  timeMethod(em, 'execute', onDone);
  const getKysely = em.getKysely.bind(em);
  em.getKysely = (...args) => timedKysely(getKysely(...args), onDone);
}

/**
 * The engine's own ORM handle, wrapped: the forks it takes time their transactional() (the
 * write transaction, and each statement in it) and their other SQL (lookups). Only the engine
 * sees this handle; the pick service, relay and dispatcher keep the real one.
 */
function instrumentEngineOrm(engine, current) {
  const orm = engine.orm;
  const em = new Proxy(orm.em, {
    get(target, prop) {
      if (prop !== 'fork') return Reflect.get(target, prop, target);
      return (...args) => {
        const fork = target.fork(...args);
        timeMethod(fork, 'transactional', (t0, t1) => current().store.push([t0, t1]));
        // Each statement of the write transaction, named by the table it writes.
        const transactional = fork.transactional;
        fork.transactional = (callback, ...rest) =>
          transactional((txEm, ...more) => {
            timeSql(txEm, (t0, t1, [sql]) => current().statements.push([statementName(sql), t1 - t0]));
            return callback(txEm, ...more);
          }, ...rest);
        timeSql(fork, (t0, t1) => current().lookup.push([t0, t1]));
        return fork;
      };
    },
  });
  engine.orm = new Proxy(orm, { get: (target, prop) => (prop === 'em' ? em : Reflect.get(target, prop, target)) });
}

/** A write statement's name for the breakdown: its first verb and table (`insert odds_latest`). */
function statementName(sql) {
  const text = String(sql).replace(/\s+/g, ' ').trim();
  const first = /^(?:with .*?\b)?(insert into|update|delete from|select)\s+(\w+)/i.exec(text);
  if (/^with incoming/i.test(text)) return 'prices (odds_latest + odds_history)';
  if (/^update picks .*kickoff_at =/i.test(text)) return 'update picks (kickoffs)';
  if (/^update picks .*closing_odds =/i.test(text)) return 'update picks (closing lines)';
  // The references' markets, one row per event, market and reference (bench/engine-sql.mjs `reference*` variants).
  if (/^insert into reference_markets/i.test(text)) return 'upsert reference_markets';
  if (/^select .* from picks p join reference_markets/i.test(text)) return 'select picks (closable)';
  return first ? `${first[1].split(' ')[0].toLowerCase()} ${first[2]}` : text.slice(0, 40);
}

async function main() {
  const receiverPort = Number(process.env.ENGINE_RECEIVER_PORT);
  if (!Number.isInteger(receiverPort) || receiverPort <= 0) throw new Error('ENGINE_RECEIVER_PORT is required');
  const env = await serverEnv({
    mode,
    modeVar: 'ENGINE_MODE',
    adminToken,
    dataDir: process.env.ENGINE_DATA_DIR,
    dbUrl: process.env.ENGINE_DB_URL,
    redisUrl: process.env.ENGINE_REDIS_URL,
    extra: {
      ODDS_FEED_URL: process.env.ENGINE_FEED_URL,
      ODDS_FEED_API_KEY: 'bench-feed-key',
      ODDS_FEED_SPORTS: 'soccer_epl',
      ODDS_FEED_MARKETS: process.env.ENGINE_FEED_MARKETS || 'h2h,spreads,totals',
      REFERENCE_BOOKMAKERS: process.env.ENGINE_REFERENCE_BOOKMAKERS || 'pinnacle',
      ODDS_POLL_SECONDS: '60',
      WEBHOOK_HOST_OVERRIDES: 'hooks.test=127.0.0.1',
      TIER_LIMITS: JSON.stringify(BENCH_TIER_LIMITS),
    },
  });
  const config = loadConfig(env);
  const runtime = await createRuntime(config, { adminToken, migrate: true, log, startPoller: false });
  // Fresh data every run: the bench database (or temp DATA_DIR) is ours alone.
  await truncateTables(runtime.orm, [
    'odds_history',
    'odds_latest',
    'odds_events',
    'reference_markets',
    'engine_leases',
    'webhook_delivery_attempts',
    'webhook_deliveries',
    'webhook_subscriptions',
    'outbox_events',
    'match_analyses',
    'picks',
    'api_keys',
    'monthly_usage',
  ]);
  // The table statistics (updates, HOT updates) then count this run only.
  await em0(runtime).execute('select pg_stat_reset()').catch(() => undefined);
  const { key, apiKey } = await runtime.services.apiKeys.create({ tier: 'enterprise', label: 'engine-bench' });
  await runtime.services.webhooks.create(apiKey.id, { url: `https://hooks.test:${receiverPort}/engine`, events: ['pick.published'] });
  const app = await buildApp(runtime, { logger: false });
  await app.listen({ port: 0, host: HOST });

  const { poller } = runtime;
  const engine = runtime.services.valueEngine;
  let parts = null;
  const current = () => parts ?? { store: [], lookup: [], picks: [], statements: [] };
  let lastBody = null;
  /** What afterPoll needs of the last poll. */
  let afterPoll = null;
  timeMethod(poller.source, 'odds', (t0, t1) => {
    if (parts) parts.fetch = [t0, t1];
  });
  const fetchOdds = poller.source.odds;
  poller.source.odds = async (...args) => {
    const response = await fetchOdds(...args);
    lastBody = response.body;
    return response;
  };
  timeMethod(engine, 'ingestOdds', (t0, t1) => {
    if (parts) parts.ingest = [t0, t1];
  });
  // One span: the poll's picks are created together, in one transaction.
  timeMethod(engine, 'createPicks', (t0, t1) => current().picks.push([t0, t1]));
  instrumentEngineOrm(engine, current);
  const em = () => runtime.orm.em.fork();
  const count = async (table) => Number((await em().execute(`select count(*)::bigint as n from ${table}`))[0].n);
  const spanMs = (spans) => spans.reduce((sum, [a, b]) => sum + (b - a), 0);

  serveCommands({
    ...profileCommands(200),
    async poll() {
      const historyBefore = await count('odds_history');
      const pickIds = async () => new Set((await em().execute('select id from picks')).map((row) => String(row.id)));
      const picksBefore = await pickIds();
      parts = { store: [], lookup: [], picks: [], statements: [] };
      const startedAt = wallNow();
      const stopWatchingGc = watchGc();
      const polled = await poller.pollNow(['odds']);
      const endedAt = wallNow();
      const gc = stopWatchingGc(parts.fetch?.[0] ?? startedAt);
      const p = parts;
      parts = null;
      if (!polled) throw new Error('pollNow: another holder has the feed lease');
      if (!p.fetch || !p.ingest) throw new Error(`the poll did not reach the engine (see problems: ${JSON.stringify(problems.samples)})`);
      const ingestMs = p.ingest[1] - p.ingest[0];
      // Inside ingestOdds, only the engine's own lookups count (the write transaction's statements run inside store).
      const lookup = p.lookup.filter(([a]) => a >= p.ingest[0] && !p.store.some(([s, e]) => a >= s && a <= e));
      const storeMs = spanMs(p.store);
      const lookupMs = spanMs(lookup);
      const picksMs = spanMs(p.picks);
      const inside = (spans, at) => spans.some(([a, b]) => at >= a && at < b);
      const partAt = (at) =>
        at < p.fetch[1] ? 'fetch' : at < p.ingest[0] ? 'validate' : at >= p.ingest[1] ? 'after' : inside(p.store, at) ? 'store' : inside(lookup, at) ? 'lookup' : inside(p.picks, at) ? 'picks' : 'compute';
      for (const pause of gc?.pauses ?? []) pause.part = partAt(p.fetch[0] + pause.atMs);
      afterPoll = { historyBefore, body: lastBody };
      return {
        startedAt,
        fetchStartedAt: p.fetch[0],
        endedAt,
        totalMs: endedAt - startedAt,
        fromRequestMs: endedAt - p.fetch[0],
        parts: {
          leaseMs: p.fetch[0] - startedAt,
          fetchMs: p.fetch[1] - p.fetch[0],
          validateMs: p.ingest[0] - p.fetch[1],
          storeMs,
          lookupMs,
          picksMs,
          computeMs: ingestMs - storeMs - lookupMs - picksMs,
          afterMs: endedAt - p.ingest[1],
          // Inside the parts above, not beside them.
          ...(gc && { gcMs: gc.gcMs, gcMajorMs: gc.gcMajorMs }),
        },
        gcPauses: gc?.pauses ?? null,
        statements: p.statements.map(([name, ms]) => ({ name, ms })),
        pickIds: [...(await pickIds())].filter((id) => !picksBefore.has(id)),
        picksTimed: p.picks.length,
      };
    },
    /**
     * What the last poll wrote to odds_history, and the pure steps timed again on its body (a
     * cross-check of the parts). Called once the poll's picks were delivered: run right after
     * the poll, this CPU work (and the count) would hold up the relay on the same event loop
     * (and, embedded, the same PGlite) and show up as edge latency.
     */
    async afterPoll() {
      if (!afterPoll) throw new Error('afterPoll: no poll to follow');
      const { historyBefore, body } = afterPoll;
      afterPoll = null;
      const t0 = performance.now();
      const parsed = parseOddsEvents(body);
      const t1 = performance.now();
      let fair = 0;
      let candidates = 0;
      const now = new Date();
      const { detection } = config.valueEngine;
      const weightOf = new Map(detection.references.map((reference) => [reference.key, reference.weight]));
      withoutRememberedSolutions(() => {
        for (const event of parsed.events) {
          // Each market (key and line) priced by the references' consensus, as detection does.
          const markets = new Map();
          for (const observed of referenceObservations(event, detection, now)) {
            const key = `${observed.market}:${observed.line}`;
            markets.set(key, [...(markets.get(key) ?? []), { bookmaker: observed.bookmaker, weight: weightOf.get(observed.bookmaker), outcomes: observed.prices, updatedAt: observed.updatedAt }]);
          }
          for (const quotes of markets.values()) if ('quotes' in referenceConsensus(quotes, detection.devigMethod)) fair += 1;
        }
      });
      const t2 = performance.now();
      withoutRememberedSolutions(() => {
        for (const event of parsed.events) candidates += detectValue(event, config.valueEngine.detection, now).candidates.length;
      });
      const t3 = performance.now();
      return {
        pure: { parseMs: t1 - t0, devigMs: t2 - t1, detectMs: t3 - t2, events: parsed.events.length, skipped: parsed.skipped.length, fairMarkets: fair, candidates },
        historyRows: (await count('odds_history')) - historyBefore,
      };
    },
    async pickFor({ eventId, market, selection }) {
      const rows = await em().execute('select id, status from picks where event_id = ? and market = ? and selection = ?', [eventId, market, selection]);
      return rows[0] ? { id: String(rows[0].id), status: String(rows[0].status) } : null;
    },
    async storage({ compact }) {
      // VACUUM FULL rewrites each table without its dead row versions: the compact size per live row.
      const tables = ['odds_history', 'odds_latest', 'odds_events', 'reference_markets'];
      if (compact) for (const table of tables) await em().execute(`vacuum full ${table}`);
      const out = {};
      for (const table of tables) {
        const [row] = await em().execute(
          `select (select count(*) from ${table})::bigint as rows,
                  pg_relation_size('${table}')::bigint as heap,
                  pg_indexes_size('${table}')::bigint as indexes,
                  pg_total_relation_size('${table}')::bigint as total,
                  (select coalesce(avg(pg_column_size(t.*)), 0) from ${table} t)::float8 as tuple_bytes`,
        );
        out[table] = { rows: Number(row.rows), heapBytes: Number(row.heap), indexBytes: Number(row.indexes), totalBytes: Number(row.total), avgTupleBytes: Number(row.tuple_bytes) };
        // Row versions left by updates (the statistics may lag a little, and PGlite may keep none).
        const stats = await em()
          .execute(`select n_tup_upd::bigint as upd, n_tup_hot_upd::bigint as hot, n_dead_tup::bigint as dead from pg_stat_user_tables where relname = '${table}'`)
          .catch(() => []);
        if (stats[0]) Object.assign(out[table], { updates: Number(stats[0].upd), hotUpdates: Number(stats[0].hot), deadTuples: Number(stats[0].dead) });
      }
      out.version = String((await em().execute('select version() as v'))[0].v);
      return out;
    },
    problems() {
      return problems;
    },
    async stop() {
      return shutdownSoon('engine server', async () => {
        await app.close();
        if (mode === 'services') await dropLimiterCounters(config.redisUrl, [apiKey.id]);
        await runtime.close();
      });
    },
  });

  process.send({ type: 'ready', pid: process.pid, port: app.server.address().port, streamPath: '/api/v1/picks/stream', apiKey: key });
}

main().catch((error) => {
  process.stderr.write(`engine server failed: ${error?.stack ?? error}\n`);
  process.exit(1);
});
