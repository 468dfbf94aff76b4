/**
 * /api/v1/webhooks through HTTP (inject): shapes (validated against the served OpenAPI
 * document), secrets shown only on creation and rotation and stored encrypted, 409 before
 * 429, ownership (404), tier (403), auth (401), one unit per request, every wrong form of
 * every body field (a documented 400, never a 500), 405 with Allow, deliveries pagination,
 * and a fuzz of the creation body.
 *
 * Nothing is ever sent: the dispatcher is stopped before anything else, and webhook URLs
 * only name hooks.test (a loopback override) or IP literals, so no DNS lookup happens either.
 */
import fc from 'fast-check';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ADMIN_TOKEN, createTestApp, type TestApp } from '../helpers/app.js';
import { BODY_LIMIT_BYTES } from '../../src/server/http-limits.js';
import { openApiValidator, type OpenApiValidator } from '../helpers/openapi.js';
import { CREATE_KEY, pickInput, PUBLISH } from '../helpers/fixtures.js';
import { waitUntil } from '../helpers/processes.js';

let t: TestApp;
let openapi: any;
let validator: OpenApiValidator;
let starterKey = '';

const BASE = '/api/v1/webhooks';
const UNKNOWN_ID = '00000000-0000-7000-8000-000000000000';
const LIMITS = '{"starter":{"hourly":100000,"monthly":1000000},"growth":{"hourly":100000,"monthly":1000000},"enterprise":{"hourly":100000,"monthly":1000000}}';

async function createKey(tier = 'GROWTH'): Promise<string> {
  const res = await t.graphql<{ createApiKey: { key: string } }>(CREATE_KEY, { input: { tier } });
  return res.data!.createApiKey.key;
}

interface CallOptions {
  key?: string | null;
  /** An object is sent as JSON; a string is sent as is (with contentType). */
  body?: unknown;
  contentType?: string;
  headers?: Record<string, string>;
}

function call(method: string, url: string, options: CallOptions = {}) {
  const headers: Record<string, string> = { ...(options.key ? { authorization: `Bearer ${options.key}` } : {}), ...options.headers };
  let payload: string | undefined;
  if (options.body !== undefined) {
    payload = typeof options.body === 'string' ? options.body : JSON.stringify(options.body);
    // contentType '' sends the body without a Content-Type header.
    if (options.contentType !== '') headers['content-type'] = options.contentType ?? 'application/json';
  } else if (options.contentType) {
    headers['content-type'] = options.contentType;
  }
  return t.app.inject({ method: method as 'GET', url, headers, ...(payload !== undefined ? { payload } : {}) });
}

/** Validates a response body against the OpenAPI document the server itself serves. */
function expectMatchesOpenApi(path: string, method: string, status: number, body: unknown): void {
  const operation = openapi.paths[path]?.[method.toLowerCase()];
  expect(operation, `no operation ${method} ${path}`).toBeDefined();
  const schema = operation.responses[String(status)]?.content?.['application/json']?.schema;
  expect(schema, `no schema for ${method} ${path} ${status}`).toBeDefined();
  expect(validator.errorsOf(schema, body)).toBeNull();
}

/** The OpenAPI path of a concrete URL. */
function documentedPath(url: string): string {
  return url
    .split('?')[0]!
    .replace(/^\/api\/v1\/webhooks\/[^/]+/, '/api/v1/webhooks/{id}');
}

async function create(key: string, url: string, events: string[] = ['pick.published']) {
  const res = await call('POST', BASE, { key, body: { url, events } });
  expect(res.statusCode, res.body).toBe(201);
  return res.json() as { subscription_id: string; url: string; events: string[]; hmac_secret: string; status: string; created_at: string };
}

async function execute(sql: string, params: unknown[] = []) {
  return t.runtime.orm.em.fork().execute<Record<string, unknown>[]>(sql, params);
}

beforeAll(async () => {
  t = await createTestApp({ env: { WEBHOOK_HOST_OVERRIDES: 'hooks.test=127.0.0.1', TIER_LIMITS: LIMITS } });
  // No attempt is ever made from this file: deliveries stay pending.
  await t.runtime.dispatcher.stop();
  starterKey = await createKey('STARTER');
  openapi = (await t.app.inject({ method: 'GET', url: '/api/v1/openapi.json' })).json();
  validator = openApiValidator(openapi);
});
afterAll(async () => {
  await t?.close();
});

