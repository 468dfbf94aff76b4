/**
 * The public ledger end to end, checked by the customer's verifier (docs/examples/verify-ledger.mjs)
 * over loopback HTTP: a real history (publish, review, hold, republish, settle, an import) verifies,
 * nothing of a pick leaks before kickoff, REST and webhook bodies witness the chain, and each kind
 * of tampering with the stored rows fails at exactly the entry tampered with, on a fresh database.
 */
import { execFile } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it, onTestFinished } from 'vitest';
import { ManualClock } from '../../src/domain/clock.js';
import { commitmentOf, entryHash, type CommittedPick, type LedgerEntryType } from '../../src/domain/ledger.js';
import { webhookBody, type WebhookEventType } from '../../src/domain/webhook.js';
import type { PickSnapshot } from '../../src/domain/pick-shape.js';
import { dateOf, executeBound, jsonOf } from '../../src/persistence/sql.js';
import { announceChange } from '../helpers/announce.js';
import { createTestApp, type TestApp } from '../helpers/app.js';
import { APPROVE, CREATE_KEY, HOLD, PUBLISH, SETTLE, pickInput } from '../helpers/fixtures.js';
// @ts-expect-error The example is plain JavaScript, as a customer would copy it.
import { resultsFromScore, verifyLedger } from '../../docs/examples/verify-ledger.mjs';

const VERIFIER = fileURLToPath(new URL('../../docs/examples/verify-ledger.mjs', import.meta.url));

interface Entry { seq: number; type: string; pick_id: string; hash: string; pick?: Record<string, unknown>; salt?: string }
interface Failure { seq: number; check: string; message: string }
interface Report {
  ok: boolean;
  failures: Failure[];
  entries: Entry[];
  counts: Record<string, number>;
  imported: string[];
  withdrawn: string[];
  settlements: { seq: number; pickId: string; result: string; byHand: boolean; recomputed: string | null; clv: number | null }[];
  meanClv: number | null;
  received: { checked: number; skipped: number; unrevealed: number };
}
const verify = (base: string, options: Record<string, unknown> = {}): Promise<Report> => verifyLedger(base, options);
const checks = (report: Report) => report.failures.map(({ seq, check }) => ({ seq, check }));

interface Booted { t: TestApp; clock: ManualClock; base: string }

/** An app on its own database, listening on loopback; closed when the test ends (inTest) or by the caller. */
async function boot(start: string, { inTest = true } = {}): Promise<Booted> {
  const clock = new ManualClock(start);
  const t = await createTestApp({ clock });
  if (inTest) onTestFinished(() => t.close());
  await t.app.listen({ port: 0, host: '127.0.0.1' });
  return { t, clock, base: `http://127.0.0.1:${(t.app.server.address() as AddressInfo).port}` };
}

/** A GraphQL mutation that must succeed; its single field's value. */
async function mutate(t: TestApp, query: string, variables: Record<string, unknown>): Promise<{ id: string }> {
  const res = await t.graphql<Record<string, { id: string }>>(query, variables);
  expect(res.errors).toBeUndefined();
  return Object.values(res.data!)[0]!;
}
const publish = async (t: TestApp, overrides: Record<string, unknown>) => (await mutate(t, PUBLISH, { input: pickInput(overrides) })).id;
const settle = (t: TestApp, id: string, result: string, closingOdds: number) => mutate(t, SETTLE, { input: { id, result, closingOdds } });
const sql = (t: TestApp, text: string, parameters: unknown[] = []) => executeBound<Record<string, unknown>>(t.runtime.orm.em.fork(), text, parameters);

/** The webhook bodies the service would deliver: built from its outbox exactly as the dispatcher builds them. */
async function webhookBodies(t: TestApp): Promise<Record<string, any>[]> {
  const rows = await sql(t, 'select id, type, payload, created_at from outbox_events order by seq');
  return rows.map((row) =>
    JSON.parse(
      webhookBody({
        id: String(row.id),
        type: row.type as WebhookEventType,
        createdAt: dateOf(row.created_at).toISOString(),
        pick: jsonOf<{ pick: PickSnapshot }>(row.payload).pick,
      }),
    ),
  );
}

