/**
 * GET /api/v1/usage: the calling key's tier, hourly window and monthly usage (the dashboard's
 * numbers), never counted against those limits and answered when they are exhausted, with its
 * own window of 60 reads per key per clock hour. Runs on Redis too when REDIS_URL is set.
 */
import { Ajv2020 } from 'ajv/dist/2020.js';
import addFormats from 'ajv-formats';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ManualClock } from '../../src/domain/clock.js';
import { USAGE_READ_LIMIT } from '../../src/services/limits/usage-window.js';
import { ADMIN_TOKEN, createTestApp, type TestApp } from '../helpers/app.js';
import { CREATE_KEY } from '../helpers/fixtures.js';

let t: TestApp;
const clock = new ManualClock('2026-11-22T12:10:00Z');
let openapi: any;

beforeAll(async () => {
  t = await createTestApp({ clock, env: { TIER_LIMITS: '{"starter":{"hourly":3,"monthly":1000},"growth":{"hourly":1000,"monthly":2}}' } });
  openapi = (await t.app.inject({ method: 'GET', url: '/api/v1/openapi.json' })).json();
});
afterAll(async () => {
  await t?.close();
});

async function createKey(tier: string): Promise<string> {
  return (await t.graphql<{ createApiKey: { key: string } }>(CREATE_KEY, { input: { tier } })).data!.createApiKey.key;
}

function get(url: string, key?: string) {
  return t.app.inject({ method: 'GET', url, headers: key ? { authorization: `Bearer ${key}` } : {} });
}

/** Validates a body against the served OpenAPI document (its components included). */
function expectMatchesOpenApi(status: number, body: unknown): void {
  const schema = openapi.paths['/api/v1/usage']?.get?.responses?.[String(status)]?.content?.['application/json']?.schema;
  expect(schema, `no schema for /api/v1/usage ${status}`).toBeDefined();
  const ajv = new Ajv2020({ strict: false, allErrors: true });
  (addFormats as unknown as { default: (ajv: unknown) => void }).default(ajv);
  const validate = ajv.compile({ ...schema, components: openapi.components });
  expect(validate(body), JSON.stringify(validate.errors)).toBe(true);
}

