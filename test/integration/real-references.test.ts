/**
 * Two sharp references through the real app: the 1X2 (h2h) markets of the first 160 matches of
 * the 2023/24 Premier League (football-data.co.uk, test/fixtures/real-season/E0-2023-24-first-160.csv),
 * served by a local v4 feed on 127.0.0.1 (the engine asked for `h2h` only) and polled by hand on
 * a manual clock, with REFERENCE_BOOKMAKERS=pinnacle,market_avg:0.5:
 *   (a) kickoff - 2 h: Pinnacle (PSH/PSD/PSA, weight 1), the market average served as a bookmaker
 *       (`market_avg`, AvgH/AvgD/AvgA, weight 0.5), and two untaxed soft books: Bet365
 *       (B365H/B365D/B365A) and the market's best price (`market_best`, MaxH/MaxD/MaxA). Fresh,
 *       except that on every 10th match (16 of them) the average is stamped 10 minutes old, past
 *       REFERENCE_MAX_AGE_SECONDS (300): Pinnacle alone prices those (single_sharp_reference);
 *   (b) kickoff - 5 min: both references' closing prices (PSC*, AvgC*) stamped kickoff - 6 min,
 *       then a poll at kickoff + 1 s that records the closing lines (the consensus of both; 6 min
 *       old at kickoff, so no stale_close);
 *   (c) kickoff + 2 h 30 min: the final scores.
 * At the defaults (REFERENCE_MAX_SPREAD 0.03, REFERENCE_MAX_MARGIN 0.08) this data never trips
 * either rule: the two references' power-devigged probabilities are at most 1.7 points apart and
 * their margins at most 4.6 %. So both are set explicitly here, REFERENCE_MAX_SPREAD=0.01 and
 * REFERENCE_MAX_MARGIN=0.04 (the average's margin is 3.5 to 4.6 %, Pinnacle's 2.4 to 4.6 %).
 * What the CSV then gives (asserted below, and printed): 38 picks (36 at the best price, 2 at
 * Bet365; 18 won): 15 with no warning, 19 wide_reference_market, 4 single_sharp_reference; none
 * held (no qualifying edge reaches PICK_REVIEW_EDGE 0.25); 17 selections refused because the
 * references disagree, 2 of which would otherwise have been picks; 78 best-price markets left
 * out for a negative margin (an arbitrage across books), none of Bet365's.
 * Every expectation (picks, prices, fair and closing odds, warnings, results, the track record,
 * the refusals) is computed below from the CSV with the rules written out here, sharing no code
 * with the engine.
 */
import { readFileSync } from 'node:fs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ManualClock } from '../../src/domain/clock.js';
import type { TestApp } from '../helpers/app.js';
import { CREATE_KEY } from '../helpers/fixtures.js';
import { parseCsv, powerDevig, round4 } from '../helpers/independent-value.js';
import { startOddsFeedServer, startReplayApp, v4Bookmaker, v4OddsEvent, v4ScoreEvent, type OddsFeedServer, type ReplayLog } from '../helpers/odds-feed-server.js';

const ROWS = parseCsv(readFileSync(new URL('../fixtures/real-season/E0-2023-24-first-160.csv', import.meta.url), 'utf8'));
const SPORT_KEY = 'soccer_epl';
const MIN_EDGE = 0.005;
const REVIEW_EDGE = 0.25;
const ODDS_MIN = 1.2;
const ODDS_MAX = 15;
const MAX_SPREAD = 0.01;
const MAX_MARGIN = 0.04;
const MINUTE = 60_000;
const HOUR = 60 * MINUTE;
const at = (base: Date, ms: number) => new Date(base.getTime() + ms);

/** The references in REFERENCE_BOOKMAKERS order, their weights and column prefixes (before and at the close). */
const REFERENCES = [
  { key: 'pinnacle', title: 'Pinnacle', weight: 1, open: 'PS', close: 'PSC' },
  { key: 'market_avg', title: 'Market average', weight: 0.5, open: 'Avg', close: 'AvgC' },
] as const;
/** The soft books in feed order. */
const SOFT = [
  { key: 'bet365', title: 'Bet365', open: 'B365' },
  { key: 'market_best', title: 'Market best', open: 'Max' },
] as const;

