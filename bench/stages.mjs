/**
 * Where the time of one GET /api/v1/picks?limit=50 goes, stage by stage, on one idle
 * process (no HTTP load): the list's SQL round trip alone and with its records, the same picks
 * as plain rows (and em.map() of those into entities, why reads skip entities),
 * the service call (both), and the whole request through inject(), cached (the same page
 * every time) and uncached (a distinct `since` per request, older than every pick: the same
 * page, but no cache key repeats, so every request reaches the database). Each stage reports
 * wall time and this process's CPU per call (user + system: the database's own CPU is in it
 * for PGlite, not for PostgreSQL). Diagnostic companion of the HTTP bench:
 *
 *   npm run build && node bench/stages.mjs            (embedded PGlite, in memory)
 *   BENCH_DB_URL=postgres://127.0.0.1:55433/picks_bench node bench/stages.mjs
 *   BENCH_STAGES=uncached BENCH_CPU_PROFILE_DIR=/tmp/prof node bench/stages.mjs
 *     (only the stages matching the regex; a .cpuprofile per stage of its measured loop only)
 */
import { randomBytes } from 'node:crypto';
import { mkdirSync, writeFileSync } from 'node:fs';
import { Session } from 'node:inspector/promises';
import { buildApp } from '../dist/src/app.js';
import { loadConfig } from '../dist/src/config.js';
import { PickEntity } from '../dist/src/persistence/entities/pick.js';
import { createRuntime } from '../dist/src/runtime.js';
import { listPicksSql, PICK_COLUMNS, readPicks } from '../dist/src/persistence/picks-repository.js';
import { seedPicksSql } from './seed.mjs';
import { rebuildTrackRecord } from '../dist/src/persistence/track-record-repository.js';
import { BENCH_LEDGER_SIGNING_KEY } from './server-common.mjs';

const N = Number(process.env.BENCH_STAGE_ITERATIONS ?? 300);
const dbUrl = process.env.BENCH_DB_URL?.trim() || null;
if (dbUrl && !/^postgres(ql)?:\/\/([^@/]*@)?(127\.0\.0\.1|localhost|\[::1\])[:/]/.test(dbUrl)) throw new Error('BENCH_DB_URL must be a loopback URL');
const adminToken = `bench-admin-${randomBytes(16).toString('hex')}`;
const config = loadConfig({
  ADMIN_TOKEN: adminToken, WEBHOOK_SECRET_KEY: randomBytes(32).toString('hex'), LEDGER_SIGNING_KEY: BENCH_LEDGER_SIGNING_KEY, DEMO_SEED: 'false', LOG_LEVEL: 'silent', NODE_ENV: 'production',
  TIER_LIMITS: JSON.stringify({ enterprise: { hourly: 100_000_000, monthly: 1_000_000_000 } }),
  ...(dbUrl ? { DATABASE_URL: dbUrl } : {}),
});
const runtime = await createRuntime(config, { adminToken, migrate: true, database: dbUrl ? { kind: 'postgres', url: dbUrl } : { kind: 'pglite', dataDir: 'memory://' } });
const seedEm = runtime.orm.em.fork();
await seedEm.execute('truncate table picks, api_keys, monthly_usage, track_record_days cascade');
await seedEm.execute(seedPicksSql(Number(process.env.BENCH_PICKS ?? 10_000)));
// Picks inserted with SQL: rebuild the track record's day sums and summaries.
await rebuildTrackRecord(seedEm);
await seedEm.execute('analyze');
const { key } = await runtime.services.apiKeys.create({ tier: 'enterprise', label: 'bench-stages' });
const app = await buildApp(runtime, { logger: false });

// BENCH_STAGES=<regex>: only the stages whose name matches.
const only = process.env.BENCH_STAGES ? new RegExp(process.env.BENCH_STAGES) : null;
// BENCH_CPU_PROFILE_DIR: a CPU profile of each stage's measured loop (not the seeding or start-up).
const profileDir = process.env.BENCH_CPU_PROFILE_DIR?.trim() || null;
const inspector = profileDir ? new Session() : null;
if (inspector) {
  mkdirSync(profileDir, { recursive: true });
  inspector.connect();
  await inspector.post('Profiler.enable');
  await inspector.post('Profiler.setSamplingInterval', { interval: 100 });
}