describe('GET /api/v1/usage', () => {
  it("answers the key's tier and usage without counting it", async () => {
    const key = await createKey('STARTER');
    const picks = await get('/api/v1/picks?limit=1', key);
    expect(picks.statusCode).toBe(200);
    const usage = await get('/api/v1/usage', key);
    expect(usage.statusCode).toBe(200);
    const body = usage.json();
    expect(body).toEqual({
      tier: 'starter',
      hourly: { limit: 3, used: 1, remaining: 2, resets_at: expect.any(String) },
      monthly: { limit: 1000, used: 1, remaining: 999, resets_at: '2026-12-01T00:00:00.000Z' },
    });
    expectMatchesOpenApi(200, body);
    // The headers tell the key's standing, as on every authenticated response; nothing more was counted.
    expect(usage.headers['x-ratelimit-limit']).toBe('3');
    expect(usage.headers['x-ratelimit-remaining']).toBe('2');
    expect(usage.headers['x-ratelimit-reset']).toBe(picks.headers['x-ratelimit-reset']);
    expect(new Date(body.hourly.resets_at).getTime() / 1000).toBe(Number(picks.headers['x-ratelimit-reset']));
    const again = await get('/api/v1/usage', key);
    expect(again.json().hourly.used).toBe(1);
    expect((await get('/api/v1/picks?limit=1', key)).headers['x-ratelimit-remaining']).toBe('1');
  });

  it('tells the same numbers as the dashboard reads (ApiKey.usage)', async () => {
    const created = await t.graphql<{ createApiKey: { key: string; apiKey: { id: string } } }>(CREATE_KEY, { input: { tier: 'GROWTH' } });
    const key = created.data!.createApiKey.key;
    await get('/api/v1/picks?limit=1', key);
    const rest = (await get('/api/v1/usage', key)).json();
    const graphql = await t.graphql<{ apiKeys: { id: string; usage: { hourly: { used: number; limit: number }; monthly: { used: number; limit: number } } }[] }>(
      '{ apiKeys { id usage { hourly { used limit } monthly { used limit } } } }',
    );
    const dashboard = graphql.data!.apiKeys.find((apiKey) => apiKey.id === created.data!.createApiKey.apiKey.id)!.usage;
    expect({ hourly: { used: rest.hourly.used, limit: rest.hourly.limit }, monthly: { used: rest.monthly.used, limit: rest.monthly.limit } }).toEqual(dashboard);
  });

  it('still answers when the hourly limit is used up', async () => {
    const key = await createKey('STARTER');
    for (let i = 0; i < 3; i += 1) expect((await get('/api/v1/picks?limit=1', key)).statusCode).toBe(200);
    expect((await get('/api/v1/picks?limit=1', key)).statusCode).toBe(429);
    const usage = await get('/api/v1/usage', key);
    expect(usage.statusCode).toBe(200);
    expect(usage.json().hourly).toMatchObject({ limit: 3, used: 3, remaining: 0 });
    expect(usage.headers['x-ratelimit-remaining']).toBe('0');
    expect(usage.headers['retry-after']).toBeUndefined();
  });

  it('still answers when the monthly cap is used up', async () => {
    const key = await createKey('GROWTH');
    for (let i = 0; i < 2; i += 1) expect((await get('/api/v1/picks?limit=1', key)).statusCode).toBe(200);
    expect((await get('/api/v1/picks?limit=1', key)).json()).toMatchObject({ error: 'monthly_quota_exceeded' });
    const usage = await get('/api/v1/usage', key);
    expect(usage.statusCode).toBe(200);
    expect(usage.json()).toMatchObject({ tier: 'growth', monthly: { limit: 2, used: 2, remaining: 0 } });
  });

  it('has its own window: 60 reads per key per clock hour, then 429 rate_limit_exceeded with Retry-After', async () => {
    clock.set('2026-11-22T13:59:00Z');
    const key = await createKey('STARTER');
    const other = await createKey('STARTER');
    for (let i = 0; i < USAGE_READ_LIMIT; i += 1) expect((await get('/api/v1/usage', key)).statusCode, `read ${i + 1}`).toBe(200);
    const refused = await get('/api/v1/usage', key);
    expect(refused.statusCode).toBe(429);
    expect(refused.json()).toEqual({
      error: 'rate_limit_exceeded',
      message: 'At most 60 usage reads per API key per hour; retry in 60 s.',
      retry_after_seconds: 60,
    });
    expectMatchesOpenApi(429, refused.json());
    expect(refused.headers['retry-after']).toBe('60');
    // The key's own limits are untouched: they are what the headers still tell.
    expect(refused.headers['x-ratelimit-remaining']).toBe('3');
    expect((await get('/api/v1/picks?limit=1', key)).statusCode).toBe(200);
    // Another key has its own window.
    expect((await get('/api/v1/usage', other)).statusCode).toBe(200);
    clock.set('2026-11-22T14:00:00Z');
    expect((await get('/api/v1/usage', key)).statusCode).toBe(200);
  });

  it('refuses a missing or refused key with 401 and the Bearer challenge, and the admin token as a refused key', async () => {
    const missing = await get('/api/v1/usage');
    expect(missing.statusCode).toBe(401);
    expect(missing.json()).toMatchObject({ error: 'invalid_api_key' });
    expect(missing.headers['www-authenticate']).toBe('Bearer realm="api"');
    const refused = await get('/api/v1/usage', `service_${'f'.repeat(64)}`);
    expect(refused.statusCode).toBe(401);
    expect(refused.headers['www-authenticate']).toBe('Bearer realm="api", error="invalid_token"');
    const admin = await t.app.inject({ method: 'GET', url: '/api/v1/usage', headers: { authorization: `Bearer ${ADMIN_TOKEN}` } });
    expect(admin.statusCode).toBe(401);
    expect(admin.json()).toMatchObject({ error: 'invalid_api_key' });
    expect(admin.headers['www-authenticate']).toBe('Bearer realm="api", error="invalid_token"');
  });

  it('is documented in the OpenAPI document', () => {
    const operation = openapi.paths['/api/v1/usage']?.get;
    expect(operation?.operationId).toBe('getUsage');
    expect(Object.keys(operation.responses)).toEqual(expect.arrayContaining(['200', '401', '429']));
    // Never counted against the monthly cap, so its 429 is only ever rate_limit_exceeded.
    const codes = JSON.stringify(operation.responses['429'].content);
    expect(codes).toContain('rate_limit_exceeded');
    expect(codes).not.toContain('monthly_quota_exceeded');
  });

  it('on /graphql, apiKeyUsage is an ordinary query: the request is counted like any other', async () => {
    const key = await createKey('STARTER');
    const res = await t.app.inject({
      method: 'POST',
      url: '/graphql',
      headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' },
      payload: { query: '{ apiKeyUsage { tier hourly { used remaining } monthly { used } } }' },
    });
    expect(res.statusCode).toBe(200);
    expect(res.json().data.apiKeyUsage).toEqual({ tier: 'STARTER', hourly: { used: 1, remaining: 2 }, monthly: { used: 1 } });
    expect(res.headers['x-ratelimit-remaining']).toBe('2');
  });
});