describe('a history of picks', () => {
  let h: Booted;
  const ids: Record<string, string> = {};
  let beforeKickoff: { now: Date; body: string };
  let lateHold: Awaited<ReturnType<TestApp['graphql']>>;

  afterAll(() => h?.t.close());
  beforeAll(async () => {
    h = await boot('2026-11-22T12:00:00Z', { inTest: false });
    const { t, clock } = h;
    // Imported: published before the ledger's time, its kickoff already past when it is appended.
    ids.F = await publish(t, { kickoffAt: '2026-11-20T15:00:00Z', publishedAt: '2026-11-19T10:00:00Z' });
    ids.A = await publish(t, { kickoffAt: '2026-12-01T15:00:00Z' });
    ids.B = await publish(t, { homeTeam: 'Liverpool', awayTeam: 'Everton', market: 'totals', selection: 'Over', line: 2.5, odds: 1.95, referenceFairOdds: 1.85, kickoffAt: '2026-12-01T17:30:00Z' });
    ids.C = await publish(t, { homeTeam: 'Newcastle', awayTeam: 'Chelsea', market: 'spreads', selection: 'Chelsea', line: 0.75, odds: 1.9, referenceFairOdds: 1.8, kickoffAt: '2026-12-02T15:00:00Z', status: 'ADMIN_REVIEW' });
    ids.D = await publish(t, { homeTeam: 'Leeds', awayTeam: 'Burnley', selection: 'Draw', odds: 3.4, referenceFairOdds: 3.2, kickoffAt: '2026-12-02T20:00:00Z' });
    ids.E = await publish(t, { homeTeam: 'Brentford', awayTeam: 'Fulham', selection: 'Fulham', odds: 3.77, referenceFairOdds: 3.5, kickoffAt: '2026-12-20T15:00:00Z' });
    ids.G = await publish(t, { homeTeam: 'Wolves', awayTeam: 'Spurs', selection: 'Wolves', odds: 2.6, referenceFairOdds: 2.4, kickoffAt: '2026-12-02T18:00:00Z' });
    clock.advance(3_600_000);
    await mutate(t, APPROVE, { id: ids.C }); // held, never visible: its first pick.published
    await mutate(t, HOLD, { id: ids.D }); // pick.held
    await mutate(t, HOLD, { id: ids.G }); // pick.held, never shown again: withdrawn
    clock.advance(3_600_000);
    await mutate(t, APPROVE, { id: ids.D }); // pick.republished
    beforeKickoff = { now: clock.now(), body: await (await fetch(`${h.base}/api/public/ledger?limit=500`)).text() };

    clock.set('2026-12-02T21:00:00Z');
    lateHold = await t.graphql(HOLD, { id: ids.D });
    await settle(t, ids.A, 'WON', 2.1);
    await settle(t, ids.B, 'LOST', 1.9);
    // As the value engine settles: with the final score (Chelsea +0.75 at 2-1 is half lost).
    await t.runtime.services.picks.settle({ id: ids.C, result: 'half_lost', closingOdds: 1.85, finalScore: { home: 2, away: 1 } });
    await settle(t, ids.D, 'WON', 3.3);
    await settle(t, ids.F, 'WON', 2.0);
  });

  it('verifies, with the entries made, the import apart and REST witnessing the latest entry of each pick', async () => {
    expect(lateHold.errors?.[0]?.extensions?.code).toBe('invalid_transition');
    expect(lateHold.errors?.[0]?.message).toBe('A pick in status published cannot become admin_review: the kickoff has passed; a pick cannot be held after kickoff.');
    const report = await verify(h.base, { now: h.clock.now() });
    expect(report.failures).toEqual([]);
    expect(report.ok).toBe(true);
    expect(report.counts).toEqual({ 'pick.published': 7, 'pick.held': 2, 'pick.republished': 1, 'pick.settled': 5 });
    expect(report.entries.map((entry) => entry.seq)).toEqual([...Array(15).keys()].map((i) => i + 1));
    // Held before kickoff and never shown again: on the record as withdrawn, and revealed like the others.
    expect(report.withdrawn).toEqual([ids.G]);
    expect(report.entries.filter((entry) => entry.pick_id === ids.G).map((entry) => [entry.type, (entry as { pick?: { odds: number } }).pick?.odds])).toEqual([
      ['pick.published', 2.6],
      ['pick.held', 2.6],
    ]);
    expect(report.entries.filter((entry) => entry.pick_id === ids.D).map((entry) => entry.type)).toEqual(['pick.published', 'pick.held', 'pick.republished', 'pick.settled']);
    expect(report.imported).toEqual([ids.F]);
    const recomputed = report.settlements.find((settlement) => settlement.pickId === ids.C);
    expect(recomputed).toMatchObject({ result: 'half_lost', byHand: false, recomputed: 'half_lost' });
    expect(report.settlements.find((settlement) => settlement.pickId === ids.A)).toMatchObject({ byHand: true, recomputed: null, clv: expect.closeTo(100 * (2.2 / 2.1 - 1), 9) });
    expect(report.settlements).toHaveLength(5);

    const key = (await mutate(h.t, CREATE_KEY, { input: { tier: 'ENTERPRISE' } }) as unknown as { key: string }).key;
    const rest = await h.t.app.inject({ method: 'GET', url: '/api/v1/picks?limit=50', headers: { authorization: `Bearer ${key}` } });
    const picks = rest.json().data as { id: string; ledger_seq: number; ledger_hash: string }[];
    expect(picks.map((pick) => pick.id).sort()).toEqual(Object.values(ids).filter((id) => id !== ids.G).sort());
    for (const pick of picks) {
      const latest = report.entries.filter((entry) => entry.pick_id === pick.id).at(-1)!;
      expect({ seq: pick.ledger_seq, hash: pick.ledger_hash }).toEqual({ seq: latest.seq, hash: latest.hash });
    }
    // Read as received bodies, the REST picks are the picks committed (E's is not revealed yet).
    const asReceived = await verify(h.base, { now: h.clock.now(), received: picks.map((data) => ({ id: `rest ${data.id}`, data })) });
    expect(asReceived.failures).toEqual([]);
    expect(asReceived.received).toEqual({ checked: 6, skipped: 0, unrevealed: 1 });
  });

  it('shows no pick and no salt before kickoff, and nothing of the pick in the body', async () => {
    const before = JSON.parse(beforeKickoff.body) as { entries: (Entry & { reveal_after: string })[] };
    expect(before.entries).toHaveLength(10);
    for (const entry of before.entries) {
      const ahead = Date.parse(entry.reveal_after) > beforeKickoff.now.getTime();
      expect(ahead).toBe(entry.pick_id !== ids.F);
      expect('pick' in entry || 'salt' in entry).toBe(!ahead);
    }
    // After the other kickoffs, E's kickoff is still ahead: its entry tells nothing of it.
    const body = await (await fetch(`${h.base}/api/public/ledger?limit=500`)).text();
    const late = (JSON.parse(body) as { entries: Entry[] }).entries;
    const hidden = late.filter((entry) => entry.pick_id === ids.E);
    expect(hidden).toHaveLength(1);
    expect(Object.keys(hidden[0]!).sort()).toEqual(['at', 'commitment', 'hash', 'pick_id', 'prev_hash', 'reveal_after', 'seq', 'type']);
    expect(late.filter((entry) => entry.pick_id !== ids.E).every((entry) => entry.pick && entry.salt)).toBe(true);
    for (const text of [beforeKickoff.body, body]) {
      for (const secret of ['3.77', 'Fulham', 'Brentford']) expect(text).not.toContain(secret);
    }
  });

  it('checks webhook bodies: matching ones pass, a wrong hash fails at its seq, bodies without ledger fields are counted', async () => {
    const bodies = await webhookBodies(h.t);
    expect(bodies).toHaveLength(12); // 7 pick.published, 5 pick.settled
    const good = await verify(h.base, { now: h.clock.now(), received: bodies });
    expect(good.failures).toEqual([]);
    expect(good.received).toEqual({ checked: 12, skipped: 0, unrevealed: 1 });

    const forged = structuredClone(bodies[3]!);
    forged.data.ledger_hash = 'f'.repeat(64);
    const { ledger_seq: _seq, ledger_hash: _hash, ...unwitnessed } = bodies[0]!.data;
    const bad = await verify(h.base, { now: h.clock.now(), received: [...bodies, forged, { ...bodies[0], data: unwitnessed }] });
    expect(checks(bad)).toEqual([{ seq: forged.data.ledger_seq, check: 'received' }]);
    expect(bad.received).toMatchObject({ checked: 13, skipped: 1 });

    // A field the Pick gains later, or a market watch that moved, is not committed: such bodies
    // still match. A committed field changed does not, in each of the 11 revealed bodies.
    const grown = bodies.map((body) => ({ ...body, data: { ...body.data, gained_later: 1, availability: { ...body.data.availability, status: 'gone' } } }));
    expect((await verify(h.base, { now: h.clock.now(), received: grown })).failures).toEqual([]);
    const changed = bodies.map((body) => ({ ...body, data: { ...body.data, odds: body.data.odds + 0.01 } }));
    expect(checks(await verify(h.base, { now: h.clock.now(), received: changed })).filter((failure) => failure.check === 'received')).toHaveLength(11);
  });
});

