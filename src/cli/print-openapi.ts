/**
 * `node dist/src/cli/print-openapi.js <file>`: writes the OpenAPI document the service serves
 * (GET /api/v1/openapi.json) to <file>, for `npm run lint:openapi` and CI's Redocly lint. It
 * builds the real app on a throwaway in-memory database, so the document is exactly the served
 * one; nothing listens and nothing is sent.
 */
import { randomBytes } from 'node:crypto';
import { writeFileSync } from 'node:fs';
import { buildApp } from '../app.js';
import { loadConfig } from '../config.js';
import { createRuntime } from '../runtime.js';

const target = process.argv[2];
if (!target) {
  process.stderr.write('usage: print-openapi <file>\n');
  process.exit(2);
}
const adminToken = randomBytes(24).toString('hex');
const config = loadConfig({ ADMIN_TOKEN: adminToken, WEBHOOK_SECRET_KEY: randomBytes(32).toString('hex'), DEMO_SEED: 'false', LOG_LEVEL: 'silent' });
const runtime = await createRuntime(config, { adminToken, database: { kind: 'pglite', dataDir: 'memory://' }, startDispatcher: false });
const app = await buildApp(runtime, { logger: false });
try {
  const response = await app.inject({ method: 'GET', url: '/api/v1/openapi.json' });
  if (response.statusCode !== 200) throw new Error(`GET /api/v1/openapi.json answered ${response.statusCode}`);
  writeFileSync(target, response.body);
  process.stdout.write(`Wrote ${target}\n`);
} finally {
  await app.close();
  await runtime.close();
}
