/**
 * Hostile query strings on every REST parameter: whatever arrives, the answer is a documented
 * status with a documented code, never a 500.
 */
import fc from 'fast-check';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestApp, type TestApp } from '../helpers/app.js';
import { CREATE_KEY, pickInput, PUBLISH } from '../helpers/fixtures.js';

let t: TestApp;
let key = '';
let pickId = '';

beforeAll(async () => {
  t = await createTestApp({ env: { TIER_LIMITS: '{"enterprise":{"hourly":1000000,"monthly":1000000}}' } });
  key = (await t.graphql<{ createApiKey: { key: string } }>(CREATE_KEY, { input: { tier: 'ENTERPRISE' } })).data!.createApiKey.key;
  pickId = (await t.graphql<{ publishPick: { id: string } }>(PUBLISH, { input: pickInput() })).data!.publishPick.id;
});
afterAll(async () => {
  await t?.close();
});

const DOCUMENTED_CODES = new Set(['invalid_parameter', 'invalid_cursor', 'not_found', 'invalid_request']);

const hostileValue = fc.oneof(
  fc.string(),
  fc.string({ unit: 'grapheme', maxLength: 30 }),
  fc.integer().map(String),
  fc.double().map(String),
  fc.bigInt().map(String),
  fc.constantFrom('', ' ', '-0', '1e3', '0x10', 'null', 'undefined', '[]', '{}', '%', '%00', '2026-02-30T10:00:00Z', '9999-12-31T23:59:59Z', 'NaN', 'Infinity'),
  fc.base64String(),
);

const routes: [string, string[]][] = [
  ['/api/v1/picks', ['sport', 'league', 'since', 'limit', 'cursor']],
  ['/api/v1/track-record', ['sport', 'days_back']],
  ['/api/public/picks/today', ['limit', 'sport']],
];

describe('query parameter fuzzing', () => {
  it.each(routes)('%s answers every input with a documented code', async (path, names) => {
    await fc.assert(
      fc.asyncProperty(fc.dictionary(fc.constantFrom(...names), fc.oneof(hostileValue, fc.array(hostileValue, { maxLength: 3 }))), async (params) => {
        const search = new URLSearchParams();
        for (const [name, value] of Object.entries(params)) {
          for (const item of Array.isArray(value) ? value : [value]) search.append(name, item);
        }
        const res = await t.app.inject({ method: 'GET', url: `${path}?${search}`, headers: { authorization: `Bearer ${key}` } });
        expect(res.statusCode, res.body).not.toBe(500);
        expect([200, 400]).toContain(res.statusCode);
        if (res.statusCode === 400) expect(DOCUMENTED_CODES.has(res.json().error), res.body).toBe(true);
      }),
      { numRuns: 150 },
    );
  });

  it('the match id path parameter never breaks', async () => {
    await fc.assert(
      fc.asyncProperty(fc.oneof(fc.string({ minLength: 1 }), fc.uuid(), fc.constant(pickId)), async (id) => {
        const res = await t.app.inject({ method: 'GET', url: `/api/v1/match-analyses/${encodeURIComponent(id)}`, headers: { authorization: `Bearer ${key}` } });
        expect([200, 404]).toContain(res.statusCode);
        expect(res.statusCode === 404 ? res.json().error : 'ok').toMatch(/^(not_found|ok)$/);
      }),
      { numRuns: 150 },
    );
  });

  it('Authorization headers of any shape are 401 or accepted, never 500', async () => {
    await fc.assert(
      fc.asyncProperty(fc.oneof(fc.string(), fc.string().map((s) => `Bearer ${s}`), fc.constant(`Bearer ${key}`)), async (header) => {
        const safe = header.replace(/[^\t\x20-\x7e]/g, '');
        const res = await t.app.inject({ method: 'GET', url: '/api/v1/picks?limit=1', headers: { authorization: safe } });
        expect([200, 401]).toContain(res.statusCode);
      }),
      { numRuns: 150 },
    );
  });
});
