/**
 * Bounds on the schema (src/domain/bounds.ts, checked by src/graphql/argument-guard.ts): every
 * bounded argument is checked for the whole operation before it runs, whatever data exists, after
 * authentication, limits and the access checks (401 -> 429 -> 403 -> 400), on /graphql and on the
 * REST routes, which name their own parameter. Expectations are the documented messages.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { CREATE_KEY } from '../helpers/fixtures.js';
import { createTestApp, type TestApp } from '../helpers/app.js';

let t: TestApp;
const keys: Record<'starter' | 'growth', string> = { starter: '', growth: '' };

async function createKey(tier: string): Promise<string> {
  const res = await t.graphql<{ createApiKey: { key: string } }>(CREATE_KEY, { input: { tier } });
  return res.data!.createApiKey.key;
}

function post(query: string, variables: Record<string, unknown> | undefined, key: string) {
  return t.app.inject({
    method: 'POST',
    url: '/graphql',
    headers: { 'content-type': 'application/json', authorization: `Bearer ${key}` },
    payload: { query, ...(variables ? { variables } : {}) },
  });
}

const DELIVERIES = 'query($n: Int) { webhookSubscriptions { id deliveries(first: $n) { nodes { id } } } }';

beforeAll(async () => {
  t = await createTestApp();
  keys.starter = await createKey('STARTER');
  keys.growth = await createKey('GROWTH');
});

afterAll(async () => {
  await t.close();
});

describe('an out-of-range argument is 400 invalid_parameter whatever data exists', () => {
  it('deliveries(first: 1000000) under an empty list of subscriptions', async () => {
    const res = await post(DELIVERIES, { n: 1_000_000 }, keys.growth);
    expect(res.statusCode).toBe(400);
    expect(res.json().errors[0]).toMatchObject({
      message: 'first must be an integer between 1 and 100',
      extensions: { code: 'invalid_parameter', parameter: 'first' },
    });
    // In range, the same document answers with the (empty) list.
    const ok = await post(DELIVERIES, { n: 100 }, keys.growth);
    expect(ok.json()).toEqual({ data: { webhookSubscriptions: [] } });
  });

  it.each([
    ['a literal', '{ picks(first: 0) { count } }', undefined, 'first', 200],
    ['a variable', 'query($n: Int) { picks(first: $n) { count } }', { n: 201 }, 'first', 200],
    ['a variable beyond GraphQL Int', 'query($n: Int) { picks(first: $n) { count } }', { n: 2 ** 40 }, 'first', 200],
    ['a variable default', 'query($n: Int = 500) { picks(first: $n) { count } }', undefined, 'first', 200],
    ['a fragment', 'query { ...F } fragment F on Query { todayPicks(limit: 51) { id } }', undefined, 'limit', 50],
  ])('%s', async (_name, query, variables, parameter, max) => {
    const res = await post(query, variables, keys.growth);
    expect(res.statusCode).toBe(400);
    expect(res.json().errors[0]).toMatchObject({ message: `${parameter} must be an integer between 1 and ${max}`, extensions: { code: 'invalid_parameter', parameter } });
  });

  it('null or absent is the default', async () => {
    for (const variables of [{ n: null }, {}]) {
      const res = await post('query($n: Int) { picks(first: $n) { count } }', variables, keys.growth);
      expect(res.json()).toEqual({ data: { picks: { count: 0 } } });
    }
  });
});

describe('the check order: 401 -> 429 -> 403 -> 400', () => {
  it('a key below the tier of a field the operation selects gets 403, not 400', async () => {
    const res = await post('{ trackRecord(daysBack: 9999) { overall { totalSettled } } }', undefined, keys.starter);
    expect(res.json().errors[0].extensions).toMatchObject({ code: 'tier_upgrade_required', minimum_tier: 'growth' });
    const deliveries = await post(DELIVERIES, { n: 1_000_000 }, keys.starter);
    expect(deliveries.json().errors[0].extensions).toMatchObject({ code: 'tier_upgrade_required', minimum_tier: 'growth' });
  });

  it('REST: 403 for a Starter key asking days_back=9999, 400 naming days_back for a Growth key', async () => {
    const get = (key: string) => t.app.inject({ method: 'GET', url: '/api/v1/track-record?days_back=9999', headers: { authorization: `Bearer ${key}` } });
    const starter = await get(keys.starter);
    expect(starter.statusCode).toBe(403);
    expect(starter.json()).toMatchObject({ error: 'tier_upgrade_required' });
    const growth = await get(keys.growth);
    expect(growth.statusCode).toBe(400);
    expect(growth.json()).toEqual({ error: 'invalid_parameter', message: 'days_back must be an integer between 1 and 365', parameter: 'days_back' });
  });

  it('REST renames the argument to its parameter: limit, not first', async () => {
    for (const limit of ['0', '201', '999999999999999']) {
      const res = await t.app.inject({ method: 'GET', url: `/api/v1/picks?limit=${limit}`, headers: { authorization: `Bearer ${keys.starter}` } });
      expect(res.statusCode).toBe(400);
      expect(res.json()).toEqual({ error: 'invalid_parameter', message: 'limit must be an integer between 1 and 200', parameter: 'limit' });
    }
  });
});
