/**
 * An open, idle stream must not keep its GraphQL execution (about 7 KB a stream when it did).
 * The yoga context each connection is admitted with (the object passed to streamSlots.cover)
 * must be collectable while the stream is still open: fresh, resumed once handed over, and
 * resumed at the latest event (an EventSource's usual reconnect: nothing to replay).
 * No --expose-gc needed: setFlagsFromString + vm (as test/limits/memory-footprint.test.ts).
 */
import type { AddressInfo } from 'node:net';
import { setFlagsFromString } from 'node:v8';
import { runInNewContext } from 'node:vm';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestApp, type TestApp } from '../helpers/app.js';
import { CREATE_KEY, pickInput, PUBLISH } from '../helpers/fixtures.js';
import { STREAM_OPENING } from '../../adapters/stream/plugin.js';
import { connectSse, type SseConnection } from '../helpers/sse.js';

setFlagsFromString('--expose-gc');
const gc = runInNewContext('gc') as () => void;

let t: TestApp;
let port = 0;
let key = '';
const open: SseConnection[] = [];
const contexts: WeakRef<object>[] = [];

beforeAll(async () => {
  t = await createTestApp();
  // Not vi.spyOn: its mock.calls would keep the contexts alive.
  const slots = t.runtime.services.streamSlots;
  const cover = slots.cover.bind(slots);
  slots.cover = (context, slot) => {
    contexts.push(new WeakRef(context));
    cover(context, slot);
  };
  await t.app.listen({ port: 0, host: '127.0.0.1' });
  port = (t.app.server.address() as AddressInfo).port;
  key = (await t.graphql<{ createApiKey: { key: string } }>(CREATE_KEY, { input: { tier: 'ENTERPRISE' } })).data!.createApiKey.key;
});
afterAll(async () => {
  for (const connection of open) connection.close();
  await t?.close();
});

async function stream(headers: Record<string, string> = {}): Promise<SseConnection> {
  const connection = await connectSse(port, '/api/v1/picks/stream', { authorization: `Bearer ${key}`, ...headers });
  open.push(connection);
  return connection;
}

async function publish(name: string): Promise<{ id: string }> {
  const res = await t.graphql<{ publishPick: { id: string } }>(PUBLISH, { input: pickInput({ homeTeam: name, selection: name }) });
  expect(res.errors).toBeUndefined();
  return res.data!.publishPick;
}

async function collected(refs: WeakRef<object>[]): Promise<number> {
  for (let round = 0; round < 5; round += 1) {
    // A WeakRef's target is kept until the job that made or read it ends.
    await new Promise((resolve) => setImmediate(resolve));
    gc();
  }
  return refs.filter((ref) => ref.deref() === undefined).length;
}

describe('an idle stream keeps only its connection', () => {
  it("lets go of the connection's GraphQL context once the broadcast serves it (fresh, resumed, up to date)", async () => {
    // The feed's listeners before any stream: the instance's broadcast and its other followers.
    const listenersOfTheInstance = t.runtime.services.feed.listenerCount;
    const fresh = await stream();
    await fresh.waitFor(STREAM_OPENING);
    // An event the broadcast has seen, so a resumed connection can be handed over.
    const first = await publish('Memory A');
    const text = await fresh.waitFor(first.id, 3_000);
    const seq = Number([...text.matchAll(/^id: (\d+)$/gm)].at(-1)![1]);
    const resumed = await stream({ 'last-event-id': String(seq - 1) });
    await resumed.waitFor(first.id, 3_000);
    const upToDate = await stream({ 'last-event-id': String(seq) });
    await upToDate.waitFor(STREAM_OPENING);
    expect(t.app.openStreams()).toBe(3);
    // Every one is served by the broadcast: none keeps a subscription (a feed listener) of its own.
    expect(t.runtime.services.feed.listenerCount).toBe(listenersOfTheInstance);
    expect(contexts).toHaveLength(3);

    expect(await collected(contexts)).toBe(3);

    // Still open and live after the collection, and the up-to-date one is sent nothing it had.
    expect(t.app.openStreams()).toBe(3);
    const second = await publish('Memory B');
    for (const connection of [fresh, resumed, upToDate]) await connection.waitFor(second.id, 3_000);
    expect(upToDate.raw()).not.toContain(first.id);
  });
});