interface Match {
  eventId: string;
  kickoff: Date;
  home: string;
  away: string;
  homeGoals: number;
  awayGoals: number;
  /** v4 order: home, away, Draw; prices in this order per bookmaker key, before the close and (references) at it. */
  names: string[];
  open: Record<string, number[]>;
  close: Record<string, number[]>;
  /** The market average's opening prices are 10 minutes old: stale, so not used. */
  averageStale: boolean;
}
/** The references detection may use at the opening poll: the fresh ones. */
const freshAtOpening = (match: Match) => (key: string) => !(key === 'market_avg' && match.averageStale);

const num = (cell: string | undefined): number => {
  if (cell === undefined || cell === '' || !Number.isFinite(Number(cell))) throw new Error(`not a number: ${cell}`);
  return Number(cell);
};

const MATCHES: Match[] = ROWS.map((row, index) => {
  const [day, month, year] = row.Date!.split('-');
  const prices = (prefix: string) => ['H', 'A', 'D'].map((side) => num(row[`${prefix}${side}`]));
  return {
    eventId: `e0-2324-${index + 1}`,
    kickoff: new Date(`${year}-${month}-${day}T15:00:00Z`),
    home: row.HomeTeam!,
    away: row.AwayTeam!,
    homeGoals: num(row.FTHG),
    awayGoals: num(row.FTAG),
    names: [row.HomeTeam!, row.AwayTeam!, 'Draw'],
    open: Object.fromEntries([...REFERENCES, ...SOFT].map((book) => [book.key, prices(book.open)])),
    close: Object.fromEntries(REFERENCES.map((book) => [book.key, prices(book.close)])),
    averageStale: (index + 1) % 10 === 0,
  };
});

const GROUPS = (() => {
  const byKickoff = new Map<number, Match[]>();
  for (const match of MATCHES) byKickoff.set(match.kickoff.getTime(), [...(byKickoff.get(match.kickoff.getTime()) ?? []), match]);
  return [...byKickoff.entries()].sort(([a], [b]) => a - b).map(([kickoff, matches]) => ({ kickoff: new Date(kickoff), matches }));
})();

// --- The rules, written out independently of the engine -------------------------------------

const booksum = (prices: number[]) => prices.reduce((sum, price) => sum + 1 / price, 0);
/** A reference is devigged when its implied probabilities sum to 1 .. 1.25. */
const devigUsable = (prices: number[]) => booksum(prices) >= 1 - 1e-9 && booksum(prices) <= 1.25;
/** A soft market is compared only when no price is above 3 x the first reference's and its booksum is not below 1. */
const softUsable = (soft: number[], primary: number[]) => soft.every((price, i) => price <= 3 * primary[i]!) && booksum(soft) >= 1 - 1e-9;

type Quote = { key: string; weight: number; prices: number[]; probabilities: number[] };
/** Each reference devigged on its own (power), in REFERENCE_BOOKMAKERS order; the unusable ones left out. */
const quotesOf = (prices: Record<string, number[]>, use: (key: string) => boolean): Quote[] =>
  REFERENCES.filter((r) => use(r.key) && devigUsable(prices[r.key]!)).map((r) => ({ key: r.key, weight: r.weight, prices: prices[r.key]!, probabilities: powerDevig(prices[r.key]!) }));
/** The weighted mean of the references' probabilities, renormalised to sum 1. */
function consensus(quotes: Quote[]): number[] {
  const weight = quotes.reduce((sum, q) => sum + q.weight, 0);
  const mean = quotes[0]!.probabilities.map((_, i) => quotes.reduce((sum, q) => sum + q.weight * q.probabilities[i]!, 0) / weight);
  const total = mean.reduce((a, b) => a + b, 0);
  return mean.map((p) => p / total);
}

