/**
 * The webhook benchmark server process (forked by bench/webhooks-run.mjs; control over IPC).
 *
 * The real runtime from dist/ (loadConfig -> createRuntime, as src/serve.ts builds it, no HTTP
 * app: nothing here needs one) with its webhook dispatcher running: one process, one
 * dispatcher. WEBHOOK_HOST_OVERRIDES=hooks.test=127.0.0.1 points the subscriptions at the
 * bench receiver (bench/webhooks-receiver.mjs), whose certificate is trusted through
 * NODE_EXTRA_CA_CERTS=test/fixtures/tls/ca.pem (set by the orchestrator).
 *
 * Set-up: WH_KEYS growth API keys, each with WH_SUBS_PER_KEY (at most 5, the per-key cap)
 * subscriptions to https://hooks.test:<receiver port>/k<i>/s<j> for pick.published, created
 * through runtime.services.webhooks.create (the same path as the REST/GraphQL adapters).
 *
 * IPC commands:
 *   run    { picksPerSecond, warmupMs, durationMs, maxInFlight, profileFile? }
 *          publishes picks through runtime.services.picks.publish on an absolute schedule
 *          (a slow publish does not shift the next one; at most maxInFlight publishes
 *          overlap) and records, per pick id, the wall clock right after publish() resolved
 *          (the transaction has committed by then). Measures CPU, event-loop utilisation,
 *          event-loop delay (perf_hooks.monitorEventLoopDelay) and RSS over the measured
 *          window (warm-up excluded), samples the dispatcher's attempts in flight every
 *          100 ms and the pending backlog (one count query) every second, and optionally
 *          records a CPU profile of the measured window.
 *   stats  {}  deliveries by (status, attempt_count), attempts logged, dispatcher warnings
 *   stop   {}  closes the runtime (waits for attempts in flight) and exits
 *
 * Environment (set by webhooks-run.mjs): WH_MODE embedded|services, WH_DATA_DIR (embedded),
 * WH_DB_URL + WH_REDIS_URL (services), WH_RECEIVER_PORT, WH_KEYS, WH_SUBS_PER_KEY.
 */
import { randomBytes } from 'node:crypto';
import { monitorEventLoopDelay } from 'node:perf_hooks';
import { serveCommands, sleep, wallNow, windowMeter } from './common.mjs';
import { pickInput, serverEnv, shutdownSoon, startCpuProfile, truncateTables } from './server-common.mjs';
import { loadConfig } from '../dist/src/config.js';
import { createRuntime } from '../dist/src/runtime.js';

if (!process.send) {
  process.stderr.write('bench/webhooks-server.mjs is started by bench/webhooks-run.mjs (npm run bench:webhooks), not directly.\n');
  process.exit(2);
}

const mode = process.env.WH_MODE;
const receiverPort = Number(process.env.WH_RECEIVER_PORT);
const keyCount = Number(process.env.WH_KEYS ?? 20);
const subsPerKey = Number(process.env.WH_SUBS_PER_KEY ?? 5);

/**
 * Diagnostics (WH_DIAG=1, BENCH_WEBHOOKS_DIAG=1): wraps the dispatcher's claim, dispatchOnce
 * and complete and the relay's relayOnce on this instance (no source change) to count calls,
 * rows and wall time. Wall time includes waiting for the database (PGlite runs one query at a
 * time), so it shows where the time goes, not CPU.
 */