/**
 * A fresh database with four revealed entries: 1-3 pick.published (Arsenal, Liverpool, Leeds),
 * 4 the Arsenal pick's pick.settled. It verifies before any test touches it.
 */
async function smallLedger(): Promise<Booted & { ids: string[] }> {
  const booted = await boot('2026-11-22T12:00:00Z');
  const { t, clock } = booted;
  const kickoffAt = '2026-11-23T15:00:00Z';
  const ids = [
    await publish(t, { kickoffAt }),
    await publish(t, { kickoffAt, homeTeam: 'Liverpool', awayTeam: 'Everton', market: 'totals', selection: 'Over', line: 2.5, odds: 1.95, referenceFairOdds: 1.85 }),
    await publish(t, { kickoffAt, homeTeam: 'Leeds', awayTeam: 'Burnley', selection: 'Draw', odds: 3.4, referenceFairOdds: 3.2 }),
  ];
  clock.set('2026-11-23T18:00:00Z');
  await settle(t, ids[0]!, 'WON', 2.1);
  const report = await verify(booted.base, { now: clock.now() });
  expect(report.failures).toEqual([]);
  expect(report.entries.map((entry) => entry.type)).toEqual(['pick.published', 'pick.published', 'pick.published', 'pick.settled']);
  return { ...booted, ids };
}

