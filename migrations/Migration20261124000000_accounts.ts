import { Migration } from '@mikro-orm/migrations';

/**
 * Customer accounts and the dashboard (docs/DASHBOARD.md): accounts (scrypt password hash,
 * tier), API keys optionally owned by an account, dashboard sessions (SHA-256 of the cookie
 * token only), failed sign-ins for throttling (hashed subjects), and the deployment's
 * dashboard secret (CSRF cookie signing), created on first use.
 */
export class Migration20261124000000Accounts extends Migration {
  override async up(): Promise<void> {
    this.addSql(`
      create table accounts (
        id uuid primary key,
        email text not null unique check (email = lower(email) and length(email) between 3 and 254),
        password_hash text not null,
        tier text not null check (tier in ('starter', 'growth', 'enterprise')),
        created_at timestamptz not null,
        updated_at timestamptz not null
      )`);
    this.addSql('alter table api_keys add column account_id uuid references accounts (id)');
    this.addSql('create index api_keys_account_idx on api_keys (account_id, created_at desc) where account_id is not null');
    this.addSql(`
      create table dashboard_sessions (
        id uuid primary key,
        token_hash text not null unique check (token_hash ~ '^[0-9a-f]{64}$'),
        account_id uuid not null references accounts (id) on delete cascade,
        created_at timestamptz not null,
        last_seen_at timestamptz not null,
        expires_at timestamptz not null
      )`);
    this.addSql('create index dashboard_sessions_account_idx on dashboard_sessions (account_id)');
    this.addSql('create index dashboard_sessions_expires_idx on dashboard_sessions (expires_at)');
    this.addSql(`
      create table login_failures (
        id uuid primary key,
        scope text not null check (scope in ('account', 'ip')),
        subject text not null check (subject ~ '^[0-9a-f]{64}$'),
        failed_at timestamptz not null
      )`);
    this.addSql('create index login_failures_subject_idx on login_failures (scope, subject, failed_at)');
    this.addSql('create index login_failures_failed_at_idx on login_failures (failed_at)');
    this.addSql(`
      create table dashboard_secret (
        singleton boolean primary key default true check (singleton),
        secret text not null check (secret ~ '^[0-9a-f]{64}$'),
        created_at timestamptz not null
      )`);
  }

  override async down(): Promise<void> {
    this.addSql('drop table if exists dashboard_secret');
    this.addSql('drop table if exists login_failures');
    this.addSql('drop table if exists dashboard_sessions');
    this.addSql('drop index if exists api_keys_account_idx');
    this.addSql('alter table api_keys drop column if exists account_id');
    this.addSql('drop table if exists accounts');
  }
}
