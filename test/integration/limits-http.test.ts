/**
 * Limits through HTTP on whichever limiter the environment configures (in-memory in plain
 * `npm test`, Redis when REDIS_URL is set): exact admission under a burst, headers on every
 * response to a valid key, what counts, check order and the monthly rollover.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ManualClock } from '../../src/domain/clock.js';
import { createTestApp, type TestApp } from '../helpers/app.js';
import { CREATE_KEY } from '../helpers/fixtures.js';

let t: TestApp;
const clock = new ManualClock('2026-11-30T23:50:00Z');

beforeAll(async () => {
  t = await createTestApp({ clock, env: { TIER_LIMITS: '{"starter":{"hourly":25,"monthly":1000},"growth":{"hourly":1000,"monthly":3}}' } });
});
afterAll(async () => {
  await t?.close();
});

async function newKey(tier: string): Promise<string> {
  const res = await t.graphql<{ createApiKey: { key: string } }>(CREATE_KEY, { input: { tier } });
  return res.data!.createApiKey.key;
}

function get(url: string, key: string) {
  return t.app.inject({ method: 'GET', url, headers: { authorization: `Bearer ${key}` } });
}

describe('hourly window over HTTP', () => {
  it('60 parallel requests on a 25/h key admit exactly 25; the rest are 429 rate_limit_exceeded', async () => {
    const key = await newKey('STARTER');
    const responses = await Promise.all(Array.from({ length: 60 }, () => get('/api/v1/picks?limit=1', key)));
    const ok = responses.filter((res) => res.statusCode === 200);
    const limited = responses.filter((res) => res.statusCode === 429);
    expect(ok).toHaveLength(25);
    expect(limited).toHaveLength(35);
    for (const res of limited) {
      const body = res.json();
      expect(body).toMatchObject({ error: 'rate_limit_exceeded', retry_after_seconds: expect.any(Number) });
      expect(body.retry_after_seconds).toBeGreaterThanOrEqual(1);
      expect(res.headers['retry-after']).toBe(String(body.retry_after_seconds));
      expect(res.headers['x-ratelimit-remaining']).toBe('0');
      expect(res.headers['x-ratelimit-limit']).toBe('25');
    }
    const remaining = ok.map((res) => Number(res.headers['x-ratelimit-remaining'])).sort((a, b) => a - b);
    expect(remaining).toEqual(Array.from({ length: 25 }, (_, i) => i));
  });

  it('puts the headers on every response to a valid key (200, 400, 403, 404, 429) and counts all but 429', async () => {
    const key = await newKey('STARTER');
    const cases: [string, number][] = [
      ['/api/v1/picks', 200],
      ['/api/v1/picks?limit=abc', 400],
      ['/api/v1/track-record', 403],
      ['/api/v1/nope', 404],
    ];
    let expectedRemaining = 25;
    for (const [url, status] of cases) {
      const res = await get(url, key);
      expect(res.statusCode).toBe(status);
      if (status !== 404) {
        expectedRemaining -= 1;
        expect(res.headers['x-ratelimit-remaining']).toBe(String(expectedRemaining));
        expect(res.headers['x-ratelimit-limit']).toBe('25');
        expect(Number(res.headers['x-ratelimit-reset'])).toBeGreaterThan(clock.now().getTime() / 1000);
        expect(res.headers['ratelimit-policy']).toBe('"hourly";q=25;w=3600, "monthly";q=1000');
        expect(res.headers.ratelimit).toMatch(/^"hourly";r=\d+;t=\d+, "monthly";r=\d+;t=\d+$/);
      }
    }
  });

  it('answers 429 before 403 (limits are checked before the tier)', async () => {
    const key = await newKey('STARTER');
    await Promise.all(Array.from({ length: 25 }, () => get('/api/v1/picks', key)));
    const res = await get('/api/v1/track-record', key);
    expect(res.statusCode).toBe(429);
    expect(res.json().error).toBe('rate_limit_exceeded');
  });

  it('counts GraphQL requests by the same key, one unit per HTTP request, and answers 429 there too', async () => {
    const key = await newKey('STARTER');
    await Promise.all(Array.from({ length: 24 }, () => get('/api/v1/picks', key)));
    const query = { query: '{ a: picks(first: 1) { count } b: picks(first: 2) { count } }' };
    const last = await t.app.inject({ method: 'POST', url: '/graphql', headers: { authorization: `Bearer ${key}` }, payload: query });
    expect(last.statusCode).toBe(200);
    expect(last.headers['x-ratelimit-remaining']).toBe('0');
    const over = await t.app.inject({ method: 'POST', url: '/graphql', headers: { authorization: `Bearer ${key}` }, payload: query });
    expect(over.statusCode).toBe(429);
    expect(over.json().errors[0].extensions).toMatchObject({ code: 'rate_limit_exceeded' });
    expect(over.headers['retry-after']).toBeDefined();
  });
});

describe('monthly cap over HTTP', () => {
  it('stops at the cap with resets_at, and admits again at 00:00 UTC on the 1st', async () => {
    clock.set('2026-11-30T23:50:00Z');
    const key = await newKey('GROWTH');
    for (let i = 0; i < 3; i += 1) expect((await get('/api/v1/picks', key)).statusCode).toBe(200);
    const capped = await get('/api/v1/picks', key);
    expect(capped.statusCode).toBe(429);
    expect(capped.json()).toMatchObject({ error: 'monthly_quota_exceeded', resets_at: '2026-12-01T00:00:00.000Z' });
    expect(Number(capped.headers['retry-after'])).toBe(600);
    clock.set('2026-11-30T23:59:59.999Z');
    expect((await get('/api/v1/picks', key)).statusCode).toBe(429);
    clock.set('2026-12-01T00:00:00Z');
    const next = await get('/api/v1/picks', key);
    expect(next.statusCode).toBe(200);
    clock.set('2026-11-30T23:50:00Z');
  });
});
