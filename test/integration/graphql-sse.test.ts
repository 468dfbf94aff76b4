/**
 * GraphQL subscriptions over graphql-sse at /graphql/stream, driven by graphql-sse's own
 * client (distinct connections, its default) against a real listening server on loopback.
 * Single-connection mode is not served: its reservations (PUT) are refused and a token never
 * reaches graphql-sse's reservation table (docs/REALTIME.md).
 */
import type { AddressInfo } from 'node:net';
import { createClient, type Client } from 'graphql-sse';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ADMIN_TOKEN, createTestApp, type TestApp } from '../helpers/app.js';
import { CREATE_KEY, pickInput, PUBLISH, REVOKE_KEY, SETTLE } from '../helpers/fixtures.js';
import { openStream } from '../helpers/subscriptions.js';

let t: TestApp;
let port = 0;
let url = '';
const keys: Record<string, string> = {};

beforeAll(async () => {
  t = await createTestApp();
  await t.app.listen({ port: 0, host: '127.0.0.1' });
  port = (t.app.server.address() as AddressInfo).port;
  url = `http://127.0.0.1:${port}/graphql/stream`;
  for (const tier of ['GROWTH', 'ENTERPRISE']) {
    keys[tier.toLowerCase()] = (await t.graphql<{ createApiKey: { key: string } }>(CREATE_KEY, { input: { tier } })).data!.createApiKey.key;
  }
});
afterAll(async () => {
  await t?.close();
});

function client(token: string): Client {
  return createClient({ url, retryAttempts: 0, headers: { authorization: `Bearer ${token}` } });
}

/**
 * Collects results of one subscription until `count` arrived or an error ends it. `live`
 * resolves when the server has answered with the event stream's headers, which it sends only
 * once the subscription is set up: events committed from then on reach it.
 */
function collect(c: Client, query: string, count: number): { live: Promise<void>; done: Promise<unknown[]>; dispose: () => void } {
  const results: unknown[] = [];
  let dispose = () => {};
  let connected = () => {};
  const live = new Promise<void>((resolve) => (connected = resolve));
  const done = new Promise<unknown[]>((resolve, reject) => {
    dispose = c.subscribe(
      { query },
      {
        next: (value) => {
          results.push(value);
          if (results.length >= count) resolve(results);
        },
        error: (error) => reject(error),
        complete: () => resolve(results),
      },
      { connected: () => connected() },
    );
  });
  return { live, done, dispose: () => dispose() };
}

/** A bound on waits that should take milliseconds, so a hang fails with a message instead of the test timeout. */
function within<T>(promise: Promise<T>, what: string, ms = 10_000): Promise<T> {
  return Promise.race([promise, new Promise<T>((_, reject) => setTimeout(() => reject(new Error(`${what} did not happen within ${ms} ms`)), ms))]);
}

describe('graphql-sse, distinct connections', () => {
  it('delivers pickPublished to an Enterprise key', async () => {
    const c = client(keys.enterprise!);
    const sub = collect(c, 'subscription { pickPublished { sequence pick { id homeTeam status } } }', 1);
    await within(sub.live, 'the subscription going live');
    const published = await t.graphql<{ publishPick: { id: string } }>(PUBLISH, { input: pickInput() });
    const [result] = (await sub.done) as { data: { pickPublished: { pick: { id: string; status: string } } } }[];
    expect(result!.data.pickPublished.pick).toEqual({ id: published.data!.publishPick.id, homeTeam: 'Arsenal', status: 'PUBLISHED' });
    sub.dispose();
    c.dispose();
  });

  it('refuses a Growth key with tier_upgrade_required', async () => {
    const c = client(keys.growth!);
    const sub = collect(c, 'subscription { pickPublished { sequence } }', 1);
    const outcome = await sub.done.then(
      (results) => JSON.stringify(results),
      (error) => JSON.stringify(error),
    );
    expect(outcome).toContain('tier_upgrade_required');
    c.dispose();
  });

  it('delivers pickSettled to the admin', async () => {
    const c = client(ADMIN_TOKEN);
    const published = await t.graphql<{ publishPick: { id: string } }>(PUBLISH, { input: pickInput() });
    const sub = collect(c, 'subscription { pickSettled { type pick { id result } } }', 1);
    await within(sub.live, 'the subscription going live');
    await t.graphql(SETTLE, { input: { id: published.data!.publishPick.id, result: 'WON', closingOdds: 2.1 } });
    const [result] = (await sub.done) as { data: { pickSettled: unknown } }[];
    expect(result!.data.pickSettled).toEqual({ type: 'pick.settled', pick: { id: published.data!.publishPick.id, result: 'WON' } });
    sub.dispose();
    c.dispose();
  });

  it('ignores a single-connection token sent along with an event-stream request', async () => {
    const stream = await openStream(port, 'graphql-sse', `Bearer ${keys.enterprise}`, { headers: { 'x-graphql-event-stream-token': 'client-chosen' } });
    expect(stream.status).toBe(200);
    const published = await t.graphql<{ publishPick: { id: string } }>(PUBLISH, { input: pickInput() });
    await stream.waitFor(published.data!.publishPick.id);
    stream.close();
  });
});

