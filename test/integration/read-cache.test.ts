/**
 * The REST reads' cache (adapters/rest/read-cache.ts) through HTTP: a repeated read is a hit with
 * the same bytes; every change that can alter an answer (publish, hold, approve, settle, an
 * analysis written) is seen by the very next request; an answer is never handed to a caller
 * who could not get it uncached (another tier, a revoked key); and a refused request runs
 * nothing. The same over two instances is in scale-out.real.test.ts.
 */
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { ManualClock } from '../../src/domain/clock.js';
import { createTestApp, type TestApp } from '../helpers/app.js';
import { APPROVE, CREATE_KEY, HOLD, pickInput, PUBLISH, REVOKE_KEY, SETTLE, UPSERT_ANALYSIS } from '../helpers/fixtures.js';

let t: TestApp;
const clock = new ManualClock('2026-11-22T12:00:00Z');

async function createKey(tier: string): Promise<{ key: string; id: string }> {
  const res = await t.graphql<{ createApiKey: { key: string; apiKey: { id: string } } }>(CREATE_KEY, { input: { tier } });
  return { key: res.data!.createApiKey.key, id: res.data!.createApiKey.apiKey.id };
}

function get(url: string, key: string) {
  return t.app.inject({ method: 'GET', url, headers: { authorization: `Bearer ${key}` } });
}

async function publish(overrides: Record<string, unknown> = {}): Promise<string> {
  const res = await t.graphql<{ publishPick: { id: string } }>(PUBLISH, { input: pickInput(overrides) });
  expect(res.errors).toBeUndefined();
  return res.data!.publishPick.id;
}

const listedIds = (body: { data: { id: string }[] }) => body.data.map((pick) => pick.id);

beforeAll(async () => {
  t = await createTestApp({ clock, env: { TIER_LIMITS: '{"starter":{"hourly":3,"monthly":100000}}' } });
  await publish({ homeTeam: 'First FC', selection: 'First FC' });
});
afterAll(async () => {
  await t?.close();
});

describe('REST read cache', () => {
  it('answers a repeated read from the cache with the same bytes, for every key of the tier', async () => {
    const one = await createKey('ENTERPRISE');
    const two = await createKey('ENTERPRISE');
    const first = await get('/api/v1/picks?limit=5&sport=soccer', one.key);
    const hitsBefore = t.app.readCacheStats().hits;
    const second = await get('/api/v1/picks?limit=5&sport=soccer', one.key);
    const third = await get('/api/v1/picks?sport=soccer&limit=5', two.key);
    expect(t.app.readCacheStats().hits - hitsBefore).toBe(2);
    expect(second.statusCode).toBe(200);
    expect(second.body).toBe(first.body);
    expect(third.body).toBe(first.body);
    expect(second.headers['content-type']).toBe(first.headers['content-type']);
    expect(second.headers['content-type']).toBe('application/json; charset=utf-8');
    // Limits are still decided per request: each key's own remaining count moves.
    expect(Number(second.headers['x-ratelimit-remaining'])).toBe(Number(first.headers['x-ratelimit-remaining']) - 1);
  });

  it('serves a pick published, held, approved and settled at the next request', async () => {
    const { key } = await createKey('GROWTH');
    const url = '/api/v1/picks?limit=50';
    const before = listedIds((await get(url, key)).json());
    const id = await publish({ homeTeam: 'Fresh FC', selection: 'Fresh FC', kickoffAt: '2026-12-02T15:00:00Z' });
    expect(before).not.toContain(id);
    expect(listedIds((await get(url, key)).json())).toContain(id);
    await t.graphql(HOLD, { id });
    expect(listedIds((await get(url, key)).json())).not.toContain(id);
    await t.graphql(APPROVE, { id });
    expect(listedIds((await get(url, key)).json())).toContain(id);
    const trackRecordBefore = (await get('/api/v1/track-record?days_back=30', key)).json();
    clock.set('2026-12-02T18:00:00Z');
    try {
      const settled = await t.graphql(SETTLE, { input: { id, result: 'WON', closingOdds: 2.1 } });
      expect(settled.errors).toBeUndefined();
      const row = (await get(url, key)).json().data.find((pick: { id: string }) => pick.id === id);
      expect(row.status).toBe('settled');
      expect(row.result).toBe('won');
      const trackRecordAfter = (await get('/api/v1/track-record?days_back=30', key)).json();
      expect(trackRecordAfter.overall.total_settled).toBe(trackRecordBefore.overall.total_settled + 1);
    } finally {
      clock.set('2026-11-22T12:00:00Z');
    }
  });

  it('serves an analysis written after a 404 at the next request', async () => {
    const { key } = await createKey('GROWTH');
    const id = await publish({ homeTeam: 'Analysed FC', selection: 'Analysed FC', kickoffAt: '2026-12-03T15:00:00Z' });
    expect((await get(`/api/v1/match-analyses/${id}`, key)).statusCode).toBe(404);
    expect((await get(`/api/v1/match-analyses/${id}`, key)).statusCode).toBe(404);
    await t.graphql(UPSERT_ANALYSIS, { input: { matchId: id, analysis: 'First take.' } });
    const first = await get(`/api/v1/match-analyses/${id}`, key);
    expect(first.statusCode).toBe(200);
    expect(first.json().analysis).toBe('First take.');
    await t.graphql(UPSERT_ANALYSIS, { input: { matchId: id, analysis: 'Second take.' } });
    expect((await get(`/api/v1/match-analyses/${id}`, key)).json().analysis).toBe('Second take.');
  });

  it('never hands a cached answer to a lower tier or to a revoked key', async () => {
    const growth = await createKey('GROWTH');
    const starter = await createKey('STARTER');
    expect((await get('/api/v1/track-record?days_back=90', growth.key)).statusCode).toBe(200);
    expect((await get('/api/v1/track-record?days_back=90', growth.key)).statusCode).toBe(200);
    const refused = await get('/api/v1/track-record?days_back=90', starter.key);
    expect(refused.statusCode).toBe(403);
    expect(refused.json().error).toBe('tier_upgrade_required');
    const listed = await get('/api/v1/picks?limit=7', growth.key);
    expect(listed.statusCode).toBe(200);
    await t.graphql(REVOKE_KEY, { id: growth.id });
    const revoked = await get('/api/v1/picks?limit=7', growth.key);
    expect(revoked.statusCode).toBe(401);
    expect(revoked.json().error).toBe('invalid_api_key');
  });

  it('runs nothing for a rate-limited request', async () => {
    const { key } = await createKey('STARTER'); // 3 an hour (TIER_LIMITS above)
    const list = vi.spyOn(t.runtime.services.picks, 'list');
    try {
      // A distinct `since` each time: every request would miss the cache and query.
      for (let i = 0; i < 3; i += 1) expect((await get(`/api/v1/picks?since=2026-01-0${i + 1}T00:00:00Z`, key)).statusCode).toBe(200);
      expect(list).toHaveBeenCalledTimes(3);
      const storedBefore = t.app.readCacheStats().stored;
      const limited = await get('/api/v1/picks?since=2026-01-09T00:00:00Z', key);
      expect(limited.statusCode).toBe(429);
      expect(limited.headers['x-ratelimit-remaining']).toBe('0');
      expect(list).toHaveBeenCalledTimes(3);
      expect(t.app.readCacheStats().stored).toBe(storedBefore);
    } finally {
      list.mockRestore();
    }
  });
});
