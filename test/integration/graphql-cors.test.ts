/**
 * CORS on /graphql: none by default (yoga's own default would echo any origin with
 * Access-Control-Allow-Credentials: true); with GRAPHQL_CORS_ORIGINS, a listed origin gets
 * Access-Control-Allow-Origin and never Allow-Credentials, an unlisted one gets nothing.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ADMIN_TOKEN, createTestApp, type TestApp } from '../helpers/app.js';

const LISTED = 'https://ops.example.com';
const ALSO_LISTED = 'http://127.0.0.1:5173';
const QUERY = { query: '{ todayPicks(limit: 1) { id } }' };

let plain: TestApp;
let configured: TestApp;
beforeAll(async () => {
  plain = await createTestApp();
  configured = await createTestApp({ env: { GRAPHQL_CORS_ORIGINS: `${LISTED},${ALSO_LISTED}` } });
});
afterAll(async () => {
  await plain?.close();
  await configured?.close();
});

function preflight(t: TestApp, origin: string) {
  return t.app.inject({
    method: 'OPTIONS',
    url: '/graphql',
    headers: { origin, 'access-control-request-method': 'POST', 'access-control-request-headers': 'authorization, content-type' },
  });
}

function request(t: TestApp, origin: string) {
  return t.app.inject({
    method: 'POST',
    url: '/graphql',
    headers: { origin, 'content-type': 'application/json', authorization: `Bearer ${ADMIN_TOKEN}`, cookie: 'session=whatever' },
    payload: QUERY,
  });
}

function expectNoCors(headers: Record<string, unknown>): void {
  expect(headers['access-control-allow-origin']).toBeUndefined();
  expect(headers['access-control-allow-credentials']).toBeUndefined();
  expect(headers['access-control-allow-methods']).toBeUndefined();
  expect(headers['access-control-allow-headers']).toBeUndefined();
}

describe('/graphql CORS', () => {
  it('is off by default: a cross-origin preflight and request get no CORS headers', async () => {
    for (const origin of ['https://evil.example', LISTED, 'null']) {
      const pre = await preflight(plain, origin);
      expect(pre.statusCode).toBeLessThan(500);
      expectNoCors(pre.headers);
      const res = await request(plain, origin);
      expect(res.statusCode).toBe(200);
      expectNoCors(res.headers);
    }
  });

  it('answers a listed origin without credentials', async () => {
    for (const origin of [LISTED, ALSO_LISTED]) {
      const pre = await preflight(configured, origin);
      expect(pre.statusCode).toBe(204);
      expect(pre.headers['access-control-allow-origin']).toBe(origin);
      expect(pre.headers['access-control-allow-credentials']).toBeUndefined();
      expect(pre.headers['access-control-allow-methods']).toContain('POST');
      expect(String(pre.headers['access-control-allow-headers']).toLowerCase()).toContain('authorization');
      expect(String(pre.headers.vary)).toMatch(/origin/i);
      const res = await request(configured, origin);
      expect(res.statusCode).toBe(200);
      expect(res.headers['access-control-allow-origin']).toBe(origin);
      expect(res.headers['access-control-allow-credentials']).toBeUndefined();
      expect(String(res.headers['access-control-expose-headers'])).toContain('X-RateLimit-Remaining');
      expect(String(res.headers.vary)).toMatch(/origin/i);
    }
  });

  it('gives an unlisted origin nothing, not even a near miss', async () => {
    for (const origin of ['https://evil.example', 'https://ops.example.com.evil.example', 'http://ops.example.com', 'https://OPS.example.com', 'null']) {
      const pre = await preflight(configured, origin);
      expectNoCors(pre.headers);
      const res = await request(configured, origin);
      expect(res.statusCode).toBe(200);
      expectNoCors(res.headers);
      // Still varies by Origin: a cache must not hand this answer to a listed origin.
      expect(String(res.headers.vary)).toMatch(/origin/i);
    }
  });

  it('leaves the public endpoint open to every origin, without credentials', async () => {
    const res = await configured.app.inject({ method: 'GET', url: '/api/public/picks/today', headers: { origin: 'https://evil.example' } });
    expect(res.headers['access-control-allow-origin']).toBe('*');
    expect(res.headers['access-control-allow-credentials']).toBeUndefined();
  });
});
