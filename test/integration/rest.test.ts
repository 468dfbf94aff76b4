/**
 * /api/v1 through HTTP (inject): every documented error row that these endpoints can
 * produce, every cell of the tier table for them, the rate-limit headers, the check order,
 * and every response validated against the served OpenAPI document.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ManualClock } from '../../src/domain/clock.js';
import { ADMIN_TOKEN, createTestApp, type TestApp } from '../helpers/app.js';
import { openApiValidator, type OpenApiValidator } from '../helpers/openapi.js';
import { CREATE_KEY, pickInput, PUBLISH, REVOKE_KEY, SETTLE, UPSERT_ANALYSIS } from '../helpers/fixtures.js';

let t: TestApp;
const clock = new ManualClock('2026-11-22T12:00:00Z');
const keys: Record<string, string> = {};
const keyIds: Record<string, string> = {};
let pickId = '';
let heldId = '';
let openapi: any;
let validator: OpenApiValidator;

async function createKey(tier: string): Promise<{ key: string; id: string }> {
  const res = await t.graphql<{ createApiKey: { key: string; apiKey: { id: string } } }>(CREATE_KEY, { input: { tier } });
  return { key: res.data!.createApiKey.key, id: res.data!.createApiKey.apiKey.id };
}

function get(url: string, key?: string | null, headers: Record<string, string> = {}) {
  return t.app.inject({ method: 'GET', url, headers: { ...(key ? { authorization: `Bearer ${key}` } : {}), ...headers } });
}

/** Validates a response body against the OpenAPI document the server itself serves. */
function expectMatchesOpenApi(path: string, status: number, body: unknown): void {
  const operation = openapi.paths[path].get;
  const schema = operation.responses[String(status)]?.content?.['application/json']?.schema;
  expect(schema, `no schema for ${path} ${status}`).toBeDefined();
  expect(validator.errorsOf(schema, body)).toBeNull();
}

beforeAll(async () => {
  t = await createTestApp({ clock, env: { TIER_LIMITS: '{"starter":{"hourly":1000,"monthly":100000}}' } });
  for (const tier of ['STARTER', 'GROWTH', 'ENTERPRISE']) {
    const created = await createKey(tier);
    keys[tier.toLowerCase()] = created.key;
    keyIds[tier.toLowerCase()] = created.id;
  }
  const published = await t.graphql<{ publishPick: { id: string } }>(PUBLISH, { input: pickInput({ kickoffAt: '2026-11-20T15:00:00Z', publishedAt: '2026-11-19T10:00:00Z' }) });
  pickId = published.data!.publishPick.id;
  await t.graphql(SETTLE, { input: { id: pickId, result: 'WON', closingOdds: 2.1, settledAt: '2026-11-20T18:00:00Z' } });
  await t.graphql(UPSERT_ANALYSIS, { input: { matchId: pickId, analysis: 'Arsenal should control midfield.' } });
  for (let i = 0; i < 3; i += 1) {
    await t.graphql(PUBLISH, { input: pickInput({ kickoffAt: `2026-12-0${i + 1}T15:00:00Z`, homeTeam: `Home ${i}`, selection: `Home ${i}` }) });
  }
  const held = await t.graphql<{ publishPick: { id: string } }>(PUBLISH, { input: pickInput({ status: 'ADMIN_REVIEW' }) });
  heldId = held.data!.publishPick.id;
  await t.graphql(UPSERT_ANALYSIS, { input: { matchId: heldId, analysis: 'Not yet.' } });
  openapi = (await t.app.inject({ method: 'GET', url: '/api/v1/openapi.json' })).json();
  validator = openApiValidator(openapi);
});
afterAll(async () => {
  await t?.close();
});

