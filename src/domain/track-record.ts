/**
 * Track record at flat 1-unit stakes (docs/API.md, "Track record").
 * Aggregation runs on buckets the database pre-groups by (UTC date, sport, result), so
 * the work here is proportional to days x sports, not to the number of picks.
 */
import { roundTo } from './numbers.js';
import type { PickResult } from './pick.js';
import { settlementProfit } from './settlement.js';
import { addDays, utcDateString } from './time.js';

export interface TrackRecordBucket {
  /** YYYY-MM-DD of settled_at, UTC. */
  date: string;
  sport: string;
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
  odds: number;
  closingOdds: number | null;
  edgePct: number;
  result: PickResult;
  settledAt: Date;
}

export interface TrackRecord {
  overall: {
    roiPct: number;
    winRate: number;
    totalSettled: number;
    clvAvgPct: number;
    /** The settled picks in the CLV mean: those with a closing line that was not stale. */
    clvCount: number;
    edgeAvgPct: number;
  };
  perSport: { sport: string; roiPct: number; totalSettled: number }[];
  series: { date: string; cumulativePnlPct: number }[];
}

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
}

function emptyTotals(): Totals {
  return { profit: 0, settled: 0, nonVoid: 0, wins: 0 };
}

function addBucket(totals: Totals, bucket: TrackRecordBucket, profit: number): void {
  totals.profit += profit;
  totals.settled += bucket.count;
  if (bucket.result !== 'void') totals.nonVoid += bucket.count;
  if (bucket.result === 'won' || bucket.result === 'half_won') totals.wins += bucket.count;
}

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
  const profitByDate = new Map<string, number>();
  let sumEdgePct = 0;
  let sumClvPct = 0;
  let countWithClosing = 0;

  // Floating-point sums depend on their order: a fixed order makes the rounded figures the
  // same whichever way the caller assembled the buckets (day sums, edge days, one query).
  const ordered = [...buckets].sort(
    (a, b) => compareText(a.date, b.date) || compareText(a.sport, b.sport) || compareText(a.result, b.result),
  );
  for (const bucket of ordered) {
    if (bucket.count <= 0) continue;
    if (bucket.date < firstDate || bucket.date > lastDate) continue;
    const profit = bucketProfit(bucket);
    addBucket(overall, bucket, profit);
    let sportTotals = perSport.get(bucket.sport);
    if (!sportTotals) {
      sportTotals = emptyTotals();
      perSport.set(bucket.sport, sportTotals);
    }
    addBucket(sportTotals, bucket, profit);
    profitByDate.set(bucket.date, (profitByDate.get(bucket.date) ?? 0) + profit);
    sumEdgePct += bucket.sumEdgePct;
    sumClvPct += bucket.sumClvPct;
    countWithClosing += bucket.countWithClosing;
  }

  const series: TrackRecord['series'] = [];
  let cumulative = 0;
  // Walk whole UTC days from the window's first date; dates compare correctly as strings.
  for (let day = new Date(`${firstDate}T00:00:00.000Z`); ; day = addDays(day, 1)) {
    const date = utcDateString(day);
    if (date > lastDate) break;
    cumulative += profitByDate.get(date) ?? 0;
    series.push({ date, cumulativePnlPct: roundTo(100 * cumulative, 2) });
  }

  return {
    overall: {
      roiPct: roundTo(100 * ratio(overall.profit, overall.nonVoid), 2),
      winRate: roundTo(100 * ratio(overall.wins, overall.nonVoid), 2),
      totalSettled: overall.settled,
      clvAvgPct: roundTo(ratio(sumClvPct, countWithClosing), 2),
      clvCount: countWithClosing,
      edgeAvgPct: roundTo(ratio(sumEdgePct, overall.settled), 2),
    },
    perSport: [...perSport.entries()]
      .sort(([a], [b]) => compareStrings(a, b))
      .map(([sport, totals]) => ({
        sport,
        roiPct: roundTo(100 * ratio(totals.profit, totals.nonVoid), 2),
        totalSettled: totals.settled,
      })),
    series,
  };
}
