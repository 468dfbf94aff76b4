/**
 * Two app instances sharing one PostgreSQL and one Redis. A `.real.test.ts` suite: it runs
 * when DATABASE_URL and REDIS_URL are set (CI's real-services phase); PGlite and the
 * in-memory engines are per process by design.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestApp, type TestApp } from '../helpers/app.js';
import { CREATE_KEY, REVOKE_KEY } from '../helpers/fixtures.js';

describe('two instances on one PostgreSQL and one Redis', () => {
  let a: TestApp;
  let b: TestApp;
  beforeAll(async () => {
    const env = { TIER_LIMITS: '{"starter":{"hourly":25}}' };
    a = await createTestApp({ env });
    b = await createTestApp({ env, sameDatabaseAs: a });
  });
  afterAll(async () => {
    await b?.close();
    await a?.close();
  });

  it('64 concurrent clients spread over both instances are admitted exactly 25 times in total', async () => {
    const key = (await a.graphql<{ createApiKey: { key: string } }>(CREATE_KEY, { input: { tier: 'STARTER' } })).data!.createApiKey.key;
    const responses = await Promise.all(
      Array.from({ length: 64 }, (_, i) =>
        (i % 2 === 0 ? a : b).app.inject({ method: 'GET', url: '/api/v1/picks?limit=1', headers: { authorization: `Bearer ${key}` } }),
      ),
    );
    expect(responses.filter((res) => res.statusCode === 200)).toHaveLength(25);
    expect(responses.filter((res) => res.statusCode === 429)).toHaveLength(39);
  });

  it('a key revoked through one instance is refused by the other within 1 s', async () => {
    const created = await a.graphql<{ createApiKey: { key: string; apiKey: { id: string } } }>(CREATE_KEY, { input: { tier: 'GROWTH' } });
    const { key, apiKey } = created.data!.createApiKey;
    const call = () => b.app.inject({ method: 'GET', url: '/api/v1/picks?limit=1', headers: { authorization: `Bearer ${key}` } });
    expect((await call()).statusCode).toBe(200); // now cached on instance b
    await a.graphql(REVOKE_KEY, { id: apiKey.id });
    const revokedAt = Date.now();
    let status = 200;
    while (status !== 401 && Date.now() - revokedAt < 1_000) {
      status = (await call()).statusCode;
      if (status !== 401) await new Promise((resolve) => setTimeout(resolve, 20));
    }
    expect(status).toBe(401);
  });
});
