import type { FastifyInstance } from 'fastify';
import type { ReadinessCheck } from '../runtime.js';

/**
 * /healthz: the process runs. /readyz: 200 "ready" while every dependency answers; 200
 * "degraded" while only an optional one (Redis: the limiter falls back to per-instance
 * limits) is down, so a load balancer keeps serving; 503 "unavailable" while the database
 * is down. `details` adds information (the limiter's engine, the feed's last poll) that never
 * changes the status.
 */
export function registerHealthRoutes(app: FastifyInstance, checks: readonly ReadinessCheck[], details: () => Record<string, unknown> = () => ({})): void {
  app.get('/healthz', { schema: { hide: true } }, async (_req, reply) => reply.header('cache-control', 'no-store').send({ status: 'ok' }));
  app.get('/readyz', { schema: { hide: true } }, async (_req, reply) => {
    const results = await Promise.all(
      checks.map(async (check) => ({ check, ok: await check.check().catch(() => false) })),
    );
    const unavailable = results.some(({ check, ok }) => !ok && !check.optional);
    const degraded = results.some(({ ok }) => !ok);
    const status = unavailable ? 'unavailable' : degraded ? 'degraded' : 'ready';
    return reply
      .status(unavailable ? 503 : 200)
      .header('cache-control', 'no-store')
      .send({ status, checks: Object.fromEntries(results.map(({ check, ok }) => [check.name, ok ? 'up' : 'down'])), ...details() });
  });
}
