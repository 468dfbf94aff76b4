import { defineEntity, p } from '@mikro-orm/core';
import type { EdgeTier } from '../../domain/odds.js';
import { PICK_STATUSES, VISIBLE_STATUSES, type PickResult, type PickStatus } from '../../domain/pick.js';
import { statusIn } from '../sql.js';

const VISIBLE = statusIn(VISIBLE_STATUSES);

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
    /** The odds feed's event id of an engine pick; null for a pick published by hand. */
    eventId: p.text().nullable(),
    /** How the engine found the pick (PickProvenance); null for a pick published by hand. */
    provenance: p.json<Record<string, unknown>>().nullable(),
    /** Which fixture of a reused feed event id the pick belongs to (odds_events.generation); 0 for manual picks. */
    eventGeneration: p.integer().default(0),
    /** The stored closing line was older than CLOSING_LINE_MAX_AGE_SECONDS at kickoff: kept, shown, left out of the CLV average. */
    closingStale: p.boolean().default(false),
  },
  // The read paths' partial indexes (src/persistence/picks-repository.ts, track-record-repository.ts).
  indexes: [
    { name: 'picks_visible_kickoff_idx', columns: [{ name: 'kickoff_at', sort: 'desc' }, { name: 'id', sort: 'desc' }], where: VISIBLE },
    { name: 'picks_visible_sport_kickoff_idx', columns: [{ name: 'sport' }, { name: 'kickoff_at', sort: 'desc' }, { name: 'id', sort: 'desc' }], where: VISIBLE },
    { name: 'picks_visible_league_kickoff_idx', columns: [{ name: 'league' }, { name: 'kickoff_at', sort: 'desc' }, { name: 'id', sort: 'desc' }], where: VISIBLE },
    { name: 'picks_visible_published_idx', properties: ['publishedAt'], where: VISIBLE },
    { name: 'picks_visible_sport_published_idx', properties: ['sport', 'publishedAt'], where: VISIBLE },
    { name: 'picks_settled_at_idx', properties: ['settledAt'], where: "status = 'settled'" },
    { name: 'picks_review_queue_idx', properties: ['createdAt', 'id'], where: "status = 'admin_review'" },
    { name: 'picks_open_event_idx', properties: ['eventId'], where: "event_id is not null and status in ('published', 'admin_review')" },
  ],
  // At most one pick per (event, generation, market, selection), ever: the engine's duplicate guard.
  uniques: [{ name: 'picks_event_selection_unique', properties: ['eventId', 'eventGeneration', 'market', 'selection'], where: 'event_id is not null' }],
  checks: [
    { name: 'picks_odds_check', expression: 'odds > 1' },
    { name: 'picks_reference_fair_odds_check', expression: 'reference_fair_odds > 1' },
    { name: 'picks_tax_rate_check', expression: 'tax_rate >= 0 and tax_rate < 1' },
    { name: 'picks_kelly_fraction_check', expression: 'kelly_fraction >= 0' },
    { name: 'picks_edge_tier_check', expression: "edge_tier in ('big_edge', 'stark', 'standard')" },
    { name: 'picks_confidence_check', expression: 'confidence >= 0 and confidence <= 100' },
    { name: 'picks_status_check', expression: statusIn(PICK_STATUSES) },
    { name: 'picks_result_check', expression: "result in ('won', 'lost', 'void', 'half_won', 'half_lost')" },
    { name: 'picks_closing_odds_check', expression: 'closing_odds > 1' },
    {
      name: 'picks_settlement_consistent',
      expression: "(status = 'settled') = (result is not null) and (status = 'settled') = (settled_at is not null)",
    },
  ],
});

export class PickEntity extends PickSchema.class {}
PickSchema.setClass(PickEntity);
