/**
 * Pick availability (issue 40; docs/API.md, "Availability") end to end: the real app polls a local
 * The Odds API v4 feed on 127.0.0.1 by hand on a manual clock; hand-made fixtures move the pick's
 * own offer, and the pick's availability, its events (REST stream, GraphQL subscription,
 * webhooks) and PICK_CONFIRM_POLLS are read back through the API.
 *
 * Every expected number is written out here. The reference (Pinnacle) prices are built from
 * chosen fair probabilities so that the power devig (DEVIG_METHOD's default) gives exactly those
 * probabilities back (powerPrices: price = 1 / p^(1/k), and sum p = 1 at k); the test checks
 * that with its own power devig (test/helpers/independent-value.ts). A soft book pays the
 * default tax on stakes, 5.3 %, so an offer's post-tax edge is price x 0.947 / fair - 1, and the
 * pick is `available` while that is at least PICK_MIN_EDGE (0.02), `moved` below it.
 */
import type { AddressInfo } from 'node:net';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { ManualClock } from '../../src/domain/clock.js';
import type { TestApp } from '../helpers/app.js';
import { APPROVE, CREATE_KEY, pickInput, PUBLISH } from '../helpers/fixtures.js';
import { startHttpsReceiver, type HttpsReceiver } from '../helpers/https-receiver.js';
import { powerDevig, round4 } from '../helpers/independent-value.js';
import { ingestInputOf, powerPrices, startEngineApp, startOddsFeedServer, type OddsFeedServer } from '../helpers/odds-feed-server.js';
import { connectSse, type SseConnection } from '../helpers/sse.js';
import { openStream, type OpenStream } from '../helpers/subscriptions.js';

const START = new Date('2026-11-24T12:00:00.000Z');
const KICKOFF = new Date('2026-11-24T15:00:00.000Z');
const MINUTE = 60_000;
const SPORT_KEY = 'soccer_epl';
/** Polled beside soccer in every app: its (empty) answers must never touch a soccer pick. */
const OTHER_SPORT_KEY = 'basketball_nba';
const HOME = 'Arsenal';
const AWAY = 'Chelsea';
const DRAW = 'Draw';
/** The default tax on stakes of a soft book (BOOKMAKER_TAX_RATES names none here). */
const TAX = 0.053;
/** PICK_MIN_EDGE's default. */
const MIN_EDGE = 0.02;

// The reference's fair probabilities by construction (k = 1.05 leaves a 3.4 % margin on its prices).
const FAIR_H2H = { [HOME]: 0.5, [AWAY]: 0.25, [DRAW]: 0.25 };
const PINNACLE_H2H = powerPrices(FAIR_H2H, 1.05);
const FAIR_TWO_WAY = 0.5;
const PINNACLE_TWO_WAY = 1 / FAIR_TWO_WAY ** (1 / 1.05);
/** Fair odds of the away win (1 / 0.25) and of either side of a 50/50 line (1 / 0.5). */
const AWAY_FAIR_ODDS = 4;
const TWO_WAY_FAIR_ODDS = 2;

/** The API's post-tax edge in percent, 4 decimals. */
const edgePct = (price: number, fairOdds: number) => round4(((price * (1 - TAX)) / fairOdds - 1) * 100);
const statusOf = (price: number, fairOdds: number) => ((price * (1 - TAX)) / fairOdds - 1 >= MIN_EDGE ? 'AVAILABLE' : 'MOVED');

type MarketKey = 'h2h' | 'spreads' | 'totals';
interface MarketSpec {
  key: MarketKey;
  outcomes: { name: string; price: number; point?: number }[];
}
/** An h2h market listing the outcomes in the order given. */
const h2h = (...outcomes: [string, number][]): MarketSpec => ({ key: 'h2h', outcomes: outcomes.map(([name, price]) => ({ name, price })) });
/** A spreads market at the home team's handicap `homePoint` (the away team's point is its opposite). */
const spreads = (homePoint: number, homePrice: number, awayPrice: number): MarketSpec => ({
  key: 'spreads',
  outcomes: [
    { name: HOME, price: homePrice, point: homePoint },
    { name: AWAY, price: awayPrice, point: -homePoint },
  ],
});
const totals = (point: number, over: number, under: number): MarketSpec => ({
  key: 'totals',
  outcomes: [
    { name: 'Over', price: over, point },
    { name: 'Under', price: under, point },
  ],
});

/** A v4 bookmaker whose markets were updated at `at`. */
function bookmaker(key: string, markets: MarketSpec[], at: Date): Record<string, unknown> {
  return {
    key,
    title: key === 'pinnacle' ? 'Pinnacle' : key[0]!.toUpperCase() + key.slice(1),
    last_update: at.toISOString(),
    markets: markets.map((market) => ({ key: market.key, last_update: at.toISOString(), outcomes: market.outcomes })),
  };
}

/** Pinnacle's h2h (home, away, draw): the fair prices of FAIR_H2H. */
const PINNACLE_1X2 = h2h([HOME, PINNACLE_H2H[HOME]!], [AWAY, PINNACLE_H2H[AWAY]!], [DRAW, PINNACLE_H2H[DRAW]!]);
const pinnacle = (at: Date, markets: MarketSpec[] = [PINNACLE_1X2]) => bookmaker('pinnacle', markets, at);
/** Pinnacle's spreads at Arsenal -0.5 and totals at 2.5, each side fair at 2.0. */
const PINNACLE_LINES = [spreads(-0.5, PINNACLE_TWO_WAY, PINNACLE_TWO_WAY), totals(2.5, PINNACLE_TWO_WAY, PINNACLE_TWO_WAY)];

/**
 * Tipico's h2h with the away win at `away`. The home win and the draw (1.85, 3.75) never carry
 * value, and the three keep the book's margin positive (1/1.85 + 1/away + 1/3.75 >= 1) up to an
 * away price of 5.1; 5.2 is used once on purpose, as a negative margin.
 */
