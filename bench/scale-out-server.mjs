/**
 * One process of `npm run bench:scale-out` (forked by bench/scale-out.mjs; control over IPC).
 *
 * SCALEOUT_ROLE=publisher: the runtime without serving HTTP. It migrates, empties the bench's
 * tables, creates the enterprise keys (written to SCALEOUT_KEYS_FILE) and publishes picks
 * when told, so that the measured instances spend CPU only on serving: reads and stream frames.
 * SCALEOUT_ROLE=instance: the real app (loadConfig -> createRuntime -> buildApp, logger off),
 * on 127.0.0.1 and a free port, sharing the publisher's PostgreSQL and Redis.
 *
 * IPC commands: cpu (this process's CPU time and RSS), streams (open picks streams), publish
 * { count, intervalMs } (publisher), stop.
 */
import { randomBytes } from 'node:crypto';
import { writeFileSync } from 'node:fs';
import { buildApp } from '../dist/src/app.js';
import { loadConfig } from '../dist/src/config.js';
import { createRuntime } from '../dist/src/runtime.js';
import { HOST, serveCommands } from './common.mjs';
import { BENCH_TIER_LIMITS, createEnterpriseKeys, dropLimiterCounters, pickInput, serverEnv, shutdownSoon, truncateTables } from './server-common.mjs';

if (!process.send) {
  process.stderr.write('bench/scale-out-server.mjs is started by bench/scale-out.mjs (npm run bench:scale-out), not directly.\n');
  process.exit(2);
}

const role = process.env.SCALEOUT_ROLE;
const adminToken = `bench-admin-${randomBytes(16).toString('hex')}`;

async function main() {
  const env = await serverEnv({
    mode: 'services',
    modeVar: 'SCALEOUT_MODE',
    adminToken,
    dbUrl: process.env.SCALEOUT_DB_URL,
    redisUrl: process.env.SCALEOUT_REDIS_URL,
    extra: { TIER_LIMITS: JSON.stringify(BENCH_TIER_LIMITS), STREAM_HEARTBEAT_SECONDS: '30' },
  });
  const config = loadConfig(env);
  const runtime = await createRuntime(config, { adminToken, migrate: role === 'publisher' });
  let keyIds = [];
  let app = null;
  if (role === 'publisher') {
    await truncateTables(runtime.orm, ['outbox_events', 'picks', 'api_keys', 'monthly_usage']);
    const created = await createEnterpriseKeys(runtime, Number(process.env.SCALEOUT_KEYS), 'scale-out');
    keyIds = created.keyIds;
    writeFileSync(process.env.SCALEOUT_KEYS_FILE, JSON.stringify(created.keys), { mode: 0o600 });
  } else {
    app = await buildApp(runtime, { logger: false });
    await app.listen({ port: 0, host: HOST, backlog: 4096 });
  }

  let published = 0;
  serveCommands({
    async cpu() {
      const { user, system } = process.cpuUsage();
      return { cpuUs: user + system, rss: process.memoryUsage().rss };
    },
    async streams() {
      return app ? app.openStreams() : 0;
    },
    async publish({ count, intervalMs }) {
      for (let i = 0; i < count; i += 1) {
        if (i > 0) await new Promise((resolve) => setTimeout(resolve, intervalMs));
        await runtime.services.picks.publish(pickInput(published));
        published += 1;
      }
      return published;
    },
    async stop() {
      return shutdownSoon(`scale-out ${role}`, async () => {
        await app?.close();
        if (keyIds.length > 0) await dropLimiterCounters(config.redisUrl, keyIds);
        await runtime.close();
      });
    },
  });
  process.send({ type: 'ready', port: app ? app.server.address().port : null });
}

main().catch((error) => {
  process.stderr.write(`scale-out ${role} failed: ${error?.stack ?? error}\n`);
  process.exit(1);
});
