import { Migration } from '@mikro-orm/migrations';

/**
 * Per (UTC day, sport, result) sums of settled picks: the track record reads whole days from
 * here instead of aggregating every settled pick of a 365-day window on each request.
 * Settlement is final, so the settlement transaction only ever adds to a row.
 */
export class Migration20261125000000TrackRecordDays extends Migration {
  override async up(): Promise<void> {
    this.addSql(`
      create table track_record_days (
        day date not null,
        sport text not null,
        result text not null,
        count integer not null,
        sum_odds numeric not null,
        sum_edge_pct numeric not null,
        count_with_closing integer not null,
        sum_clv_pct numeric not null,
        primary key (day, sport, result)
      )`);
    this.addSql(TRACK_RECORD_DAYS_BACKFILL);
  }

  override async down(): Promise<void> {
    this.addSql('drop table track_record_days');
  }
}

/** Rebuilds every row from the settled picks (the migration, and bench data inserted with SQL). */
export const TRACK_RECORD_DAYS_BACKFILL = `
  insert into track_record_days (day, sport, result, count, sum_odds, sum_edge_pct, count_with_closing, sum_clv_pct)
  select (settled_at at time zone 'UTC')::date, sport, result, count(*), sum(odds), sum(edge_pct), count(closing_odds),
         coalesce(sum(100 * (odds / closing_odds - 1)), 0)
    from picks where status = 'settled'
   group by 1, 2, 3
  on conflict (day, sport, result) do update set
    count = excluded.count, sum_odds = excluded.sum_odds, sum_edge_pct = excluded.sum_edge_pct,
    count_with_closing = excluded.count_with_closing, sum_clv_pct = excluded.sum_clv_pct`;
