import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { boundViolation, DAYS_BACK } from '../../src/domain/bounds.js';
import { InvalidParameterError } from '../../src/domain/errors.js';
import { roundTo } from '../../src/domain/numbers.js';
import { PICK_RESULTS, type PickResult } from '../../src/domain/pick.js';
import { settlementProfit } from '../../src/domain/settlement.js';
import { utcDateString } from '../../src/domain/time.js';
import {
  aggregateTrackRecord,
  bucketProfit,
  clvPct,
  type SettledPickFacts,
  type TrackRecord,
  type TrackRecordBucket,
  trackRecordWindow,
} from '../../src/domain/track-record.js';

const DAY = 86_400_000;

function pick(
  sport: string,
  odds: number,
  closingOdds: number | null,
  edgePct: number,
  result: PickResult,
  settledAt: string,
  market = 'h2h',
): SettledPickFacts {
  return { sport, market, odds, closingOdds, edgePct, result, settledAt: new Date(settledAt) };
}

/** The database's GROUP BY (UTC settlement date, sport, market, result), in memory. */
function toTrackRecordBuckets(picks: SettledPickFacts[]): TrackRecordBucket[] {
  const byKey = new Map<string, TrackRecordBucket>();
  for (const pick of picks) {
    const date = utcDateString(pick.settledAt);
    const key = JSON.stringify([date, pick.sport, pick.market, pick.result]);
    let bucket = byKey.get(key);
    if (!bucket) {
      bucket = { date, sport: pick.sport, market: pick.market, result: pick.result, count: 0, sumOdds: 0, sumEdgePct: 0, countWithClosing: 0, sumClvPct: 0 };
      byKey.set(key, bucket);
    }
    bucket.count += 1;
    bucket.sumOdds += pick.odds;
    bucket.sumEdgePct += pick.edgePct;
    if (pick.closingOdds !== null) {
      bucket.countWithClosing += 1;
      bucket.sumClvPct += clvPct(pick.odds, pick.closingOdds);
    }
  }
  return [...byKey.values()];
}

/** What the database does: filter by the exact window, then GROUP BY. */
function bucketsInWindow(picks: SettledPickFacts[], window: { from: Date; to: Date }): TrackRecordBucket[] {
  return toTrackRecordBuckets(
    picks.filter((p) => p.settledAt.getTime() >= window.from.getTime() && p.settledAt.getTime() <= window.to.getTime()),
  );
}

/** Straightforward per-pick reading of docs/API.md "Track record", independent of the bucket code. */
function referenceTrackRecord(picks: SettledPickFacts[], window: { from: Date; to: Date }): TrackRecord {
  const inWindow = picks.filter(
    (p) => p.settledAt.getTime() >= window.from.getTime() && p.settledAt.getTime() <= window.to.getTime(),
  );
  const stats = (ps: SettledPickFacts[]) => {
    const nonVoid = ps.filter((p) => p.result !== 'void');
    const profit = ps.reduce((s, p) => s + settlementProfit(p.result, p.odds), 0);
    const wins = ps.filter((p) => p.result === 'won' || p.result === 'half_won').length;
    return {
      roiPct: nonVoid.length === 0 ? 0 : roundTo((100 * profit) / nonVoid.length, 2),
      winRate: nonVoid.length === 0 ? 0 : roundTo((100 * wins) / nonVoid.length, 2),
      totalSettled: ps.length,
    };
  };
  const withClosing = inWindow.filter((p) => p.closingOdds !== null);
  const clvs = withClosing.map((p) => 100 * (p.odds / (p.closingOdds as number) - 1));
  const overall = stats(inWindow);
  const sports = [...new Set(inWindow.map((p) => p.sport))].sort();
  const markets = [...new Set(inWindow.map((p) => p.market))].sort();
  const clvAvg = (ps: SettledPickFacts[]) => {
    const values = ps.filter((p) => p.closingOdds !== null).map((p) => 100 * (p.odds / (p.closingOdds as number) - 1));
    return values.length === 0 ? 0 : roundTo(values.reduce((a, b) => a + b, 0) / values.length, 2);
  };
  const series: TrackRecord['series'] = [];
  const first = Date.parse(`${utcDateString(window.from)}T00:00:00Z`);
  for (let t = first; t <= window.to.getTime(); t += DAY) {
    const date = utcDateString(new Date(t));
    const upTo = inWindow.filter((p) => utcDateString(p.settledAt) <= date);
    const profit = upTo.reduce((s, p) => s + settlementProfit(p.result, p.odds), 0);
    series.push({ date, cumulativePnlUnits: roundTo(profit, 2), cumulativePnlPct: roundTo(100 * profit, 2) });
  }
  return {
    overall: {
      ...overall,
      clvAvgPct: clvs.length === 0 ? 0 : roundTo(clvs.reduce((a, b) => a + b, 0) / clvs.length, 2),
      clvCount: clvs.length,
      edgeAvgPct: inWindow.length === 0 ? 0 : roundTo(inWindow.reduce((s, p) => s + p.edgePct, 0) / inWindow.length, 2),
    },
    perSport: sports.map((sport) => {
      const s = stats(inWindow.filter((p) => p.sport === sport));
      return { sport, roiPct: s.roiPct, totalSettled: s.totalSettled };
    }),
    perMarket: markets.map((market) => {
      const ofMarket = inWindow.filter((p) => p.market === market);
      return { market, roiPct: stats(ofMarket).roiPct, totalSettled: ofMarket.length, clvAvgPct: clvAvg(ofMarket) };
    }),
    series,
  };
}

