/**
 * HTTP manners: the Bearer challenge on 401 (RFC 6750), `If-None-Match: *` on the public
 * endpoint, the picks stream's opening bytes, and unknown /api/v1 paths answered after the
 * usual checks, with the rate-limit headers.
 */
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestApp, type TestApp } from '../helpers/app.js';
import { CREATE_KEY } from '../helpers/fixtures.js';
import { connectSse, type SseConnection } from '../helpers/sse.js';

let t: TestApp;
let port = 0;
const keys: Record<string, string> = {};
const open: SseConnection[] = [];
const UNKNOWN_KEY = `service_${'0'.repeat(64)}`;
const BARE = 'Bearer realm="api"';
const INVALID_TOKEN = 'Bearer realm="api", error="invalid_token"';

beforeAll(async () => {
  // A heartbeat an hour away: whatever the stream sends first is not a heartbeat.
  t = await createTestApp({ env: { STREAM_HEARTBEAT_SECONDS: '3600', TIER_LIMITS: '{"starter":{"hourly":3}}' } });
  await t.app.listen({ port: 0, host: '127.0.0.1' });
  port = (t.app.server.address() as AddressInfo).port;
  for (const tier of ['STARTER', 'GROWTH', 'ENTERPRISE']) {
    keys[tier.toLowerCase()] = (await t.graphql<{ createApiKey: { key: string } }>(CREATE_KEY, { input: { tier } })).data!.createApiKey.key;
  }
});
afterAll(async () => {
  for (const connection of open) connection.close();
  await t?.close();
});

function get(url: string, authorization?: string, headers: Record<string, string> = {}) {
  return t.app.inject({ method: 'GET', url, headers: { ...(authorization ? { authorization } : {}), ...headers } });
}

describe('401 carries a Bearer challenge (RFC 6750)', () => {
  it('bare without credentials, error="invalid_token" with a refused one, on /api/v1', async () => {
    const missing = await get('/api/v1/picks');
    expect(missing.statusCode).toBe(401);
    expect(missing.headers['www-authenticate']).toBe(BARE);
    for (const authorization of [`Bearer ${UNKNOWN_KEY}`, 'Bearer not-a-key', 'Basic dXNlcjpwYXNz']) {
      const refused = await get('/api/v1/picks', authorization);
      expect(refused.statusCode, authorization).toBe(401);
      expect(refused.json()).toMatchObject({ error: 'invalid_api_key' });
      expect(refused.headers['www-authenticate'], authorization).toBe(INVALID_TOKEN);
    }
  });

  it('on the picks stream, /graphql and /graphql/stream alike', async () => {
    const stream = await get('/api/v1/picks/stream', `Bearer ${UNKNOWN_KEY}`);
    expect(stream.statusCode).toBe(401);
    expect(stream.headers['www-authenticate']).toBe(INVALID_TOKEN);
    const anonymousStream = await get('/api/v1/picks/stream');
    expect(anonymousStream.statusCode).toBe(401);
    expect(anonymousStream.headers['www-authenticate']).toBe(BARE);
    const graphql = await t.app.inject({
      method: 'POST',
      url: '/graphql',
      headers: { authorization: `Bearer ${UNKNOWN_KEY}`, 'content-type': 'application/json' },
      payload: { query: '{ __typename }' },
    });
    expect(graphql.statusCode).toBe(401);
    expect(graphql.headers['www-authenticate']).toBe(INVALID_TOKEN);
    const sse = await t.app.inject({
      method: 'POST',
      url: '/graphql/stream',
      headers: { authorization: `Bearer ${UNKNOWN_KEY}`, 'content-type': 'application/json', accept: 'text/event-stream' },
      payload: { query: 'subscription { pickPublished { sequence } }' },
    });
    expect(sse.statusCode).toBe(401);
    expect(sse.headers['www-authenticate']).toBe(INVALID_TOKEN);
  });

  it('no other status carries it', async () => {
    const forbidden = await get('/api/v1/track-record', `Bearer ${keys.starter}`);
    expect(forbidden.statusCode).toBe(403);
    expect(forbidden.headers['www-authenticate']).toBeUndefined();
  });
});