describe('POST /api/v1/webhooks', () => {
  it('201 with the four documented fields plus status and created_at; hmac_secret starts whsec_', async () => {
    const key = await createKey();
    const res = await call('POST', BASE, { key, body: { url: 'https://hooks.test:9/a', events: ['pick.settled', 'pick.published'] } });
    expect(res.statusCode).toBe(201);
    const body = res.json();
    expect(Object.keys(body)).toEqual(['subscription_id', 'url', 'events', 'hmac_secret', 'status', 'created_at']);
    expect(body).toEqual({
      subscription_id: expect.stringMatching(/^[0-9a-f-]{36}$/),
      url: 'https://hooks.test:9/a',
      events: ['pick.published', 'pick.settled'],
      hmac_secret: expect.stringMatching(/^whsec_/),
      status: 'active',
      created_at: expect.any(String),
    });
    expect(Number.isNaN(Date.parse(body.created_at))).toBe(false);
    expectMatchesOpenApi(BASE, 'POST', 201, body);
    expect(res.headers['x-ratelimit-limit']).toBe('100000');
    expect(res.headers['x-request-id']).toBeTruthy();
  });

  it('accepts a charset parameter and ignores unknown fields', async () => {
    const key = await createKey();
    const res = await call('POST', BASE, {
      key,
      body: { url: 'https://hooks.test:9/extra', events: ['pick.published'], secret: 'mine', status: 'exhausted', apiKeyId: UNKNOWN_ID },
      contentType: 'application/json; charset=utf-8',
    });
    expect(res.statusCode, res.body).toBe(201);
    expect(res.json()).toMatchObject({ status: 'active', events: ['pick.published'] });
    expect(res.json().hmac_secret).not.toBe('mine');
  });

  it('409 duplicate_url (with subscription_id) is checked before 429 subscription_limit (with limit)', async () => {
    const key = await createKey();
    const ids: string[] = [];
    for (let i = 1; i <= 5; i += 1) ids.push((await create(key, `https://hooks.test:9/limit-${i}`)).subscription_id);
    const duplicate = await call('POST', BASE, { key, body: { url: 'https://hooks.test:9/limit-3', events: ['pick.settled'] } });
    expect(duplicate.statusCode).toBe(409);
    expect(duplicate.json()).toEqual({ error: 'duplicate_url', message: expect.any(String), subscription_id: ids[2] });
    expectMatchesOpenApi(BASE, 'POST', 409, duplicate.json());
    const sixth = await call('POST', BASE, { key, body: { url: 'https://hooks.test:9/limit-6', events: ['pick.published'] } });
    expect(sixth.statusCode).toBe(429);
    expect(sixth.json()).toEqual({ error: 'subscription_limit', message: expect.any(String), limit: 5 });
    expect(sixth.headers['retry-after']).toBeUndefined();
    expectMatchesOpenApi(BASE, 'POST', 429, sixth.json());
    // The limit is per key: another key may still use the same url.
    expect((await call('POST', BASE, { key: await createKey(), body: { url: 'https://hooks.test:9/limit-3', events: ['pick.published'] } })).statusCode).toBe(201);
    // Deleting one frees a place.
    expect((await call('DELETE', `${BASE}/${ids[0]}`, { key })).statusCode).toBe(204);
    expect((await call('POST', BASE, { key, body: { url: 'https://hooks.test:9/limit-6', events: ['pick.published'] } })).statusCode).toBe(201);
  });

  it('a url equal after normalisation is a duplicate too', async () => {
    const key = await createKey();
    await create(key, 'https://hooks.test:9/norm');
    const res = await call('POST', BASE, { key, body: { url: 'HTTPS://HOOKS.TEST:9/norm', events: ['pick.published'] } });
    expect(res.statusCode).toBe(409);
    expect(res.json().error).toBe('duplicate_url');
  });
});

describe('secrets are never cached', () => {
  it('every answer that shows a secret says Cache-Control: no-store (REST create, rotate-secret, stream token; GraphQL); others do not', async () => {
    const key = await createKey();
    const created = await call('POST', BASE, { key, body: { url: 'https://hooks.test:9/no-store', events: ['pick.published'] } });
    expect(created.statusCode).toBe(201);
    expect(created.headers['cache-control']).toBe('no-store');
    const id = created.json().subscription_id as string;
    const rotated = await call('POST', `${BASE}/${id}/rotate-secret`, { key });
    expect(rotated.statusCode).toBe(200);
    expect(rotated.headers['cache-control']).toBe('no-store');
    // A read shows no secret, and says nothing of caching (as before).
    expect((await call('GET', `${BASE}/${id}`, { key })).headers['cache-control']).toBeUndefined();
    const enterprise = await createKey('ENTERPRISE');
    const minted = await t.app.inject({ method: 'POST', url: '/api/v1/stream-tokens', headers: { authorization: `Bearer ${enterprise}` } });
    expect(minted.statusCode).toBe(201);
    expect(minted.headers['cache-control']).toBe('no-store');
    // GraphQL: createApiKey shows a key once, and no GraphQL answer is cached.
    const graphql = await t.app.inject({
      method: 'POST',
      url: '/graphql',
      headers: { authorization: `Bearer ${ADMIN_TOKEN}`, 'content-type': 'application/json' },
      payload: { query: 'mutation { createApiKey(input: { tier: STARTER }) { key } }' },
    });
    expect(graphql.json().data.createApiKey.key).toEqual(expect.any(String));
    expect(graphql.headers['cache-control']).toBe('no-store');
    // The documented answers say so too.
    const openapi = (await t.app.inject({ method: 'GET', url: '/api/v1/openapi.json' })).json();
    for (const [path, method, status] of [[BASE, 'post', '201'], [`${BASE}/{id}/rotate-secret`, 'post', '200'], ['/api/v1/stream-tokens', 'post', '201']] as const) {
      expect(openapi.paths[path][method].responses[status].headers['Cache-Control'], `${method} ${path}`).toMatchObject({ schema: { const: 'no-store' } });
    }
  });
});

