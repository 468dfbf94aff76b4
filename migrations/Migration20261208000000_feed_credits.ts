import { Migration } from '@mikro-orm/migrations';

/**
 * Feed credits (docs/VALUE_ENGINE.md, "Feed credits"): one row per UTC month of what the odds feed
 * cost, shared by every instance. used_credits follows the feed's x-requests-used when it sends
 * it (a restart, another instance or another tool on the same key all count), else the credits
 * the requests cost by v4's formula; reserve_spent is what closing polls took from the reserve. A
 * stop (the feed reported no credits left) holds for the month, until the budget changes or the
 * feed reports credits again.
 */
export class Migration20261208000000FeedCredits extends Migration {
  override async up(): Promise<void> {
    this.addSql(`
      create table feed_credit_months (
        month text primary key check (month ~ '^[0-9]{4}-[0-9]{2}$'),
        used_credits bigint not null default 0 check (used_credits >= 0),
        counted_credits bigint not null default 0 check (counted_credits >= 0),
        reserve_spent bigint not null default 0 check (reserve_spent >= 0),
        feed_used bigint null check (feed_used >= 0),
        feed_remaining bigint null check (feed_remaining >= 0),
        feed_reported_at timestamptz null,
        stopped_reason text null check (stopped_reason in ('feed_reports_no_credits')),
        stopped_at timestamptz null,
        stopped_budget bigint null,
        updated_at timestamptz not null
      )`);
  }

  override async down(): Promise<void> {
    this.addSql('drop table feed_credit_months');
  }
}