const tipicoH2h = (away: number): MarketSpec => h2h([HOME, 1.85], [AWAY, away], [DRAW, 3.75]);

/** A v4 /odds event, Arsenal v Chelsea unless named otherwise. */
function event(id: string, bookmakers: Record<string, unknown>[], teams: { home: string; away: string } = { home: HOME, away: AWAY }): Record<string, unknown> {
  return { id, sport_key: SPORT_KEY, sport_title: 'EPL', commence_time: KICKOFF.toISOString(), home_team: teams.home, away_team: teams.away, bookmakers };
}

/**
 * Another match, Everton v Fulham, priced as Arsenal v Chelsea (Fulham fair at 4.0): Tipico's
 * Fulham at `away`.
 */
function evertonFulham(id: string, away: number, fresh: Date): Record<string, unknown> {
  const rename = (market: MarketSpec): MarketSpec => ({ ...market, outcomes: market.outcomes.map((o) => ({ ...o, name: o.name === HOME ? 'Everton' : o.name === AWAY ? 'Fulham' : o.name })) });
  return event(id, [pinnacle(fresh, [rename(PINNACLE_1X2)]), bookmaker('tipico', [rename(tipicoH2h(away))], fresh)], { home: 'Everton', away: 'Fulham' });
}

const PICK = `query($id: ID!) { pick(id: $id) { id status selection market line odds bookmaker { slug }
  availability { status oddsNow edgePctNow checkedAt since } bestOddsSincePublished } }`;
const PICKS = 'query { picks(first: 50) { nodes { id homeTeam market selection line odds publishedAt } } }';
const REVIEW_QUEUE = 'query { reviewQueue(first: 50) { nodes { id selection odds } } }';
const INGEST = `mutation($events: [OddsEventInput!]!) { ingestOdds(events: $events) { events skipped { eventId reason } } }`;

interface AvailabilityView {
  status: string;
  oddsNow: number | null;
  edgePctNow: number | null;
  checkedAt: string | null;
  since: string | null;
}
interface PickView {
  id: string;
  status: string;
  selection: string;
  market: string;
  line: number | null;
  odds: number;
  bookmaker: { slug: string };
  availability: AvailabilityView;
  bestOddsSincePublished: number | null;
}

/** The availability the API should show: the times as the clock read them at the polls. */
function expected(status: string, oddsNow: number | null, fairOdds: number, checkedAt: Date | null, since: Date | null) {
  return { status, oddsNow, edgePctNow: oddsNow === null ? null : edgePct(oddsNow, fairOdds), checkedAt: checkedAt?.toISOString() ?? null, since: since?.toISOString() ?? null };
}

/** The availability as REST, stream frames and webhooks carry it. */
const restAvailability = (view: ReturnType<typeof expected>) => ({ status: view.status.toLowerCase(), odds_now: view.oddsNow, edge_pct_now: view.edgePctNow, checked_at: view.checkedAt, since: view.since });

let feed: OddsFeedServer;
beforeAll(async () => {
  feed = await startOddsFeedServer();
  // The construction above, checked with an independent power devig.
  const fair = powerDevig([PINNACLE_H2H[HOME]!, PINNACLE_H2H[AWAY]!, PINNACLE_H2H[DRAW]!]);
  expect(fair[1]).toBeCloseTo(1 / AWAY_FAIR_ODDS, 12);
  expect(powerDevig([PINNACLE_TWO_WAY, PINNACLE_TWO_WAY])[0]).toBeCloseTo(1 / TWO_WAY_FAIR_ODDS, 12);
});
afterAll(async () => {
  await feed.close();
});

const closers: { close(): unknown }[] = [];
afterEach(async () => {
  for (const item of closers.splice(0).reverse()) await item.close();
});

/** The engine app on a fresh database, polling soccer and basketball by hand. */
async function engineApp(clock: ManualClock, env: Record<string, string> = {}): Promise<TestApp> {
  const { app } = await startEngineApp(feed, clock, [SPORT_KEY, OTHER_SPORT_KEY], env);
  closers.push(app);
  return app;
}

/** The engine app listening on loopback (streams, webhooks), with an Enterprise key. */
async function listeningApp(clock: ManualClock, env: Record<string, string> = {}): Promise<{ t: TestApp; port: number; key: string }> {
  const t = await engineApp(clock, env);
  await t.app.listen({ port: 0, host: '127.0.0.1' });
  const key = (await t.graphql<{ createApiKey: { key: string } }>(CREATE_KEY, { input: { tier: 'ENTERPRISE' } })).data!.createApiKey.key;
  return { t, port: (t.app.server.address() as AddressInfo).port, key };
}

/**
 * Moves the clock by `advanceMs`, serves the soccer events `answer` makes (given a time 30 s
 * before the poll: fresh quotes) and polls every sport key's odds once. Returns the poll's time.
 */
async function pollWith(t: TestApp, clock: ManualClock, answer: (fresh: Date) => unknown[], advanceMs = MINUTE): Promise<Date> {
  clock.advance(advanceMs);
  const at = clock.now();
  feed.set('odds', SPORT_KEY, answer(new Date(at.getTime() - 30_000)));
  expect(await t.runtime.poller!.pollNow(['odds'])).toBe(true);
  return at;
}

/** The match m1 with Pinnacle and, unless `away` is null, Tipico's h2h with the away win at `away`. */
const m1 = (away: number | null) => (fresh: Date) => [event('m1', [pinnacle(fresh), ...(away === null ? [] : [bookmaker('tipico', [tipicoH2h(away)], fresh)])])];

async function pickView(t: TestApp, id: string): Promise<PickView> {
  const result = await t.graphql<{ pick: PickView }>(PICK, { id });
  expect(result.errors).toBeUndefined();
  return result.data!.pick;
}