describe('body rules of POST /api/v1/webhooks', () => {
  let key = '';
  beforeAll(async () => {
    key = await createKey();
  });
  const valid = { url: 'https://hooks.test:9/body', events: ['pick.published'] };

  const cases: [string, CallOptions, string, string?][] = [
    ['no body', {}, 'invalid_request'],
    ['an empty body with Content-Type application/json', { body: '' }, 'invalid_request'],
    ['a body that is not JSON', { body: '{"url": ' }, 'invalid_request'],
    ['a JSON array', { body: [valid] }, 'invalid_request'],
    ['a JSON string', { body: '"https://hooks.test/a"' }, 'invalid_request'],
    ['a JSON number', { body: '42' }, 'invalid_request'],
    ['JSON null', { body: 'null' }, 'invalid_request'],
    ['Content-Type text/plain', { body: JSON.stringify(valid), contentType: 'text/plain' }, 'invalid_request'],
    ['no Content-Type', { body: JSON.stringify(valid), contentType: '' }, 'invalid_request'],
    ['Content-Type application/merge-patch+json', { body: JSON.stringify(valid), contentType: 'application/merge-patch+json' }, 'invalid_request'],
    ['Content-Type application/x-www-form-urlencoded', { body: 'url=https://hooks.test/a&events=pick.published', contentType: 'application/x-www-form-urlencoded' }, 'invalid_request'],
    ['a __proto__ key', { body: '{"url":"https://hooks.test:9/p","events":["pick.published"],"__proto__":{"admin":true}}' }, 'invalid_request'],
    ['an empty object', { body: {} }, 'invalid_request'],
    ['url missing', { body: { events: ['pick.published'] } }, 'invalid_request'],
    ['events missing', { body: { url: valid.url } }, 'invalid_request'],
    ['url null', { body: { ...valid, url: null } }, 'invalid_parameter', 'url'],
    ['url a number', { body: { ...valid, url: 443 } }, 'invalid_parameter', 'url'],
    ['url an object', { body: { ...valid, url: { href: valid.url } } }, 'invalid_parameter', 'url'],
    ['url an array', { body: { ...valid, url: [valid.url] } }, 'invalid_parameter', 'url'],
    ['url a boolean', { body: { ...valid, url: true } }, 'invalid_parameter', 'url'],
    ['events null', { body: { ...valid, events: null } }, 'invalid_parameter', 'events'],
    ['events a string', { body: { ...valid, events: 'pick.published' } }, 'invalid_parameter', 'events'],
    ['events a number', { body: { ...valid, events: 1 } }, 'invalid_parameter', 'events'],
    ['events an object', { body: { ...valid, events: { 'pick.published': true } } }, 'invalid_parameter', 'events'],
    ['events an empty array', { body: { ...valid, events: [] } }, 'invalid_parameter', 'events'],
    ['an unknown event', { body: { ...valid, events: ['pick.deleted'] } }, 'invalid_parameter', 'events'],
    ['a GraphQL enum name as event', { body: { ...valid, events: ['PICK_PUBLISHED'] } }, 'invalid_parameter', 'events'],
    ['an upper-case event', { body: { ...valid, events: ['Pick.Published'] } }, 'invalid_parameter', 'events'],
    ['a duplicate event', { body: { ...valid, events: ['pick.published', 'pick.published'] } }, 'invalid_parameter', 'events'],
    ['a number among events', { body: { ...valid, events: ['pick.published', 1] } }, 'invalid_parameter', 'events'],
    ['null among events', { body: { ...valid, events: [null] } }, 'invalid_parameter', 'events'],
    ['a nested array of events', { body: { ...valid, events: [['pick.published']] } }, 'invalid_parameter', 'events'],
    ['an http:// url', { body: { ...valid, url: 'http://hooks.test:9/a' } }, 'invalid_url'],
    ['a url with user:pass', { body: { ...valid, url: 'https://user:pass@hooks.test:9/a' } }, 'invalid_url'],
    ['a url with a user only', { body: { ...valid, url: 'https://user@hooks.test:9/a' } }, 'invalid_url'],
    ['a url with a fragment', { body: { ...valid, url: 'https://hooks.test:9/a#x' } }, 'invalid_url'],
    ['a loopback IPv4 url', { body: { ...valid, url: 'https://127.0.0.1/hook' } }, 'invalid_url'],
    ['a loopback IPv4 url in hex', { body: { ...valid, url: 'https://0x7f.1/hook' } }, 'invalid_url'],
    ['a loopback IPv6 url', { body: { ...valid, url: 'https://[::1]/hook' } }, 'invalid_url'],
    ['an IPv4-mapped private url', { body: { ...valid, url: 'https://[::ffff:10.0.0.1]/hook' } }, 'invalid_url'],
    ['a private 10/8 url', { body: { ...valid, url: 'https://10.0.0.1/hook' } }, 'invalid_url'],
    ['a private 192.168/16 url', { body: { ...valid, url: 'https://192.168.1.10/hook' } }, 'invalid_url'],
    ['a link-local metadata url', { body: { ...valid, url: 'https://169.254.169.254/latest/meta-data' } }, 'invalid_url'],
    ['a CGNAT url', { body: { ...valid, url: 'https://100.64.0.1/hook' } }, 'invalid_url'],
    ['a too long url', { body: { ...valid, url: `https://hooks.test:9/${'a'.repeat(2100)}` } }, 'invalid_url'],
    ['an empty url', { body: { ...valid, url: '' } }, 'invalid_url'],
    ['a url that is not a URL', { body: { ...valid, url: 'not a url' } }, 'invalid_url'],
    ['a relative url', { body: { ...valid, url: '/hooks' } }, 'invalid_url'],
  ];

  it.each(cases)('400 for %s', async (_name, options, code, parameter) => {
    const res = await call('POST', BASE, { key, ...options });
    expect(res.statusCode, res.body).toBe(400);
    const body = res.json();
    expect(body).toMatchObject({ error: code, message: expect.any(String) });
    if (parameter) expect(body.parameter).toBe(parameter);
    else expect(body.parameter).toBeUndefined();
    expectMatchesOpenApi(BASE, 'POST', 400, body);
    expect(res.headers['x-ratelimit-remaining']).toBeDefined();
  });

  it('names the missing field', async () => {
    expect((await call('POST', BASE, { key, body: { events: ['pick.published'] } })).json().message).toContain('url');
    expect((await call('POST', BASE, { key, body: { url: valid.url } })).json().message).toContain('events');
  });

  it('none of them created anything', async () => {
    const list = await call('GET', BASE, { key });
    expect(list.json()).toEqual({ data: [], count: 0 });
  });

  it('413 payload_too_large for a body over 64 KiB', async () => {
    const res = await call('POST', BASE, { key, body: { ...valid, padding: 'x'.repeat(BODY_LIMIT_BYTES) } });
    expect(res.statusCode).toBe(413);
    expect(res.json()).toMatchObject({ error: 'payload_too_large', message: expect.any(String) });
    expectMatchesOpenApi(BASE, 'POST', 413, res.json());
  });
});

