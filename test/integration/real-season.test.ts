/**
 * A real season through the real app: the 2018/19 Premier League (380 matches, football-data.co.uk,
 * test/fixtures/real-season/E0-2018-19.csv) served by a local v4 feed on 127.0.0.1 and polled by
 * hand on a manual clock, one group of polls per match date:
 *   (a) kickoff - 2 h: Pinnacle's pre-closing prices (PSH/PSD/PSA) and five soft books, fresh;
 *   (b) kickoff - 5 min: Pinnacle's closing prices (PSCH/PSCD/PSCA) stamped kickoff - 6 min, then
 *       a poll at kickoff + 1 s (the feed lists nothing any more) that records the closing line;
 *   (c) kickoff + 2 h 30 min: the final scores, completed, stamped kickoff + 2 h.
 * Kickoffs are synthetic (the match date at 15:00Z). Every expectation (which picks, at which
 * bookmaker and price, fair odds, closing odds, results, track record) is computed here from the
 * CSV by test/helpers/independent-value.ts, which shares no code with the engine. Runs on PGlite,
 * and on PostgreSQL when DATABASE_URL is set (test/helpers/app.ts).
 *
 * What this season does not exercise: no soft book trips the sanity rules (a price above 3 x
 * Pinnacle's, a full market with a booksum below 1), no qualifying offer reaches the 25 % review
 * edge (so nothing is held and the best-plausible-price rule never chooses), and no cell is
 * empty. The expectations implement those rules anyway; the counts are printed with the totals.
 */
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { backtestConfig, main as backtestCommand } from '../../src/cli/backtest.js';
import { backtestReport, runBacktest } from '../../src/domain/backtest.js';
import { footballDataSnapshots, pollsOfSnapshots } from '../../src/domain/football-data.js';
import { ManualClock } from '../../src/domain/clock.js';
import { createTestApp, type TestApp } from '../helpers/app.js';
import { CREATE_KEY, PICK_FIELDS } from '../helpers/fixtures.js';
import {
  DRAW,
  expectedSeason,
  outcomeName,
  parseCsv,
  seasonMatches,
  SOFT_BOOKS,
  trackRecordOf,
  type SeasonMatch,
  type SidePrices,
} from '../helpers/independent-value.js';
import { studentCdf, studentQuantile } from '../helpers/student-t.js';
import { startOddsFeedServer, v4Bookmaker, v4OddsEvent, type OddsFeedServer } from '../helpers/odds-feed-server.js';

const CSV_FILE = new URL('../fixtures/real-season/E0-2018-19.csv', import.meta.url);
const CSV = readFileSync(CSV_FILE, 'utf8');
const MATCHES = seasonMatches(parseCsv(CSV), 'e0-1819');
const RULES = { minEdge: 0.02, reviewEdge: 0.25, oddsMin: 1.2, oddsMax: 15 };
const EXPECTED = expectedSeason(MATCHES, RULES);

const SPORT_KEY = 'soccer_epl';
/** The engine's configuration of this replay: the live app's environment and the backtest's variables. */
const ENGINE_SETTINGS = {
  BOOKMAKER_TAX_RATES: JSON.stringify(Object.fromEntries(SOFT_BOOKS.map((book) => [book.key, 0]))),
  PICK_MIN_EDGE: String(RULES.minEdge),
  PICK_ODDS_RANGE: `${RULES.oddsMin}-${RULES.oddsMax}`,
  PICK_REVIEW_EDGE: String(RULES.reviewEdge),
  DEVIG_METHOD: 'power',
  PICK_HORIZON_HOURS: '72',
};
const MINUTE = 60_000;
const HOUR = 60 * MINUTE;
const at = (base: Date, ms: number) => new Date(base.getTime() + ms);

/** Matches grouped by date (one kickoff per group), in date order. */
const GROUPS: { kickoff: Date; matches: SeasonMatch[] }[] = (() => {
  const byDate = new Map<string, SeasonMatch[]>();
  for (const match of MATCHES) byDate.set(match.date, [...(byDate.get(match.date) ?? []), match]);
  return [...byDate.values()].map((matches) => ({ kickoff: matches[0]!.kickoff, matches })).sort((a, b) => a.kickoff.getTime() - b.kickoff.getTime());
})();

