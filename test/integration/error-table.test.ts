/**
 * The error table (src/domain/errors.ts) walked through HTTP: every code once, with the status
 * of its row, `error` set to the code, its extras in the body and Retry-After where the code
 * says when to come back. Codes a request can reach on a fresh app are driven by one; the
 * others (odd states: a webhook already registered, the eleventh stream, a slow client ...)
 * are thrown as AppErrors from a tiny route whose errors leave through the same exit as every
 * route of the app (handleHttpError). Also: the public endpoint's 503 while the database is
 * down carries Retry-After like every other surface, and a page size or window out of its bound
 * (src/domain/bounds.ts) names the caller's own parameter on each surface.
 */
import Fastify from 'fastify';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { DAYS_BACK, PICKS_PAGE, TODAY_PAGE } from '../../src/domain/bounds.js';
import { AppError, ERRORS, isErrorCode, type ErrorCode, type ErrorExtras } from '../../src/domain/errors.js';
import { handleHttpError } from '../../src/server/http-errors.js';
import { createTestApp, type TestApp } from '../helpers/app.js';
import { CREATE_KEY } from '../helpers/fixtures.js';

interface Answer {
  status: number;
  headers: Record<string, unknown>;
  body: Record<string, unknown>;
}

let t: TestApp;
const keys = { starter: '', limited: '', enterprise: '' };
const STARTER_HOURLY = 3;

/** Rows that a request cannot reach on a fresh test app: thrown from the tiny route. */
const THROWN: readonly ErrorCode[] = [
  'admin_required',
  'field_not_allowed',
  'invalid_transition',
  'duplicate_url',
  'query_too_complex',
  'request_timeout',
  'headers_too_large',
  'monthly_quota_exceeded',
  'subscription_limit',
  'too_many_streams',
  'stream_token_limit',
  'stream_token_rate_limited',
  'invalid_credentials',
  'login_throttled',
  'session_required',
  'invalid_csrf_token',
  'duplicate_email',
  'api_key_limit',
];

/** An unreachable database, as node-postgres reports it. */
function connectionRefused(): Error {
  return Object.assign(new Error('connect ECONNREFUSED 127.0.0.1:5432'), { code: 'ECONNREFUSED' });
}

async function request(method: 'GET' | 'POST' | 'DELETE', url: string, key?: string, payload?: string): Promise<Answer> {
  const headers: Record<string, string> = key ? { authorization: `Bearer ${key}` } : {};
  if (payload !== undefined) headers['content-type'] = 'application/json';
  const res = await t.app.inject({ method, url, headers, payload });
  return { status: res.statusCode, headers: res.headers, body: res.json() };
}

const REAL: Partial<Record<ErrorCode, () => Promise<Answer>>> = {
  invalid_parameter: () => request('GET', '/api/v1/picks?limit=500', keys.enterprise),
  invalid_cursor: () => request('GET', '/api/v1/picks?cursor=garbage', keys.enterprise),
  invalid_request: () => request('POST', '/api/v1/webhooks', keys.enterprise, '{not json'),
  invalid_url: () => request('POST', '/api/v1/webhooks', keys.enterprise, JSON.stringify({ url: 'http://example.com/hook', events: ['pick.published'] })),
  invalid_api_key: () => request('GET', '/api/v1/picks', 'pk_live_not_a_key'),
  tier_upgrade_required: () => request('GET', '/api/v1/track-record', keys.starter),
  not_found: () => request('GET', '/api/v1/nothing-here', keys.enterprise),
  method_not_allowed: () => request('DELETE', '/api/public/picks/today'),
  payload_too_large: () => request('POST', '/api/v1/webhooks', keys.enterprise, JSON.stringify({ url: 'x'.repeat(2 * 1024 * 1024) })),
  rate_limit_exceeded: async () => {
    for (let i = 0; i < STARTER_HOURLY; i += 1) expect((await request('GET', '/api/v1/picks', keys.limited)).status).toBe(200);
    return request('GET', '/api/v1/picks', keys.limited);
  },
  internal_error: async () => {
    const spy = vi.spyOn(t.runtime.services.picks, 'list').mockRejectedValueOnce(new Error('a bug'));
    try {
      return await request('GET', '/api/v1/picks', keys.enterprise);
    } finally {
      spy.mockRestore();
    }
  },
  service_unavailable: async () => {
    const spy = vi.spyOn(t.runtime.services.picks, 'list').mockRejectedValueOnce(connectionRefused());
    try {
      return await request('GET', '/api/v1/picks', keys.enterprise);
    } finally {
      spy.mockRestore();
    }
  },
};

/** A test app with one route that throws the given code (every extra filled in) through the app's own error exit. */
async function thrownApp() {
  const app = Fastify({ logger: false });
  app.setErrorHandler(handleHttpError);
  app.get('/throw/:code', async (req) => {
    const { code } = req.params as { code: string };
    if (!isErrorCode(code)) throw new Error(`not a code: ${code}`);
    const extras: ErrorExtras = Object.fromEntries(ERRORS[code].extras.map((name) => [name, name === 'retry_after_seconds' ? 42 : `${name}-value`]));
    throw new AppError(code, undefined, extras);
  });
  await app.ready();
  return app;
}
let thrown: Awaited<ReturnType<typeof thrownApp>>;

