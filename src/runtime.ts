/**
 * The composition root: one Runtime per process (or per test app) holding the ORM, the
 * clock and the services, and closing them in order.
 */
import { systemClock, type Clock } from './domain/clock.js';
import type { Config } from './config.js';
import { databaseAnswers, initORM, type DatabaseTarget, type Orm } from './persistence/orm.js';
import { createServices, type Services } from './services/index.js';

export interface Runtime {
  config: Config;
  clock: Clock;
  orm: Orm;
  services: Services;
  readiness: { name: string; check: () => Promise<boolean> }[];
  close(): Promise<void>;
}

export interface RuntimeOptions {
  clock?: Clock;
  /** Overrides the target derived from config (tests use in-memory PGlite or a scratch database). */
  database?: DatabaseTarget;
  adminToken: string;
}

export function databaseTargetFor(config: Config): DatabaseTarget {
  return config.databaseUrl ? { kind: 'postgres', url: config.databaseUrl } : { kind: 'pglite', dataDir: config.dataDir };
}

export async function createRuntime(config: Config, options: RuntimeOptions): Promise<Runtime> {
  const clock = options.clock ?? systemClock;
  const target = options.database ?? databaseTargetFor(config);
  // Embedded databases are migrated at start; PostgreSQL deployments run `npm run migrate` first.
  const orm = await initORM(target, { migrate: target.kind === 'pglite' });
  const services = createServices(orm, clock, { defaultTaxRate: config.defaultTaxRate, adminToken: options.adminToken });
  return {
    config,
    clock,
    orm,
    services,
    readiness: [{ name: 'database', check: () => databaseAnswers(orm) }],
    async close() {
      await orm.close();
    },
  };
}
