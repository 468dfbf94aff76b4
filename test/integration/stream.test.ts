import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ADMIN_TOKEN, createTestApp, type TestApp } from '../helpers/app.js';
import { CREATE_ACCOUNT, SET_ACCOUNT_TIER } from '../helpers/dashboard.js';
import { APPROVE, CREATE_KEY, HOLD, pickInput, PUBLISH, REVOKE_KEY } from '../helpers/fixtures.js';
import { STREAM_OPENING } from '../../adapters/stream/plugin.js';
import { connectSse, type SseConnection } from '../helpers/sse.js';
import { eventually } from '../helpers/subscriptions.js';

let t: TestApp;
let port = 0;
const keys: Record<string, string> = {};
const open: SseConnection[] = [];

beforeAll(async () => {
  t = await createTestApp({ env: { STREAM_HEARTBEAT_SECONDS: '1' } });
  await t.app.listen({ port: 0, host: '127.0.0.1' });
  port = (t.app.server.address() as AddressInfo).port;
  for (const tier of ['STARTER', 'GROWTH', 'ENTERPRISE']) {
    keys[tier.toLowerCase()] = (await t.graphql<{ createApiKey: { key: string } }>(CREATE_KEY, { input: { tier } })).data!.createApiKey.key;
  }
});
afterAll(async () => {
  for (const connection of open) connection.close();
  await t?.close();
});

async function stream(key: string | null, headers: Record<string, string> = {}): Promise<SseConnection> {
  const connection = await connectSse(port, '/api/v1/picks/stream', { ...(key ? { authorization: `Bearer ${key}` } : {}), ...headers });
  open.push(connection);
  return connection;
}

async function publish(overrides: Record<string, unknown> = {}): Promise<any> {
  const res = await t.graphql<{ publishPick: any }>(PUBLISH, { input: pickInput(overrides) });
  expect(res.errors).toBeUndefined();
  const ledger = await t.graphql<{ pick: { ledgerSeq: number; ledgerHash: string } }>('query($id: ID!) { pick(id: $id) { ledgerSeq ledgerHash } }', { id: res.data!.publishPick.id });
  return { ...res.data!.publishPick, ...ledger.data!.pick };
}

async function latestSeq(): Promise<number> {
  const rows = await t.runtime.orm.em.fork().execute<{ seq: string }[]>('select max(seq) as seq from outbox_events');
  return Number(rows[0]?.seq ?? 0);
}

