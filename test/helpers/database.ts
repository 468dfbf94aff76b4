/**
 * Test databases: in-memory PGlite by default, each booted from the run's migrated dump
 * (test/global-setup.ts); with DATABASE_URL a fresh scratch database
 * on that PostgreSQL server per test app (created here, dropped at close), so suites run
 * in parallel without sharing rows.
 */
import { randomBytes } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { inject } from 'vitest';
import { MikroORM as PostgreSqlMikroORM } from '@mikro-orm/postgresql';
import type { DatabaseTarget } from '../../src/persistence/orm.js';

export const realDatabaseUrl = process.env.DATABASE_URL?.trim() || null;

export interface TestDatabase {
  target: DatabaseTarget;
  drop(): Promise<void>;
}

async function adminQuery(url: string, sql: string): Promise<void> {
  const orm = await PostgreSqlMikroORM.init({ clientUrl: url, entities: [], discovery: { warnWhenNoEntities: false }, pool: { min: 0, max: 1 } });
  try {
    await orm.em.getConnection().execute(sql);
  } finally {
    await orm.close(true);
  }
}

let pgliteTemplate: Blob | undefined;

/** The run's migrated PGlite dump (test/global-setup.ts), read once per test file; none outside it. */
function migratedTemplate(): Blob | undefined {
  const file = inject('pgliteTemplateFile');
  if (!file) return undefined;
  pgliteTemplate ??= new Blob([readFileSync(file)]);
  return pgliteTemplate;
}

export async function createTestDatabase(): Promise<TestDatabase> {
  if (!realDatabaseUrl) {
    const template = migratedTemplate();
    return { target: { kind: 'pglite', dataDir: 'memory://', ...(template ? { template } : {}) }, drop: async () => {} };
  }
  const name = `picks_test_${randomBytes(6).toString('hex')}`;
  await adminQuery(realDatabaseUrl, `create database ${name}`);
  const url = new URL(realDatabaseUrl);
  url.pathname = `/${name}`;
  return {
    target: { kind: 'postgres', url: url.toString(), poolMax: 5 },
    drop: () => adminQuery(realDatabaseUrl, `drop database if exists ${name} with (force)`),
  };
}