describe('GET /api/v1/picks', () => {
  it('returns the documented envelope with snake_case picks', async () => {
    const res = await get('/api/v1/picks?limit=2', keys.starter);
    expect(res.statusCode).toBe(200);
    const body = res.json();
    expect(body.count).toBe(2);
    expect(body.data).toHaveLength(2);
    expect(typeof body.next_cursor).toBe('string');
    expect(Object.keys(body.data[0]).sort()).toEqual(
      [
        ...['id', 'sport', 'league', 'home_team', 'away_team', 'kickoff_at', 'pick', 'odds', 'edge_pct', 'confidence', 'status', 'settled_at', 'result', 'stake_pct'],
        ...['market', 'selection', 'line', 'warnings', 'closing_odds', 'final_score', 'ledger_seq', 'ledger_hash'],
        ...['bookmaker', 'reference_fair_odds', 'edge_pct_post_tax', 'kelly_fraction', 'published_at'],
        ...['availability', 'best_odds_since_published'],
      ].sort(),
    );
    expect(body.data[0]).toMatchObject({ status: 'published', settled_at: null, result: null });
    // Published by hand: never checked.
    expect(body.data[0].availability).toEqual({ status: 'unknown', odds_now: null, edge_pct_now: null, checked_at: null, since: null });
    expectMatchesOpenApi('/api/v1/picks', 200, body);
    expect(res.headers['access-control-allow-origin']).toBeUndefined();
  });

  it('says where to bet and the price to beat: bookmaker, fair odds, post-tax edge in percent, Kelly, publication', async () => {
    clock.set('2026-11-22T12:00:00Z');
    // 2.5 at a 10 % tax against fair odds 2.0: 2.5 x 0.9 / 2 - 1 = 12.5 % post-tax (25 % before tax);
    // Kelly at the post-tax price 2.25 with p = 0.5: (1.25 x 0.5 - 0.5) / 1.25 = 0.1.
    const input = pickInput({ kickoffAt: '2026-12-09T15:00:00Z', homeTeam: 'Fulham', selection: 'Fulham', odds: 2.5, bookmaker: { name: 'Betfair Sportsbook', slug: 'betfair_sb_uk', taxRate: 0.1 } });
    const published = await t.graphql<{ publishPick: { id: string } }>(PUBLISH, { input });
    const id = published.data!.publishPick.id;
    const body = (await get('/api/v1/picks?limit=50', keys.starter)).json();
    const pick = body.data.find((candidate: { id: string }) => candidate.id === id);
    expect(pick).toMatchObject({
      bookmaker: { name: 'Betfair Sportsbook', slug: 'betfair_sb_uk' },
      odds: 2.5,
      reference_fair_odds: 2,
      edge_pct: 25,
      edge_pct_post_tax: 12.5,
      kelly_fraction: 0.1,
      published_at: '2026-11-22T12:00:00.000Z',
    });
    expectMatchesOpenApi('/api/v1/picks', 200, body);
    await t.graphql(`mutation($id: ID!) { holdPick(id: $id) { id } }`, { id });
  });

  it('pages to the end, then next_cursor is null', async () => {
    const first = (await get('/api/v1/picks?limit=3', keys.starter)).json();
    const second = (await get(`/api/v1/picks?limit=3&cursor=${encodeURIComponent(first.next_cursor)}`, keys.starter)).json();
    expect(second.count).toBe(1);
    expect(second.next_cursor).toBeNull();
    expect(second.data[0]).toMatchObject({ id: pickId, status: 'settled', result: 'won', settled_at: '2026-11-20T18:00:00.000Z' });
    expectMatchesOpenApi('/api/v1/picks', 200, second);
  });

  it('filters by sport, league and since', async () => {
    expect((await get('/api/v1/picks?sport=tennis', keys.starter)).json().count).toBe(0);
    expect((await get('/api/v1/picks?sport=soccer&league=Premier%20League', keys.starter)).json().count).toBe(4);
    expect((await get('/api/v1/picks?since=2026-12-01T15:00:00Z', keys.starter)).json().count).toBe(2);
  });

  it.each([
    ['limit=0', 'limit'],
    ['limit=201', 'limit'],
    ['limit=abc', 'limit'],
    ['limit=1.5', 'limit'],
    ['limit=', 'limit'],
    ['limit=99999999999', 'limit'],
    ['limit=1&limit=2', 'limit'],
    ['since=yesterday', 'since'],
    ['since=2026-11-01', 'since'],
    ['sport=Soccer', 'sport'],
    ['sport=quidditch', 'sport'],
    [`league=${'x'.repeat(600)}`, 'league'],
  ])('400 invalid_parameter for %s', async (query, parameter) => {
    const res = await get(`/api/v1/picks?${query}`, keys.starter);
    expect(res.statusCode).toBe(400);
    expect(res.json()).toMatchObject({ error: 'invalid_parameter', parameter, message: expect.any(String) });
    expectMatchesOpenApi('/api/v1/picks', 400, res.json());
  });

  it.each(['garbage', 'eyJ2IjoxfQ', '%00', 'a'.repeat(300)])('400 invalid_cursor for cursor=%s', async (cursor) => {
    const res = await get(`/api/v1/picks?cursor=${encodeURIComponent(cursor)}`, keys.starter);
    expect(res.statusCode).toBe(400);
    // Named as REST names them: the cursor parameter and the next_cursor field.
    expect(res.json()).toEqual({ error: 'invalid_cursor', message: 'cursor must be the next_cursor of a page of this list, passed unchanged.', parameter: 'cursor' });
    expectMatchesOpenApi('/api/v1/picks', 400, res.json());
  });

  it('does not confuse filters that bind the same value (sport=soccer vs league=soccer)', async () => {
    expect((await get('/api/v1/picks?sport=soccer', keys.starter)).json().count).toBe(4);
    expect((await get('/api/v1/picks?league=soccer', keys.starter)).json().count).toBe(0);
  });

  it('ignores unknown query parameters', async () => {
    expect((await get('/api/v1/picks?_=123&foo=bar', keys.starter)).statusCode).toBe(200);
  });
});

