/**
 * One cap for every way an API key subscribes: the REST picks stream, graphql-sse at
 * /graphql/stream and yoga's own SSE on POST /graphql share the key's 10 slots on an
 * instance. The 11th is refused on each surface with HTTP 429 too_many_streams before any
 * stream byte; a slot is given back when its subscription ends, however it ends.
 */
import type { AddressInfo } from 'node:net';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { MAX_STREAMS_PER_KEY } from '../../src/services/stream-slots.js';
import { ADMIN_TOKEN, createTestApp, type TestApp } from '../helpers/app.js';
import { CREATE_KEY, REVOKE_KEY } from '../helpers/fixtures.js';
import { eventually, openStream, PICK_PUBLISHED, type OpenStream, type Surface } from '../helpers/subscriptions.js';

let t: TestApp;
let port = 0;
const open: OpenStream[] = [];
/** Feed listeners with no subscription open (the REST stream's broadcast). */
let idleListeners = 0;

beforeAll(async () => {
  t = await createTestApp();
  await t.app.listen({ port: 0, host: '127.0.0.1' });
  port = (t.app.server.address() as AddressInfo).port;
  idleListeners = t.runtime.services.feed.listenerCount;
});
afterEach(async () => {
  const streams = open.splice(0);
  for (const stream of streams) stream.close();
  await Promise.all(streams.map((stream) => stream.ended));
  // Each test starts with nothing left of the one before.
  await eventually(() => t.runtime.services.feed.listenerCount === idleListeners, 5_000, 'every subscription was ended');
});
afterAll(async () => {
  await t?.close();
});

async function enterpriseKey(): Promise<{ key: string; id: string }> {
  const created = await t.graphql<{ createApiKey: { key: string; apiKey: { id: string } } }>(CREATE_KEY, { input: { tier: 'ENTERPRISE' } });
  return { key: created.data!.createApiKey.key, id: created.data!.createApiKey.apiKey.id };
}

async function subscribe(surface: Surface, key: string): Promise<OpenStream> {
  const stream = await openStream(port, surface, `Bearer ${key}`);
  open.push(stream);
  return stream;
}

const heldBy = (apiKeyId: string) => t.runtime.services.streamSlots.count(apiKeyId);

/** The documented refusal of each surface: REST's JSON, graphql-sse's GraphQL JSON, yoga's coded error. */
async function expectTooManyStreams(stream: OpenStream): Promise<void> {
  expect(stream.status, `${stream.surface}: ${stream.raw()}`).toBe(429);
  const body = await stream.ended;
  if (stream.surface === 'rest') expect(JSON.parse(body)).toMatchObject({ error: 'too_many_streams' });
  else if (stream.surface === 'graphql-sse') expect(JSON.parse(body)).toMatchObject({ errors: [{ extensions: { code: 'too_many_streams' } }] });
  else expect(body).toContain('"code":"too_many_streams"');
}

const SURFACES: Surface[] = ['rest', 'graphql-sse', 'yoga'];

describe('one cap of 10 streams per key across every surface', () => {
  it('fills the 10 slots across surfaces; the 11th is refused on each surface with 429 too_many_streams', async () => {
    const { key, id } = await enterpriseKey();
    const mix: Surface[] = ['rest', 'rest', 'rest', 'rest', 'graphql-sse', 'graphql-sse', 'graphql-sse', 'yoga', 'yoga', 'yoga'];
    const held: OpenStream[] = [];
    for (const surface of mix) held.push(await subscribe(surface, key));
    expect(held.map((stream) => stream.status)).toEqual(mix.map(() => 200));
    expect(heldBy(id)).toBe(MAX_STREAMS_PER_KEY);
    for (const surface of SURFACES) await expectTooManyStreams(await subscribe(surface, key));
    expect(heldBy(id)).toBe(MAX_STREAMS_PER_KEY);
  });

  it.each(SURFACES)('a slot freed by a client disconnecting on %s lets a new subscription in, on any surface', async (freed) => {
    const { key, id } = await enterpriseKey();
    const held: OpenStream[] = [];
    for (let i = 0; i < MAX_STREAMS_PER_KEY; i += 1) held.push(await subscribe(SURFACES[i % SURFACES.length]!, key));
    for (const surface of SURFACES) await expectTooManyStreams(await subscribe(surface, key));
    for (const surface of SURFACES) {
      const leaving = held.find((stream) => stream.surface === freed)!;
      held.splice(held.indexOf(leaving), 1);
      leaving.close();
      await eventually(() => heldBy(id) === MAX_STREAMS_PER_KEY - 1, 5_000, 'the slot was given back');
      const again = await subscribe(surface, key);
      expect(again.status, `${surface}: ${again.raw()}`).toBe(200);
      held.push(again);
    }
  });

  it('admits exactly 10 of 15 subscriptions of one key opened at the same moment on all three surfaces', async () => {
    const { key, id } = await enterpriseKey();
    const streams = await Promise.all(Array.from({ length: 15 }, (_, i) => subscribe(SURFACES[i % SURFACES.length]!, key)));
    expect(streams.filter((stream) => stream.status === 200)).toHaveLength(MAX_STREAMS_PER_KEY);
    expect(streams.filter((stream) => stream.status === 429)).toHaveLength(15 - MAX_STREAMS_PER_KEY);
    expect(heldBy(id)).toBe(MAX_STREAMS_PER_KEY);
  });

  it('gives every slot back when the key is revoked (the streams end on every surface)', async () => {
    const { key, id } = await enterpriseKey();
    const held: OpenStream[] = [];
    for (let i = 0; i < MAX_STREAMS_PER_KEY; i += 1) held.push(await subscribe(SURFACES[i % SURFACES.length]!, key));
    expect(heldBy(id)).toBe(MAX_STREAMS_PER_KEY);
    await t.graphql(REVOKE_KEY, { id });
    await Promise.all(held.map((stream) => stream.ended));
    await eventually(() => heldBy(id) === 0, 5_000, 'every slot was given back');
  });

  it('does not cap the admin (on the GraphQL surfaces: the REST stream refuses the admin token)', async () => {
    const operatorSurfaces = SURFACES.filter((surface) => surface !== 'rest');
    const streams = await Promise.all(Array.from({ length: MAX_STREAMS_PER_KEY + 2 }, (_, i) => openStream(port, operatorSurfaces[i % operatorSurfaces.length]!, `Bearer ${ADMIN_TOKEN}`)));
    open.push(...streams);
    expect(streams.map((stream) => stream.status)).toEqual(streams.map(() => 200));
  });
});

describe('subscriptions yoga cannot deliver', () => {
  it.each(['application/json', 'application/graphql-response+json'])(
    'a subscription sent to /graphql with Accept %s holds no slot and no feed listener after its 406',
    async (accept) => {
      const { key, id } = await enterpriseKey();
      for (let i = 0; i < MAX_STREAMS_PER_KEY + 2; i += 1) {
        const res = await t.app.inject({
          method: 'POST',
          url: '/graphql',
          headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json', accept },
          payload: { query: PICK_PUBLISHED },
        });
        expect(res.statusCode).toBe(406);
      }
      await eventually(() => heldBy(id) === 0 && t.runtime.services.feed.listenerCount === idleListeners, 5_000, 'nothing was left behind');
      const stream = await subscribe('yoga', key);
      expect(stream.status).toBe(200);
    },
  );
});
