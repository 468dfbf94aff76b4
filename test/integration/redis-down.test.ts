/**
 * Redis configured but unreachable (a loopback port nobody listens on): the service starts,
 * answers every request promptly with per-instance limits, and /readyz says degraded.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestApp, type TestApp } from '../helpers/app.js';
import { CREATE_KEY } from '../helpers/fixtures.js';

let t: TestApp;
beforeAll(async () => {
  t = await createTestApp({ env: { REDIS_URL: 'redis://127.0.0.1:1', TIER_LIMITS: '{"starter":{"hourly":5}}' } });
});
afterAll(async () => {
  await t?.close();
});

describe('Redis down', () => {
  it('keeps answering with the per-instance fallback limiter, never a bogus 429', async () => {
    const key = (await t.graphql<{ createApiKey: { key: string } }>(CREATE_KEY, { input: { tier: 'STARTER' } })).data!.createApiKey.key;
    const statuses: number[] = [];
    for (let i = 0; i < 7; i += 1) {
      const res = await t.app.inject({ method: 'GET', url: '/api/v1/picks', headers: { authorization: `Bearer ${key}` } });
      statuses.push(res.statusCode);
    }
    expect(statuses).toEqual([200, 200, 200, 200, 200, 429, 429]);
    expect(t.runtime.limiter.mode()).toBe('fallback');
  });

  it('reports degraded, not unavailable, on /readyz', async () => {
    const res = await t.app.inject({ method: 'GET', url: '/readyz' });
    expect(res.statusCode).toBe(200);
    expect(res.json()).toEqual({ status: 'degraded', checks: { database: 'up', redis: 'down' }, limiter: 'fallback' });
  });

  it('still serves the public endpoint', async () => {
    expect((await t.app.inject({ method: 'GET', url: '/api/public/picks/today' })).statusCode).toBe(200);
  });
});