describe('the public endpoints', () => {
  it('are anonymous, CORS-open and cacheable, revalidate with ETag, and refuse bad parameters with invalid_parameter', async () => {
    const { t } = await boot('2026-11-22T12:00:00Z');
    await publish(t, { kickoffAt: '2026-11-23T15:00:00Z' });
    for (const url of ['/api/public/ledger', '/api/public/ledger/head', '/api/public/ledger/checkpoints']) {
      const first = await t.app.inject({ method: 'GET', url });
      expect(first.statusCode, url).toBe(200);
      expect(first.headers).toMatchObject({ 'access-control-allow-origin': '*', 'cache-control': 'public, s-maxage=300, stale-while-revalidate=600' });
      const again = await t.app.inject({ method: 'GET', url, headers: { 'if-none-match': String(first.headers.etag) } });
      expect(again.statusCode, url).toBe(304);
      expect((await t.app.inject({ method: 'OPTIONS', url })).statusCode, url).toBe(204);
      expect((await t.app.inject({ method: 'POST', url })).statusCode, url).toBe(405);
    }
    expect((await t.app.inject({ method: 'GET', url: '/api/public/ledger/head' })).json()).toMatchObject({ seq: 1 });
    for (const query of ['after=-1', 'after=x', 'limit=0', 'limit=501', 'after=1&after=2', 'after=99999999999']) {
      const res = await t.app.inject({ method: 'GET', url: `/api/public/ledger?${query}` });
      expect([res.statusCode, res.json().error], query).toEqual([400, 'invalid_parameter']);
    }
    expect((await t.app.inject({ method: 'GET', url: '/api/public/ledger?after=1' })).json()).toEqual({ entries: [], next_after: null });
  });
});

describe('prices given with more decimals than are stored', () => {
  it('commit, publish and show the stored price, so an honest ledger verifies', async () => {
    const { t, clock, base } = await boot('2026-11-22T12:00:00Z');
    const id = await publish(t, { kickoffAt: '2026-11-23T15:00:00Z', odds: 2.12345, referenceFairOdds: 1.987654 });
    clock.set('2026-11-23T18:00:00Z');
    await settle(t, id, 'WON', 2.000049);
    const { key } = await t.runtime.services.apiKeys.create({ tier: 'starter', label: 'ledger' });
    const rest = (await t.app.inject({ method: 'GET', url: '/api/v1/picks', headers: { authorization: `Bearer ${key}` } })).json();
    expect(rest.data[0]).toMatchObject({ odds: 2.1235, closing_odds: 2 });
    expect((await webhookBodies(t)).map((body) => body.data.odds)).toEqual([2.1235, 2.1235]);
    const report = await verify(base, { now: clock.now() });
    expect(report.failures).toEqual([]);
    expect(report.entries.map((entry) => entry.pick?.odds)).toEqual([2.1235, 2.1235]);
  });
});

