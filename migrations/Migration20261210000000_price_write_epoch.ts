import { Migration } from '@mikro-orm/migrations';

/**
 * The write epoch of odds_latest (docs/VALUE_ENGINE.md, "Odds history"): one row every writer of
 * the table increments inside its transaction before it writes. The row's lock orders the
 * writers by commit and a rollback gives the number back, so the value engine's memory of the
 * prices it wrote is used only while nobody else committed a write in between.
 */
export class Migration20261210000000PriceWriteEpoch extends Migration {
  override async up(): Promise<void> {
    this.addSql('create table odds_latest_epoch (only_row boolean primary key default true check (only_row), epoch bigint not null)');
    this.addSql('insert into odds_latest_epoch (only_row, epoch) values (true, 0)');
  }

  override async down(): Promise<void> {
    this.addSql('drop table odds_latest_epoch');
  }
}
