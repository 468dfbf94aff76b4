/**
 * GraphQL over WebSocket at /graphql/ws (graphql-transport-ws), driven by graphql-ws's own client
 * in Node over a real socket on loopback, rule by rule beside the graphql-sse tests it mirrors:
 * the credential in connection_init, the tier, a stream token's origin and scope, the stream caps,
 * revocation ending a subscription, the document limits, queries counted like requests, resume
 * with afterSequence, and the close codes (4400, 4401, 4403, 4408, 4429).
 */
import type { AddressInfo } from 'node:net';
import { createClient, type Client } from 'graphql-ws';
import WebSocket from 'ws';
import { afterAll, beforeAll, describe, expect, it, onTestFinished } from 'vitest';
import { MAX_STREAMS_PER_KEY } from '../../src/services/stream-slots.js';
import { ADMIN_TOKEN, createTestApp, type TestApp } from '../helpers/app.js';
import { CREATE_KEY, pickInput, PUBLISH, REVOKE_KEY } from '../helpers/fixtures.js';
import { waitUntil } from '../helpers/processes.js';

const PAGE = 'https://picks.example.com';
let t: TestApp;
let url = '';

beforeAll(async () => {
  t = await createTestApp();
  await t.app.listen({ port: 0, host: '127.0.0.1' });
  url = `ws://127.0.0.1:${(t.app.server.address() as AddressInfo).port}/graphql/ws`;
});
afterAll(() => t?.close());

async function newKey(tier: string): Promise<{ key: string; id: string }> {
  const created = await t.graphql<{ createApiKey: { key: string; apiKey: { id: string } } }>(CREATE_KEY, { input: { tier } });
  return { key: created.data!.createApiKey.key, id: created.data!.createApiKey.apiKey.id };
}

/** A client that does not retry, whose socket closes are recorded; closed when the test ends. */
function client(authorization: string | null, options: { origin?: string } = {}): Client & { closed: Promise<{ code: number; reason: string }> } {
  let onClosed: (event: { code: number; reason: string }) => void = () => {};
  const closed = new Promise<{ code: number; reason: string }>((resolve) => (onClosed = resolve));
  const c = createClient({
    url,
    retryAttempts: 0,
    lazy: false,
    connectionParams: authorization === null ? {} : { authorization },
    webSocketImpl: class extends WebSocket {
      constructor(address: string, protocols: string | string[]) {
        super(address, protocols, options.origin ? { origin: options.origin } : {});
      }
    },
    on: { closed: (event) => onClosed(event as { code: number; reason: string }) },
    onNonLazyError: () => {},
  });
  onTestFinished(() => c.dispose());
  return Object.assign(c, { closed });
}

/** One subscription's results until `count` arrived, an error, or completion. */
function collect(c: Client, query: string, count: number) {
  const results: unknown[] = [];
  let dispose = () => {};
  const done = new Promise<{ results: unknown[]; error?: unknown; completed?: boolean }>((resolve) => {
    dispose = c.subscribe(
      { query },
      {
        next: (value) => {
          results.push(value);
          if (results.length >= count) resolve({ results });
        },
        error: (error) => resolve({ results, error }),
        complete: () => resolve({ results, completed: true }),
      },
    );
  });
  return { done, dispose: () => dispose() };
}

const PICK_PUBLISHED = 'subscription { pickPublished { sequence pick { id homeTeam } } }';
/** The stream slots one key's subscriptions hold on this instance (its own count: other tests' releases do not move it). */
const slotsOf = (apiKeyId: string, pool: 'key' | 'token' = 'key') => t.runtime.services.streamSlots.count(apiKeyId, pool);
const publish = (homeTeam: string) => t.graphql<{ publishPick: { id: string } }>(PUBLISH, { input: pickInput({ homeTeam, selection: homeTeam }) });

