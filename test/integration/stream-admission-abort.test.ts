/**
 * A client that leaves while its stream is being admitted (authenticated, counted, subscribed)
 * has had its connection's 'close' emitted before the stream could listen for it: the stream
 * must still let go of everything, its slot above all (ten such drops used to lock a key out of
 * streaming on that instance until a restart).
 */
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { createTestApp, type TestApp } from '../helpers/app.js';
import { CREATE_KEY } from '../helpers/fixtures.js';

let t: TestApp;
let port = 0;
let key = '';
let apiKeyId = '';

beforeAll(async () => {
  t = await createTestApp();
  await t.app.listen({ port: 0, host: '127.0.0.1' });
  port = (t.app.server.address() as AddressInfo).port;
  const created = (await t.graphql<{ createApiKey: { key: string; apiKey: { id: string } } }>(CREATE_KEY, { input: { tier: 'ENTERPRISE' } })).data!.createApiKey;
  key = created.key;
  apiKeyId = created.apiKey.id;
});

afterAll(async () => {
  await t?.close();
});

it('frees the stream and its slot of a client that left during admission', async () => {
  const slots = t.runtime.services.streamSlots;
  const auth = t.runtime.services.auth as unknown as { consume: (...args: unknown[]) => Promise<unknown> };
  const consume = auth.consume.bind(auth);
  // Admission waits here until the client has gone and the server has seen its socket close.
  let admit!: () => void;
  const admitted = new Promise<void>((resolve) => (admit = resolve));
  let consuming!: () => void;
  const consumeStarted = new Promise<void>((resolve) => (consuming = resolve));
  auth.consume = async (...args: unknown[]) => {
    consuming();
    await admitted;
    return consume(...args);
  };
  // The slot the stream reserves, and its release.
  const reserve = slots.reserve.bind(slots);
  let released!: () => void;
  const slotReleased = new Promise<void>((resolve) => (released = resolve));
  slots.reserve = (...args: Parameters<typeof slots.reserve>) => {
    const slot = reserve(...args);
    if (slot) {
      const release = slot.release.bind(slot);
      slot.release = () => (released(), release());
    }
    return slot;
  };
  const serverSocketClosed = new Promise<void>((resolve) => t.app.server.once('connection', (socket) => socket.once('close', () => resolve())));
  try {
    const req = http.get({ host: '127.0.0.1', port, path: '/api/v1/picks/stream', headers: { authorization: `Bearer ${key}`, accept: 'text/event-stream' } });
    req.on('error', () => undefined);
    await consumeStarted;
    req.destroy();
    await serverSocketClosed;
    admit();
    await slotReleased;
  } finally {
    auth.consume = consume;
    slots.reserve = reserve;
  }
  expect(t.app.openStreams()).toBe(0);
  expect(slots.count(apiKeyId)).toBe(0);
});
