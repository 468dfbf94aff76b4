/**
 * `npm run bench:engine`: the value engine's odds poll and edge latency (docs/PERFORMANCE.md,
 * "Value engine"). Targets: one poll of 500 events x 8 bookmakers x 3 markets (h2h 3-way,
 * spreads and totals with their points: 7 prices per bookmaker, 28,000 a poll) with 2
 * references (Pinnacle and Betfair Exchange at weight 0.5, a weighted consensus) processed
 * (fetch, parse, devig, detect, write) in under 1 s of wall time in both modes; a new edge in
 * the feed reaches an SSE client and a webhook receiver within 1 s (p99) of the poll's
 * response. It also measures the rows and bytes odds_history, odds_latest, odds_events and
 * reference_markets take, and extrapolates them to a day and to the 14-day retention.
 *
 * Processes (loopback only): this orchestrator, which also holds the SSE client (GET
 * /api/v1/picks/stream with an enterprise key; a frame's arrival = wall clock when its bytes
 * are read); the feed (bench/engine-feed.mjs: v4 JSON on 127.0.0.1, IPC to move prices and
 * inject edges; it records when each response was sent); the webhook receiver
 * (bench/webhooks-receiver.mjs, HTTPS with the test certificate); the server
 * (bench/engine-server.mjs: the real app from dist/ with ODDS_FEED_URL at the feed,
 * REFERENCE_BOOKMAKERS and ODDS_FEED_MARKETS matching the feed, timers off, every poll
 * runtime.poller.pollNow(['odds'])).
 *
 * Per mode:
 *   1. poll processing: BENCH_ENGINE_FIRST_POLLS first polls, each of a freshly generated
 *      feed (new event ids: every event, price and edge is new; the first on an empty
 *      database), then BENCH_ENGINE_STEADY_POLLS steady polls, each after the feed moved
 *      BENCH_ENGINE_CHANGE_SHARE of its prices. Wall time from the feed request's start to
 *      pollNow() resolving (every write committed), and its parts (engine-server.mjs).
 *      Between polls the bench waits until every pick of the poll reached the SSE client
 *      and the receiver (a real poll comes ODDS_POLL_SECONDS later).
 *   2. edge latency: BENCH_ENGINE_EDGES times: move prices as above, inject one new edge (any
 *      market), poll; latency = arrival of that pick's SSE frame / webhook request - the time the
 *      feed finished sending the poll's response. p50 / p99 / max.
 *   3. storage: rows and bytes (pg_relation_size, pg_indexes_size, pg_total_relation_size,
 *      avg pg_column_size) of the four tables after all polls, as the polls left them and
 *      after VACUUM FULL (live rows only); odds_history rows per poll against the prices changed.
 *
 * Modes: embedded (PGlite in a temp DATA_DIR; always) and services (PostgreSQL + Redis) when
 * a database URL and a Redis URL are known: BENCH_ENGINE_DATABASE_URL (used as given: its
 * tables are truncated) or the server of BENCH_DATABASE_URL / DATABASE_URL with database
 * picks_enginebench (created when missing); BENCH_REDIS_URL or REDIS_URL.
 * BENCH_ENGINE_MODES=embedded,services picks explicitly. URLs that are not loopback are refused.
 *
 * Knobs: BENCH_ENGINE_EVENTS (500), BENCH_ENGINE_BOOKMAKERS (8 in all, the references first,
 * at most 10), BENCH_ENGINE_REFERENCES (2: Pinnacle and betfair_ex_eu at weight 0.5; 1 =
 * Pinnacle alone), BENCH_ENGINE_MARKETS (h2h,spreads,totals: the feed's markets and the
 * engine's ODDS_FEED_MARKETS), BENCH_ENGINE_VALUE_PERMILLE (30: outcomes with an edge in a new
 * feed, per 1000),
 * BENCH_ENGINE_CHANGE_PERMILLE (50: prices moved before each steady poll, per 1000),
 * BENCH_ENGINE_FEED_TIMES (moved: a market's last_update moves when one of its prices moved;
 * all: every market's at every change of the feed, as runs before 29 November 2026 served it),
 * BENCH_ENGINE_PROFILE=1 (a CPU profile of the server over the steady polls, written to
 * BENCH_ENGINE_PROFILE_DIR or the temp directory and summarised in the log),
 * BENCH_ENGINE_FIRST_POLLS (3), BENCH_ENGINE_STEADY_POLLS (10), BENCH_ENGINE_EDGES (60),
 * BENCH_ENGINE_DELIVERY_TIMEOUT_S (15), BENCH_ENGINE_QUIET_WAIT_S (60: before each mode, wait up
 * to this long for processes outside the bench to use < 0.3 cores; recorded either way).
 *
 * Output: bench/engine-results.json (modes not run this time are kept from the previous file,
 * marked fromPreviousRun) and the block between the engine markers of docs/PERFORMANCE.md.
 * BENCH_ENGINE_REPORT_ONLY=1 re-renders the block from the results file.
 */
