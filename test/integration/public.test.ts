import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ManualClock } from '../../src/domain/clock.js';
import { createTestApp, type TestApp } from '../helpers/app.js';
import { APPROVE, HOLD, pickInput, PUBLISH } from '../helpers/fixtures.js';

let t: TestApp;
const clock = new ManualClock('2026-11-22T12:00:00Z');
const URL_TODAY = '/api/public/picks/today';

async function publish(overrides: Record<string, unknown>): Promise<string> {
  const res = await t.graphql<{ publishPick: { id: string } }>(PUBLISH, { input: pickInput(overrides) });
  expect(res.errors).toBeUndefined();
  return res.data!.publishPick.id;
}

let bigEdgeId = '';
beforeAll(async () => {
  t = await createTestApp({ clock });
  await publish({ publishedAt: '2026-11-21T23:59:59Z' }); // yesterday: not today
  bigEdgeId = await publish({ odds: 2.5, referenceFairOdds: 2.1, sport: 'tennis', league: 'ATP Tour', homeTeam: 'Jannik Sinner', awayTeam: 'Carlos Alcaraz', selection: 'Jannik Sinner' });
  await publish({ odds: 2.2, referenceFairOdds: 2.0 });
  await publish({ odds: 2.12, referenceFairOdds: 2.0, selection: 'Draw' });
  await publish({ status: 'ADMIN_REVIEW', odds: 3, referenceFairOdds: 2 });
});
afterAll(async () => {
  await t?.close();
});

describe('GET /api/public/picks/today', () => {
  it('serves today\'s visible picks, best post-tax edge first, as indented JSON with CDN and CORS headers', async () => {
    const res = await t.app.inject({ method: 'GET', url: URL_TODAY, headers: { authorization: 'Bearer whatever' } });
    expect(res.statusCode).toBe(200);
    expect(res.headers['access-control-allow-origin']).toBe('*');
    expect(res.headers['cache-control']).toBe('public, s-maxage=300, stale-while-revalidate=600');
    expect(res.headers.etag).toMatch(/^"[A-Za-z0-9_-]+"$/);
    expect(res.headers['content-type']).toContain('application/json');
    expect(res.body).toContain('\n  "generatedAt"');
    const body = res.json();
    expect(body.generatedAt).toBe('2026-11-22T12:00:00.000Z');
    expect(body.count).toBe(3);
    expect(body.picks.map((p: { edgePctPostTax: number }) => p.edgePctPostTax)).toEqual([0.1274, 0.0417, 0.0038]);
    expect(body.picks[0]).toEqual({
      id: bigEdgeId,
      match: { home: 'Jannik Sinner', away: 'Carlos Alcaraz', league: 'ATP Tour', sport: 'tennis', kickoff: '2026-12-01T15:00:00.000Z' },
      market: 'h2h',
      selection: 'Jannik Sinner',
      line: null,
      bookmaker: { name: 'Bet365', slug: 'bet365' },
      odds: { book: 2.5, referenceFair: 2.1 },
      edgePctPostTax: 0.1274,
      kellyFraction: expect.any(Number),
      tier: 'big_edge',
      publishedAt: '2026-11-22T12:00:00.000Z',
      // A quarter of full Kelly (9.31 %) is 2.33 %: capped at 2.
      stakePct: 2,
      warnings: [],
    });
    expect(body.picks.map((p: { tier: string }) => p.tier)).toEqual(['big_edge', 'stark', 'standard']);
    expect(res.headers['x-ratelimit-limit']).toBeUndefined();
  });

  it('honours limit and sport', async () => {
    expect((await t.app.inject({ method: 'GET', url: `${URL_TODAY}?limit=1` })).json().count).toBe(1);
    const tennis = (await t.app.inject({ method: 'GET', url: `${URL_TODAY}?sport=tennis` })).json();
    expect(tennis.picks.map((p: { id: string }) => p.id)).toEqual([bigEdgeId]);
  });

  it('answers 304 to a matching If-None-Match', async () => {
    const first = await t.app.inject({ method: 'GET', url: URL_TODAY });
    const again = await t.app.inject({ method: 'GET', url: URL_TODAY, headers: { 'if-none-match': first.headers.etag as string } });
    expect(again.statusCode).toBe(304);
    expect(again.body).toBe('');
    expect(again.headers.etag).toBe(first.headers.etag);
    const other = await t.app.inject({ method: 'GET', url: URL_TODAY, headers: { 'if-none-match': '"nope"' } });
    expect(other.statusCode).toBe(200);
  });

  it('drops its cache when a pick becomes visible or hidden', async () => {
    const before = (await t.app.inject({ method: 'GET', url: URL_TODAY })).json().count;
    const id = await publish({ odds: 2.3, referenceFairOdds: 2.0, homeTeam: 'Liverpool', selection: 'Liverpool' });
    expect((await t.app.inject({ method: 'GET', url: URL_TODAY })).json().count).toBe(before + 1);
    await t.graphql(HOLD, { id });
    expect((await t.app.inject({ method: 'GET', url: URL_TODAY })).json().count).toBe(before);
    await t.graphql(APPROVE, { id });
  });

  it('answers the CORS preflight with 204', async () => {
    const res = await t.app.inject({ method: 'OPTIONS', url: URL_TODAY, headers: { origin: 'https://example.com', 'access-control-request-method': 'GET' } });
    expect(res.statusCode).toBe(204);
    expect(res.headers['access-control-allow-origin']).toBe('*');
    expect(res.headers['access-control-allow-methods']).toContain('GET');
  });

  it.each(['limit=0', 'limit=51', 'limit=abc', 'limit=-3', 'limit=1&limit=2', 'sport=darts', 'sport=Soccer', 'sport='])(
    '400 invalid_parameter for %s, with CORS and no-store',
    async (query) => {
      const res = await t.app.inject({ method: 'GET', url: `${URL_TODAY}?${query}` });
      expect(res.statusCode).toBe(400);
      expect(res.headers['access-control-allow-origin']).toBe('*');
      expect(res.headers['cache-control']).toBe('no-store');
      expect(res.json()).toMatchObject({ error: 'invalid_parameter', parameter: query.split('=')[0] });
    },
  );

  it('405 for other methods', async () => {
    const res = await t.app.inject({ method: 'POST', url: URL_TODAY });
    expect(res.statusCode).toBe(405);
    expect(res.json()).toMatchObject({ error: 'method_not_allowed' });
  });

  it('rolls over at midnight UTC', async () => {
    clock.set('2026-11-23T00:00:01Z');
    expect((await t.app.inject({ method: 'GET', url: URL_TODAY })).json().count).toBe(0);
    clock.set('2026-11-22T12:00:00Z');
  });
});

