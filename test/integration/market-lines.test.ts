/**
 * Spreads and totals end to end (docs/VALUE_ENGINE.md, "Markets and lines"): the real app polls
 * a local v4 feed on 127.0.0.1 quoting h2h, spreads and totals, and publishes, closes and
 * settles picks of every market. Reference prices are built so that their power devig gives
 * known fair probabilities; every expected number below follows from those by hand.
 */
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { ManualClock } from '../../src/domain/clock.js';
import type { TestApp } from '../helpers/app.js';
import { CREATE_KEY } from '../helpers/fixtures.js';
import { powerPrices, startEngineApp, startOddsFeedServer, v4OddsEvent, v4ScoreEvent, type LogEntry, type OddsFeedServer } from '../helpers/odds-feed-server.js';

const NOW = new Date('2026-11-24T12:00:00Z');
const KICKOFF = new Date('2026-11-24T15:00:00Z');
const FRESH = new Date(NOW.getTime() - 30_000);
const TAX = 0.053;
const K = 1.04;

type Outcome = { name: string; price: number; point?: number };

/** A v4 bookmaker with the given markets (each: key and outcomes, points included). */
function bookmaker(key: string, markets: Record<string, Outcome[]>, at: Date = FRESH): Record<string, unknown> {
  return {
    key,
    title: key[0]!.toUpperCase() + key.slice(1),
    last_update: at.toISOString(),
    markets: Object.entries(markets).map(([marketKey, outcomes]) => ({ key: marketKey, last_update: at.toISOString(), outcomes })),
  };
}

/** Two outcomes priced by power from fair probabilities (the first's), each with its point. */
function twoWay(names: [string, string], firstFair: number, points: [number, number]): Outcome[] {
  const prices = powerPrices({ a: firstFair, b: 1 - firstFair }, K);
  return [
    { name: names[0], price: prices.a!, point: points[0] },
    { name: names[1], price: prices.b!, point: points[1] },
  ];
}

const H2H_FAIR = { home: 0.5, away: 0.25, draw: 0.25 };
function h2h(home: string, away: string, fair = H2H_FAIR): Outcome[] {
  const prices = powerPrices({ [home]: fair.home, [away]: fair.away, Draw: fair.draw }, K);
  return Object.entries(prices).map(([name, price]) => ({ name, price }));
}

const PICKS = `query { picks(first: 50) { nodes { id homeTeam pick market selection line odds referenceFairOdds edgePct status closingOdds result } } }`;
const REST_FIELDS = ['market', 'selection', 'line', 'pick'] as const;

interface PickNode {
  id: string;
  homeTeam: string;
  pick: string;
  market: string;
  selection: string;
  line: number | null;
  odds: number;
  referenceFairOdds: number;
  edgePct: number;
  status: string;
  closingOdds: number | null;
  result: string | null;
}

const round4 = (value: number) => Math.round(value * 1e4) / 1e4;

