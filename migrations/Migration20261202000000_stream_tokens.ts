import { Migration } from '@mikro-orm/migrations';

/**
 * Stream tokens (docs/API.md, "Frontends"): short-lived credentials that read one key's pick
 * stream from a browser. Only the token's SHA-256 is kept; rows go with their key.
 */
export class Migration20261202000000StreamTokens extends Migration {
  override async up(): Promise<void> {
    this.addSql(`
      create table stream_tokens (
        id uuid primary key,
        api_key_id uuid not null references api_keys (id) on delete cascade,
        token_hash text not null unique check (token_hash ~ '^[0-9a-f]{64}$'),
        origins jsonb not null,
        expires_at timestamptz not null,
        created_at timestamptz not null
      )`);
    this.addSql('create index stream_tokens_key_created_idx on stream_tokens (api_key_id, created_at)');
  }

  override async down(): Promise<void> {
    this.addSql('drop table stream_tokens');
  }
}
