import { Migration } from '@mikro-orm/migrations';

/**
 * Several sharp references (docs/VALUE_ENGINE.md, "References"):
 * - reference_markets keeps each reference's last pre-kickoff market, keyed by bookmaker too; the
 *   close devigs the stored prices, so the fair prices the row kept go. Existing rows belong to the
 *   one reference of the time: the one their event's picks name, else Pinnacle (the default);
 * - picks.warnings (docs/API.md, "Warnings") replaces closing_stale, which becomes its stale_close.
 *   Engine picks found so far were priced by one reference (single_sharp_reference); those whose
 *   reference margin was above the default REFERENCE_MAX_MARGIN (8 %) get wide_reference_market.
 */
export class Migration20261203000000ReferenceConsensus extends Migration {
  override async up(): Promise<void> {
    this.addSql('alter table reference_markets add column bookmaker text');
    this.addSql(`
      update reference_markets r set bookmaker = coalesce(
        (select p.provenance ->> 'referenceBookmaker' from picks p
          where p.event_id = r.event_id and p.event_generation = r.generation and p.provenance ->> 'referenceBookmaker' is not null
          order by p.created_at limit 1),
        'pinnacle')`);
    this.addSql('alter table reference_markets alter column bookmaker set not null');
    this.addSql('alter table reference_markets drop constraint reference_markets_pkey');
    this.addSql('alter table reference_markets add primary key (event_id, generation, market, bookmaker)');
    this.addSql('alter table reference_markets drop column fair');

    this.addSql(`alter table picks add column warnings jsonb not null default '[]'`);
    this.addSql(`
      update picks p set warnings = (
        select coalesce(jsonb_agg(code order by position), '[]'::jsonb) from (
          select 1 as position, 'single_sharp_reference' as code where p.provenance ->> 'referenceBookmaker' is not null
          union all
          select 2, 'wide_reference_market'
           where (select sum(1 / (q ->> 'price')::numeric) - 1 from jsonb_array_elements(p.provenance -> 'referencePrices') q) > 0.08
          union all
          select 3, 'stale_close' where p.closing_stale
        ) codes)
      where p.provenance is not null or p.closing_stale`);
    this.addSql(
      `alter table picks add constraint picks_warnings_check check (jsonb_typeof(warnings) = 'array' and warnings <@ '["single_sharp_reference","wide_reference_market","stale_close"]'::jsonb)`,
    );
    this.addSql('alter table picks drop column closing_stale');
  }

  override async down(): Promise<void> {
    this.addSql('alter table picks add column closing_stale boolean not null default false');
    this.addSql(`update picks set closing_stale = warnings @> '["stale_close"]'::jsonb`);
    this.addSql('alter table picks drop constraint picks_warnings_check');
    this.addSql('alter table picks drop column warnings');
    this.addSql(`alter table reference_markets add column fair jsonb not null default '{}'`);
    this.addSql('alter table reference_markets drop constraint reference_markets_pkey');
    // One reference per market again: the first by name is kept.
    this.addSql(`
      delete from reference_markets r using reference_markets o
       where o.event_id = r.event_id and o.generation = r.generation and o.market = r.market and o.bookmaker < r.bookmaker`);
    this.addSql('alter table reference_markets add primary key (event_id, generation, market)');
    this.addSql('alter table reference_markets drop column bookmaker');
  }
}
