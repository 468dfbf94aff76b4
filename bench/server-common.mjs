/**
 * Helpers shared by the bench server processes that run the real app or runtime from dist/
 * (server.mjs, streams-server.mjs, webhooks-server.mjs): the environment they give
 * loadConfig (and the services-mode database they create when missing), CPU profiles through
 * the inspector, the `stop` command's shutdown, the limiter counters they leave in Redis and
 * the pick they publish. The IPC side (serveCommands) is in common.mjs.
 */
import { randomBytes } from 'node:crypto';
import { writeFileSync } from 'node:fs';
import { Session } from 'node:inspector/promises';
import { writeHeapSnapshot } from 'node:v8';
import { HOST } from './common.mjs';

/**
 * The tier limits every bench server runs with: enterprise at 10^8 an hour and 10^9 a month, so
 * the limiter always decides and never refuses.
 */
export const BENCH_TIER_LIMITS = { enterprise: { hourly: 100_000_000, monthly: 1_000_000_000 } };

/** `count` enterprise keys labelled `<label>-<i>`: their secrets and their ids, in order. */
export async function createEnterpriseKeys(runtime, count, label) {
  const keys = [];
  const keyIds = [];
  for (let i = 0; i < count; i += 1) {
    const { key, apiKey } = await runtime.services.apiKeys.create({ tier: 'enterprise', label: `${label}-${i}` });
    keys.push(key);
    keyIds.push(apiKey.id);
  }
  return { keys, keyIds };
}

/** The services-mode database must exist before the ORM connects; created when missing. */
export async function ensureDatabase(url) {
  const { MikroORM } = await import('@mikro-orm/postgresql');
  const target = new URL(url);
  const name = decodeURIComponent(target.pathname.slice(1));
  if (!/^[a-z_][a-z0-9_]*$/.test(name)) throw new Error(`bench database name must match [a-z_][a-z0-9_]*, got "${name}"`);
  const admin = new URL(url);
  admin.pathname = '/postgres';
  const orm = await MikroORM.init({ clientUrl: admin.toString(), entities: [], discovery: { warnWhenNoEntities: false }, pool: { min: 0, max: 1 } });
  try {
    const rows = await orm.em.getConnection().execute('select 1 from pg_database where datname = ?', [name]);
    if (rows.length === 0) await orm.em.getConnection().execute(`create database ${name}`);
  } finally {
    await orm.close(true);
  }
}

/**
 * The environment a bench server passes to loadConfig: no demo data, silent, production, on
 * 127.0.0.1 and a free port, a fresh webhook secret key, plus `extra`. Embedded mode: PGlite in
 * `dataDir`; services mode: PostgreSQL `dbUrl` (database created when missing) and Redis
 * `redisUrl`. `modeVar` names the variable `mode` came from, for the error on an unknown one.
 */
export async function serverEnv({ mode, modeVar, adminToken, dataDir, dbUrl, redisUrl, extra = {} }) {
  const env = {
    ADMIN_TOKEN: adminToken,
    DEMO_SEED: 'false',
    LOG_LEVEL: 'silent',
    NODE_ENV: 'production',
    HOST,
    PORT: '0',
    WEBHOOK_SECRET_KEY: randomBytes(32).toString('hex'), LEDGER_SIGNING_KEY: BENCH_LEDGER_SIGNING_KEY,
    ...extra,
  };
  if (mode === 'embedded') {
    env.DATA_DIR = dataDir;
  } else if (mode === 'services') {
    await ensureDatabase(dbUrl);
    env.DATABASE_URL = dbUrl;
    env.REDIS_URL = redisUrl;
  } else {
    throw new Error(`unknown ${modeVar} ${mode}`);
  }
  return env;
}

/** Starts a CPU profile of this process through the inspector (what --cpu-prof records); stop(file) writes it. */
export async function startCpuProfile(intervalUs) {
  const session = new Session();
  session.connect();
  await session.post('Profiler.enable');
  await session.post('Profiler.setSamplingInterval', { interval: intervalUs });
  await session.post('Profiler.start');
  return {
    async stop(file) {
      const { profile } = await session.post('Profiler.stop');
      session.disconnect();
      writeFileSync(file, JSON.stringify(profile));
      return file;
    },
  };
}

