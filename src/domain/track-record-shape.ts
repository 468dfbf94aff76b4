/**
 * The track record (docs/API.md, "Track record"), declared once: its type (TrackRecordReport),
 * the GraphQL TrackRecord types, the documented JSON Schema with its example (OpenAPI) and the
 * REST document's selection all derive from TRACK_RECORD (src/domain/resource-shape.ts).
 * A new field is one entry here and its computation (src/domain/track-record.ts).
 */
import Type from 'typebox';
import { DAYS_BACK } from './bounds.js';
import { MARKETS } from './market.js';
import { CALIBRATION_ROWS, CLV_BIN_EDGES } from './record-statistics.js';
import { nullable, resource, resourceObject } from './resource-shape.js';
import { SPORT_SLUGS } from './sports.js';

const OVERALL = resourceObject('TrackRecordOverall', {
  roiPct: Type.Number({ description: '100 x profit / non-void picks.' }),
  winRate: Type.Number({ description: 'Percent of non-void picks won (half wins count).' }),
  totalSettled: Type.Integer({ description: 'Settled picks in the window, void included.' }),
  clvAvgPct: Type.Number({ description: 'Mean closing-line value: 100 x (odds / closing odds - 1).' }),
  clvCount: Type.Integer({ minimum: 0, description: 'Settled picks in the CLV mean: those with a closing line that was not stale.' }),
  edgeAvgPct: Type.Number({ description: 'Mean edge_pct.' }),
  avgOdds: nullable(Type.Number({ description: 'Mean odds of the n non-void settled picks; null when n = 0.' })),
  clvPositivePct: nullable(Type.Number({ description: 'Percent of the picks in the CLV mean with CLV > 0; null when clv_count is 0.' })),
  roiCi95: nullable(
    Type.Tuple([Type.Number(), Type.Number()], {
      description:
        '[low, high] in percent: 100 x (mean ± t(0.975, n - 1) x s / sqrt(n)), the mean and sample standard deviation s of the profit per non-void pick; null when n < 2 or s = 0.',
    }),
  ),
  tScore: nullable(Type.Number({ description: 'mean / (s / sqrt(n)); null when n < 2 or s = 0.' })),
  pValue: nullable(Type.Number({ description: 'One-sided p-value of no edge: 1 - T(n - 1)(t_score), 4 decimals; null when n < 2 or s = 0.' })),
  maxDrawdownUnits: Type.Number({ minimum: 0, description: 'Largest fall of the cumulative profit from a running peak starting at 0, in units of stake.' }),
  maxDrawdownPct: Type.Number({ minimum: 0, description: 'max_drawdown_units x 100: the same drawdown in percent of one unit stake.' }),
  longestLosingStreak: Type.Integer({ minimum: 0, description: 'Longest run of lost and half-lost picks; voids are skipped, any win ends it.' }),
  brierScore: nullable(Type.Number({ description: 'Mean (fair probability - outcome)^2 over won and lost picks, 4 decimals; null without any.' })),
});

const SPORT_ROW = resourceObject('TrackRecordSport', {
  sport: Type.String(),
  roiPct: Type.Number(),
  totalSettled: Type.Integer(),
});

const MARKET_ROW = resourceObject('TrackRecordMarket', {
  // A string with the markets as documented values, as the pick's market.
  market: Type.String({ enum: [...MARKETS], description: 'h2h, spreads or totals.' }),
  roiPct: Type.Number(),
  totalSettled: Type.Integer(),
  clvAvgPct: Type.Number({ description: "Mean CLV of the market's settled picks with a closing line that was not stale." }),
});

const SERIES_POINT = resourceObject('TrackRecordPoint', {
  date: Type.String({ format: 'date', description: 'UTC date, YYYY-MM-DD.' }),
  cumulativePnlUnits: Type.Number({ description: 'Cumulative profit at the end of the day, in units of stake.' }),
  cumulativePnlPct: Type.Number({ description: 'cumulative_pnl_units x 100: the same profit in percent of one unit stake.' }),
});

const CALIBRATION_ROW = resourceObject(
  'TrackRecordCalibration',
  {
    low: Type.Number({ minimum: 0, maximum: 1 }),
    high: Type.Number({ minimum: 0, maximum: 1 }),
    picks: Type.Integer({ minimum: 0 }),
    expectedWinRate: nullable(Type.Number({ description: "Percent: the mean fair probability of the row's picks; null for an empty row." })),
    actualWinRate: nullable(Type.Number({ description: "Percent of the row's picks won; null for an empty row." })),
  },
  { description: 'Won and lost picks whose fair probability at publication is in [low, high) (the last row includes 1).' },
);

const CLV_BIN = resourceObject(
  'TrackRecordClvBin',
  {
    lowPct: nullable(Type.Number({ description: 'Inclusive; null for the open lower end.' })),
    highPct: nullable(Type.Number({ description: 'Exclusive; null for the open upper end.' })),
    picks: Type.Integer({ minimum: 0 }),
  },
  { description: 'Picks in the CLV mean whose CLV (percent) is in [low_pct, high_pct); null is an open end.' },
);

const REFERENCE_COVERAGE_ROW = resourceObject(
  'TrackRecordReferenceCoverage',
  {
    bookmaker: Type.String({ description: 'Feed bookmaker key (pinnacle, betfair_ex_eu, ...).' }),
    picks: Type.Integer({ minimum: 1 }),
    sharePct: Type.Number({ description: 'Percent of the settled engine picks in the window (manual picks have no reference), 2 decimals.' }),
  },
  { description: 'A sharp reference and the settled engine picks whose fair price it helped make.' },
);

