import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { hashApiKey } from '../../src/domain/api-key.js';
import { v1PickJson, type PickSnapshot } from '../../src/domain/pick-shape.js';
import { ManualClock } from '../../src/domain/clock.js';
import { createTestApp, type TestApp } from '../helpers/app.js';
import { APPROVE, CREATE_KEY, HOLD, pickInput, PUBLISH, REVOKE_KEY, SETTLE, UPSERT_ANALYSIS } from '../helpers/fixtures.js';

let t: TestApp;
const clock = new ManualClock('2026-11-22T12:00:00Z');

beforeAll(async () => {
  t = await createTestApp({ clock });
});
afterAll(async () => {
  await t?.close();
});
beforeEach(() => {
  clock.set('2026-11-22T12:00:00Z');
});

async function counts(): Promise<{ picks: number; events: number; analyses: number; keys: number }> {
  const rows = await t.runtime.orm.em.fork().execute<{ picks: string; events: string; analyses: string; keys: string }[]>(
    `select (select count(*) from picks) as picks, (select count(*) from outbox_events) as events,
            (select count(*) from match_analyses) as analyses, (select count(*) from api_keys) as keys`,
  );
  const row = rows[0]!;
  return { picks: Number(row.picks), events: Number(row.events), analyses: Number(row.analyses), keys: Number(row.keys) };
}

async function events(pickId: string): Promise<{ type: string; seq: string; payload: Record<string, unknown> }[]> {
  return t.runtime.orm.em
    .fork()
    .execute(`select type, seq, payload from outbox_events where pick_id = ? order by seq`, [pickId]);
}

async function publish(overrides: Record<string, unknown> = {}) {
  const res = await t.graphql<{ publishPick: Record<string, any> }>(PUBLISH, { input: pickInput(overrides) });
  expect(res.errors).toBeUndefined();
  return res.data!.publishPick;
}