describe('graphql-ws at /graphql/ws', () => {
  it('delivers pickPublished to an Enterprise key, the credential in connection_init', async () => {
    const { key, id } = await newKey('ENTERPRISE');
    const sub = collect(client(`Bearer ${key}`), PICK_PUBLISHED, 1);
    // The subscription holds one of the key's stream slots once it is set up: then it is live.
    await waitUntil('the subscription to hold its slot', () => slotsOf(id) === 1);
    await publish('WebSocket FC');
    const { results } = await sub.done;
    expect(results).toEqual([{ data: { pickPublished: { sequence: expect.any(String), pick: { id: expect.any(String), homeTeam: 'WebSocket FC' } } } }]);
    sub.dispose();
    // Ending it gives the slot back.
    await waitUntil('the slot to be given back', () => slotsOf(id) === 0);
  });

  it('runs queries and mutations over the socket as over HTTP: the admin may publish, a key is counted', async () => {
    const admin = client(`Bearer ${ADMIN_TOKEN}`);
    const { results } = await collect(admin, '{ todayPicks(limit: 1) { id } }', 1).done;
    expect(results[0]).toMatchObject({ data: { todayPicks: expect.any(Array) } });
    // Without credentials: the anonymous fields, as on /graphql (the per-address limit counts it).
    const anonymous = client(null);
    expect((await collect(anonymous, '{ todayPicks(limit: 1) { id } }', 1).done).results[0]).toMatchObject({ data: { todayPicks: expect.any(Array) } });
    // A subscription needs a key: a 401 on /graphql/stream, the socket closed with 4401 here.
    collect(anonymous, PICK_PUBLISHED, 1);
    expect(await anonymous.closed).toMatchObject({ code: 4401, reason: 'invalid_api_key' });
    const { key, id } = await newKey('GROWTH');
    const before = (await t.runtime.services.auth.usage(id, 'growth')).hourly.remaining;
    await collect(client(`Bearer ${key}`), '{ picks(first: 1) { count } }', 1).done;
    expect((await t.runtime.services.auth.usage(id, 'growth')).hourly.remaining).toBe(before - 1);
  });

  it('refuses a Growth key the subscription with tier_upgrade_required, as that operation\'s result', async () => {
    const { key } = await newKey('GROWTH');
    const { results } = await collect(client(`Bearer ${key}`), PICK_PUBLISHED, 1).done;
    expect(results).toEqual([{ errors: [expect.objectContaining({ extensions: expect.objectContaining({ code: 'tier_upgrade_required' }) })] }]);
  });

  it('closes with 4401 an authorization that is no credential, 4400 one that is not a string', async () => {
    const bad = client('Bearer service_nope');
    expect(await bad.closed).toMatchObject({ code: 4401 });
    const notText = createClient({ url, retryAttempts: 0, lazy: false, connectionParams: { authorization: 42 }, webSocketImpl: WebSocket, onNonLazyError: () => {} });
    onTestFinished(() => notText.dispose());
    const closed = await new Promise<{ code: number }>((resolve) => notText.on('closed', (event) => resolve(event as { code: number })));
    expect(closed.code).toBe(4400);
  });

  it('closes with 4408 a socket that never sends connection_init', async () => {
    const socket = new WebSocket(url, 'graphql-transport-ws');
    onTestFinished(() => socket.terminate());
    const code = await new Promise<number>((resolve) => socket.on('close', (closeCode) => resolve(closeCode)));
    expect(code).toBe(4408);
  });

  it('closes with 4429 the subscription past the key stream cap', async () => {
    const { key, id } = await newKey('ENTERPRISE');
    const c = client(`Bearer ${key}`);
    for (let i = 0; i < MAX_STREAMS_PER_KEY; i++) collect(c, PICK_PUBLISHED, 1);
    await waitUntil('every slot held', () => slotsOf(id) === MAX_STREAMS_PER_KEY);
    collect(c, PICK_PUBLISHED, 1);
    expect(await c.closed).toMatchObject({ code: 4429, reason: 'too_many_streams' });
    await waitUntil('the slots given back', () => slotsOf(id) === 0);
  });

  it('gives back every slot when the socket closes, also of a subscription completed and resubscribed under one id while it was admitted', async () => {
    const { key, id } = await newKey('ENTERPRISE');
    const socket = new WebSocket(url, 'graphql-transport-ws');
    onTestFinished(() => socket.terminate());
    await new Promise((resolve) => socket.once('open', resolve));
    socket.send(JSON.stringify({ type: 'connection_init', payload: { authorization: `Bearer ${key}` } }));
    await new Promise((resolve) => socket.once('message', resolve));
    // In one burst, without waiting: graphql-ws forgets the earlier subscriptions of the id.
    for (let i = 0; i < 3; i++) {
      socket.send(JSON.stringify({ id: 'x', type: 'subscribe', payload: { query: PICK_PUBLISHED } }));
      socket.send(JSON.stringify({ id: 'x', type: 'complete' }));
    }
    socket.send(JSON.stringify({ id: 'x', type: 'subscribe', payload: { query: PICK_PUBLISHED } }));
    await waitUntil('the last subscription to hold its slot', () => slotsOf(id) > 0);
    socket.close();
    await waitUntil('every slot given back', () => slotsOf(id) === 0);
  });

  it('answers a mutation over its own limit as its result, leaving the socket and its subscriptions open', async () => {
    const { key, id } = await newKey('ENTERPRISE');
    const c = client(`Bearer ${key}`);
    const live = collect(c, PICK_PUBLISHED, 1);
    await waitUntil('the subscription to be live', () => slotsOf(id) === 1);
    // A key mints at most 60 stream tokens an hour: the 61st is refused, as over HTTP, in its result.
    let refused: unknown = null;
    for (let i = 0; i < 61 && refused === null; i++) {
      const { results } = await collect(c, 'mutation { createStreamToken(ttlSeconds: 120) { expiresAt } }', 1).done;
      const errors = (results[0] as { errors?: { extensions?: { code?: string } }[] }).errors;
      if (errors) refused = errors[0]!.extensions!.code;
    }
    expect(refused).toBe('stream_token_limit');
    await publish('Still Open FC');
    expect((await live.done).results).toEqual([{ data: { pickPublished: expect.objectContaining({ pick: expect.objectContaining({ homeTeam: 'Still Open FC' }) }) } }]);
  });

  it('ends a subscription when its key is revoked', async () => {
    const { key, id } = await newKey('ENTERPRISE');
    const sub = collect(client(`Bearer ${key}`), PICK_PUBLISHED, 1);
    await waitUntil('the subscription to be live', () => slotsOf(id) === 1);
    expect((await t.graphql(REVOKE_KEY, { id })).errors).toBeUndefined();
    expect(await sub.done).toMatchObject({ results: [], completed: true });
  });

  it('applies the document limits before anything is counted', async () => {
    const { key, id } = await newKey('ENTERPRISE');
    const before = (await t.runtime.services.auth.usage(id, 'enterprise')).hourly.remaining;
    const deep = `subscription { pickPublished { pick { ${'analysis { pick { '.repeat(12)}id${' } }'.repeat(12)} } } }`;
    const { error } = await collect(client(`Bearer ${key}`), deep, 1).done;
    expect(error).toEqual([expect.objectContaining({ message: expect.any(String) })]);
    expect((await t.runtime.services.auth.usage(id, 'enterprise')).hourly.remaining).toBe(before);
  });

  it('resumes with afterSequence: the events after it, then live', async () => {
    const { key } = await newKey('ENTERPRISE');
    const first = (await publish('Resume A')).data!.publishPick.id;
    await publish('Resume B');
    const events = await t.runtime.orm.em.fork().execute<{ seq: string; pick_id: string }[]>('select seq, pick_id from outbox_events order by seq');
    const after = events.find((event) => event.pick_id === first)!.seq;
    const { results } = await collect(client(`Bearer ${key}`), `subscription { pickPublished(afterSequence: "${after}") { pick { homeTeam } } }`, 1).done;
    expect(results).toEqual([{ data: { pickPublished: { pick: { homeTeam: 'Resume B' } } } }]);
  });
});