async function visiblePicks(t: TestApp): Promise<{ id: string; market: string; selection: string; line: number | null; odds: number; publishedAt: string }[]> {
  return (await t.graphql<{ picks: { nodes: { id: string; market: string; selection: string; line: number | null; odds: number; publishedAt: string }[] } }>(PICKS)).data!.picks.nodes;
}

/** The one visible pick (the fixtures make one at a time unless said otherwise). */
async function onlyPick(t: TestApp): Promise<string> {
  const picks = await visiblePicks(t);
  expect(picks).toHaveLength(1);
  return picks[0]!.id;
}

/** A pick's availability fields as GET /api/v1/picks serves them. */
async function restPick(t: TestApp, key: string, id: string): Promise<Record<string, unknown>> {
  const response = await t.app.inject({ method: 'GET', url: '/api/v1/picks', headers: { authorization: `Bearer ${key}` } });
  expect(response.statusCode).toBe(200);
  const pick = (response.json().data as Record<string, unknown>[]).find((candidate) => candidate.id === id)!;
  return { availability: pick.availability, best_odds_since_published: pick.best_odds_since_published };
}

/** The pick's outbox events, oldest first. */
async function outboxTypes(t: TestApp, pickId: string): Promise<string[]> {
  const rows = await t.runtime.orm.em.fork().execute<{ type: string }[]>('select type from outbox_events where pick_id = ? order by seq', [pickId]);
  return rows.map((row) => row.type);
}

/** The pick's kept changes of status, oldest first. */
async function keptChanges(t: TestApp, pickId: string): Promise<{ status: string; at: string }[]> {
  const rows = await t.runtime.orm.em.fork().execute<{ status: string; at: Date | string }[]>('select status, at from pick_availability_changes where pick_id = ? order by at', [pickId]);
  return rows.map((row) => ({ status: row.status, at: new Date(row.at).toISOString() }));
}