async function time(name, fn) {
  if (only && !only.test(name)) return;
  for (let i = 0; i < Math.min(50, N); i += 1) await fn();
  const samples = [];
  if (inspector) await inspector.post('Profiler.start');
  const cpu0 = process.cpuUsage();
  for (let i = 0; i < N; i += 1) {
    const t0 = performance.now();
    await fn();
    samples.push(performance.now() - t0);
  }
  const cpu = process.cpuUsage(cpu0);
  if (inspector) {
    const { profile } = await inspector.post('Profiler.stop');
    writeFileSync(`${profileDir}/${name.replace(/[^a-z0-9]+/gi, '-').replace(/^-|-$/g, '')}.cpuprofile`, JSON.stringify(profile));
  }
  samples.sort((a, b) => a - b);
  const pick = (p) => samples[Math.min(samples.length - 1, Math.ceil((p / 100) * samples.length) - 1)].toFixed(3);
  const cpuUs = ((cpu.user + cpu.system) / N).toFixed(0);
  process.stdout.write(`${name.padEnd(52)} p50 ${pick(50).padStart(8)} ms   p99 ${pick(99).padStart(8)} ms   cpu ${cpuUs.padStart(6)} µs\n`);
}

// A distinct `since` per call, older than every pick (as bench/load.mjs does): same page, no cache hit.
let sinceCounter = 0;
const distinctSince = () => new Date(Date.UTC(2000, 0, 1) + sinceCounter++).toISOString();

const { sql, params } = listPicksSql({}, 51);
// The same picks as one row per pick with a column per field (the shape before the JSON page), for comparison.
const rowsSql = `select ${PICK_COLUMNS} from picks where status in ('published', 'settled') order by kickoff_at desc, id desc limit 51`;
const rows = await runtime.orm.em.fork().execute(rowsSql);
process.stdout.write(`${dbUrl ? 'PostgreSQL' : 'PGlite (memory)'}; ${rows.length} rows of ${Object.keys(rows[0]).length} columns; ${N} iterations each\n`);
await time('SQL only, listPicksSql (one JSON page of 51)', () => runtime.orm.em.fork().execute(sql, params));
await time('readPicks(listPicksSql) (SQL + records)', () => readPicks(runtime.orm.em.fork(), { sql, params }));
await time('SQL, 51 rows of 24 columns (former shape)', () => runtime.orm.em.fork().execute(rowsSql));
await time('SQL, 51 rows of the 13 v1 Pick columns', () =>
  runtime.orm.em.fork().execute(rowsSql.replace(/^select .*? from picks/, 'select id, sport, league, home_team, away_team, kickoff_at, description, odds, edge_pct, confidence, status, settled_at, result from picks')));
await time('em.map() of 50 rows into managed entities', () => {
  const em = runtime.orm.em.fork();
  for (const row of rows.slice(0, 50)) em.map(PickEntity, row);
});
await time('services.picks.list({ first: 50 })', () => runtime.services.picks.list({ first: 50 }));
await time('services.picks.list({ first: 50, since }) uncached', () => runtime.services.picks.list({ first: 50, since: distinctSince() }));
await time('inject GET /api/v1/picks?limit=50 (API key)', () =>
  app.inject({ method: 'GET', url: '/api/v1/picks?limit=50', headers: { authorization: `Bearer ${key}` } }));
await time('inject GET /api/v1/picks?limit=50&since= uncached', () =>
  app.inject({ method: 'GET', url: `/api/v1/picks?limit=50&since=${distinctSince()}`, headers: { authorization: `Bearer ${key}` } }));
const body = (await app.inject({ method: 'GET', url: '/api/v1/picks?limit=50', headers: { authorization: `Bearer ${key}` } })).json();
await time('JSON.stringify of the response body', () => JSON.stringify(body));
await app.close();
await runtime.close();
