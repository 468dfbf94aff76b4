/**
 * Hostile connections against a real listening server on loopback: oversized headers get a
 * clean 431, a client dribbling its headers (slowloris) or its body is cut off by the headers
 * and request timeouts with a JSON 408, body limits answer 413; event streams outlive all of
 * those timeouts. The timeouts are shortened through the app factory's options.
 */
import { connect, type AddressInfo, type Socket } from 'node:net';
import type { FastifyInstance } from 'fastify';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { buildApp } from '../../src/app.js';
import { BODY_LIMIT_BYTES, DEFAULT_SERVER_TIMEOUTS, GRAPHQL_BODY_LIMIT_BYTES, MAX_HEADER_BYTES, socketTimeoutMs } from '../../src/server/http-limits.js';
import { ADMIN_TOKEN, createTestApp, type TestApp } from '../helpers/app.js';
import { CREATE_KEY, pickInput, PUBLISH, UPSERT_ANALYSIS } from '../helpers/fixtures.js';
import { connectSse } from '../helpers/sse.js';

// The request timeout is well apart from the headers timeout, so each test shows which one fired.
const TIMEOUTS = { headersTimeoutMs: 1_000, requestTimeoutMs: 3_000, connectionsCheckingIntervalMs: 100 };

let t: TestApp;
let app: FastifyInstance;
let port = 0;
let enterpriseKey = '';

beforeAll(async () => {
  t = await createTestApp({ env: { STREAM_HEARTBEAT_SECONDS: '1' } });
  enterpriseKey = (await t.graphql<{ createApiKey: { key: string } }>(CREATE_KEY, { input: { tier: 'ENTERPRISE' } })).data!.createApiKey.key;
  app = await buildApp(t.runtime, { logger: { level: 'error' }, timeouts: TIMEOUTS });
  await app.listen({ port: 0, host: '127.0.0.1' });
  port = (app.server.address() as AddressInfo).port;
});
afterAll(async () => {
  await app?.close();
  await t?.close();
});

interface RawExchange {
  /** Everything the server sent. */
  received: string;
  /** Milliseconds from connecting until the server closed the socket. */
  closedAfterMs: number;
}

/** Opens a raw TCP connection to the app, lets `drive` write to it, and collects the answer until the server closes. */
function raw(drive: (socket: Socket) => void, giveUpMs = 10_000): Promise<RawExchange> {
  return new Promise((resolve, reject) => {
    const started = Date.now();
    const socket = connect({ host: '127.0.0.1', port });
    let received = '';
    const timer = setTimeout(() => {
      socket.destroy();
      reject(new Error(`the server kept the connection open for ${giveUpMs} ms; received ${JSON.stringify(received)}`));
    }, giveUpMs);
    socket.setEncoding('utf8');
    socket.on('data', (chunk: string) => (received += chunk));
    socket.on('error', () => {});
    socket.on('close', () => {
      clearTimeout(timer);
      resolve({ received, closedAfterMs: Date.now() - started });
    });
    socket.on('connect', () => drive(socket));
  });
}

function jsonBody(response: string): Record<string, unknown> {
  return JSON.parse(response.slice(response.indexOf('\r\n\r\n') + 4)) as Record<string, unknown>;
}

/** Writes `text` one byte every `everyMs` until the socket closes. */
function dribble(socket: Socket, text: string, everyMs: number): void {
  let index = 0;
  const timer = setInterval(() => {
    if (socket.destroyed || index >= text.length) {
      clearInterval(timer);
      return;
    }
    socket.write(text[index++]!);
  }, everyMs);
  socket.on('close', () => clearInterval(timer));
}

describe('header size', () => {
  it(`answers headers over ${MAX_HEADER_BYTES} bytes with a JSON 431 and closes the connection`, async () => {
    const exchange = await raw((socket) => socket.write(`GET /healthz HTTP/1.1\r\nHost: 127.0.0.1\r\nX-Padding: ${'a'.repeat(MAX_HEADER_BYTES + 1024)}\r\n\r\n`));
    expect(exchange.received).toMatch(/^HTTP\/1\.1 431 Request Header Fields Too Large\r\n/);
    expect(exchange.received).toMatch(/\r\nX-Request-Id: [0-9a-f-]{36}\r\n/i);
    expect(exchange.received).toMatch(/\r\nContent-Type: application\/json/i);
    expect(jsonBody(exchange.received)).toEqual({ error: 'headers_too_large', message: expect.stringContaining(String(MAX_HEADER_BYTES)) });
  });

  it('serves headers just under the limit', async () => {
    const exchange = await raw((socket) =>
      socket.write(`GET /healthz HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: close\r\nX-Padding: ${'a'.repeat(MAX_HEADER_BYTES - 1024)}\r\n\r\n`),
    );
    expect(exchange.received).toMatch(/^HTTP\/1\.1 200 OK\r\n/);
  });

  it('answers a request line that is not HTTP with a JSON 400', async () => {
    const exchange = await raw((socket) => socket.write('HELLO THERE\r\n\r\n'));
    expect(exchange.received).toMatch(/^HTTP\/1\.1 400 Bad Request\r\n/);
    expect(jsonBody(exchange.received)).toMatchObject({ error: 'invalid_request' });
  });
});

