import { Migration } from '@mikro-orm/migrations';

/**
 * Spreads and totals from the odds feed (docs/VALUE_ENGINE.md, "Markets and lines"):
 * - reference_markets: the reference's latest pre-kickoff fair prices per event generation and
 *   market key, with the line they were quoted at (the closing line of every market). The h2h
 *   closes kept on odds_events move here, and those columns go;
 * - odds_latest / odds_history name the market of each price: a team's h2h price and its
 *   handicap price are different prices (a line market's outcome carries its point, "Arsenal -0.5");
 * - one engine pick per (event, generation, market, selection, line), with a missing (h2h) line
 *   counting as one value: NULLS NOT DISTINCT, so two h2h picks of one selection still collide.
 */
export class Migration20261201000000MarketLines extends Migration {
  override async up(): Promise<void> {
    this.addSql(`
      create table reference_markets (
        event_id text not null,
        generation integer not null,
        market text not null,
        line numeric(6,2),
        fair jsonb not null,
        prices jsonb not null,
        updated_at timestamptz not null,
        primary key (event_id, generation, market)
      )`);
    this.addSql(`
      insert into reference_markets (event_id, generation, market, line, fair, prices, updated_at)
      select id, generation, 'h2h', null, reference_fair, coalesce(reference_prices, '[]'::jsonb), reference_updated_at
        from odds_events where reference_fair is not null and reference_updated_at is not null`);
    this.addSql('alter table odds_events drop column reference_fair, drop column reference_prices, drop column reference_updated_at');
    this.addSql(`alter table odds_latest add column market text not null default 'h2h'`);
    this.addSql('alter table odds_latest drop constraint odds_latest_pkey');
    this.addSql('alter table odds_latest add primary key (event_id, bookmaker, market, outcome)');
    this.addSql(`alter table odds_history add column market text not null default 'h2h'`);
    this.addSql('drop index picks_event_selection_unique');
    this.addSql(
      'create unique index picks_event_selection_unique on picks (event_id, event_generation, market, selection, line) nulls not distinct where event_id is not null',
    );
  }

  override async down(): Promise<void> {
    this.addSql(`delete from picks where event_id is not null and market <> 'h2h'`);
    this.addSql('drop index picks_event_selection_unique');
    this.addSql('create unique index picks_event_selection_unique on picks (event_id, event_generation, market, selection) where event_id is not null');
    this.addSql(`delete from odds_history where market <> 'h2h'`);
    this.addSql('alter table odds_history drop column market');
    this.addSql(`delete from odds_latest where market <> 'h2h'`);
    this.addSql('alter table odds_latest drop constraint odds_latest_pkey');
    this.addSql('alter table odds_latest drop column market');
    this.addSql('alter table odds_latest add primary key (event_id, bookmaker, outcome)');
    this.addSql('alter table odds_events add column reference_fair jsonb, add column reference_prices jsonb, add column reference_updated_at timestamptz');
    this.addSql(`
      update odds_events e set reference_fair = r.fair, reference_prices = r.prices, reference_updated_at = r.updated_at
        from reference_markets r where r.event_id = e.id and r.generation = e.generation and r.market = 'h2h'`);
    this.addSql('drop table reference_markets');
  }
}