const AVAILABILITY = resourceObject(
  'TrackRecordAvailability',
  {
    trackedPicks: Type.Integer({
      minimum: 0,
      description:
        'Settled engine picks of the window whose availability was known from their publication on (not manual picks, nor held picks an operator approved): the picks the three figures are made of.',
    }),
    availableAt5MinPct: nullable(
      Type.Number({
        json: 'available_at_5_min_pct',
        description: 'Percent of them still available 5 minutes after publication (at kickoff if that came sooner), 2 decimals; null when tracked_picks is 0.',
      }),
    ),
    availableAt30MinPct: nullable(Type.Number({ json: 'available_at_30_min_pct', description: 'The same 30 minutes after publication.' })),
    medianMinutesAvailable: nullable(
      Type.Number({
        description:
          'Median of the minutes each stayed available from publication: until its status first left available, or until kickoff (censored there); 2 decimals; null when tracked_picks is 0.',
      }),
    ),
  },
  { description: 'How long the picks stayed bettable at value after we sent them (docs/API.md, "Availability").' },
);

export const TRACK_RECORD = resource(
  'TrackRecord',
  {
    overall: OVERALL,
    // The contract bounds only the calibration; the other lists' GraphQL cost assumes their likely most.
    perSport: Type.Array(SPORT_ROW, {
      graphqlCostItems: SPORT_SLUGS.length,
      description: 'One row per sport with settled picks in the window, by sport.',
    }),
    perMarket: Type.Array(MARKET_ROW, {
      graphqlCostItems: MARKETS.length,
      description: 'One row per market (h2h, spreads, totals) with settled picks in the window, by market.',
    }),
    // One point per day of the window (DAYS_BACK.max days, and the day it started in).
    series: Type.Array(SERIES_POINT, {
      graphqlCostItems: DAYS_BACK.max + 1,
      description: 'One row per UTC date of the window, oldest first, days without settlements included.',
    }),
    calibration: Type.Array(CALIBRATION_ROW, {
      minItems: CALIBRATION_ROWS,
      maxItems: CALIBRATION_ROWS,
      description: 'Always ten rows, [0, 0.1) ... [0.9, 1.0], of the fair probability at publication, over won and lost picks.',
    }),
    clvDistribution: Type.Array(CLV_BIN, {
      graphqlCostItems: CLV_BIN_EDGES.length + 1,
      description: 'Always twelve bins of CLV in percent over the picks in the CLV mean: below -10, 2-point bins up to 10, 10 and above.',
    }),
    referenceCoverage: Type.Array(REFERENCE_COVERAGE_ROW, {
      // A handful of references.
      graphqlCostItems: 10,
      description:
        'Per sharp reference, the settled engine picks whose fair price it helped make, most first; a consensus pick counts for each of its references. Empty without engine picks.',
    }),
    availability: AVAILABILITY,
  },
  {
    description:
      'Performance at flat 1-unit stakes of the picks settled in the window (docs/API.md, "Track record", gives every formula). Numbers are rounded to 2 decimals (p_value and brier_score to 4); an empty window gives zeros, and null for the statistics it leaves undefined.',
    example: {
      overall: {
        roiPct: 6.4,
        winRate: 52.5,
        totalSettled: 41,
        clvAvgPct: 2.1,
        clvCount: 39,
        edgeAvgPct: 7.35,
        avgOdds: 2.08,
        clvPositivePct: 66.67,
        roiCi95: [-24.1, 36.9],
        tScore: 0.42,
        pValue: 0.3383,
        maxDrawdownUnits: 5.12,
        maxDrawdownPct: 512,
        longestLosingStreak: 6,
        brierScore: 0.2431,
      },
      perSport: [{ sport: 'soccer', roiPct: 6.4, totalSettled: 41 }],
      perMarket: [
        { market: 'h2h', roiPct: 4.1, totalSettled: 25, clvAvgPct: 1.8 },
        { market: 'totals', roiPct: 10, totalSettled: 16, clvAvgPct: 2.6 },
      ],
      series: [
        { date: '2026-11-21', cumulativePnlUnits: 2.4, cumulativePnlPct: 240 },
        { date: '2026-11-22', cumulativePnlUnits: 2.62, cumulativePnlPct: 262 },
      ],
      calibration: Array.from({ length: CALIBRATION_ROWS }, (_, row) => ({
        low: row / 10,
        high: (row + 1) / 10,
        picks: row === 4 ? 23 : row === 5 ? 16 : 0,
        expectedWinRate: row === 4 ? 45.2 : row === 5 ? 54.8 : null,
        actualWinRate: row === 4 ? 47.83 : row === 5 ? 56.25 : null,
      })),
      clvDistribution: [null, -10, -8, -6, -4, -2, 0, 2, 4, 6, 8, 10].map((low, bin) => ({
        lowPct: low,
        highPct: bin === 11 ? null : -10 + 2 * bin,
        picks: [0, 0, 0, 1, 3, 9, 14, 8, 3, 1, 0, 0][bin]!,
      })),
      referenceCoverage: [
        { bookmaker: 'pinnacle', picks: 41, sharePct: 100 },
        { bookmaker: 'betfair_ex_eu', picks: 25, sharePct: 60.98 },
      ],
      availability: { trackedPicks: 41, availableAt5MinPct: 85.37, availableAt30MinPct: 51.22, medianMinutesAvailable: 34.5 },
    },
  },
);