function instrument(runtime) {
  const counters = {};
  const wrap = (target, name, label, rowsOf) => {
    const original = target[name].bind(target);
    counters[label] = { calls: 0, ms: 0, rows: 0, zero: 0 };
    target[name] = async (...args) => {
      const t0 = performance.now();
      const c = counters[label];
      c.calls += 1;
      try {
        const result = await original(...args);
        const rows = rowsOf ? rowsOf(result) : 0;
        c.rows += rows;
        if (rowsOf && rows === 0) c.zero += 1;
        return result;
      } finally {
        c.ms += performance.now() - t0;
      }
    };
  };
  wrap(runtime.dispatcher, 'claim', 'claim', (rows) => rows.length);
  wrap(runtime.dispatcher, 'dispatchOnce', 'dispatchOnce', (n) => n);
  wrap(runtime.dispatcher, 'complete', 'complete');
  wrap(runtime.relay, 'relayOnce', 'relayOnce', (n) => n);
  const snapshot = () => JSON.parse(JSON.stringify(counters));
  return {
    snapshot,
    since(before, seconds) {
      const now = snapshot();
      const out = {};
      for (const [label, c] of Object.entries(now)) {
        const b = before[label];
        const calls = c.calls - b.calls;
        out[label] = {
          callsPerSecond: Math.round((calls / seconds) * 10) / 10,
          meanMs: calls ? Math.round(((c.ms - b.ms) / calls) * 10) / 10 : null,
          rowsPerCall: calls ? Math.round(((c.rows - b.rows) / calls) * 10) / 10 : null,
          emptyCalls: c.zero - b.zero,
          busyShare: Math.round(((c.ms - b.ms) / 1000 / seconds) * 100) / 100,
        };
      }
      return out;
    },
  };
}

const warnings = { count: 0, byMessage: {}, samples: [] };
const log = {
  warn(details, message) {
    warnings.count += 1;
    warnings.byMessage[message] = (warnings.byMessage[message] ?? 0) + 1;
    if (warnings.samples.length < 5) warnings.samples.push({ message, details });
  },
  info() {},
};

