/**
 * Shared fixtures of the limiter suites: a migrated test database (PGlite in memory, or a
 * scratch PostgreSQL database with DATABASE_URL) with a UsageStore, and API key rows, because
 * monthly_usage references api_keys.
 */
import { randomBytes, randomUUID } from 'node:crypto';
import { initORM, type Orm } from '../../src/persistence/orm.js';
import { UsageStore } from '../../src/services/limits/usage-store.js';
import { createTestDatabase } from '../helpers/database.js';

export const realRedisUrl = process.env.REDIS_URL?.trim() || null;

export interface UsageDatabase {
  orm: Orm;
  usageStore: UsageStore;
  /** Inserts an api_keys row and returns its id. */
  createApiKey(): Promise<string>;
  /** The stored count, or null without a row. */
  storedCount(apiKeyId: string, month: string): Promise<number | null>;
  close(): Promise<void>;
}

export async function openUsageDatabase(): Promise<UsageDatabase> {
  const database = await createTestDatabase();
  const orm = await initORM(database.target, { migrate: true });
  return {
    orm,
    usageStore: new UsageStore(orm),
    async createApiKey() {
      const id = randomUUID();
      await orm.em
        .fork()
        .execute(
          `insert into api_keys (id, key_hash, display_prefix, tier, created_at) values (?, ?, 'service_test', 'starter', now())`,
          [id, randomBytes(32).toString('hex')],
        );
      return id;
    },
    async storedCount(apiKeyId, month) {
      const rows = await orm.em
        .fork()
        .execute<{ request_count: string | number }[]>(
          'select request_count from monthly_usage where api_key_id = ? and month = ?',
          [apiKeyId, month],
        );
      return rows[0] ? Number(rows[0].request_count) : null;
    },
    async close() {
      await orm.close(true);
      await database.drop();
    },
  };
}
