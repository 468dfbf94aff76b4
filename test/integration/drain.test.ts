/**
 * Draining (what SIGTERM runs: app.close()) on a real listening server: a request already being
 * received completes, its response says `Connection: close`; a request that arrives meanwhile
 * gets the JSON 503 `service_unavailable` of every other surface, not Fastify's own body; and
 * close() ends as soon as they are answered, without waiting for keep-alive timeouts.
 */
import net, { type AddressInfo } from 'node:net';
import { afterEach, describe, expect, it } from 'vitest';
import { createTestApp, ADMIN_TOKEN, type TestApp } from '../helpers/app.js';
import { pickInput, PUBLISH } from '../helpers/fixtures.js';

let t: TestApp | null = null;
afterEach(async () => {
  await t?.close();
  t = null;
});

/** A raw connection: write at will, collect everything until the server closes it. */
async function connect(port: number) {
  const socket = net.connect(port, '127.0.0.1');
  let received = '';
  socket.setEncoding('utf8');
  socket.on('data', (chunk: string) => (received += chunk));
  socket.on('error', () => undefined);
  const closed = new Promise<string>((resolve) => socket.on('close', () => resolve(received)));
  await new Promise<void>((resolve) => socket.once('connect', () => resolve()));
  return { write: (text: string) => socket.write(text), closed };
}

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

describe('draining', () => {
  it('completes the request in flight, answers a late one with JSON 503 service_unavailable, and closes promptly', async () => {
    t = await createTestApp();
    await t.app.listen({ port: 0, host: '127.0.0.1' });
    const port = (t.app.server.address() as AddressInfo).port;

    // In flight: headers and part of the body are in when close() starts.
    const body = JSON.stringify({ query: PUBLISH, variables: { input: pickInput({ homeTeam: 'Drain FC', selection: 'Drain FC' }) } });
    const inFlight = await connect(port);
    inFlight.write(`POST /graphql HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\nAuthorization: Bearer ${ADMIN_TOKEN}\r\nContent-Length: ${Buffer.byteLength(body)}\r\n\r\n${body.slice(0, 50)}`);
    // Late: a request whose headers are still arriving when close() starts.
    const late = await connect(port);
    late.write('GET /api/public/picks/today HTTP/1.1\r\nHost: 127.0.0.1\r\n');
    await sleep(50);

    const started = Date.now();
    const closing = t.app.close();
    await sleep(100);
    late.write('\r\n');
    inFlight.write(body.slice(50));

    const refused = await late.closed;
    expect(refused).toMatch(/^HTTP\/1\.1 503 /);
    expect(refused.toLowerCase()).toContain('\r\nconnection: close\r\n');
    expect(refused.toLowerCase()).toContain('\r\nretry-after: 1\r\n');
    expect(JSON.parse(refused.slice(refused.indexOf('\r\n\r\n') + 4))).toEqual({
      error: 'service_unavailable',
      message: 'This instance is shutting down; retry the request.',
    });

    const answered = await inFlight.closed;
    expect(answered).toMatch(/^HTTP\/1\.1 200 /);
    expect(answered.toLowerCase()).toContain('\r\nconnection: close\r\n');
    expect(answered).toContain('"homeTeam":"Drain FC"');

    await closing;
    // No keep-alive timeout (5 s) was waited for.
    expect(Date.now() - started).toBeLessThan(2_000);
  });
});