describe('GET /api/v1/webhooks and /api/v1/webhooks/:id', () => {
  it('never include hmac_secret', async () => {
    const key = await createKey();
    const a = await create(key, 'https://hooks.test:9/list-a');
    const b = await create(key, 'https://hooks.test:9/list-b', ['pick.settled']);
    const list = await call('GET', BASE, { key });
    expect(list.statusCode).toBe(200);
    const { hmac_secret: _a, ...publicA } = a;
    const { hmac_secret: _b, ...publicB } = b;
    expect(list.json()).toEqual({ data: [publicA, publicB], count: 2 });
    expect(list.body).not.toContain('whsec_');
    expectMatchesOpenApi(BASE, 'GET', 200, list.json());
    const one = await call('GET', `${BASE}/${b.subscription_id}`, { key });
    expect(one.statusCode).toBe(200);
    expect(one.json()).toEqual(publicB);
    expect(one.body).not.toContain('whsec_');
    expectMatchesOpenApi('/api/v1/webhooks/{id}', 'GET', 200, one.json());
  });

  it('an empty list', async () => {
    const res = await call('GET', BASE, { key: await createKey('ENTERPRISE') });
    expect(res.statusCode).toBe(200);
    expect(res.json()).toEqual({ data: [], count: 0 });
  });

  it.each([
    ['an unknown id', UNKNOWN_ID],
    ['a malformed id', 'not-a-uuid'],
    ['an upper-case id', 'ZZZ'],
    ['an encoded slash', 'a%2Fb'],
  ])('404 not_found for %s', async (_name, id) => {
    const res = await call('GET', `${BASE}/${id}`, { key: await createKey() });
    expect(res.statusCode).toBe(404);
    expect(res.json()).toMatchObject({ error: 'not_found' });
    expectMatchesOpenApi('/api/v1/webhooks/{id}', 'GET', 404, res.json());
  });
});

describe('ownership, tier and authentication on every route', () => {
  let owner = '';
  let other = '';
  let id = '';
  beforeAll(async () => {
    owner = await createKey();
    other = await createKey('ENTERPRISE');
    id = (await create(owner, 'https://hooks.test:9/owned')).subscription_id;
  });

  const routes = (subscriptionId: string): [string, string, unknown?][] => [
    ['POST', BASE, { url: 'https://hooks.test:9/tier', events: ['pick.published'] }],
    ['GET', BASE],
    ['GET', `${BASE}/${subscriptionId}`],
    ['PATCH', `${BASE}/${subscriptionId}`, { status: 'active' }],
    ['DELETE', `${BASE}/${subscriptionId}`],
    ['POST', `${BASE}/${subscriptionId}/rotate-secret`],
    ['GET', `${BASE}/${subscriptionId}/deliveries`],
  ];

  it("another key's subscription is 404 on get, patch, delete, rotate-secret and deliveries", async () => {
    for (const [method, url, body] of routes(id).filter(([, url]) => url !== BASE)) {
      const res = await call(method, url, { key: other, body });
      expect(res.statusCode, `${method} ${url}`).toBe(404);
      expect(res.json()).toMatchObject({ error: 'not_found' });
      expectMatchesOpenApi(documentedPath(url), method, 404, res.json());
    }
    expect((await call('GET', BASE, { key: other })).json().count).toBe(0);
    // Untouched: same secret-less view for the owner, still there.
    const mine = await call('GET', `${BASE}/${id}`, { key: owner });
    expect(mine.statusCode).toBe(200);
    expect(mine.json().url).toBe('https://hooks.test:9/owned');
  });

  it('a starter key gets 403 tier_upgrade_required (minimum_tier growth) on every route, even with a bad body', async () => {
    for (const [method, url, body] of routes(id)) {
      for (const options of [{ body }, { body: '{"url": ' }, { body: [1] }]) {
        const res = await call(method, url, { key: starterKey, ...options });
        expect(res.statusCode, `${method} ${url} ${res.body}`).toBe(403);
        expect(res.json()).toEqual({ error: 'tier_upgrade_required', message: expect.any(String), minimum_tier: 'growth' });
        expect(res.headers['x-ratelimit-limit']).toBeDefined();
        expectMatchesOpenApi(documentedPath(url), method, 403, res.json());
      }
    }
  });

  it('no key, or an invalid one, is 401 invalid_api_key on every route, even with a bad body', async () => {
    for (const [method, url, body] of routes(id)) {
      for (const key of [null, `service_${'0'.repeat(64)}`, 'garbage']) {
        for (const options of [{ body }, { body: 'not json' }]) {
          const res = await call(method, url, { key, ...options });
          expect(res.statusCode, `${method} ${url}`).toBe(401);
          expect(res.json()).toEqual({ error: 'invalid_api_key', message: expect.any(String) });
          expect(res.headers['x-ratelimit-limit']).toBeUndefined();
          expectMatchesOpenApi(documentedPath(url), method, 401, res.json());
        }
      }
    }
  });

  it('every request with a valid key counts exactly one unit and carries the headers (200, 201, 204, 400, 404)', async () => {
    const key = await createKey();
    const created = await call('POST', BASE, { key, body: { url: 'https://hooks.test:9/units', events: ['pick.published'] } });
    expect(created.statusCode).toBe(201);
    let remaining = Number(created.headers['x-ratelimit-remaining']);
    const subscriptionId = created.json().subscription_id;
    const sequence: [string, string, CallOptions, number][] = [
      ['GET', BASE, {}, 200],
      ['POST', BASE, { body: '{"url": ' }, 400],
      ['POST', BASE, { body: { url: 'http://hooks.test/x', events: ['pick.published'] } }, 400],
      ['GET', `${BASE}/${UNKNOWN_ID}`, {}, 404],
      ['PATCH', `${BASE}/${subscriptionId}`, { body: {} }, 400],
      ['PATCH', `${BASE}/${subscriptionId}`, { body: { events: ['pick.settled'] } }, 200],
      ['POST', `${BASE}/${subscriptionId}/rotate-secret`, {}, 200],
      ['GET', `${BASE}/${subscriptionId}/deliveries?limit=0`, {}, 400],
      ['GET', `${BASE}/${subscriptionId}/deliveries`, {}, 200],
      ['DELETE', `${BASE}/${subscriptionId}`, {}, 204],
      ['DELETE', `${BASE}/${subscriptionId}`, {}, 404],
    ];
    for (const [method, url, options, status] of sequence) {
      const res = await call(method, url, { key, ...options });
      expect(res.statusCode, `${method} ${url} ${res.body}`).toBe(status);
      remaining -= 1;
      expect(res.headers['x-ratelimit-remaining'], `${method} ${url}`).toBe(String(remaining));
      expect(res.headers['x-ratelimit-limit']).toBe('100000');
      expect(res.headers['x-ratelimit-reset']).toMatch(/^\d+$/);
    }
    // A wrong method is refused before authentication and is not counted.
    const wrong = await call('PUT', `${BASE}/${subscriptionId}`, { key, body: {} });
    expect(wrong.statusCode).toBe(405);
    expect(wrong.headers['x-ratelimit-remaining']).toBeUndefined();
    const next = await call('GET', BASE, { key });
    expect(next.headers['x-ratelimit-remaining']).toBe(String(remaining - 1));
  });
});

