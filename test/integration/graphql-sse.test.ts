/**
 * GraphQL subscriptions over graphql-sse at /graphql/stream, driven by graphql-sse's own
 * client in both modes, against a real listening server on loopback.
 */
import type { AddressInfo } from 'node:net';
import { createClient, type Client } from 'graphql-sse';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ADMIN_TOKEN, createTestApp, type TestApp } from '../helpers/app.js';
import { CREATE_KEY, pickInput, PUBLISH, REVOKE_KEY, SETTLE } from '../helpers/fixtures.js';

let t: TestApp;
let url = '';
const keys: Record<string, string> = {};

beforeAll(async () => {
  t = await createTestApp();
  await t.app.listen({ port: 0, host: '127.0.0.1' });
  url = `http://127.0.0.1:${(t.app.server.address() as AddressInfo).port}/graphql/stream`;
  for (const tier of ['GROWTH', 'ENTERPRISE']) {
    keys[tier.toLowerCase()] = (await t.graphql<{ createApiKey: { key: string } }>(CREATE_KEY, { input: { tier } })).data!.createApiKey.key;
  }
});
afterAll(async () => {
  await t?.close();
});

function client(token: string, singleConnection: boolean): Client {
  return createClient({ url, singleConnection, retryAttempts: 0, headers: { authorization: `Bearer ${token}` } });
}

/** Collects results of one subscription until `count` arrived or an error ends it. */
function collect(c: Client, query: string, count: number): { done: Promise<unknown[]>; dispose: () => void } {
  const results: unknown[] = [];
  let dispose = () => {};
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
    );
  });
  return { done, dispose: () => dispose() };
}

describe.each([
  ['distinct connections', false],
  ['single connection', true],
])('graphql-sse, %s mode', (_mode, singleConnection) => {
  it('delivers pickPublished to an Enterprise key', async () => {
    const c = client(keys.enterprise!, singleConnection);
    const sub = collect(c, 'subscription { pickPublished { sequence pick { id homeTeam status } } }', 1);
    await new Promise((resolve) => setTimeout(resolve, 200));
    const published = await t.graphql<{ publishPick: { id: string } }>(PUBLISH, { input: pickInput() });
    const [result] = (await sub.done) as { data: { pickPublished: { pick: { id: string; status: string } } } }[];
    expect(result!.data.pickPublished.pick).toEqual({ id: published.data!.publishPick.id, homeTeam: 'Arsenal', status: 'PUBLISHED' });
    sub.dispose();
    c.dispose();
  });

  it('refuses a Growth key with tier_upgrade_required', async () => {
    const c = client(keys.growth!, singleConnection);
    const sub = collect(c, 'subscription { pickPublished { sequence } }', 1);
    const outcome = await sub.done.then(
      (results) => JSON.stringify(results),
      (error) => JSON.stringify(error),
    );
    expect(outcome).toContain('tier_upgrade_required');
    c.dispose();
  });

  it('delivers pickSettled to the admin', async () => {
    const c = client(ADMIN_TOKEN, singleConnection);
    const published = await t.graphql<{ publishPick: { id: string } }>(PUBLISH, { input: pickInput() });
    const sub = collect(c, 'subscription { pickSettled { type pick { id result } } }', 1);
    await new Promise((resolve) => setTimeout(resolve, 200));
    await t.graphql(SETTLE, { input: { id: published.data!.publishPick.id, result: 'WON', closingOdds: 2.1 } });
    const [result] = (await sub.done) as { data: { pickSettled: unknown } }[];
    expect(result!.data.pickSettled).toEqual({ type: 'pick.settled', pick: { id: published.data!.publishPick.id, result: 'WON' } });
    sub.dispose();
    c.dispose();
  });
});

describe('access changes', () => {
  it('tells the admin which key was revoked or changed tier', async () => {
    const c = client(ADMIN_TOKEN, false);
    const sub = collect(c, 'subscription { apiKeyAccessChanged { apiKeyId } }', 1);
    await new Promise((resolve) => setTimeout(resolve, 200));
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
    const c = client(key, false);
    const sub = collect(c, 'subscription { pickPublished { sequence } }', 1);
    await new Promise((resolve) => setTimeout(resolve, 200));
    await t.graphql(REVOKE_KEY, { id: apiKey.id });
    const ended = await Promise.race([sub.done.then((results) => results.length), new Promise((resolve) => setTimeout(() => resolve('still open'), 1_000))]);
    expect(ended).toBe(0); // completed without an event
    c.dispose();
  });

  it('is refused to API keys (admin_required)', async () => {
    const c = client(keys.enterprise!, false);
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
});