describe('the rendered-body cache of GET /api/public/picks/today', () => {
  const get = (url: string, headers: Record<string, string> = {}) => t.app.inject({ method: 'GET', url, headers });
  /** Every header but the per-response ones. */
  const stableHeaders = (headers: Record<string, unknown>) => {
    const { date: _date, 'x-request-id': _requestId, ...rest } = headers;
    return rest;
  };

  it("keys on the UTC day: a request just after midnight gets the new day's picks while the old day's answer is still cached", async () => {
    clock.set('2026-11-24T00:00:00.000Z');
    const lastOfDay = await publish({ homeTeam: 'Everton', selection: 'Everton', publishedAt: '2026-11-23T23:59:59.999Z' });
    const firstOfDay = await publish({ homeTeam: 'Fulham', selection: 'Fulham' });
    const idsAt = async (at: string) => {
      clock.set(at);
      const res = await get(URL_TODAY);
      expect(res.statusCode).toBe(200);
      return res.json().picks.map((p: { id: string }) => p.id);
    };
    expect(await idsAt('2026-11-23T23:59:59.999Z')).toEqual([lastOfDay]);
    expect(await idsAt('2026-11-24T00:00:00.000Z')).toEqual([firstOfDay]);
    // A clock set back (tests, a corrected host clock) finds its day again.
    expect(await idsAt('2026-11-23T23:59:59.999Z')).toEqual([lastOfDay]);
    clock.set('2026-11-22T12:00:00Z');
  });

  it("tells an empty sport from none: sport='' is refused even while the answer without sport is cached", async () => {
    expect((await get(URL_TODAY)).statusCode).toBe(200);
    const empty = await get(`${URL_TODAY}?sport=`);
    expect(empty.statusCode).toBe(400);
    expect(empty.json()).toMatchObject({ error: 'invalid_parameter', parameter: 'sport' });
    expect((await get(`${URL_TODAY}?limit=2`)).json().count).toBe(2);
    expect((await get(`${URL_TODAY}?limit=2&sport=tennis`)).json().picks.map((p: { id: string }) => p.id)).toEqual([bigEdgeId]);
    expect((await get(`${URL_TODAY}?sport=tennis&limit=2`)).json().count).toBe(1);
  });

  it('answers a hit with the headers and bytes of the miss that filled it; a 304 with the same headers but no content-type', async () => {
    clock.set('2026-11-25T08:00:00.000Z'); // a day not asked before: the first request renders
    const miss = await get(`${URL_TODAY}?limit=5`);
    clock.advance(1);
    const hit = await get(`${URL_TODAY}?limit=5`);
    // The same generatedAt although the clock moved: the second answer came from the cache.
    expect(hit.json().generatedAt).toBe('2026-11-25T08:00:00.000Z');
    expect(hit.rawPayload.equals(miss.rawPayload)).toBe(true);
    expect(stableHeaders(hit.headers)).toEqual(stableHeaders(miss.headers));
    expect(Object.keys(stableHeaders(miss.headers)).sort()).toEqual([
      'access-control-allow-headers',
      'access-control-allow-methods',
      'access-control-allow-origin',
      'access-control-expose-headers',
      'access-control-max-age',
      'cache-control',
      'connection',
      'content-length',
      'content-type',
      'etag',
      'vary',
    ]);
    const notModified = await get(`${URL_TODAY}?limit=5`, { 'if-none-match': miss.headers.etag as string });
    expect(notModified.statusCode).toBe(304);
    const { 'content-type': _type, 'content-length': _length, ...withoutBody } = stableHeaders(miss.headers);
    expect(stableHeaders(notModified.headers)).toEqual(withoutBody);
    const head = await t.app.inject({ method: 'HEAD', url: `${URL_TODAY}?limit=5` });
    expect(head.body).toBe('');
    expect(stableHeaders(head.headers)).toEqual(stableHeaders(miss.headers));
    clock.set('2026-11-22T12:00:00Z');
  });
});
