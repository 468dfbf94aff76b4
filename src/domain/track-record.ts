/**
 * Track record at flat 1-unit stakes (docs/API.md, "Track record").
 * Aggregation runs on buckets the database pre-groups by (UTC date, sport, market, result), so
 * the work here is proportional to days x sports x markets, not to the number of picks.
 */
import type { Static } from 'typebox';
import { roundTo } from './numbers.js';
import type { PickResult } from './pick.js';
import type { RecordStatistics } from './record-statistics.js';
import { settlementProfit } from './settlement.js';
import { addDays, utcDateString } from './time.js';
import type { TRACK_RECORD } from './track-record-shape.js';

/** The track record with its statistics (docs/API.md, "Track record"): what every surface publishes, as declared. */
export type TrackRecordReport = Static<typeof TRACK_RECORD>;

export interface TrackRecordBucket {
  /** YYYY-MM-DD of settled_at, UTC. */
  date: string;
  sport: string;
  market: string;
  result: PickResult;
  count: number;
  sumOdds: number;
  sumEdgePct: number;
  countWithClosing: number;
  /** Sum of 100 x (odds / closingOdds - 1) over picks with closing odds. */
  sumClvPct: number;
}

export interface SettledPickFacts {
  sport: string;
  market: string;
  odds: number;
  closingOdds: number | null;
  edgePct: number;
  result: PickResult;
  settledAt: Date;
}

/** What the buckets give (aggregateTrackRecord): the report but for the statistics of the picks and the reference coverage. */
export type TrackRecord = Pick<TrackRecordReport, 'perSport' | 'perMarket' | 'series'> & {
  overall: Omit<TrackRecordReport['overall'], keyof RecordStatistics>;
};

/** Closing-line value of one pick in percent: how much better our odds were than the close. */
export function clvPct(odds: number, closingOdds: number): number {
  return 100 * (odds / closingOdds - 1);
}

/** Window of the last `daysBack` days ending now; both ends inclusive (settled_at >= from and <= to). */
export function trackRecordWindow(now: Date, daysBack: number): { from: Date; to: Date } {
  return { from: addDays(now, -daysBack), to: new Date(now.getTime()) };
}

/**
 * Profit in units of a whole bucket: settlementProfit summed over its picks. Linear in
 * odds for every result, so the sum of odds is all that is needed.
 */
export function bucketProfit(bucket: Pick<TrackRecordBucket, 'result' | 'count' | 'sumOdds'>): number {
  switch (bucket.result) {
    case 'won':
      return bucket.sumOdds - bucket.count;
    case 'half_won':
      return (bucket.sumOdds - bucket.count) / 2;
    case 'void':
      return 0;
    case 'half_lost':
    case 'lost':
      // Per-pick profit does not depend on the odds here.
      return settlementProfit(bucket.result, 0) * bucket.count;
    default: {
      const unknown: never = bucket.result;
      throw new RangeError(`Unknown pick result ${String(unknown)}`);
    }
  }
}

interface Totals {
  profit: number;
  settled: number;
  nonVoid: number;
  wins: number;
  sumEdgePct: number;
  sumClvPct: number;
  countWithClosing: number;
}

function emptyTotals(): Totals {
  return { profit: 0, settled: 0, nonVoid: 0, wins: 0, sumEdgePct: 0, sumClvPct: 0, countWithClosing: 0 };
}

function addBucket(totals: Totals, bucket: TrackRecordBucket, profit: number): void {
  totals.profit += profit;
  totals.settled += bucket.count;
  if (bucket.result !== 'void') totals.nonVoid += bucket.count;
  if (bucket.result === 'won' || bucket.result === 'half_won') totals.wins += bucket.count;
  totals.sumEdgePct += bucket.sumEdgePct;
  totals.sumClvPct += bucket.sumClvPct;
  totals.countWithClosing += bucket.countWithClosing;
}

/** The totals of `key` in `groups`, created empty on first use. */
function totalsOf(groups: Map<string, Totals>, key: string): Totals {
  let totals = groups.get(key);
  if (!totals) {
    totals = emptyTotals();
    groups.set(key, totals);
  }
  return totals;
}

/** Groups in key order (deterministic output whatever the order of the buckets). */
function sortedGroups(groups: Map<string, Totals>): [string, Totals][] {
  return [...groups.entries()].sort(([a], [b]) => compareStrings(a, b));
}

const roiOf = (totals: Totals): number => roundTo(100 * ratio(totals.profit, totals.nonVoid), 2);

/** Mean with the "empty window: zeros" rule. */
function ratio(numerator: number, denominator: number): number {
  return denominator === 0 ? 0 : numerator / denominator;
}

/** Code-unit order: deterministic and locale-independent (sport slugs are ASCII). */
function compareStrings(a: string, b: string): number {
  return a < b ? -1 : a > b ? 1 : 0;
}

/**
 * Aggregates buckets into the documented track record. Everything is accumulated
 * unrounded and rounded to 2 decimals once at the end, so rounding never compounds.
 * Buckets dated outside the window's UTC dates are ignored, which keeps overall figures
 * and the series consistent even if a caller passes a wider query result.
 */
function compareText(a: string, b: string): number {
  return a < b ? -1 : a > b ? 1 : 0;
}