describe('publishPick', () => {
  it('computes the edges, Kelly fraction and tier, derives the description and writes pick.published', async () => {
    const pick = await publish();
    expect(pick).toMatchObject({
      sport: 'soccer',
      status: 'PUBLISHED',
      market: 'h2h',
      selection: 'Arsenal',
      pick: 'Arsenal to win @ 2.20',
      bookmaker: { name: 'Bet365', slug: 'bet365' },
      odds: 2.2,
      referenceFairOdds: 2,
      taxRate: 0.053,
      edgePct: 10,
      edgePctPostTax: 0.0417,
      edgeTier: 'STARK',
      kickoffAt: '2026-12-01T15:00:00.000Z',
      publishedAt: '2026-11-22T12:00:00.000Z',
      result: null,
      settledAt: null,
      closingOdds: null,
    });
    // p = 0.5, b = 2.2 * 0.947 - 1 = 1.0834: (0.5 * 1.0834 - 0.5) / 1.0834
    expect(pick.kellyFraction).toBeCloseTo(0.0385, 4);
    // The default advice: a quarter of full Kelly in percent (0.9623), capped at 2.
    expect(pick.stakePct).toBe(0.96);
    const written = await events(pick.id);
    expect(written).toHaveLength(1);
    expect(written[0]!.type).toBe('pick.published');
    expect(v1PickJson(written[0]!.payload.pick as PickSnapshot)).toEqual({
      id: pick.id,
      sport: 'soccer',
      league: 'Premier League',
      home_team: 'Arsenal',
      away_team: 'Chelsea',
      kickoff_at: '2026-12-01T15:00:00.000Z',
      pick: 'Arsenal to win @ 2.20',
      odds: 2.2,
      edge_pct: 10,
      confidence: 70,
      status: 'published',
      settled_at: null,
      result: null,
      stake_pct: 0.96,
      market: 'h2h',
      selection: 'Arsenal',
      line: null,
      warnings: [],
      closing_odds: null,
      final_score: { home: null, away: null },
      ledger_seq: expect.any(Number),
      ledger_hash: expect.stringMatching(/^[0-9a-f]{64}$/),
      bookmaker: { name: 'Bet365', slug: 'bet365' },
      reference_fair_odds: 2,
      // 2.2 x 0.947 / 2 - 1 = 4.17 %.
      edge_pct_post_tax: 4.17,
      kelly_fraction: pick.kellyFraction,
      published_at: pick.publishedAt,
      // Published by hand: never checked.
      availability: { status: 'unknown', odds_now: null, edge_pct_now: null, checked_at: null, since: null },
      best_odds_since_published: null,
    });
    // The event carries the pick's public ledger entry: the chain's head, appended with it.
    const head = (await t.app.inject({ method: 'GET', url: '/api/public/ledger/head' })).json();
    expect(v1PickJson(written[0]!.payload.pick as PickSnapshot)).toMatchObject({ ledger_seq: head.seq, ledger_hash: head.hash });
  });

  it('refuses to publish now a pick whose kickoff has passed (it would count as imported); an import names its publishedAt', async () => {
    // The clock is 2026-11-22T12:00Z.
    for (const kickoffAt of ['2026-11-22T12:00:00Z', '2026-11-21T15:00:00Z']) {
      const refused = await t.graphql(PUBLISH, { input: pickInput({ kickoffAt, homeTeam: 'Late FC', selection: 'Late FC' }) });
      expect(refused.errors?.[0]?.extensions).toMatchObject({ code: 'invalid_parameter', parameter: 'kickoffAt' });
    }
    const imported = await t.graphql<{ publishPick: { status: string; publishedAt: string } }>(PUBLISH, {
      input: pickInput({ kickoffAt: '2026-11-21T15:00:00Z', publishedAt: '2026-11-21T09:00:00Z', homeTeam: 'Late FC', selection: 'Late FC' }),
    });
    expect(imported.errors).toBeUndefined();
    expect(imported.data!.publishPick).toMatchObject({ status: 'PUBLISHED', publishedAt: '2026-11-21T09:00:00.000Z' });
    // Held for review, a past kickoff is no publication: the operator cannot approve it anyway.
    const held = await t.graphql(PUBLISH, { input: pickInput({ kickoffAt: '2026-11-21T15:00:00Z', status: 'ADMIN_REVIEW', homeTeam: 'Later FC', selection: 'Later FC' }) });
    expect(held.errors).toBeUndefined();
  });

  it('accepts a description, a bookmaker tax rate, a draw selection and a history import time', async () => {
    const pick = await publish({
      selection: 'Draw',
      pick: 'Draw in the derby',
      odds: 3.6,
      referenceFairOdds: 3.2,
      bookmaker: { name: 'Unibet', slug: 'unibet', taxRate: 0 },
      publishedAt: '2026-11-20T08:00:00+01:00',
    });
    expect(pick).toMatchObject({ selection: 'Draw', pick: 'Draw in the derby', taxRate: 0, edgePct: 12.5, edgePctPostTax: 0.125, edgeTier: 'BIG_EDGE', publishedAt: '2026-11-20T07:00:00.000Z' });
  });

  it('creates an ADMIN_REVIEW pick without an event', async () => {
    const pick = await publish({ status: 'ADMIN_REVIEW' });
    expect(pick.status).toBe('ADMIN_REVIEW');
    expect(pick.publishedAt).toBeNull();
    expect(await events(pick.id)).toHaveLength(0);
  });

  const invalid: [string, Record<string, unknown>, string][] = [
    ['odds of 1.0', { odds: 1.0 }, 'odds'],
    ['odds below 1', { odds: 0.5 }, 'odds'],
    ['negative odds', { odds: -2 }, 'odds'],
    ['fair odds of 1.0', { referenceFairOdds: 1 }, 'referenceFairOdds'],
    ['confidence 101', { confidence: 101 }, 'confidence'],
    ['confidence -1', { confidence: -1 }, 'confidence'],
    ['kickoff without a zone', { kickoffAt: '2026-12-01T15:00:00' }, 'kickoffAt'],
    ['kickoff as a date only', { kickoffAt: '2026-12-01' }, 'kickoffAt'],
    ['kickoff as garbage', { kickoffAt: 'tomorrow' }, 'kickoffAt'],
    ['kickoff on an impossible date', { kickoffAt: '2026-02-30T10:00:00Z' }, 'kickoffAt'],
    ['an unknown sport', { sport: 'quidditch' }, 'sport'],
    ['an upper-case sport', { sport: 'Soccer' }, 'sport'],
    ['an empty home team', { homeTeam: '' }, 'homeTeam'],
    ['a blank away team', { awayTeam: '   ' }, 'awayTeam'],
    ['the same team twice', { awayTeam: 'Arsenal' }, 'awayTeam'],
    ['an empty league', { league: '' }, 'league'],
    ['a selection that is neither side', { selection: 'Liverpool' }, 'selection'],
    ['an unknown market', { market: 'corners' }, 'market'],
    ['an empty bookmaker name', { bookmaker: { name: '', slug: 'bet365' } }, 'bookmaker.name'],
    ['a bookmaker slug with spaces', { bookmaker: { name: 'Bet 365', slug: 'bet 365' } }, 'bookmaker.slug'],
    ['a tax rate of 1', { bookmaker: { name: 'Bet365', slug: 'bet365', taxRate: 1 } }, 'bookmaker.taxRate'],
    ['a negative tax rate', { bookmaker: { name: 'Bet365', slug: 'bet365', taxRate: -0.1 } }, 'bookmaker.taxRate'],
    ['an empty description', { pick: ' ' }, 'pick'],
    ['publishedAt in the future', { publishedAt: '2026-11-23T12:00:00Z' }, 'publishedAt'],
    ['publishedAt on a held pick', { status: 'ADMIN_REVIEW', publishedAt: '2026-11-21T12:00:00Z' }, 'publishedAt'],
  ];
  it.each(invalid)('rejects %s with invalid_parameter and writes nothing', async (_name, overrides, parameter) => {
    const before = await counts();
    const res = await t.graphql(PUBLISH, { input: pickInput(overrides) });
    expect(res.data).toBeNull();
    expect(res.errors?.[0]?.extensions).toMatchObject({ code: 'invalid_parameter', parameter });
    expect(await counts()).toEqual(before);
  });

  it.each([
    ['a string for odds', { odds: 'high' }],
    ['a missing selection', { selection: undefined }],
    ['a fractional confidence', { confidence: 70.5 }],
    ['a number for kickoffAt', { kickoffAt: 1764601200 }],
    ['an unknown status', { status: 'SETTLED' }],
  ])('rejects %s as a GraphQL input error with a code', async (_name, overrides) => {
    const before = await counts();
    const res = await t.graphql(PUBLISH, { input: pickInput(overrides) });
    expect(res.data ?? null).toBeNull();
    expect(typeof res.errors?.[0]?.extensions?.code).toBe('string');
    expect(await counts()).toEqual(before);
  });

  it('requires the admin token', async () => {
    const before = await counts();
    const anonymous = await t.graphql(PUBLISH, { input: pickInput() }, null);
    expect(anonymous.errors?.[0]?.extensions?.code).toBe('invalid_api_key');
    const wrong = await t.graphql(PUBLISH, { input: pickInput() }, 'Bearer not-the-admin-token');
    expect(wrong.errors?.[0]?.extensions?.code).toBe('invalid_api_key');
    const created = await t.graphql<{ createApiKey: { key: string } }>(CREATE_KEY, { input: { tier: 'ENTERPRISE' } });
    const asCustomer = await t.graphql(PUBLISH, { input: pickInput() }, `Bearer ${created.data!.createApiKey.key}`);
    expect(asCustomer.errors?.[0]?.extensions?.code).toBe('admin_required');
    expect((await counts()).picks).toBe(before.picks);
  });
});