describe('authentication (401 invalid_api_key)', () => {
  it.each([
    ['missing', {}],
    ['empty', { authorization: '' }],
    ['not Bearer', { authorization: `Basic ${'x'.repeat(10)}` }],
    ['Bearer without a token', { authorization: 'Bearer' }],
    ['two tokens', { authorization: 'Bearer a b' }],
    ['wrong shape', { authorization: 'Bearer service_123' }],
    ['upper-case hex', { authorization: `Bearer service_${'A'.repeat(64)}` }],
    ['unknown key', { authorization: `Bearer service_${'0'.repeat(64)}` }],
  ])('%s', async (_name, headers) => {
    for (const url of ['/api/v1/picks', '/api/v1/track-record', `/api/v1/match-analyses/${pickId}`]) {
      const res = await t.app.inject({ method: 'GET', url, headers });
      expect(res.statusCode).toBe(401);
      expect(res.json()).toEqual({ error: 'invalid_api_key', message: expect.any(String) });
      expect(res.headers['x-ratelimit-limit']).toBeUndefined();
    }
  });

  it('a revoked key is refused at once', async () => {
    const { key, id } = await createKey('GROWTH');
    expect((await get('/api/v1/picks', key)).statusCode).toBe(200);
    await t.graphql(REVOKE_KEY, { id });
    const res = await get('/api/v1/picks', key);
    expect(res.statusCode).toBe(401);
    expect(res.json().error).toBe('invalid_api_key');
  });
});

describe('tier table (docs/API.md, "Authentication and tiers")', () => {
  const cells: [string, string, number][] = [
    ['/api/v1/picks', 'starter', 200],
    ['/api/v1/picks', 'growth', 200],
    ['/api/v1/picks', 'enterprise', 200],
    ['/api/v1/track-record', 'starter', 403],
    ['/api/v1/track-record', 'growth', 200],
    ['/api/v1/track-record', 'enterprise', 200],
    ['/api/v1/match-analyses/{matchId}', 'starter', 403],
    ['/api/v1/match-analyses/{matchId}', 'growth', 200],
    ['/api/v1/match-analyses/{matchId}', 'enterprise', 200],
  ];
  it.each(cells)('%s as %s -> %i', async (path, tier, status) => {
    const res = await get(path.replace('{matchId}', pickId), keys[tier]);
    expect(res.statusCode).toBe(status);
    if (status === 403) expect(res.json()).toMatchObject({ error: 'tier_upgrade_required', minimum_tier: 'growth' });
    expectMatchesOpenApi(path, status, res.json());
    expect(res.headers['x-ratelimit-limit']).toBeDefined();
  });
});