describe('trackRecordWindow', () => {
  it('spans daysBack x 24 h ending now', () => {
    const now = new Date('2026-11-22T12:00:00.000Z');
    const w = trackRecordWindow(now, 30);
    expect(w.from.toISOString()).toBe('2026-10-23T12:00:00.000Z');
    expect(w.to.toISOString()).toBe('2026-11-22T12:00:00.000Z');
    expect(w.to).not.toBe(now);
    expect(trackRecordWindow(now, 1).from.toISOString()).toBe('2026-11-21T12:00:00.000Z');
  });
});

describe('the days_back window (DAYS_BACK)', () => {
  it.each([1, 2, 30, 364, 365])('accepts %d', (value) => {
    expect(boundViolation(DAYS_BACK, 'days_back', value)).toBeNull();
  });

  it.each([0, -1, 366, 1000, 1.5, 30.0001, Number.NaN, Number.POSITIVE_INFINITY])('rejects %d', (value) => {
    const error = boundViolation(DAYS_BACK, 'days_back', value);
    expect(error).toBeInstanceOf(InvalidParameterError);
    expect(error!.extras).toEqual({ parameter: 'days_back' });
    expect(error!.message).toBe('days_back must be an integer between 1 and 365');
  });
});

describe('bucketProfit', () => {
  it('sums the per-pick profits of each result kind', () => {
    const b = (result: PickResult) => ({ result, count: 3, sumOdds: 7.5 });
    expect(bucketProfit(b('won'))).toBeCloseTo(4.5, 12);
    expect(bucketProfit(b('half_won'))).toBeCloseTo(2.25, 12);
    expect(bucketProfit(b('void'))).toBe(0);
    expect(bucketProfit(b('half_lost'))).toBe(-1.5);
    expect(bucketProfit(b('lost'))).toBe(-3);
  });
});

