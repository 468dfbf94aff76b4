/**
 * Where the time of one GET /api/v1/picks?limit=50 goes, stage by stage, on one idle
 * process (no HTTP load): the SQL round trip alone, em.map() of the rows into entities,
 * the service call (both), the GraphQL execution of the REST document, and the whole
 * request through inject(). Diagnostic companion of the HTTP bench:
 *
 *   npm run build && node bench/stages.mjs            (embedded PGlite, in memory)
 *   BENCH_DB_URL=postgres://127.0.0.1:55433/picks_bench node bench/stages.mjs
 */
import { randomBytes } from 'node:crypto';
import { buildApp } from '../dist/src/app.js';
import { loadConfig } from '../dist/src/config.js';
import { PickEntity } from '../dist/src/persistence/entities/pick.js';
import { createRuntime } from '../dist/src/runtime.js';
import { listPicksSql } from '../dist/src/persistence/picks-repository.js';
import { seedPicksSql } from './seed.mjs';
import { TRACK_RECORD_DAYS_BACKFILL } from '../dist/migrations/Migration20261125000000_track_record_days.js';

const N = Number(process.env.BENCH_STAGE_ITERATIONS ?? 300);
const dbUrl = process.env.BENCH_DB_URL?.trim() || null;
if (dbUrl && !/^postgres(ql)?:\/\/([^@/]*@)?(127\.0\.0\.1|localhost|\[::1\])[:/]/.test(dbUrl)) throw new Error('BENCH_DB_URL must be a loopback URL');
const adminToken = `bench-admin-${randomBytes(16).toString('hex')}`;
const config = loadConfig({
  ADMIN_TOKEN: adminToken, WEBHOOK_SECRET_KEY: randomBytes(32).toString('hex'), DEMO_SEED: 'false', LOG_LEVEL: 'silent', NODE_ENV: 'production',
  TIER_LIMITS: JSON.stringify({ enterprise: { hourly: 100_000_000, monthly: 1_000_000_000 } }),
  ...(dbUrl ? { DATABASE_URL: dbUrl } : {}),
});
const runtime = await createRuntime(config, { adminToken, migrate: true, database: dbUrl ? { kind: 'postgres', url: dbUrl } : { kind: 'pglite', dataDir: 'memory://' } });
const seedEm = runtime.orm.em.fork();
await seedEm.execute('truncate table picks, api_keys, monthly_usage, track_record_days cascade');
await seedEm.execute(seedPicksSql(Number(process.env.BENCH_PICKS ?? 10_000)));
// Picks inserted with SQL: rebuild the track record's day sums, as the migration does.
await seedEm.execute(TRACK_RECORD_DAYS_BACKFILL);
await seedEm.execute('analyze');
const { key } = await runtime.services.apiKeys.create({ tier: 'enterprise', label: 'bench-stages' });
const app = await buildApp(runtime, { logger: false });

async function time(name, fn) {
  for (let i = 0; i < Math.min(50, N); i += 1) await fn();
  const samples = [];
  for (let i = 0; i < N; i += 1) {
    const t0 = performance.now();
    await fn();
    samples.push(performance.now() - t0);
  }
  samples.sort((a, b) => a - b);
  const pick = (p) => samples[Math.min(samples.length - 1, Math.ceil((p / 100) * samples.length) - 1)].toFixed(3);
  process.stdout.write(`${name.padEnd(46)} p50 ${pick(50).padStart(8)} ms   p99 ${pick(99).padStart(8)} ms\n`);
}

const { sql, params } = listPicksSql({}, 51);
const rows = await runtime.orm.em.fork().execute(sql, params);
process.stdout.write(`${dbUrl ? 'PostgreSQL' : 'PGlite (memory)'}; ${rows.length} rows of ${Object.keys(rows[0]).length} columns; ${N} iterations each\n`);
await time('SQL only (em.execute, 51 rows)', () => runtime.orm.em.fork().execute(sql, params));
await time('SQL, columns of the v1 Pick only', () =>
  runtime.orm.em.fork().execute(sql.replace(/^select .*? from picks/, 'select id, sport, league, home_team, away_team, kickoff_at, description, odds, edge_pct, confidence, status, settled_at, result from picks'), params));
await time('em.map() of 50 rows into managed entities', () => {
  const em = runtime.orm.em.fork();
  for (const row of rows.slice(0, 50)) em.map(PickEntity, row);
});
await time('services.picks.list({ first: 50 })', () => runtime.services.picks.list({ first: 50 }));
await time('inject GET /api/v1/picks?limit=50 (API key)', () =>
  app.inject({ method: 'GET', url: '/api/v1/picks?limit=50', headers: { authorization: `Bearer ${key}` } }));
await time('inject GET /api/v1/picks?limit=50 (admin)', () =>
  app.inject({ method: 'GET', url: '/api/v1/picks?limit=50', headers: { authorization: `Bearer ${adminToken}` } }));
const body = (await app.inject({ method: 'GET', url: '/api/v1/picks?limit=50', headers: { authorization: `Bearer ${key}` } })).json();
await time('JSON.stringify of the response body', () => JSON.stringify(body));
await app.close();
await runtime.close();
