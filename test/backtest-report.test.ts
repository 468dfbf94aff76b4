/**
 * The backtest's text report says profit and drawdown in units of stake, in the record page's
 * words (docs/API.md, "Units"): "Profit +0.70 units at 1 unit a pick; largest drawdown 2.38 units".
 * The record is built from five hand-made settled picks whose figures are worked out below.
 */
import { describe, expect, it } from 'vitest';
import { formatBacktest, unitsText, type BacktestOutcome } from '../src/cli/backtest.js';
import type { BacktestReport, BacktestRun } from '../src/domain/backtest.js';
import type { PickResult } from '../src/domain/pick.js';
import { recordStatistics, summarizePicks } from '../src/domain/record-statistics.js';
import { aggregateTrackRecord, NO_AVAILABILITY, trackRecordReport, type TrackRecordBucket } from '../src/domain/track-record.js';

const settled: { result: PickResult; odds: number; date: string }[] = [
  { result: 'won', odds: 2.2, date: '2019-01-12' }, // +1.2: the peak
  { result: 'lost', odds: 3, date: '2019-01-12' }, // 0.2
  { result: 'half_lost', odds: 2, date: '2019-01-13' }, // -0.3
  { result: 'won', odds: 1.125, date: '2019-01-13' }, // -0.175
  { result: 'lost', odds: 2, date: '2019-01-14' }, // -1.175: a fall of 2.375 from 1.2
];

function outcomeOf(picks: typeof settled): BacktestOutcome {
  const buckets: TrackRecordBucket[] = picks.map((pick) => ({ date: pick.date, sport: 'soccer', market: 'h2h', result: pick.result, count: 1, sumOdds: pick.odds, sumEdgePct: 3, countWithClosing: 0, sumClvPct: 0 }));
  const window = { from: new Date('2019-01-12T00:00:00Z'), to: new Date('2019-01-14T23:00:00Z') };
  const statistics = recordStatistics(summarizePicks(picks.map((pick) => ({ result: pick.result, odds: pick.odds, clvPct: null, fairProbability: 0.5 }))));
  const report: BacktestReport = {
    trackRecord: trackRecordReport(aggregateTrackRecord(buckets, window), statistics, [], NO_AVAILABILITY),
    window: { from: window.from.toISOString(), to: window.to.toISOString() },
    picks: picks.length,
    held: 0,
    unsettled: 0,
    skipped: 0,
    perMarket: [],
    perBook: [],
  };
  const run: BacktestRun = { picks: [], skipped: [], polls: 3, events: 5 };
  return { run, report, matches: 5, skipped: [], elapsedMs: 1 };
}

describe('the backtest report in units of stake', () => {
  it('says profit and the largest drawdown in units, the losing run in picks', () => {
    const text = formatBacktest(outcomeOf(settled));
    // Profit 1.2 - 1 - 0.5 + 0.125 - 1 = -1.175 units, rounded once: -1.18.
    expect(text).toContain('Profit -1.18 units at 1 unit a pick; largest drawdown 2.38 units (fall from a running peak)\n');
    // Lost, half lost: a run of 2 (the win at 1.125 ends it; the last loss is a run of 1).
    expect(text).toContain('Longest losing run 2 picks; Brier score');
    expect(text).not.toMatch(/% of a unit|unit stake/);
  });

  it('a record without a fall: +2.40 units, a drawdown of 0.00 units', () => {
    const text = formatBacktest(outcomeOf([{ result: 'won', odds: 2.2, date: '2019-01-12' }, { result: 'won', odds: 2.2, date: '2019-01-13' }]));
    expect(text).toContain('Profit +2.40 units at 1 unit a pick; largest drawdown 0.00 units (fall from a running peak)\n');
    expect(text).toContain('Longest losing run 0 picks;');
  });

  it('units as the record page words them: a sign when asked, one unit singular, never -0.00', () => {
    expect(unitsText(3.5, { signed: true })).toBe('+3.50 units');
    expect(unitsText(-1, { signed: true })).toBe('-1.00 unit');
    expect(unitsText(1)).toBe('1.00 unit');
    expect(unitsText(0, { signed: true })).toBe('0.00 units');
    expect(unitsText(-0.001, { signed: true })).toBe('0.00 units');
    expect(unitsText(2.375)).toBe('2.38 units');
  });
});