describe('tampering with the stored ledger', () => {
  const cases: { name: string; statements: string[]; failures: { seq: number; check: string }[] }[] = [
    { name: "a stored pick's odds", statements: [`update ledger_entries set pick = jsonb_set(pick, '{odds}', '9.99') where seq = 2`], failures: [{ seq: 2, check: 'commitment' }] },
    { name: 'a deleted entry', statements: ['delete from ledger_entries where seq = 3'], failures: [{ seq: 3, check: 'seq' }, { seq: 4, check: 'prev_hash' }] },
    {
      name: 'two entries swapped',
      statements: ['update ledger_entries set seq = 1000 where seq = 2', 'update ledger_entries set seq = 2 where seq = 3', 'update ledger_entries set seq = 3 where seq = 1000'],
      // From the first of them on: both entries, and the link of the entry after them.
      failures: [{ seq: 2, check: 'hash' }, { seq: 2, check: 'prev_hash' }, { seq: 3, check: 'hash' }, { seq: 3, check: 'prev_hash' }, { seq: 4, check: 'prev_hash' }],
    },
    { name: 'a new salt', statements: [`update ledger_entries set salt = repeat('ab', 32) where seq = 4`], failures: [{ seq: 4, check: 'commitment' }] },
    { name: 'another pick revealed', statements: ['update ledger_entries set pick = (select pick from ledger_entries where seq = 3) where seq = 2'], failures: [{ seq: 2, check: 'commitment' }] },
  ];

  it.each(cases)('$name fails at exactly that entry', async ({ statements, failures }) => {
    const { t, clock, base } = await smallLedger();
    for (const statement of statements) await sql(t, statement);
    // Kept ledger bodies change with announced changes only.
    await announceChange(t);
    const report = await verify(base, { now: clock.now() });
    expect(report.ok).toBe(false);
    expect(checks(report)).toEqual(failures);
  });

  it('a result the final score contradicts fails the settlement check at its entry', async () => {
    const { t, clock, base } = await boot('2026-11-22T12:00:00Z');
    const id = await publish(t, { kickoffAt: '2026-11-23T15:00:00Z' });
    clock.set('2026-11-23T18:00:00Z');
    await t.runtime.services.picks.settle({ id, result: 'lost', closingOdds: 2.1, finalScore: { home: 2, away: 1 } });
    expect(checks(await verify(base, { now: clock.now() }))).toEqual([{ seq: 2, check: 'settlement' }]);
  });
});

/**
 * Rewrites every entry's committed pick (and salt) with `edit`, recomputes the commitments and
 * re-forges the chain: a self-consistent ledger, as an operator rewriting history would make it,
 * then announces a change so the service's kept bodies show it.
 */
async function reforge(t: TestApp, edit: (seq: number, pick: CommittedPick, salt: string) => { pick: CommittedPick; salt: string }): Promise<void> {
  const rows = await sql(t, 'select seq, type, at, pick_id, reveal_after, pick, salt from ledger_entries order by seq');
  let prevHash = '0'.repeat(64);
  for (const row of rows) {
    const seq = Number(row.seq);
    const { pick, salt } = edit(seq, jsonOf<CommittedPick>(row.pick), String(row.salt));
    const commitment = commitmentOf(pick, salt);
    const clear = {
      seq,
      type: row.type as LedgerEntryType,
      at: dateOf(row.at).toISOString(),
      pick_id: String(row.pick_id),
      reveal_after: dateOf(row.reveal_after).toISOString(),
      commitment,
      prev_hash: prevHash,
    };
    prevHash = entryHash(clear);
    await sql(t, 'update ledger_entries set pick = $1::jsonb, salt = $2, commitment = $3, prev_hash = $4, hash = $5 where seq = $6', [
      JSON.stringify(pick),
      salt,
      commitment,
      clear.prev_hash,
      prevHash,
      seq,
    ]);
  }
  // Kept ledger bodies change with announced changes only.
  await announceChange(t);
}