/** Outcomes in v4 order: home, away, Draw; a side the book did not price is left out. */
function outcomes(match: SeasonMatch, prices: SidePrices): Record<string, number> {
  const out: Record<string, number> = {};
  for (const side of ['H', 'A', 'D'] as const) if (prices[side] !== undefined) out[outcomeName(match, side)] = prices[side]!;
  return out;
}

const complete = (prices: SidePrices) => prices.H !== undefined && prices.D !== undefined && prices.A !== undefined;

function oddsEvent(match: SeasonMatch, bookmakers: Record<string, unknown>[]) {
  return v4OddsEvent({ id: match.eventId, sportKey: SPORT_KEY, sportTitle: 'EPL', commenceTime: match.kickoff, homeTeam: match.home, awayTeam: match.away, bookmakers });
}

/** Phase (a): Pinnacle before the close and the soft books, every market 30 s old. */
function openingEvent(match: SeasonMatch, now: Date) {
  const fresh = at(now, -30_000);
  return oddsEvent(match, [
    ...(complete(match.pinnacle) ? [v4Bookmaker('pinnacle', 'Pinnacle', outcomes(match, match.pinnacle), fresh)] : []),
    ...match.soft.map((book) => v4Bookmaker(book.key, book.title, outcomes(match, book.prices), fresh)),
  ]);
}

/** Phase (b): Pinnacle's closing prices only, stamped 6 minutes before kickoff. */
function closingEvent(match: SeasonMatch) {
  return oddsEvent(match, complete(match.pinnacleClose) ? [v4Bookmaker('pinnacle', 'Pinnacle', outcomes(match, match.pinnacleClose), at(match.kickoff, -6 * MINUTE))] : []);
}

/** Phase (c): the final score, as v4 sends it (scores as strings), stamped 2 h after kickoff. */
function scoreEvent(match: SeasonMatch) {
  return {
    id: match.eventId,
    sport_key: SPORT_KEY,
    sport_title: 'EPL',
    commence_time: match.kickoff.toISOString(),
    completed: true,
    home_team: match.home,
    away_team: match.away,
    scores: [
      { name: match.home, score: String(match.homeGoals) },
      { name: match.away, score: String(match.awayGoals) },
    ],
    last_update: at(match.kickoff, 2 * HOUR).toISOString(),
  };
}

interface PickNode {
  id: string;
  homeTeam: string;
  awayTeam: string;
  kickoffAt: string;
  selection: string;
  market: string;
  league: string;
  sport: string;
  bookmaker: { name: string; slug: string };
  odds: number;
  referenceFairOdds: number;
  taxRate: number;
  edgePct: number;
  edgePctPostTax: number;
  confidence: number;
  status: string;
  result: string | null;
  closingOdds: number | null;
  settledAt: string | null;
}

interface Overall {
  roiPct: number;
  winRate: number;
  totalSettled: number;
  clvAvgPct: number;
  clvCount: number;
  edgeAvgPct: number;
}

const PICKS_PAGE = `query($after: String) { picks(first: 200, after: $after) { nodes { ${PICK_FIELDS} } pageInfo { hasNextPage endCursor } } }`;
const PICKS_SINCE = `query($since: DateTime) { picks(first: 200, since: $since) { nodes { selection status closingOdds } } }`;
const REVIEW_QUEUE = `query { reviewQueue(first: 200) { nodes { selection odds bookmaker { slug } provenance { eventId } } } }`;
const TRACK_RECORD = `query { trackRecord(daysBack: 365) { overall { roiPct winRate totalSettled clvAvgPct clvCount edgeAvgPct } series { date cumulativePnlPct } } }`;

/** The API rounds the track record to 2 decimals: a figure is right when within half a unit of the last place. */
const ROUNDING = 0.005 + 1e-9;

const keyOf = (home: string, away: string, selection: string) => `${home} v ${away}: ${selection}`;

