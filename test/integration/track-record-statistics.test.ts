/**
 * The record statistics through the API (REST and GraphQL) from picks settled with the
 * operator's mutations, against values computed by hand in the test (docs/API.md, "Track
 * record"). Runs on PGlite, and on PostgreSQL when DATABASE_URL is set (CI's second phase).
 * The picks are settled out of their settled_at order and across UTC days, so the stored day
 * summaries and the partial edge days must be merged in order for the drawdown and the streak.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestApp, ManualClock, type TestApp } from '../helpers/app.js';
import { CREATE_KEY, pickInput } from '../helpers/fixtures.js';

const NOW = new Date('2026-11-22T12:00:00.000Z');
const HOUR = 3_600_000;

/**
 * settled_at (hours before NOW), result, odds, fair odds, closing odds. In settled_at order the
 * profits are 1, -1, -0.5, (void), -1, 1, -1, 3 (see the domain test's sequence).
 */
const PICKS = [
  { hoursAgo: 70, result: 'won', odds: 2, fair: 1.8, closing: 1.9 },
  { hoursAgo: 60, result: 'lost', odds: 2, fair: 1.9, closing: 2.1 },
  { hoursAgo: 50, result: 'half_lost', odds: 2, fair: 1.9, closing: 2 },
  { hoursAgo: 40, result: 'void', odds: 2, fair: 1.9, closing: 1.8 },
  { hoursAgo: 30, result: 'lost', odds: 2, fair: 1.8, closing: 1.95 },
  { hoursAgo: 20, result: 'half_won', odds: 3, fair: 2.8, closing: 2.9 },
  { hoursAgo: 10, result: 'lost', odds: 2, fair: 1.9, closing: 1.9 },
  { hoursAgo: 2, result: 'won', odds: 4, fair: 3.5, closing: 3.6 },
] as const;

/** Student t CDF, six degrees of freedom (closed form for even degrees). */
function studentCdf6(t: number): number {
  const x = t / Math.sqrt(6 + t * t);
  const y = 1 - x * x;
  return 0.5 + (x / 2) * (1 + y / 2 + (3 * y * y) / 8);
}

