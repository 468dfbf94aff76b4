/**
 * The framework never answers for us (issue 38, item 5): every error Fastify or Node's HTTP
 * server raises for a request leaves through the one error exit (src/server/http-errors.ts) as
 * the documented `{error, message}` body (plus `parameter` where the code carries it), JSON,
 * with X-Request-Id, and a message that does not echo the path or header that caused it.
 *
 * One table row per code a request can make the framework raise: the request that triggers it
 * (inject() where it can, a raw socket on loopback for what only Node's parser sees), the
 * status and the documented code. Codes no request can reach in this app (a Fastify bug path,
 * options the app does not set) are thrown through the same exit, and the row says why. Then
 * the path rules: under /api/v1 a path the router refuses is an unknown path there (checked,
 * and counted with a valid key), a Content-Type that is not a media type is judged after the
 * checks like any unreadable body, and the refusals before authentication count nothing.
 */
import { connect, type AddressInfo } from 'node:net';
import Fastify, { errorCodes, type FastifyError, type FastifyInstance, type FastifyServerOptions } from 'fastify';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { buildApp } from '../../src/app.js';
import { ERRORS, type ErrorCode } from '../../src/domain/errors.js';
import { createFrameworkErrorHandler, underCustomerApi } from '../../src/server/framework-errors.js';
import { FASTIFY_ERRORS, handleHttpError, httpErrorOf } from '../../src/server/http-errors.js';
import { BODY_LIMIT_BYTES, MAX_HEADER_BYTES } from '../../src/server/http-limits.js';
import { createTestApp, type TestApp } from '../helpers/app.js';
import { CREATE_KEY } from '../helpers/fixtures.js';

interface Answer {
  status: number;
  headers: Record<string, string | string[] | number | undefined>;
  body: unknown;
  raw: string;
}

/** Short enough for the 408 row to end soon; generous for the others, which are answered at once. */
const TIMEOUTS = { headersTimeoutMs: 1_000, requestTimeoutMs: 2_000, connectionsCheckingIntervalMs: 100 };
const STARTER_HOURLY = 2;
const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/;

let t: TestApp;
let app: FastifyInstance;
let port = 0;
const keys = { enterprise: '', starter: '', limited: '' };

beforeAll(async () => {
  t = await createTestApp({ env: { TIER_LIMITS: JSON.stringify({ starter: { hourly: STARTER_HOURLY } }) } });
  const create = async (tier: string) => (await t.graphql<{ createApiKey: { key: string } }>(CREATE_KEY, { input: { tier } })).data!.createApiKey.key;
  keys.enterprise = await create('ENTERPRISE');
  keys.starter = await create('STARTER');
  keys.limited = await create('STARTER');
  // The app as served, on loopback, with timeouts short enough for the 408 row.
  app = await buildApp(t.runtime, { logger: { level: 'error' }, timeouts: TIMEOUTS });
  await app.listen({ port: 0, host: '127.0.0.1' });
  port = (app.server.address() as AddressInfo).port;
});
afterAll(async () => {
  await app?.close();
  await t?.close();
});

async function inject(method: string, url: string, headers: Record<string, string> = {}, payload?: string): Promise<Answer> {
  const res = await app.inject({ method: method as 'GET', url, headers, ...(payload === undefined ? {} : { payload }) });
  let body: unknown = res.body;
  try {
    body = res.json();
  } catch {
    // Not JSON: the row's assertions say so.
  }
  return { status: res.statusCode, headers: res.headers, body, raw: res.body };
}

/** Writes `request` on a fresh connection and reads until the server closes it (or answers in full). */
function socket(request: string): Promise<Answer> {
  return new Promise((resolve, reject) => {
    const connection = connect({ host: '127.0.0.1', port });
    let received = '';
    connection.setEncoding('utf8');
    connection.on('data', (chunk: string) => {
      received += chunk;
      const answer = parseAnswer(received);
      // A complete answer on a connection the server keeps open: done.
      if (answer) {
        connection.destroy();
        resolve(answer);
      }
    });
    connection.on('error', () => {});
    connection.on('close', () => {
      const answer = parseAnswer(received);
      if (answer) resolve(answer);
      else reject(new Error(`no complete answer; received ${JSON.stringify(received)}`));
    });
    connection.on('connect', () => connection.write(request));
  });
}