describe('a real season (Premier League 2018/19) replayed through the value engine', () => {
  let feed: OddsFeedServer;
  let t: TestApp;
  let clock: ManualClock;
  const held: { eventId: string; selection: string; bookmaker: string; odds: number }[] = [];
  const picks: PickNode[] = [];
  const settledAtOf = new Map<string, string>();
  /** The engine's warnings and errors: a clean replay logs none. */
  const engineLogs: { level: string; msg: string; fields: unknown }[] = [];

  beforeAll(async () => {
    feed = await startOddsFeedServer();
    clock = new ManualClock(at(GROUPS[0]!.kickoff, -3 * HOUR));
    t = await createTestApp({
      clock,
      env: {
        ODDS_FEED_URL: feed.url,
        ODDS_FEED_API_KEY: 'real-season-feed-key',
        ODDS_FEED_SPORTS: SPORT_KEY,
        ...ENGINE_SETTINGS,
      },
      runtime: {
        startPoller: false,
        feedRetryMinTimeoutMs: 5,
        feedTimeoutMs: 10_000,
        log: {
          info: () => {},
          warn: (fields: unknown, msg?: string) => void engineLogs.push({ level: 'warn', msg: msg ?? '', fields }),
          error: (fields: unknown, msg?: string) => void engineLogs.push({ level: 'error', msg: msg ?? '', fields }),
        } as never,
      },
    });
  });
  afterAll(async () => {
    await t?.close();
    await feed?.close();
  });

  const poll = async (kind: 'odds' | 'scores') => expect(await t.runtime.poller!.pollNow([kind])).toBe(true);

  it('replays the season date by date: picks at kickoff - 2 h, the closing line at kickoff, settlement from the scores', async () => {
    expect(MATCHES).toHaveLength(380);
    expect(GROUPS.length).toBeLessThanOrEqual(120);
    for (const { kickoff, matches } of GROUPS) {
      // (a) The market two hours before kickoff.
      clock.set(at(kickoff, -2 * HOUR));
      feed.set('odds', SPORT_KEY, matches.map((match) => openingEvent(match, clock.now())));
      await poll('odds');
      const queue = await t.graphql<{ reviewQueue: { nodes: { selection: string; odds: number; bookmaker: { slug: string }; provenance: { eventId: string } }[] } }>(REVIEW_QUEUE);
      expect(queue.errors).toBeUndefined();
      for (const node of queue.data!.reviewQueue.nodes) {
        if (!held.some((h) => h.eventId === node.provenance.eventId && h.selection === node.selection)) {
          held.push({ eventId: node.provenance.eventId, selection: node.selection, bookmaker: node.bookmaker.slug, odds: node.odds });
        }
      }

      // (b) The close, stamped before kickoff; then the first poll after kickoff records it.
      clock.set(at(kickoff, -5 * MINUTE));
      feed.set('odds', SPORT_KEY, matches.map(closingEvent));
      await poll('odds');
      clock.set(at(kickoff, 1_000));
      feed.set('odds', SPORT_KEY, []);
      await poll('odds');
      const closed = await t.graphql<{ picks: { nodes: { selection: string; status: string; closingOdds: number | null }[] } }>(PICKS_SINCE, { since: at(kickoff, -1).toISOString() });
      expect(closed.errors).toBeUndefined();
      for (const node of closed.data!.picks.nodes) expect(node).toMatchObject({ status: 'PUBLISHED', closingOdds: expect.any(Number) });

      // (c) The final scores, well past the shortest possible match.
      clock.set(at(kickoff, 2 * HOUR + 30 * MINUTE));
      feed.set('scores', SPORT_KEY, matches.map(scoreEvent));
      await poll('scores');
      for (const match of matches) settledAtOf.set(match.eventId, clock.now().toISOString());
    }

    for (let after: string | null = null; ; ) {
      const page: { status: number; data: { picks: { nodes: PickNode[]; pageInfo: { hasNextPage: boolean; endCursor: string } } } | null; errors?: unknown } =
        await t.graphql(PICKS_PAGE, { after });
      expect(page.errors).toBeUndefined();
      picks.push(...page.data!.picks.nodes);
      if (!page.data!.picks.pageInfo.hasNextPage) break;
      after = page.data!.picks.pageInfo.endCursor;
    }
    expect(engineLogs.slice(0, 5), `${engineLogs.length} engine warnings or errors`).toEqual([]);
    expect(picks.length).toBeGreaterThan(0);
  }, 600_000);

  it('publishes exactly the expected picks, each at the expected bookmaker, price, fair odds and closing line, settled', () => {
    const eventOf = new Map(MATCHES.map((match) => [keyOf(match.home, match.away, ''), match]));
    const actual = picks
      .map((pick) => ({
        key: keyOf(pick.homeTeam, pick.awayTeam, pick.selection),
        kickoffAt: pick.kickoffAt,
        bookmaker: pick.bookmaker.slug,
        odds: pick.odds,
        referenceFairOdds: pick.referenceFairOdds,
        closingOdds: pick.closingOdds,
        taxRate: pick.taxRate,
        result: pick.result,
        status: pick.status,
        settledAt: pick.settledAt,
        league: pick.league,
        sport: pick.sport,
        market: pick.market,
      }))
      .sort((a, b) => (a.key < b.key ? -1 : a.key > b.key ? 1 : 0));
    const expected = EXPECTED.picks
      .map((pick) => ({
        key: keyOf(pick.home, pick.away, pick.selection),
        kickoffAt: pick.kickoff.toISOString(),
        bookmaker: pick.bookmaker,
        odds: pick.odds,
        referenceFairOdds: pick.referenceFairOdds,
        closingOdds: pick.closingOdds,
        taxRate: 0,
        result: pick.result,
        status: 'SETTLED',
        settledAt: settledAtOf.get(pick.eventId),
        league: 'EPL',
        sport: 'soccer',
        market: 'h2h',
      }))
      .sort((a, b) => (a.key < b.key ? -1 : a.key > b.key ? 1 : 0));
    // At most one pick per (match, selection), and the same set of them.
    expect(new Set(actual.map((pick) => pick.key)).size).toBe(actual.length);
    expect(actual.map((pick) => pick.key)).toEqual(expected.map((pick) => pick.key));
    expect(actual).toEqual(expected);

    // Stored edges are recomputed from the stored prices (tax 0): post-tax edge to 4 decimals, edge % to 2.
    for (const pick of picks) {
      expect(eventOf.has(keyOf(pick.homeTeam, pick.awayTeam, ''))).toBe(true);
      expect(Math.abs(pick.edgePctPostTax - (pick.odds / pick.referenceFairOdds - 1))).toBeLessThanOrEqual(0.00005 + 1e-12);
      expect(Math.abs(pick.edgePct - 100 * (pick.odds / pick.referenceFairOdds - 1))).toBeLessThanOrEqual(0.005 + 1e-9);
      expect(pick.edgePctPostTax).toBeGreaterThanOrEqual(RULES.minEdge - 0.0001);
      expect(pick.edgePctPostTax).toBeLessThan(RULES.reviewEdge);
      expect(pick.confidence).toBeGreaterThanOrEqual(0);
      expect(pick.confidence).toBeLessThanOrEqual(100);
    }
    // Selections are the team names and Draw.
    for (const pick of picks) expect([pick.homeTeam, pick.awayTeam, DRAW]).toContain(pick.selection);

    // Held picks (edge >= the review edge at every qualifying book) were in the review queue before kickoff.
    const byEvent = new Map(MATCHES.map((match) => [match.eventId, match]));
    const heldKeys = (list: { eventId: string; selection: string; bookmaker: string; odds: number }[]) =>
      list.map((h) => `${keyOf(byEvent.get(h.eventId)!.home, byEvent.get(h.eventId)!.away, h.selection)} @ ${h.bookmaker} ${h.odds}`).sort();
    expect(heldKeys(held)).toEqual(heldKeys(EXPECTED.held));
  });

  it('reports the expected track record (ROI, win rate, settled picks, mean CLV) on GraphQL and REST', async () => {
    const mine = trackRecordOf(EXPECTED.picks);
    const graphql = await t.graphql<{ trackRecord: { overall: Overall; series: { date: string; cumulativePnlPct: number }[] } }>(TRACK_RECORD);
    expect(graphql.errors).toBeUndefined();
    const { overall, series } = graphql.data!.trackRecord;
    expect(overall.totalSettled).toBe(mine.totalSettled);
    expect(Math.abs(overall.roiPct - mine.roiPct)).toBeLessThanOrEqual(ROUNDING);
    expect(Math.abs(overall.winRate - mine.winRate)).toBeLessThanOrEqual(ROUNDING);
    expect(Math.abs(overall.clvAvgPct - mine.clvAvgPct)).toBeLessThanOrEqual(ROUNDING);
    // Every replayed pick has its (fresh) closing line from the CSV: all of them are in the mean.
    expect(overall.clvCount).toBe(mine.totalSettled);
    const meanEdgePct = EXPECTED.picks.reduce((sum, pick) => sum + 100 * (pick.odds / pick.referenceFairOdds - 1), 0) / EXPECTED.picks.length;
    // edge_pct is stored to 2 decimals before it is averaged: half a unit more of slack.
    expect(Math.abs(overall.edgeAvgPct - meanEdgePct)).toBeLessThanOrEqual(2 * ROUNDING);

    // The daily series: cumulative profit in percent of a unit, by settlement date (the match date).
    const profitByDate = new Map<string, number>();
    for (const pick of EXPECTED.picks) {
      const date = pick.kickoff.toISOString().slice(0, 10);
      profitByDate.set(date, (profitByDate.get(date) ?? 0) + pick.profit);
    }
    let cumulative = 0;
    const seriesOf = new Map(series.map((point) => [point.date, point.cumulativePnlPct]));
    for (const { kickoff } of GROUPS) {
      const date = kickoff.toISOString().slice(0, 10);
      cumulative += profitByDate.get(date) ?? 0;
      expect(Math.abs(seriesOf.get(date)! - 100 * cumulative), date).toBeLessThanOrEqual(ROUNDING);
    }

    // REST, with an Enterprise key: the same figures in snake_case.
    const key = (await t.graphql<{ createApiKey: { key: string } }>(CREATE_KEY, { input: { tier: 'ENTERPRISE' } })).data!.createApiKey.key;
    const rest = await t.app.inject({ method: 'GET', url: '/api/v1/track-record?days_back=365', headers: { authorization: `Bearer ${key}` } });
    expect(rest.statusCode).toBe(200);
    expect(rest.json().overall).toMatchObject({
      roi_pct: overall.roiPct,
      win_rate: overall.winRate,
      total_settled: overall.totalSettled,
      clv_avg_pct: overall.clvAvgPct,
    });

    console.log(
      `real season E0 2018/19: ${overall.totalSettled} picks (${EXPECTED.held.length} held, ${EXPECTED.bestPlausibleCount} by the best-plausible rule), ` +
        `ROI ${overall.roiPct} %, win rate ${overall.winRate} %, mean CLV ${overall.clvAvgPct} % ` +
        `(independent: ROI ${mine.roiPct.toFixed(4)} %, CLV ${mine.clvAvgPct.toFixed(4)} %); sanity-rule hits ${EXPECTED.sanityHits.length}`,
    );
  });

  /** The live record's figures that both replays compute (the series depends on each one's window). */
  const STATISTICS = `query { trackRecord(daysBack: 365) {
    overall { roiPct winRate totalSettled clvAvgPct clvCount edgeAvgPct avgOdds clvPositivePct roiCi95 tScore pValue maxDrawdownUnits maxDrawdownPct longestLosingStreak brierScore }
    perSport { sport roiPct totalSettled } perMarket { market roiPct totalSettled clvAvgPct }
    calibration { low high picks expectedWinRate actualWinRate } clvDistribution { lowPct highPct picks }
    referenceCoverage { bookmaker picks sharePct } } }`;

  it('the backtest of the same file on the same timeline makes the same picks and the same record as the live engine', async () => {
    const { snapshots, skipped: rows } = footballDataSnapshots(CSV, {
      books: ['pinnacle', ...SOFT_BOOKS.map((book) => book.key)],
      timeline: {
        openingBeforeKickoffMs: 2 * HOUR,
        openingQuoteAgeMs: 30_000,
        closingBeforeKickoffMs: 5 * MINUTE,
        closingQuoteAgeMs: MINUTE,
        finalAfterKickoffMs: 2 * HOUR + 30 * MINUTE,
        finalUpdatedAfterKickoffMs: 2 * HOUR,
      },
      kickoffOf: (date) => new Date(`${date}T15:00:00Z`),
    });
    const { polls, skipped } = pollsOfSnapshots(snapshots);
    expect([...rows, ...skipped]).toEqual([]);
    const run = runBacktest(polls, backtestConfig({}, ENGINE_SETTINGS));

    const live = picks
      .map((pick) => ({
        key: keyOf(pick.homeTeam, pick.awayTeam, pick.selection),
        bookmaker: pick.bookmaker.slug,
        odds: pick.odds,
        referenceFairOdds: pick.referenceFairOdds,
        edgePct: pick.edgePct,
        edgePctPostTax: pick.edgePctPostTax,
        confidence: pick.confidence,
        closingOdds: pick.closingOdds,
        result: pick.result?.toLowerCase() ?? null,
        kickoffAt: pick.kickoffAt,
        settledAt: pick.settledAt,
      }))
      .sort((a, b) => (a.key < b.key ? -1 : 1));
    const replayed = run.picks
      .filter((pick) => pick.status !== 'admin_review')
      .map((pick) => ({
        key: keyOf(pick.homeTeam, pick.awayTeam, pick.selection),
        bookmaker: pick.bookmaker,
        odds: pick.odds,
        referenceFairOdds: pick.referenceFairOdds,
        edgePct: pick.edgePct,
        edgePctPostTax: pick.edgePctPostTax,
        confidence: pick.confidence,
        closingOdds: pick.closingOdds,
        result: pick.result,
        kickoffAt: pick.kickoffAt.toISOString(),
        settledAt: pick.settledAt?.toISOString() ?? null,
      }))
      .sort((a, b) => (a.key < b.key ? -1 : 1));
    expect(replayed.length).toBe(EXPECTED.picks.length);
    expect(replayed).toEqual(live);
    expect(run.picks.filter((pick) => pick.status === 'admin_review')).toHaveLength(EXPECTED.held.length);

    const record = await t.graphql<{ trackRecord: Record<string, unknown> & { overall: Record<string, unknown> } }>(STATISTICS);
    expect(record.errors).toBeUndefined();
    const report = backtestReport(run).trackRecord;
    // The backtest does not watch its picks between polls: it reports no availability.
    const { series: _series, availability: _none, ...comparable } = report;
    const { availability: _watched, ...liveRecord } = record.data!.trackRecord;
    expect(liveRecord).toEqual(comparable);
  });

  it('npm run backtest on the file, at an hour and a minute before kickoff, reports the figures computed from the CSV', () => {
    const directory = mkdtempSync(path.join(tmpdir(), 'backtest-'));
    try {
      const jsonFile = path.join(directory, 'report.json');
      const out: string[] = [];
      const err: string[] = [];
      const code = backtestCommand(
        [
          '--csv',
          CSV_FILE.pathname,
          '--min-edge',
          String(RULES.minEdge),
          '--review-edge',
          String(RULES.reviewEdge),
          '--odds-range',
          `${RULES.oddsMin}-${RULES.oddsMax}`,
          '--devig',
          'power',
          '--tax-rates',
          ENGINE_SETTINGS.BOOKMAKER_TAX_RATES,
          '--json',
          jsonFile,
        ],
        { out: (text) => out.push(text), err: (text) => err.push(text) },
      );
      expect(err.join('')).toBe('');
      expect(code).toBe(0);
      const report = JSON.parse(readFileSync(jsonFile, 'utf8'));
      expect(out.join('')).toContain(`Picks: ${EXPECTED.picks.length + EXPECTED.held.length} (${EXPECTED.picks.length} settled, ${EXPECTED.held.length} held for review, 0 unsettled)`);

      // Every pick settles at its match's final, the matches of a date together; among them the
      // engine's creation order: the file's order of matches, then home, away, draw (the feed's outcome order).
      const rowOf = new Map(MATCHES.map((match, index) => [match.eventId, index]));
      const sideOrder = (pick: (typeof EXPECTED.picks)[number]) => (pick.selection === pick.home ? 0 : pick.selection === pick.away ? 1 : 2);
      const ordered = [...EXPECTED.picks].sort((a, b) => a.kickoff.getTime() - b.kickoff.getTime() || rowOf.get(a.eventId)! - rowOf.get(b.eventId)! || sideOrder(a) - sideOrder(b));
      const profits = ordered.map((pick) => pick.profit);
      const n = profits.length;
      const mean = profits.reduce((a, b) => a + b, 0) / n;
      const s = Math.sqrt(profits.reduce((sum, p) => sum + (p - mean) ** 2, 0) / (n - 1));
      const standardError = s / Math.sqrt(n);
      const tScore = mean / standardError;
      const half = studentQuantile(0.975, n - 1) * standardError;
      let cumulative = 0;
      let peak = 0;
      let drawdown = 0;
      let streak = 0;
      let longest = 0;
      for (const profit of profits) {
        cumulative += profit;
        peak = Math.max(peak, cumulative);
        drawdown = Math.max(drawdown, peak - cumulative);
        streak = profit < 0 ? streak + 1 : 0;
        longest = Math.max(longest, streak);
      }
      const brier = ordered.reduce((sum, pick) => sum + (1 / pick.referenceFairOdds - (pick.result === 'WON' ? 1 : 0)) ** 2, 0) / n;
      const mine = trackRecordOf(EXPECTED.picks);
      const overall = report.trackRecord.overall;
      expect(overall.totalSettled).toBe(n);
      for (const [name, value] of [
        ['roiPct', mine.roiPct],
        ['winRate', mine.winRate],
        ['clvAvgPct', mine.clvAvgPct],
        ['avgOdds', ordered.reduce((sum, pick) => sum + pick.odds, 0) / n],
        ['clvPositivePct', (100 * ordered.filter((pick) => pick.clvPct > 0).length) / n],
        ['tScore', tScore],
        ['maxDrawdownPct', 100 * drawdown],
      ] as const) {
        expect(Math.abs(overall[name] - value), name).toBeLessThanOrEqual(ROUNDING);
      }
      expect(Math.abs(overall.roiCi95[0] - 100 * (mean - half))).toBeLessThanOrEqual(ROUNDING);
      expect(Math.abs(overall.roiCi95[1] - 100 * (mean + half))).toBeLessThanOrEqual(ROUNDING);
      expect(Math.abs(overall.pValue - (1 - studentCdf(tScore, n - 1)))).toBeLessThanOrEqual(0.00005 + 1e-9);
      expect(Math.abs(overall.brierScore - brier)).toBeLessThanOrEqual(0.00005 + 1e-9);
      expect(overall.longestLosingStreak).toBe(longest);
      expect(overall.clvCount).toBe(n);

      // Calibration by the fair probability at publication, and the picks per book.
      const rows = Array.from({ length: 10 }, () => ({ picks: 0, wins: 0, sum: 0 }));
      for (const pick of ordered) {
        const p = 1 / pick.referenceFairOdds;
        const row = rows[Math.min(9, Math.floor(p * 10))]!;
        row.picks += 1;
        row.sum += p;
        if (pick.result === 'WON') row.wins += 1;
      }
      report.trackRecord.calibration.forEach((row: { picks: number; expectedWinRate: number | null; actualWinRate: number | null }, index: number) => {
        const mineRow = rows[index]!;
        expect(row.picks).toBe(mineRow.picks);
        if (mineRow.picks === 0) return expect(row.expectedWinRate).toBeNull();
        expect(Math.abs(row.expectedWinRate! - (100 * mineRow.sum) / mineRow.picks)).toBeLessThanOrEqual(ROUNDING);
        expect(Math.abs(row.actualWinRate! - (100 * mineRow.wins) / mineRow.picks)).toBeLessThanOrEqual(ROUNDING);
      });
      const perBook = new Map<string, number>();
      for (const pick of EXPECTED.picks) perBook.set(pick.bookmaker, (perBook.get(pick.bookmaker) ?? 0) + 1);
      for (const held of EXPECTED.held) perBook.set(held.bookmaker, (perBook.get(held.bookmaker) ?? 0) + 1);
      expect(Object.fromEntries(report.perBook.map((row: { bookmaker: string; picks: number }) => [row.bookmaker, row.picks]))).toEqual(Object.fromEntries(perBook));
      expect(report.perMarket.map((row: { market: string; picks: number }) => [row.market, row.picks])).toEqual([['h2h', EXPECTED.picks.length + EXPECTED.held.length]]);
    } finally {
      rmSync(directory, { recursive: true, force: true });
    }
  });
});
