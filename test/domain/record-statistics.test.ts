/**
 * The record statistics against values computed by hand (docs/API.md, "Track record"). Student t
 * values come from closed forms (one degree of freedom is Cauchy; two and six have finite series)
 * and printed tables, never from the library the code uses.
 */
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import type { PickResult } from '../../src/domain/pick.js';
import {
  calibrationRow,
  clvBin,
  mergeAll,
  mergeSummaries,
  chanceInWords,
  recordStatistics,
  significanceSentence,
  summarizePicks,
  summariesByScope,
  type RecordPick,
} from '../../src/domain/record-statistics.js';

const pick = (result: PickResult, odds: number, fairProbability = 0.5, clvPct: number | null = null): RecordPick => ({ result, odds, fairProbability, clvPct });
const statisticsOf = (picks: RecordPick[]) => recordStatistics(summarizePicks(picks));

/** Student t CDF for even degrees of freedom: 1/2 + x/2 x sum_j (2j)!/(4^j j!^2) (1 - x^2)^j, x = t / sqrt(nu + t^2). */
function evenStudentCdf(t: number, nu: number): number {
  const x = t / Math.sqrt(nu + t * t);
  let sum = 0;
  let coefficient = 1;
  for (let j = 0; j < nu / 2; j += 1) {
    sum += coefficient * (1 - x * x) ** j;
    coefficient *= (2 * j + 1) / (2 * j + 2);
  }
  return 0.5 + (x / 2) * sum;
}