describe('spreads and totals from a local v4 feed', () => {
  let feed: OddsFeedServer;
  let t: TestApp;
  let clock: ManualClock;
  let logs: LogEntry[];

  beforeAll(async () => {
    feed = await startOddsFeedServer();
  });
  afterAll(async () => {
    await feed.close();
  });
  beforeEach(async () => {
    clock = new ManualClock(NOW);
    ({ app: t, logs } = await startEngineApp(feed, clock, ['soccer_epl', 'tennis_atp_finals']));
  });
  afterEach(async () => {
    await t.close();
  });

  const poll = async (kinds: ('odds' | 'scores')[] = ['odds']) => expect(await t.runtime.poller!.pollNow(kinds)).toBe(true);
  const picks = async () => (await t.graphql<{ picks: { nodes: PickNode[] } }>(PICKS)).data!.picks.nodes;
  const skippedReasons = () =>
    logs.filter((entry) => /feed entries skipped/.test(entry.msg)).flatMap((entry) => (entry.fields.examples as { reason: string }[] | undefined) ?? []).map((s) => s.reason);
  const createKey = async () => (await t.graphql<{ createApiKey: { key: string } }>(CREATE_KEY, { input: { tier: 'ENTERPRISE' } })).data!.createApiKey.key;

  it('prices all three markets of one event, each soft line only against the reference at the same point', async () => {
    const [home, away] = ['Arsenal', 'Chelsea'];
    feed.set('odds', 'soccer_epl', [
      v4OddsEvent({
        id: 'm1',
        commenceTime: KICKOFF,
        homeTeam: home,
        awayTeam: away,
        bookmakers: [
          bookmaker('pinnacle', {
            h2h: h2h(home, away),
            // Home -0.75 fair 0.55; Over 2.5 fair 0.48.
            spreads: twoWay([home, away], 0.55, [-0.75, 0.75]),
            totals: twoWay(['Over', 'Under'], 0.48, [2.5, 2.5]),
          }),
          bookmaker('tipico', {
            h2h: [
              { name: home, price: 1.9 },
              { name: away, price: 4.6 },
              { name: 'Draw', price: 3.8 },
            ],
            spreads: [
              { name: home, price: 1.7, point: -0.75 },
              { name: away, price: 2.4, point: 0.75 },
            ],
            totals: [
              { name: 'Over', price: 2.3, point: 2.5 },
              { name: 'Under', price: 1.7, point: 2.5 },
            ],
          }),
          // Another point: a far better price that is never compared (3.5 at +1.0 is not +0.75).
          bookmaker('betsson', {
            spreads: [
              { name: home, price: 1.3, point: -1 },
              { name: away, price: 3.5, point: 1 },
            ],
            totals: [
              { name: 'Over', price: 3.2, point: 3 },
              { name: 'Under', price: 1.35, point: 3 },
            ],
          }),
        ],
      }),
    ]);
    await poll();
    const found = await picks();
    const byMarket = new Map(found.map((pick) => [pick.market, pick]));
    expect([...byMarket.keys()].sort()).toEqual(['h2h', 'spreads', 'totals']);
    expect(found).toHaveLength(3);

    // Away +0.75 is fair at 1 / 0.45; Tipico's 2.40 is 8 % above it before tax.
    const spreadFair = 1 / 0.45;
    expect(byMarket.get('spreads')).toMatchObject({
      selection: away,
      line: 0.75,
      pick: `${away} +0.75 @ 2.40`,
      odds: 2.4,
      referenceFairOdds: round4(spreadFair),
      edgePct: Math.round((2.4 / round4(spreadFair) - 1) * 1e4) / 100,
    });
    expect(2.4 * (1 - TAX) / spreadFair - 1).toBeGreaterThan(0.02);
    const totalFair = 1 / 0.48;
    expect(byMarket.get('totals')).toMatchObject({ selection: 'Over', line: 2.5, pick: 'Over 2.5 goals @ 2.30', odds: 2.3, referenceFairOdds: round4(totalFair) });
    expect(byMarket.get('h2h')).toMatchObject({ selection: away, line: null, pick: `${away} to win @ 4.60`, referenceFairOdds: 4 });
    // Betsson's lines are other markets: no pick from it, and nothing priced at +1.0 or 3.0.
    expect(found.some((pick) => pick.line === 1 || pick.line === 3)).toBe(false);

    // The REST pick carries market, selection and line.
    const key = await createKey();
    const rest = await t.app.inject({ method: 'GET', url: '/api/v1/picks?market=spreads', headers: { authorization: `Bearer ${key}` } });
    expect(rest.statusCode).toBe(200);
    const [restPick] = rest.json().data as Record<string, unknown>[];
    expect(Object.fromEntries(REST_FIELDS.map((field) => [field, restPick![field]]))).toEqual({ market: 'spreads', selection: away, line: 0.75, pick: `${away} +0.75 @ 2.40` });

    // A second poll makes no duplicate of any market's pick.
    clock.advance(60_000);
    await poll();
    expect(await picks()).toHaveLength(3);
  });

  it('drops malformed line markets with a logged reason and keeps the rest of the book', async () => {
    const [home, away] = ['Everton', 'Fulham'];
    feed.set('odds', 'soccer_epl', [
      v4OddsEvent({
        id: 'm2',
        commenceTime: KICKOFF,
        homeTeam: home,
        awayTeam: away,
        bookmakers: [
          bookmaker('pinnacle', { h2h: h2h(home, away), totals: twoWay(['Over', 'Under'], 0.48, [2.5, 2.5]) }),
          bookmaker('tipico', {
            h2h: [
              { name: home, price: 1.9 },
              { name: away, price: 4.6 },
              { name: 'Draw', price: 3.8 },
            ],
            // Points not opposite, a point that is no quarter, a missing point.
            spreads: [
              { name: home, price: 1.9, point: -0.5 },
              { name: away, price: 2.5, point: 0.25 },
            ],
            totals: [
              { name: 'Over', price: 2.6, point: 2.3 },
              { name: 'Under', price: 1.6, point: 2.3 },
            ],
          }),
          bookmaker('betsson', {
            totals: [
              { name: 'Over', price: 2.6 },
              { name: 'Under', price: 1.6, point: 2.5 },
            ],
          }),
        ],
      }),
    ]);
    await poll();
    const found = await picks();
    // Only the h2h pick: every line market of the soft books was malformed.
    expect(found.map((pick) => pick.market)).toEqual(['h2h']);
    const reasons = skippedReasons();
    expect(reasons).toEqual(
      expect.arrayContaining([
        expect.stringMatching(/market dropped: .*must give the two teams opposite points \(has -0.5 and 0.25\)/),
        expect.stringMatching(/market dropped: .*point must be a multiple of 0.25 .*\(got 2.3\)/),
        expect.stringMatching(/market dropped: .*point is missing/),
      ]),
    );
  });

  it('gives no pick where the reference quotes no market at that line, and none in a sport without lines', async () => {
    const [home, away] = ['Leeds', 'Wolves'];
    feed.set('odds', 'soccer_epl', [
      v4OddsEvent({
        id: 'm3',
        commenceTime: KICKOFF,
        homeTeam: home,
        awayTeam: away,
        bookmakers: [
          // The reference quotes the total only.
          bookmaker('pinnacle', { h2h: h2h(home, away), totals: twoWay(['Over', 'Under'], 0.5, [2.5, 2.5]) }),
          bookmaker('tipico', {
            spreads: [
              { name: home, price: 3.5, point: -0.5 },
              { name: away, price: 1.4, point: 0.5 },
            ],
          }),
        ],
      }),
    ]);
    feed.set('odds', 'tennis_atp_finals', [
      v4OddsEvent({
        id: 't1',
        sportKey: 'tennis_atp_finals',
        sportTitle: 'ATP Finals',
        commenceTime: KICKOFF,
        homeTeam: 'Sinner',
        awayTeam: 'Alcaraz',
        bookmakers: [
          bookmaker('pinnacle', { h2h: [{ name: 'Sinner', price: 1.9 }, { name: 'Alcaraz', price: 2.0 }], spreads: twoWay(['Sinner', 'Alcaraz'], 0.5, [-1.5, 1.5]) }),
          bookmaker('tipico', { spreads: [{ name: 'Sinner', price: 3, point: -1.5 }, { name: 'Alcaraz', price: 1.5, point: 1.5 }] }),
        ],
      }),
    ]);
    await poll();
    expect(await picks()).toEqual([]);
  });

  it('closes each market at its own point (none when the reference moved off it) and settles by the line rules', async () => {
    const events = [
      { id: 'c1', home: 'Brentford', away: 'Burnley' },
      { id: 'c2', home: 'Luton', away: 'Watford' },
    ];
    const soft = (home: string, away: string, spread: number) =>
      bookmaker('tipico', {
        spreads: [
          { name: home, price: 1.7, point: spread },
          { name: away, price: 2.4, point: -spread },
        ],
        totals: [
          { name: 'Over', price: 1.6, point: 2.25 },
          { name: 'Under', price: 2.45, point: 2.25 },
        ],
      });
    const reference = (home: string, away: string, spread: number, overFair: number, at: Date) =>
      bookmaker('pinnacle', { spreads: twoWay([home, away], 0.55, [spread, -spread]), totals: twoWay(['Over', 'Under'], overFair, [2.25, 2.25]) }, at);
    feed.set(
      'odds',
      'soccer_epl',
      events.map(({ id, home, away }) => v4OddsEvent({ id, commenceTime: KICKOFF, homeTeam: home, awayTeam: away, bookmakers: [reference(home, away, -0.75, 0.55, FRESH), soft(home, away, -0.75)] })),
    );
    await poll();
    // Per event: away +0.75 at 2.40 (fair 1 / 0.45) and Under 2.25 at 2.45 (fair 1 / 0.45).
    expect((await picks()).map((pick) => `${pick.homeTeam} ${pick.selection} ${pick.line}`).sort()).toEqual([
      'Brentford Burnley 0.75',
      'Brentford Under 2.25',
      'Luton Under 2.25',
      'Luton Watford 0.75',
    ]);

    // Before kickoff the reference moves: c1's total shortens (Over fair 0.6), c2's handicap moves to -1.
    const late = new Date(KICKOFF.getTime() - 120_000);
    clock.set(new Date(late.getTime() + 30_000));
    feed.set('odds', 'soccer_epl', [
      v4OddsEvent({ id: 'c1', commenceTime: KICKOFF, homeTeam: 'Brentford', awayTeam: 'Burnley', bookmakers: [reference('Brentford', 'Burnley', -0.75, 0.6, late)] }),
      v4OddsEvent({ id: 'c2', commenceTime: KICKOFF, homeTeam: 'Luton', awayTeam: 'Watford', bookmakers: [reference('Luton', 'Watford', -1, 0.55, late)] }),
    ]);
    await poll();
    clock.set(new Date(KICKOFF.getTime() + 1_000));
    await poll();
    const closed = new Map((await picks()).map((pick) => [`${pick.homeTeam} ${pick.selection}`, pick]));
    expect(closed.get('Brentford Under')!.closingOdds).toBe(round4(1 / 0.4));
    expect(closed.get('Brentford Burnley')!.closingOdds).toBe(round4(1 / 0.45));
    expect(closed.get('Luton Under')!.closingOdds).toBe(round4(1 / 0.45));
    // The reference left +0.75 for +1.0: that pick has no closing line.
    expect(closed.get('Luton Watford')!.closingOdds).toBeNull();

    // Finals: Brentford 2-1 Burnley (total 3), Luton 1-1 Watford (total 2).
    clock.set(new Date(KICKOFF.getTime() + 2 * 3_600_000 + 60_000));
    feed.set('scores', 'soccer_epl', [
      v4ScoreEvent({ id: 'c1', commenceTime: KICKOFF, completed: true, homeTeam: 'Brentford', awayTeam: 'Burnley', scores: [2, 1] }),
      v4ScoreEvent({ id: 'c2', commenceTime: KICKOFF, completed: true, homeTeam: 'Luton', awayTeam: 'Watford', scores: [1, 1] }),
    ]);
    await poll(['scores']);
    const settled = new Map((await picks()).map((pick) => [`${pick.homeTeam} ${pick.selection}`, pick.result]));
    // By hand: Burnley +0.75 at 1-2 = +0.5 (lose 1 + 0.5 - 2 < 0) and +1.0 (push): half lost.
    // Under 2.25 with 3 goals: both 2.0 and 2.5 lose. Watford +0.75 at 1-1: both halves win.
    // Under 2.25 with 2 goals: 2.0 pushes, 2.5 wins: half won.
    expect(Object.fromEntries(settled)).toEqual({
      'Brentford Burnley': 'HALF_LOST',
      'Brentford Under': 'LOST',
      'Luton Watford': 'WON',
      'Luton Under': 'HALF_WON',
    });

    // The track record: profit per unit -0.5, -1, +1.4, +0.725 over 4 picks; CLV on the 3 with a close.
    const key = await createKey();
    const record = await t.app.inject({ method: 'GET', url: '/api/v1/track-record', headers: { authorization: `Bearer ${key}` } });
    expect(record.statusCode).toBe(200);
    const overall = record.json().overall as Record<string, number>;
    const profit = -0.5 - 1 + (2.4 - 1) + (2.45 - 1) / 2;
    expect(overall.total_settled).toBe(4);
    expect(overall.roi_pct).toBeCloseTo((profit / 4) * 100, 1);
    expect(overall.clv_count).toBe(3);
    // Per market: spreads -0.5 + 1.4 over 2 with one close (Burnley +0.75: 100 x (2.4 x 0.45 - 1) = 8);
    // totals -1 + 0.725 over 2, closes 1 / 0.4 and 1 / 0.45.
    const perMarket = record.json().per_market as Record<string, unknown>[];
    expect(perMarket.map((row) => row.market)).toEqual(['spreads', 'totals']);
    expect(perMarket[0]).toMatchObject({ total_settled: 2, roi_pct: 45, clv_avg_pct: 8 });
    expect(perMarket[1]).toMatchObject({ total_settled: 2, roi_pct: -13.75 });
    expect(perMarket[1]!.clv_avg_pct).toBeCloseTo((100 * (2.45 / round4(1 / 0.4) - 1) + 100 * (2.45 / round4(1 / 0.45) - 1)) / 2, 2);
    const scoped = await t.app.inject({ method: 'GET', url: '/api/v1/track-record?market=totals', headers: { authorization: `Bearer ${key}` } });
    expect(scoped.json().overall.total_settled).toBe(2);
    const unknown = await t.app.inject({ method: 'GET', url: '/api/v1/track-record?market=moneyline', headers: { authorization: `Bearer ${key}` } });
    expect(unknown.statusCode).toBe(400);
    expect(unknown.json().error).toBe('invalid_parameter');
  });

  it("closes a spread by its selection's own point, whichever side the feed later calls home", async () => {
    const [home, away] = ['Fulham', 'Everton'];
    const reference = (first: string, second: string, firstPoint: number, firstFair: number, at: Date) =>
      bookmaker('pinnacle', { spreads: twoWay([first, second], firstFair, [firstPoint, 0 - firstPoint]) }, at);
    const soft = bookmaker('tipico', {
      spreads: [
        { name: home, price: 1.7, point: -0.75 },
        { name: away, price: 2.4, point: 0.75 },
      ],
    });
    feed.set('odds', 'soccer_epl', [v4OddsEvent({ id: 'o1', commenceTime: KICKOFF, homeTeam: home, awayTeam: away, bookmakers: [reference(home, away, -0.75, 0.55, FRESH), soft] })]);
    await poll();
    expect((await picks()).map((pick) => [pick.selection, pick.line])).toEqual([[away, 0.75]]);
    // Before kickoff the feed swaps the sides; each team keeps its handicap (Everton +0.75 now fair at 1 / 0.4).
    const late = new Date(KICKOFF.getTime() - 120_000);
    clock.set(new Date(late.getTime() + 30_000));
    feed.set('odds', 'soccer_epl', [v4OddsEvent({ id: 'o1', commenceTime: KICKOFF, homeTeam: away, awayTeam: home, bookmakers: [reference(away, home, 0.75, 0.4, late)] })]);
    await poll();
    clock.set(new Date(KICKOFF.getTime() + 1_000));
    await poll();
    expect((await picks())[0]!.closingOdds).toBe(round4(1 / 0.4));
  });

  it('keeps one engine pick per (event, generation, market, selection, line): a missing h2h line is one value', async () => {
    const em = t.runtime.orm.em.fork();
    let n = 0;
    const insert = (market: string, selection: string, line: number | null) =>
      em.execute(
        `insert into picks (id, sport, league, home_team, away_team, kickoff_at, market, selection, line, description,
           bookmaker_name, bookmaker_slug, odds, reference_fair_odds, tax_rate, edge_pct, edge_pct_post_tax,
           kelly_fraction, edge_tier, confidence, status, created_at, updated_at, stake_pct, event_id, event_generation)
         values (?::uuid, 'soccer', 'EPL', 'H', 'A', now(), ?, ?, ?, 'x', 'Tipico', 'tipico', 2.1, 2.0, 0, 5, 5, 0.05, 'standard', 50,
           'published', now(), now(), 1, 'u1', 0)`,
        [`0000000${++n}-0000-7000-8000-000000000000`, market, selection, line],
      );
    await insert('h2h', 'H', null);
    await expect(insert('h2h', 'H', null)).rejects.toThrow(/picks_event_selection_unique/);
    await insert('spreads', 'H', -0.5);
    await insert('spreads', 'H', -0.75);
    await expect(insert('spreads', 'H', -0.5)).rejects.toThrow(/picks_event_selection_unique/);
    await insert('totals', 'Over', 2.5);
    await expect(insert('totals', 'Over', 2.5)).rejects.toThrow(/picks_event_selection_unique/);
  });
});