describe('PATCH /api/v1/webhooks/:id', () => {
  let key = '';
  let id = '';
  beforeAll(async () => {
    key = await createKey();
    id = (await create(key, 'https://hooks.test:9/patch')).subscription_id;
    await create(key, 'https://hooks.test:9/patch-other');
  });

  it('changes url and events; GET shows the change', async () => {
    const res = await call('PATCH', `${BASE}/${id}`, { key, body: { url: 'https://hooks.test:9/patched', events: ['pick.settled', 'pick.published'] } });
    expect(res.statusCode, res.body).toBe(200);
    expect(res.json()).toMatchObject({ subscription_id: id, url: 'https://hooks.test:9/patched', events: ['pick.published', 'pick.settled'], status: 'active' });
    expect(res.json().hmac_secret).toBeUndefined();
    expectMatchesOpenApi('/api/v1/webhooks/{id}', 'PATCH', 200, res.json());
    expect((await call('GET', `${BASE}/${id}`, { key })).json()).toEqual(res.json());
    const eventsOnly = await call('PATCH', `${BASE}/${id}`, { key, body: { events: ['pick.settled'] } });
    expect(eventsOnly.json()).toMatchObject({ url: 'https://hooks.test:9/patched', events: ['pick.settled'] });
  });

  it('reactivates an exhausted subscription with status "active"', async () => {
    await execute(`update webhook_subscriptions set status = 'exhausted' where id = ?`, [id]);
    expect((await call('GET', `${BASE}/${id}`, { key })).json().status).toBe('exhausted');
    const res = await call('PATCH', `${BASE}/${id}`, { key, body: { status: 'active' } });
    expect(res.statusCode).toBe(200);
    expect(res.json().status).toBe('active');
    expect((await call('GET', `${BASE}/${id}`, { key })).json().status).toBe('active');
    // Already active: idempotent.
    expect((await call('PATCH', `${BASE}/${id}`, { key, body: { status: 'active' } })).json().status).toBe('active');
  });

  it('409 duplicate_url when the new url is another subscription of the key', async () => {
    const res = await call('PATCH', `${BASE}/${id}`, { key, body: { url: 'https://hooks.test:9/patch-other' } });
    expect(res.statusCode).toBe(409);
    expect(res.json()).toMatchObject({ error: 'duplicate_url', subscription_id: expect.any(String) });
    expectMatchesOpenApi('/api/v1/webhooks/{id}', 'PATCH', 409, res.json());
    // Its own url is not a duplicate.
    expect((await call('PATCH', `${BASE}/${id}`, { key, body: { url: 'https://hooks.test:9/patched' } })).statusCode).toBe(200);
  });

  const cases: [string, CallOptions, string, string?][] = [
    ['an empty object', { body: {} }, 'invalid_request'],
    ['unknown fields only', { body: { foo: 1, hmac_secret: 'whsec_x' } }, 'invalid_request'],
    ['no body', {}, 'invalid_request'],
    ['a body that is not JSON', { body: '{status: active}' }, 'invalid_request'],
    ['a JSON array', { body: [{ status: 'active' }] }, 'invalid_request'],
    ['Content-Type text/plain', { body: '{"status":"active"}', contentType: 'text/plain' }, 'invalid_request'],
    ['status "exhausted"', { body: { status: 'exhausted' } }, 'invalid_parameter', 'status'],
    ['status "ACTIVE"', { body: { status: 'ACTIVE' } }, 'invalid_parameter', 'status'],
    ['status "paused"', { body: { status: 'paused' } }, 'invalid_parameter', 'status'],
    ['status null', { body: { status: null } }, 'invalid_parameter', 'status'],
    ['status true', { body: { status: true } }, 'invalid_parameter', 'status'],
    ['url null', { body: { url: null } }, 'invalid_parameter', 'url'],
    ['url a number', { body: { url: 5 } }, 'invalid_parameter', 'url'],
    ['an http:// url', { body: { url: 'http://hooks.test:9/a' } }, 'invalid_url'],
    ['a private url', { body: { url: 'https://172.16.0.1/a' } }, 'invalid_url'],
    ['events null', { body: { events: null } }, 'invalid_parameter', 'events'],
    ['events empty', { body: { events: [] } }, 'invalid_parameter', 'events'],
    ['an unknown event', { body: { events: ['pick.voided'] } }, 'invalid_parameter', 'events'],
    ['a duplicate event', { body: { events: ['pick.settled', 'pick.settled'] } }, 'invalid_parameter', 'events'],
    ['a good url with a bad status', { body: { url: 'https://hooks.test:9/ok', status: 'exhausted' } }, 'invalid_parameter', 'status'],
  ];

  it.each(cases)('400 for %s', async (_name, options, code, parameter) => {
    const res = await call('PATCH', `${BASE}/${id}`, { key, ...options });
    expect(res.statusCode, res.body).toBe(400);
    expect(res.json()).toMatchObject({ error: code, message: expect.any(String) });
    if (parameter) expect(res.json().parameter).toBe(parameter);
    expectMatchesOpenApi('/api/v1/webhooks/{id}', 'PATCH', 400, res.json());
  });

  it('"nothing to change" says so', async () => {
    expect((await call('PATCH', `${BASE}/${id}`, { key, body: {} })).json().message).toMatch(/nothing to change/i);
  });

  it('a refused PATCH changed nothing', async () => {
    expect((await call('GET', `${BASE}/${id}`, { key })).json()).toMatchObject({ url: 'https://hooks.test:9/patched', status: 'active' });
  });

  it('404 for an unknown id, even with a bad body (the body is checked first, the id by the service)', async () => {
    expect((await call('PATCH', `${BASE}/${UNKNOWN_ID}`, { key, body: { status: 'active' } })).statusCode).toBe(404);
    expect((await call('PATCH', `${BASE}/${UNKNOWN_ID}`, { key, body: {} })).statusCode).toBe(400);
  });
});

