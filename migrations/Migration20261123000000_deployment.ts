import { Migration } from '@mikro-orm/migrations';

/**
 * One row naming this deployment (this database). Instances that share a database share the
 * id; the Redis event bus prefixes its channels with it, so deployments of different
 * databases that share one Redis (staging next to tests, benchmarks) never see each other's
 * events.
 */
export class Migration20261123000000Deployment extends Migration {
  override async up(): Promise<void> {
    this.addSql(`
      create table deployment (
        singleton boolean primary key default true check (singleton),
        id uuid not null default gen_random_uuid(),
        created_at timestamptz not null default now()
      );
    `);
    this.addSql('insert into deployment default values;');
  }

  override async down(): Promise<void> {
    this.addSql('drop table deployment;');
  }
}