function parseAnswer(received: string): Answer | null {
  // Interim answers (100 Continue) come before the answer.
  while (/^HTTP\/1\.1 1\d\d /.test(received) && received.includes('\r\n\r\n')) received = received.slice(received.indexOf('\r\n\r\n') + 4);
  const end = received.indexOf('\r\n\r\n');
  if (end === -1) return null;
  const [statusLine, ...lines] = received.slice(0, end).split('\r\n');
  const headers: Record<string, string> = {};
  for (const line of lines) {
    const colon = line.indexOf(':');
    headers[line.slice(0, colon).trim().toLowerCase()] = line.slice(colon + 1).trim();
  }
  const raw = received.slice(end + 4);
  const length = Number(headers['content-length'] ?? NaN);
  if (!(raw.length >= length)) return null;
  let body: unknown = raw;
  try {
    body = JSON.parse(raw);
  } catch {
    // Not JSON.
  }
  return { status: Number(statusLine!.split(' ')[1]), headers, body, raw };
}

/** A tiny app with the app's error exit, for what no request to the real app can raise. */
async function exitApp(): Promise<FastifyInstance> {
  const tiny = Fastify({ logger: false });
  tiny.setErrorHandler(handleHttpError);
  tiny.get('/raise/:code', async (req) => {
    const { code } = req.params as { code: keyof typeof errorCodes };
    throw new errorCodes[code]();
  });
  await tiny.ready();
  return tiny;
}

async function raised(code: keyof typeof errorCodes): Promise<Answer> {
  const tiny = await exitApp();
  try {
    const res = await tiny.inject({ method: 'GET', url: `/raise/${code}` });
    return { status: res.statusCode, headers: res.headers, body: res.json(), raw: res.body };
  } finally {
    await tiny.close();
  }
}

interface Row {
  /** The framework's own code for the refusal: Fastify's FST_ERR_*, Node's parser's HPE_* or ERR_*. */
  code: string;
  /** What the request is, and why it goes there. */
  request: string;
  send: () => Promise<Answer>;
  status: number;
  error: ErrorCode;
  /** Extra documented fields of the body (invalid_parameter's `parameter`). */
  extras?: Record<string, string>;
  /** Text of the request the message must not repeat (the path, the header). */
  notEchoed?: string;
  /** The X-Request-Id the answer must carry: the caller's, or (unset) a fresh UUID. */
  requestId?: string;
  /** Not over the wire: raised through the app's error exit in a tiny app (no request can raise it here). */
  thrown?: true;
}

const LONG_ID = 'a'.repeat(101);
const MARKER = 'echo-marker-3f9c';

