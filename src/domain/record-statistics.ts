/**
 * Is it luck? The track record's significance, drawdown, losing streak, calibration and CLV
 * distribution (docs/API.md, "Track record"), at flat 1-unit stakes.
 *
 * Everything is kept in a summary that merges in order (a monoid): the summary of picks A
 * followed by picks B is merge(summary(A), summary(B)). The database keeps one summary per UTC day
 * and scope, so a 365-day record merges 365 small values instead of reading every pick, and the
 * backtest summarises its picks with the same code.
 */
import jstat from 'jstat';
import { roundTo } from './numbers.js';
import type { PickResult } from './pick.js';
import { settlementProfit } from './settlement.js';

const { studentt } = jstat.jStat;

/** One settled pick as the statistics see it; picks are summarised in settled_at, then id, order. */
export interface RecordPick {
  result: PickResult;
  odds: number;
  /** 100 x (odds / closing odds - 1) when the pick has a closing line that counts for CLV (not stale), else null. */
  clvPct: number | null;
  /** The fair probability at publication: 1 / reference fair odds. */
  fairProbability: number;
}

export interface CalibrationCell {
  /** Won and lost picks in the row (half results and voids are not calibrated). */
  picks: number;
  wins: number;
  sumProbability: number;
  /** Sum of (probability - outcome)^2, outcome 1 for won, 0 for lost. */
  sumSquaredError: number;
}

export interface RecordSummary {
  /** Non-void settled picks: the sample of the ROI statistics. */
  n: number;
  /** Mean and sum of squared deviations of the profit per pick (Welford; merged by Chan's formula). */
  meanProfit: number;
  profitM2: number;
  sumOdds: number;
  /** Picks in the CLV mean (void included, as for clv_avg_pct) and those of them with CLV > 0. */
  clvCount: number;
  clvPositive: number;
  clvBins: number[];
  /** Cumulative profit from 0: its end, its highest and lowest points (0 included), its largest fall. */
  net: number;
  peak: number;
  trough: number;
  maxDrawdown: number;
  /** Lost or half-lost picks at the start, at the end, and the longest run (voids skipped). */
  losingPrefix: number;
  losingSuffix: number;
  longestLosing: number;
  calibration: CalibrationCell[];
}

export const CALIBRATION_ROWS = 10;

/**
 * CLV distribution bins in percent: below -10, then 2-point bins up to 10, then 10 and above.
 * Two points resolve the usual spread of CLV (a few percent either side) and the open ends keep
 * outliers counted.
 */
export const CLV_BIN_EDGES: readonly number[] = Object.freeze([-10, -8, -6, -4, -2, 0, 2, 4, 6, 8, 10]);

export function emptySummary(): RecordSummary {
  return {
    n: 0,
    meanProfit: 0,
    profitM2: 0,
    sumOdds: 0,
    clvCount: 0,
    clvPositive: 0,
    clvBins: new Array<number>(CLV_BIN_EDGES.length + 1).fill(0),
    net: 0,
    peak: 0,
    trough: 0,
    maxDrawdown: 0,
    losingPrefix: 0,
    losingSuffix: 0,
    longestLosing: 0,
    calibration: Array.from({ length: CALIBRATION_ROWS }, () => ({ picks: 0, wins: 0, sumProbability: 0, sumSquaredError: 0 })),
  };
}

/** The row of a fair probability: p x 10 floored, 1.0 in the last row. */
export function calibrationRow(probability: number): number {
  return Math.min(CALIBRATION_ROWS - 1, Math.max(0, Math.floor(probability * CALIBRATION_ROWS)));
}

/** The bin of a CLV in percent (a value on an edge belongs to the bin above it). */
export function clvBin(clv: number): number {
  let bin = 0;
  while (bin < CLV_BIN_EDGES.length && clv >= CLV_BIN_EDGES[bin]!) bin += 1;
  return bin;
}

const isLosing = (result: PickResult) => result === 'lost' || result === 'half_lost';

