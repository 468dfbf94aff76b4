import type { FastifyInstance } from 'fastify';

export interface ReadinessCheck {
  name: string;
  check: () => Promise<boolean>;
}

/** /healthz: the process runs. /readyz: every dependency answers (DESIGN section 4). */
export function registerHealthRoutes(app: FastifyInstance, checks: ReadinessCheck[]): void {
  app.get('/healthz', async (_req, reply) => reply.header('cache-control', 'no-store').send({ status: 'ok' }));
  app.get('/readyz', async (_req, reply) => {
    const results = await Promise.all(checks.map(async ({ name, check }) => [name, await check().catch(() => false)] as const));
    const ready = results.every(([, ok]) => ok);
    return reply
      .status(ready ? 200 : 503)
      .header('cache-control', 'no-store')
      .send({ status: ready ? 'ready' : 'unavailable', checks: Object.fromEntries(results.map(([name, ok]) => [name, ok ? 'up' : 'down'])) });
  });
}