beforeAll(async () => {
  t = await createTestApp({ env: { TIER_LIMITS: JSON.stringify({ starter: { hourly: STARTER_HOURLY } }) }, captureLogs: true });
  const create = async (tier: string) => (await t.graphql<{ createApiKey: { key: string } }>(CREATE_KEY, { input: { tier } })).data!.createApiKey.key;
  keys.starter = await create('STARTER');
  keys.limited = await create('STARTER');
  keys.enterprise = await create('ENTERPRISE');
  thrown = await thrownApp();
});
afterAll(async () => {
  await thrown?.close();
  await t?.close();
});

describe('the error table through HTTP', () => {
  it('every code is driven here exactly once (by a request, or thrown)', () => {
    const driven = [...Object.keys(REAL), ...THROWN].sort();
    expect(driven).toEqual(Object.keys(ERRORS).sort());
  });

  it.each(Object.keys(ERRORS) as ErrorCode[])('%s', async (code) => {
    const row = ERRORS[code];
    const real = REAL[code];
    let answer: Answer;
    if (real) {
      answer = await real();
    } else {
      const res = await thrown.inject({ method: 'GET', url: `/throw/${code}` });
      answer = { status: res.statusCode, headers: res.headers, body: res.json() };
      // Thrown without a message: the row's default.
      expect(answer.body.message).toBe(row.message);
    }
    expect(answer.status).toBe(row.status);
    expect(answer.body.error).toBe(code);
    expect(answer.body.message).toEqual(expect.any(String));
    expect((answer.body.message as string).length).toBeGreaterThan(0);
    for (const extra of row.extras) expect(answer.body).toHaveProperty(extra);
    if (code === 'internal_error' || code === 'service_unavailable') expect(answer.body.message).toBe(row.message);
    // Retry-After where the answer says when to come back.
    const retryAfter = answer.body.retry_after_seconds ?? ('retryAfterSeconds' in row ? row.retryAfterSeconds : undefined);
    if (retryAfter !== undefined) expect(answer.headers['retry-after']).toBe(String(retryAfter));
  });
});

describe('database down', () => {
  it('GET /api/public/picks/today answers 503 service_unavailable with Retry-After, CORS, no-store and indented JSON', async () => {
    const spy = vi.spyOn(t.runtime.services.picks, 'today').mockRejectedValue(connectionRefused());
    try {
      const res = await t.app.inject({ method: 'GET', url: '/api/public/picks/today?limit=7' });
      expect(res.statusCode).toBe(503);
      expect(res.headers['retry-after']).toBe('1');
      expect(res.headers['access-control-allow-origin']).toBe('*');
      expect(res.headers['cache-control']).toBe('no-store');
      expect(res.json()).toEqual({ error: 'service_unavailable', message: ERRORS.service_unavailable.message });
      expect(res.body).toContain('\n  "error"');
    } finally {
      spy.mockRestore();
    }
    // The refusal was answered, not cached: the database back, the same request is served at once.
    const back = await t.app.inject({ method: 'GET', url: '/api/public/picks/today?limit=7' });
    expect(back.statusCode).toBe(200);
  });

  it('/api/v1 and /graphql send the same Retry-After', async () => {
    const spy = vi.spyOn(t.runtime.services.picks, 'list').mockRejectedValue(connectionRefused());
    try {
      const rest = await t.app.inject({ method: 'GET', url: '/api/v1/picks', headers: { authorization: `Bearer ${keys.enterprise}` } });
      expect(rest.statusCode).toBe(503);
      expect(rest.headers['retry-after']).toBe('1');
      const graphql = await t.app.inject({
        method: 'POST',
        url: '/graphql',
        headers: { authorization: `Bearer ${keys.enterprise}`, 'content-type': 'application/json' },
        payload: { query: '{ picks { count } }' },
      });
      expect(graphql.json().errors[0].extensions.code).toBe('service_unavailable');
      expect(graphql.headers['retry-after']).toBe('1');
    } finally {
      spy.mockRestore();
    }
  });
});

describe("bounds: out of range names the caller's parameter", () => {
  async function graphqlParameter(query: string, key?: string): Promise<unknown> {
    const res = await t.graphql(query, {}, key ? `Bearer ${key}` : null);
    expect(res.errors?.[0]?.extensions?.code).toBe('invalid_parameter');
    return res.errors?.[0]?.extensions?.parameter;
  }
  async function restParameter(url: string, key?: string): Promise<unknown> {
    const answer = await request('GET', url, key);
    expect(answer.status).toBe(400);
    expect(answer.body.error).toBe('invalid_parameter');
    return answer.body.parameter;
  }

  it('picks: first on GraphQL, limit on REST', async () => {
    expect(await graphqlParameter(`{ picks(first: ${PICKS_PAGE.max + 300}) { count } }`, keys.enterprise)).toBe('first');
    expect(await restParameter(`/api/v1/picks?limit=${PICKS_PAGE.max + 300}`, keys.enterprise)).toBe('limit');
    expect((await request('GET', `/api/v1/picks?limit=${PICKS_PAGE.max}`, keys.enterprise)).status).toBe(200);
  });

  it('track record: daysBack on GraphQL, days_back on REST', async () => {
    expect(await graphqlParameter(`{ trackRecord(daysBack: ${DAYS_BACK.max + 1}) { overall { roiPct } } }`, keys.enterprise)).toBe('daysBack');
    expect(await restParameter(`/api/v1/track-record?days_back=${DAYS_BACK.max + 1}`, keys.enterprise)).toBe('days_back');
  });

  it("today's picks: limit on both", async () => {
    expect(await graphqlParameter(`{ todayPicks(limit: ${TODAY_PAGE.max + 1}) { id } }`)).toBe('limit');
    expect(await restParameter(`/api/public/picks/today?limit=${TODAY_PAGE.max + 1}`)).toBe('limit');
  });
});
