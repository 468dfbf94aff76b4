import { Migration } from '@mikro-orm/migrations';

/**
 * reference_markets: every poll now refreshes a reference's time when its last_update moved (the
 * close is dated by it exactly), an update of one unindexed column. Half of each page is left
 * free so the new version fits on its own page (a HOT update, pruned on the page's next access):
 * without it most updates went to other pages with new index entries, and the embedded database,
 * which has no autovacuum, kept every dead version (about 6 KB a row after 23 polls).
 */
export class Migration20261206000000ReferenceRefresh extends Migration {
  override async up(): Promise<void> {
    this.addSql('alter table reference_markets set (fillfactor = 50)');
  }

  override async down(): Promise<void> {
    this.addSql('alter table reference_markets reset (fillfactor)');
  }
}
