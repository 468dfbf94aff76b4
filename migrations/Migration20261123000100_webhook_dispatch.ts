import { Migration } from '@mikro-orm/migrations';

/**
 * Webhook dispatch: a lease token per claim (a dispatcher only completes deliveries it still
 * holds), the due-delivery index including the lease, and the attempt log's retention index.
 */
export class Migration20261123000100WebhookDispatch extends Migration {
  override async up(): Promise<void> {
    this.addSql('alter table webhook_deliveries add column lease_token uuid');
    this.addSql('create index webhook_delivery_attempts_attempted_at_idx on webhook_delivery_attempts (attempted_at)');
    this.addSql('create index webhook_subscriptions_api_key_idx on webhook_subscriptions (api_key_id, created_at)');
  }

  override async down(): Promise<void> {
    this.addSql('drop index webhook_subscriptions_api_key_idx');
    this.addSql('drop index webhook_delivery_attempts_attempted_at_idx');
    this.addSql('alter table webhook_deliveries drop column lease_token');
  }
}
