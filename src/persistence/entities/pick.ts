import { defineEntity, p } from '@mikro-orm/core';
import type { EdgeTier } from '../../domain/odds.js';
import type { PickResult, PickStatus } from '../../domain/pick.js';

/** One published (or held) bet. Holds everything both the v1 Pick and the public pick need. */
export const PickSchema = defineEntity({
  name: 'Pick',
  tableName: 'picks',
  properties: {
    id: p.uuid().primary(),
    sport: p.text(),
    league: p.text(),
    homeTeam: p.text(),
    awayTeam: p.text(),
    kickoffAt: p.datetime(),
    market: p.text(),
    selection: p.text(),
    description: p.text(),
    bookmakerName: p.text(),
    bookmakerSlug: p.text(),
    odds: p.decimal('number').precision(10).scale(4),
    referenceFairOdds: p.decimal('number').precision(10).scale(4),
    taxRate: p.decimal('number').precision(6).scale(5),
    edgePct: p.decimal('number').precision(12).scale(4),
    edgePctPostTax: p.decimal('number').precision(12).scale(6),
    kellyFraction: p.decimal('number').precision(12).scale(6),
    edgeTier: p.text().$type<EdgeTier>(),
    confidence: p.smallint(),
    status: p.text().$type<PickStatus>(),
    result: p.text().$type<PickResult>().nullable(),
    closingOdds: p.decimal('number').precision(10).scale(4).nullable(),
    publishedAt: p.datetime().nullable(),
    settledAt: p.datetime().nullable(),
    createdAt: p.datetime(),
    updatedAt: p.datetime(),
  },
});

export class PickEntity extends PickSchema.class {}
PickSchema.setClass(PickEntity);