describe('record statistics', () => {
  it('an empty window: nulls and zeros, never NaN', () => {
    const stats = statisticsOf([]);
    expect(stats).toMatchObject({
      avgOdds: null,
      clvPositivePct: null,
      roiCi95: null,
      tScore: null,
      pValue: null,
      maxDrawdownUnits: 0,
      maxDrawdownPct: 0,
      longestLosingStreak: 0,
      brierScore: null,
    });
    expect(stats.calibration).toHaveLength(10);
    expect(stats.calibration.every((row) => row.picks === 0 && row.expectedWinRate === null && row.actualWinRate === null)).toBe(true);
    expect(stats.calibration.map((row) => [row.low, row.high])).toEqual([
      [0, 0.1], [0.1, 0.2], [0.2, 0.3], [0.3, 0.4], [0.4, 0.5], [0.5, 0.6], [0.6, 0.7], [0.7, 0.8], [0.8, 0.9], [0.9, 1],
    ]);
    expect(stats.clvDistribution.map((bin) => bin.picks)).toEqual(new Array(12).fill(0));
  });

  it('an all-void window: n = 0, but its closing lines still count for CLV', () => {
    const stats = statisticsOf([pick('void', 2.1, 0.5, 3), pick('void', 1.8, 0.6, -1)]);
    expect(stats).toMatchObject({ avgOdds: null, roiCi95: null, tScore: null, pValue: null, maxDrawdownPct: 0, longestLosingStreak: 0, brierScore: null });
    expect(stats.clvPositivePct).toBe(50);
  });

  it('one pick: no spread, so no interval, t or p', () => {
    const stats = statisticsOf([pick('won', 2.5)]);
    expect(stats).toMatchObject({ avgOdds: 2.5, roiCi95: null, tScore: null, pValue: null, maxDrawdownPct: 0, longestLosingStreak: 0 });
  });

  it('two picks: the interval with t(0.975, 1) = 12.7062 and a Cauchy p-value', () => {
    // Profits 2 and -1: mean 0.5, s = sqrt(4.5), standard error 1.5, t = 1/3.
    const stats = statisticsOf([pick('won', 3), pick('lost', 1.9)]);
    const halfWidth = 12.7062047 * 1.5;
    expect(stats.tScore).toBe(0.33);
    expect(stats.roiCi95).toEqual([Number((100 * (0.5 - halfWidth)).toFixed(2)), Number((100 * (0.5 + halfWidth)).toFixed(2))]);
    expect(stats.pValue).toBe(Number((0.5 - Math.atan(1 / 3) / Math.PI).toFixed(4)));
    expect(stats.pValue).toBe(0.3976);
    expect(stats.avgOdds).toBe(2.45);
    expect(stats.maxDrawdownPct).toBe(100);
    expect(stats.longestLosingStreak).toBe(1);
  });

  it('three picks: t(0.975, 2) = 4.3027 and the closed-form CDF of two degrees of freedom', () => {
    // Profits 1.5, -1, 0.5 (half won at 2): mean 1/3, deviations 7/6, -4/3, 1/6; s^2 = (49 + 64 + 1) / 36 / 2.
    const stats = statisticsOf([pick('won', 2.5), pick('lost', 2), pick('half_won', 2)]);
    const mean = 1 / 3;
    const standardError = Math.sqrt(114 / 72 / 3);
    const t = mean / standardError;
    expect(stats.tScore).toBe(Number(t.toFixed(2)));
    expect(stats.pValue).toBe(Number((1 - evenStudentCdf(t, 2)).toFixed(4)));
    expect(stats.roiCi95).toEqual([Number((100 * (mean - 4.30265273 * standardError)).toFixed(2)), Number((100 * (mean + 4.30265273 * standardError)).toFixed(2))]);
  });

  it('a sequence: drawdown from the running peak, the losing streak across a void, and t with six degrees of freedom', () => {
    // Cumulative profit 1, 0, -0.5, (void) -0.5, -1.5, -0.5, -1.5, 1.5: peak 1, trough -1.5 after it.
    const picks = [
      pick('won', 2),
      pick('lost', 2),
      pick('half_lost', 2),
      pick('void', 2),
      pick('lost', 2),
      pick('half_won', 3),
      pick('lost', 2),
      pick('won', 4),
    ];
    const stats = statisticsOf(picks);
    // From 1 to -1.5: 2.5 units, which the older field gives x 100.
    expect(stats.maxDrawdownUnits).toBe(2.5);
    expect(stats.maxDrawdownPct).toBe(250);
    expect(stats.longestLosingStreak).toBe(3);
    expect(stats.avgOdds).toBe(Number((17 / 7).toFixed(2)));
    // Profits 1, -1, -0.5, -1, 1, -1, 3: sum 1.5, sum of squares 14.25.
    const mean = 1.5 / 7;
    const s = Math.sqrt((14.25 - 7 * mean * mean) / 6);
    const t = mean / (s / Math.sqrt(7));
    expect(stats.tScore).toBe(Number(t.toFixed(2)));
    expect(stats.pValue).toBe(Number((1 - evenStudentCdf(t, 6)).toFixed(4)));
    // t(0.975, 6) = 2.446912 (tables).
    const half = 2.446912 * (s / Math.sqrt(7));
    expect(stats.roiCi95).toEqual([Number((100 * (mean - half)).toFixed(2)), Number((100 * (mean + half)).toFixed(2))]);
  });

  it('a peak before any win counts from 0: losing from the start is a drawdown', () => {
    expect(statisticsOf([pick('lost', 2), pick('lost', 2), pick('won', 5)])).toMatchObject({ maxDrawdownUnits: 2, maxDrawdownPct: 200 });
  });

  it('drawdown in units of stake, 2 decimals; the older field is the same x 100', () => {
    // Won at 1.333 (+0.333), three half losses (-0.5 each), a loss: from 0.333 down to -2.167, 2.5 units.
    expect(statisticsOf([pick('won', 1.333), pick('half_lost', 2), pick('half_lost', 2), pick('half_lost', 2), pick('lost', 2)])).toMatchObject({ maxDrawdownUnits: 2.5, maxDrawdownPct: 250 });
    // Won at 2.2 (+1.2: the peak), lost, half lost, won at 1.125 (+0.125), lost: down to -1.175, a fall of
    // 2.375 units, rounded once to 2.38 (the older field keeps 237.5).
    expect(statisticsOf([pick('won', 2.2), pick('lost', 3), pick('half_lost', 2), pick('won', 1.125), pick('lost', 2)])).toMatchObject({ maxDrawdownUnits: 2.38, maxDrawdownPct: 237.5 });
  });

  it('no spread: every pick lost, or every pick won at the same odds', () => {
    expect(statisticsOf([pick('lost', 2), pick('lost', 3), pick('lost', 4)])).toMatchObject({ roiCi95: null, tScore: null, pValue: null, longestLosingStreak: 3 });
    expect(statisticsOf(new Array(5).fill(pick('won', 2.1)))).toMatchObject({ roiCi95: null, tScore: null, pValue: null, maxDrawdownPct: 0 });
  });

  it('calibration and Brier over won and lost picks only', () => {
    const stats = statisticsOf([
      pick('won', 1.8, 0.55),
      pick('lost', 1.9, 0.52),
      pick('won', 3.4, 0.3),
      pick('lost', 1.05, 0.95),
      pick('half_won', 2, 0.45),
      pick('void', 2, 0.45),
    ]);
    // (0.45^2 + 0.52^2 + 0.7^2 + 0.95^2) / 4 = 1.8654 / 4 = 0.46635.
    expect(stats.brierScore).toBe(0.4664);
    expect(stats.calibration[5]).toEqual({ low: 0.5, high: 0.6, picks: 2, expectedWinRate: 53.5, actualWinRate: 50 });
    expect(stats.calibration[3]).toEqual({ low: 0.3, high: 0.4, picks: 1, expectedWinRate: 30, actualWinRate: 100 });
    expect(stats.calibration[9]).toEqual({ low: 0.9, high: 1, picks: 1, expectedWinRate: 95, actualWinRate: 0 });
    expect(stats.calibration[4]!.picks).toBe(0);
  });

  it('rows and bins at their edges', () => {
    expect([0, 0.0999, 0.1, 0.5, 0.9999, 1].map(calibrationRow)).toEqual([0, 0, 1, 5, 9, 9]);
    expect([-10.01, -10, -0.01, 0, 9.99, 10, 250].map(clvBin)).toEqual([0, 1, 5, 6, 10, 11, 11]);
  });

  it('CLV: the share above 0 (0 is not positive) and the distribution', () => {
    const stats = statisticsOf([pick('won', 2, 0.5, 2), pick('lost', 2, 0.5, -1), pick('lost', 2, 0.5, 0), pick('won', 2, 0.5, 5), pick('won', 2)]);
    expect(stats.clvPositivePct).toBe(50);
    expect(stats.clvDistribution.filter((bin) => bin.picks > 0)).toEqual([
      { lowPct: -2, highPct: 0, picks: 1 },
      { lowPct: 0, highPct: 2, picks: 1 },
      { lowPct: 2, highPct: 4, picks: 1 },
      { lowPct: 4, highPct: 6, picks: 1 },
    ]);
  });

  const results: PickResult[] = ['won', 'lost', 'void', 'half_won', 'half_lost'];
  // Values as the service stores them: prices with two decimals, probabilities with four, CLV
  // with two. Arbitrary doubles (5.484999999999996) put sums on a rounding boundary at the 15th
  // digit, where two summation orders round apart; stored values never carry such digits.
  const arbitraryPick = fc.record({
    result: fc.constantFrom(...results),
    odds: fc.integer({ min: 101, max: 2000 }).map((cents) => cents / 100),
    fairProbability: fc.integer({ min: 100, max: 9900 }).map((bp) => bp / 10_000),
    clvPct: fc.option(fc.integer({ min: -3000, max: 3000 }).map((hundredths) => hundredths / 100)),
  });

  it('merging the summaries of consecutive parts equals summarising the whole', () => {
    fc.assert(
      fc.property(fc.array(arbitraryPick, { maxLength: 40 }), fc.array(fc.nat(40), { maxLength: 5 }), (picks, cuts) => {
        const edges = [...new Set([0, ...cuts.map((cut) => Math.min(cut, picks.length)), picks.length])].sort((a, b) => a - b);
        const parts = edges.slice(1).map((end, index) => summarizePicks(picks.slice(edges[index], end)));
        const whole = summarizePicks(picks);
        const merged = mergeAll(parts);
        expect(recordStatistics(merged)).toEqual(recordStatistics(whole));
        expect(merged.n).toBe(whole.n);
        expect(merged.longestLosing).toBe(whole.longestLosing);
        expect(merged.maxDrawdown).toBeCloseTo(whole.maxDrawdown, 9);
      }),
      { numRuns: 300 },
    );
  });

  it('merging with an empty summary on either side changes nothing', () => {
    const some = summarizePicks([pick('won', 2), pick('lost', 2)]);
    expect(mergeSummaries(summarizePicks([]), some)).toEqual(some);
    expect(mergeSummaries(some, summarizePicks([]))).toEqual(some);
  });

  it('a day summarised for every scope a record can ask for', () => {
    const scoped = summariesByScope([
      { ...pick('won', 2), sport: 'soccer', market: 'h2h' },
      { ...pick('lost', 2), sport: 'tennis', market: 'h2h' },
      { ...pick('lost', 2), sport: 'soccer', market: 'totals' },
    ]);
    const counts = Object.fromEntries(scoped.map((row) => [`${row.sport}/${row.market}`, row.summary.n]));
    expect(counts).toEqual({ '*/*': 3, 'soccer/*': 2, '*/h2h': 2, 'soccer/h2h': 1, 'tennis/*': 1, 'tennis/h2h': 1, '*/totals': 1, 'soccer/totals': 1 });
  });

  it.each([
    [0.03, 'about 3 times in 100'],
    [0.2, 'about 2 times in 10'],
    [0.3352, 'about 3 times in 10'],
    [0.05, 'about 5 times in 100'],
    [0.097, 'about 1 time in 10'],
    [0.094, 'about 9 times in 100'],
    [0.0095, 'about 1 time in 100'],
    [0.004, 'about 4 times in 1,000'],
    [0.001, 'about 1 time in 1,000'],
    [0.0004, 'fewer than 1 time in 1,000'],
    [0, 'fewer than 1 time in 1,000'],
    [0.5, 'about 5 times in 10'],
    [0.97, 'about 97 times in 100'],
    [0.9991, 'more than 99 times in 100'],
  ])('p = %s reads "%s"', (pValue, words) => {
    expect(chanceInWords(pValue)).toBe(words);
    expect(significanceSentence(pValue)).toBe(`If the picks had no edge, a record at least this good would happen ${words}.`);
  });

  it('says why there is no test when the p-value is null', () => {
    expect(significanceSentence(null)).toBe('Too few settled picks to tell skill from luck: the test needs at least two non-void picks whose profits differ.');
  });
});
