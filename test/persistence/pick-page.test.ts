/**
 * The exact bytes of list pages, pinned against picks inserted with SQL: the list and "today"
 * queries return their page as one JSON value with timestamps as epoch milliseconds
 * (src/persistence/picks-repository.ts), and nothing in the responses may differ from what a
 * row per pick with Dates gave. Timestamps carry microseconds and other time zones (dropped,
 * not rounded, to milliseconds), numerics trailing zeros, texts quotes, backslashes, a
 * newline and non-ASCII; picks are settled, published with and without closing odds, and held.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ManualClock } from '../../src/domain/clock.js';
import { createTestApp, type TestApp } from '../helpers/app.js';

let t: TestApp;
const clock = new ManualClock('2026-11-25T12:00:00Z');
/** An API key's Authorization header (the customer API takes keys, not the admin token). */
const keyHeader: { authorization: string } = { authorization: '' };

const COLUMNS = `id, sport, league, home_team, away_team, kickoff_at, market, selection, description, bookmaker_name, bookmaker_slug,
  odds, reference_fair_odds, tax_rate, edge_pct, edge_pct_post_tax, kelly_fraction, edge_tier, confidence, status, result,
  closing_odds, published_at, settled_at, created_at, updated_at, stake_pct, warnings, final_home_score, final_away_score, ledger_seq, ledger_hash`;

const FIXTURES = `insert into picks (${COLUMNS}) values
  ('00000000-0000-4000-8000-000000000001', 'soccer', 'Premier League', 'Arsenal', 'Chelsea', '2026-11-20T17:00:00.123456+02:00',
   'h2h', 'Arsenal', 'Arsenal to win @ 2.10', 'Bet365', 'bet365', 2.1000, 2.0100, 0.05300, 4.4776, -0.010149, 0.000000, 'standard', 71,
   'settled', 'half_won', 2.0500, '2026-11-19T10:00:00.000999Z', '2026-11-20 19:45:30.999999-05', now(), now(), 0.00, '["stale_close"]', 2, 2, 9, 'cccccccccccccccccccccccccccccccccccccccccccccccccccccccccccccccc'),
  ('00000000-0000-4000-8000-000000000002', 'tennis', 'ATP Tour', 'Alcaraz "Carlitos"', 'Sinner \\ Jannik', '2026-11-25T09:30:00.5Z',
   'h2h', 'Draw', E'Über-line\\nüñí 🎾', 'William Hill', 'williamhill', 3.4560, 3.1000, 0.00000, 11.4839, 0.114839, 0.047234, 'big_edge', 0,
   'published', null, null, '2026-11-24T23:59:59.999+00:00', null, now(), now(), 1.18, '["single_sharp_reference","wide_reference_market"]', null, null, 8, 'bbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbb'),
  ('00000000-0000-4000-8000-000000000003', 'basketball', 'NBA', 'Lakers', 'Celtics', '2026-11-24T23:59:59.999-00:00',
   'h2h', 'Celtics', 'Celtics to win @ 1.95', 'Unibet', 'unibet', 1.9500, 1.8800, 0.05300, 3.7234, -0.017766, 0.000000, 'stark', 100,
   'published', null, 1.9100, '2026-11-24T08:00:00Z', null, now(), now(), 0.00, '[]', null, null, null, null),
  ('00000000-0000-4000-8000-000000000004', 'soccer', 'Serie A', 'Roma', 'Lazio', '2026-11-26T20:45:00Z',
   'h2h', 'Roma', 'Roma to win @ 2.50', 'Bwin', 'bwin', 2.5000, 2.3000, 0.05300, 8.6957, 0.029348, 0.019565, 'standard', 55,
   'admin_review', null, null, null, null, now(), now(), 0.49, '[]', null, null, null, null)`;