describe('reveal_after on the quarter hour', () => {
  interface Listed { seq: number; pick_id: string; reveal_after: string; pick?: unknown }
  const listed = async (base: string) => ((await (await fetch(`${base}/api/public/ledger?limit=500`)).json()) as { entries: Listed[] }).entries;

  it('names the kickoff rounded up to the quarter hour, reveals from then, and verifies', async () => {
    const { t, clock, base } = await boot('2026-11-22T12:00:00Z');
    // 19:50 and 20:00 kickoffs both commit to 20:00; 15:00 stays 15:00.
    const late = await publish(t, { kickoffAt: '2026-11-23T19:50:00Z' });
    const onTheHour = await publish(t, { homeTeam: 'Leeds', awayTeam: 'Burnley', selection: 'Leeds', kickoffAt: '2026-11-23T20:00:00Z' });
    const afternoon = await publish(t, { homeTeam: 'Wolves', awayTeam: 'Spurs', selection: 'Wolves', kickoffAt: '2026-11-23T15:00:00Z' });
    const byPick = new Map((await listed(base)).map((entry) => [entry.pick_id, entry.reveal_after]));
    expect([byPick.get(late), byPick.get(onTheHour), byPick.get(afternoon)]).toEqual(['2026-11-23T20:00:00.000Z', '2026-11-23T20:00:00.000Z', '2026-11-23T15:00:00.000Z']);
    // Kicked off, but its quarter hour has not ended: still hidden.
    clock.set('2026-11-23T19:59:59.999Z');
    expect((await listed(base)).find((entry) => entry.pick_id === late)!.pick).toBeUndefined();
    clock.set('2026-11-23T20:00:00Z');
    expect((await listed(base)).find((entry) => entry.pick_id === late)!.pick).toMatchObject({ id: late, kickoff_at: '2026-11-23T19:50:00.000Z' });
    expect((await verify(base, { now: clock.now() })).failures).toEqual([]);
  });

  it('verifies entries that name the exact kickoff (appended before the rule), and fails any other reveal_after', async () => {
    const { t, clock, base } = await boot('2026-11-22T12:00:00Z');
    await publish(t, { kickoffAt: '2026-11-23T19:50:00Z' });
    clock.set('2026-11-23T21:00:00Z');
    const rechain = async (revealAfter: string) => {
      await sql(t, 'update ledger_entries set reveal_after = $1::timestamptz', [revealAfter]);
      await reforge(t, (_seq, pick, salt) => ({ pick, salt }));
    };
    await rechain('2026-11-23T19:50:00Z');
    expect((await verify(base, { now: clock.now() })).failures).toEqual([]);
    await rechain('2026-11-23T20:15:00Z');
    expect(checks(await verify(base, { now: clock.now() }))).toEqual([{ seq: 1, check: 'pick_fields' }]);
  });

  it('lists a pick appended after its kickoff but before its reveal_after as imported', async () => {
    const { t, clock, base } = await boot('2026-11-23T19:55:00Z');
    const id = await publish(t, { kickoffAt: '2026-11-23T19:50:00Z', publishedAt: '2026-11-23T10:00:00Z' });
    clock.set('2026-11-23T20:00:00Z');
    const report = await verify(base, { now: clock.now() });
    expect(report.failures).toEqual([]);
    expect(report.imported).toEqual([id]);
  });
});

describe('a Pick that gained fields', () => {
  it('verifies a pick published before the fields existed and settled after; a field that disappears still fails pick_fields', async () => {
    const { t, clock, base } = await boot('2026-11-22T12:00:00Z');
    const id = await publish(t, { kickoffAt: '2026-11-23T15:00:00Z' });
    clock.set('2026-11-23T18:00:00Z');
    await t.runtime.services.picks.settle({ id, result: 'won', closingOdds: 2.1, finalScore: { home: 2, away: 1 } });
    const added = ['bookmaker', 'reference_fair_odds', 'edge_pct_post_tax', 'kelly_fraction', 'published_at'];
    const without = (pick: CommittedPick) => Object.fromEntries(Object.entries(pick).filter(([key]) => !added.includes(key))) as CommittedPick;
    // The pick.published entry as the Pick was before those fields.
    await reforge(t, (seq, pick, salt) => ({ pick: seq === 1 ? without(pick) : pick, salt }));
    expect((await verify(base, { now: clock.now() })).failures).toEqual([]);
    // The settlement's entry dropping a field the publication had is a change.
    await reforge(t, (seq, pick, salt) => ({ pick: seq === 2 ? without(pick) : ({ ...pick, bookmaker: { name: 'Bet365', slug: 'bet365' } } as CommittedPick), salt }));
    expect(checks(await verify(base, { now: clock.now() }))).toEqual([{ seq: 2, check: 'pick_fields' }]);
  });
});