async function main() {
  if (!Number.isInteger(receiverPort) || receiverPort <= 0) throw new Error('WH_RECEIVER_PORT is required');
  const adminToken = `bench-admin-${randomBytes(16).toString('hex')}`;
  const env = await serverEnv({
    mode,
    modeVar: 'WH_MODE',
    adminToken,
    dataDir: process.env.WH_DATA_DIR,
    dbUrl: process.env.WH_DB_URL,
    redisUrl: process.env.WH_REDIS_URL,
    extra: { WEBHOOK_HOST_OVERRIDES: 'hooks.test=127.0.0.1' },
  });
  const config = loadConfig(env);
  const started = performance.now();
  // WH_POOL_MAX (BENCH_WEBHOOKS_POOL_MAX): what-if for the PostgreSQL pool size (default 10).
  const poolMax = Number(process.env.WH_POOL_MAX || 0);
  const database = mode === 'services' && poolMax > 0 ? { kind: 'postgres', url: config.databaseUrl, poolMax } : undefined;
  const runtime = await createRuntime(config, { adminToken, migrate: true, log, database });

  // Fresh data every run: the bench database (or temp DATA_DIR) is ours alone.
  await truncateTables(runtime.orm, [
    'webhook_delivery_attempts',
    'webhook_deliveries',
    'webhook_subscriptions',
    'outbox_events',
    'match_analyses',
    'picks',
    'api_keys',
    'monthly_usage',
  ]);
  const subscriptions = [];
  for (let i = 0; i < keyCount; i += 1) {
    const { apiKey } = await runtime.services.apiKeys.create({ tier: 'growth', label: `webhooks-bench-${i}` });
    for (let j = 0; j < subsPerKey; j += 1) {
      const { subscription } = await runtime.services.webhooks.create(apiKey.id, { url: `https://hooks.test:${receiverPort}/k${i}/s${j}`, events: ['pick.published'] });
      subscriptions.push({ id: subscription.id, path: `/k${i}/s${j}` });
    }
  }
  const setupMs = performance.now() - started;

  const diag = process.env.WH_DIAG === '1' ? instrument(runtime) : null;

  const loopDelay = monitorEventLoopDelay({ resolution: 1 });
  loopDelay.enable();
  const meter = windowMeter(loopDelay);
  let picksPublished = 0;
  const em = () => runtime.orm.em.fork();

  serveCommands({
    async run({ picksPerSecond, warmupMs, durationMs, maxInFlight, profileFile }) {
      const intervalMs = 1000 / picksPerSecond;
      const total = Math.round(((warmupMs + durationMs) / 1000) * picksPerSecond);
      const warmupPicks = Math.round((warmupMs / 1000) * picksPerSecond);
      const published = [];
      const failures = [];
      const inFlightSamples = [];
      const backlogSamples = [];
      let inFlight = 0;
      let maxPublishInFlight = 0;
      let late = 0;
      const slots = [];
      const t0 = wallNow() + 20;
      const windowStart = t0 + warmupMs;
      const windowEnd = windowStart + durationMs;
      let mark = null;
      let profiler = null;
      let diagAtWindow = null;
      // Attempts in flight (cheap, every 100 ms) and pending deliveries (a count query, every second).
      const sampler = setInterval(() => inFlightSamples.push({ t: wallNow(), n: runtime.dispatcher.attemptsInFlight }), 100);
      let backlogBusy = false;
      const backlogTimer = setInterval(() => {
        if (backlogBusy) return;
        backlogBusy = true;
        const t = wallNow();
        em()
          .execute("select count(*)::int as n from webhook_deliveries where status = 'pending'")
          .then((rows) => backlogSamples.push({ t, pending: Number(rows[0]?.n ?? 0) }))
          .catch(() => undefined)
          .finally(() => {
            backlogBusy = false;
          });
      }, 1000);
      const markTimer = setTimeout(
        async () => {
          mark = meter.mark();
          diagAtWindow = diag?.snapshot() ?? null;
          if (profileFile) profiler = await startCpuProfile(500);
        },
        Math.max(0, windowStart - wallNow()),
      );
      let stats = null;
      const statsTimer = new Promise((resolve) => {
        setTimeout(
          async () => {
            stats = mark ? meter.since(mark) : null;
            if (diag && diagAtWindow) stats.diag = diag.since(diagAtWindow, (windowEnd - windowStart) / 1000);
            if (profiler) await profiler.stop(profileFile);
            resolve();
          },
          Math.max(0, windowEnd - wallNow()),
        );
      });
      try {
        for (let i = 0; i < total; i += 1) {
          const due = t0 + i * intervalMs;
          const wait = due - wallNow();
          if (wait > 0) await sleep(wait);
          else if (wait < -intervalMs) late += 1;
          while (inFlight >= maxInFlight) await Promise.race(slots);
          const index = picksPublished++;
          const measured = i >= warmupPicks;
          inFlight += 1;
          maxPublishInFlight = Math.max(maxPublishInFlight, inFlight);
          const slot = (async () => {
            const startedAt = wallNow();
            try {
              const pick = await runtime.services.picks.publish(pickInput(index));
              const committedAt = wallNow();
              published.push({ id: pick.id, startedAt, committedAt, due, measured });
            } catch (error) {
              failures.push(String(error?.message ?? error));
            } finally {
              inFlight -= 1;
              slots.splice(slots.indexOf(slot), 1);
            }
          })();
          slots.push(slot);
        }
        await Promise.all(slots);
        await statsTimer;
      } finally {
        clearInterval(sampler);
        clearInterval(backlogTimer);
        clearTimeout(markTimer);
      }
      return {
        intervalMs,
        windowStart,
        windowEnd,
        lastCommitAt: Math.max(...published.map((p) => p.committedAt)),
        published,
        failures,
        late,
        maxPublishInFlight,
        stats,
        inFlightSamples,
        backlogSamples,
        profileFile: profileFile ?? null,
      };
    },
    async stats() {
      const rows = await em().execute(
        'select status, attempt_count, count(*)::int as n from webhook_deliveries group by status, attempt_count order by status, attempt_count',
      );
      const attempts = await em().execute('select count(*)::int as n, count(*) filter (where status_code between 200 and 299)::int as ok from webhook_delivery_attempts');
      return {
        deliveries: rows.map((r) => ({ status: r.status, attemptCount: Number(r.attempt_count), n: Number(r.n) })),
        attempts: Number(attempts[0]?.n ?? 0),
        attemptsOk: Number(attempts[0]?.ok ?? 0),
        attemptsInFlight: runtime.dispatcher.attemptsInFlight,
        warnings,
        rss: process.memoryUsage().rss,
      };
    },
    async stop() {
      return shutdownSoon('webhooks server', () => runtime.close());
    },
  });

  process.send({
    type: 'ready',
    setupMs: Math.round(setupMs),
    subscriptions: subscriptions.map((s) => s.path),
    keys: keyCount,
    subsPerKey,
    pid: process.pid,
    rss: process.memoryUsage().rss,
  });
}

main().catch((error) => {
  process.stderr.write(`webhooks server failed: ${error?.stack ?? error}\n`);
  process.exit(1);
});