describe('review and settlement transitions', () => {
  it('approve emits pick.published only on first visibility; hold hides again', async () => {
    const held = await publish({ status: 'ADMIN_REVIEW' });
    clock.set('2026-11-22T13:00:00Z');
    const approved = await t.graphql<{ approvePick: Record<string, any> }>(APPROVE, { id: held.id });
    expect(approved.data!.approvePick).toMatchObject({ status: 'PUBLISHED', publishedAt: '2026-11-22T13:00:00.000Z' });
    expect((await events(held.id)).map((e) => e.type)).toEqual(['pick.published']);

    const hidden = await t.graphql<{ holdPick: Record<string, any> }>(HOLD, { id: held.id });
    expect(hidden.data!.holdPick.status).toBe('ADMIN_REVIEW');
    const again = await t.graphql<{ approvePick: Record<string, any> }>(APPROVE, { id: held.id });
    expect(again.data!.approvePick).toMatchObject({ status: 'PUBLISHED', publishedAt: '2026-11-22T13:00:00.000Z' });
    expect((await events(held.id)).map((e) => e.type)).toEqual(['pick.published']);
  });

  it('settles a published pick once, with pick.settled carrying the result', async () => {
    const pick = await publish();
    clock.set('2026-12-01T18:00:00Z');
    const res = await t.graphql<{ settlePick: Record<string, any> }>(SETTLE, {
      input: { id: pick.id, result: 'HALF_WON', closingOdds: 2.05, settledAt: '2026-12-01T17:00:00Z' },
    });
    expect(res.errors).toBeUndefined();
    expect(res.data!.settlePick).toMatchObject({ status: 'SETTLED', result: 'HALF_WON', closingOdds: 2.05, settledAt: '2026-12-01T17:00:00.000Z' });
    const written = await events(pick.id);
    expect(written.map((e) => e.type)).toEqual(['pick.published', 'pick.settled']);
    expect(Number(written[1]!.seq)).toBeGreaterThan(Number(written[0]!.seq));
    expect(written[1]!.payload.pick).toMatchObject({ status: 'settled', result: 'half_won', settledAt: '2026-12-01T17:00:00.000Z', closingOdds: 2.05 });

    const twice = await t.graphql(SETTLE, { input: { id: pick.id, result: 'WON', closingOdds: 2.05 } });
    expect(twice.errors?.[0]?.extensions).toMatchObject({ code: 'invalid_transition', from: 'settled', to: 'settled' });
  });

  it('settledAt defaults to now', async () => {
    const pick = await publish();
    clock.set('2026-12-01T19:30:00Z');
    const res = await t.graphql<{ settlePick: Record<string, any> }>(SETTLE, { input: { id: pick.id, result: 'LOST', closingOdds: 2.3 } });
    expect(res.data!.settlePick.settledAt).toBe('2026-12-01T19:30:00.000Z');
  });

  it('rejects every invalid transition with invalid_transition and changes nothing', async () => {
    const held = await publish({ status: 'ADMIN_REVIEW' });
    const published = await publish();
    const settled = await publish();
    await t.graphql(SETTLE, { input: { id: settled.id, result: 'WON', closingOdds: 2.1 } });
    const before = await counts();
    const attempts: [string, Record<string, unknown>][] = [
      [HOLD, { id: held.id }],
      [APPROVE, { id: published.id }],
      [SETTLE, { input: { id: held.id, result: 'WON', closingOdds: 2 } }],
      [APPROVE, { id: settled.id }],
      [HOLD, { id: settled.id }],
    ];
    for (const [mutation, variables] of attempts) {
      const res = await t.graphql(mutation, variables);
      expect(res.errors?.[0]?.extensions?.code).toBe('invalid_transition');
    }
    expect(await counts()).toEqual(before);
  });

  it('answers not_found for unknown or malformed pick ids', async () => {
    for (const id of ['00000000-0000-7000-8000-000000000000', 'not-a-uuid', '']) {
      for (const mutation of [APPROVE, HOLD]) {
        const res = await t.graphql(mutation, { id });
        expect(res.errors?.[0]?.extensions?.code).toBe('not_found');
      }
      const settle = await t.graphql(SETTLE, { input: { id, result: 'WON', closingOdds: 2 } });
      expect(settle.errors?.[0]?.extensions?.code).toBe('not_found');
    }
  });

  it('validates the settlement input', async () => {
    const pick = await publish();
    clock.set('2026-12-01T19:30:00Z');
    const cases: [Record<string, unknown>, string][] = [
      [{ closingOdds: 1 }, 'closingOdds'],
      [{ closingOdds: -3 }, 'closingOdds'],
      [{ settledAt: 'yesterday' }, 'settledAt'],
      [{ settledAt: '2026-12-02T10:00:00Z' }, 'settledAt'],
      [{ settledAt: '2026-11-01T10:00:00Z' }, 'settledAt'],
    ];
    for (const [overrides, parameter] of cases) {
      const res = await t.graphql(SETTLE, { input: { id: pick.id, result: 'WON', closingOdds: 2, ...overrides } });
      expect(res.errors?.[0]?.extensions).toMatchObject({ code: 'invalid_parameter', parameter });
    }
    const bad = await t.graphql(SETTLE, { input: { id: pick.id, result: 'PUSH', closingOdds: 2 } });
    expect(typeof bad.errors?.[0]?.extensions?.code).toBe('string');
    expect((await events(pick.id)).map((e) => e.type)).toEqual(['pick.published']);
  });

  it('serialises concurrent transitions of one pick: exactly one settlement wins', async () => {
    const pick = await publish();
    const results = await Promise.all(
      ['WON', 'LOST', 'VOID'].map((result) => t.graphql(SETTLE, { input: { id: pick.id, result, closingOdds: 2.1 } })),
    );
    expect(results.filter((res) => !res.errors)).toHaveLength(1);
    expect(results.filter((res) => res.errors?.[0]?.extensions?.code === 'invalid_transition')).toHaveLength(2);
    expect((await events(pick.id)).map((e) => e.type)).toEqual(['pick.published', 'pick.settled']);
  });
});

