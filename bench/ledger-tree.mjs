/**
 * `npm run bench:ledger`: what the ledger's Merkle tree costs (docs/PERFORMANCE.md, "Ledger
 * tree"). In process, on embedded PGlite in memory (or PostgreSQL: BENCH_DATABASE_URL, a
 * loopback database this bench may empty):
 *  - publication latency: LEDGER_BENCH_PICKS picks published one at a time, each appending its
 *    ledger entry and extending the tree in its transaction (run it on the commit before the
 *    tree to compare);
 *  - proofs: inclusion proofs of random entries and consistency proofs from random sizes to the
 *    latest checkpoint, as the service computes them for the public endpoints;
 *  - signing a checkpoint, and building the whole tree again from the entries (the catch-up of a
 *    ledger older than the tree);
 *  - storage: the tree's rows per entry.
 * Results: printed, and bench/ledger-tree-results-<pglite|postgres>.json.
 */
import { writeFileSync } from 'node:fs';
import { loadConfig } from '../dist/src/config.js';
import { ManualClock } from '../dist/src/domain/clock.js';
import { createRuntime } from '../dist/src/runtime.js';
import { executeBound } from '../dist/src/persistence/sql.js';
import { pickInput, BENCH_LEDGER_SIGNING_KEY } from './server-common.mjs';

const PICKS = Number(process.env.LEDGER_BENCH_PICKS ?? 3_000);
const PROOFS = 2_000;
const databaseUrl = process.env.BENCH_DATABASE_URL?.trim() || null;
if (databaseUrl && !/@(127\.0\.0\.1|localhost|\[::1\])[:/]/.test(databaseUrl)) throw new Error('BENCH_DATABASE_URL must be on loopback');

const adminToken = 'bench-admin-token-0123456789';
const config = loadConfig({
  ADMIN_TOKEN: adminToken,
  WEBHOOK_SECRET_KEY: '0'.repeat(64),
  LEDGER_SIGNING_KEY: BENCH_LEDGER_SIGNING_KEY,
  DEMO_SEED: 'false',
  DEMO_FEED: 'false',
  LOG_LEVEL: 'silent',
  ...(databaseUrl ? { DATABASE_URL: databaseUrl } : {}),
});
const clock = new ManualClock(new Date());
const runtime = await createRuntime(config, {
  adminToken,
  clock,
  migrate: true,
  startDispatcher: false,
  startPoller: false,
  startCheckpointer: false,
  database: databaseUrl ? { kind: 'postgres', url: databaseUrl } : { kind: 'pglite', dataDir: 'memory://' },
});
const em = () => runtime.orm.em.fork();
if (databaseUrl) await executeBound(em(), 'truncate ledger_cosignatures, ledger_checkpoints, ledger_tree_nodes, ledger_entries, outbox_events, picks cascade', []);

const ms = (start) => Number(process.hrtime.bigint() - start) / 1e6;
const quantile = (sorted, q) => sorted[Math.min(sorted.length - 1, Math.floor(q * sorted.length))];
const summary = (samples) => {
  const sorted = [...samples].sort((a, b) => a - b);
  return { p50: +quantile(sorted, 0.5).toFixed(3), p95: +quantile(sorted, 0.95).toFixed(3), p99: +quantile(sorted, 0.99).toFixed(3), mean: +(sorted.reduce((a, b) => a + b, 0) / sorted.length).toFixed(3) };
};

const publish = [];
for (let i = 0; i < PICKS; i++) {
  const start = process.hrtime.bigint();
  await runtime.services.picks.publish(pickInput(i));
  publish.push(ms(start));
}
const log = runtime.services.ledgerLog;
let start = process.hrtime.bigint();
const checkpoint = await log.signIfDue();
const signMs = ms(start);
const size = checkpoint.treeSize;

const inclusion = [];
const consistency = [];
for (let i = 0; i < PROOFS; i++) {
  const seq = 1 + Math.floor(Math.random() * size);
  start = process.hrtime.bigint();
  await log.inclusionProof(seq);
  inclusion.push(ms(start));
  start = process.hrtime.bigint();
  await log.consistencyProof(seq);
  consistency.push(ms(start));
}

const [{ nodes }] = await executeBound(em(), 'select count(*)::int as nodes from ledger_tree_nodes', []);
await executeBound(em(), 'delete from ledger_tree_nodes', []);
start = process.hrtime.bigint();
await log.catchUp();
const catchUpMs = ms(start);

const results = {
  at: new Date().toISOString(),
  database: databaseUrl ? 'postgres' : 'pglite',
  entries: size,
  publishMs: summary(publish),
  signCheckpointMs: +signMs.toFixed(2),
  inclusionProofMs: summary(inclusion),
  consistencyProofMs: summary(consistency),
  rebuildWholeTreeMs: +catchUpMs.toFixed(1),
  treeRowsPerEntry: +(nodes / size).toFixed(3),
};
console.log(JSON.stringify(results, null, 2));
writeFileSync(new URL(`./ledger-tree-results-${results.database}.json`, import.meta.url), `${JSON.stringify(results, null, 2)}\n`);
await runtime.close();
