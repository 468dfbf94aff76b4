import { Migration } from '@mikro-orm/migrations';

/**
 * Requests taken back from a month's count (docs/RATE_LIMITING.md, "The month invariant"): an
 * admitted request answered 5xx, or one Redis counted while the fallback answered it. Both
 * columns only grow, so the limiters' absolute writes stay idempotent and order-free:
 * request_count (what is billed) = admitted - refunded_count, and a write is kept only when it
 * has admitted or refunded more than the stored row.
 */
export class Migration20261129000000UsageRefunds extends Migration {
  override async up(): Promise<void> {
    // '0' as the entity declares it: the schema comparison reads the default back as text.
    this.addSql("alter table monthly_usage add column refunded_count bigint not null default '0'");
    this.addSql('alter table monthly_usage add constraint monthly_usage_refunded_count_check check (refunded_count >= 0)');
  }

  override async down(): Promise<void> {
    this.addSql('alter table monthly_usage drop column refunded_count');
  }
}