describe('match analyses', () => {
  it('creates then replaces an analysis', async () => {
    const pick = await publish();
    const first = await t.graphql<{ upsertMatchAnalysis: Record<string, any> }>(UPSERT_ANALYSIS, { input: { matchId: pick.id, analysis: 'First take.' } });
    expect(first.data!.upsertMatchAnalysis).toMatchObject({ matchId: pick.id, analysis: 'First take.', createdAt: '2026-11-22T12:00:00.000Z' });
    clock.set('2026-11-22T14:00:00Z');
    const second = await t.graphql<{ upsertMatchAnalysis: Record<string, any> }>(UPSERT_ANALYSIS, { input: { matchId: pick.id, analysis: 'Revised.' } });
    expect(second.data!.upsertMatchAnalysis).toMatchObject({ analysis: 'Revised.', createdAt: '2026-11-22T12:00:00.000Z', updatedAt: '2026-11-22T14:00:00.000Z' });
  });

  it('rejects an empty analysis and an unknown pick', async () => {
    const pick = await publish();
    const before = await counts();
    const empty = await t.graphql(UPSERT_ANALYSIS, { input: { matchId: pick.id, analysis: '  ' } });
    expect(empty.errors?.[0]?.extensions).toMatchObject({ code: 'invalid_parameter', parameter: 'analysis' });
    const unknown = await t.graphql(UPSERT_ANALYSIS, { input: { matchId: '00000000-0000-7000-8000-000000000000', analysis: 'x' } });
    expect(unknown.errors?.[0]?.extensions?.code).toBe('not_found');
    expect(await counts()).toEqual(before);
  });
});

