/**
 * Two app instances sharing one PostgreSQL and one Redis. A `.real.test.ts` suite: it runs
 * when DATABASE_URL and REDIS_URL are set (CI's real-services phase); PGlite and the
 * in-memory engines are per process by design.
 */
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestApp, type TestApp } from '../helpers/app.js';
import { ManualClock } from '../../src/domain/clock.js';
import { APPROVE, CREATE_KEY, HOLD, pickInput, PUBLISH, REVOKE_KEY, SETTLE, UPSERT_ANALYSIS } from '../helpers/fixtures.js';
import { connectSse } from '../helpers/sse.js';
import { entryHash, GENESIS_HASH, type LedgerEntry } from '../../src/domain/ledger.js';
// @ts-expect-error The example is plain JavaScript, as a customer would copy it.
import { verifyConsistency, verifyLedger } from '../../docs/examples/verify-ledger.mjs';

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

  it('changes made through both instances at once append to one public ledger: no gap, no fork, every pick stamped with its latest entry', async () => {
    const before = ((await a.app.inject({ method: 'GET', url: '/api/public/ledger/head' })).json() as { seq: number }).seq;
    const publish = (app: TestApp, team: string, status?: string) =>
      app.graphql<{ publishPick: { id: string } }>(PUBLISH, { input: pickInput({ homeTeam: team, selection: team, ...(status ? { status } : {}) }) });
    // 12 publications, 4 of them held for review, through both instances at once.
    const published = await Promise.all(Array.from({ length: 12 }, (_, i) => publish(i % 2 === 0 ? a : b, `Ledger ${i} FC`, i % 3 === 0 ? 'ADMIN_REVIEW' : undefined)));
    const ids = published.map((res) => res.data!.publishPick.id);
    // Then, at once: the held ones approved through A, two visible ones held through B, two settled through A.
    const visible = ids.filter((_, i) => i % 3 !== 0);
    const results = await Promise.all([
      ...ids.filter((_, i) => i % 3 === 0).map((id) => a.graphql(APPROVE, { id })),
      ...visible.slice(0, 2).map((id) => b.graphql(HOLD, { id })),
      ...visible.slice(2, 4).map((id) => a.graphql(SETTLE, { input: { id, result: 'WON', closingOdds: 2.1 } })),
    ]);
    expect(results.flatMap((res) => res.errors ?? [])).toEqual([]);
    const ledger = (await b.app.inject({ method: 'GET', url: `/api/public/ledger?after=${before}&limit=500` })).json() as { entries: LedgerEntry[] };
    // 8 published at once, 4 approved, 2 held, 2 settled.
    expect(ledger.entries).toHaveLength(16);
    let previous = before === 0 ? { seq: 0, hash: GENESIS_HASH } : ((await a.app.inject({ method: 'GET', url: `/api/public/ledger?after=${before - 1}&limit=1` })).json() as { entries: LedgerEntry[] }).entries[0]!;
    for (const entry of ledger.entries) {
      expect(entry.seq).toBe(previous.seq + 1);
      expect(entry.prev_hash).toBe(previous.hash);
      expect(entryHash(entry)).toBe(entry.hash);
      previous = entry;
    }
    const latest = new Map(ledger.entries.map((entry) => [entry.pick_id, entry]));
    const rows = await a.runtime.orm.em.fork().execute<{ id: string; ledger_seq: number; ledger_hash: string }[]>(
      `select id, ledger_seq, ledger_hash from picks where id in (${ids.map(() => '?').join(', ')})`,
      ids,
    );
    for (const row of rows) expect([Number(row.ledger_seq), row.ledger_hash]).toEqual([latest.get(row.id)!.seq, latest.get(row.id)!.hash]);
    // And the customer's verifier, reading instance B over HTTP, finds the whole chain sound.
    await b.app.listen({ port: 0, host: '127.0.0.1' });
    const report = await verifyLedger(`http://127.0.0.1:${(b.app.server.address() as AddressInfo).port}`);
    expect(report.failures).toEqual([]);
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
  it("instance B's read cache never serves a pick change made through A once the bus has carried it (bound 1.5 s, below the 2 s TTL)", async () => {
    const key = (await a.graphql<{ createApiKey: { key: string } }>(CREATE_KEY, { input: { tier: 'GROWTH' } })).data!.createApiKey.key;
    const onB = (url: string) => b.app.inject({ method: 'GET', url, headers: { authorization: `Bearer ${key}` } });
    const listOnB = async () => (await onB('/api/v1/picks?limit=200')).json().data as { id: string; status: string }[];
    // Polls B until it answers what A changed; B's answer is cached before each change.
    async function seenOnB(url: string, check: (body: any) => boolean): Promise<number> {
      const changedAt = Date.now();
      while (Date.now() - changedAt < 1_500) {
        if (check((await onB(url)).json())) return Date.now() - changedAt;
        await new Promise((resolve) => setTimeout(resolve, 20));
      }
      return Infinity;
    }
    const kickoffAt = new Date(Date.now() + 7 * 86_400_000).toISOString();
    await listOnB();
    const hitsBefore = b.app.readCacheStats().hits;
    await listOnB();
    expect(b.app.readCacheStats().hits).toBe(hitsBefore + 1);

    const published = await a.graphql<{ publishPick: { id: string } }>(PUBLISH, { input: pickInput({ homeTeam: 'Cache FC', selection: 'Cache FC', kickoffAt }) });
    const id = published.data!.publishPick.id;
    expect(await seenOnB('/api/v1/picks?limit=200', (body) => body.data.some((pick: { id: string }) => pick.id === id))).toBeLessThan(1_500);
    await listOnB();
    await a.graphql(HOLD, { id });
    expect(await seenOnB('/api/v1/picks?limit=200', (body) => !body.data.some((pick: { id: string }) => pick.id === id))).toBeLessThan(1_500);
    await listOnB();
    await a.graphql(APPROVE, { id });
    expect(await seenOnB('/api/v1/picks?limit=200', (body) => body.data.some((pick: { id: string }) => pick.id === id))).toBeLessThan(1_500);
    await listOnB();
    const settled = await a.graphql(SETTLE, { input: { id, result: 'WON', closingOdds: 2.1 } });
    expect(settled.errors).toBeUndefined();
    expect(
      await seenOnB('/api/v1/picks?limit=200', (body) => body.data.some((pick: { id: string; status: string }) => pick.id === id && pick.status === 'settled')),
    ).toBeLessThan(1_500);
    // The analysis answer (5 s TTL) too: a 404 cached on B, then written through A.
    expect((await onB(`/api/v1/match-analyses/${id}`)).statusCode).toBe(404);
    await a.graphql(UPSERT_ANALYSIS, { input: { matchId: id, analysis: 'Written on A.' } });
    expect(await seenOnB(`/api/v1/match-analyses/${id}`, (body) => body.analysis === 'Written on A.')).toBeLessThan(1_500);
  });
});

