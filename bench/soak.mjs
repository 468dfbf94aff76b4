/**
 * `npm run soak`: a chaos soak of the built service (dist/), NOT part of CI. Everything runs on
 * this machine and talks over 127.0.0.1 only. This file is the entry point and the run's
 * sequence (set-up, traffic, end, drain, stop, checks); each job is a file of bench/soak/:
 * settings.mjs (knobs), state.mjs (what the jobs share), feed.mjs (the odds), receiver.mjs
 * (webhooks), instances.mjs, traffic.mjs, faults.mjs (the scheduler), invariants.mjs (a-h),
 * report.mjs; PostgreSQL, Redis and the instances are started by bench/lib/launcher.mjs, the
 * feed and the receiver run on bench/lib/v4-feed.mjs and bench/lib/webhook-receiver.mjs, every
 * draw comes from bench/lib/prng.mjs.
 *
 * What it starts (all its own, all removed at the end, on failure and on Ctrl-C too):
 *   - a private PostgreSQL cluster (initdb into a temp dir; binaries from
 *     /usr/lib/postgresql/<newest>/bin, run as the postgres OS user when we are root);
 *   - a private Redis with `--appendonly yes --appendfsync always --save ''` and its data dir in
 *     a temp dir: a SIGKILLed Redis restarts from its AOF with every acknowledged write;
 *   - a local The Odds API v4 feed (odds and scores of soccer_epl) whose market keeps changing:
 *     new matches with one mispriced outcome appear every 6-14 s (some priced too good to be
 *     true, held for review), second edges and better prices on known outcomes, matches that
 *     kick off within minutes and are reported finished a minute later (the engine settles);
 *   - a local HTTPS webhook receiver (test/fixtures/tls certificate; hooks.test is mapped to
 *     127.0.0.1 by WEBHOOK_HOST_OVERRIDES) verifying every delivery: Standard Webhooks with the
 *     `standardwebhooks` package and X-Service-Signature with node:crypto; it answers a share of
 *     attempts 503 so retries happen too;
 *   - the migrations, then three instances `node dist/src/main.js` on consecutive free ports.
 *
 * Traffic for SOAK_MINUTES: REST loops (picks, track record, match analyses, usage, webhooks list,
 * bad cursors, bad parameters, unknown paths, the public endpoint) over many API keys of three
 * tiers with small TIER_LIMITS (so keys reach their hourly limits and, after outages, their monthly
 * caps), GraphQL loops with keys, an admin client publishing and settling picks through the admin
 * GraphQL mutations (every pick id it got back is kept), SSE streams (`GET /api/v1/picks/stream`)
 * that disconnect now and then and resume with `Last-Event-ID`, and webhook subscriptions.
 *
 * A seeded scheduler (SOAK_SEED, printed first) injects one fault at a time, every
 * SOAK_FAULT_EVERY_SECONDS: SIGKILL of Redis (restarted after SOAK_FAULT_DOWN_SECONDS), a fast
 * stop of PostgreSQL (started again likewise), SIGKILL of one instance (restarted on its port).
 * Every fault's start, restart and recovery goes into the timeline; every client call records
 * its key, its status (or `lost`: no answer, with the reason), when it was sent and answered.
 *
 * At the end the faults stop, everything recovers, the traffic stops, webhooks and streams drain,
 * the instances get SIGTERM (a clean stop flushes the month counters), and the invariants are
 * checked and printed (PASS/FAIL each, exit code 1 if any fails); the summary goes to
 * bench/soak-results.json:
 *   a. monthly_usage per key and month within [answered-counted, answered-counted + lost], where
 *      answered-counted = answers 2xx/4xx except the limiter's 429s (rate_limit_exceeded,
 *      monthly_quota_exceeded; any other 429 passed the limiter and counts) and except
 *      GET /api/v1/usage, which is not counted by design (docs/RATE_LIMITING.md); 503s count
 *      nothing; a 401 fails the key;
 *   b. admitted requests certainly inside a rolling 3600 s (sent at or after the window's
 *      start, answered by its end; one window per admitted request) <= the hourly limit, or
 *      (1 + P) x the limit when the window overlaps a Redis outage (P: instance processes alive
 *      during it, summed over the outages it overlaps, since each fallback starts empty); also,
 *      stricter, the requests touching no outage (decided by Redis) <= the limit in any window,
 *      and the requests inside one outage <= (1 + P) x the limit;
 *   c. every pick id the admin received exists;
 *   d. every webhook event fanned out to the receiver's subscriptions reached it with valid
 *      signatures, none pending at the end;
 *   e. no duplicate engine pick (event, generation, market, selection);
 *   f. SSE streams got every sequence after their Last-Event-ID without a gap;
 *   g. no 500 and no request that hung past its timeout while its instance was up;
 *   h. no process died that the scheduler did not kill, and every instance exited 0 on SIGTERM.
 *
 * Knobs: SOAK_MINUTES (20; fractions like 0.5 work), SOAK_SEED, SOAK_FAULT_EVERY_SECONDS ("20-60";
 * one number for a fixed interval; "off" for none), SOAK_FAULT_DOWN_SECONDS ("2-6"), SOAK_FAULTS
 * ("redis,postgres,instance"), SOAK_CLIENTS (10 REST loops), SOAK_GRAPHQL_CLIENTS (2),
 * SOAK_STREAMS (4), SOAK_KEYS (20), SOAK_CLIENT_SLEEP_MS ("100-400"), SOAK_PUBLISH_EVERY_MS
 * ("1000-3000"), SOAK_REQUEST_TIMEOUT_MS (10000), SOAK_DRAIN_SECONDS (120),
 * SOAK_RECEIVER_FAIL_SHARE (0.02), SOAK_TIER_LIMITS (JSON, merged over the soak's small limits).
 */
