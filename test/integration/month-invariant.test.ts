/**
 * The month invariant (docs/RATE_LIMITING.md, "The month invariant") through the real app and
 * its real limiter (in memory; Redis when REDIS_URL is set, as in CI's second phase): every
 * request answered 2xx or 4xx after admission counts once, one answered 429, 500 or 503 counts
 * nothing, and the month in PostgreSQL says the same. The 503 and 500 are injected at the
 * service the route calls (the database's own connection error, an unexpected error), after
 * the request was admitted.
 */
import { afterEach, describe, expect, it, vi } from 'vitest';
import { createTestApp, type TestApp } from '../helpers/app.js';
import { CREATE_KEY } from '../helpers/fixtures.js';

const MONTHLY_CAP = 12;

let t: TestApp | null = null;
afterEach(async () => {
  await t?.close();
  t = null;
});

function connectionRefused(): Error {
  return Object.assign(new Error('connect ECONNREFUSED 127.0.0.1:5432'), { code: 'ECONNREFUSED' });
}

describe('month invariant', () => {
  it('counts each request answered 2xx/4xx once and none answered 429, 500 or 503, in the limiter and in PostgreSQL', async () => {
    t = await createTestApp({ env: { TIER_LIMITS: JSON.stringify({ starter: { hourly: 1_000, monthly: MONTHLY_CAP } }) } });
    const app = t;
    const created = await app.graphql<{ createApiKey: { key: string; apiKey: { id: string } } }>(CREATE_KEY, { input: { tier: 'STARTER' } });
    const { key, apiKey } = created.data!.createApiKey;
    const statuses: number[] = [];
    const send = async (method: 'GET' | 'POST', url: string, payload?: unknown) => {
      const res = await app.app.inject({
        method,
        url,
        headers: { authorization: `Bearer ${key}`, ...(payload ? { 'content-type': 'application/json' } : {}) },
        payload: payload ? JSON.stringify(payload) : undefined,
      });
      statuses.push(res.statusCode);
      return res.statusCode;
    };
    // Each list request asks for another page size: none is answered from the read cache.
    let pageSize = 0;
    const listUrl = () => `/api/v1/picks?limit=${(pageSize += 1)}`;
    const failingOnce = async (error: Error) => {
      const spy = vi.spyOn(app.runtime.services.picks, 'list').mockRejectedValueOnce(error);
      try {
        return await send('GET', listUrl());
      } finally {
        spy.mockRestore();
      }
    };
    // What the invariant says the month holds, from the answers alone.
    const countedByAnswers = () => statuses.filter((status) => status < 500 && status !== 429).length;
    const monthUsed = async () => (await app.app.inject({ method: 'GET', url: '/api/v1/usage', headers: { authorization: `Bearer ${key}` } })).json().monthly.used as number;

    expect(await send('GET', listUrl())).toBe(200);
    expect(await failingOnce(connectionRefused())).toBe(503);
    expect(await send('GET', '/api/v1/picks/00000000-0000-4000-8000-000000000000')).toBe(404);
    expect(await send('GET', '/api/v1/picks?limit=0')).toBe(400);
    expect(await send('GET', '/api/v1/track-record')).toBe(403);
    expect(await failingOnce(new Error('a bug'))).toBe(500);
    expect(await send('POST', '/graphql', { query: '{ picks(first: 1) { nodes { id } } }' })).toBe(200);
    expect(await failingOnce(connectionRefused())).toBe(503);
    // Taking back happens once the answer is sent: wait for it, then compare.
    await vi.waitFor(async () => expect(await monthUsed()).toBe(countedByAnswers()), { timeout: 10_000, interval: 20 });
    expect(countedByAnswers()).toBe(5);

    // Up to the cap: a 503 on the last unit leaves it for the next request.
    while (countedByAnswers() < MONTHLY_CAP - 1) expect(await send('GET', listUrl())).toBe(200);
    expect(await failingOnce(connectionRefused())).toBe(503);
    await vi.waitFor(async () => expect(await monthUsed()).toBe(MONTHLY_CAP - 1), { timeout: 10_000, interval: 20 });
    expect(await send('GET', listUrl())).toBe(200);
    expect(await send('GET', listUrl())).toBe(429);
    expect(await send('GET', listUrl())).toBe(429);
    expect(await monthUsed()).toBe(MONTHLY_CAP);
    expect(countedByAnswers()).toBe(MONTHLY_CAP);

    // PostgreSQL (what is billed) holds the same count, and the four requests taken back.
    await app.runtime.limiter.flush();
    const [row] = await app.runtime.orm.em
      .fork()
      .execute<{ request_count: string; refunded_count: string }[]>('select request_count, refunded_count from monthly_usage where api_key_id = ?', [apiKey.id]);
    expect({ count: Number(row!.request_count), refunded: Number(row!.refunded_count) }).toEqual({
      count: countedByAnswers(),
      refunded: statuses.filter((status) => status === 500 || status === 503).length,
    });
  });
});