/** Waits until every committed event has been relayed (bounded). */
async function relayed(): Promise<void> {
  const deadline = Date.now() + 3_000;
  for (;;) {
    const rows = await t.runtime.orm.em.fork().execute<{ n: string }[]>('select count(*) as n from outbox_events where relayed_at is null');
    if (Number(rows[0]!.n) === 0) return;
    if (Date.now() > deadline) throw new Error('events were not relayed within 3 s');
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
}

function expectedFrame(seq: number, pick: any): string {
  const data = {
    id: pick.id,
    sport: pick.sport,
    league: pick.league,
    home_team: pick.homeTeam,
    away_team: pick.awayTeam,
    kickoff_at: pick.kickoffAt,
    pick: pick.pick,
    odds: pick.odds,
    edge_pct: pick.edgePct,
    confidence: pick.confidence,
    status: 'published',
    settled_at: null,
    result: null,
    stake_pct: pick.stakePct,
    market: pick.market,
    selection: pick.selection,
    line: null,
    warnings: [],
    closing_odds: null,
    final_score: { home: null, away: null },
    ledger_seq: pick.ledgerSeq,
    ledger_hash: pick.ledgerHash,
    bookmaker: { name: pick.bookmaker.name, slug: pick.bookmaker.slug },
    reference_fair_odds: pick.referenceFairOdds,
    // Percent, like edge_pct, of GraphQL's fraction: 4 decimals.
    edge_pct_post_tax: Number((pick.edgePctPostTax * 100).toFixed(4)),
    kelly_fraction: pick.kellyFraction,
    published_at: pick.publishedAt,
    // Published by hand: never checked.
    availability: { status: 'unknown', odds_now: null, edge_pct_now: null, checked_at: null, since: null },
    best_odds_since_published: null,
  };
  return `id: ${seq}\nevent: pick.published\ndata: ${JSON.stringify(data)}\n\n`;
}

describe('GET /api/v1/picks/stream', () => {
  it('refuses missing keys (401) and Starter/Growth keys (403, minimum_tier enterprise)', async () => {
    const anonymous = await stream(null);
    expect(anonymous.status).toBe(401);
    expect(JSON.parse(await anonymous.body())).toMatchObject({ error: 'invalid_api_key' });
    for (const tier of ['starter', 'growth']) {
      const refused = await stream(keys[tier]!);
      expect(refused.status).toBe(403);
      expect(JSON.parse(await refused.body())).toMatchObject({ error: 'tier_upgrade_required', minimum_tier: 'enterprise' });
      expect(refused.headers['x-ratelimit-limit']).toBeDefined();
    }
    // The admin token is not a customer key: refused as any other non-key (operators use /graphql/stream).
    const admin = await stream(ADMIN_TOKEN);
    expect(admin.status).toBe(401);
    expect(JSON.parse(await admin.body())).toMatchObject({ error: 'invalid_api_key' });
    expect(admin.headers['www-authenticate']).toBe('Bearer realm="api", error="invalid_token"');
  });

  it('streams a published pick as the documented frame, byte for byte, with the stream headers', async () => {
    const connection = await stream(keys.enterprise!);
    expect(connection.status).toBe(200);
    expect(connection.headers['content-type']).toBe('text/event-stream; charset=utf-8');
    expect(connection.headers['cache-control']).toBe('no-cache');
    expect(connection.headers['x-accel-buffering']).toBe('no');
    expect(connection.headers['x-ratelimit-limit']).toBe('10000');
    const second = await connectSse(port, '/api/v1/picks/stream', { authorization: `Bearer ${keys.enterprise}` });
    open.push(second);
    const pick = await publish();
    const seq = await latestSeq();
    const frame = expectedFrame(seq, pick);
    await connection.waitFor(frame, 3_000);
    expect(connection.raw().replaceAll(': heartbeat\n\n', '')).toBe(STREAM_OPENING + frame);
    // A second stream of the same key carries the same bytes.
    await second.waitFor(frame, 3_000);
    expect(second.raw().replaceAll(': heartbeat\n\n', '')).toBe(STREAM_OPENING + frame);
    connection.close();
    second.close();
  });

  it('sends a heartbeat comment every STREAM_HEARTBEAT_SECONDS', async () => {
    const connection = await stream(keys.enterprise!);
    // STREAM_HEARTBEAT_SECONDS is 1 here: two heartbeats arrive (bounded generously), and a quiet
    // stream carries nothing but them (after the first comment the stream may open with).
    const text = await connection.waitFor(/(: heartbeat\n\n[^]*){2}/, 10_000);
    expect(text.match(/: heartbeat\n\n/g)!.length).toBeGreaterThanOrEqual(2);
    expect(text).not.toMatch(/^(event|data|id):/m);
    connection.close();
  });

  it('never shows admin_review picks; an approved pick appears at approval', async () => {
    const connection = await stream(keys.enterprise!);
    // Kickoff a week ahead of the real clock: a held pick can be approved only before kickoff.
    const kickoffAt = new Date(Date.now() + 7 * 24 * 3_600_000).toISOString();
    const held = await publish({ status: 'ADMIN_REVIEW', homeTeam: 'Held FC', selection: 'Held FC', kickoffAt });
    const visible = await publish({ homeTeam: 'Visible FC', selection: 'Visible FC' });
    await connection.waitFor(visible.id, 3_000);
    expect(connection.raw()).not.toContain(held.id);
    await t.graphql(APPROVE, { id: held.id });
    await connection.waitFor(held.id, 3_000);
    connection.close();
  });

  it('resumes with Last-Event-ID: exactly the missed events, then live, without duplicates', async () => {
    const first = await publish({ homeTeam: 'Resume A', selection: 'Resume A' });
    const afterSeq = await latestSeq();
    const missed = [await publish({ homeTeam: 'Resume B', selection: 'Resume B' }), await publish({ homeTeam: 'Resume C', selection: 'Resume C' })];
    const hiddenAgain = await publish({ homeTeam: 'Resume D', selection: 'Resume D' });
    await t.graphql(HOLD, { id: hiddenAgain.id });
    // The client was away while all of this was published and relayed.
    await relayed();
    const connection = await stream(keys.enterprise!, { 'last-event-id': String(afterSeq) });
    await connection.waitFor(missed[1].id, 3_000);
    const live = await publish({ homeTeam: 'Resume E', selection: 'Resume E' });
    await connection.waitFor(live.id, 3_000);
    const ids = [...connection.raw().matchAll(/"id":"([^"]+)"/g)].map((match) => match[1]);
    expect(ids).toEqual([missed[0].id, missed[1].id, live.id]);
    expect(connection.raw()).not.toContain(first.id);
    const seqs = [...connection.raw().matchAll(/^id: (\d+)$/gm)].map((match) => Number(match[1]));
    expect([...seqs].sort((a, b) => a - b)).toEqual(seqs);
    connection.close();
  });

  it('hands resuming connections over to the live broadcast with no gap and no duplicate while picks keep coming', async () => {
    const key = (await t.graphql<{ createApiKey: { key: string } }>(CREATE_KEY, { input: { tier: 'ENTERPRISE' } })).data!.createApiKey.key;
    await relayed();
    const before = await latestSeq();
    const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));
    const published: any[] = [];
    const publishing = (async () => {
      for (let i = 0; i < 12; i += 1) {
        published.push(await publish({ homeTeam: `Flow ${i}`, selection: `Flow ${i}` }));
        await sleep(10);
      }
    })();
    // Connections resume from points behind, at and ahead of what the broadcast has seen.
    const resumed: { from: number; connection: SseConnection }[] = [];
    for (let i = 0; i < 8; i += 1) {
      await sleep(15);
      const from = Math.max(before, (await latestSeq()) - (i % 4));
      resumed.push({ from, connection: await stream(key, { 'last-event-id': String(from) }) });
    }
    await publishing;
    const rows = await t.runtime.orm.em
      .fork()
      .execute<{ seq: string }[]>(`select seq from outbox_events where type = 'pick.published' and seq > ? order by seq`, [before]);
    const all = rows.map((row) => Number(row.seq));
    expect(all).toHaveLength(12);
    for (const { from, connection } of resumed) {
      expect(connection.status).toBe(200);
      await connection.waitFor(`"id":"${published.at(-1).id}"`, 3_000);
      const seqs = [...connection.raw().matchAll(/^id: (\d+)$/gm)].map((match) => Number(match[1]));
      expect({ from, seqs }).toEqual({ from, seqs: all.filter((seq) => seq > from) });
      connection.close();
    }
  });

  it("ends a key's open streams within 1 s when the key is revoked; reconnecting gets 401", async () => {
    const created = await t.graphql<{ createApiKey: { key: string; apiKey: { id: string } } }>(CREATE_KEY, { input: { tier: 'ENTERPRISE' } });
    const { key, apiKey } = created.data!.createApiKey;
    const bystander = await stream(keys.enterprise!);
    const live = await stream(key);
    const resuming = await stream(key, { 'last-event-id': String(await latestSeq()) });
    expect([live.status, resuming.status]).toEqual([200, 200]);
    const revokedAt = Date.now();
    await t.graphql(REVOKE_KEY, { id: apiKey.id });
    const ended = await Promise.race([
      Promise.all([live.body(), resuming.body()]).then(() => Date.now() - revokedAt),
      new Promise<number>((resolve) => setTimeout(() => resolve(Infinity), 1_000)),
    ]);
    expect(ended).toBeLessThan(1_000);
    const again = await stream(key);
    expect(again.status).toBe(401);
    expect(JSON.parse(await again.body())).toMatchObject({ error: 'invalid_api_key' });
    // Other keys' streams go on.
    const pick = await publish({ homeTeam: 'After Revocation', selection: 'After Revocation' });
    await bystander.waitFor(pick.id, 3_000);
    bystander.close();
  });

  it("ends an account's streams when it moves below Enterprise (reconnect: 403), and streams again once back on Enterprise", async () => {
    const account = await t.graphql<{ createAccount: { id: string } }>(CREATE_ACCOUNT, {
      input: { email: `streams-${Date.now()}@example.com`, password: 'correct horse battery staple', tier: 'ENTERPRISE' },
    });
    const accountId = account.data!.createAccount.id;
    const created = await t.graphql<{ createApiKey: { key: string } }>(CREATE_KEY, { input: { accountId } });
    const key = created.data!.createApiKey.key;
    const before = await stream(key);
    expect(before.status).toBe(200);
    await t.graphql(SET_ACCOUNT_TIER, { id: accountId, tier: 'GROWTH' });
    await before.body(); // ended
    const refused = await stream(key);
    expect(refused.status).toBe(403);
    expect(JSON.parse(await refused.body())).toMatchObject({ error: 'tier_upgrade_required', minimum_tier: 'enterprise' });
    // Back to Enterprise: the key streams again.
    await t.graphql(SET_ACCOUNT_TIER, { id: accountId, tier: 'ENTERPRISE' });
    const after = await stream(key);
    expect(after.status).toBe(200);
    after.close();
  });

  it.each(['abc', '-1', '1.5', ''])('rejects Last-Event-ID %j with 400 invalid_parameter', async (value) => {
    const connection = await stream(keys.enterprise!, { 'last-event-id': value });
    expect(connection.status).toBe(400);
    expect(JSON.parse(await connection.body())).toMatchObject({ error: 'invalid_parameter', parameter: 'Last-Event-ID' });
  });

  it('admits exactly 10 of 14 streams of one key opened at the same moment', async () => {
    const key = (await t.graphql<{ createApiKey: { key: string } }>(CREATE_KEY, { input: { tier: 'ENTERPRISE' } })).data!.createApiKey.key;
    const streams = await Promise.all(Array.from({ length: 14 }, () => stream(key)));
    expect(streams.filter((s) => s.status === 200)).toHaveLength(10);
    expect(streams.filter((s) => s.status === 429)).toHaveLength(4);
    for (const s of streams) s.close();
  });

  it('allows at most 10 concurrent streams per key (429 too_many_streams), and frees slots on disconnect', async () => {
    const key = (await t.graphql<{ createApiKey: { key: string } }>(CREATE_KEY, { input: { tier: 'ENTERPRISE' } })).data!.createApiKey.key;
    const streams = await Promise.all(Array.from({ length: 10 }, () => stream(key)));
    expect(streams.every((s) => s.status === 200)).toBe(true);
    const eleventh = await stream(key);
    expect(eleventh.status).toBe(429);
    expect(JSON.parse(await eleventh.body())).toMatchObject({ error: 'too_many_streams' });
    const held = t.app.openStreams();
    expect(held).toBeGreaterThanOrEqual(10);
    streams[0]!.close();
    await eventually(() => t.app.openStreams() === held - 1, 5_000, 'the closed stream was let go');
    const again = await stream(key);
    expect(again.status).toBe(200);
    for (const s of [...streams, again]) s.close();
    await eventually(() => t.app.openStreams() === held - 10, 5_000, 'every closed stream was let go');
  });
});

describe('outbox relay', () => {
  it('relays an event a crashed instance committed but never published', async () => {
    const connection = await stream(keys.enterprise!);
    await t.runtime.relay.stop();
    const pick = await publish({ homeTeam: 'Orphan FC', selection: 'Orphan FC' });
    const before = await t.runtime.orm.em.fork().execute<{ n: string }[]>('select count(*) as n from outbox_events where relayed_at is null');
    expect(Number(before[0]!.n)).toBeGreaterThan(0);
    t.runtime.relay.start();
    await connection.waitFor(pick.id, 3_000);
    await relayed();
    connection.close();
  });
});
