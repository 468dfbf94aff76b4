import { Migration } from '@mikro-orm/migrations';

/**
 * Settlement that cannot go wrong quietly (docs/VALUE_ENGINE.md, "Settlement"):
 * - a feed event id reused for a new fixture starts a new generation of the event, and an engine
 *   pick's slot becomes (event id, generation, market, selection), so an old final never
 *   settles a new fixture's picks and the new fixture gets picks of its own;
 * - the event keeps the score record it was settled from (by team name) and the reference's raw
 *   prices behind its closing line, so both can be written into the pick's provenance;
 * - a closing line older than CLOSING_LINE_MAX_AGE_SECONDS at kickoff is marked stale and left
 *   out of the track record's CLV average (no close before this migration is marked stale, so
 *   the existing day sums stay right).
 */
export class Migration20261128000000SettlementSafety extends Migration {
  override async up(): Promise<void> {
    this.addSql(`alter table odds_events
      add column generation integer not null default 0,
      add column reference_prices jsonb,
      add column final_record jsonb`);
    this.addSql(`alter table picks
      add column event_generation integer not null default 0,
      add column closing_stale boolean not null default false`);
    this.addSql(`drop index picks_event_selection_unique`);
    this.addSql(`create unique index picks_event_selection_unique on picks (event_id, event_generation, market, selection) where event_id is not null`);
  }

  override async down(): Promise<void> {
    this.addSql(`drop index picks_event_selection_unique`);
    this.addSql(`delete from picks p using picks q where p.event_id = q.event_id and p.market = q.market and p.selection = q.selection and p.event_generation < q.event_generation`);
    this.addSql(`create unique index picks_event_selection_unique on picks (event_id, market, selection) where event_id is not null`);
    this.addSql(`alter table picks drop column closing_stale, drop column event_generation`);
    this.addSql(`alter table odds_events drop column final_record, drop column reference_prices, drop column generation`);
  }
}