describe('secrets', () => {
  it('rotate-secret returns a different secret, with or without an (ignored) body', async () => {
    const key = await createKey();
    const created = await create(key, 'https://hooks.test:9/rotate');
    const url = `${BASE}/${created.subscription_id}/rotate-secret`;
    const secrets = new Set([created.hmac_secret]);
    for (const options of [{}, { body: '' }, { body: {} }, { body: 'ignored', contentType: 'text/plain' }, { body: '{"broken": ' }]) {
      const res = await call('POST', url, { key, ...options });
      expect(res.statusCode, res.body).toBe(200);
      const body = res.json();
      expect(Object.keys(body)).toEqual(['subscription_id', 'url', 'events', 'hmac_secret', 'status', 'created_at']);
      expect(body).toMatchObject({ subscription_id: created.subscription_id, url: created.url, events: created.events, status: 'active', created_at: created.created_at });
      expect(body.hmac_secret).toMatch(/^whsec_/);
      expect(secrets.has(body.hmac_secret)).toBe(false);
      secrets.add(body.hmac_secret);
      expectMatchesOpenApi('/api/v1/webhooks/{id}/rotate-secret', 'POST', 200, body);
    }
    expect((await call('GET', `${BASE}/${created.subscription_id}`, { key })).body).not.toContain('whsec_');
  });

  it('are stored encrypted: the ciphertext contains neither the secret nor its random part', async () => {
    const key = await createKey();
    const created = await create(key, 'https://hooks.test:9/stored');
    const rotated = (await call('POST', `${BASE}/${created.subscription_id}/rotate-secret`, { key })).json();
    const rows = await execute('select * from webhook_subscriptions where id = ?', [created.subscription_id]);
    const stored = JSON.stringify(rows[0]);
    expect(String(rows[0]!.secret_ciphertext).length).toBeGreaterThan(0);
    for (const secret of [created.hmac_secret, rotated.hmac_secret]) {
      expect(stored).not.toContain(secret);
      expect(stored).not.toContain(secret.slice('whsec_'.length));
      expect(stored).not.toContain(Buffer.from(secret.slice('whsec_'.length), 'base64').toString('hex'));
    }
  });
});

describe('DELETE /api/v1/webhooks/:id', () => {
  it('204 with no body; then GET, PATCH, rotate-secret, deliveries and DELETE are 404', async () => {
    const key = await createKey();
    const { subscription_id: id } = await create(key, 'https://hooks.test:9/delete');
    const res = await call('DELETE', `${BASE}/${id}`, { key });
    expect(res.statusCode).toBe(204);
    expect(res.body).toBe('');
    expect(res.headers['x-ratelimit-remaining']).toBeDefined();
    expect(openapi.paths['/api/v1/webhooks/{id}'].delete.responses['204'].content).toBeUndefined();
    for (const [method, url, body] of [
      ['GET', `${BASE}/${id}`],
      ['PATCH', `${BASE}/${id}`, { status: 'active' }],
      ['POST', `${BASE}/${id}/rotate-secret`],
      ['GET', `${BASE}/${id}/deliveries`],
      ['DELETE', `${BASE}/${id}`],
    ] as [string, string, unknown?][]) {
      expect((await call(method, url, { key, body })).statusCode, `${method} ${url}`).toBe(404);
    }
    expect((await call('GET', BASE, { key })).json().count).toBe(0);
    // The url is free again.
    expect((await call('POST', BASE, { key, body: { url: 'https://hooks.test:9/delete', events: ['pick.published'] } })).statusCode).toBe(201);
  });
});

