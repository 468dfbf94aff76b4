import { Migration } from '@mikro-orm/migrations';

/** Finished webhook deliveries by age, for the retention job (src/services/retention.ts). */
export class Migration20261126000000LogRetention extends Migration {
  override async up(): Promise<void> {
    this.addSql(`create index webhook_deliveries_finished_idx on webhook_deliveries (updated_at) where status <> 'pending'`);
  }

  override async down(): Promise<void> {
    this.addSql('drop index webhook_deliveries_finished_idx');
  }
}