/** Adds one pick after the summary's picks (mutates and returns `summary`). */
function addPick(summary: RecordSummary, pick: RecordPick): RecordSummary {
  if (pick.clvPct !== null) {
    summary.clvCount += 1;
    if (pick.clvPct > 0) summary.clvPositive += 1;
    summary.clvBins[clvBin(pick.clvPct)]! += 1;
  }
  if (pick.result === 'void') return summary;

  const profit = settlementProfit(pick.result, pick.odds);
  summary.n += 1;
  const delta = profit - summary.meanProfit;
  summary.meanProfit += delta / summary.n;
  summary.profitM2 += delta * (profit - summary.meanProfit);
  summary.sumOdds += pick.odds;

  summary.net += profit;
  summary.peak = Math.max(summary.peak, summary.net);
  summary.trough = Math.min(summary.trough, summary.net);
  summary.maxDrawdown = Math.max(summary.maxDrawdown, summary.peak - summary.net);

  if (isLosing(pick.result)) {
    if (summary.losingPrefix === summary.n - 1) summary.losingPrefix += 1;
    summary.losingSuffix += 1;
    summary.longestLosing = Math.max(summary.longestLosing, summary.losingSuffix);
  } else {
    summary.losingSuffix = 0;
  }

  if (pick.result === 'won' || pick.result === 'lost') {
    const outcome = pick.result === 'won' ? 1 : 0;
    const cell = summary.calibration[calibrationRow(pick.fairProbability)]!;
    cell.picks += 1;
    cell.wins += outcome;
    cell.sumProbability += pick.fairProbability;
    cell.sumSquaredError += (pick.fairProbability - outcome) ** 2;
  }
  return summary;
}

/** The summary of picks given in settled_at, then id, order. */
export function summarizePicks(picks: Iterable<RecordPick>): RecordSummary {
  const summary = emptySummary();
  for (const pick of picks) addPick(summary, pick);
  return summary;
}

/** The summary of `first`'s picks followed by `second`'s. */
export function mergeSummaries(first: RecordSummary, second: RecordSummary): RecordSummary {
  if (first.n === 0 && first.clvCount === 0) return second;
  if (second.n === 0 && second.clvCount === 0) return first;
  const n = first.n + second.n;
  const delta = second.meanProfit - first.meanProfit;
  const bothHavePicks = first.n > 0 && second.n > 0;
  return {
    n,
    meanProfit: n === 0 ? 0 : bothHavePicks ? first.meanProfit + (delta * second.n) / n : first.n > 0 ? first.meanProfit : second.meanProfit,
    profitM2: first.profitM2 + second.profitM2 + (bothHavePicks ? (delta * delta * first.n * second.n) / n : 0),
    sumOdds: first.sumOdds + second.sumOdds,
    clvCount: first.clvCount + second.clvCount,
    clvPositive: first.clvPositive + second.clvPositive,
    clvBins: first.clvBins.map((count, bin) => count + (second.clvBins[bin] ?? 0)),
    net: first.net + second.net,
    peak: Math.max(first.peak, first.net + second.peak),
    trough: Math.min(first.trough, first.net + second.trough),
    maxDrawdown: Math.max(first.maxDrawdown, second.maxDrawdown, first.peak - (first.net + second.trough)),
    losingPrefix: first.losingPrefix === first.n ? first.n + second.losingPrefix : first.losingPrefix,
    losingSuffix: second.losingSuffix === second.n ? second.n + first.losingSuffix : second.losingSuffix,
    longestLosing: Math.max(first.longestLosing, second.longestLosing, first.losingSuffix + second.losingPrefix),
    calibration: first.calibration.map((cell, row) => {
      const other = second.calibration[row]!;
      return {
        picks: cell.picks + other.picks,
        wins: cell.wins + other.wins,
        sumProbability: cell.sumProbability + other.sumProbability,
        sumSquaredError: cell.sumSquaredError + other.sumSquaredError,
      };
    }),
  };
}