/** Runs the verifier as a customer does, in its own process (asynchronously: the server answers from this one). */
function cli(...args: string[]): Promise<{ code: number; stdout: string }> {
  return new Promise((resolve) => {
    execFile(process.execPath, [VERIFIER, ...args], (error, stdout) => resolve({ code: error ? Number(error.code) : 0, stdout }));
  });
}

describe('history rewritten consistently', () => {
  it('verifies on its own, but an archived head and received webhooks expose it (library and CLI)', async () => {
    const { t, clock, base } = await smallLedger();
    const archived = (await (await fetch(`${base}/api/public/ledger/head`)).json()) as { seq: number; hash: string };
    expect(archived.seq).toBe(4);
    const first = (await verify(base, { now: clock.now() })).entries[0]!;
    const dir = mkdtempSync(path.join(tmpdir(), 'verify-ledger-'));
    try {
      const received = path.join(dir, 'received.jsonl');
      writeFileSync(received, `${(await webhookBodies(t)).map((body) => JSON.stringify(body)).join('\n')}\n{"id":"no-ledger","data":{}}\n`);
      const honest = await cli(base, '--received', received, '--anchor', `${archived.seq}:${archived.hash}`);
      expect(honest.stdout).toContain('OK: every check holds.');
      expect(honest.code).toBe(0);

      // The operator raises the odds of the revealed Liverpool pick, with a fresh salt, and re-forges
      // every hash from there on: a self-consistent chain.
      await reforge(t, (seq, pick, salt) => (seq === 2 ? { pick: { ...pick, odds: 2.5 }, salt: 'cd'.repeat(32) } : { pick, salt }));

      const plain = await verify(base, { now: clock.now() });
      expect(plain.failures).toEqual([]);
      expect(plain.entries[1]!.pick).toMatchObject({ odds: 2.5 });
      const anchored = await verify(base, { now: clock.now(), anchors: [{ seq: first.seq, hash: first.hash }, archived] });
      expect(checks(anchored)).toEqual([{ seq: 4, check: 'anchor' }]);

      const bare = await cli(base);
      expect(bare.code).toBe(0);
      const anchor = await cli(base, '--anchor', `${archived.seq}:${archived.hash}`);
      expect(anchor.code).toBe(1);
      expect(anchor.stdout).toContain('seq 4  anchor: ');
      const witnessed = await cli(base, '--received', received);
      expect(witnessed.code).toBe(1);
      expect(witnessed.stdout.match(/seq \d+ {2}received/g)).toEqual(['seq 2  received', 'seq 3  received', 'seq 4  received']);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});

describe('the command line: a summary first, ids only with --verbose', () => {
  it('summarises an honest ledger with an imported and a withdrawn pick in a few lines, and lists them with --verbose', async () => {
    const { t, clock, base } = await boot('2026-11-22T12:00:00Z');
    const imported = await publish(t, { kickoffAt: '2026-11-20T15:00:00Z', publishedAt: '2026-11-19T10:00:00Z' });
    const withdrawn = await publish(t, { kickoffAt: '2026-11-23T15:00:00Z', homeTeam: 'Wolves', awayTeam: 'Spurs', selection: 'Wolves', odds: 2.6, referenceFairOdds: 2.4 });
    const settled = await publish(t, { kickoffAt: '2026-11-23T15:00:00Z', homeTeam: 'Leeds', awayTeam: 'Burnley', selection: 'Draw', odds: 3.4, referenceFairOdds: 3.2 });
    clock.advance(3_600_000);
    await mutate(t, HOLD, { id: withdrawn });
    clock.set('2026-11-23T18:00:00Z');
    await settle(t, settled, 'WON', 3.0);
    await settle(t, imported, 'LOST', 2.0);

    const plain = await cli(base);
    expect(plain.code).toBe(0);
    const lines = plain.stdout.trimEnd().split('\n');
    const head = (await (await fetch(`${base}/api/public/ledger/head`)).json()) as { seq: number; hash: string };
    expect(head.seq).toBe(6);
    // Entries: 3 published, 1 held, 2 settled. CLV: 100 x (3.4 / 3 - 1) = 13.33 and 100 x (2.2 / 2 - 1) = 10: mean 11.67.
    expect(lines.slice(0, 5)).toEqual([
      `Ledger of ${base}`,
      '  Result       OK: every check holds.',
      `  Entries      6 (seq 1 to 6; last hash ${head.hash})`,
      '  Picks        3: 1 imported, 1 withdrawn',
      '  Settlements  2: 0 recomputed from the final score, 2 settled by hand, 0 not covered by the rules; mean CLV +11.67 % over 2 with closing odds',
    ]);
    expect(lines.length).toBeLessThanOrEqual(10);
    for (const id of [imported, withdrawn, settled]) expect(plain.stdout).not.toContain(id);
    expect(plain.stdout).toContain('--verbose lists');

    const verbose = await cli(base, '--verbose');
    expect(verbose.code).toBe(0);
    expect(verbose.stdout.split('\n').slice(0, 5)).toEqual(lines.slice(0, 5));
    expect(verbose.stdout).toContain(`Imported picks: 1\n  ${imported}\n`);
    expect(verbose.stdout).toContain(`Withdrawn picks: 1\n  ${withdrawn}\n`);
    expect(verbose.stdout).toMatch(/Settled picks: 2\n {2}seq 5 {2}Leeds v Burnley: .* {2}won {2}\(settled by hand, not recomputable; CLV \+13\.33 % \(odds 3\.4, closing odds 3\)\)\n/);
  });

  it('names the first failure in the summary, lists 20 failures (all with --verbose), and keeps the exit codes', async () => {
    const { t, clock, base } = await boot('2026-11-22T12:00:00Z');
    for (let i = 0; i < 22; i += 1) await publish(t, { kickoffAt: '2026-11-23T15:00:00Z', homeTeam: `Home ${i}`, awayTeam: `Away ${i}`, selection: `Home ${i}` });
    clock.set('2026-11-23T18:00:00Z'); // every pick revealed: no reveal check depends on today's date
    // Every hash overwritten (64 hex digits, unique): each entry fails its hash, and every entry after the first its link: 22 + 21 failures.
    await sql(t, `update ledger_entries set hash = md5(seq::text) || md5(seq::text)`);
    await announceChange(t);
    const plain = await cli(base);
    expect(plain.code).toBe(1);
    const lines = plain.stdout.trimEnd().split('\n');
    expect(lines[1]).toBe("  Result       FAILED: 43 checks do not hold; the first at seq 1 (hash): the hash is not the hash of the entry's fields: the entry was changed");
    expect(plain.stdout.match(/^ {2}seq \d+ {2}(?:hash|prev_hash): /gm)).toHaveLength(20);
    expect(plain.stdout).toContain('  ... and 23 more (--verbose lists them all)');
    const verbose = await cli(base, '--verbose');
    expect(verbose.code).toBe(1);
    expect(verbose.stdout.match(/^ {2}seq \d+ {2}(?:hash|prev_hash): /gm)).toHaveLength(43);

    // 2: the ledger could not be read, or the arguments are wrong.
    expect((await cli('http://127.0.0.1:1')).code).toBe(2);
    expect((await cli(base, '--anchor', 'nonsense')).code).toBe(2);
  });
});

describe('settlement rules', () => {
  it('recomputes the worked examples of docs/API.md "Settlement of lines"', () => {
    const pick = (market: string, selection: string, line: number | null) => ({ market, selection, line, home_team: 'Arsenal', away_team: 'Chelsea' });
    const table: [ReturnType<typeof pick>, number, number, string[]][] = [
      [pick('totals', 'Over', 2.5), 2, 1, ['won']],
      [pick('totals', 'Under', 3), 2, 1, ['void']],
      [pick('totals', 'Over', 2.75), 2, 1, ['half_won']],
      [pick('totals', 'Under', 2.25), 2, 1, ['lost']],
      [pick('spreads', 'Chelsea', 0.75), 2, 1, ['half_lost']],
      [pick('spreads', 'Arsenal', -0.25), 1, 1, ['half_lost']],
      [pick('spreads', 'Arsenal', -1), 2, 1, ['void']],
      [pick('spreads', 'Arsenal', -1.25), 3, 1, ['won']],
      [pick('h2h', 'Arsenal', null), 1, 1, ['lost', 'void']],
      [pick('h2h', 'Draw', null), 1, 1, ['won']],
      [pick('h2h', 'Chelsea', null), 2, 1, ['lost']],
    ];
    for (const [p, home, away, expected] of table) expect(resultsFromScore(p, home, away), JSON.stringify(p)).toEqual(expected);
  });
});
