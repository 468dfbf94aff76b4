/** `npm run migrate`: applies pending migrations to DATABASE_URL (or the embedded database). */
import { ConfigError, loadConfig } from '../config.js';
import { initORM, migrate } from '../persistence/orm.js';
import { databaseTargetFor } from '../runtime.js';

try {
  const config = loadConfig(process.env, { requireAdminToken: false });
  const orm = await initORM(databaseTargetFor(config));
  const applied = await migrate(orm);
  await orm.close();
  process.stdout.write(applied.length ? `Applied: ${applied.join(', ')}\n` : 'Database is up to date.\n');
} catch (error) {
  process.stderr.write(`${error instanceof ConfigError ? error.message : `Migration failed: ${(error as Error).message}`}\n`);
  process.exit(1);
}