import { randomBytes } from 'node:crypto';
import { existsSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { HOST, log, sleep } from './common.mjs';
import { MAIN_JS, MIGRATE_JS, Postgres, Redis, freePorts, killEverything, killEverythingSync, launcher, migrate, openSql } from './lib/launcher.mjs';
import { rng } from './lib/prng.mjs';
import { checkAdminPicks, checkEnginePicks, checkErrorsAndHangs, checkHourly, checkMonthlyUsage, checkProcesses, checkStreams, checkWebhooks } from './soak/invariants.mjs';
import { scheduler } from './soak/faults.mjs';
import { startFeed } from './soak/feed.mjs';
import { startLife, waitInstancesReady } from './soak/instances.mjs';
import { startReceiver } from './soak/receiver.mjs';
import { report } from './soak/report.mjs';
import { DATABASE, INSTANCES, SPORT_KEY, fmtS, settings } from './soak/settings.mjs';
import { adminPicks, calls, instances, keys, rel, run, streamClients, timeline } from './soak/state.mjs';
import { CREATE_KEY, adminLoop, call, graphql, graphqlLoop, restLoop, stopStreams, streamLoop } from './soak/traffic.mjs';
import { BENCH_LEDGER_SIGNING_KEY } from './server-common.mjs';

/** Kills every process the soak started (PostgreSQL with SIGQUIT: its fast stop), waits up to 5 s, and exits. */
async function stopEverythingAndExit(code) {
  await killEverything();
  process.exit(code);
}

for (const signal of ['SIGINT', 'SIGTERM', 'SIGHUP']) {
  process.on(signal, () => {
    if (launcher.interrupted) {
      killEverythingSync();
      process.exit(130);
    }
    launcher.interrupted = true;
    log(`\nsoak: ${signal}, stopping everything`);
    void stopEverythingAndExit(130);
  });
}

async function main() {
  const { seed } = settings;
  log(`soak: seed ${seed} (SOAK_SEED=${seed} replays this fault schedule)`);
  // The instances run on this very Node (process.execPath): npm scripts give Node 22 (the `node` package).
  if (Number(process.versions.node.split('.')[0]) < 22) throw new Error(`Node ${process.versions.node}: run the soak with \`npm run soak\` (Node 22 from the \`node\` package), not a system node`);
  if (!existsSync(MAIN_JS) || !existsSync(MIGRATE_JS)) throw new Error('dist/ is missing: run `npm run soak` (it builds first) or `npm run build`');
  const faultText = settings.faultEverySeconds ? `one fault every ${settings.faultEverySeconds.join('-')} s (${settings.faultKinds.join(', ')}), down ${settings.faultDownSeconds.join('-')} s` : 'no faults';
  log(`soak: ${settings.minutes} min, ${INSTANCES} instances, ${settings.keys} API keys, ${settings.clients} REST + ${settings.graphqlClients} GraphQL client loops, ${settings.streams} SSE streams, 1 admin publisher; ${faultText}`);
  log(`soak: tier limits ${JSON.stringify(settings.tierLimits)}`);

  const schedRandom = rng(seed);
  const trafficSeed = (seed ^ 0x5bd1e995) >>> 0;
  const [pgPort, redisPort, ...instancePorts] = await freePorts(2 + INSTANCES);

  const setupStarted = Date.now();
  run.pg = new Postgres(pgPort, 'picks-soak-pg-');
  run.pg.init();
  await run.pg.start();
  run.pg.createDatabase(DATABASE);
  log(`  PostgreSQL ${path.basename(path.dirname(run.pg.bin))} on ${HOST}:${pgPort} (private cluster in ${run.pg.root})`);
  run.redis = new Redis(redisPort, 'picks-soak-redis-');
  await run.redis.start();
  log(`  Redis on ${HOST}:${redisPort} with appendonly yes, appendfsync always, no RDB snapshots (data in ${run.redis.dir}): a SIGKILLed Redis restarts with every acknowledged write`);
  const feed = await startFeed(rng(trafficSeed + 1));
  const receiver = await startReceiver(rng(trafficSeed + 2));
  log(`  odds feed ${feed.url} (v4, ${SPORT_KEY}); webhook receiver https://hooks.test:${receiver.port} (127.0.0.1, test certificate)`);

  run.adminToken = `soak-admin-${randomBytes(16).toString('hex')}`;
  run.serverEnv = {
    DATABASE_URL: run.pg.url(DATABASE),
    REDIS_URL: run.redis.url,
    ADMIN_TOKEN: run.adminToken,
    WEBHOOK_SECRET_KEY: randomBytes(32).toString('hex'), LEDGER_SIGNING_KEY: BENCH_LEDGER_SIGNING_KEY,
    DEMO_SEED: 'false',
    TIER_LIMITS: JSON.stringify(settings.tierLimits),
    WEBHOOK_HOST_OVERRIDES: 'hooks.test=127.0.0.1',
    WEBHOOK_RETRY_SCHEDULE: '1s,2s,3s,5s,8s',
    WEBHOOK_LEASE_SECONDS: '5',
    ODDS_FEED_URL: feed.url,
    ODDS_FEED_API_KEY: 'soak-feed-key',
    ODDS_FEED_SPORTS: SPORT_KEY,
    ODDS_POLL_SECONDS: '2',
    SCORES_POLL_SECONDS: '4',
    MATCH_MIN_MINUTES: '0',
  };
  await migrate(run.serverEnv);
  for (let i = 0; i < INSTANCES; i += 1) instances.push({ name: `picks-${i + 1}`, index: i, port: instancePorts[i], proc: null, life: null });
  await Promise.all(instances.map((instance) => startLife(instance, run.serverEnv)));
  log(`  instances ${instances.map((i) => `${i.name} :${i.port} (pid ${i.life.pid})`).join(', ')}; migrated and up in ${fmtS(Date.now() - setupStarted)}`);

  // API keys: two Enterprise keys only for the streams; the others for traffic, of three tiers.
  const rest = settings.keys - 2;
  const starter = Math.round(rest * 0.45);
  const growth = Math.round(rest * 0.35);
  const tiers = [...Array(starter).fill('starter'), ...Array(growth).fill('growth'), ...Array(rest - starter - growth).fill('enterprise'), 'enterprise', 'enterprise'];
  for (const [i, tier] of tiers.entries()) {
    const label = `k${String(i + 1).padStart(2, '0')}`;
    let created = null;
    for (let attempt = 0; attempt < 5 && !created; attempt += 1) {
      const { json } = await graphql('admin', instances[attempt % INSTANCES].port, CREATE_KEY, { input: { tier: tier.toUpperCase(), label: `soak ${label}` } }, 'admin', 'create-key');
      created = json?.data?.createApiKey ?? null;
      if (!created) await sleep(500);
    }
    if (!created) throw new Error(`could not create API key ${label}`);
    keys.push({ label, tier, key: created.key, id: created.apiKey.id, streamOnly: i >= rest });
  }
  // Webhook subscriptions (REST, counted like any request): two per key for four Growth/Enterprise keys.
  const hookKeys = keys.filter((k) => !k.streamOnly && k.tier !== 'starter').slice(0, 4);
  for (const key of hookKeys) {
    for (let j = 1; j <= 2; j += 1) {
      const subPath = `/${key.label}/s${j}`;
      const { status, json } = await call({ key, kind: 'rest', ep: 'webhook-create', port: instances[j % INSTANCES].port, method: 'POST', path: '/api/v1/webhooks', body: { url: `https://hooks.test:${receiver.port}${subPath}`, events: ['pick.published', 'pick.settled'] } });
      if (status !== 201) throw new Error(`webhook subscription ${subPath}: ${status} ${JSON.stringify(json)}`);
      receiver.register(subPath, json.hmac_secret, { id: json.subscription_id, key: key.label });
    }
  }
  log(`  ${keys.length} keys (${tiers.filter((t) => t === 'starter').length} starter, ${tiers.filter((t) => t === 'growth').length} growth, ${tiers.filter((t) => t === 'enterprise').length} enterprise, 2 of them for the streams only), ${receiver.subscriptions.size} webhook subscriptions`);

  // ---- the run
  run.startedAt = Date.now();
  const endAt = run.startedAt + settings.minutes * 60_000;
  feed.open();
  log(`soak: running until +${(settings.minutes * 60).toFixed(0)} s`);
  const loops = [];
  for (let i = 0; i < settings.clients; i += 1) loops.push(restLoop(rng(trafficSeed + 100 + i)));
  for (let i = 0; i < settings.graphqlClients; i += 1) loops.push(graphqlLoop(rng(trafficSeed + 200 + i)));
  loops.push(adminLoop(rng(trafficSeed + 300)));
  const streamKeys = keys.filter((k) => k.streamOnly);
  const streamLoops = [];
  for (let i = 0; i < settings.streams; i += 1) {
    const client = { index: i, key: streamKeys[i % streamKeys.length], lastSeq: null };
    streamClients.push(client);
    streamLoops.push(streamLoop(client, rng(trafficSeed + 400 + i)));
  }
  const schedulerDone = scheduler(schedRandom, endAt);
  const progress = setInterval(() => {
    const statuses = {};
    for (const rec of calls) statuses[rec.status ?? 'in flight'] = (statuses[rec.status ?? 'in flight'] ?? 0) + 1;
    log(`  [+${rel(Date.now())} s] ${calls.length} requests ${JSON.stringify(statuses)}; ${timeline.length} faults; ${adminPicks.published.length} picks published by the admin; ${receiver.arrivals.length} webhook attempts; load ${os.loadavg().map((v) => v.toFixed(2)).join(' ')}`);
  }, 30_000);
  while (Date.now() < endAt && !launcher.interrupted) await sleep(250);
  // Ctrl-C: the signal handler stops everything and exits; nothing more to do here.
  if (launcher.interrupted) await new Promise(() => {});

  // ---- the end: no more faults, recovery, traffic stops, drain, SIGTERM
  run.schedulerStop = true;
  log(`soak: +${rel(Date.now())} s: time is up; waiting for the fault in progress, then for every instance to be ready on Redis`);
  await schedulerDone;
  const recovered = await waitInstancesReady('every instance ready on Redis', (a) => a.status === 200 && a.body?.status === 'ready' && a.body?.limiter === 'redis', 60_000);
  run.trafficStop = true;
  await Promise.all(loops);
  feed.freeze();
  clearInterval(progress);
  log(`soak: traffic stopped at +${rel(Date.now())} s (${recovered ? 'all instances ready' : 'NOT all instances ready'}); draining the outbox, webhooks and streams (up to ${settings.drainSeconds} s)`);

  const sql = await openSql(run.pg.url(DATABASE));
  const drain = { startedAt: Date.now(), timedOut: false, last: null };
  const drainDeadline = Date.now() + settings.drainSeconds * 1000;
  let lastMax = null;
  let stableSince = Date.now();
  for (;;) {
    const [row] = await sql.query(
      `select (select count(*) from outbox_events where relayed_at is null) as unrelayed,
              (select count(*) from webhook_deliveries where status = 'pending') as pending,
              (select coalesce(max(seq), 0) from outbox_events) as max_seq,
              (select coalesce(max(e.seq), 0) from outbox_events e join picks p on p.id = e.pick_id where e.type = 'pick.published' and p.status in ('published', 'settled')) as max_published`,
    );
    const state = { unrelayed: Number(row.unrelayed), pending: Number(row.pending), maxSeq: Number(row.max_seq), maxPublished: Number(row.max_published) };
    drain.last = state;
    if (state.maxSeq !== lastMax) {
      lastMax = state.maxSeq;
      stableSince = Date.now();
    }
    const streamsCaughtUp = streamClients.every((c) => (state.maxPublished === 0 ? true : c.lastSeq === state.maxPublished));
    if (state.unrelayed === 0 && state.pending === 0 && streamsCaughtUp && Date.now() - stableSince > 8_000) break;
    if (Date.now() > drainDeadline) {
      drain.timedOut = true;
      break;
    }
    await sleep(500);
  }
  drain.seconds = Math.round((Date.now() - drain.startedAt) / 100) / 10;
  stopStreams();
  await Promise.all(streamLoops);
  log(`soak: drained in ${drain.seconds} s${drain.timedOut ? ' (TIMED OUT)' : ''}: ${JSON.stringify(drain.last)}; stopping the instances with SIGTERM`);

  const stopExits = await Promise.all(
    instances.map(async (instance) => {
      if (!instance.proc?.running()) return { name: instance.name, exit: instance.life?.exit ?? null };
      instance.life.stoppedByUs = true;
      instance.life.killedAt = Date.now();
      const t = Date.now();
      const exit = await instance.proc.stop('SIGTERM', 30_000);
      return { name: instance.name, exit, ms: Date.now() - t };
    }),
  );

  const db = {
    monthlyUsage: await sql.query('select api_key_id, month, request_count from monthly_usage'),
    picks: await sql.query('select id, status, event_id, event_generation, market, selection from picks'),
    outbox: await sql.query('select id, seq, type, pick_id, created_at, relayed_at from outbox_events order by seq'),
    subscriptions: await sql.query('select id, url, events, status, created_at from webhook_subscriptions'),
    deliveries: await sql.query('select id, subscription_id, event_id, status, attempt_count from webhook_deliveries'),
  };
  await sql.close();

  const infra = { unexpected: [] };
  if (!run.redis.proc?.running()) infra.unexpected.push('redis');
  if (!run.pg.proc?.running()) infra.unexpected.push('postgres');
  await run.redis.stop();
  await run.pg.stop();
  await receiver.close();
  await feed.close();
  for (const dir of launcher.tempDirs) rmSync(dir, { recursive: true, force: true });
  launcher.tempDirs.clear();

  // ---- the invariants
  const invariants = [
    checkMonthlyUsage(db),
    checkHourly(),
    checkAdminPicks(db),
    checkWebhooks(db, receiver, drain),
    checkEnginePicks(db, feed),
    checkStreams(db),
    checkErrorsAndHangs(),
    checkProcesses(stopExits, infra),
  ];
  report({ invariants, db, drain, feed, receiver, stopExits });
  return invariants.every((inv) => inv.pass);
}

main().then(
  (pass) => {
    killEverythingSync();
    process.exit(pass ? 0 : 1);
  },
  async (error) => {
    process.stderr.write(`soak failed: ${error?.stack ?? error}\n`);
    for (const m of [...launcher.managed]) {
      if (m.name.startsWith('picks-') || m.name === 'postgres' || m.name === 'redis') process.stderr.write(`--- ${m.name} (last lines)\n${m.tail(15)}\n`);
    }
    await stopEverythingAndExit(1);
  },
);