const ROWS: Row[] = [
  // Fastify's router: frameworkErrors (src/server/framework-errors.ts).
  {
    code: 'FST_ERR_BAD_URL',
    request: 'a path that is not valid percent-encoding',
    send: () => inject('GET', '/api/v1/picks/%ZZ', { 'x-request-id': 'trace-bad-url-0001' }),
    status: 400,
    error: 'invalid_request',
    notEchoed: '%ZZ',
    requestId: 'trace-bad-url-0001',
  },
  {
    code: 'FST_ERR_BAD_URL',
    request: 'the same over a socket, a method only the not-found router has',
    send: () => socket('PROPFIND /%ZZ HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: close\r\n\r\n'),
    status: 400,
    error: 'invalid_request',
    notEchoed: '%ZZ',
  },
  {
    code: 'FST_ERR_MAX_PARAM_LENGTH',
    request: 'a route parameter over 100 characters where no wildcard route takes the path',
    send: () => inject('GET', `/dashboard/webhooks/${LONG_ID}/delete`),
    status: 404,
    error: 'not_found',
    notEchoed: LONG_ID,
  },
  {
    code: 'FST_ERR_ASYNC_CONSTRAINT',
    request: "an asynchronous route constraint that fails (no route of the app has one: the handler in a tiny app, below)",
    send: asyncConstraintAnswer,
    status: 500,
    error: 'internal_error',
    requestId: 'tiny-request-0001',
  },
  // Fastify's body parsing and its checks of the body's headers: the error handler.
  {
    code: 'FST_ERR_CTP_INVALID_MEDIA_TYPE',
    request: 'a Content-Type no parser takes',
    send: () => inject('POST', '/graphql/stream', { 'content-type': `text/${MARKER}` }, 'x'),
    status: 400,
    error: 'invalid_request',
    notEchoed: MARKER,
  },
  {
    code: 'FST_ERR_CTP_INVALID_MEDIA_TYPE',
    request: 'a Content-Type that is not a media type at all (refused before any parser)',
    send: () => inject('POST', '/graphql/stream', { 'content-type': `${MARKER};;` }, 'x'),
    status: 400,
    error: 'invalid_request',
    notEchoed: MARKER,
  },
  {
    code: 'FST_ERR_CTP_EMPTY_JSON_BODY',
    request: 'Content-Type application/json with an empty body',
    send: () => inject('POST', '/graphql', { 'content-type': 'application/json' }, ''),
    status: 400,
    error: 'invalid_request',
  },
  {
    code: 'FST_ERR_CTP_INVALID_JSON_BODY',
    request: 'a body that is not JSON',
    send: () => inject('POST', '/graphql', { 'content-type': 'application/json' }, `{${MARKER}`),
    status: 400,
    error: 'invalid_request',
    notEchoed: MARKER,
  },
  {
    code: 'FST_ERR_CTP_BODY_TOO_LARGE',
    request: `a body over ${BODY_LIMIT_BYTES} bytes`,
    send: () => inject('POST', '/graphql/stream', { 'content-type': 'application/json' }, JSON.stringify({ padding: 'x'.repeat(BODY_LIMIT_BYTES) })),
    status: 413,
    error: 'payload_too_large',
  },
  {
    code: 'FST_ERR_CTP_INVALID_CONTENT_LENGTH',
    request: 'a Content-Length the body does not match',
    send: () => inject('POST', '/graphql', { 'content-type': 'application/json', 'content-length': '100' }, '{}'),
    status: 400,
    error: 'invalid_request',
  },
  {
    code: 'FST_ERR_ROUTE_MISSING_CONTENT_TYPE',
    request: 'a QUERY request with a body and no Content-Type',
    send: () => socket('QUERY /nothing HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Length: 2\r\nConnection: close\r\n\r\n{}'),
    status: 400,
    error: 'invalid_request',
  },
  {
    code: 'FST_ERR_VALIDATION',
    request: 'a body against the documented schema: route schemas are documentation only, the adapter judges it',
    send: () => inject('POST', '/api/v1/webhooks', { authorization: `Bearer ${keys.enterprise}`, 'content-type': 'application/json' }, JSON.stringify({ url: 5, events: ['pick.published'] })),
    status: 400,
    error: 'invalid_parameter',
    extras: { parameter: 'url' },
  },
  {
    code: 'FST_ERR_VALIDATION',
    request: 'raised: no route validates with Fastify (passThroughValidator)',
    send: () => raised('FST_ERR_VALIDATION'),
    status: 400,
    error: 'invalid_request',
    thrown: true,
  },
  {
    code: 'FST_ERR_NOT_FOUND',
    request: "raised: only Fastify's own fallback raises it, when its not-found router missed a request (a Fastify bug)",
    send: () => raised('FST_ERR_NOT_FOUND'),
    status: 404,
    error: 'not_found',
    thrown: true,
  },
  {
    code: 'FST_ERR_ROUTE_MISSING_CONTENT',
    request: 'raised: Fastify 5 no longer raises it (kept exported)',
    send: () => raised('FST_ERR_ROUTE_MISSING_CONTENT'),
    status: 400,
    error: 'invalid_request',
    thrown: true,
  },
  {
    code: 'FST_ERR_HANDLER_TIMEOUT',
    request: 'raised: only with a handlerTimeout, which the app does not set',
    send: () => raised('FST_ERR_HANDLER_TIMEOUT'),
    status: 503,
    error: 'service_unavailable',
    thrown: true,
  },
  // Node's HTTP parser and server: the clientError handler (src/server/http-limits.ts), and the
  // two requests Node would refuse after parsing them (registerHttpRefusals).
  {
    code: 'HPE_HEADER_OVERFLOW',
    request: `a request line and headers over ${MAX_HEADER_BYTES} bytes`,
    send: () => socket(`GET /healthz HTTP/1.1\r\nHost: 127.0.0.1\r\nX-Padding: ${MARKER}${'a'.repeat(MAX_HEADER_BYTES)}\r\n\r\n`),
    status: 431,
    error: 'headers_too_large',
    notEchoed: MARKER,
  },
  {
    code: 'HPE_INVALID_HEADER_TOKEN',
    request: 'a malformed header (a space in its name)',
    send: () => socket(`GET /healthz HTTP/1.1\r\nHost: 127.0.0.1\r\nX ${MARKER}: b\r\n\r\n`),
    status: 400,
    error: 'invalid_request',
    notEchoed: MARKER,
  },
  {
    code: 'HPE_INVALID_HEADER_TOKEN',
    request: 'a control character in a header value',
    send: () => socket(`GET /healthz HTTP/1.1\r\nHost: 127.0.0.1\r\nX-Value: ${MARKER}\x01\r\n\r\n`),
    status: 400,
    error: 'invalid_request',
    notEchoed: MARKER,
  },
  {
    code: 'HPE_INVALID_METHOD',
    request: 'a request line that is not HTTP',
    send: () => socket(`${MARKER} THERE\r\n\r\n`),
    status: 400,
    error: 'invalid_request',
    notEchoed: MARKER,
  },
  {
    code: 'HPE_INVALID_VERSION',
    request: 'an HTTP version that does not exist',
    send: () => socket('GET /healthz HTTP/9.9\r\nHost: 127.0.0.1\r\n\r\n'),
    status: 400,
    error: 'invalid_request',
  },
  {
    code: 'HPE_UNEXPECTED_CONTENT_LENGTH',
    request: 'two Content-Length headers that disagree',
    send: () => socket('POST /graphql HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Length: 3\r\nContent-Length: 4\r\n\r\nabcd'),
    status: 400,
    error: 'invalid_request',
  },
  {
    code: 'HPE_INVALID_TRANSFER_ENCODING',
    request: 'Content-Length beside chunked Transfer-Encoding (request smuggling)',
    send: () => socket('POST /graphql HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Length: 3\r\nTransfer-Encoding: chunked\r\n\r\n0\r\n\r\n'),
    status: 400,
    error: 'invalid_request',
  },
  {
    code: 'HPE_PAUSED_H2_UPGRADE',
    request: 'the HTTP/2 connection preface, to an HTTP/1.1 server',
    send: () => socket('PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n'),
    status: 400,
    error: 'invalid_request',
  },
  {
    code: 'ERR_HTTP_REQUEST_TIMEOUT',
    request: 'headers that never finish arriving',
    send: () => socket('GET /healthz HTTP/1.1\r\nHost: 127.0.0.1\r\n'),
    status: 408,
    error: 'request_timeout',
  },
  {
    code: 'requireHostHeader',
    request: 'an HTTP/1.1 request without Host (Node would answer 400 with an empty body)',
    send: () => socket('GET /healthz HTTP/1.1\r\nConnection: close\r\n\r\n'),
    status: 400,
    error: 'invalid_request',
  },
  {
    code: 'checkExpectation',
    request: 'an Expect other than 100-continue (Node would answer 417 with an empty body)',
    send: () => socket(`GET /healthz HTTP/1.1\r\nHost: 127.0.0.1\r\nExpect: ${MARKER}\r\nConnection: close\r\n\r\n`),
    status: 400,
    error: 'invalid_parameter',
    extras: { parameter: 'Expect' },
    notEchoed: MARKER,
  },
];