describe('GET /api/v1/webhooks/:id/deliveries', () => {
  let key = '';
  let id = '';
  let withAttempt = '';
  beforeAll(async () => {
    key = await createKey();
    id = (await create(key, 'https://hooks.test:9/deliveries', ['pick.published', 'pick.settled'])).subscription_id;
    // The dispatcher is stopped: the relay fans out, nothing is sent, deliveries stay pending.
    for (let i = 0; i < 3; i += 1) {
      const res = await t.graphql(PUBLISH, { input: pickInput({ homeTeam: `Delivery ${i}`, selection: `Delivery ${i}` }) });
      expect(res.errors).toBeUndefined();
    }
    await waitUntil('the three events fanned out to the subscription', async () => {
      await t.runtime.relay.relayOnce();
      const [row] = await execute('select count(*)::int as n from webhook_deliveries where subscription_id = ?', [id]);
      return Number(row!.n) === 3;
    }, 20_000, 20);
    const [first] = await execute('select id from webhook_deliveries where subscription_id = ? order by created_at, id limit 1', [id]);
    withAttempt = String(first!.id);
    await execute(
      `insert into webhook_delivery_attempts (id, delivery_id, attempt_number, attempted_at, duration_ms, status_code, error_kind, response_body)
       values (gen_random_uuid(), ?, 1, now(), 42, 503, 'http_status', 'busy')`,
      [withAttempt],
    );
    await execute(`update webhook_deliveries set attempt_count = 1, last_status_code = 503, last_error = 'HTTP 503' where id = ?`, [withAttempt]);
  });

  it('lists every delivery with its attempts (default limit)', async () => {
    const res = await call('GET', `${BASE}/${id}/deliveries`, { key });
    expect(res.statusCode, res.body).toBe(200);
    const body = res.json();
    expectMatchesOpenApi('/api/v1/webhooks/{id}/deliveries', 'GET', 200, body);
    expect(body.count).toBe(3);
    expect(body.next_cursor).toBeNull();
    for (const delivery of body.data) {
      expect(Object.keys(delivery).sort()).toEqual(
        ['delivery_id', 'event_id', 'event_type', 'status', 'attempt_count', 'next_attempt_at', 'last_status_code', 'last_error', 'created_at', 'attempts'].sort(),
      );
      expect(delivery).toMatchObject({ event_type: 'pick.published', status: 'pending', next_attempt_at: expect.any(String) });
    }
    const attempted = body.data.find((delivery: { delivery_id: string }) => delivery.delivery_id === withAttempt);
    expect(attempted).toMatchObject({ attempt_count: 1, last_status_code: 503, last_error: 'HTTP 503' });
    expect(attempted.attempts).toEqual([
      { attempt_number: 1, attempted_at: expect.any(String), duration_ms: 42, status_code: 503, error_kind: 'http_status', response_body: 'busy' },
    ]);
  });

  it('pages with limit and cursor, newest first, without gaps or repeats', async () => {
    const all = (await call('GET', `${BASE}/${id}/deliveries?limit=100`, { key })).json().data.map((d: { delivery_id: string }) => d.delivery_id);
    const first = (await call('GET', `${BASE}/${id}/deliveries?limit=2`, { key })).json();
    expect(first.count).toBe(2);
    expect(typeof first.next_cursor).toBe('string');
    const second = await call('GET', `${BASE}/${id}/deliveries?limit=2&cursor=${encodeURIComponent(first.next_cursor)}`, { key });
    expect(second.statusCode).toBe(200);
    expect(second.json().count).toBe(1);
    expect(second.json().next_cursor).toBeNull();
    expectMatchesOpenApi('/api/v1/webhooks/{id}/deliveries', 'GET', 200, second.json());
    expect([...first.data, ...second.json().data].map((d: { delivery_id: string }) => d.delivery_id)).toEqual(all);
    const created = [...first.data, ...second.json().data].map((d: { created_at: string }) => Date.parse(d.created_at));
    expect([...created].sort((a, b) => b - a)).toEqual(created);
  });

  it('another subscription has its own (empty) log', async () => {
    const other = await create(key, 'https://hooks.test:9/deliveries-none');
    expect((await call('GET', `${BASE}/${other.subscription_id}/deliveries`, { key })).json()).toEqual({ data: [], next_cursor: null, count: 0 });
  });

  it.each(['limit=0', 'limit=101', 'limit=-1', 'limit=abc', 'limit=1.5', 'limit=', 'limit=99999999999', 'limit=1&limit=2'])('400 invalid_parameter for %s', async (query) => {
    const res = await call('GET', `${BASE}/${id}/deliveries?${query}`, { key });
    expect(res.statusCode).toBe(400);
    expect(res.json()).toMatchObject({ error: 'invalid_parameter', parameter: 'limit' });
    expectMatchesOpenApi('/api/v1/webhooks/{id}/deliveries', 'GET', 400, res.json());
  });

  it('400 invalid_cursor for a malformed cursor or a cursor of another list', async () => {
    const picksCursor = (await call('GET', '/api/v1/picks?limit=1', { key })).json().next_cursor;
    expect(typeof picksCursor).toBe('string');
    for (const cursor of ['garbage', 'eyJ2IjoxfQ', '%00', 'a'.repeat(300), picksCursor]) {
      const res = await call('GET', `${BASE}/${id}/deliveries?cursor=${encodeURIComponent(cursor)}`, { key });
      expect(res.statusCode, cursor).toBe(400);
      expect(res.json()).toMatchObject({ error: 'invalid_cursor' });
      expectMatchesOpenApi('/api/v1/webhooks/{id}/deliveries', 'GET', 400, res.json());
    }
  });

  it('checks the tier before the parameters, and ownership with them', async () => {
    expect((await call('GET', `${BASE}/${id}/deliveries?limit=abc`, { key: starterKey })).statusCode).toBe(403);
    expect((await call('GET', `${BASE}/${id}/deliveries?limit=abc`)).statusCode).toBe(401);
    expect((await call('GET', `${BASE}/${id}/deliveries`, { key: await createKey() })).statusCode).toBe(404);
  });
});

describe('methods', () => {
  it.each([
    ['PUT', BASE, 'GET, HEAD, POST'],
    ['DELETE', BASE, 'GET, HEAD, POST'],
    ['PATCH', BASE, 'GET, HEAD, POST'],
    ['PUT', `${BASE}/${UNKNOWN_ID}`, 'DELETE, GET, HEAD, PATCH'],
    ['POST', `${BASE}/${UNKNOWN_ID}`, 'DELETE, GET, HEAD, PATCH'],
    ['GET', `${BASE}/${UNKNOWN_ID}/rotate-secret`, 'POST'],
    ['DELETE', `${BASE}/${UNKNOWN_ID}/rotate-secret`, 'POST'],
    ['POST', `${BASE}/${UNKNOWN_ID}/deliveries`, 'GET, HEAD'],
  ])('%s %s -> 405 with Allow %s', async (method, url, allow) => {
    const key = await createKey();
    for (const options of [{}, { body: '{"broken": ' }]) {
      const res = await call(method, url, { key, ...options });
      expect(res.statusCode).toBe(405);
      expect(res.json()).toMatchObject({ error: 'method_not_allowed', message: expect.any(String) });
      expect(String(res.headers.allow).split(', ').sort().join(', ')).toBe(allow);
    }
  });

  it('unknown paths under /api/v1/webhooks are 404 not_found', async () => {
    const key = await createKey();
    for (const url of [`${BASE}/${UNKNOWN_ID}/nothing`, `${BASE}/${UNKNOWN_ID}/rotate-secret/x`]) {
      const res = await call('GET', url, { key });
      expect(res.statusCode).toBe(404);
      expect(res.json().error).toBe('not_found');
    }
  });
});

