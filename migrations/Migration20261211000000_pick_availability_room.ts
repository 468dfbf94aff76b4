import { Migration } from '@mikro-orm/migrations';

/**
 * picks: every odds poll rewrites the availability of each published pick before kickoff (its
 * check time at least), columns no index covers. A pick's row is about 1.3 KB, six to a full
 * page, so most of these updates found no room on their page and went elsewhere with a new
 * entry in each of the table's ten indexes (18 % HOT in the engine's benchmark; 2,227 pages for
 * 375 picks after 70 polls). With 30 % of each new page left free the new version fits beside
 * the old one, which the next update of the page prunes. The setting applies to pages written
 * from now on; existing pages keep their fill until rewritten.
 */
export class Migration20261211000000PickAvailabilityRoom extends Migration {
  override async up(): Promise<void> {
    this.addSql('alter table picks set (fillfactor = 70)');
  }

  override async down(): Promise<void> {
    this.addSql('alter table picks reset (fillfactor)');
  }
}
