import { MINIMUM_TIER } from '../../domain/access.js';
import { DAYS_BACK } from '../../domain/bounds.js';
import { boundedInt } from '../argument-guard.js';
import type { TrackRecordReport as TrackRecord } from '../../domain/track-record.js';
import { CALIBRATION_ROWS, CLV_BIN_EDGES } from '../../domain/record-statistics.js';
import { builder } from '../builder.js';
import { SPORT_SLUGS } from '../../domain/sports.js';
import { MARKETS } from '../../domain/market.js';

type Overall = TrackRecord['overall'];
type SportRow = TrackRecord['perSport'][number];
type MarketRow = TrackRecord['perMarket'][number];
type SeriesPoint = TrackRecord['series'][number];
type CalibrationRow = TrackRecord['calibration'][number];
type ClvBin = TrackRecord['clvDistribution'][number];

const OverallRef = builder.objectRef<Overall>('TrackRecordOverall').implement({
  fields: (t) => ({
    roiPct: t.exposeFloat('roiPct'),
    winRate: t.exposeFloat('winRate', { description: 'Percent of non-void picks won (half wins count).' }),
    totalSettled: t.exposeInt('totalSettled', { description: 'All settled picks in the window, void included.' }),
    clvAvgPct: t.exposeFloat('clvAvgPct'),
    clvCount: t.exposeInt('clvCount', { description: 'Settled picks in the CLV mean: those with a closing line that was not stale.' }),
    edgeAvgPct: t.exposeFloat('edgeAvgPct'),
    avgOdds: t.exposeFloat('avgOdds', { nullable: true, description: 'Mean odds of the non-void settled picks; null without any.' }),
    clvPositivePct: t.exposeFloat('clvPositivePct', { nullable: true, description: 'Percent of the picks in the CLV mean with CLV > 0; null when clvCount is 0.' }),
    roiCi95: t.exposeFloatList('roiCi95', {
      nullable: true,
      description: '[low, high] percent: 100 x (mean profit ± t(0.975, n - 1) x s / sqrt(n)) over the n non-void picks; null when n < 2 or s = 0.',
    }),
    tScore: t.exposeFloat('tScore', { nullable: true, description: 'mean profit / (s / sqrt(n)); null when n < 2 or s = 0.' }),
    pValue: t.exposeFloat('pValue', {
      nullable: true,
      description: 'One-sided, no edge as the null hypothesis: 1 - T(n - 1)(tScore), 4 decimals; null when n < 2 or s = 0.',
    }),
    maxDrawdownUnits: t.exposeFloat('maxDrawdownUnits', { description: 'Largest fall of the cumulative profit from a running peak (starting at 0), in units of stake.' }),
    maxDrawdownPct: t.exposeFloat('maxDrawdownPct', { description: 'maxDrawdownUnits x 100: the same drawdown in percent of one unit stake.' }),
    longestLosingStreak: t.exposeInt('longestLosingStreak', { description: 'Longest run of lost and half-lost picks (voids skipped, any win ends it).' }),
    brierScore: t.exposeFloat('brierScore', { nullable: true, description: 'Mean (fair probability - outcome)^2 over won and lost picks, 4 decimals; null without any.' }),
  }),
});

const CalibrationRowRef = builder.objectRef<CalibrationRow>('TrackRecordCalibration').implement({
  description: 'Won and lost picks whose fair probability at publication is in [low, high) (the last row includes 1).',
  fields: (t) => ({
    low: t.exposeFloat('low'),
    high: t.exposeFloat('high'),
    picks: t.exposeInt('picks'),
    expectedWinRate: t.exposeFloat('expectedWinRate', { nullable: true, description: 'Percent: the mean fair probability of the picks; null for an empty row.' }),
    actualWinRate: t.exposeFloat('actualWinRate', { nullable: true, description: 'Percent of the picks won; null for an empty row.' }),
  }),
});

const ClvBinRef = builder.objectRef<ClvBin>('TrackRecordClvBin').implement({
  description: 'Picks in the CLV mean whose CLV (percent) is in [lowPct, highPct); null is an open end.',
  fields: (t) => ({
    lowPct: t.exposeFloat('lowPct', { nullable: true }),
    highPct: t.exposeFloat('highPct', { nullable: true }),
    picks: t.exposeInt('picks'),
  }),
});

