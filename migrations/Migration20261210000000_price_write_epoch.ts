import { Migration } from '@mikro-orm/migrations';

/**
 * The write epoch of odds_latest: every statement that writes the table takes the sequence's
 * next number, so the value engine's memory of the prices it wrote is used only while nobody
 * else wrote in between (docs/VALUE_ENGINE.md, "What an odds poll stores and creates").
 */
export class Migration20261210000000PriceWriteEpoch extends Migration {
  override async up(): Promise<void> {
    this.addSql('create sequence odds_latest_writes');
  }

  override async down(): Promise<void> {
    this.addSql('drop sequence odds_latest_writes');
  }
}
