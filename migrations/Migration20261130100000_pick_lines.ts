import { Migration } from '@mikro-orm/migrations';

/**
 * The line of a spreads or totals pick (docs/API.md, "Pick": `line`): the selected team's
 * handicap, or the total's point; null exactly for h2h picks, which every existing pick is.
 */
export class Migration20261130100000PickLines extends Migration {
  override async up(): Promise<void> {
    this.addSql('alter table picks add column line numeric(6,2) null');
    this.addSql("alter table picks add constraint picks_line_check check ((market = 'h2h') = (line is null))");
  }

  override async down(): Promise<void> {
    this.addSql('alter table picks drop column line');
  }
}