describe('availability of an h2h pick', () => {
  it('moves available -> moved -> available -> gone -> available with the fixture prices; since only on a change, checked_at every poll, the best price kept', async () => {
    const clock = new ManualClock(START);
    const t = await engineApp(clock);

    // 4.6 x 0.947 / 4 - 1 = 8.905 %: published, the detecting poll its first check.
    const t0 = await pollWith(t, clock, m1(4.6));
    const id = await onlyPick(t);
    let pick = await pickView(t, id);
    expect(pick).toMatchObject({ selection: AWAY, odds: 4.6 });
    expect(pick.availability).toEqual(expected('AVAILABLE', 4.6, AWAY_FAIR_ODDS, t0, t0));
    expect(pick.availability.edgePctNow).toBe(8.905);
    expect(pick.bestOddsSincePublished).toBe(4.6);

    const key = (await t.graphql<{ createApiKey: { key: string } }>(CREATE_KEY, { input: { tier: 'STARTER' } })).data!.createApiKey.key;
    expect(await restPick(t, key, id)).toEqual({ availability: restAvailability(expected('AVAILABLE', 4.6, AWAY_FAIR_ODDS, t0, t0)), best_odds_since_published: 4.6 });

    // 4.7: 11.2725 %, still available: since stays, the check and the price move, the best rises.
    const t1 = await pollWith(t, clock, m1(4.7));
    pick = await pickView(t, id);
    expect(pick.availability).toEqual(expected('AVAILABLE', 4.7, AWAY_FAIR_ODDS, t1, t0));
    expect(pick.availability.edgePctNow).toBe(11.2725);
    expect(pick.bestOddsSincePublished).toBe(4.7);
    // The REST list (cached between changes) shows the new check at once, not the one it read before.
    expect(await restPick(t, key, id)).toEqual({ availability: restAvailability(expected('AVAILABLE', 4.7, AWAY_FAIR_ODDS, t1, t0)), best_odds_since_published: 4.7 });

    // 4.2: 4.2 x 0.947 / 4 - 1 = -0.565 %, below 2 %: moved.
    const t2 = await pollWith(t, clock, m1(4.2));
    pick = await pickView(t, id);
    expect(statusOf(4.2, AWAY_FAIR_ODDS)).toBe('MOVED');
    expect(pick.availability).toEqual(expected('MOVED', 4.2, AWAY_FAIR_ODDS, t2, t2));
    expect(pick.availability.edgePctNow).toBe(-0.565);
    expect(pick.bestOddsSincePublished).toBe(4.7);

    // 4.1 (-2.9325 %) is still below the edge: moved since t2, checked at t3.
    const t3 = await pollWith(t, clock, m1(4.1));
    expect((await pickView(t, id)).availability).toEqual(expected('MOVED', 4.1, AWAY_FAIR_ODDS, t3, t2));

    // 4.4: 4.17 %: available again.
    const t4 = await pollWith(t, clock, m1(4.4));
    pick = await pickView(t, id);
    expect(pick.availability).toEqual(expected('AVAILABLE', 4.4, AWAY_FAIR_ODDS, t4, t4));
    expect(pick.availability.edgePctNow).toBe(4.17);

    // Tipico still lists the match but no longer the away win: gone, no price, no edge.
    const t5 = await pollWith(t, clock, (fresh) => [event('m1', [pinnacle(fresh), bookmaker('tipico', [h2h([HOME, 1.85], [DRAW, 3.75])], fresh)])]);
    pick = await pickView(t, id);
    expect(pick.availability).toEqual(expected('GONE', null, AWAY_FAIR_ODDS, t5, t5));
    expect(pick.bestOddsSincePublished).toBe(4.7);

    // Tipico leaves the match altogether: still gone since t5, checked at t6.
    const t6 = await pollWith(t, clock, m1(null));
    expect((await pickView(t, id)).availability).toEqual(expected('GONE', null, AWAY_FAIR_ODDS, t6, t5));

    // Back at 4.5 (6.5375 %): available.
    const t7 = await pollWith(t, clock, m1(4.5));
    pick = await pickView(t, id);
    expect(pick.availability).toEqual(expected('AVAILABLE', 4.5, AWAY_FAIR_ODDS, t7, t7));
    expect(pick.availability.edgePctNow).toBe(6.5375);
    expect(pick.bestOddsSincePublished).toBe(4.7);

    // One kept change and one event per change of status; none for the polls that kept it.
    expect(await keptChanges(t, id)).toEqual([
      { status: 'available', at: t0.toISOString() },
      { status: 'moved', at: t2.toISOString() },
      { status: 'available', at: t4.toISOString() },
      { status: 'gone', at: t5.toISOString() },
      { status: 'available', at: t7.toISOString() },
    ]);
    expect(await outboxTypes(t, id)).toEqual(['pick.published', ...Array<string>(4).fill('pick.availability_changed')]);
  });

  it('reads the selection by name in a book (and a reference) that lists the outcomes in another order', async () => {
    const clock = new ManualClock(START);
    const t = await engineApp(clock);
    const t0 = await pollWith(t, clock, m1(4.6));
    const id = await onlyPick(t);
    // Tipico lists the away win first and the home win last; Pinnacle keeps home, away, draw.
    // 4.4 is judged against the away win's fair 4.0 (4.17 %), not the home win's 2.0 its place would give.
    const t1 = await pollWith(t, clock, (fresh) => [event('m1', [pinnacle(fresh), bookmaker('tipico', [h2h([AWAY, 4.4], [DRAW, 3.75], [HOME, 1.85])], fresh)])]);
    expect((await pickView(t, id)).availability).toEqual(expected('AVAILABLE', 4.4, AWAY_FAIR_ODDS, t1, t0));
    // Pinnacle in another order too (draw, away, home), Tipico in a third: 4.1 (-2.9325 %), moved.
    const reversed = h2h([DRAW, PINNACLE_H2H[DRAW]!], [AWAY, PINNACLE_H2H[AWAY]!], [HOME, PINNACLE_H2H[HOME]!]);
    const t2 = await pollWith(t, clock, (fresh) => [event('m1', [pinnacle(fresh, [reversed]), bookmaker('tipico', [h2h([DRAW, 3.75], [HOME, 1.85], [AWAY, 4.1])], fresh)])]);
    expect((await pickView(t, id)).availability).toEqual(expected('MOVED', 4.1, AWAY_FAIR_ODDS, t2, t2));
  });

  it('keeps status, price, edge, checked_at and the best price while the quote cannot be judged (reference gone, stale, or the book left out)', async () => {
    const clock = new ManualClock(START);
    const t = await engineApp(clock);
    const t0 = await pollWith(t, clock, m1(4.6));
    const id = await onlyPick(t);
    const atPublication = expected('AVAILABLE', 4.6, AWAY_FAIR_ODDS, t0, t0);

    // Pinnacle no longer quotes the match: Tipico's 4.8 has nothing to be judged by, and is no best price.
    await pollWith(t, clock, (fresh) => [event('m1', [bookmaker('tipico', [tipicoH2h(4.8)], fresh)])]);
    let pick = await pickView(t, id);
    expect(pick.availability).toEqual(atPublication);
    expect(pick.bestOddsSincePublished).toBe(4.6);

    // Pinnacle back but 301 s old at the poll (REFERENCE_MAX_AGE_SECONDS 300): 3.9 would be moved, but nothing is known.
    await pollWith(t, clock, (fresh) => [event('m1', [pinnacle(new Date(fresh.getTime() + 30_000 - 301_000)), bookmaker('tipico', [tipicoH2h(3.9)], fresh)])]);
    pick = await pickView(t, id);
    expect(pick.availability).toEqual(atPublication);
    expect(pick.bestOddsSincePublished).toBe(4.6);

    // Tipico's market with a negative margin (1/1.85 + 1/5.2 + 1/3.75 = 0.9995 < 1) is left out of any comparison.
    await pollWith(t, clock, m1(5.2));
    pick = await pickView(t, id);
    expect(pick.availability).toEqual(atPublication);
    expect(pick.bestOddsSincePublished).toBe(4.6);

    // A fresh reference again: 3.9 (-7.6675 %) is judged: moved, checked now.
    const t4 = await pollWith(t, clock, m1(3.9));
    expect((await pickView(t, id)).availability).toEqual(expected('MOVED', 3.9, AWAY_FAIR_ODDS, t4, t4));
    expect(await outboxTypes(t, id)).toEqual(['pick.published', 'pick.availability_changed']);
  });
});

/** A real clock moves during a poll: 1 ms at every reading here, so later work in a poll is later in time. */
class TickingClock extends ManualClock {
  override now(): Date {
    this.advance(1);
    return super.now();
  }
}

describe('the check a pick is published with', () => {
  it('is dated by its publication, on a clock that moves during the poll: the same poll never checks the new pick again with its earlier time', async () => {
    const clock = new TickingClock(START);
    const t = await engineApp(clock);
    await pollWith(t, clock, m1(4.6));
    const id = await onlyPick(t);
    const published = (await t.graphql<{ picks: { nodes: { id: string; publishedAt: string }[] } }>(PICKS)).data!.picks.nodes.find((pick) => pick.id === id)!.publishedAt;
    const { availability } = await pickView(t, id);
    expect(availability).toMatchObject({ status: 'AVAILABLE', checkedAt: published, since: published });
    expect(await keptChanges(t, id)).toEqual([{ status: 'available', at: published }]);
  });
});