/**
 * The `profileStart` / `profileStop` IPC commands: a CPU profile of this process through the
 * inspector, sampled every `intervalUs` (default `defaultIntervalUs`), written to `file`.
 */
export function profileCommands(defaultIntervalUs) {
  let profiler = null;
  return {
    async profileStart({ intervalUs }) {
      profiler = await startCpuProfile(intervalUs ?? defaultIntervalUs);
      return true;
    },
    async profileStop({ file }) {
      const written = await profiler.stop(file);
      profiler = null;
      return written;
    },
    /** A heap snapshot (bench/heap-diff.mjs compares two of one process). */
    async heapSnapshot({ file }) {
      return writeHeapSnapshot(file);
    },
  };
}

/**
 * Empties the bench's tables once the runtime is up. Its background loops (relay,
 * dispatcher, usage and last-used flushes) already read them, and TRUNCATE's exclusive locks
 * can deadlock with those reads: try again a few times.
 */
export async function truncateTables(orm, tables) {
  for (let attempt = 1; ; attempt += 1) {
    try {
      await orm.em.fork().execute(`truncate table ${tables.join(', ')} cascade`);
      return;
    } catch (error) {
      if (attempt >= 5 || !/deadlock/i.test(String(error?.message ?? error))) throw error;
      await new Promise((resolve) => setTimeout(resolve, 100 * attempt));
    }
  }
}

/**
 * The `stop` command: answers at once, then runs `close` and exits 0 (or reports
 * `<name>: shutdown failed` and exits 1).
 */
export function shutdownSoon(name, close) {
  setImmediate(async () => {
    try {
      await close();
      process.exit(0);
    } catch (error) {
      process.stderr.write(`${name}: shutdown failed: ${error?.stack ?? error}\n`);
      process.exit(1);
    }
  });
  return true;
}

/** The bench keys' limiter counters in Redis: dropped instead of left there for 40 days. */
export async function dropLimiterCounters(redisUrl, keyIds) {
  const { Redis } = await import('ioredis');
  const redis = new Redis(redisUrl, { lazyConnect: true, maxRetriesPerRequest: 1 });
  await redis.connect();
  for (let i = 0; i < keyIds.length; i += 200) {
    const batch = keyIds.slice(i, i + 200);
    const found = (await Promise.all(batch.map((id) => redis.keys(`rl:{${id}}:*`)))).flat();
    if (found.length) await redis.del(...found);
  }
  redis.disconnect();
}

/** One fixed key for every bench process: instances of one database sign with one key. */
export const BENCH_LEDGER_SIGNING_KEY = 'PRIVATE+KEY+bench.localhost/ledger+c54ff16d+AQMDAwMDAwMDAwMDAwMDAwMDAwMDAwMDAwMDAwMDAwMD';

const SPORTS = [
  ['soccer', 'Premier League', 'Arsenal', 'Chelsea'],
  ['basketball', 'NBA', 'Boston Celtics', 'Miami Heat'],
  ['tennis', 'ATP Tour', 'Player One', 'Player Two'],
];

/** The i-th pick a bench publishes through runtime.services.picks.publish (kickoffs two days ahead, a minute apart). */
export function pickInput(i) {
  const [sport, league, homeTeam, awayTeam] = SPORTS[i % SPORTS.length];
  return {
    sport,
    league,
    homeTeam,
    awayTeam,
    kickoffAt: new Date(Date.now() + 2 * 86_400_000 + (i % 10_000) * 60_000).toISOString(),
    selection: homeTeam,
    bookmaker: { name: 'Bet365', slug: 'bet365' },
    odds: 2.2 + (i % 10) / 100,
    referenceFairOdds: 2.0,
    confidence: 70,
  };
}