describe('GET /api/v1/track-record', () => {
  it('returns the documented shape', async () => {
    clock.set('2026-11-22T12:00:00Z');
    const res = await get('/api/v1/track-record?days_back=7&sport=soccer', keys.growth);
    expect(res.statusCode).toBe(200);
    const body = res.json();
    // One won pick at 2.2 against fair odds of 2 (fair probability 0.5), closing at 2.1.
    expect(body.overall).toEqual({
      roi_pct: 120,
      win_rate: 100,
      total_settled: 1,
      clv_avg_pct: 4.76,
      clv_count: 1,
      edge_avg_pct: 10,
      avg_odds: 2.2,
      clv_positive_pct: 100,
      roi_ci95: null,
      t_score: null,
      p_value: null,
      max_drawdown_units: 0,
      max_drawdown_pct: 0,
      longest_losing_streak: 0,
      brier_score: 0.25,
    });
    expect(body.calibration).toHaveLength(10);
    expect(body.calibration[5]).toEqual({ low: 0.5, high: 0.6, picks: 1, expected_win_rate: 50, actual_win_rate: 100 });
    expect(body.calibration[4]).toEqual({ low: 0.4, high: 0.5, picks: 0, expected_win_rate: null, actual_win_rate: null });
    expect(body.clv_distribution).toHaveLength(12);
    expect(body.clv_distribution[8]).toEqual({ low_pct: 4, high_pct: 6, picks: 1 });
    expectMatchesOpenApi('/api/v1/track-record', 200, body);
    expect(body.per_sport).toEqual([{ sport: 'soccer', roi_pct: 120, total_settled: 1 }]);
    expect(body.series).toHaveLength(8);
    expect(body.series.at(-1)).toEqual({ date: '2026-11-22', cumulative_pnl_units: 1.2, cumulative_pnl_pct: 120 });
  });

  it.each(['days_back=0', 'days_back=366', 'days_back=-1', 'days_back=abc', 'days_back=7.5', 'sport=chess'])('400 for %s', async (query) => {
    const res = await get(`/api/v1/track-record?${query}`, keys.growth);
    expect(res.statusCode).toBe(400);
    expect(res.json()).toMatchObject({ error: 'invalid_parameter', parameter: query.split('=')[0] });
  });

  it('checks the tier before the parameters (403 before 400)', async () => {
    const res = await get('/api/v1/track-record?days_back=abc', keys.starter);
    expect(res.statusCode).toBe(403);
    expect(res.json()).toMatchObject({ error: 'tier_upgrade_required', minimum_tier: 'growth' });
    const anonymous = await get('/api/v1/track-record?days_back=abc');
    expect(anonymous.statusCode).toBe(401);
  });
});

describe('GET /api/v1/match-analyses/:matchId', () => {
  it('returns the analysis', async () => {
    const res = await get(`/api/v1/match-analyses/${pickId}`, keys.growth);
    expect(res.statusCode).toBe(200);
    expect(res.json()).toEqual({ match_id: pickId, analysis: 'Arsenal should control midfield.', created_at: '2026-11-22T12:00:00.000Z' });
  });

  it.each([
    ['an unknown id', '00000000-0000-7000-8000-000000000000'],
    ['a malformed id', 'not-a-uuid'],
    ['a held pick', 'HELD'],
  ])('404 not_found for %s', async (_name, id) => {
    const res = await get(`/api/v1/match-analyses/${id === 'HELD' ? heldId : id}`, keys.enterprise);
    expect(res.statusCode).toBe(404);
    expect(res.json()).toMatchObject({ error: 'not_found' });
    expectMatchesOpenApi('/api/v1/match-analyses/{matchId}', 404, res.json());
  });
});