type Expected = { key: string; eventId: string; bookmaker: string; odds: number; referenceFairOdds: number; closingOdds: number | null } & {
  result: 'WON' | 'LOST';
  warnings: string[];
  held: boolean;
};

const keyOf = (kickoff: string, home: string, selection: string) => `${kickoff} ${home} ${selection}`;
const resultOf = (match: Match, i: number): 'WON' | 'LOST' => {
  const winner = match.homeGoals > match.awayGoals ? 0 : match.homeGoals < match.awayGoals ? 1 : 2;
  return winner === i ? 'WON' : 'LOST';
};

/** Selections the references disagree on (no pick); `wouldPick`: an offer would have qualified at the consensus price. */
const REFUSED: { key: string; wouldPick: boolean }[] = [];
const EXPECTED: Expected[] = MATCHES.flatMap((match) => {
  const quotes = quotesOf(match.open, freshAtOpening(match));
  if (quotes.length === 0) return [];
  const fair = consensus(quotes);
  const books = SOFT.filter((book) => softUsable(match.open[book.key]!, quotes[0]!.prices));
  // The close: both references' last prices, no disagreement rule (a measurement, not a bet).
  const closeQuotes = quotesOf(match.close, () => true);
  const closeFair = closeQuotes.length === 0 ? null : consensus(closeQuotes);
  // Warnings from the references used: one alone, or any with a margin above REFERENCE_MAX_MARGIN.
  const warnings = [...(quotes.length === 1 ? ['single_sharp_reference'] : []), ...(quotes.some((q) => booksum(q.prices) - 1 > MAX_MARGIN) ? ['wide_reference_market'] : [])];
  return match.names.flatMap((selection, i) => {
    const key = keyOf(match.kickoff.toISOString(), match.home, selection);
    const fairOdds = 1 / fair[i]!;
    const edgeOf = (price: number) => price / fairOdds - 1;
    // Best price first, a tie to the first listed; in range and at the minimum edge.
    const qualifying = books
      .map((book, order) => ({ bookmaker: book.key, price: match.open[book.key]![i]!, order }))
      .sort((a, b) => b.price - a.price || a.order - b.order)
      .filter(({ price }) => price >= ODDS_MIN && price <= ODDS_MAX && edgeOf(price) >= MIN_EDGE);
    const spread = Math.max(...quotes.map((q) => q.probabilities[i]!)) - Math.min(...quotes.map((q) => q.probabilities[i]!));
    if (spread > MAX_SPREAD) {
      REFUSED.push({ key, wouldPick: qualifying.length > 0 });
      return [];
    }
    if (qualifying.length === 0) return [];
    const plausible = qualifying.find(({ price }) => edgeOf(price) < REVIEW_EDGE);
    const best = plausible ?? qualifying[0]!;
    const closingOdds = closeFair === null ? null : round4(1 / closeFair[i]!);
    const held = plausible === undefined;
    return [{ key, eventId: match.eventId, bookmaker: best.bookmaker, odds: best.price, referenceFairOdds: round4(fairOdds), closingOdds, result: resultOf(match, i), warnings, held }];
  });
});
const PUBLISHED = EXPECTED.filter((pick) => !pick.held);

function recordOf(picks: Expected[]) {
  const profit = picks.reduce((sum, p) => sum + (p.result === 'WON' ? p.odds - 1 : -1), 0);
  const clvs = picks.filter((p) => p.closingOdds !== null).map((p) => 100 * (p.odds / p.closingOdds! - 1));
  return { totalSettled: picks.length, roiPct: (100 * profit) / picks.length, clvAvgPct: clvs.reduce((a, b) => a + b, 0) / clvs.length, clvCount: clvs.length };
}
/** The API rounds the track record to 2 decimals. */
const ROUNDING = 0.005 + 1e-9;

// --- The replay --------------------------------------------------------------------------------