describe('access changes', () => {
  it('tells the admin which key was revoked or changed tier', async () => {
    const c = client(ADMIN_TOKEN);
    const sub = collect(c, 'subscription { apiKeyAccessChanged { apiKeyId } }', 1);
    await within(sub.live, 'the subscription going live');
    const created = await t.graphql<{ createApiKey: { apiKey: { id: string } } }>(CREATE_KEY, { input: { tier: 'GROWTH' } });
    const id = created.data!.createApiKey.apiKey.id;
    await t.graphql(REVOKE_KEY, { id });
    const [result] = (await sub.done) as { data: { apiKeyAccessChanged: unknown } }[];
    expect(result!.data.apiKeyAccessChanged).toEqual({ apiKeyId: id });
    sub.dispose();
    c.dispose();
  });

  it("ends an API key's pickPublished subscription when the key is revoked", async () => {
    const created = await t.graphql<{ createApiKey: { key: string; apiKey: { id: string } } }>(CREATE_KEY, { input: { tier: 'ENTERPRISE' } });
    const { key, apiKey } = created.data!.createApiKey;
    const c = client(key);
    const sub = collect(c, 'subscription { pickPublished { sequence } }', 1);
    await within(sub.live, 'the subscription going live');
    await t.graphql(REVOKE_KEY, { id: apiKey.id });
    const results = await within(sub.done, 'the subscription completing');
    expect(results).toEqual([]); // completed without an event
    c.dispose();
  });

  it('is refused to API keys (admin_required)', async () => {
    const c = client(keys.enterprise!);
    const sub = collect(c, 'subscription { apiKeyAccessChanged { apiKeyId } }', 1);
    const outcome = await sub.done.then(
      (results) => JSON.stringify(results),
      (error) => JSON.stringify(error),
    );
    expect(outcome).toContain('admin_required');
    c.dispose();
  });
});

describe('graphql-sse refusals', () => {
  it('answers an invalid key with 401 and a coded GraphQL error', async () => {
    const res = await fetch(url, {
      method: 'POST',
      headers: { authorization: 'Bearer nope', 'content-type': 'application/json', accept: 'text/event-stream' },
      body: JSON.stringify({ query: 'subscription { pickPublished { sequence } }' }),
    });
    expect(res.status).toBe(401);
    expect(await res.json()).toMatchObject({ errors: [{ extensions: { code: 'invalid_api_key' } }] });
  });

  it.each([
    ['POST', 'application/json', {}],
    ['GET', '*/*', {}],
    ['POST', 'application/json', { 'x-graphql-event-stream-token': 'abc' }],
  ])('answers a %s that is not an event stream (Accept %s, %j) with 400 invalid_request', async (method, accept, headers) => {
    const res = await t.app.inject({
      method: method as 'GET' | 'POST',
      url: '/graphql/stream',
      headers: { authorization: `Bearer ${keys.enterprise}`, accept, ...(method === 'POST' ? { 'content-type': 'application/json' } : {}), ...headers },
      ...(method === 'POST' ? { payload: { query: '{ __typename }', extensions: { operationId: '1' } } } : {}),
    });
    expect(res.statusCode, res.body).toBe(400);
    expect(res.json()).toMatchObject({ errors: [{ message: expect.stringContaining('text/event-stream'), extensions: { code: 'invalid_request' } }] });
  });
});

describe('single-connection mode is not served', () => {
  it.each(['PUT', 'DELETE'] as const)('%s /graphql/stream answers 405 method_not_allowed with Allow: GET, POST', async (method) => {
    for (const authorization of [undefined, `Bearer ${keys.enterprise}`, `Bearer ${ADMIN_TOKEN}`]) {
      const res = await t.app.inject({
        method,
        url: `/graphql/stream${method === 'DELETE' ? '?operationId=1' : ''}`,
        headers: { accept: 'text/plain', 'x-graphql-event-stream-token': 'mine', ...(authorization ? { authorization } : {}) },
      });
      expect(res.statusCode).toBe(405);
      expect(res.headers.allow).toBe('GET, POST');
      expect(res.json()).toEqual({
        errors: [{ message: expect.stringContaining('single-connection'), extensions: { code: 'method_not_allowed' } }],
      });
    }
  });

  it('an unauthenticated PUT flood reserves nothing: a GET with a flooded token gets no stream', async () => {
    const tokens = Array.from({ length: 2_000 }, (_, i) => `flood-${i}`);
    for (const token of tokens) {
      const res = await t.app.inject({ method: 'PUT', url: '/graphql/stream', headers: { 'x-graphql-event-stream-token': token } });
      expect(res.statusCode).toBe(405);
    }
    // The reservation's stream would be a GET carrying the token as header or query parameter.
    for (const token of [tokens[0]!, tokens[1_999]!]) {
      for (const request of [{ headers: { 'x-graphql-event-stream-token': token } }, { query: `?token=${token}` }]) {
        const res = await fetch(`${url}${request.query ?? ''}`, { headers: { accept: 'text/event-stream', ...request.headers } });
        expect(res.status).toBe(400);
        expect(res.headers.get('content-type')).toContain('application/json');
        expect(await res.json()).toMatchObject({ errors: [{ extensions: { code: 'invalid_request' } }] });
      }
    }
  });
});