const SportRowRef = builder.objectRef<SportRow>('TrackRecordSport').implement({
  fields: (t) => ({
    sport: t.exposeString('sport'),
    roiPct: t.exposeFloat('roiPct'),
    totalSettled: t.exposeInt('totalSettled'),
  }),
});

const MarketRowRef = builder.objectRef<MarketRow>('TrackRecordMarket').implement({
  fields: (t) => ({
    market: t.exposeString('market', { description: 'h2h, spreads or totals.' }),
    roiPct: t.exposeFloat('roiPct'),
    totalSettled: t.exposeInt('totalSettled'),
    clvAvgPct: t.exposeFloat('clvAvgPct', { description: "Mean CLV of the market's settled picks with a closing line that was not stale." }),
  }),
});

const SeriesPointRef = builder.objectRef<SeriesPoint>('TrackRecordPoint').implement({
  fields: (t) => ({
    date: t.exposeString('date', { description: 'UTC date, YYYY-MM-DD.' }),
    cumulativePnlUnits: t.exposeFloat('cumulativePnlUnits', { description: 'Cumulative profit at the end of the day, in units of stake.' }),
    cumulativePnlPct: t.exposeFloat('cumulativePnlPct', { description: 'cumulativePnlUnits x 100: the same profit in percent of one unit stake.' }),
  }),
});

const ReferenceCoverageRef = builder.objectRef<TrackRecord['referenceCoverage'][number]>('TrackRecordReferenceCoverage').implement({
  description: 'A sharp reference and the settled engine picks whose fair price it helped make.',
  fields: (t) => ({
    bookmaker: t.exposeString('bookmaker', { description: 'Feed bookmaker key.' }),
    picks: t.exposeInt('picks'),
    sharePct: t.exposeFloat('sharePct', { description: 'Percent of the settled engine picks in the window (manual picks have no reference), 2 decimals.' }),
  }),
});

const TrackRecordRef = builder.objectRef<TrackRecord>('TrackRecord').implement({
  description: 'Performance of picks settled in the window, flat 1-unit stakes.',
  fields: (t) => ({
    overall: t.field({ type: OverallRef, resolve: (record) => record.overall }),
    perSport: t.field({ type: [SportRowRef], complexity: { field: 1, multiplier: SPORT_SLUGS.length }, resolve: (record) => record.perSport }),
    perMarket: t.field({ type: [MarketRowRef], complexity: { field: 1, multiplier: MARKETS.length }, resolve: (record) => record.perMarket }),
    // One point per day of the window (DAYS_BACK.max days, and the day it started in).
    series: t.field({ type: [SeriesPointRef], complexity: { field: 1, multiplier: DAYS_BACK.max + 1 }, resolve: (record) => record.series }),
    calibration: t.field({
      type: [CalibrationRowRef],
      description: 'Always ten rows of fair probability: [0, 0.1) ... [0.9, 1.0].',
      complexity: { field: 1, multiplier: CALIBRATION_ROWS },
      resolve: (record) => record.calibration,
    }),
    clvDistribution: t.field({
      type: [ClvBinRef],
      description: 'Always twelve bins of CLV in percent: below -10, 2-point bins up to 10, 10 and above.',
      complexity: { field: 1, multiplier: CLV_BIN_EDGES.length + 1 },
      resolve: (record) => record.clvDistribution,
    }),
    referenceCoverage: t.field({
      type: [ReferenceCoverageRef],
      description: 'Per reference, most picks first; a consensus pick counts for each of its references, so the shares may add up to more than 100.',
      // A handful of references: the cost of a list of them.
      complexity: { field: 1, multiplier: 10 },
      resolve: (record) => record.referenceCoverage,
    }),
  }),
});

builder.queryFields((t) => ({
  trackRecord: t.field({
    type: TrackRecordRef,
    authScopes: { tier: MINIMUM_TIER.trackRecord },
    args: {
      sport: t.arg.string(),
      market: t.arg.string({ description: 'Scope to one market: h2h, spreads or totals.' }),
      daysBack: boundedInt(t.arg, DAYS_BACK, 'Lookback window in days,'),
    },
    resolve: (_root, args, context) => context.services.trackRecord.get({ ...args, daysBack: args.daysBack ?? DAYS_BACK.default }),
  }),
}));
