import { Migration } from '@mikro-orm/migrations';

/**
 * Record statistics (docs/API.md, "Track record": significance, drawdown, losing streak,
 * calibration, CLV distribution): one summary per UTC day and scope (sport or '*', market or
 * '*'), recomputed in each settlement's transaction. The application fills the days settled
 * before this migration at start (the summaries are computed by its code, not by SQL).
 */
export class Migration20261205000000RecordStatistics extends Migration {
  override async up(): Promise<void> {
    this.addSql(`
      create table track_record_day_stats (
        day date not null,
        sport text not null,
        market text not null,
        summary jsonb not null,
        primary key (day, sport, market)
      )`);
  }

  override async down(): Promise<void> {
    this.addSql('drop table track_record_day_stats');
  }
}