describe('availability of a pick on a line', () => {
  it("reads spreads and totals at the pick's own point only; the away side of a spread sits in the market of the home handicap", async () => {
    const clock = new ManualClock(START);
    const t = await engineApp(clock);
    const match = (tipico: MarketSpec[]) => (fresh: Date) => [event('m1', [pinnacle(fresh, PINNACLE_LINES), bookmaker('tipico', tipico, fresh)])];

    // Chelsea +0.5 at 2.2 (4.17 %) in the market of Arsenal -0.5; Over 2.5 at 2.2 (4.17 %).
    const t0 = await pollWith(t, clock, match([spreads(-0.5, 1.8, 2.2), totals(2.5, 2.2, 1.8)]));
    const picks = await visiblePicks(t);
    expect(picks).toHaveLength(2);
    const spreadPick = picks.find((pick) => pick.market === 'spreads')!;
    const totalPick = picks.find((pick) => pick.market === 'totals')!;
    expect(spreadPick).toMatchObject({ selection: AWAY, line: 0.5, odds: 2.2 });
    expect(totalPick).toMatchObject({ selection: 'Over', line: 2.5, odds: 2.2 });

    // Same lines, new prices: Chelsea +0.5 at 2.25 (6.5375 %), Over 2.5 at 2.05 (-2.9325 %, moved).
    const t1 = await pollWith(t, clock, match([spreads(-0.5, 1.75, 2.25), totals(2.5, 2.05, 1.9)]));
    expect((await pickView(t, spreadPick.id)).availability).toEqual(expected('AVAILABLE', 2.25, TWO_WAY_FAIR_ODDS, t1, t0));
    expect((await pickView(t, totalPick.id)).availability).toEqual(expected('MOVED', 2.05, TWO_WAY_FAIR_ODDS, t1, t1));

    // Tipico moves both markets to other lines (Arsenal -1.5 / Chelsea +1.5, totals 3.0): Chelsea
    // and Over are still quoted, but not at the picks' points: gone.
    const t2 = await pollWith(t, clock, match([spreads(-1.5, 2.6, 1.5), totals(3, 2.6, 1.5)]));
    expect((await pickView(t, spreadPick.id)).availability).toEqual(expected('GONE', null, TWO_WAY_FAIR_ODDS, t2, t2));
    expect((await pickView(t, totalPick.id)).availability).toEqual(expected('GONE', null, TWO_WAY_FAIR_ODDS, t2, t2));

    // The mirrored spread (Arsenal +0.5, Chelsea -0.5) has Chelsea on the other side of the line: still gone.
    const t3 = await pollWith(t, clock, match([spreads(0.5, 1.5, 2.6)]));
    expect((await pickView(t, spreadPick.id)).availability).toEqual(expected('GONE', null, TWO_WAY_FAIR_ODDS, t3, t2));

    // Back at the picks' lines: Chelsea +0.5 at 2.2 (available), Over 2.5 at 2.1 (-0.565 %, moved).
    const t4 = await pollWith(t, clock, match([spreads(-0.5, 1.8, 2.2), totals(2.5, 2.1, 1.8)]));
    expect((await pickView(t, spreadPick.id)).availability).toEqual(expected('AVAILABLE', 2.2, TWO_WAY_FAIR_ODDS, t4, t4));
    expect((await pickView(t, totalPick.id)).availability).toEqual(expected('MOVED', 2.1, TWO_WAY_FAIR_ODDS, t4, t4));
    expect((await pickView(t, spreadPick.id)).bestOddsSincePublished).toBe(2.25);
    expect((await pickView(t, totalPick.id)).bestOddsSincePublished).toBe(2.2);
  });
});

describe('a match that leaves the feed', () => {
  it('is gone when a poll of its sport key lacks it, but not when the parser skipped its entry, when an entry had no id, or after a pushed batch', async () => {
    const clock = new ManualClock(START);
    const t = await engineApp(clock);
    // Everton v Fulham without value keeps the soccer answers from being empty.
    const withOther = (answer: (fresh: Date) => unknown[]) => (fresh: Date) => [...answer(fresh), evertonFulham('m2', 3.9, fresh)];

    // The basketball poll that follows (an answer without m1, for another sport key) leaves it available.
    const t0 = await pollWith(t, clock, withOther(m1(4.6)));
    const id = await onlyPick(t);
    expect((await pickView(t, id)).availability).toEqual(expected('AVAILABLE', 4.6, AWAY_FAIR_ODDS, t0, t0));

    // The soccer answer without m1: it left the feed.
    const t1 = await pollWith(t, clock, withOther(() => []));
    expect((await pickView(t, id)).availability).toEqual(expected('GONE', null, AWAY_FAIR_ODDS, t1, t1));

    const t2 = await pollWith(t, clock, withOther(m1(4.4)));
    const backAt = expected('AVAILABLE', 4.4, AWAY_FAIR_ODDS, t2, t2);
    expect((await pickView(t, id)).availability).toEqual(backAt);

    // m1's entry with a commence_time the parser refuses (and a price that would be moved): bad data, not a departure.
    await pollWith(t, clock, withOther((fresh) => [{ ...m1(4.0)(fresh)[0], commence_time: 'tomorrow afternoon' }]));
    expect((await pickView(t, id)).availability).toEqual(backAt);

    // m1 absent beside an entry without an id: every absence is doubtful, nobody is gone.
    await pollWith(t, clock, withOther(() => [{ sport_key: SPORT_KEY, sport_title: 'EPL', commence_time: KICKOFF.toISOString(), home_team: 'Leeds', away_team: 'Hull', bookmakers: [] }]));
    expect((await pickView(t, id)).availability).toEqual(backAt);

    // An empty answer for the sport key: a feed's hiccup, not every match withdrawn.
    await pollWith(t, clock, () => []);
    expect((await pickView(t, id)).availability).toEqual(backAt);

    // A batch an operator pushes without m1 covers no sport key: m1 stays.
    clock.advance(MINUTE);
    const pushed = await t.graphql<{ ingestOdds: { events: number } }>(INGEST, {
      events: [ingestInputOf(evertonFulham('m2', 3.9, new Date(clock.now().getTime() - 30_000)))],
    });
    expect(pushed.errors).toBeUndefined();
    expect(pushed.data!.ingestOdds.events).toBe(1);
    expect((await pickView(t, id)).availability).toEqual(backAt);

    expect(await keptChanges(t, id)).toEqual([
      { status: 'available', at: t0.toISOString() },
      { status: 'gone', at: t1.toISOString() },
      { status: 'available', at: t2.toISOString() },
    ]);
  });
});