describe('last_used_at', () => {
  it('is written in batches, not per request', async () => {
    const { key, id } = await createKey('STARTER');
    clock.set('2026-11-22T12:05:00Z');
    for (let i = 0; i < 3; i += 1) await get('/api/v1/picks?limit=1', key);
    const lastUsed = async () =>
      (await t.graphql<{ apiKeys: { id: string; lastUsedAt: string | null }[] }>('{ apiKeys { id lastUsedAt } }')).data!.apiKeys.find((k) => k.id === id)!.lastUsedAt;
    expect(await lastUsed()).toBeNull();
    await t.runtime.services.auth.flushLastUsed();
    expect(await lastUsed()).toBe('2026-11-22T12:05:00.000Z');
    clock.set('2026-11-22T12:00:00Z');
  });
});

describe('the admin token on the customer API', () => {
  it.each([
    ['GET', '/api/v1/picks'],
    ['GET', '/api/v1/track-record'],
    ['GET', '/api/v1/match-analyses/00000000-0000-7000-8000-000000000000'],
    ['GET', '/api/v1/usage'],
    ['GET', '/api/v1/webhooks'],
    ['POST', '/api/v1/stream-tokens'],
    ['GET', '/api/v1/no-such-path'],
  ])('%s %s refuses it as a refused key: 401 invalid_api_key with the invalid_token challenge', async (method, url) => {
    const res = await t.app.inject({ method: method as 'GET', url, headers: { authorization: `Bearer ${ADMIN_TOKEN}`, 'content-type': 'application/json' }, payload: method === 'POST' ? '{}' : undefined });
    expect(res.statusCode).toBe(401);
    expect(res.json()).toEqual({ error: 'invalid_api_key', message: 'The admin token is not an API key: /api/v1 takes customer keys; operators use /graphql.' });
    expect(res.headers['www-authenticate']).toBe('Bearer realm="api", error="invalid_token"');
  });

  it('still works on /graphql, where operators read what customers read', async () => {
    const res = await t.app.inject({
      method: 'POST',
      url: '/graphql',
      headers: { authorization: `Bearer ${ADMIN_TOKEN}`, 'content-type': 'application/json' },
      payload: JSON.stringify({ query: '{ picks(first: 1) { nodes { id } } trackRecord(daysBack: 7) { overall { totalSettled } } }' }),
    });
    expect(res.statusCode).toBe(200);
    expect(res.json().errors).toBeUndefined();
  });
});

describe('unknown routes and methods', () => {
  it('404 JSON for unknown /api/v1 paths, 405 with Allow for wrong methods', async () => {
    const unknown = await get('/api/v1/nothing', keys.starter);
    expect(unknown.statusCode).toBe(404);
    expect(unknown.json()).toMatchObject({ error: 'not_found' });
    const post = await t.app.inject({ method: 'POST', url: '/api/v1/picks', headers: { authorization: `Bearer ${keys.starter}` } });
    expect(post.statusCode).toBe(405);
    expect(post.headers.allow).toBe('GET, HEAD');
    expect(post.json()).toMatchObject({ error: 'method_not_allowed' });
    const del = await t.app.inject({ method: 'DELETE', url: `/api/v1/match-analyses/${pickId}` });
    expect(del.statusCode).toBe(405);
  });
});

describe('OpenAPI', () => {
  it('documents every REST endpoint with its parameters', () => {
    expect(openapi.openapi).toBe('3.1.0');
    // Every path of these tests (docs/API.md lists them all: test/integration/openapi.test.ts).
    expect(Object.keys(openapi.paths)).toEqual(expect.arrayContaining([
      '/api/public/picks/today',
      '/api/v1/match-analyses/{matchId}',
      '/api/v1/picks',
      '/api/v1/picks/stream',
      '/api/v1/track-record',
      '/api/v1/webhooks',
      '/api/v1/webhooks/{id}',
      '/api/v1/webhooks/{id}/deliveries',
      '/api/v1/webhooks/{id}/rotate-secret',
    ]));
    const names = openapi.paths['/api/v1/picks'].get.parameters.map((p: { name: string }) => p.name).sort();
    expect(names).toEqual(['cursor', 'league', 'limit', 'market', 'since', 'sport']);
    expect(openapi.paths['/api/v1/track-record'].get.security).toEqual([{ bearerAuth: [] }]);
  });
});
