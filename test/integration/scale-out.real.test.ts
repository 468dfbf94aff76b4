/**
 * Two app instances sharing one PostgreSQL and one Redis. A `.real.test.ts` suite: it runs
 * when DATABASE_URL and REDIS_URL are set (CI's real-services phase); PGlite and the
 * in-memory engines are per process by design.
 */
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestApp, type TestApp } from '../helpers/app.js';
import { CREATE_KEY, pickInput, PUBLISH, REVOKE_KEY } from '../helpers/fixtures.js';
import { connectSse } from '../helpers/sse.js';

describe('two instances on one PostgreSQL and one Redis', () => {
  let a: TestApp;
  let b: TestApp;
  beforeAll(async () => {
    const env = { TIER_LIMITS: '{"starter":{"hourly":25}}' };
    a = await createTestApp({ env });
    b = await createTestApp({ env, sameDatabaseAs: a });
  });
  afterAll(async () => {
    await b?.close();
    await a?.close();
  });

  it('64 concurrent clients spread over both instances are admitted exactly 25 times in total', async () => {
    const key = (await a.graphql<{ createApiKey: { key: string } }>(CREATE_KEY, { input: { tier: 'STARTER' } })).data!.createApiKey.key;
    const responses = await Promise.all(
      Array.from({ length: 64 }, (_, i) =>
        (i % 2 === 0 ? a : b).app.inject({ method: 'GET', url: '/api/v1/picks?limit=1', headers: { authorization: `Bearer ${key}` } }),
      ),
    );
    expect(responses.filter((res) => res.statusCode === 200)).toHaveLength(25);
    expect(responses.filter((res) => res.statusCode === 429)).toHaveLength(39);
  });

  it('a key revoked through one instance is refused by the other within 1 s', async () => {
    const created = await a.graphql<{ createApiKey: { key: string; apiKey: { id: string } } }>(CREATE_KEY, { input: { tier: 'GROWTH' } });
    const { key, apiKey } = created.data!.createApiKey;
    const call = () => b.app.inject({ method: 'GET', url: '/api/v1/picks?limit=1', headers: { authorization: `Bearer ${key}` } });
    expect((await call()).statusCode).toBe(200); // now cached on instance b
    await a.graphql(REVOKE_KEY, { id: apiKey.id });
    const revokedAt = Date.now();
    let status = 200;
    while (status !== 401 && Date.now() - revokedAt < 1_000) {
      status = (await call()).statusCode;
      if (status !== 401) await new Promise((resolve) => setTimeout(resolve, 20));
    }
    expect(status).toBe(401);
  });

  it("a key revoked through instance A loses its open stream on instance B within 1 s", async () => {
    if (!b.app.server.listening) await b.app.listen({ port: 0, host: '127.0.0.1' });
    const port = (b.app.server.address() as AddressInfo).port;
    const created = await a.graphql<{ createApiKey: { key: string; apiKey: { id: string } } }>(CREATE_KEY, { input: { tier: 'ENTERPRISE' } });
    const { key, apiKey } = created.data!.createApiKey;
    const connection = await connectSse(port, '/api/v1/picks/stream', { authorization: `Bearer ${key}` });
    expect(connection.status).toBe(200);
    const revokedAt = Date.now();
    await a.graphql(REVOKE_KEY, { id: apiKey.id });
    const endedAfter = await Promise.race([
      connection.body().then(() => Date.now() - revokedAt),
      new Promise<number>((resolve) => setTimeout(() => resolve(Infinity), 1_000)),
    ]);
    expect(endedAfter).toBeLessThan(1_000);
  });

  it('a pick published through instance A reaches a stream on instance B within 1 s', async () => {
    if (!b.app.server.listening) await b.app.listen({ port: 0, host: '127.0.0.1' });
    const port = (b.app.server.address() as AddressInfo).port;
    const key = (await a.graphql<{ createApiKey: { key: string } }>(CREATE_KEY, { input: { tier: 'ENTERPRISE' } })).data!.createApiKey.key;
    const connection = await connectSse(port, '/api/v1/picks/stream', { authorization: `Bearer ${key}` });
    expect(connection.status).toBe(200);
    const started = Date.now();
    const published = await a.graphql<{ publishPick: { id: string } }>(PUBLISH, { input: pickInput({ homeTeam: 'Scale FC', selection: 'Scale FC' }) });
    await connection.waitFor(published.data!.publishPick.id, 1_000);
    expect(Date.now() - started).toBeLessThan(1_000);
    connection.close();
  });

  it('an instance of another database on the same Redis does not disturb the stream (channels are per deployment)', async () => {
    const other = await createTestApp();
    try {
      // The other deployment's sequence numbers run ahead of this one's: were its events seen
      // here, this deployment's next event would look like a repeat and be dropped.
      for (let i = 0; i < 8; i += 1) await other.graphql(PUBLISH, { input: pickInput({ homeTeam: `Other ${i} FC`, selection: `Other ${i} FC` }) });
      await new Promise((resolve) => setTimeout(resolve, 300));
      if (!b.app.server.listening) await b.app.listen({ port: 0, host: '127.0.0.1' });
      const port = (b.app.server.address() as AddressInfo).port;
      const key = (await a.graphql<{ createApiKey: { key: string } }>(CREATE_KEY, { input: { tier: 'ENTERPRISE' } })).data!.createApiKey.key;
      const connection = await connectSse(port, '/api/v1/picks/stream', { authorization: `Bearer ${key}` });
      const published = await a.graphql<{ publishPick: { id: string } }>(PUBLISH, { input: pickInput({ homeTeam: 'Own FC', selection: 'Own FC' }) });
      await connection.waitFor(published.data!.publishPick.id, 1_000);
      expect(connection.raw()).not.toContain('Other 0 FC');
      connection.close();
    } finally {
      await other.close();
    }
  });

  it('when the relaying instance stops, the other relays what it left behind', async () => {
    await a.runtime.relay.stop();
    await b.runtime.relay.stop();
    const published = await a.graphql<{ publishPick: { id: string } }>(PUBLISH, { input: pickInput({ homeTeam: 'Left FC', selection: 'Left FC' }) });
    const pending = await a.runtime.orm.em.fork().execute<{ n: string }[]>('select count(*) as n from outbox_events where relayed_at is null');
    expect(Number(pending[0]!.n)).toBeGreaterThan(0);
    const seen: string[] = [];
    const stop = a.runtime.services.feed.listen((message) => seen.push(message.pick.id));
    b.runtime.relay.start();
    const deadline = Date.now() + 3_000;
    while (!seen.includes(published.data!.publishPick.id) && Date.now() < deadline) await new Promise((resolve) => setTimeout(resolve, 20));
    stop();
    expect(seen).toContain(published.data!.publishPick.id);
    a.runtime.relay.start();
  });
});
