/**
 * Two Authorization headers are ambiguous credentials: 401 invalid_api_key on every
 * authenticated surface, never the first one taken (Node keeps only the first in
 * `req.headers`). Sent as raw HTTP over a loopback socket, so the duplicate really arrives.
 */
import { connect, type AddressInfo } from 'node:net';
import type { FastifyInstance } from 'fastify';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { buildApp } from '../../src/app.js';
import { ADMIN_TOKEN, createTestApp, type TestApp } from '../helpers/app.js';
import { CREATE_KEY } from '../helpers/fixtures.js';

let t: TestApp;
let app: FastifyInstance;
let port = 0;
let key = '';

beforeAll(async () => {
  t = await createTestApp();
  key = (await t.graphql<{ createApiKey: { key: string } }>(CREATE_KEY, { input: { tier: 'ENTERPRISE' } })).data!.createApiKey.key;
  app = await buildApp(t.runtime, { logger: { level: 'error' } });
  await app.listen({ port: 0, host: '127.0.0.1' });
  port = (app.server.address() as AddressInfo).port;
});
afterAll(async () => {
  await app?.close();
  await t?.close();
});

/** Sends one request as written (header lines included) and reads the answer's status line and body. */
function rawRequest(method: string, path: string, headerLines: string[], body = ''): Promise<{ status: number; received: string }> {
  return new Promise((resolve, reject) => {
    const socket = connect({ host: '127.0.0.1', port });
    let received = '';
    socket.setEncoding('utf8');
    socket.on('error', reject);
    socket.on('data', (chunk: string) => {
      received += chunk;
      // A refusal is a complete, small answer; an accepted event stream would stay open.
      const status = /^HTTP\/1\.1 (\d{3}) /.exec(received);
      if (status && received.includes('\r\n\r\n') && (received.includes('"errors"') || received.includes('"error"') || received.includes('"data"'))) {
        socket.destroy();
        resolve({ status: Number(status[1]), received });
      }
    });
    socket.on('close', () => {
      const status = /^HTTP\/1\.1 (\d{3}) /.exec(received);
      if (status) resolve({ status: Number(status[1]), received });
      else reject(new Error(`no HTTP answer: ${JSON.stringify(received)}`));
    });
    const lines = [`${method} ${path} HTTP/1.1`, `Host: 127.0.0.1:${port}`, ...headerLines, 'Connection: close'];
    if (body) lines.push('Content-Type: application/json', `Content-Length: ${Buffer.byteLength(body)}`);
    socket.write(`${lines.join('\r\n')}\r\n\r\n${body}`);
  });
}

const graphqlBody = JSON.stringify({ query: '{ picks(first: 1) { count } }' });
const subscriptionBody = JSON.stringify({ query: 'subscription { pickPublished { sequence } }' });

const surfaces: [string, string, string, string[], string][] = [
  ['REST /api/v1/picks', 'GET', '/api/v1/picks?limit=1', [], ''],
  ['/graphql', 'POST', '/graphql', [], graphqlBody],
  ['/graphql/stream', 'POST', '/graphql/stream', ['Accept: text/event-stream'], subscriptionBody],
  ['the REST stream', 'GET', '/api/v1/picks/stream', ['Accept: text/event-stream'], ''],
];

describe('two Authorization headers', () => {
  it.each(surfaces)('%s: 401 invalid_api_key, whichever comes first', async (_name, method, path, headers, body) => {
    for (const pair of [
      [`Bearer ${key}`, 'Bearer service_nope'],
      ['Bearer service_nope', `Bearer ${key}`],
      [`Bearer ${key}`, `Bearer ${key}`],
      [`Bearer ${ADMIN_TOKEN}`, `Bearer ${key}`],
    ]) {
      const res = await rawRequest(method, path, [...headers, ...pair.map((value) => `Authorization: ${value}`)], body);
      expect(res.status, res.received).toBe(401);
      expect(res.received).toContain('invalid_api_key');
    }
  });

  it.each(surfaces.slice(0, 2))('%s: one Authorization header over the same raw path is served', async (_name, method, path, headers, body) => {
    const res = await rawRequest(method, path, [...headers, `Authorization: Bearer ${key}`], body);
    expect(res.status, res.received).toBe(200);
  });
});