/** FST_ERR_ASYNC_CONSTRAINT: the app's frameworkErrors handler, in a tiny app with a failing asynchronous constraint. */
async function asyncConstraintAnswer(): Promise<Answer> {
  const frameworkErrors = createFrameworkErrorHandler();
  // find-my-way's types know synchronous strategies only; an asynchronous one takes a callback.
  const failingTenant = {
    name: 'tenant',
    storage: () => {
      const stores = new Map<unknown, unknown>();
      return { get: (value: unknown) => stores.get(value) ?? null, set: (value: unknown, store: unknown) => void stores.set(value, store) };
    },
    deriveConstraint: (_req: unknown, _ctx: unknown, done: (error: Error | null, value?: string) => void) => done(new Error('the tenant store is down')),
    validate: () => true,
  } as unknown as NonNullable<NonNullable<FastifyServerOptions['routerOptions']>['constraints']>[string];
  const tiny = Fastify({
    logger: false,
    genReqId: () => 'tiny-request-0001',
    frameworkErrors: frameworkErrors.handler,
    routerOptions: { constraints: { tenant: failingTenant } },
  });
  tiny.get('/api/v1/tenant', { constraints: { tenant: 'a' } }, async () => ({ ok: true }));
  await tiny.ready();
  try {
    const res = await tiny.inject({ method: 'GET', url: '/api/v1/tenant' });
    return { status: res.statusCode, headers: res.headers, body: res.json(), raw: res.body };
  } finally {
    await tiny.close();
  }
}