describe('track record statistics through the API', () => {
  let t: TestApp;
  let key: string;
  const clock = new ManualClock(NOW);
  beforeAll(async () => {
    t = await createTestApp({ clock, runtime: { startDispatcher: false } });
    const created = await t.graphql<{ createApiKey: { key: string } }>(CREATE_KEY, { input: { tier: 'GROWTH' } });
    key = created.data!.createApiKey.key;
    const ids: string[] = [];
    for (const [index, row] of PICKS.entries()) {
      const settledAt = new Date(NOW.getTime() - row.hoursAgo * HOUR);
      const pick = await t.runtime.services.picks.publish({
        ...pickInput({ homeTeam: `Home ${index}`, selection: `Home ${index}`, odds: row.odds, referenceFairOdds: row.fair }),
        kickoffAt: new Date(settledAt.getTime() - 2 * HOUR).toISOString(),
        publishedAt: new Date(settledAt.getTime() - 30 * HOUR).toISOString(),
      } as never);
      ids.push(pick.id);
    }
    // A tennis pick settled void: an all-void scope.
    const tennis = await t.runtime.services.picks.publish({
      ...pickInput({ sport: 'tennis', homeTeam: 'Carlos Alcaraz', awayTeam: 'Alexander Zverev', selection: 'Carlos Alcaraz', odds: 2, referenceFairOdds: 1.9 }),
      kickoffAt: new Date(NOW.getTime() - 8 * HOUR).toISOString(),
      publishedAt: new Date(NOW.getTime() - 30 * HOUR).toISOString(),
    } as never);
    await t.runtime.services.picks.settle({ id: tennis.id, result: 'void', closingOdds: 1.9, settledAt: new Date(NOW.getTime() - 5 * HOUR).toISOString() } as never);
    // Settled newest first: every settlement recomputes its day in settled_at order.
    for (const [index, row] of [...PICKS.entries()].reverse()) {
      await t.runtime.services.picks.settle({
        id: ids[index]!,
        result: row.result,
        closingOdds: row.closing,
        settledAt: new Date(NOW.getTime() - row.hoursAgo * HOUR).toISOString(),
      } as never);
    }
  });
  afterAll(async () => {
    await t?.close();
  });

  const get = async (query: string) => {
    const res = await t.app.inject({ method: 'GET', url: `/api/v1/track-record?${query}`, headers: { authorization: `Bearer ${key}` } });
    expect(res.statusCode).toBe(200);
    return res.json();
  };

  it('the whole sequence: interval, t, p, drawdown, streak, calibration, Brier, CLV share', async () => {
    const body = await get('days_back=7&sport=soccer');
    const profits = [1, -1, -0.5, -1, 1, -1, 3];
    const n = profits.length;
    const mean = profits.reduce((a, b) => a + b, 0) / n;
    const s = Math.sqrt(profits.reduce((sum, p) => sum + (p - mean) ** 2, 0) / (n - 1));
    const tScore = mean / (s / Math.sqrt(n));
    const half = 2.446912 * (s / Math.sqrt(n)); // t(0.975, 6), tables
    // CLV 100 x (odds / closing - 1) of every pick (void included): 5.26, -4.76, 0, 11.11, 2.56, 3.45, 5.26, 11.11.
    const clvs = PICKS.map((row) => 100 * (row.odds / row.closing - 1));
    // Won and lost picks: (p - outcome)^2 with p = 1 / fair odds.
    const calibrated = PICKS.filter((row) => row.result === 'won' || row.result === 'lost');
    const brier = calibrated.reduce((sum, row) => sum + (1 / row.fair - (row.result === 'won' ? 1 : 0)) ** 2, 0) / calibrated.length;
    expect(body.overall).toMatchObject({
      total_settled: 8,
      roi_pct: Number(((100 * 1.5) / 7).toFixed(2)),
      avg_odds: Number((17 / 7).toFixed(2)),
      clv_positive_pct: Number(((100 * clvs.filter((clv) => clv > 0).length) / clvs.length).toFixed(2)),
      roi_ci95: [Number((100 * (mean - half)).toFixed(2)), Number((100 * (mean + half)).toFixed(2))],
      t_score: Number(tScore.toFixed(2)),
      p_value: Number((1 - studentCdf6(tScore)).toFixed(4)),
      max_drawdown_units: 2.5,
      max_drawdown_pct: 250,
      longest_losing_streak: 3,
      brier_score: Number(brier.toFixed(4)),
    });
    // Fair probabilities: 1/1.8 = 0.556 (won, lost), 1/1.9 = 0.526 (lost x 2), 1/3.5 = 0.286 (won).
    expect(body.calibration[5]).toEqual({
      low: 0.5,
      high: 0.6,
      picks: 4,
      expected_win_rate: Number(((100 * (2 / 1.8 + 2 / 1.9)) / 4).toFixed(2)),
      actual_win_rate: 25,
    });
    expect(body.calibration[2]).toEqual({ low: 0.2, high: 0.3, picks: 1, expected_win_rate: Number((100 / 3.5).toFixed(2)), actual_win_rate: 100 });
    expect(body.clv_distribution.reduce((sum: number, bin: { picks: number }) => sum + bin.picks, 0)).toBe(8);
    expect(body.clv_distribution[11]).toEqual({ low_pct: 10, high_pct: null, picks: 2 });
  });

  it('a window that starts inside the sequence starts its peak at 0 again', async () => {
    clock.set(NOW);
    const window = await get('days_back=1&sport=soccer');
    expect(window.overall.total_settled).toBe(3);
    // The last 24 hours: half_won at 3 (+1), lost (-1), won at 4 (+3): peak 1, then 0, drawdown 1.
    expect(window.overall).toMatchObject({ max_drawdown_units: 1, max_drawdown_pct: 100 });
    expect(window.overall.longest_losing_streak).toBe(1);
  });

  it('n = 0 (empty window), n = 1 and an all-void window: nulls, never NaN', async () => {
    const empty = await get('days_back=1&sport=basketball');
    expect(empty.overall).toMatchObject({ total_settled: 0, avg_odds: null, roi_ci95: null, t_score: null, p_value: null, brier_score: null, max_drawdown_pct: 0 });
    expect(empty.calibration.every((row: { expected_win_rate: unknown }) => row.expected_win_rate === null)).toBe(true);
    clock.set(new Date(NOW.getTime() - 35 * HOUR));
    // The 24 hours before that moment: half_lost (50 h before NOW) and the void (40 h): n = 1.
    const one = await get('days_back=1');
    clock.set(NOW);
    expect(one.overall).toMatchObject({ total_settled: 2, avg_odds: 2, roi_ci95: null, t_score: null, p_value: null, longest_losing_streak: 1, max_drawdown_units: 0.5, max_drawdown_pct: 50 });
    const voidOnly = await t.graphql<{ trackRecord: { overall: Record<string, unknown> } }>(
      '{ trackRecord(daysBack: 7, sport: "tennis") { overall { totalSettled avgOdds roiCi95 tScore pValue brierScore clvPositivePct maxDrawdownPct } } }',
    );
    expect(voidOnly.data!.trackRecord.overall).toEqual({
      totalSettled: 1,
      avgOdds: null,
      roiCi95: null,
      tScore: null,
      pValue: null,
      brierScore: null,
      clvPositivePct: 100,
      maxDrawdownPct: 0,
    });
  });
});