describe('two instances signing checkpoints of one ledger', () => {
  let a: TestApp;
  let b: TestApp;
  const clock = new ManualClock('2026-11-22T12:00:00Z');
  beforeAll(async () => {
    a = await createTestApp({ clock });
    b = await createTestApp({ clock, sameDatabaseAs: a });
  });
  afterAll(async () => {
    await b?.close();
    await a?.close();
  });

  it('appends through both and signs from both at once: one checkpoint per size, each consistent with the one before, all with one key', async () => {
    const signed: { treeSize: number; rootHash: string }[] = [];
    for (let round = 0; round < 6; round++) {
      await Promise.all(
        Array.from({ length: 5 }, (_, i) =>
          (i % 2 === 0 ? a : b).graphql(PUBLISH, { input: pickInput({ homeTeam: `Tree ${round} ${i} FC`, selection: `Tree ${round} ${i} FC` }) }),
        ),
      );
      clock.advance(60_000);
      // Both instances find a checkpoint due at once: exactly one signs it.
      const attempts = await Promise.all([a.runtime.services.ledgerLog.signIfDue(), b.runtime.services.ledgerLog.signIfDue()]);
      const made = attempts.filter((attempt) => attempt !== null);
      expect(made).toHaveLength(1);
      signed.push(made[0]!);
    }
    expect(signed.map((checkpoint) => checkpoint.treeSize)).toEqual([5, 10, 15, 20, 25, 30]);
    await a.app.listen({ port: 0, host: '127.0.0.1' });
    const base = `http://127.0.0.1:${(a.app.server.address() as AddressInfo).port}`;
    for (let i = 1; i < signed.length; i++) {
      const { from, to, hashes } = (await (await fetch(`${base}/api/public/ledger/proof/consistency?from=${signed[i - 1]!.treeSize}&to=${signed[i]!.treeSize}`)).json()) as { from: number; to: number; hashes: string[] };
      const b64 = (text: string) => Buffer.from(text, 'base64');
      expect(verifyConsistency(from, to, b64(signed[i - 1]!.rootHash), b64(signed[i]!.rootHash), hashes.map(b64)), `${from} to ${to}`).toBe(true);
    }
    const archived = (await b.runtime.services.ledgerLog.latest())!.note;
    const report = await verifyLedger(base, { key: b.runtime.services.ledgerLog.verifierKey, archived: [archived] });
    expect(report.failures).toEqual([]);
  });
});
