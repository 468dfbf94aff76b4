import { MINIMUM_TIER } from '../../domain/access.js';
import { DAYS_BACK } from '../../domain/bounds.js';
import { TRACK_RECORD } from '../../domain/track-record-shape.js';
import { boundedInt } from '../argument-guard.js';
import { builder } from '../builder.js';
import { resourceObjectType } from '../resource-types.js';

/** TrackRecord and its nested types, as declared (src/domain/track-record-shape.ts). */
const TrackRecordRef = resourceObjectType(TRACK_RECORD);

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