describe('keep-alive', () => {
  it('pings every STREAM_HEARTBEAT_SECONDS', async () => {
    const app = await createTestApp({ env: { STREAM_HEARTBEAT_SECONDS: '1' } });
    onTestFinished(() => app.close());
    await app.app.listen({ port: 0, host: '127.0.0.1' });
    const socket = new WebSocket(`ws://127.0.0.1:${(app.app.server.address() as AddressInfo).port}/graphql/ws`, 'graphql-transport-ws');
    onTestFinished(() => socket.terminate());
    await new Promise((resolve) => socket.once('open', resolve));
    socket.send(JSON.stringify({ type: 'connection_init', payload: {} }));
    await new Promise((resolve) => socket.once('ping', resolve));
    expect(socket.readyState).toBe(WebSocket.OPEN);
  });
});

describe('shutdown', () => {
  it('closes open sockets when the server closes, so a drain is not held', async () => {
    const app = await createTestApp();
    await app.app.listen({ port: 0, host: '127.0.0.1' });
    const socket = new WebSocket(`ws://127.0.0.1:${(app.app.server.address() as AddressInfo).port}/graphql/ws`, 'graphql-transport-ws');
    onTestFinished(() => socket.terminate());
    await new Promise((resolve) => socket.once('open', resolve));
    const closed = new Promise<number>((resolve) => socket.once('close', resolve));
    await app.close();
    expect(await closed).toBeGreaterThanOrEqual(1000);
  });
});

describe('stream tokens over the socket', () => {
  let lastKeyId = '';
  async function token(origins: string[]): Promise<string> {
    const { key, id } = await newKey('ENTERPRISE');
    lastKeyId = id;
    const minted = await t.graphql<{ createStreamToken: { token: string } }>(
      `mutation($origins: [String!]) { createStreamToken(ttlSeconds: 120, origins: $origins) { token } }`,
      { origins },
      `Bearer ${key}`,
    );
    return minted.data!.createStreamToken.token;
  }

  it('receives pickPublished from an origin of the token', async () => {
    const tokenText = await token([PAGE]);
    const sub = collect(client(`Bearer ${tokenText}`, { origin: PAGE }), PICK_PUBLISHED, 1);
    await waitUntil('the token subscription to be live', () => slotsOf(lastKeyId, 'token') === 1);
    await publish('Token FC');
    expect((await sub.done).results).toEqual([{ data: { pickPublished: expect.objectContaining({ pick: expect.objectContaining({ homeTeam: 'Token FC' }) }) } }]);
  });

  it('closes with 4403 a token from another origin, with 4401 one running anything but its subscriptions; refuses a field outside the frame', async () => {
    const tokenText = await token([PAGE]);
    expect(await client(`Bearer ${tokenText}`, { origin: 'https://evil.example.com' }).closed).toMatchObject({ code: 4403 });
    const c = client(`Bearer ${tokenText}`, { origin: PAGE });
    const analysis = await collect(c, 'subscription { pickPublished { pick { analysis { analysis } } } }', 1).done;
    expect(analysis.error).toEqual([expect.objectContaining({ extensions: expect.objectContaining({ code: 'field_not_allowed' }) })]);
    // As on /graphql/stream, where it is a 401: a stream token is no credential for a query.
    collect(c, '{ todayPicks { id } }', 1);
    expect(await c.closed).toMatchObject({ code: 4401, reason: 'invalid_api_key' });
  });
});