describe('API keys', () => {
  it('returns the plaintext key once and stores only its SHA-256', async () => {
    const res = await t.graphql<{ createApiKey: { key: string; apiKey: Record<string, any> } }>(CREATE_KEY, { input: { tier: 'GROWTH', label: 'Backtests' } });
    const { key, apiKey } = res.data!.createApiKey;
    expect(key).toMatch(/^service_[0-9a-f]{64}$/);
    expect(apiKey).toMatchObject({ tier: 'GROWTH', label: 'Backtests', prefix: key.slice(0, 12), active: true, revokedAt: null });
    const rows = await t.runtime.orm.em.fork().execute<{ key_hash: string }[]>('select * from api_keys where id = ?', [apiKey.id]);
    expect(rows[0]!.key_hash).toBe(hashApiKey(key));
    expect(JSON.stringify(rows[0])).not.toContain(key.slice(8));
  });

  it('revokes a key: it stops authenticating at once', async () => {
    const created = await t.graphql<{ createApiKey: { key: string; apiKey: { id: string } } }>(CREATE_KEY, { input: { tier: 'STARTER' } });
    const { key, apiKey } = created.data!.createApiKey;
    const query = '{ picks(first: 1) { count } }';
    expect((await t.graphql(query, {}, `Bearer ${key}`)).errors).toBeUndefined();
    const revoked = await t.graphql<{ revokeApiKey: Record<string, any> }>(REVOKE_KEY, { id: apiKey.id });
    expect(revoked.data!.revokeApiKey).toMatchObject({ id: apiKey.id, active: false, revokedAt: '2026-11-22T12:00:00.000Z' });
    expect((await t.graphql(query, {}, `Bearer ${key}`)).errors?.[0]?.extensions?.code).toBe('invalid_api_key');
  });

  it('rejects a bad label, an unknown tier and an unknown key id', async () => {
    const before = await counts();
    const label = await t.graphql(CREATE_KEY, { input: { tier: 'GROWTH', label: 'x'.repeat(101) } });
    expect(label.errors?.[0]?.extensions).toMatchObject({ code: 'invalid_parameter', parameter: 'label' });
    const tier = await t.graphql(CREATE_KEY, { input: { tier: 'PLATINUM' } });
    expect(typeof tier.errors?.[0]?.extensions?.code).toBe('string');
    const unknown = await t.graphql(REVOKE_KEY, { id: '00000000-0000-7000-8000-000000000000' });
    expect(unknown.errors?.[0]?.extensions?.code).toBe('not_found');
    expect(await counts()).toEqual(before);
  });
});
