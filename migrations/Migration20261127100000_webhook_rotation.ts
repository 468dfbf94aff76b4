import { Migration } from '@mikro-orm/migrations';

/**
 * Secret rotation with an overlap: the secret a rotation replaced (encrypted like the current
 * one) and until when it still signs beside the new one (docs/WEBHOOKS.md "Secrets"). And the
 * replay of failed deliveries: attempt_base is the attempt count a replay started from, so a
 * replayed delivery runs the retry schedule from its start while its log keeps counting.
 */
export class Migration20261127100000WebhookRotation extends Migration {
  override async up(): Promise<void> {
    this.addSql('alter table webhook_subscriptions add column previous_secret_ciphertext text null');
    this.addSql('alter table webhook_subscriptions add column previous_secret_expires_at timestamptz null');
    this.addSql('alter table webhook_deliveries add column attempt_base int not null default 0');
  }

  override async down(): Promise<void> {
    this.addSql('alter table webhook_deliveries drop column attempt_base');
    this.addSql('alter table webhook_subscriptions drop column previous_secret_expires_at');
    this.addSql('alter table webhook_subscriptions drop column previous_secret_ciphertext');
  }
}
