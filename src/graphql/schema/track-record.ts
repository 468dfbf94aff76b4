import { MINIMUM_TIER } from '../../domain/access.js';
import { DAYS_BACK } from '../../domain/bounds.js';
import { boundedInt } from '../argument-guard.js';
import type { TrackRecord } from '../../domain/track-record.js';
import { builder } from '../builder.js';
import { SPORT_SLUGS } from '../../domain/sports.js';
import { MARKETS } from '../../domain/market.js';

type Overall = TrackRecord['overall'];
type SportRow = TrackRecord['perSport'][number];
type MarketRow = TrackRecord['perMarket'][number];
type SeriesPoint = TrackRecord['series'][number];

const OverallRef = builder.objectRef<Overall>('TrackRecordOverall').implement({
  fields: (t) => ({
    roiPct: t.exposeFloat('roiPct'),
    winRate: t.exposeFloat('winRate', { description: 'Percent of non-void picks won (half wins count).' }),
    totalSettled: t.exposeInt('totalSettled', { description: 'All settled picks in the window, void included.' }),
    clvAvgPct: t.exposeFloat('clvAvgPct'),
    clvCount: t.exposeInt('clvCount', { description: 'Settled picks in the CLV mean: those with a closing line that was not stale.' }),
    edgeAvgPct: t.exposeFloat('edgeAvgPct'),
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
    cumulativePnlPct: t.exposeFloat('cumulativePnlPct'),
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
