/**
 * Requests without credentials to /graphql and /graphql/stream are limited per client address
 * (ANONYMOUS_GRAPHQL_LIMIT per minute, 120 by default; the address as TRUST_PROXY decides it):
 * then 429 rate_limit_exceeded with Retry-After. API keys, the admin and the public REST
 * endpoint are not counted there. On PostgreSQL + Redis the counters live in Redis.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ManualClock } from '../../src/domain/clock.js';
import { clientAddressKey } from '../../src/domain/client-address.js';
import { ADMIN_TOKEN, createTestApp, type TestApp } from '../helpers/app.js';
import { CREATE_KEY } from '../helpers/fixtures.js';

const PROXY = '10.9.0.1';
const QUERY = '{ todayPicks(limit: 1) { id } }';

let t: TestApp;
let small: TestApp;
const clock = new ManualClock('2026-11-22T12:00:00Z');
let apiKey = '';

beforeAll(async () => {
  t = await createTestApp({ clock, env: { TRUST_PROXY: PROXY } });
  small = await createTestApp({ clock, env: { ANONYMOUS_GRAPHQL_LIMIT: '3' } });
  apiKey = (await t.graphql<{ createApiKey: { key: string } }>(CREATE_KEY, { input: { tier: 'ENTERPRISE' } })).data!.createApiKey.key;
});
afterAll(async () => {
  await t?.close();
  await small?.close();
});

interface From {
  address: string;
  forwardedFor?: string;
  authorization?: string;
}

function graphql(app: TestApp, from: From, query = QUERY) {
  return app.app.inject({
    method: 'POST',
    url: '/graphql',
    remoteAddress: from.address,
    headers: {
      'content-type': 'application/json',
      ...(from.forwardedFor ? { 'x-forwarded-for': from.forwardedFor } : {}),
      ...(from.authorization ? { authorization: from.authorization } : {}),
    },
    payload: { query },
  });
}

function stream(app: TestApp, from: From) {
  return app.app.inject({
    method: 'POST',
    url: '/graphql/stream',
    remoteAddress: from.address,
    headers: { 'content-type': 'application/json', accept: 'text/event-stream' },
    payload: { query: QUERY },
  });
}

async function useUp(app: TestApp, from: From, count: number): Promise<void> {
  for (let i = 0; i < count; i += 1) {
    const res = await graphql(app, from);
    expect(res.statusCode, `request ${i + 1}: ${res.body}`).toBe(200);
  }
}

function expectLimited(res: { statusCode: number; headers: Record<string, unknown>; json(): any }, retryAfter: number): void {
  expect(res.statusCode).toBe(429);
  expect(res.headers['retry-after']).toBe(String(retryAfter));
  const error = res.json().errors[0];
  expect(error.extensions).toEqual({ code: 'rate_limit_exceeded', retry_after_seconds: retryAfter });
  expect(error.message).toMatch(/without credentials/);
}

describe('the anonymous GraphQL limit', () => {
  it('admits 120 requests a minute from one address, then answers 429 with Retry-After until the minute ends', async () => {
    clock.set('2026-11-22T12:00:00Z');
    const from = { address: '10.1.0.1' };
    await useUp(t, from, 120);
    clock.set('2026-11-22T12:00:15.200Z');
    expectLimited(await graphql(t, from), 45);
    const sse = await stream(t, from);
    expect(sse.statusCode, sse.body).toBe(429);
    expect(sse.headers['retry-after']).toBe('45');
    expect(sse.json().errors[0].extensions.code).toBe('rate_limit_exceeded');
    clock.set('2026-11-22T12:01:00Z');
    expect((await graphql(t, from)).statusCode).toBe(200);
  });

  it('counts /graphql/stream with /graphql', async () => {
    clock.set('2026-11-22T12:10:00Z');
    const from = { address: '10.1.0.2' };
    for (let i = 0; i < 3; i += 1) expect((await stream(small, from)).statusCode).toBe(200);
    expectLimited(await graphql(small, from), 60);
  });

  it('does not count or limit API keys and the admin', async () => {
    clock.set('2026-11-22T12:20:00Z');
    const from = { address: '10.1.0.3' };
    for (let i = 0; i < 5; i += 1) {
      expect((await graphql(small, { ...from, authorization: `Bearer ${ADMIN_TOKEN}` })).statusCode).toBe(200);
    }
    await useUp(small, from, 3);
    expect((await graphql(small, from)).statusCode).toBe(429);
    // Same address, credentials: served.
    expect((await graphql(small, { ...from, authorization: `Bearer ${ADMIN_TOKEN}` })).statusCode).toBe(200);
    const keyed = await graphql(t, { address: '10.1.0.4', authorization: `Bearer ${apiKey}` });
    expect(keyed.statusCode).toBe(200);
    for (let i = 0; i < 10; i += 1) expect((await graphql(t, { address: '10.1.0.4', authorization: `Bearer ${apiKey}` })).statusCode).toBe(200);
    // The key's requests used none of the address' 120.
    await useUp(t, { address: '10.1.0.4' }, 120);
  });

  it('does not limit the public REST endpoint, nor turn /api/v1 refusals into 429', async () => {
    clock.set('2026-11-22T12:30:00Z');
    const address = '10.1.0.5';
    for (let i = 0; i < 10; i += 1) {
      const res = await small.app.inject({ method: 'GET', url: '/api/public/picks/today', remoteAddress: address });
      expect(res.statusCode).toBe(200);
    }
    await useUp(small, { address }, 3);
    expect((await graphql(small, { address })).statusCode).toBe(429);
    expect((await small.app.inject({ method: 'GET', url: '/api/public/picks/today', remoteAddress: address })).statusCode).toBe(200);
    const rest = await small.app.inject({ method: 'GET', url: '/api/v1/picks', remoteAddress: address });
    expect(rest.statusCode).toBe(401);
  });

  it('counts addresses apart, by X-Forwarded-For only from a trusted proxy', async () => {
    clock.set('2026-11-22T12:40:00Z');
    await useUp(t, { address: PROXY, forwardedFor: '203.0.113.7' }, 120);
    expect((await graphql(t, { address: PROXY, forwardedFor: '203.0.113.7' })).statusCode).toBe(429);
    // Another client behind the same proxy, and the proxy's own address, are counted apart.
    expect((await graphql(t, { address: PROXY, forwardedFor: '203.0.113.8' })).statusCode).toBe(200);
    expect((await graphql(t, { address: PROXY })).statusCode).toBe(200);
    // Without TRUST_PROXY a forged X-Forwarded-For changes nothing: the socket's peer is counted.
    await useUp(small, { address: '10.1.0.6', forwardedFor: '203.0.113.9' }, 3);
    expect((await graphql(small, { address: '10.1.0.6', forwardedFor: '203.0.113.10' })).statusCode).toBe(429);
  });
});

describe('clientAddressKey', () => {
  it.each([
    ['203.0.113.7', '203.0.113.7'],
    ['::ffff:203.0.113.7', '203.0.113.7'],
    ['2001:db8:1:2:3:4:5:6', '2001:db8:1:2::/64'],
    ['2001:db8:1:2::9', '2001:db8:1:2::/64'],
    ['2001:0DB8:0001:0002:ffff::1', '2001:db8:1:2::/64'],
    ['::1', '0:0:0:0::/64'],
    ['fe80::1%eth0', 'fe80:0:0:0::/64'],
    ['64:ff9b::192.0.2.1', '64:ff9b:0:0::/64'],
  ])('%s is counted as %s', (address, key) => {
    expect(clientAddressKey(address)).toBe(key);
  });
});