describe('every framework error leaves through the one error exit', () => {
  it.each(ROWS.map((row) => [`${row.code}: ${row.request}`, row] as const))('%s', async (_name, row) => {
    const answer = await row.send();
    expect(answer.status, answer.raw).toBe(row.status);
    // Exactly the documented body: the code, a message for people, the code's extra fields.
    expect(answer.body).toEqual({ error: row.error, message: expect.any(String), ...row.extras });
    expect(ERRORS[row.error].status).toBe(row.status);
    expect(String(answer.headers['content-type'])).toMatch(/^application\/json/);
    if (!row.thrown) {
      const requestId = answer.headers['x-request-id'];
      if (row.requestId) expect(requestId).toBe(row.requestId);
      else expect(requestId).toMatch(UUID);
    }
    const message = (answer.body as { message: string }).message;
    expect(message.length).toBeGreaterThan(0);
    // Fastify's own wording never leaves, nor does the request's text.
    expect(message).not.toMatch(/FST_ERR|is not a valid url component|Client Error/);
    if (row.notEchoed) expect(message).not.toContain(row.notEchoed);
  });

  it('has a row for every code of the mapping table, and the table every 4xx code Fastify can raise for a request', () => {
    const rowCodes = new Set(ROWS.map((row) => row.code));
    for (const code of Object.keys(FASTIFY_ERRORS)) expect(rowCodes, code).toContain(code);
    // Raised by no request: at start-up, or by inject() alone.
    const notFromARequest = new Set(['FST_ERR_CTP_INSTANCE_ALREADY_STARTED', 'FST_ERR_INVALID_URL']);
    for (const [code, FastifyErrorClass] of Object.entries(errorCodes)) {
      const status = (new FastifyErrorClass() as FastifyError).statusCode ?? 500;
      if (status >= 400 && status < 500 && !notFromARequest.has(code)) expect(Object.keys(FASTIFY_ERRORS), code).toContain(code);
    }
  });

  it("maps each of Fastify's codes to its row, never with Fastify's message", () => {
    for (const [code, expected] of Object.entries(FASTIFY_ERRORS)) {
      const error = new errorCodes[code as keyof typeof errorCodes]('/api/v1/secret-path');
      const mapped = httpErrorOf(error);
      expect({ code: mapped.code, message: mapped.message }, code).toEqual(expected);
      expect(mapped.message).not.toContain('secret-path');
    }
  });

  it('knows which request targets are under /api/v1, as the router reads them', () => {
    for (const url of ['/api/v1', '/api/v1/picks/%ZZ', '/api/v1?x=%ZZ', '/api/v%31/picks/%ZZ', 'http://host/api/v1/%ZZ']) expect(underCustomerApi(url), url).toBe(true);
    for (const url of ['/api/v10/%ZZ', '/api/public/%ZZ', '/%ZZ', '/dashboard/%ZZ', '/API/v1/%ZZ']) expect(underCustomerApi(url), url).toBe(false);
  });

  it('lets Expect: 100-continue through, as Node does', async () => {
    const answer = await socket('GET /healthz HTTP/1.1\r\nHost: 127.0.0.1\r\nExpect: 100-continue\r\nConnection: close\r\n\r\n');
    expect(answer.status).toBe(200);
    expect(answer.body).toEqual({ status: 'ok' });
  });
});