import http from 'node:http';
import { readFileSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { BENCH_DIR, HOST, ROOT, reportOnly, selectModes, cpuStallWindow, exitCleanup, intEnv, keepPreviousModes, loadAverage, log, machine, modeClock, modeEnv, othersCpuMeter, othersCpuNow, servicesUrls, sleep, startChild, stopChild, wallNow, withTimeout, writeDocBlock } from './common.mjs';
import { r1, r2, summarise } from './lib/stats.mjs';

const RESULTS_FILE = path.join(BENCH_DIR, 'engine-results.json');
const DOC_FILE = path.join(ROOT, 'docs', 'PERFORMANCE.md');
const BEGIN = '<!-- engine:begin (generated by npm run bench:engine; edits inside are overwritten) -->';
const END = '<!-- engine:end -->';
const MODE_BUDGET_MS = 900_000;

export const TARGETS = { pollMs: 1000, edgeP99Ms: 1000, steadyOverPure: 2 };

/** The references, in order, as REFERENCE_BOOKMAKERS names them (engine-feed.mjs quotes the same books first). */
const REFERENCES = ['pinnacle', 'betfair_ex_eu:0.5'];
/** Outcomes of each market the feed can serve. */
const MARKET_SIZES = { h2h: 3, spreads: 2, totals: 2 };

function feedTimesEnv() {
  const raw = process.env.BENCH_ENGINE_FEED_TIMES?.trim() || 'moved';
  if (raw !== 'moved' && raw !== 'all') throw new Error(`BENCH_ENGINE_FEED_TIMES must be moved or all, got "${raw}"`);
  return raw;
}

function marketsEnv() {
  const raw = process.env.BENCH_ENGINE_MARKETS?.trim() || 'h2h,spreads,totals';
  const keys = [...new Set(raw.split(',').map((k) => k.trim()).filter(Boolean))];
  if (keys.length === 0 || keys.some((k) => !(k in MARKET_SIZES))) throw new Error(`BENCH_ENGINE_MARKETS must list markets among h2h, spreads, totals, got "${raw}"`);
  return Object.keys(MARKET_SIZES).filter((k) => keys.includes(k));
}

const settings = {
  events: intEnv('BENCH_ENGINE_EVENTS', 500, 1, 5_000),
  bookmakers: intEnv('BENCH_ENGINE_BOOKMAKERS', 8, 2, 10),
  references: intEnv('BENCH_ENGINE_REFERENCES', 2, 1, 2),
  markets: marketsEnv(),
  valueShare: intEnv('BENCH_ENGINE_VALUE_PERMILLE', 30, 0, 300) / 1000,
  changeShare: intEnv('BENCH_ENGINE_CHANGE_PERMILLE', 50, 0, 1000) / 1000,
  feedTimes: feedTimesEnv(),
  firstPolls: intEnv('BENCH_ENGINE_FIRST_POLLS', 3, 1, 20),
  steadyPolls: intEnv('BENCH_ENGINE_STEADY_POLLS', 10, 0, 200),
  edges: intEnv('BENCH_ENGINE_EDGES', 60, 0, 1_000),
  deliveryTimeoutS: intEnv('BENCH_ENGINE_DELIVERY_TIMEOUT_S', 15, 1, 120),
  // Before each mode, wait up to this long for processes outside the bench to use < quietCores.
  quietWaitS: intEnv('BENCH_ENGINE_QUIET_WAIT_S', 60, 0, 600),
  quietCores: 0.3,
  profile: process.env.BENCH_ENGINE_PROFILE === '1',
};
if (settings.bookmakers <= settings.references) throw new Error('BENCH_ENGINE_BOOKMAKERS must leave at least one soft book besides the BENCH_ENGINE_REFERENCES references');
settings.referenceBookmakers = REFERENCES.slice(0, settings.references).join(',');
/** Prices per bookmaker and event: 3 (h2h) + 2 (spreads) + 2 (totals) with all three markets. */
settings.outcomes = settings.markets.reduce((n, k) => n + MARKET_SIZES[k], 0);
settings.prices = settings.events * settings.bookmakers * settings.outcomes;

/**
 * The storage extrapolation: ODDS_POLL_SECONDS=60 (1,440 polls a day), the feed size above
 * (28,000 prices a poll by default: 500 events x 8 bookmakers x 7 prices), ODDS_HISTORY_DAYS=14. Each listed match is listed for about 3 days before kickoff, so a
 * third of the listed events are new each day; retention keeps events 14 days past kickoff.
 */
const DAY = { pollsPerDay: 1440, retentionDays: 14, listedDays: 3, shares: [0.01, 0.02, 0.05, 0.1, 0.25], centralShare: 0.05 };

const { children, tempDirs, cleanup } = exitCleanup('bench:engine');
const DATABASE = { dbVar: 'BENCH_ENGINE_DATABASE_URL', baseVars: ['BENCH_DATABASE_URL', 'DATABASE_URL'], dbName: 'picks_enginebench' };
const ourPids = () => new Set([process.pid, process.ppid, ...[...children].map((c) => c.pid)]);
const DB_PROCESS_NAMES = new Set(['postgres', 'redis-server']);

// ---------------------------------------------------------------- the SSE client

/** One stream of GET /api/v1/picks/stream; `arrivals` maps a pick id to the wall clock its frame was read. */
function openStream({ port, streamPath, apiKey }) {
  const arrivals = new Map();
  let frames = 0;
  let buffer = '';
  return new Promise((resolve, reject) => {
    const req = http.get({ host: HOST, port, path: streamPath, headers: { authorization: `Bearer ${apiKey}`, accept: 'text/event-stream' } }, (res) => {
      if (res.statusCode !== 200) {
        res.resume();
        reject(new Error(`stream answered ${res.statusCode}`));
        return;
      }
      res.setEncoding('utf8');
      res.on('data', (text) => {
        const now = wallNow();
        buffer += text;
        let end;
        while ((end = buffer.indexOf('\n\n')) !== -1) {
          const frame = buffer.slice(0, end);
          buffer = buffer.slice(end + 2);
          const data = frame.split('\n').find((line) => line.startsWith('data: '));
          if (!data) continue;
          frames += 1;
          const id = JSON.parse(data.slice(6)).id;
          if (!arrivals.has(id)) arrivals.set(id, now);
        }
      });
      resolve({ arrivals, frames: () => frames, close: () => req.destroy() });
    });
    req.on('error', reject);
  });
}

// ---------------------------------------------------------------- one mode

async function runMode(mode, env) {
  const { started, phase, done } = modeClock({ label: 'bench:engine', mode, budgetMs: MODE_BUDGET_MS, cleanup });
  // Other processes (tests, builds) share the 2 cores: wait a while for them to calm down; what they used is recorded either way.
  const quietT0 = Date.now();
  let quiet = await othersCpuNow(ourPids, 1_000, DB_PROCESS_NAMES);
  while (quiet.meanCores !== null && quiet.meanCores > settings.quietCores && Date.now() - quietT0 < settings.quietWaitS * 1000) quiet = await othersCpuNow(ourPids, 1_000, DB_PROCESS_NAMES);
  const result = { mode, startedAt: new Date().toISOString(), loadAverageAtStart: loadAverage(), quietWait: { waitedS: r1((Date.now() - quietT0) / 1000), othersCores: quiet.meanCores, busiest: quiet.busiest }, polls: [] };
  if (result.quietWait.waitedS > 1.5) phase(`waited ${result.quietWait.waitedS} s for other processes to calm down (now ${quiet.meanCores} cores: ${quiet.busiest.join(', ')})`);
  const feed = await startChild({ file: 'engine-feed.mjs', name: 'engine feed', startTimeoutMs: 20_000, children });
  const receiver = await startChild({ file: 'webhooks-receiver.mjs', name: 'webhook receiver', startTimeoutMs: 20_000, children });
  const server = await startChild({
    file: 'engine-server.mjs',
    env: {
      ...env,
      ENGINE_MODE: mode,
      ENGINE_FEED_URL: feed.info.url,
      ENGINE_RECEIVER_PORT: String(receiver.info.port),
      ENGINE_REFERENCE_BOOKMAKERS: settings.referenceBookmakers,
      ENGINE_FEED_MARKETS: settings.markets.join(','),
      NODE_EXTRA_CA_CERTS: path.join(ROOT, 'test', 'fixtures', 'tls', 'ca.pem'),
    },
    name: 'engine server',
    startTimeoutMs: 120_000,
    callTimeoutMs: 120_000,
    children,
  });
  const stream = await openStream(server.info);
  phase(`feed on ${feed.info.url}, receiver on 127.0.0.1:${receiver.info.port}, server on 127.0.0.1:${server.info.port}; SSE client connected`);
  const others = othersCpuMeter(ourPids, 1_000, DB_PROCESS_NAMES);
  others.start();
  const stall = cpuStallWindow();

  /** Waits until every pick of `pickIds` reached the SSE client and the receiver; their arrival times (null: never). */
  const deliveries = async (pickIds) => {
    const deadline = Date.now() + settings.deliveryTimeoutS * 1000;
    let hooks = new Map();
    for (;;) {
      const arrivals = await receiver.call('arrivals');
      hooks = new Map();
      for (let i = 0; i < arrivals.pickIds.length; i += 1) if (!hooks.has(arrivals.pickIds[i])) hooks.set(arrivals.pickIds[i], arrivals.arrivedAt[i]);
      const all = pickIds.every((id) => stream.arrivals.has(id) && hooks.has(id));
      if (all || Date.now() > deadline) break;
      await sleep(20);
    }
    return pickIds.map((id) => ({ id, sse: stream.arrivals.get(id) ?? null, webhook: hooks.get(id) ?? null }));
  };

  /** One poll and the deliveries of the picks it created, relative to the feed's response. */
  const poll = async (kind, extra = {}) => {
    const p = await server.call('poll');
    const served = await feed.call('requests');
    const sentAt = served.at(-1)?.sentAt ?? null;
    const arrived = await deliveries(p.pickIds);
    // Only now: its CPU work would otherwise delay the deliveries measured above.
    const after = await server.call('afterPoll');
    const record = {
      kind,
      ...extra,
      totalMs: r1(p.totalMs),
      fromRequestMs: r1(p.fromRequestMs),
      parts: Object.fromEntries(Object.entries(p.parts).map(([k, v]) => [k, r1(v)])),
      pure: { ...after.pure, parseMs: r1(after.pure.parseMs), devigMs: r1(after.pure.devigMs), detectMs: r1(after.pure.detectMs) },
      statements: p.statements.map((x) => ({ name: x.name, ms: r1(x.ms) })),
      gcPauses: p.gcPauses,
      requests: served.length,
      responseBytes: served.at(-1)?.bytes ?? null,
      historyRows: after.historyRows,
      picksCreated: p.pickIds.length,
      pickIds: p.pickIds,
      // Edge latency: frame / webhook arrival - the feed's response sent.
      sseMs: arrived.map((a) => (a.sse === null || sentAt === null ? null : r1(a.sse - sentAt))),
      webhookMs: arrived.map((a) => (a.webhook === null || sentAt === null ? null : r1(a.webhook - sentAt))),
      // The same from the end of the poll (all writes committed): what the relay and dispatcher add.
      sseAfterPollMs: arrived.map((a) => (a.sse === null ? null : r1(a.sse - p.endedAt))),
    };
    result.polls.push(record);
    return record;
  };

  const describe = (r) =>
    `${r.fromRequestMs} ms from request (fetch ${r.parts.fetchMs}, validate ${r.parts.validateMs}, store ${r.parts.storeMs} [${r.statements.map((x) => `${x.name} ${x.ms}`).join(', ')}], compute ${r.parts.computeMs}, lookup ${r.parts.lookupMs}, picks ${r.parts.picksMs} for ${r.picksCreated}); ${r.historyRows} history rows`;

  try {
    // 1. Poll processing: first polls (all new), then steady ones.
    for (let i = 0; i < settings.firstPolls; i += 1) {
      const generated = await feed.call('generate', {
        seed: 1000 + i,
        events: settings.events,
        bookmakers: settings.bookmakers,
        references: settings.references,
        markets: settings.markets,
        valueShare: settings.valueShare,
        touchAll: settings.feedTimes === 'all',
      });
      const r = await poll('first', { valueOutcomes: generated.valueOutcomes });
      phase(`first poll ${i + 1} (${generated.prices} prices, ${generated.valueOutcomes} edges, ${r1(r.responseBytes / 1024)} KiB): ${describe(r)}`);
    }
    if (settings.profile) await server.call('profileStart', {});
    for (let i = 0; i < settings.steadyPolls; i += 1) {
      const moved = await feed.call('step', { share: settings.changeShare });
      const r = await poll('steady', { pricesMoved: moved.moved });
      phase(`steady poll ${i + 1} (${moved.moved} prices moved): ${describe(r)}`);
    }
    if (settings.profile) {
      // Outside the repository: profiles are large and per machine.
      const file = path.join(process.env.BENCH_ENGINE_PROFILE_DIR || os.tmpdir(), `engine-profile-${mode}-${Date.now()}.cpuprofile`);
      await server.call('profileStop', { file });
      const { summariseProfile } = await import('./profile.mjs');
      phase(`steady polls' CPU profile: ${file}\n${JSON.stringify(summariseProfile(JSON.parse(readFileSync(file, 'utf8')), 25), null, 1)}`);
    }
    // 2. Edge latency: one new edge per poll, prices moving as before.
    for (let i = 0; i < settings.edges; i += 1) {
      const moved = await feed.call('step', { share: settings.changeShare });
      const edge = await feed.call('inject');
      const r = await poll('edge', { pricesMoved: moved.moved, edge });
      const found = await server.call('pickFor', { eventId: edge.eventId, market: edge.market, selection: edge.selection });
      r.edgePickId = found?.id ?? null;
      r.edgePickStatus = found?.status ?? null;
      if (found && found.status !== 'published') phase(`edge ${i + 1}: the pick for ${edge.market} ${edge.selection} of ${edge.eventId} was held (${found.status}): no frame or webhook is expected`);
      if (!found) phase(`edge ${i + 1}: no pick for ${edge.market} ${edge.selection}${edge.line === null ? '' : ` ${edge.line}`} of ${edge.eventId} (${edge.bookmaker} ${edge.price} over fair ${r2(edge.fair)})`);
      if ((i + 1) % 10 === 0) phase(`edge ${i + 1}/${settings.edges}: poll ${r.fromRequestMs} ms, SSE ${r.sseMs.join('/')} ms, webhook ${r.webhookMs.join('/')} ms after the response`);
    }
    // 3. Storage, as the polls left it and compacted.
    result.storage = await server.call('storage');
    result.storageCompacted = await server.call('storage', { compact: true });
    result.serverProblems = await server.call('problems');
  } finally {
    result.othersCpu = others.stop();
    result.cpuStall = stall();
    stream.close();
    await stopChild(server, 'engine server');
    for (const child of [receiver, feed]) {
      await child.call('stop', {}, 5_000).catch(() => undefined);
      await withTimeout(child.exited, 5_000, 'child shutdown').catch(() => child.child.kill('SIGKILL'));
    }
    done();
  }
  summariseMode(result);
  result.totalS = r1((Date.now() - started) / 1000);
  return result;
}

// ---------------------------------------------------------------- analysis

/** p50 wall time of each statement of the write transaction, by name (a statement that ran twice in a poll is summed). */
function statementsOf(polls) {
  const byName = new Map();
  for (const p of polls) {
    const perPoll = new Map();
    for (const x of p.statements ?? []) perPoll.set(x.name, (perPoll.get(x.name) ?? 0) + x.ms);
    for (const [name, ms] of perPoll) byName.set(name, [...(byName.get(name) ?? []), ms]);
  }
  return Object.fromEntries([...byName].map(([name, values]) => [name, summarise(values).p50]));
}

function summariseMode(result) {
  const of = (kind) => result.polls.filter((p) => p.kind === kind);
  const first = of('first');
  const steady = [...of('steady'), ...of('edge')];
  const edges = of('edge');
  // A part some polls lack (the GC pauses where none were heard of) is summarised over those that have it.
  const partsOf = (polls) =>
    Object.fromEntries([...new Set(polls.flatMap((p) => Object.keys(p.parts)))].map((k) => [k, summarise(polls.map((p) => p.parts[k]).filter((v) => typeof v === 'number')).p50]));
  // The injected edge's pick only (other picks of an edge poll would be unexpected).
  // A pick held for review is not published: no frame or webhook is due (results before the
  // status was recorded count every edge pick as published).
  const held = (p) => p.edgePickId && p.edgePickStatus != null && p.edgePickStatus !== 'published';
  const edgeLatency = (field) => edges.filter((p) => !held(p)).map((p) => (p.edgePickId && p.pickIds.includes(p.edgePickId) ? p[field][p.pickIds.indexOf(p.edgePickId)] : null));
  const sse = edgeLatency('sseMs');
  const hook = edgeLatency('webhookMs');
  const missing = sse.filter((v) => v === null).length + hook.filter((v) => v === null).length;
  result.summary = {
    firstPollMs: first.map((p) => p.fromRequestMs),
    firstPoll: summarise(first.map((p) => p.fromRequestMs)),
    firstPollParts: partsOf(first),
    firstPollPicks: first.map((p) => p.picksCreated),
    steadyPoll: summarise(steady.map((p) => p.fromRequestMs)),
    steadyPollParts: partsOf(steady),
    steadyStatements: statementsOf(steady),
    firstStatements: statementsOf(first),
    steadyPricesMoved: summarise(steady.map((p) => p.pricesMoved)).p50,
    steadyHistoryRows: summarise(steady.map((p) => p.historyRows)).p50,
    responseKiB: r1((first[0]?.responseBytes ?? 0) / 1024),
    pure: { parseMs: summarise(result.polls.map((p) => p.pure.parseMs)).p50, devigMs: summarise(result.polls.map((p) => p.pure.devigMs)).p50, detectMs: summarise(result.polls.map((p) => p.pure.detectMs)).p50 },
    // The pure steps timed after each steady poll, as one sum a poll: their own spread on the
    // same body is the machine's, which the poll's p99 carries too.
    steadyPure: summarise(steady.map((p) => p.pure.parseMs + p.pure.devigMs + p.pure.detectMs)),
    edges: edges.length,
    edgesWithoutPick: edges.filter((p) => !p.edgePickId).length,
    edgesHeld: edges.filter(held).length,
    extraPicksInEdgePolls: edges.reduce((n, p) => n + Math.max(0, p.picksCreated - 1), 0),
    sseMs: summarise(sse.filter((v) => v !== null)),
    webhookMs: summarise(hook.filter((v) => v !== null)),
    sseAfterPollMs: summarise(edges.map((p) => p.sseAfterPollMs[p.pickIds.indexOf(p.edgePickId)]).filter((v) => v != null)),
    firstPollSseMs: summarise(first.flatMap((p) => p.sseMs).filter((v) => v !== null)),
    firstPollWebhookMs: summarise(first.flatMap((p) => p.webhookMs).filter((v) => v !== null)),
    missingDeliveries: missing,
  };
  const s = result.summary;
  s.pollTargetMet = s.firstPoll.max !== null && s.firstPoll.max < TARGETS.pollMs && s.steadyPoll.max !== null && s.steadyPoll.max < TARGETS.pollMs;
  s.pollTargetMetAtP50 = s.firstPoll.p50 < TARGETS.pollMs && s.steadyPoll.p50 < TARGETS.pollMs;
  s.steadyOverPure = { p50: r2(s.steadyPoll.p50 / s.steadyPure.p50), p99OverPureP50: r2(s.steadyPoll.p99 / s.steadyPure.p50), p99OverPureP99: r2(s.steadyPoll.p99 / s.steadyPure.p99) };
  s.edgeTargetMet = missing === 0 && s.edgesWithoutPick === 0 && s.sseMs.p99 < TARGETS.edgeP99Ms && s.webhookMs.p99 < TARGETS.edgeP99Ms;
  result.storageModel = storageModel(result.storage, result.storageCompacted, s);
}

/**
 * Bytes per row measured here, and rows and bytes a day and at the 14-day retention for
 * several shares of prices changing a minute. odds_history only grows (and loses whole days
 * to retention), so its size as the polls left it is the one that counts; odds_latest,
 * odds_events and reference_markets are updated in place, so their live size is the compacted
 * one (VACUUM FULL).
 */
function storageModel(storage, compacted, s) {
  if (!storage || !compacted) return null;
  const per = (from, t) => ({
    totalBytesPerRow: r1(from[t].totalBytes / Math.max(1, from[t].rows)),
    heapBytesPerRow: r1(from[t].heapBytes / Math.max(1, from[t].rows)),
    indexBytesPerRow: r1(from[t].indexBytes / Math.max(1, from[t].rows)),
    avgTupleBytes: r1(from[t].avgTupleBytes),
  });
  const tables = STORAGE_TABLES.filter((t) => storage[t] && compacted[t]);
  const asLeft = Object.fromEntries(tables.map((t) => [t, per(storage, t)]));
  const live = Object.fromEntries(tables.map((t) => [t, per(compacted, t)]));
  const history = asLeft.odds_history;
  const prices = settings.prices;
  const perEvent = settings.bookmakers * settings.outcomes;
  const newEventsPerDay = settings.events / DAY.listedDays;
  const retainedEvents = settings.events + newEventsPerDay * DAY.retentionDays;
  const rows = DAY.shares.map((share) => {
    // A changed price is one history row; a new event's first prices are rows too.
    const historyRowsPerDay = share * prices * DAY.pollsPerDay + newEventsPerDay * perEvent;
    return {
      sharePerMinute: share,
      historyRowsPerDay: Math.round(historyRowsPerDay),
      historyMiBPerDay: r1((historyRowsPerDay * history.totalBytesPerRow) / 2 ** 20),
      historyRowsRetained: Math.round(historyRowsPerDay * DAY.retentionDays),
      historyGiBRetained: r2((historyRowsPerDay * DAY.retentionDays * history.totalBytesPerRow) / 2 ** 30),
    };
  });
  return {
    assumptions: { ...DAY, pricesPerPoll: prices, newEventsPerDay: Math.round(newEventsPerDay), retainedEvents: Math.round(retainedEvents) },
    measuredHistoryRowsPerSteadyPoll: s.steadyHistoryRows,
    measuredPricesMovedPerSteadyPoll: s.steadyPricesMoved,
    bytesPerRow: { asLeft, live },
    history: rows,
    latest: { rowsRetained: Math.round(retainedEvents * perEvent), miBRetained: r1((retainedEvents * perEvent * live.odds_latest.totalBytesPerRow) / 2 ** 20) },
    events: { rowsPerDay: Math.round(newEventsPerDay), rowsRetained: Math.round(retainedEvents), miBRetained: r2((retainedEvents * live.odds_events.totalBytesPerRow) / 2 ** 20) },
    // One row per (event, generation, market, reference), kept as long as its event.
    referenceMarkets: live.reference_markets
      ? {
          rowsRetained: Math.round(retainedEvents * settings.references * settings.markets.length),
          miBRetained: r2((retainedEvents * settings.references * settings.markets.length * live.reference_markets.totalBytesPerRow) / 2 ** 20),
        }
      : null,
  };
}

// ---------------------------------------------------------------- report

/** The tables storage() measures (reference_markets since the run with several references). */
const STORAGE_TABLES = ['odds_history', 'odds_latest', 'odds_events', 'reference_markets'];

/** The feed's shape in words, for the block and the log: "500 events x 8 bookmakers x (3 + 2 + 2) outcomes (h2h, spreads, totals)". */
function feedShape(st) {
  const markets = st.markets ?? ['h2h'];
  const sizes = markets.map((k) => MARKET_SIZES[k]);
  return `${st.events} events x ${st.bookmakers} bookmakers x ${sizes.length > 1 ? `(${sizes.join(' + ')})` : sizes[0]} outcomes (${markets.join(', ')})`;
}

const modeLabel = (r) => (r.mode === 'embedded' ? 'embedded (PGlite, memory bus)' : 'services (PostgreSQL, Redis)');
const yes = (met) => (met ? 'met' : '**missed**');
const fmt = (n) => n.toLocaleString('en-US');
const under = (x) => (x.max < TARGETS.pollMs ? 'met' : x.p50 < TARGETS.pollMs ? '**missed** at max, met at p50' : '**missed**');
const pollVerdict = (s) => `first: ${under(s.firstPoll)}; steady: ${under(s.steadyPoll)}`;

function markdown(results) {
  const st = results.settings;
  const lines = [BEGIN, ''];
  lines.push(
    `Last run: ${results.finishedAt} on ${results.machine.cpus}, Node ${results.machine.node}. Feed: ${feedShape(st)} = ${fmt(st.prices)} prices a poll (one soccer_epl request); references ${st.referenceBookmakers ?? 'pinnacle'} (REFERENCE_BOOKMAKERS: each devigged on its own, a weighted consensus, never an offer), ${st.bookmakers - (st.references ?? 1)} soft books; ${r1(st.valueShare * 100)} % of outcomes with an edge over the consensus in a new feed; ${r1(st.changeShare * 100)} % of prices moved before each steady poll, ${(st.feedTimes ?? 'all') === 'all' ? "every market's last_update moved with every change" : "a market's last_update moved only when one of its prices did"}; ${st.firstPolls} first polls, ${st.steadyPolls} steady polls, ${st.edges} polls with one new edge each. Poll time = feed request start -> pollNow() resolved (every write committed). Edge latency = arrival of the new pick's SSE frame / webhook request - the feed finished sending the poll's response.`,
  );
  lines.push('');
  lines.push('| Mode | First poll ms (each) | Steady poll p50 / p99 / max ms | Steady parts p50 ms: fetch / validate / lookup / store / compute / picks | Poll < 1 s | Edge -> SSE p50 / p99 / max ms | Edge -> webhook p50 / p99 / max ms | Missing | Edge p99 < 1 s | Other processes (cores) |');
  lines.push('|---|---:|---:|---|---|---:|---:|---:|---|---:|');
  for (const r of Object.values(results.modes)) {
    const s = r.summary;
    const p = s.steadyPollParts;
    lines.push(
      `| ${modeLabel(r)}${r.fromPreviousRun ? ` (run of ${r.fromPreviousRun})` : ''} | ${s.firstPollMs.join(' / ')} | ${s.steadyPoll.p50} / ${s.steadyPoll.p99} / ${s.steadyPoll.max} | ${p.fetchMs} / ${p.validateMs} / ${p.lookupMs} / ${p.storeMs} / ${p.computeMs} / ${p.picksMs} | ${pollVerdict(s)} | ${s.sseMs.p50} / ${s.sseMs.p99} / ${s.sseMs.max} | ${s.webhookMs.p50} / ${s.webhookMs.p99} / ${s.webhookMs.max} | ${s.missingDeliveries + s.edgesWithoutPick} | ${yes(s.edgeTargetMet)} | ${r.othersCpu?.meanCores ?? ''}${r.mode === 'services' && r.othersCpu?.separateMeanCores != null ? ` (+ ${r.othersCpu.separateMeanCores} PostgreSQL/Redis)` : ''} |`,
    );
  }
  lines.push('');
  for (const r of Object.values(results.modes)) {
    const s = r.summary;
    const fp = s.firstPollParts;
    lines.push(
      `- ${r.mode}: first poll parts p50 ms: fetch ${fp.fetchMs}, validate ${fp.validateMs}, lookup ${fp.lookupMs}, store ${fp.storeMs}, compute ${fp.computeMs}, picks ${fp.picksMs} (${s.firstPollPicks.join(' / ')} picks); the pure steps on the same ${s.responseKiB} KiB body: parse ${s.pure.parseMs}, devig ${s.pure.devigMs}, detect ${s.pure.detectMs} ms. The first polls' own picks (${s.firstPollPicks.join(' / ')} at once) reached SSE at p99 ${s.firstPollSseMs.p99} ms and the receiver at p99 ${s.firstPollWebhookMs.p99} ms after the response; an edge's SSE frame came p50 ${s.sseAfterPollMs.p50} ms after pollNow() resolved${s.edgesHeld ? `; ${s.edgesHeld} of the ${s.edges} edges' picks were held for review (not published: no frame or webhook due, not counted as missing)` : ''}. The write transaction's statements, p50 ms, first / steady polls: ${Object.keys(s.steadyStatements ?? {}).map((n) => `${n} ${s.firstStatements?.[n] ?? '-'} / ${s.steadyStatements[n]}`).join(', ')}. ${s.steadyOverPure ? `The pure steps timed after each steady poll, p50 / p99: ${s.steadyPure.p50} / ${s.steadyPure.p99} ms; steady poll p50 / pure p50 ${s.steadyOverPure.p50}x, p99 / pure p50 ${s.steadyOverPure.p99OverPureP50}x, p99 / pure p99 ${s.steadyOverPure.p99OverPureP99}x (target ${TARGETS.steadyOverPure}x). ` : ''}Garbage-collection pauses within a steady poll, p50: ${s.steadyPollParts.gcMs == null ? 'not measured (the server heard of no pause)' : `${s.steadyPollParts.gcMs} ms (mark-compact ${s.steadyPollParts.gcMajorMs} ms)`}. References disagreeing on a selection (no pick, logged): ${Object.entries(r.serverProblems?.info ?? {}).filter(([m]) => /disagree/.test(m)).reduce((n, [, c]) => n + c, 0)}. CPU stall (PSI) ${r.cpuStall ?? 'n/a'}; load average at start ${r.loadAverageAtStart.join(' / ')}${r.serverProblems?.count ? `; server warnings: ${Object.entries(r.serverProblems.byMessage).map(([m, n]) => `${n} x ${m}`).join('; ')}` : ''}.`,
    );
  }
  const storageModes = Object.values(results.modes).filter((r) => r.storageModel?.bytesPerRow?.asLeft);
  if (storageModes.length) {
    lines.push('');
    lines.push('Bytes per row after the run (heap + indexes = pg_total_relation_size / rows), as the polls left the tables and after VACUUM FULL (live rows only); tuple = avg pg_column_size; updates = row updates the statistics counted (HOT: on the same page, no index entry):');
    lines.push('');
    lines.push('| Mode | Table | Rows | B/row as left | B/row live | Heap / index B/row live | Tuple B | Updates (HOT) |');
    lines.push('|---|---|---:|---:|---:|---:|---:|---:|');
    for (const r of storageModes) {
      for (const t of STORAGE_TABLES.filter((t) => r.storageModel.bytesPerRow.asLeft[t])) {
        const left = r.storageModel.bytesPerRow.asLeft[t];
        const live = r.storageModel.bytesPerRow.live[t];
        const raw = r.storage[t];
        lines.push(`| ${r.mode} | ${t} | ${fmt(raw.rows)} | ${left.totalBytesPerRow} | ${live.totalBytesPerRow} | ${live.heapBytesPerRow} / ${live.indexBytesPerRow} | ${live.avgTupleBytes} | ${raw.updates === undefined ? 'n/a' : `${fmt(raw.updates)} (${fmt(raw.hotUpdates)})`} |`);
      }
    }
    const m = (results.modes.services ?? storageModes[0]).storageModel;
    const a = m.assumptions;
    lines.push('');
    lines.push(
      `A day at this feed size (${fmt(a.pricesPerPoll)} prices, ODDS_POLL_SECONDS=60: ${fmt(a.pollsPerDay)} polls; ${fmt(a.newEventsPerDay)} new events a day, each listed ${a.listedDays} days before kickoff; ODDS_HISTORY_DAYS=${a.retentionDays}), with ${(results.modes.services ? 'services' : storageModes[0].mode)}-mode bytes per row (${m.bytesPerRow.asLeft.odds_history.totalBytesPerRow} B per odds_history row as the polls left the table). The bench measured ${m.measuredHistoryRowsPerSteadyPoll} history rows for ${m.measuredPricesMovedPerSteadyPoll} prices moved per steady poll: one row per changed price.`,
    );
    lines.push('');
    lines.push('| Prices changing per minute | odds_history rows / day | MiB / day | Rows kept (14 days) | GiB kept (14 days) |');
    lines.push('|---:|---:|---:|---:|---:|');
    for (const h of m.history) lines.push(`| ${r1(h.sharePerMinute * 100)} %${h.sharePerMinute === a.centralShare ? ' (assumed)' : ''} | ${fmt(h.historyRowsPerDay)} | ${fmt(h.historyMiBPerDay)} | ${fmt(h.historyRowsRetained)} | ${h.historyGiBRetained} |`);
    lines.push('');
    lines.push(
      `odds_latest holds one row per (event, bookmaker, market, outcome) of the ${fmt(a.retainedEvents)} events kept (listed, plus 14 days of kicked-off ones): ${fmt(m.latest.rowsRetained)} rows, about ${m.latest.miBRetained} MiB whatever the share; odds_events gains ${fmt(m.events.rowsPerDay)} rows a day, ${fmt(m.events.rowsRetained)} kept, about ${m.events.miBRetained} MiB${m.referenceMarkets ? `; reference_markets (one row per event, market and reference: the closing lines) ${fmt(m.referenceMarkets.rowsRetained)} rows, about ${m.referenceMarkets.miBRetained} MiB` : ''}.`,
    );
  }
  lines.push('', END);
  return lines.join('\n');
}

function writeDoc(results) {
  return writeDocBlock(DOC_FILE, BEGIN, END, markdown(results));
}

// ---------------------------------------------------------------- main

async function main() {
  // BENCH_ENGINE_REPORT_ONLY=1 re-renders the docs block from the results file without measuring.
  if (reportOnly('BENCH_ENGINE_REPORT_ONLY', { resultsFile: RESULTS_FILE, docFile: DOC_FILE, markdown, writeDoc, what: 'the engine block' })) return;
  const urls = servicesUrls(DATABASE);
  const run = selectModes('BENCH_ENGINE_MODES', urls);
  log(
    `bench:engine: ${feedShape(settings)} = ${settings.prices} prices a poll, references ${settings.referenceBookmakers}; ${settings.firstPolls} first + ${settings.steadyPolls} steady polls (${settings.changeShare * 100} % of prices moving), ${settings.edges} edges; modes ${run.join(', ')}`,
  );
  const results = { startedAt: new Date().toISOString(), machine: machine(), settings, targets: TARGETS, modes: {} };
  for (const mode of run) {
    log(`\n== ${mode}`);
    const env = modeEnv(mode, { prefix: 'ENGINE', tmpPrefix: 'picks-engine-', urls, database: DATABASE, tempDirs });
    const r = await runMode(mode, env);
    results.modes[mode] = r;
    const s = r.summary;
    log(
      `  ${mode}: first poll ${s.firstPollMs.join(' / ')} ms, steady p50 ${s.steadyPoll.p50} / max ${s.steadyPoll.max} ms (${s.pollTargetMet ? 'met' : 'missed'}); edge -> SSE p99 ${s.sseMs.p99} ms, -> webhook p99 ${s.webhookMs.p99} ms (${s.edgeTargetMet ? 'met' : 'missed'})`,
    );
  }
  results.finishedAt = new Date().toISOString();
  keepPreviousModes(results, RESULTS_FILE);
  writeFileSync(RESULTS_FILE, `${JSON.stringify(results, null, 2)}\n`);
  const docWritten = writeDoc(results);
  log(`\n${markdown(results)}\n\nwrote ${path.relative(ROOT, RESULTS_FILE)}${docWritten ? ` and the engine block of ${path.relative(ROOT, DOC_FILE)}` : ''}`);
}

main().catch((error) => {
  process.stderr.write(`bench:engine failed: ${error?.stack ?? error}\n`);
  cleanup();
  process.exit(1);
});
