import { Migration } from '@mikro-orm/migrations';

/**
 * The track record per market (docs/API.md, "Track record": `per_market`, the `market` scope):
 * the day sums are kept per (day, sport, market, result). Every settled pick so far is h2h or
 * was published by hand with its market; the rows are rebuilt from the picks.
 */
export class Migration20261201100000TrackRecordMarkets extends Migration {
  override async up(): Promise<void> {
    this.addSql('delete from track_record_days');
    this.addSql(`alter table track_record_days add column market text not null default 'h2h'`);
    this.addSql('alter table track_record_days drop constraint track_record_days_pkey');
    this.addSql('alter table track_record_days add primary key (day, sport, market, result)');
    this.addSql(`
      insert into track_record_days (day, sport, market, result, count, sum_odds, sum_edge_pct, count_with_closing, sum_clv_pct)
      select (settled_at at time zone 'UTC')::date, sport, market, result, count(*), sum(odds), sum(edge_pct),
             count(case when not closing_stale then closing_odds end),
             coalesce(sum(100 * (odds / (case when not closing_stale then closing_odds end) - 1)), 0)
        from picks where status = 'settled'
       group by 1, 2, 3, 4`);
  }

  override async down(): Promise<void> {
    this.addSql('delete from track_record_days');
    this.addSql('alter table track_record_days drop constraint track_record_days_pkey');
    this.addSql('alter table track_record_days drop column market');
    this.addSql('alter table track_record_days add primary key (day, sport, result)');
    this.addSql(`
      insert into track_record_days (day, sport, result, count, sum_odds, sum_edge_pct, count_with_closing, sum_clv_pct)
      select (settled_at at time zone 'UTC')::date, sport, result, count(*), sum(odds), sum(edge_pct),
             count(case when not closing_stale then closing_odds end),
             coalesce(sum(100 * (odds / (case when not closing_stale then closing_odds end) - 1)), 0)
        from picks where status = 'settled'
       group by 1, 2, 3`);
  }
}