describe('counted under /api/v1 as the path rules say', () => {
  const bearer = (key: string) => ({ authorization: `Bearer ${key}` });
  const remaining = (answer: Answer) => Number(answer.headers['x-ratelimit-remaining']);

  it('a path the router refuses is an unknown path there: checked, and counted one unit with a valid key', async () => {
    const first = await inject('GET', '/api/v1/picks/%ZZ', bearer(keys.limited));
    const second = await inject('GET', '/api/v1/webhooks/%ZZ', bearer(keys.limited));
    for (const answer of [first, second]) {
      expect(answer.status).toBe(400);
      expect(answer.body).toEqual({ error: 'invalid_request', message: expect.any(String) });
    }
    expect(remaining(first)).toBe(STARTER_HOURLY - 1);
    expect(remaining(second)).toBe(STARTER_HOURLY - 2);
    // The hour is used up: the next is refused by the limits, before the path is looked at.
    const third = await inject('GET', '/api/v1/picks/%ZZ', bearer(keys.limited));
    expect(third.status).toBe(429);
    expect(third.body).toMatchObject({ error: 'rate_limit_exceeded' });
    expect(third.headers['retry-after']).toEqual(expect.any(String));
    expect(third.headers['x-request-id']).toMatch(UUID);
  });

  it('a refused credential is 401 first; without credentials it is a plain 400, counted against nothing', async () => {
    const invalid = await inject('GET', '/api/v1/picks/%ZZ', bearer('service_' + '0'.repeat(64)));
    expect(invalid.status).toBe(401);
    expect(invalid.body).toEqual({ error: 'invalid_api_key', message: expect.any(String) });
    expect(invalid.headers['www-authenticate']).toMatch(/^Bearer /);
    expect(invalid.headers['x-ratelimit-remaining']).toBeUndefined();

    const anonymous = await inject('GET', '/api/v1/picks/%ZZ');
    expect(anonymous.status).toBe(400);
    expect(anonymous.headers['x-ratelimit-remaining']).toBeUndefined();
  });

  it('outside /api/v1 a refused path is checked against nothing, whoever asks', async () => {
    for (const url of ['/dashboard/%ZZ', '/api/public/%ZZ', '/%ZZ']) {
      const answer = await inject('GET', url, bearer(keys.enterprise));
      expect(answer.status, url).toBe(400);
      expect(answer.body).toEqual({ error: 'invalid_request', message: expect.any(String) });
      expect(answer.headers['x-ratelimit-remaining'], url).toBeUndefined();
    }
  });

  it('a Content-Type that is not a media type is judged after 401 -> 429 -> 403 and counted, like any unreadable body', async () => {
    const headers = (key?: string) => ({ ...(key ? bearer(key) : {}), 'content-type': 'not a media type;;' });
    const body = JSON.stringify({ url: 'https://hooks.example.com/a', events: ['pick.published'] });
    const anonymous = await inject('POST', '/api/v1/webhooks', headers(), body);
    expect(anonymous.status).toBe(401);
    const starter = await inject('POST', '/api/v1/webhooks', headers(keys.starter), body);
    expect(starter.status).toBe(403);
    expect(starter.body).toMatchObject({ error: 'tier_upgrade_required' });
    const enterprise = await inject('POST', '/api/v1/webhooks', headers(keys.enterprise), body);
    expect(enterprise.status).toBe(400);
    expect(enterprise.body).toEqual({ error: 'invalid_request', message: 'Unsupported Content-Type; send application/json.' });
    expect(remaining(enterprise)).toBeGreaterThan(0);
    // A route that takes no body ignores the header, as it ignores whatever is sent.
    const deleted = await inject('DELETE', '/api/v1/webhooks/00000000-0000-4000-8000-000000000000', headers(keys.enterprise));
    expect(deleted.status).toBe(404);
    expect(deleted.body).toMatchObject({ error: 'not_found' });
    expect(remaining(deleted)).toBe(remaining(enterprise) - 1);
  });

  it('the refusals before authentication (an oversized body, a broken Content-Length) count nothing', async () => {
    const headers = { ...bearer(keys.enterprise), 'content-type': 'application/json' };
    const tooLarge = await inject('POST', '/api/v1/webhooks', headers, JSON.stringify({ padding: 'x'.repeat(BODY_LIMIT_BYTES) }));
    expect(tooLarge.status).toBe(413);
    const brokenLength = await inject('POST', '/api/v1/webhooks', { ...headers, 'content-length': '100' }, '{}');
    expect(brokenLength.status).toBe(400);
    for (const answer of [tooLarge, brokenLength]) {
      expect(answer.headers['x-request-id']).toMatch(UUID);
      expect(answer.headers['x-ratelimit-remaining']).toBeUndefined();
    }
  });
});