beforeAll(async () => {
  t = await createTestApp({ clock });
  keyHeader.authorization = `Bearer ${(await t.runtime.services.apiKeys.create({ tier: 'enterprise', label: 'pick-page' })).key}`;
  await t.runtime.orm.em.fork().execute(FIXTURES);
  // One pick's availability as the engine keeps it (the others start unknown): numerics with trailing zeros, a timestamp with microseconds.
  await t.runtime.orm.em.fork().execute(
    `update picks set availability_status = 'moved', availability_odds_now = 3.3000, availability_edge_pct_now = -2.5800,
       availability_checked_at = '2026-11-25T08:59:00.000999Z', availability_since = '2026-11-25 10:00:00+02', best_odds_since_published = 3.5000
     where id = '00000000-0000-4000-8000-000000000002'`,
  );
});
afterAll(async () => {
  await t?.close();
});

describe('list pages, byte for byte', () => {
  it('GET /api/v1/picks: newest kickoff first, held picks absent, then the next page by cursor', async () => {
    const first = await t.app.inject({ method: 'GET', url: '/api/v1/picks?limit=2', headers: keyHeader });
    expect(first.statusCode).toBe(200);
    expect(first.body).toBe(
      '{"data":[' +
        '{"id":"00000000-0000-4000-8000-000000000002","sport":"tennis","league":"ATP Tour","home_team":"Alcaraz \\"Carlitos\\"","away_team":"Sinner \\\\ Jannik",' +
        '"kickoff_at":"2026-11-25T09:30:00.500Z","pick":"Über-line\\nüñí 🎾","odds":3.456,"edge_pct":11.4839,"confidence":0,"status":"published","settled_at":null,"result":null,"stake_pct":1.18,"market":"h2h","selection":"Draw","line":null,"warnings":["single_sharp_reference","wide_reference_market"],"closing_odds":null,"final_score":{"home":null,"away":null},"ledger_seq":8,"ledger_hash":"bbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbb",' +
        // Where to bet and the price to beat, from the row: the post-tax edge fraction 0.114839 in percent.
        '"bookmaker":{"name":"William Hill","slug":"williamhill"},"reference_fair_odds":3.1,"edge_pct_post_tax":11.4839,"kelly_fraction":0.047234,"published_at":"2026-11-24T23:59:59.999Z",' +
        '"availability":{"status":"moved","odds_now":3.3,"edge_pct_now":-2.58,"checked_at":"2026-11-25T08:59:00.000Z","since":"2026-11-25T08:00:00.000Z"},"best_odds_since_published":3.5},' +
        '{"id":"00000000-0000-4000-8000-000000000003","sport":"basketball","league":"NBA","home_team":"Lakers","away_team":"Celtics",' +
        '"kickoff_at":"2026-11-24T23:59:59.999Z","pick":"Celtics to win @ 1.95","odds":1.95,"edge_pct":3.7234,"confidence":100,"status":"published","settled_at":null,"result":null,"stake_pct":0,"market":"h2h","selection":"Celtics","line":null,"warnings":[],"closing_odds":1.91,"final_score":{"home":null,"away":null},"ledger_seq":null,"ledger_hash":null,' +
        '"bookmaker":{"name":"Unibet","slug":"unibet"},"reference_fair_odds":1.88,"edge_pct_post_tax":-1.7766,"kelly_fraction":0,"published_at":"2026-11-24T08:00:00.000Z",' +
        '"availability":{"status":"unknown","odds_now":null,"edge_pct_now":null,"checked_at":null,"since":null},"best_odds_since_published":null}' +
        `],"next_cursor":${JSON.stringify(first.json().next_cursor)},"count":2}`,
    );
    const cursor = first.json().next_cursor as string;
    expect(cursor).toEqual(expect.any(String));
    const second = await t.app.inject({ method: 'GET', url: `/api/v1/picks?limit=2&cursor=${encodeURIComponent(cursor)}`, headers: keyHeader });
    expect(second.body).toBe(
      '{"data":[' +
        '{"id":"00000000-0000-4000-8000-000000000001","sport":"soccer","league":"Premier League","home_team":"Arsenal","away_team":"Chelsea",' +
        '"kickoff_at":"2026-11-20T15:00:00.123Z","pick":"Arsenal to win @ 2.10","odds":2.1,"edge_pct":4.4776,"confidence":71,"status":"settled",' +
        '"settled_at":"2026-11-21T00:45:30.999Z","result":"half_won","stake_pct":0,"market":"h2h","selection":"Arsenal","line":null,"warnings":["stale_close"],"closing_odds":2.05,"final_score":{"home":2,"away":2},"ledger_seq":9,"ledger_hash":"cccccccccccccccccccccccccccccccccccccccccccccccccccccccccccccccc",' +
        '"bookmaker":{"name":"Bet365","slug":"bet365"},"reference_fair_odds":2.01,"edge_pct_post_tax":-1.0149,"kelly_fraction":0,"published_at":"2026-11-19T10:00:00.000Z",' +
        '"availability":{"status":"unknown","odds_now":null,"edge_pct_now":null,"checked_at":null,"since":null},"best_odds_since_published":null}' +
        '],"next_cursor":null,"count":1}',
    );
  });

  it('GraphQL picks: every stored field of the same page, and the cursors', async () => {
    const res = await t.graphql<{ picks: unknown }>(
      `{ picks(first: 3, since: "2026-11-20T15:00:00.124Z") { count pageInfo { hasNextPage endCursor } edges { cursor node {
          id kickoffAt market selection bookmaker { name slug } odds referenceFairOdds taxRate edgePct edgePctPostTax kellyFraction
          edgeTier confidence status result closingOdds publishedAt settledAt warnings } } } }`,
    );
    expect(res.errors).toBeUndefined();
    // The database compares `since` with the stored microseconds: the settled pick (15:00:00.123456) is before it.
    const page = res.data!.picks as { edges: { cursor: string; node: unknown }[] };
    expect(page).toEqual({
      count: 2,
      pageInfo: { hasNextPage: false, endCursor: null },
      edges: [
        {
          cursor: page.edges[0]!.cursor,
          node: {
            id: '00000000-0000-4000-8000-000000000002', kickoffAt: '2026-11-25T09:30:00.500Z', market: 'h2h', selection: 'Draw',
            bookmaker: { name: 'William Hill', slug: 'williamhill' }, odds: 3.456, referenceFairOdds: 3.1, taxRate: 0, edgePct: 11.4839,
            edgePctPostTax: 0.114839, kellyFraction: 0.047234, edgeTier: 'BIG_EDGE', confidence: 0, status: 'PUBLISHED', result: null,
            closingOdds: null, publishedAt: '2026-11-24T23:59:59.999Z', settledAt: null, warnings: ['SINGLE_SHARP_REFERENCE', 'WIDE_REFERENCE_MARKET'],
          },
        },
        {
          cursor: page.edges[1]!.cursor,
          node: {
            id: '00000000-0000-4000-8000-000000000003', kickoffAt: '2026-11-24T23:59:59.999Z', market: 'h2h', selection: 'Celtics',
            bookmaker: { name: 'Unibet', slug: 'unibet' }, odds: 1.95, referenceFairOdds: 1.88, taxRate: 0.053, edgePct: 3.7234,
            edgePctPostTax: -0.017766, kellyFraction: 0, edgeTier: 'STARK', confidence: 100, status: 'PUBLISHED', result: null,
            closingOdds: 1.91, publishedAt: '2026-11-24T08:00:00.000Z', settledAt: null, warnings: [],
          },
        },
      ],
    });
    // The second edge's cursor is the one the REST page above handed out after the same pick.
    const rest = await t.app.inject({ method: 'GET', url: '/api/v1/picks?limit=2', headers: keyHeader });
    expect(page.edges[1]!.cursor).toBe(rest.json().next_cursor);
  });

  it('GraphQL picks: a settled pick with every timestamp truncated to milliseconds', async () => {
    const res = await t.graphql<{ picks: { nodes: unknown[] } }>(
      `{ picks(first: 1, sport: "soccer") { nodes { id kickoffAt publishedAt settledAt result closingOdds odds taxRate edgePctPostTax kellyFraction } } }`,
    );
    expect(JSON.stringify(res.data!.picks.nodes)).toBe(
      '[{"id":"00000000-0000-4000-8000-000000000001","kickoffAt":"2026-11-20T15:00:00.123Z","publishedAt":"2026-11-19T10:00:00.000Z",' +
        '"settledAt":"2026-11-21T00:45:30.999Z","result":"HALF_WON","closingOdds":2.05,"odds":2.1,"taxRate":0.053,"edgePctPostTax":-0.010149,"kellyFraction":0}]',
    );
  });
});
