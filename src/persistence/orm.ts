/**
 * initORM: the one place that knows which database engine runs. PostgreSQL when a
 * DATABASE_URL is given, otherwise embedded PGlite (on disk under DATA_DIR, or in memory
 * for tests). Both run the same hand-written migrations.
 */
import { mkdirSync } from 'node:fs';
import type { Options } from '@mikro-orm/core';
import { Migrator } from '@mikro-orm/migrations';
import { MikroORM as PgliteMikroORM } from '@mikro-orm/pglite';
import { MikroORM as PostgreSqlMikroORM } from '@mikro-orm/postgresql';
import type { MikroORM, SqlEntityManager } from '@mikro-orm/sql';
import { MIGRATIONS } from '../../migrations/index.js';
import { ENTITIES } from './entities/index.js';
import { traceStatements, type QueryingConnection } from './sql-tracing.js';

export type Orm = MikroORM;
export type Em = SqlEntityManager;

export type DatabaseTarget =
  | { kind: 'postgres'; url: string; poolMax?: number }
  | {
      kind: 'pglite';
      dataDir: string | 'memory://';
      /**
       * A dumped data directory to start from (PGlite's `dumpDataDir`): tests boot each scratch
       * database from one migrated copy, a third of a fresh boot's time. Each copy is a deployment
       * of its own, so it gets a new deployment id.
       */
      template?: Blob;
    };

/** Connect / pool-acquire timeout on PostgreSQL (docs/OPERATIONS.md). */
export const DATABASE_CONNECT_TIMEOUT_MS = 2_000;

export interface InitOrmOptions {
  /** Apply pending migrations before returning (embedded mode and tests). */
  migrate?: boolean;
  debug?: boolean;
  /**
   * Spans for the embedded database's SQL (src/persistence/sql-tracing.ts): set when the process
   * traces. PostgreSQL's SQL is traced by the pg instrumentation without it.
   */
  traceSql?: boolean;
}

export async function initORM(target: DatabaseTarget, options: InitOrmOptions = {}): Promise<Orm> {
  const common: Partial<Options> = {
    entities: ENTITIES,
    extensions: [Migrator],
    migrations: { migrationsList: MIGRATIONS, snapshot: false, transactional: true, allOrNothing: true, silent: true },
    debug: options.debug ?? false,
    // Identity maps are per unit of work: services always fork.
    allowGlobalContext: false,
    forceUtcTimezone: true,
  };
  let orm: Orm;
  if (target.kind === 'postgres') {
    orm = (await PostgreSqlMikroORM.init({
      ...common,
      clientUrl: target.url,
      pool: { min: 0, max: target.poolMax ?? 10 },
      // Fail fast while PostgreSQL is down, restarting or saturated: connecting, and waiting for
      // a free pooled connection, give up after this long (the request answers 503
      // service_unavailable, src/persistence/availability.ts). Keep-alive notices dead peers.
      driverOptions: { connectionTimeoutMillis: DATABASE_CONNECT_TIMEOUT_MS, keepAlive: true },
    } as Parameters<typeof PostgreSqlMikroORM.init>[0])) as unknown as Orm;
  } else {
    if (target.dataDir !== 'memory://') mkdirSync(target.dataDir, { recursive: true });
    orm = (await PgliteMikroORM.init({
      ...common,
      dbName: target.dataDir,
      // A function: MikroORM deep-copies an options object, and a copied Blob cannot be read.
      ...(target.template ? { driverOptions: () => ({ loadDataDir: target.template }) } : {}),
      ...(options.traceSql ? { onCreateConnection: async (connection: unknown) => traceStatements(connection as QueryingConnection) } : {}),
    } as Parameters<typeof PgliteMikroORM.init>[0])) as unknown as Orm;
  }
  if (options.migrate) await migrate(orm);
  if (target.kind === 'pglite' && target.template) await orm.em.getConnection().execute('update deployment set id = gen_random_uuid()');
  return orm;
}

/** A migrated in-memory PGlite's data directory, for `template` (tests' scratch databases). */
export async function dumpMigratedPglite(): Promise<Blob> {
  const orm = await initORM({ kind: 'pglite', dataDir: 'memory://' }, { migrate: true });
  try {
    const pglite = (await (orm.em.getConnection() as unknown as { getNativeClient(): Promise<{ dumpDataDir(compression: 'none'): Promise<Blob> }> }).getNativeClient());
    return await pglite.dumpDataDir('none');
  } finally {
    await orm.close(true);
  }
}

export async function migrate(orm: Orm): Promise<string[]> {
  const applied = await orm.migrator.up();
  return applied.map((migration) => migration.name);
}

/** The counts of a `pg` pool (PostgreSQL); what the pool gauges show. */
interface PgPoolCounts {
  totalCount: number;
  idleCount: number;
  waitingCount: number;
}

/**
 * A reader of a PostgreSQL ORM's pool: connections by state (busy, idle, and requests waiting
 * for one), for the metrics. The embedded database has no pool.
 */
export async function poolReader(orm: Orm): Promise<() => { busy: number; idle: number; waiting: number }> {
  // @mikro-orm/postgresql's connection hands out its `pg` Pool.
  const connection = orm.em.getConnection() as unknown as { getNativeClient(): Promise<PgPoolCounts> };
  const pool = await connection.getNativeClient();
  return () => ({ busy: pool.totalCount - pool.idleCount, idle: pool.idleCount, waiting: pool.waitingCount });
}

/** True while the database answers a trivial query; used by /readyz. */
export async function databaseAnswers(orm: Orm): Promise<boolean> {
  try {
    await orm.em.getConnection().execute('select 1');
    return true;
  } catch {
    return false;
  }
}

/** The id of this deployment (this database), created by a migration; instances sharing the database share it. */
export async function deploymentId(orm: Orm): Promise<string> {
  const rows = await orm.em.fork().execute<{ id: string }[]>('select id from deployment');
  if (!rows[0]) throw new Error('The database has no deployment row: run `npm run migrate` first.');
  return rows[0].id;
}