describe('what is not tracked', () => {
  it('changes nothing after kickoff', async () => {
    const clock = new ManualClock(START);
    const t = await engineApp(clock);
    const t0 = await pollWith(t, clock, m1(4.6));
    const id = await onlyPick(t);
    const t1 = await pollWith(t, clock, m1(4.2));
    const lastBeforeKickoff = expected('MOVED', 4.2, AWAY_FAIR_ODDS, t1, t1);
    expect((await pickView(t, id)).availability).toEqual(lastBeforeKickoff);

    // One second after kickoff Tipico is gone from the match; then the match is gone from the feed;
    // then a price with value is back: the status stays the last one before kickoff.
    await pollWith(t, clock, m1(null), KICKOFF.getTime() + 1_000 - clock.now().getTime());
    await pollWith(t, clock, () => []);
    await pollWith(t, clock, m1(4.6));
    const pick = await pickView(t, id);
    expect(pick.availability).toEqual(lastBeforeKickoff);
    expect(pick.bestOddsSincePublished).toBe(4.6);
    expect(await keptChanges(t, id)).toEqual([
      { status: 'available', at: t0.toISOString() },
      { status: 'moved', at: t1.toISOString() },
    ]);
  });

  it('leaves a manual pick unknown, and a held pick untracked until it is approved', async () => {
    const clock = new ManualClock(START);
    const t = await engineApp(clock);
    // Tipico's 5.4 is 5.4 x 0.947 / 4 - 1 = 27.8 % >= PICK_REVIEW_EDGE (25 %): held for review.
    // (Its home win and draw at 1.7 and 3.5 keep the margin positive.)
    const tipico = (away: number) => (fresh: Date) => [event('m1', [pinnacle(fresh), bookmaker('tipico', [h2h([HOME, 1.7], [AWAY, away], [DRAW, 3.5])], fresh)])];
    await pollWith(t, clock, tipico(5.4));
    expect(await visiblePicks(t)).toEqual([]);
    const queue = (await t.graphql<{ reviewQueue: { nodes: { id: string; selection: string; odds: number }[] } }>(REVIEW_QUEUE)).data!.reviewQueue.nodes;
    expect(queue).toMatchObject([{ selection: AWAY, odds: 5.4 }]);
    const heldId = queue[0]!.id;
    // The same offer published by hand.
    const manual = await t.graphql<{ publishPick: { id: string } }>(PUBLISH, {
      input: pickInput({ homeTeam: HOME, awayTeam: AWAY, selection: AWAY, kickoffAt: KICKOFF.toISOString(), bookmaker: { name: 'Tipico', slug: 'tipico' }, odds: 4.6, referenceFairOdds: 4 }),
    });
    expect(manual.errors).toBeUndefined();
    const manualId = manual.data!.publishPick.id;

    // Tipico drops to 4.2 (moved, were they tracked), then leaves the match (gone).
    await pollWith(t, clock, tipico(4.2));
    await pollWith(t, clock, m1(null));
    const never = expected('UNKNOWN', null, AWAY_FAIR_ODDS, null, null);
    for (const id of [heldId, manualId]) {
      const pick = await pickView(t, id);
      expect(pick.availability).toEqual(never);
      expect(pick.bestOddsSincePublished).toBeNull();
      expect(await keptChanges(t, id)).toEqual([]);
      expect(await outboxTypes(t, id)).toEqual(id === manualId ? ['pick.published'] : []);
    }
    expect((await pickView(t, heldId)).status).toBe('ADMIN_REVIEW');

    // Approved, the held pick is tracked from the next poll: Tipico back at 4.4 (4.17 %).
    const approved = await t.graphql(APPROVE, { id: heldId });
    expect(approved.errors).toBeUndefined();
    expect((await pickView(t, heldId)).availability.status).toBe('UNKNOWN');
    const t3 = await pollWith(t, clock, tipico(4.4));
    expect((await pickView(t, heldId)).availability).toEqual(expected('AVAILABLE', 4.4, AWAY_FAIR_ODDS, t3, t3));
    // Its best price since publication counts its own odds (5.4), above anything quoted since.
    expect((await pickView(t, heldId)).bestOddsSincePublished).toBe(5.4);
    expect((await pickView(t, manualId)).availability).toEqual(never);
  });
  it('starts a promoted held pick available at its promotion, on the book it was promoted with', async () => {
    const clock = new ManualClock(START);
    const t = await engineApp(clock);
    // Tipico's 5.4 is 27.8 %, too good to be true: held. Then Bwin offers a plausible 4.6 (8.905 %): the held pick is published on it.
    const tipicoTooGood = (fresh: Date) => bookmaker('tipico', [h2h([HOME, 1.7], [AWAY, 5.4], [DRAW, 3.5])], fresh);
    await pollWith(t, clock, (fresh) => [event('m1', [pinnacle(fresh), tipicoTooGood(fresh)])]);
    expect(await visiblePicks(t)).toEqual([]);
    const t1 = await pollWith(t, clock, (fresh) => [event('m1', [pinnacle(fresh), tipicoTooGood(fresh), bookmaker('bwin', [tipicoH2h(4.6)], fresh)])]);
    const id = await onlyPick(t);
    expect(await pickView(t, id)).toMatchObject({ bookmaker: { slug: 'bwin' }, odds: 4.6, availability: expected('AVAILABLE', 4.6, AWAY_FAIR_ODDS, t1, t1) });
    // Bwin leaves; Tipico's 5.4 is not the pick's offer: gone.
    const t2 = await pollWith(t, clock, (fresh) => [event('m1', [pinnacle(fresh), tipicoTooGood(fresh)])]);
    const pick = await pickView(t, id);
    expect(pick.availability).toEqual(expected('GONE', null, AWAY_FAIR_ODDS, t2, t2));
    expect(pick.bestOddsSincePublished).toBe(4.6);
    expect(await keptChanges(t, id)).toEqual([
      { status: 'available', at: t1.toISOString() },
      { status: 'gone', at: t2.toISOString() },
    ]);
    // Published available: the only change event is the departure.
    expect(await outboxTypes(t, id)).toEqual(['pick.published', 'pick.availability_changed']);
  });
});