export function aggregateTrackRecord(
  buckets: TrackRecordBucket[],
  window: { from: Date; to: Date },
): TrackRecord {
  const firstDate = utcDateString(window.from);
  const lastDate = utcDateString(window.to);

  const overall = emptyTotals();
  const perSport = new Map<string, Totals>();
  const perMarket = new Map<string, Totals>();
  const profitByDate = new Map<string, number>();

  // Floating-point sums depend on their order: a fixed order makes the rounded figures the
  // same whichever way the caller assembled the buckets (day sums, edge days, one query).
  const ordered = [...buckets].sort(
    (a, b) => compareText(a.date, b.date) || compareText(a.sport, b.sport) || compareText(a.market, b.market) || compareText(a.result, b.result),
  );
  for (const bucket of ordered) {
    if (bucket.count <= 0) continue;
    if (bucket.date < firstDate || bucket.date > lastDate) continue;
    const profit = bucketProfit(bucket);
    addBucket(overall, bucket, profit);
    addBucket(totalsOf(perSport, bucket.sport), bucket, profit);
    addBucket(totalsOf(perMarket, bucket.market), bucket, profit);
    profitByDate.set(bucket.date, (profitByDate.get(bucket.date) ?? 0) + profit);
  }

  const series: TrackRecord['series'] = [];
  let cumulative = 0;
  // Walk whole UTC days from the window's first date; dates compare correctly as strings.
  for (let day = new Date(`${firstDate}T00:00:00.000Z`); ; day = addDays(day, 1)) {
    const date = utcDateString(day);
    if (date > lastDate) break;
    cumulative += profitByDate.get(date) ?? 0;
    series.push({ date, cumulativePnlUnits: roundTo(cumulative, 2), cumulativePnlPct: roundTo(100 * cumulative, 2) });
  }

  return {
    overall: {
      roiPct: roiOf(overall),
      winRate: roundTo(100 * ratio(overall.wins, overall.nonVoid), 2),
      totalSettled: overall.settled,
      clvAvgPct: roundTo(ratio(overall.sumClvPct, overall.countWithClosing), 2),
      clvCount: overall.countWithClosing,
      edgeAvgPct: roundTo(ratio(overall.sumEdgePct, overall.settled), 2),
    },
    perSport: sortedGroups(perSport).map(([sport, totals]) => ({ sport, roiPct: roiOf(totals), totalSettled: totals.settled })),
    perMarket: sortedGroups(perMarket).map(([market, totals]) => ({
      market,
      roiPct: roiOf(totals),
      totalSettled: totals.settled,
      clvAvgPct: roundTo(ratio(totals.sumClvPct, totals.countWithClosing), 2),
    })),
    series,
  };
}

/** One sharp reference and the settled engine picks whose fair price it helped make. */
export type ReferenceCoverageRow = TrackRecordReport['referenceCoverage'][number];

/**
 * Per reference, how many settled engine picks it helped price and their share of all settled
 * engine picks; most picks first, then by key. A consensus pick counts for each of its references,
 * so the shares may add up to more than 100.
 */
export function referenceCoverage(counts: readonly { bookmaker: string; picks: number }[], enginePicks: number): ReferenceCoverageRow[] {
  return counts
    .filter((row) => row.picks > 0)
    .map((row) => ({ bookmaker: row.bookmaker, picks: row.picks, sharePct: enginePicks === 0 ? 0 : roundTo((100 * row.picks) / enginePicks, 2) }))
    .sort((a, b) => b.picks - a.picks || (a.bookmaker < b.bookmaker ? -1 : a.bookmaker > b.bookmaker ? 1 : 0));
}

/** referenceCoverage from each settled engine pick's references. */
export function referenceCoverageOfPicks(picks: readonly { references: readonly string[] }[]): ReferenceCoverageRow[] {
  const counts = new Map<string, number>();
  for (const pick of picks) for (const bookmaker of new Set(pick.references)) counts.set(bookmaker, (counts.get(bookmaker) ?? 0) + 1);
  return referenceCoverage([...counts].map(([bookmaker, n]) => ({ bookmaker, picks: n })), picks.length);
}

/** The record's availability figures (docs/API.md, "Availability"). */
export type AvailabilityFigures = TrackRecordReport['availability'];

/**
 * The figures from the counts over the tracked picks: how many were available at 5 and 30
 * minutes, and the median minutes available (null without tracked picks).
 */
export function availabilityFigures(counts: { tracked: number; availableAt5Min: number; availableAt30Min: number; medianMinutes: number | null }): AvailabilityFigures {
  const percent = (n: number) => (counts.tracked === 0 ? null : roundTo((100 * n) / counts.tracked, 2));
  return {
    trackedPicks: counts.tracked,
    availableAt5MinPct: percent(counts.availableAt5Min),
    availableAt30MinPct: percent(counts.availableAt30Min),
    medianMinutesAvailable: counts.tracked === 0 || counts.medianMinutes === null ? null : roundTo(counts.medianMinutes, 2),
  };
}

/** The figures of a record without tracked picks (manual picks only, a backtest). */
export const NO_AVAILABILITY: AvailabilityFigures = availabilityFigures({ tracked: 0, availableAt5Min: 0, availableAt30Min: 0, medianMinutes: null });

export function trackRecordReport(record: TrackRecord, statistics: RecordStatistics, coverage: ReferenceCoverageRow[], availability: AvailabilityFigures): TrackRecordReport {
  const { calibration, clvDistribution, ...overall } = statistics;
  return { ...record, overall: { ...record.overall, ...overall }, calibration, clvDistribution, referenceCoverage: coverage, availability };
}