describe('aggregateTrackRecord', () => {
  const now = new Date('2026-11-22T12:00:00.000Z');
  const window = trackRecordWindow(now, 3); // 2026-11-19T12:00Z .. 2026-11-22T12:00Z

  const picks = [
    pick('soccer', 2.0, 1.8, 5, 'won', '2026-11-19T13:00:00Z'), // +1
    pick('soccer', 3.0, null, 10, 'half_won', '2026-11-19T20:00:00Z', 'totals'), // +1
    // nothing on the 20th
    pick('tennis', 1.5, 1.6, 2, 'lost', '2026-11-21T09:00:00Z'), // -1
    pick('tennis', 2.5, 2.5, 4, 'void', '2026-11-21T10:00:00Z'), // 0
    pick('basketball', 1.9, 2.0, -1, 'half_lost', '2026-11-22T11:00:00Z', 'spreads'), // -0.5
    // outside the window on either side (same UTC dates as window ends)
    pick('soccer', 5.0, 4.0, 50, 'won', '2026-11-19T11:59:59.999Z'),
    pick('soccer', 5.0, 4.0, 50, 'lost', '2026-11-22T12:00:00.001Z'),
    // exactly on the bounds: included
  ];

  it('computes a hand-checked record with every result kind', () => {
    const record = aggregateTrackRecord(bucketsInWindow(picks, window), window);
    expect(record).toEqual({
      overall: {
        // profit 1 + 1 - 1 + 0 - 0.5 = 0.5 over 4 non-void picks
        roiPct: 12.5,
        // won + half_won = 2 of 4 non-void
        winRate: 50,
        // void included
        totalSettled: 5,
        // (11.111.. - 6.25 + 0 - 5) / 4 = -0.0347..
        clvAvgPct: -0.03,
        // the four picks with a closing line
        clvCount: 4,
        // (5 + 10 + 2 + 4 - 1) / 5
        edgeAvgPct: 4,
      },
      perSport: [
        { sport: 'basketball', roiPct: -50, totalSettled: 1 },
        { sport: 'soccer', roiPct: 100, totalSettled: 2 },
        // the void pick counts as settled but not in the ROI denominator
        { sport: 'tennis', roiPct: -100, totalSettled: 2 },
      ],
      perMarket: [
        // +1 - 1 + 0 over 2 non-void; CLV (11.111.. - 6.25 + 0) / 3
        { market: 'h2h', roiPct: 0, totalSettled: 3, clvAvgPct: 1.62 },
        // -0.5 over 1; CLV 100 x (1.9 / 2.0 - 1)
        { market: 'spreads', roiPct: -50, totalSettled: 1, clvAvgPct: -5 },
        // +1 over 1; no closing line
        { market: 'totals', roiPct: 100, totalSettled: 1, clvAvgPct: 0 },
      ],
      series: [
        { date: '2026-11-19', cumulativePnlUnits: 2, cumulativePnlPct: 200 },
        { date: '2026-11-20', cumulativePnlUnits: 2, cumulativePnlPct: 200 },
        { date: '2026-11-21', cumulativePnlUnits: 1, cumulativePnlPct: 100 },
        { date: '2026-11-22', cumulativePnlUnits: 0.5, cumulativePnlPct: 50 },
      ],
    });
  });

  it('includes picks settled exactly on the window bounds', () => {
    const onBounds = [
      pick('soccer', 2.0, null, 0, 'won', window.from.toISOString()),
      pick('soccer', 2.0, null, 0, 'won', window.to.toISOString()),
    ];
    const record = aggregateTrackRecord(bucketsInWindow(onBounds, window), window);
    expect(record.overall.totalSettled).toBe(2);
    expect(record.series.at(-1)).toEqual({ date: '2026-11-22', cumulativePnlUnits: 2, cumulativePnlPct: 200 });
  });

  it('returns zeros and a flat series for an empty window', () => {
    const record = aggregateTrackRecord([], trackRecordWindow(now, 2));
    expect(record).toEqual({
      overall: { roiPct: 0, winRate: 0, totalSettled: 0, clvAvgPct: 0, clvCount: 0, edgeAvgPct: 0 },
      perSport: [],
      perMarket: [],
      series: [
        { date: '2026-11-20', cumulativePnlUnits: 0, cumulativePnlPct: 0 },
        { date: '2026-11-21', cumulativePnlUnits: 0, cumulativePnlPct: 0 },
        { date: '2026-11-22', cumulativePnlUnits: 0, cumulativePnlPct: 0 },
      ],
    });
  });

  it('gives zero ROI and win rate when every pick is void, but counts them', () => {
    const voids = [
      pick('mma', 2.0, null, 3, 'void', '2026-11-21T00:00:00Z'),
      pick('mma', 4.0, null, 5, 'void', '2026-11-22T00:00:00Z'),
    ];
    const record = aggregateTrackRecord(bucketsInWindow(voids, window), window);
    expect(record.overall).toEqual({ roiPct: 0, winRate: 0, totalSettled: 2, clvAvgPct: 0, clvCount: 0, edgeAvgPct: 4 });
    expect(record.perSport).toEqual([{ sport: 'mma', roiPct: 0, totalSettled: 2 }]);
  });

  it('rounds only at the end', () => {
    // Three wins at 1.333: each +0.333 units. Rounding per pick would give 33 x 3 = 99.
    const wins = [0, 1, 2].map((i) => pick('soccer', 1.333, null, 1.005, 'won', `2026-11-21T0${i}:00:00Z`));
    const record = aggregateTrackRecord(bucketsInWindow(wins, window), window);
    expect(record.overall.roiPct).toBe(33.3);
    expect(record.series.at(-1)?.cumulativePnlPct).toBe(99.9);
    // 0.999 units, rounded once to 2 decimals.
    expect(record.series.at(-1)?.cumulativePnlUnits).toBe(1);
    expect(record.overall.edgeAvgPct).toBe(1.01);
  });

  it('ignores buckets dated outside the window and empty buckets', () => {
    const bucket = (date: string, count: number): TrackRecordBucket => ({
      date,
      sport: 'soccer',
      market: 'h2h',
      result: 'won',
      count,
      sumOdds: 2 * count,
      sumEdgePct: 0,
      countWithClosing: 0,
      sumClvPct: 0,
    });
    const record = aggregateTrackRecord(
      [bucket('2026-11-18', 1), bucket('2026-11-19', 1), bucket('2026-11-23', 1), bucket('2026-11-20', 0)],
      window,
    );
    expect(record.overall.totalSettled).toBe(1);
    expect(record.series.map((s) => s.cumulativePnlPct)).toEqual([100, 100, 100, 100]);
  });

  it('sums duplicate buckets', () => {
    const b: TrackRecordBucket = {
      date: '2026-11-21',
      sport: 'soccer',
      market: 'h2h',
      result: 'won',
      count: 1,
      sumOdds: 3,
      sumEdgePct: 2,
      countWithClosing: 1,
      sumClvPct: 10,
    };
    const record = aggregateTrackRecord([b, { ...b }], window);
    expect(record.overall).toEqual({ roiPct: 200, winRate: 100, totalSettled: 2, clvAvgPct: 10, clvCount: 2, edgeAvgPct: 2 });
    expect(record.perSport).toEqual([{ sport: 'soccer', roiPct: 200, totalSettled: 2 }]);
  });

  it('has one series row per UTC date the window touches', () => {
    fc.assert(
      fc.property(
        fc.date({ min: new Date('2000-01-01T00:00:00Z'), max: new Date('2100-01-01T00:00:00Z'), noInvalidDate: true }),
        fc.integer({ min: 1, max: 365 }),
        (at, daysBack) => {
          const w = trackRecordWindow(at, daysBack);
          const { series } = aggregateTrackRecord([], w);
          // daysBack x 24 h always touches daysBack + 1 UTC dates (both end dates included).
          expect(series).toHaveLength(daysBack + 1);
          expect(series[0]?.date).toBe(utcDateString(w.from));
          expect(series.at(-1)?.date).toBe(utcDateString(w.to));
          for (let i = 1; i < series.length; i++) {
            expect(Date.parse(series[i]!.date) - Date.parse(series[i - 1]!.date)).toBe(DAY);
          }
        },
      ),
      { numRuns: 200 },
    );
  });

  /**
   * Same shape, same integers, and every rounded number equal or one unit of the last
   * (0.01) apart: the two sides add the same floats in a different order, so a value that
   * lands on a rounding boundary may legitimately round either way.
   */
  function expectSameRecord(actual: TrackRecord, expected: TrackRecord): void {
    const close = (a: number, b: number) => expect(Math.abs(a - b), `${a} vs ${b}`).toBeLessThanOrEqual(0.010000001);
    expect(actual.overall.totalSettled).toBe(expected.overall.totalSettled);
    for (const field of ['roiPct', 'winRate', 'clvAvgPct', 'edgeAvgPct'] as const) close(actual.overall[field], expected.overall[field]);
    expect(actual.perSport.map((row) => [row.sport, row.totalSettled])).toEqual(expected.perSport.map((row) => [row.sport, row.totalSettled]));
    actual.perSport.forEach((row, i) => close(row.roiPct, expected.perSport[i]!.roiPct));
    expect(actual.series.map((point) => point.date)).toEqual(expected.series.map((point) => point.date));
    actual.series.forEach((point, i) => close(point.cumulativePnlPct, expected.series[i]!.cumulativePnlPct));
    actual.series.forEach((point, i) => close(point.cumulativePnlUnits, expected.series[i]!.cumulativePnlUnits));
  }

  it('agrees with a per-pick reference implementation', () => {
    const sports = ['soccer', 'tennis', 'mma', 'cricket'];
    const cents = fc.integer({ min: 101, max: 100_000 }).map((c) => c / 100);
    const arbPick = (base: number) =>
      fc.record({
        sport: fc.constantFrom(...sports),
        market: fc.constantFrom('h2h', 'spreads', 'totals'),
        odds: cents,
        closingOdds: fc.option(cents, { nil: null }),
        edgePct: fc.integer({ min: -5000, max: 5000 }).map((c) => c / 100),
        result: fc.constantFrom(...PICK_RESULTS),
        // from before the longest window (10 days) to after now
        settledAt: fc.integer({ min: base - 12 * DAY, max: base + DAY }).map((t) => new Date(t)),
      });
    const scenario = fc
      .integer({ min: Date.parse('2020-01-01T00:00:00Z'), max: Date.parse('2030-01-01T00:00:00Z') })
      .chain((nowMs) =>
        fc.record({
          now: fc.constant(new Date(nowMs)),
          daysBack: fc.integer({ min: 1, max: 10 }),
          picks: fc.array(arbPick(nowMs), { maxLength: 40 }),
        }),
      );
    fc.assert(
      fc.property(scenario, ({ now, daysBack, picks: generated }) => {
        const window = trackRecordWindow(now, daysBack);
        const expected = referenceTrackRecord(generated, window);
        const actual = aggregateTrackRecord(bucketsInWindow(generated, window), window);
        expectSameRecord(actual, expected);
        // Bucket order does not matter.
        expectSameRecord(aggregateTrackRecord(bucketsInWindow(generated, window).reverse(), window), actual);
      }),
      { numRuns: 300 },
    );
  });
});