/** SSE frames of a stream's text: id, event name and data. */
function framesOf(text: string): { seq: number; event: string; data: Record<string, any> }[] {
  return [...text.matchAll(/id: (\d+)\nevent: ([a-z._]+)\ndata: ([^\n]*)\n\n/g)].map((m) => ({ seq: Number(m[1]), event: m[2]!, data: JSON.parse(m[3]!) }));
}
/** Matches a text holding at least `count` frames. */
const frameCount = (count: number) => new RegExp(`(id: \\d+\\nevent: [a-z._]+\\ndata: [^\\n]*\\n\\n[^]*){${count}}`);

describe('availability events', () => {
  it('sends one pick.availability frame per change on the REST stream (none while the status stays), replayable after Last-Event-ID, and pickAvailabilityChanged on GraphQL', async () => {
    const clock = new ManualClock(START);
    const { t, port, key } = await listeningApp(clock);
    const stream: SseConnection = await connectSse(port, '/api/v1/picks/stream', { authorization: `Bearer ${key}` });
    closers.push({ close: () => stream.close() });
    expect(stream.status).toBe(200);
    const subscription: OpenStream = await openStream(port, 'graphql-sse', `Bearer ${key}`, {
      query: 'subscription { pickAvailabilityChanged { sequence type pick { id availability { status oddsNow edgePctNow checkedAt since } bestOddsSincePublished } } }',
    });
    closers.push({ close: () => subscription.close() });
    expect(subscription.status).toBe(200);

    const t0 = await pollWith(t, clock, m1(4.6));
    await stream.waitFor(frameCount(1), 10_000);
    const t1 = await pollWith(t, clock, m1(4.2)); // moved
    await pollWith(t, clock, m1(4.1)); // still moved: no frame
    const t3 = await pollWith(t, clock, m1(null)); // gone
    await pollWith(t, clock, m1(null)); // still gone: no frame
    const t5 = await pollWith(t, clock, m1(4.4)); // available
    await stream.waitFor(frameCount(4), 10_000);

    const id = await onlyPick(t);
    const frames = framesOf(stream.raw());
    expect(frames.map((frame) => [frame.event, frame.data.id])).toEqual([
      ['pick.published', id],
      ['pick.availability', id],
      ['pick.availability', id],
      ['pick.availability', id],
    ]);
    // Each frame carries the pick as it was at the change, in the REST shape; the best price stays 4.6.
    expect(frames.map((frame) => frame.data.availability)).toEqual([
      restAvailability(expected('AVAILABLE', 4.6, AWAY_FAIR_ODDS, t0, t0)),
      restAvailability(expected('MOVED', 4.2, AWAY_FAIR_ODDS, t1, t1)),
      restAvailability(expected('GONE', null, AWAY_FAIR_ODDS, t3, t3)),
      restAvailability(expected('AVAILABLE', 4.4, AWAY_FAIR_ODDS, t5, t5)),
    ]);
    expect(frames.map((frame) => frame.data.best_odds_since_published)).toEqual([4.6, 4.6, 4.6, 4.6]);
    const seqs = frames.map((frame) => frame.seq);
    expect([...seqs].sort((a, b) => a - b)).toEqual(seqs);

    // A reconnect after the first change replays the two that followed, in order, and nothing else.
    const resumed = await connectSse(port, '/api/v1/picks/stream', { authorization: `Bearer ${key}`, 'last-event-id': String(seqs[1]) });
    closers.push({ close: () => resumed.close() });
    await resumed.waitFor(frameCount(2), 10_000);
    expect(framesOf(resumed.raw())).toEqual(frames.slice(2));

    // GraphQL: the three changes with the same sequences, and not the publication.
    const text = await subscription.waitFor(/(event: next\ndata: [^\n]*\n\n[^]*){3}/, 10_000);
    const changes = [...text.matchAll(/event: next\ndata: ([^\n]*)\n\n/g)].map((m) => JSON.parse(m[1]!).data.pickAvailabilityChanged as { sequence: string; type: string; pick: PickView });
    expect(changes.map((change) => [Number(change.sequence), change.type, change.pick.id])).toEqual(seqs.slice(1).map((seq) => [seq, 'pick.availability_changed', id]));
    expect(changes.map((change) => change.pick.availability)).toEqual([
      expected('MOVED', 4.2, AWAY_FAIR_ODDS, t1, t1),
      expected('GONE', null, AWAY_FAIR_ODDS, t3, t3),
      expected('AVAILABLE', 4.4, AWAY_FAIR_ODDS, t5, t5),
    ]);
  });

  it('delivers pick.availability_changed to a webhook subscription that names it, and nothing of it to one that names only pick.published', async () => {
    const clock = new ManualClock(START);
    const { t } = await listeningApp(clock, { WEBHOOK_HOST_OVERRIDES: 'hooks.test=127.0.0.1' });
    const hooks: HttpsReceiver = await startHttpsReceiver();
    closers.push(hooks);
    const growth = (await t.graphql<{ createApiKey: { key: string } }>(CREATE_KEY, { input: { tier: 'GROWTH' } })).data!.createApiKey.key;
    const subscribe = async (path: string, events: string[]) => {
      const created = await t.graphql<{ createWebhookSubscription: { subscription: { id: string } } }>(
        'mutation($input: CreateWebhookSubscriptionInput!) { createWebhookSubscription(input: $input) { subscription { id } } }',
        { input: { url: hooks.url('hooks.test', path), events } },
        `Bearer ${growth}`,
      );
      expect(created.errors).toBeUndefined();
      return created.data!.createWebhookSubscription.subscription.id;
    };
    await subscribe('/availability', ['PICK_AVAILABILITY_CHANGED']);
    const publishedOnly = await subscribe('/published', ['PICK_PUBLISHED']);

    await pollWith(t, clock, m1(4.6));
    const id = await onlyPick(t);
    const t1 = await pollWith(t, clock, m1(4.2));

    // The publication to /published, the change to /availability. Delivery is at least once (a
    // slow first attempt is retried), so wait for both paths, not for a count of requests.
    await expect.poll(() => [...new Set(hooks.requests.map((request) => request.path))].sort(), { timeout: 10_000 }).toEqual(['/availability', '/published']);
    const byPath = Object.fromEntries(hooks.requests.map((request) => [request.path, request]));
    expect(Object.keys(byPath).sort()).toEqual(['/availability', '/published']);
    const change = byPath['/availability']!;
    expect(change.headers['x-service-event']).toBe('pick.availability_changed');
    const body = JSON.parse(change.body.toString('utf8'));
    expect(body).toMatchObject({ type: 'pick.availability_changed', data: { id, odds: 4.6, best_odds_since_published: 4.6 } });
    expect(body.data.availability).toEqual(restAvailability(expected('MOVED', 4.2, AWAY_FAIR_ODDS, t1, t1)));
    expect(byPath['/published']!.headers['x-service-event']).toBe('pick.published');

    // Everything relayed (deliveries are made there): the pick.published-only subscription has the publication alone.
    const unrelayed = async () => Number((await t.runtime.orm.em.fork().execute<{ n: string }[]>('select count(*) as n from outbox_events where relayed_at is null'))[0]!.n);
    await expect.poll(unrelayed, { timeout: 10_000 }).toBe(0);
    const deliveries = await t.graphql<{ webhookSubscription: { deliveries: { nodes: { eventType: string }[] } } }>(
      'query($id: ID!) { webhookSubscription(id: $id) { deliveries(first: 10) { nodes { eventType } } } }',
      { id: publishedOnly },
      `Bearer ${growth}`,
    );
    expect(deliveries.errors).toBeUndefined();
    expect(deliveries.data!.webhookSubscription.deliveries.nodes.map((node) => node.eventType)).toEqual(['PICK_PUBLISHED']);
  });

  it('keeps availability out of the public endpoint and the public live feed', async () => {
    const clock = new ManualClock(START);
    const { t, port, key } = await listeningApp(clock, { PUBLIC_STREAM_DELAY_SECONDS: '0' });
    const publicFeed = await connectSse(port, '/api/public/picks/stream');
    closers.push({ close: () => publicFeed.close() });
    const stream = await connectSse(port, '/api/v1/picks/stream', { authorization: `Bearer ${key}` });
    closers.push({ close: () => stream.close() });

    await pollWith(t, clock, m1(4.6));
    const id = await onlyPick(t);
    await pollWith(t, clock, m1(4.2));
    await stream.waitFor('event: pick.availability\n', 10_000);

    // A later publication marks a point after the change on the public feed.
    const later = await t.graphql<{ publishPick: { id: string } }>(PUBLISH, {
      input: pickInput({ homeTeam: 'Later FC', selection: 'Later FC', kickoffAt: KICKOFF.toISOString(), publishedAt: clock.now().toISOString() }),
    });
    expect(later.errors).toBeUndefined();
    const laterId = later.data!.publishPick.id;
    await publicFeed.waitFor(laterId, 10_000);
    const publicFrames = framesOf(publicFeed.raw());
    expect(publicFrames.map((frame) => [frame.event, frame.data.id])).toEqual([
      ['pick.published', id],
      ['pick.published', laterId],
    ]);
    expect(publicFeed.raw()).not.toMatch(/availab|best_?odds/i);

    const today = await t.app.inject({ method: 'GET', url: '/api/public/picks/today' });
    expect(today.statusCode).toBe(200);
    expect((today.json().picks as { id: string }[]).map((pick) => pick.id)).toContain(id);
    expect(today.body).not.toMatch(/availab|best_?odds/i);
  });
});