describe('OpenAPI', () => {
  it('documents the webhook routes with their bodies, responses and security', () => {
    const collection = openapi.paths['/api/v1/webhooks'];
    const item = openapi.paths['/api/v1/webhooks/{id}'];
    expect(Object.keys(collection).sort()).toEqual(['get', 'post']);
    expect(Object.keys(item).sort()).toEqual(['delete', 'get', 'patch']);
    expect(Object.keys(openapi.paths['/api/v1/webhooks/{id}/rotate-secret'])).toEqual(['post']);
    expect(Object.keys(openapi.paths['/api/v1/webhooks/{id}/deliveries'])).toEqual(['get']);
    const component = (schema: { $ref: string }) => openapi.components.schemas[schema.$ref.replace('#/components/schemas/', '')];
    const createBody = component(collection.post.requestBody.content['application/json'].schema);
    expect(createBody.required).toEqual(['url', 'events']);
    expect(createBody.properties.events.items.enum).toEqual(['pick.published', 'pick.settled', 'pick.availability_changed']);
    expect(Object.keys(collection.post.responses).sort()).toEqual(['201', '400', '401', '403', '409', '413', '429', '500', '503']);
    expect(collection.post.responses['429'].content['application/json'].schema.properties.error.enum).toEqual(['rate_limit_exceeded', 'monthly_quota_exceeded', 'subscription_limit']);
    expect(component(item.patch.requestBody.content['application/json'].schema).properties.status.enum).toEqual(['active']);
    expect(item.delete.requestBody).toBeUndefined();
    expect(openapi.paths['/api/v1/webhooks/{id}/rotate-secret'].post.requestBody).toBeUndefined();
    const deliveryParams = openapi.paths['/api/v1/webhooks/{id}/deliveries'].get.parameters.map((p: { name: string; in: string }) => `${p.in}:${p.name}`).sort();
    expect(deliveryParams).toEqual(['path:id', 'query:cursor', 'query:limit']);
    for (const path of Object.keys(openapi.paths).filter((p) => p.startsWith('/api/v1/webhooks'))) {
      for (const operation of Object.values(openapi.paths[path]) as { security: unknown; operationId: string }[]) {
        expect(operation.security, operation.operationId).toEqual([{ bearerAuth: [] }]);
      }
    }
  });
});

describe('fuzz: POST /api/v1/webhooks bodies', () => {
  const DOCUMENTED: Record<number, string[]> = {
    201: [],
    400: ['invalid_request', 'invalid_parameter', 'invalid_url'],
    409: ['duplicate_url'],
    429: ['subscription_limit'],
  };

  // Hosts that never need DNS: the loopback override, or IP literals in various spellings.
  const host = fc.constantFrom('hooks.test', 'HOOKS.test', '127.0.0.1', '0x7f.1', '2130706433', '10.1.2.3', '172.31.0.1', '192.168.0.1', '169.254.169.254', '100.64.1.1', '224.0.0.1', '0.0.0.0', '[::1]', '[::ffff:127.0.0.1]', '[fe80::1]', '[fc00::1]');
  const urlLike = fc
    .tuple(
      fc.constantFrom('https', 'HTTPS', 'http', 'ftp', 'wss', ''),
      fc.constantFrom('', 'user@', 'user:pass@', ':@'),
      host,
      fc.constantFrom('', ':9', ':443', ':0', ':65536', ':x'),
      fc.string({ maxLength: 20 }),
      fc.constantFrom('', '#', '#frag', '?q=1'),
    )
    .map(([scheme, userinfo, hostname, port, path, tail]) => `${scheme}${scheme ? '://' : ''}${userinfo}${hostname}${port}/${path}${tail}`);
  // Arbitrary JSON, but never a string with a scheme (so no host is ever looked up).
  const json = fc.jsonValue({ maxDepth: 2 }).filter((value) => typeof value !== 'string' || !value.includes(':'));
  const event = fc.oneof(fc.constantFrom('pick.published', 'pick.settled', 'PICK_PUBLISHED', 'pick.', '', 'pick.published '), json);
  const body = fc.record(
    {
      url: fc.oneof(urlLike, json, fc.constant('https://hooks.test:9/fuzz')),
      events: fc.oneof(fc.array(event, { maxLength: 3 }), fc.uniqueArray(fc.constantFrom('pick.published', 'pick.settled'), { minLength: 1 }), json),
      extra: json,
    },
    { requiredKeys: [] },
  );

  let key = '';
  beforeAll(async () => {
    key = await createKey('ENTERPRISE');
  });

  it('every body gets a documented status and code, never a 500', async () => {
    await fc.assert(
      fc.asyncProperty(body, async (payload) => {
        const res = await call('POST', BASE, { key, body: payload });
        expect(Object.keys(DOCUMENTED).map(Number), res.body).toContain(res.statusCode);
        if (res.statusCode === 201) {
          // Only a well-formed body is accepted, and the subscription is removed to keep exploring.
          expect(typeof payload.url).toBe('string');
          expect(res.json().hmac_secret).toMatch(/^whsec_/);
          expect((await call('DELETE', `${BASE}/${res.json().subscription_id}`, { key })).statusCode).toBe(204);
        } else {
          expect(DOCUMENTED[res.statusCode], res.body).toContain(res.json().error);
          expectMatchesOpenApi(BASE, 'POST', res.statusCode, res.json());
        }
      }),
      { numRuns: 200 },
    );
  });

  it('raw bytes with Content-Type application/json: 400 invalid_request or a documented answer, never a 500', async () => {
    await fc.assert(
      fc.asyncProperty(fc.oneof(fc.string({ maxLength: 40 }), fc.string({ unit: 'binary', maxLength: 40 })), async (raw) => {
        fc.pre(!raw.includes(':'));
        const res = await call('POST', BASE, { key, body: raw });
        expect([400]).toContain(res.statusCode);
        expect(res.json().error, res.body).toBe('invalid_request');
      }),
      { numRuns: 150 },
    );
  });
});
