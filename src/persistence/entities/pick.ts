import { defineEntity, p, type EmptyOptions, type UniversalPropertyOptionsBuilder } from '@mikro-orm/core';
import { VISIBLE_STATUSES } from '../../domain/pick.js';
import { factsOf, PICK_FIELD_NAMES, PICK_FIELDS, type FieldFacts, type PickRecord, type Storage } from '../../domain/pick-shape.js';
import { codesIn, columnNameOf, statusIn, valueIn } from '../sql.js';

const VISIBLE = statusIn(VISIBLE_STATUSES);

/** The column of one storage kind (named by the naming strategy: the field in snake_case). */
function columnOf(storage: Storage) {
  switch (storage.kind) {
    case 'uuid':
      return p.uuid();
    case 'text':
      return p.text();
    case 'smallint':
      return p.smallint();
    case 'integer':
      return p.integer();
    case 'datetime':
      return p.datetime();
    case 'decimal':
      return p.decimal('number').precision(storage.precision).scale(storage.scale);
    case 'codes':
      // [] by default: rows written with SQL alone (benchmarks, fixtures) have no codes.
      return p.json<string[]>().default('[]');
  }
}

type TextColumnKeys = ReturnType<typeof p.text> extends UniversalPropertyOptionsBuilder<unknown, unknown, infer Keys> ? Keys : never;

/** A declared field's column, typed as the record types it (defineEntity infers the entity's type from these). */
type RecordColumns = {
  [F in keyof PickRecord]: UniversalPropertyOptionsBuilder<
    Exclude<PickRecord[F], null>,
    null extends PickRecord[F] ? Omit<EmptyOptions, 'nullable'> & { nullable: true } : EmptyOptions,
    TextColumnKeys
  >;
};

/** The columns of the pick's declared fields (src/domain/pick-shape.ts); the entity's own columns follow. */
const recordProperties = Object.fromEntries(
  PICK_FIELD_NAMES.map((name) => {
    const facts: FieldFacts = PICK_FIELDS[name];
    const column = columnOf(facts.storage);
    if (name === 'id') return [name, column.primary()];
    if (facts.nullable) return [name, column.nullable()];
    // Rows written with SQL alone (benchmarks, fixtures) and rows older than the field start at its default.
    return [name, facts.default === undefined ? column : (column as ReturnType<typeof p.text>).default(facts.default as string)];
  }),
) as unknown as RecordColumns;

/** The checks of the fields whose values are a closed list. */
const valueChecks = PICK_FIELD_NAMES.flatMap((name) => {
  const { values } = factsOf(name);
  const column = columnNameOf(name);
  if (values === undefined) return [];
  return [{ name: `picks_${column}_check`, expression: factsOf(name).storage.kind === 'codes' ? codesIn(column, values) : valueIn(column, values) }];
});

/** One published (or held) bet. Holds everything both the v1 Pick and the public pick need. */
export const PickSchema = defineEntity({
  name: 'Pick',
  tableName: 'picks',
  properties: {
    ...recordProperties,
    createdAt: p.datetime(),
    updatedAt: p.datetime(),
    /** The odds feed's event id of an engine pick; null for a pick published by hand. */
    eventId: p.text().nullable(),
    /** How the engine found the pick (PickProvenance); null for a pick published by hand. */
    provenance: p.json<Record<string, unknown>>().nullable(),
    /** Which fixture of a reused feed event id the pick belongs to (odds_events.generation); 0 for manual picks. */
    eventGeneration: p.integer().default(0),
    /**
     * An engine pick's availability as the track record counts it, fixed at settlement from its
     * changes (src/domain/availability.ts): the status 5 and 30 minutes after publication (kickoff
     * if sooner) and the minutes it stayed available; null for a pick never checked.
     */
    availabilityAt5Min: p.text().fieldName('availability_at_5_min').nullable(),
    availabilityAt30Min: p.text().fieldName('availability_at_30_min').nullable(),
    availableMinutes: p.decimal('number').precision(12).scale(3).nullable(),
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
  // At most one pick per (event, generation, market, selection, line), ever: the engine's duplicate
  // guard. The migration creates it NULLS NOT DISTINCT (an h2h pick's missing line is one value),
  // which MikroORM cannot declare; its schema comparison does not read that flag.
  uniques: [{ name: 'picks_event_selection_unique', properties: ['eventId', 'eventGeneration', 'market', 'selection', 'line'], where: 'event_id is not null' }],
  checks: [
    { name: 'picks_odds_check', expression: 'odds > 1' },
    { name: 'picks_reference_fair_odds_check', expression: 'reference_fair_odds > 1' },
    { name: 'picks_tax_rate_check', expression: 'tax_rate >= 0 and tax_rate < 1' },
    { name: 'picks_kelly_fraction_check', expression: 'kelly_fraction >= 0' },
    { name: 'picks_confidence_check', expression: 'confidence >= 0 and confidence <= 100' },
    ...valueChecks,
    { name: 'picks_closing_odds_check', expression: 'closing_odds > 1' },
    { name: 'picks_stake_pct_check', expression: 'stake_pct >= 0 and stake_pct <= 100' },
    // A line exactly when the market has one (h2h has none).
    { name: 'picks_line_check', expression: "(market = 'h2h') = (line is null)" },
    {
      name: 'picks_settlement_consistent',
      expression: "(status = 'settled') = (result is not null) and (status = 'settled') = (settled_at is not null)",
    },
  ],
});

export class PickEntity extends PickSchema.class {}
PickSchema.setClass(PickEntity);
