/**
 * The test app factory: the real Fastify app, services and database (PGlite in memory, or a
 * scratch PostgreSQL database when DATABASE_URL is set), driven through inject().
 */
import { Writable } from 'node:stream';
import type { FastifyInstance } from 'fastify';
import { buildApp } from '../../src/app.js';
import { loadConfig, type Config } from '../../src/config.js';
import { ManualClock, systemClock, type Clock } from '../../src/domain/clock.js';
import type { DatabaseTarget } from '../../src/persistence/orm.js';
import { createRuntime, type Runtime, type RuntimeOptions } from '../../src/runtime.js';
import { createTestDatabase } from './database.js';

export const ADMIN_TOKEN = 'test-admin-token-0123456789';
/** Fixed, so instances of one scale-out test decrypt each other's webhook secrets. */
export const WEBHOOK_SECRET_KEY = '0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef';
/** Fixed, so instances of one scale-out test sign checkpoints with one key (test.localhost/ledger). */
export const LEDGER_SIGNING_KEY = 'PRIVATE+KEY+test.localhost/ledger+7f448092+AQEBAQEBAQEBAQEBAQEBAQEBAQEBAQEBAQEBAQEBAQEB';

export interface TestApp {
  app: FastifyInstance;
  runtime: Runtime;
  config: Config;
  clock: Clock;
  databaseTarget: DatabaseTarget;
  /** The app's log records (parsed), when created with `captureLogs`. */
  logs: Record<string, unknown>[];
  /** POST /graphql as the admin (or with another Authorization header). */
  graphql<T = Record<string, unknown>>(
    query: string,
    variables?: Record<string, unknown>,
    authorization?: string | null,
  ): Promise<{ status: number; data: T | null; errors?: { message: string; extensions?: Record<string, unknown> }[] }>;
  close(): Promise<void>;
}

export interface TestAppOptions {
  clock?: Clock;
  env?: Record<string, string>;
  /** A second instance on the same database (and Redis, when configured): a scale-out test. */
  sameDatabaseAs?: TestApp;
  /** Runtime knobs: webhook DNS, attempt timeout, whether the dispatcher runs by itself. */
  runtime?: Pick<
    RuntimeOptions,
    'resolveWebhookHost' | 'webhookTimeoutMs' | 'startDispatcher' | 'feedSource' | 'feedRetryMinTimeoutMs' | 'feedTimeoutMs' | 'startPoller' | 'startCheckpointer' | 'log'
  >;
  /**
   * Keep the app's error logs in `TestApp.logs` instead of printing them: for a test that
   * provokes an unexpected error on purpose and asserts it was logged.
   */
  captureLogs?: boolean;
}

export async function createTestApp(options: TestAppOptions = {}): Promise<TestApp> {
  const database = options.sameDatabaseAs
    ? { target: options.sameDatabaseAs.databaseTarget, drop: async () => {} }
    : await createTestDatabase();
  const redisUrl = process.env.REDIS_URL?.trim();
  const config = loadConfig({ ADMIN_TOKEN, WEBHOOK_SECRET_KEY, LEDGER_SIGNING_KEY, DEMO_SEED: 'false', LOG_LEVEL: 'silent', ...(redisUrl ? { REDIS_URL: redisUrl } : {}), ...options.env });
  const clock = options.clock ?? systemClock;
  // A scratch database is migrated before the runtime reads from it (deployment id, outbox).
  const runtime = await createRuntime(config, { adminToken: ADMIN_TOKEN, database: database.target, clock, migrate: !options.sameDatabaseAs, startCheckpointer: false, ...options.runtime });
  // Unexpected errors are never part of a passing test: let them show, unless the test expects them.
  const logs: Record<string, unknown>[] = [];
  const stream = new Writable({
    write(chunk, _encoding, callback) {
      logs.push(JSON.parse(String(chunk)) as Record<string, unknown>);
      callback();
    },
  });
  const app = await buildApp(runtime, { logger: options.captureLogs ? { level: 'error', stream } : { level: 'error' } });
  return {
    app,
    runtime,
    config,
    clock,
    databaseTarget: database.target,
    logs,
    async graphql(query, variables, authorization = `Bearer ${ADMIN_TOKEN}`) {
      const headers: Record<string, string> = { 'content-type': 'application/json' };
      if (authorization !== null) headers.authorization = authorization;
      const response = await app.inject({ method: 'POST', url: '/graphql', headers, payload: { query, variables } });
      const body = response.json();
      return { status: response.statusCode, data: body.data ?? null, errors: body.errors };
    },
    async close() {
      await app.close();
      await runtime.close();
      await database.drop();
    },
  };
}

export { ManualClock };