/** Summaries merged in the order given. */
export function mergeAll(summaries: Iterable<RecordSummary>): RecordSummary {
  let merged = emptySummary();
  for (const summary of summaries) merged = mergeSummaries(merged, summary);
  return merged;
}

/** A stored summary (JSON), checked: a malformed value is a bug to report, never a figure to publish. */
export function parseSummary(value: unknown): RecordSummary {
  const empty = emptySummary();
  const candidate = value as RecordSummary;
  const numbersOk =
    typeof value === 'object' &&
    value !== null &&
    (Object.keys(empty) as (keyof RecordSummary)[]).every((key) => key === 'clvBins' || key === 'calibration' || Number.isFinite(candidate[key]));
  const binsOk = numbersOk && Array.isArray(candidate.clvBins) && candidate.clvBins.length === empty.clvBins.length && candidate.clvBins.every(Number.isFinite);
  const calibrationOk =
    binsOk &&
    Array.isArray(candidate.calibration) &&
    candidate.calibration.length === CALIBRATION_ROWS &&
    candidate.calibration.every((cell) => [cell?.picks, cell?.wins, cell?.sumProbability, cell?.sumSquaredError].every(Number.isFinite));
  if (!calibrationOk) throw new TypeError('A stored track-record summary is malformed');
  return candidate;
}

export interface CalibrationRow {
  /** Fair probability bounds, [low, high) (the last row includes 1). */
  low: number;
  high: number;
  picks: number;
  /** Percent: the mean fair probability of the row's picks, and the share of them won; null for an empty row. */
  expectedWinRate: number | null;
  actualWinRate: number | null;
}

export interface ClvBinRow {
  /** Percent bounds, [low, high); null is an open end. */
  lowPct: number | null;
  highPct: number | null;
  picks: number;
}

export interface RecordStatistics {
  avgOdds: number | null;
  clvPositivePct: number | null;
  roiCi95: [number, number] | null;
  tScore: number | null;
  pValue: number | null;
  /** The largest drawdown in units of stake; maxDrawdownPct is the same x 100 (the API's older field). */
  maxDrawdownUnits: number;
  maxDrawdownPct: number;
  longestLosingStreak: number;
  brierScore: number | null;
  calibration: CalibrationRow[];
  clvDistribution: ClvBinRow[];
}

/** The t statistic of the mean profit with its sample: null when it is undefined (fewer than 2 picks, no spread). */
function tTest(summary: RecordSummary): { mean: number; standardError: number; degrees: number } | null {
  if (summary.n < 2) return null;
  const variance = summary.profitM2 / (summary.n - 1);
  // Welford keeps identical profits at exactly 0; anything this small is float noise of a constant sample.
  if (!(variance > 1e-18)) return null;
  return { mean: summary.meanProfit, standardError: Math.sqrt(variance / summary.n), degrees: summary.n - 1 };
}