describe('slow clients', () => {
  it('cuts off a client that sends its headers byte by byte (slowloris) within the headers timeout', async () => {
    const exchange = await raw((socket) => dribble(socket, `GET /healthz HTTP/1.1\r\nHost: 127.0.0.1\r\nX-Slow: ${'z'.repeat(1_000)}\r\n\r\n`, 50));
    expect(exchange.closedAfterMs).toBeGreaterThanOrEqual(TIMEOUTS.headersTimeoutMs - 50);
    expect(exchange.closedAfterMs).toBeLessThan(TIMEOUTS.headersTimeoutMs + 1_500);
    expect(exchange.received).toMatch(/^HTTP\/1\.1 408 Request Timeout\r\n/);
    expect(jsonBody(exchange.received)).toEqual({ error: 'request_timeout', message: expect.any(String) });
  });

  it('cuts off a connection that never sends a request', async () => {
    const exchange = await raw(() => {});
    expect(exchange.closedAfterMs).toBeLessThan(TIMEOUTS.headersTimeoutMs + 1_500);
  });

  it('cuts off a body that trickles in within the request timeout', async () => {
    const body = JSON.stringify({ query: '{ __typename }', padding: 'p'.repeat(500) });
    const exchange = await raw((socket) => {
      socket.write(`POST /graphql HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\nContent-Length: ${body.length}\r\n\r\n`);
      dribble(socket, body, 20);
    });
    expect(exchange.closedAfterMs).toBeGreaterThanOrEqual(TIMEOUTS.requestTimeoutMs - 50);
    expect(exchange.closedAfterMs).toBeLessThan(TIMEOUTS.requestTimeoutMs + 1_500);
    expect(exchange.received).toMatch(/^HTTP\/1\.1 408 Request Timeout\r\n/);
    expect(jsonBody(exchange.received)).toMatchObject({ error: 'request_timeout' });
  });

  it('uses the documented production defaults', () => {
    expect(DEFAULT_SERVER_TIMEOUTS).toEqual({
      headersTimeoutMs: 10_000,
      requestTimeoutMs: 30_000,
      connectionTimeoutMs: 60_000,
      keepAliveTimeoutMs: 5_000,
      connectionsCheckingIntervalMs: 1_000,
    });
    // A socket is closed after 60 s without traffic, or twice the SSE heartbeat when that is longer.
    expect(socketTimeoutMs(DEFAULT_SERVER_TIMEOUTS, 30)).toBe(60_000);
    expect(socketTimeoutMs(DEFAULT_SERVER_TIMEOUTS, 3_600)).toBe(7_200_000);
  });
});

describe('event streams outlive the request timeouts', () => {
  it('keeps GET /api/v1/picks/stream and /graphql/stream open past the headers and request timeouts', async () => {
    const rest = await connectSse(port, '/api/v1/picks/stream', { authorization: `Bearer ${enterpriseKey}` });
    const query = encodeURIComponent('subscription { pickPublished { sequence pick { id } } }');
    const graphql = await connectSse(port, `/graphql/stream?query=${query}`, { authorization: `Bearer ${ADMIN_TOKEN}` });
    try {
      expect(rest.status).toBe(200);
      expect(graphql.status).toBe(200);
      await new Promise((resolve) => setTimeout(resolve, TIMEOUTS.requestTimeoutMs + 1_000));
      // Heartbeats kept flowing on the REST stream; both are still open and deliver events.
      expect(rest.raw().match(/: heartbeat/g)?.length ?? 0).toBeGreaterThanOrEqual(2);
      const published = await t.graphql<{ publishPick: { id: string } }>(PUBLISH, { input: pickInput({ homeTeam: 'Slow Rovers', selection: 'Slow Rovers' }) });
      const id = published.data!.publishPick.id;
      await rest.waitFor(id);
      await graphql.waitFor(id);
    } finally {
      rest.close();
      graphql.close();
    }
  });
});

describe('body size', () => {
  async function post(url: string, payload: string, authorization = `Bearer ${ADMIN_TOKEN}`) {
    return t.app.inject({ method: 'POST', url, headers: { 'content-type': 'application/json', authorization }, payload });
  }

  it(`refuses bodies over ${BODY_LIMIT_BYTES} bytes on /api/v1 with 413 payload_too_large`, async () => {
    const res = await post('/api/v1/webhooks', JSON.stringify({ url: 'https://hooks.test/a', events: ['pick.published'], padding: 'x'.repeat(BODY_LIMIT_BYTES) }), `Bearer ${enterpriseKey}`);
    expect(res.statusCode).toBe(413);
    expect(res.json()).toEqual({ error: 'payload_too_large', message: expect.any(String) });
  });

  it(`accepts the largest analysis on /graphql even ASCII-escaped, and refuses bodies over ${GRAPHQL_BODY_LIMIT_BYTES} bytes`, async () => {
    const pick = await t.graphql<{ publishPick: { id: string } }>(PUBLISH, { input: pickInput({ homeTeam: 'Escaped United', selection: 'Escaped United' }) });
    const analysis = 'é'.repeat(20_000);
    // As Python's json.dumps does by default: every non-ASCII character as \uXXXX.
    const payload = JSON.stringify({ query: UPSERT_ANALYSIS, variables: { input: { matchId: pick.data!.publishPick.id, analysis } } }).replace(/é/g, '\\u00e9');
    expect(payload.length).toBeGreaterThan(BODY_LIMIT_BYTES);
    const ok = await post('/graphql', payload);
    expect(ok.statusCode, ok.body).toBe(200);
    expect(ok.json().data.upsertMatchAnalysis.analysis).toBe(analysis);

    const tooLarge = await post('/graphql', JSON.stringify({ query: '{ __typename }', padding: 'x'.repeat(GRAPHQL_BODY_LIMIT_BYTES) }));
    expect(tooLarge.statusCode).toBe(413);
    expect(tooLarge.json()).toMatchObject({ error: 'payload_too_large' });
  });
});
