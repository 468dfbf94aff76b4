/**
 * The migrations are the schema; the entities (src/persistence/entities) describe the same
 * tables to MikroORM. This test migrates a fresh database (PGlite by default, PostgreSQL with
 * DATABASE_URL) and asks MikroORM's schema generator what it would change to make the
 * database match the entities: nothing, except what is listed below with its reason. A column,
 * type, nullability, default, index, unique or check constraint added on one side only shows
 * up here.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { initORM, type Orm } from '../../src/persistence/orm.js';
import { createTestDatabase, type TestDatabase } from '../helpers/database.js';

/** Tables the migrations create on purpose without an entity: the code reads and writes them with SQL only. */
const TABLES_WITHOUT_ENTITY: Record<string, string> = {
  deployment: 'one row, the deployment id, written by its migration and only read (src/persistence/orm.ts deploymentId)',
  track_record_days: 'pre-summed track record, maintained by one upsert in the settlement transaction (track-record-repository.ts)',
  track_record_day_stats: 'one record summary per day and scope, recomputed in the settlement transaction (track-record-repository.ts)',
  login_failures: 'sign-in throttling rows, inserted and counted with SQL (accounts-repository.ts)',
  dashboard_secret: 'one row per deployment, insert-if-absent then read (accounts-repository.ts)',
  odds_events: 'the feed events as last seen, batch-upserted from JSON in one statement per poll (odds-repository.ts)',
  odds_latest: 'last price per (event, bookmaker, market, outcome), batch-upserted with the history in one statement (odds-repository.ts)',
  reference_markets: "each reference's latest pre-kickoff market per event generation, market and bookmaker, batch-upserted in one statement per poll (odds-repository.ts)",
  odds_history: 'line movement rows, inserted by the same statement and pruned by the retention job (odds-repository.ts)',
  engine_leases: 'one row per lease, taken and renewed with one upsert (lease-repository.ts)',
  stream_tokens: 'minted, counted and looked up by hash with SQL only (stream-tokens-repository.ts)',
  ledger_entries: 'the public hash chain, appended under the outbox lock and paged with SQL only (ledger-repository.ts)',
  feed_credit_months: 'one row per month of feed credits, charged with one upsert per feed answer (feed-credits-repository.ts)',
  pick_availability_changes: "each change of a pick's availability, inserted in the engine's tracking transaction and read at settlement with SQL only (picks-repository.ts)",
  ledger_tree_nodes: "the ledger's Merkle tree as complete subtrees, inserted in the append's transaction and read by key (ledger-tree-repository.ts)",
  ledger_checkpoints: 'signed checkpoints of the tree, one insert per checkpoint (ledger-tree-repository.ts)',
  ledger_cosignatures: "witnesses' cosignatures of the checkpoints (ledger-tree-repository.ts)",
  odds_latest_epoch: "one row, the write epoch of odds_latest, incremented first by every writer's transaction (odds-repository.ts)",
};

/**
 * Foreign keys are declared by the migrations only: the entities map referencing columns as
 * plain uuid properties (services pass ids, never object graphs, so the ORM never loads or
 * cascades relations), and MikroORM declares a foreign key only for a relation property.
 */
const FOREIGN_KEYS_WITHOUT_RELATION: [table: string, column: string][] = [
  ['api_keys', 'account_id'],
  ['ledger_cosignatures', 'tree_size'],
  ['dashboard_sessions', 'account_id'],
  ['match_analyses', 'match_id'],
  ['monthly_usage', 'api_key_id'],
  ['outbox_events', 'pick_id'],
  ['webhook_deliveries', 'event_id'],
  ['webhook_deliveries', 'subscription_id'],
  ['webhook_delivery_attempts', 'delivery_id'],
  ['webhook_subscriptions', 'api_key_id'],
];

/**
 * Indexes the entities cannot declare. None today: MikroORM 7 declares partial indexes
 * (`where`) and descending columns, so every index of the migrations is in its entity.
 */
const INDEXES_WITHOUT_ENTITY: Record<string, string> = {};

function expectedStatements(): string[] {
  return [
    ...Object.keys(TABLES_WITHOUT_ENTITY).map((table) => `drop table if exists "${table}" cascade`),
    ...FOREIGN_KEYS_WITHOUT_RELATION.map(([table, column]) => `alter table "${table}" drop constraint "${table}_${column}_fkey"`),
    ...Object.keys(INDEXES_WITHOUT_ENTITY).map((name) => `drop index "${name}"`),
  ];
}

/** The diff as single statements, whitespace-normalised. */
function diffStatements(sql: string): string[] {
  return sql
    .split(/;\s*(?:\n|$)/)
    .map((statement) => statement.replace(/\s+/g, ' ').trim())
    .filter((statement) => statement !== '');
}

let database: TestDatabase;
let orm: Orm;

beforeAll(async () => {
  database = await createTestDatabase();
  orm = await initORM(database.target, { migrate: true });
}, 120_000);
afterAll(async () => {
  await orm?.close(true);
  await database?.drop();
});

describe('entities and migrations', () => {
  it('agree: the schema diff of the migrated database holds only the listed exceptions', async () => {
    const diff = diffStatements(await orm.schema.getUpdateSchemaSQL({ wrap: false, dropTables: true }));
    const expected = expectedStatements();
    // Anything unexpected is drift; anything expected but missing is a stale exception list.
    expect(diff.filter((statement) => !expected.includes(statement)), 'drift between entities and migrations').toEqual([]);
    expect(expected.filter((statement) => !diff.includes(statement)), 'listed exceptions that no longer apply').toEqual([]);
  });
});