/** The published statistics of a summary (rounding once, here). */
export function recordStatistics(summary: RecordSummary): RecordStatistics {
  const test = tTest(summary);
  let roiCi95: [number, number] | null = null;
  let tScore: number | null = null;
  let pValue: number | null = null;
  if (test) {
    const halfWidth = studentt.inv(0.975, test.degrees) * test.standardError;
    roiCi95 = [roundTo(100 * (test.mean - halfWidth), 2), roundTo(100 * (test.mean + halfWidth), 2)];
    const t = test.mean / test.standardError;
    tScore = roundTo(t, 2);
    pValue = roundTo(1 - studentt.cdf(t, test.degrees), 4);
  }
  const calibrated = summary.calibration.reduce((sum, cell) => sum + cell.picks, 0);
  const squaredError = summary.calibration.reduce((sum, cell) => sum + cell.sumSquaredError, 0);
  return {
    avgOdds: summary.n === 0 ? null : roundTo(summary.sumOdds / summary.n, 2),
    clvPositivePct: summary.clvCount === 0 ? null : roundTo((100 * summary.clvPositive) / summary.clvCount, 2),
    roiCi95,
    tScore,
    pValue,
    maxDrawdownUnits: roundTo(summary.maxDrawdown, 2),
    maxDrawdownPct: roundTo(100 * summary.maxDrawdown, 2),
    longestLosingStreak: summary.longestLosing,
    brierScore: calibrated === 0 ? null : roundTo(squaredError / calibrated, 4),
    calibration: summary.calibration.map((cell, row) => ({
      low: row / CALIBRATION_ROWS,
      high: (row + 1) / CALIBRATION_ROWS,
      picks: cell.picks,
      expectedWinRate: cell.picks === 0 ? null : roundTo((100 * cell.sumProbability) / cell.picks, 2),
      actualWinRate: cell.picks === 0 ? null : roundTo((100 * cell.wins) / cell.picks, 2),
    })),
    clvDistribution: summary.clvBins.map((picks, bin) => ({
      lowPct: bin === 0 ? null : CLV_BIN_EDGES[bin - 1]!,
      highPct: bin === CLV_BIN_EDGES.length ? null : CLV_BIN_EDGES[bin]!,
      picks,
    })),
  };
}

/** The scope value that stands for every sport or every market in a stored summary's key. */
export const EVERY = '*';

export interface ScopedRecordPick extends RecordPick {
  sport: string;
  market: string;
}

export interface ScopedSummary {
  sport: string;
  market: string;
  summary: RecordSummary;
}

/**
 * One day's summaries for every scope a track record can ask for: everything, each sport, each
 * market, and each sport and market (a sequence statistic of a scope cannot be merged from other
 * scopes' summaries: their picks interleave). Picks in settled_at, then id, order.
 */
export function summariesByScope(picks: readonly ScopedRecordPick[]): ScopedSummary[] {
  const groups = new Map<string, ScopedRecordPick[]>();
  for (const pick of picks) {
    for (const [sport, market] of [
      [EVERY, EVERY],
      [pick.sport, EVERY],
      [EVERY, pick.market],
      [pick.sport, pick.market],
    ] as const) {
      const key = JSON.stringify([sport, market]);
      const group = groups.get(key);
      if (group) group.push(pick);
      else groups.set(key, [pick]);
    }
  }
  return [...groups.entries()].map(([key, group]) => {
    const [sport, market] = JSON.parse(key) as [string, string];
    return { sport, market, summary: summarizePicks(group) };
  });
}

/**
 * How often chance alone would give a record at least this good, in words: the coarsest of
 * "in 10", "in 100", "in 1,000" at which the p-value is a whole count from 1 to 9 (one significant
 * figure). 0.03 -> "about 3 times in 100", 0.2 -> "about 2 times in 10", 0.0004 -> "fewer than 1
 * time in 1,000"; from 0.95 on, "about 97 times in 100".
 */
export function chanceInWords(pValue: number): string {
  if (!(pValue >= 0.001)) return 'fewer than 1 time in 1,000';
  if (pValue >= 0.995) return 'more than 99 times in 100';
  const times = (count: number, scale: string) => `about ${count} ${count === 1 ? 'time' : 'times'} in ${scale}`;
  for (const [scale, label] of [[10, '10'], [100, '100'], [1000, '1,000']] as const) {
    const count = pValue * scale;
    if (count >= 0.95 && count < 9.5) return times(Math.round(count), label);
  }
  return times(Math.round(pValue * 100), '100');
}

/** The page's headline answer to "is it luck?", from the one-sided p-value of the track record. */
export function significanceSentence(pValue: number | null): string {
  if (pValue === null) {
    return 'Too few settled picks to tell skill from luck: the test needs at least two non-void picks whose profits differ.';
  }
  return `If the picks had no edge, a record at least this good would happen ${chanceInWords(pValue)}.`;
}