describe('public endpoint: If-None-Match', () => {
  it('answers 304 to `*` (a representation exists) and to the current tag, 200 to another', async () => {
    const first = await get('/api/public/picks/today');
    expect(first.statusCode).toBe(200);
    const etag = first.headers.etag as string;
    for (const ifNoneMatch of ['*', etag, `W/${etag}`, `"other", ${etag}`]) {
      const again = await get('/api/public/picks/today', undefined, { 'if-none-match': ifNoneMatch });
      expect(again.statusCode, ifNoneMatch).toBe(304);
      expect(again.headers.etag).toBe(etag);
      expect(again.body).toBe('');
    }
    const other = await get('/api/public/picks/today', undefined, { 'if-none-match': '"other"' });
    expect(other.statusCode).toBe(200);
  });
});

describe('picks stream: opening bytes', () => {
  it('writes a comment and the retry hint as soon as the stream is admitted, long before a heartbeat', async () => {
    const connection = await connectSse(port, '/api/v1/picks/stream', { authorization: `Bearer ${keys.enterprise}` });
    open.push(connection);
    expect(connection.status).toBe(200);
    const text = await connection.waitFor('\n\n', 5_000);
    expect(text).toBe(': stream open\nretry: 3000\n\n');
    connection.close();
  });

  it('opens a resuming stream the same way', async () => {
    const connection = await connectSse(port, '/api/v1/picks/stream', { authorization: `Bearer ${keys.enterprise}`, 'last-event-id': '0' });
    open.push(connection);
    expect(connection.status).toBe(200);
    expect(await connection.waitFor('\n\n', 5_000)).toMatch(/^: stream open\nretry: 3000\n\n/);
    connection.close();
  });
});

describe('unknown /api/v1 paths', () => {
  it('answer 404 with the rate-limit headers to a key, counting one unit like any request', async () => {
    const growth = `Bearer ${keys.growth}`;
    const before = await get('/api/v1/picks?limit=1', growth);
    const remaining = Number(before.headers['x-ratelimit-remaining']);
    const unknown = await get('/api/v1/nothing/here?x=1', growth);
    expect(unknown.statusCode).toBe(404);
    expect(unknown.json()).toEqual({ error: 'not_found', message: 'No route for GET /api/v1/nothing/here.' });
    expect(unknown.headers['x-ratelimit-limit']).toBe('1000');
    expect(Number(unknown.headers['x-ratelimit-remaining'])).toBe(remaining - 1);
    expect(unknown.headers['ratelimit-policy']).toContain('"hourly"');
    for (const method of ['POST', 'DELETE', 'PUT'] as const) {
      const other = await t.app.inject({ method, url: '/api/v1', headers: { authorization: growth, 'content-type': 'application/json' }, payload: '{' });
      expect(other.statusCode, method).toBe(404);
      expect(other.headers['x-ratelimit-limit'], method).toBe('1000');
    }
  });

  it('check the key first: 401 for a refused one, 429 once its limit is used up', async () => {
    const refused = await get('/api/v1/nothing', `Bearer ${UNKNOWN_KEY}`);
    expect(refused.statusCode).toBe(401);
    expect(refused.headers['www-authenticate']).toBe(INVALID_TOKEN);
    const starter = `Bearer ${keys.starter}`;
    // The Starter limit is 3 an hour here (one was used by the 403 above).
    for (let i = 0; i < 3; i += 1) await get('/api/v1/nothing', starter);
    const limited = await get('/api/v1/nothing', starter);
    expect(limited.statusCode).toBe(429);
    expect(limited.json()).toMatchObject({ error: 'rate_limit_exceeded' });
    expect(limited.headers['retry-after']).toBeDefined();
    expect(limited.headers['x-ratelimit-remaining']).toBe('0');
  });

  it('without credentials: a plain 404, nothing checked, no rate-limit headers', async () => {
    const anonymous = await get('/api/v1/nothing');
    expect(anonymous.statusCode).toBe(404);
    expect(anonymous.json()).toMatchObject({ error: 'not_found' });
    expect(anonymous.headers['x-ratelimit-limit']).toBeUndefined();
    expect(anonymous.headers['www-authenticate']).toBeUndefined();
  });
});