const pricesOf = (match: Match, prices: number[]) => Object.fromEntries(match.names.map((name, i) => [name, prices[i]!]));
const event = (match: Match, bookmakers: Record<string, unknown>[]) =>
  v4OddsEvent({ id: match.eventId, sportKey: SPORT_KEY, sportTitle: 'EPL', commenceTime: match.kickoff, homeTeam: match.home, awayTeam: match.away, bookmakers });

const PICKS = `query { picks(first: 200) {
  nodes { id homeTeam kickoffAt market selection bookmaker { slug } odds referenceFairOdds closingOdds result status warnings }
  pageInfo { hasNextPage } } }`;
const PROVENANCE = `query($id: ID!) { pick(id: $id) { provenance {
  references { bookmaker weight fairProbabilities { name probability } } closingLine { references { bookmaker } } } } }`;

type PickNode = { id: string; homeTeam: string; kickoffAt: string; market: string; selection: string; bookmaker: { slug: string }; odds: number } & {
  referenceFairOdds: number;
  closingOdds: number | null;
  result: string | null;
  status: string;
  warnings: string[];
};

describe('two sharp references (Pinnacle and the market average, weights 1 and 0.5) on real 1X2 prices (Premier League 2023/24, first 160 matches)', () => {
  let feed: OddsFeedServer;
  let t: TestApp;
  let clock: ManualClock;
  /** Soft markets left out, as the engine logged them, and anything else it warned about. */
  let log: ReplayLog;
  /** Selections the engine logged as refused for disagreement at the opening polls. */
  const disagreements: string[] = [];
  let opening = false;

  beforeAll(async () => {
    feed = await startOddsFeedServer();
    clock = new ManualClock(at(GROUPS[0]!.kickoff, -3 * HOUR));
    ({ app: t, log } = await startReplayApp(
      feed,
      clock,
      {
        ODDS_FEED_SPORTS: SPORT_KEY,
        ODDS_FEED_MARKETS: 'h2h',
        REFERENCE_BOOKMAKERS: 'pinnacle,market_avg:0.5',
        REFERENCE_MAX_SPREAD: String(MAX_SPREAD),
        REFERENCE_MAX_MARGIN: String(MAX_MARGIN),
        BOOKMAKER_TAX_RATES: JSON.stringify(Object.fromEntries(SOFT.map((book) => [book.key, 0]))),
        PICK_MIN_EDGE: String(MIN_EDGE),
        PICK_ODDS_RANGE: `${ODDS_MIN}-${ODDS_MAX}`,
        PICK_REVIEW_EDGE: String(REVIEW_EDGE),
        DEVIG_METHOD: 'power',
      },
      {
        // The best-price "book" is often an arbitrage (its booksum below 1): the sanity rule refuses it.
        expectedSkip: /market_best's h2h .* \(negative_margin\)/,
        onInfo: (fields, msg) => {
          // The close polls (references only, no offers) make no picks: only the opening polls count.
          if (!opening || !msg.startsWith('value engine: the references disagree')) return;
          const match = MATCHES.find((m) => m.eventId === fields.eventId)!;
          disagreements.push(keyOf(match.kickoff.toISOString(), match.home, String(fields.selection)));
        },
      },
    ));
  });
  afterAll(async () => {
    await t?.close();
    await feed?.close();
  });

  const poll = async (kind: 'odds' | 'scores') => expect(await t.runtime.poller!.pollNow([kind])).toBe(true);

  it('prices every pick from the weighted consensus, refuses disagreeing selections, warns as the references say, and closes on both', async () => {
    expect(MATCHES).toHaveLength(160);
    // The numbers of the header: each warning set, refusals that cost a pick, nothing held.
    const withWarnings = (warnings: string[]) => PUBLISHED.filter((p) => JSON.stringify(p.warnings) === JSON.stringify(warnings)).length;
    expect(PUBLISHED).toHaveLength(38);
    expect([PUBLISHED.filter((p) => p.bookmaker === 'bet365').length, PUBLISHED.filter((p) => p.result === 'WON').length]).toEqual([2, 18]);
    expect([withWarnings([]), withWarnings(['wide_reference_market']), withWarnings(['single_sharp_reference'])]).toEqual([15, 19, 4]);
    expect(REFUSED).toHaveLength(17);
    expect(REFUSED.filter((r) => r.wouldPick)).toHaveLength(2);
    expect(EXPECTED.filter((p) => p.held)).toEqual([]);
    expect(PUBLISHED.every((p) => p.closingOdds !== null)).toBe(true);

    for (const { kickoff, matches } of GROUPS) {
      clock.set(at(kickoff, -2 * HOUR));
      const stamp = (m: Match, key: string) => at(clock.now(), freshAtOpening(m)(key) ? -30_000 : -10 * MINUTE);
      const books = (m: Match) => [...REFERENCES, ...SOFT].map((book) => v4Bookmaker(book.key, book.title, pricesOf(m, m.open[book.key]!), stamp(m, book.key)));
      feed.set('odds', SPORT_KEY, matches.map((m) => event(m, books(m))));
      opening = true;
      await poll('odds');
      opening = false;
      expect((await t.graphql<{ reviewQueue: { nodes: unknown[] } }>(`query { reviewQueue(first: 200) { nodes { id } } }`)).data!.reviewQueue.nodes).toEqual([]);

      clock.set(at(kickoff, -5 * MINUTE));
      const closing = at(kickoff, -6 * MINUTE);
      feed.set('odds', SPORT_KEY, matches.map((m) => event(m, REFERENCES.map((r) => v4Bookmaker(r.key, r.title, pricesOf(m, m.close[r.key]!), closing)))));
      await poll('odds');
      clock.set(at(kickoff, 1_000));
      feed.set('odds', SPORT_KEY, []);
      await poll('odds');

      clock.set(at(kickoff, 2.5 * HOUR));
      const finals = matches.map((m) => v4ScoreEvent({ id: m.eventId, commenceTime: m.kickoff, completed: true, homeTeam: m.home, awayTeam: m.away, scores: [m.homeGoals, m.awayGoals] }));
      feed.set('scores', SPORT_KEY, finals);
      await poll('scores');
    }
    expect(feed.requests.find((r) => r.path.endsWith('/odds'))!.query.get('markets')).toBe('h2h');

    const page = (await t.graphql<{ picks: { nodes: PickNode[]; pageInfo: { hasNextPage: boolean } } }>(PICKS)).data!.picks;
    expect(page.pageInfo.hasNextPage).toBe(false);
    const actual = new Map(page.nodes.map((p) => [keyOf(p.kickoffAt, p.homeTeam, p.selection), p]));
    expect([...actual.keys()].sort()).toEqual(PUBLISHED.map((p) => p.key).sort());
    for (const expected of PUBLISHED) {
      const { key, bookmaker, odds, referenceFairOdds, closingOdds, result, warnings } = expected;
      const pick = actual.get(key)!;
      expect({ key, market: pick.market, bookmaker: pick.bookmaker.slug, odds: pick.odds, fair: pick.referenceFairOdds, close: pick.closingOdds, result: pick.result, status: pick.status, warnings: pick.warnings }).toEqual(
        { key, market: 'h2h', bookmaker, odds, fair: referenceFairOdds, close: closingOdds, result, status: 'SETTLED', warnings: warnings.map((w) => w.toUpperCase()) },
      );
    }

    // Disagreement: exactly the CSV's selections were refused (logged once each), and none became a pick.
    expect(disagreements.sort()).toEqual(REFUSED.map((r) => r.key).sort());
    for (const refused of REFUSED) expect(actual.has(refused.key)).toBe(false);

    // REST shows the same warnings, in lower case.
    const key = (await t.graphql<{ createApiKey: { key: string } }>(CREATE_KEY, { input: { tier: 'ENTERPRISE' } })).data!.createApiKey.key;
    const rest = await t.app.inject({ method: 'GET', url: '/api/v1/picks?market=h2h&limit=200', headers: { authorization: `Bearer ${key}` } });
    expect(rest.statusCode).toBe(200);
    const restPicks = (rest.json() as { data: { home_team: string; kickoff_at: string; selection: string; odds: number; warnings: string[] }[] }).data;
    expect(restPicks).toHaveLength(PUBLISHED.length);
    const restByKey = new Map(restPicks.map((p) => [keyOf(p.kickoff_at, p.home_team, p.selection), p]));
    for (const expected of PUBLISHED) expect({ key: expected.key, odds: restByKey.get(expected.key)?.odds, warnings: restByKey.get(expected.key)?.warnings }).toEqual({ key: expected.key, odds: expected.odds, warnings: expected.warnings });

    // Provenance: a two-reference pick lists both, with their weights and own no-vig probabilities;
    // a single-reference pick lists Pinnacle alone; both closes are the consensus of both.
    type Provenance = { references: { bookmaker: string; weight: number; fairProbabilities: { name: string; probability: number }[] }[]; closingLine: { references: { bookmaker: string }[] } };
    const provenanceOf = async (expected: Expected) =>
      (await t.graphql<{ pick: { provenance: Provenance } }>(PROVENANCE, { id: actual.get(expected.key)!.id })).data!.pick.provenance;
    for (const expected of [PUBLISHED.find((p) => p.warnings.length === 0)!, PUBLISHED.find((p) => p.warnings.includes('single_sharp_reference'))!]) {
      const match = MATCHES.find((m) => m.eventId === expected.eventId)!;
      const quotes = quotesOf(match.open, freshAtOpening(match));
      const provenance = await provenanceOf(expected);
      expect(provenance.references.map((r) => ({ bookmaker: r.bookmaker, weight: r.weight }))).toEqual(quotes.map((q) => ({ bookmaker: q.key, weight: q.weight })));
      // Each reference's own no-vig probabilities, stored to 6 decimals.
      provenance.references.forEach((reference, r) => {
        for (const [i, name] of match.names.entries()) {
          expect(Math.abs(reference.fairProbabilities.find((p) => p.name === name)!.probability - quotes[r]!.probabilities[i]!)).toBeLessThanOrEqual(5e-7 + 1e-12);
        }
      });
      expect(provenance.closingLine.references.map((r) => r.bookmaker)).toEqual(['pinnacle', 'market_avg']);
    }
    expect((await provenanceOf(PUBLISHED.find((p) => p.warnings.length === 0)!)).references.map((r) => r.weight)).toEqual([1, 0.5]);

    // The track record follows from the picks, CLV against the consensus close.
    const response = await t.app.inject({ method: 'GET', url: '/api/v1/track-record?days_back=365', headers: { authorization: `Bearer ${key}` } });
    expect(response.statusCode).toBe(200);
    const record = (response.json() as { overall: Record<string, number> }).overall;
    const overall = recordOf(PUBLISHED);
    expect(record.total_settled).toBe(overall.totalSettled);
    expect(record.clv_count).toBe(overall.clvCount);
    expect(Math.abs(record.roi_pct! - overall.roiPct)).toBeLessThanOrEqual(ROUNDING);
    expect(Math.abs(record.clv_avg_pct! - overall.clvAvgPct)).toBeLessThanOrEqual(ROUNDING);

    // A clean replay: nothing skipped but the best-price markets the sanity rules refuse.
    expect(log.problems).toEqual([]);
    const unusable = MATCHES.flatMap((m) => SOFT.filter((book) => !softUsable(m.open[book.key]!, m.open.pinnacle!)));
    expect(unusable.map((book) => book.key)).toEqual(Array(78).fill('market_best'));
    expect(log.skipped).toBe(unusable.length);
    console.log(
      `real references: ${PUBLISHED.length} picks, ${EXPECTED.length - PUBLISHED.length} held; ${REFUSED.length} refused for disagreement ` +
        `(${REFUSED.filter((r) => r.wouldPick).length} would have been picks); ROI ${overall.roiPct.toFixed(2)} %, CLV ${overall.clvAvgPct.toFixed(2)} % over ${overall.clvCount}`,
    );
  });
});