describe('PICK_CONFIRM_POLLS=2', () => {
  it('publishes a candidate only on its second consecutive poll; a poll without it in between starts the run again', async () => {
    const clock = new ManualClock(START);
    const t = await engineApp(clock, { PICK_CONFIRM_POLLS: '2' });
    // Arsenal v Chelsea: Chelsea a candidate at every poll (4.6: 8.905 %). Everton v Fulham:
    // Fulham a candidate, then not (4.2: -0.565 %), then a candidate on two polls (4.6, 4.5).
    const fulham = [4.6, 4.2, 4.6, 4.5];
    const times: Date[] = [];
    const counts: { chelsea: number; fulham: number }[] = [];
    for (const price of fulham) {
      times.push(await pollWith(t, clock, (fresh) => [...m1(4.6)(fresh), evertonFulham('m2', price, fresh)]));
      const picks = await visiblePicks(t);
      counts.push({ chelsea: picks.filter((pick) => pick.selection === AWAY).length, fulham: picks.filter((pick) => pick.selection === 'Fulham').length });
    }
    expect(counts).toEqual([
      { chelsea: 0, fulham: 0 },
      { chelsea: 1, fulham: 0 },
      { chelsea: 1, fulham: 0 },
      { chelsea: 1, fulham: 1 },
    ]);
    const picks = await visiblePicks(t);
    const chelsea = picks.find((pick) => pick.selection === AWAY)!;
    const fulhamPick = picks.find((pick) => pick.selection === 'Fulham')!;
    expect(chelsea).toMatchObject({ odds: 4.6, publishedAt: times[1]!.toISOString() });
    expect(fulhamPick).toMatchObject({ odds: 4.5, publishedAt: times[3]!.toISOString() });
    // The confirming poll is the first check.
    expect((await pickView(t, fulhamPick.id)).availability).toEqual(expected('AVAILABLE', 4.5, AWAY_FAIR_ODDS, times[3]!, times[3]!));
  });
});
