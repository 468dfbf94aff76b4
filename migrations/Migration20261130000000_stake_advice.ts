import { Migration } from '@mikro-orm/migrations';

/**
 * The stake advice stored with each pick (docs/API.md, "Pick": `stake_pct`): a quarter of full
 * Kelly in percent of the bankroll, at most 2, as the defaults of STAKE_KELLY_MULTIPLIER and
 * STAKE_MAX_PCT compute it. Picks published before it get the same advice from their stored
 * full Kelly, so every pick carries one.
 */
export class Migration20261130000000StakeAdvice extends Migration {
  override async up(): Promise<void> {
    this.addSql('alter table picks add column stake_pct numeric(6,2) null');
    this.addSql('update picks set stake_pct = least(2, round(100 * 0.25 * kelly_fraction, 2))');
    this.addSql('alter table picks alter column stake_pct set not null');
    this.addSql('alter table picks add constraint picks_stake_pct_check check (stake_pct >= 0 and stake_pct <= 100)');
  }

  override async down(): Promise<void> {
    this.addSql('alter table picks drop column stake_pct');
  }
}
