/** Stream tokens: every query of stream_tokens (docs/API.md, "Frontends"). */
import type { Tier } from '../domain/api-key.js';
import type { Em } from './orm.js';
import { dateOf, jsonOf, numberOf } from './sql.js';

export interface StreamTokenRow {
  id: string;
  apiKeyId: string;
  tokenHash: string;
  origins: string[];
  expiresAt: Date;
  createdAt: Date;
}

/** A token with what its key is now: its tier, or null when the key is revoked. */
export interface StreamTokenLookup {
  apiKeyId: string;
  origins: string[];
  expiresAt: Date;
  keyTier: Tier | null;
}

export async function insertStreamToken(em: Em, row: StreamTokenRow): Promise<void> {
  await em.execute('insert into stream_tokens (id, api_key_id, token_hash, origins, expires_at, created_at) values (?, ?, ?, ?::jsonb, ?, ?)', [
    row.id,
    row.apiKeyId,
    row.tokenHash,
    JSON.stringify(row.origins),
    row.expiresAt.toISOString(),
    row.createdAt.toISOString(),
  ]);
}

/** How many tokens the key minted after `since`, and when the oldest of them was minted. */
export async function tokensMintedSince(em: Em, apiKeyId: string, since: Date): Promise<{ count: number; oldest: Date | null }> {
  const rows = await em.execute<{ count: string | number; oldest: unknown }[]>(
    'select count(*) as count, min(created_at) as oldest from stream_tokens where api_key_id = ? and created_at > ?',
    [apiKeyId, since.toISOString()],
  );
  const row = rows[0];
  return { count: numberOf(row?.count ?? 0), oldest: row?.oldest == null ? null : dateOf(row.oldest) };
}

export async function findStreamToken(em: Em, tokenHash: string): Promise<StreamTokenLookup | null> {
  const rows = await em.execute<Record<string, unknown>[]>(
    `select t.api_key_id, t.origins, t.expires_at, case when k.revoked_at is null then k.tier end as key_tier
       from stream_tokens t join api_keys k on k.id = t.api_key_id
      where t.token_hash = ?`,
    [tokenHash],
  );
  const row = rows[0];
  if (!row) return null;
  return {
    apiKeyId: String(row.api_key_id),
    origins: jsonOf<string[]>(row.origins),
    expiresAt: dateOf(row.expires_at),
    keyTier: row.key_tier == null ? null : (String(row.key_tier) as Tier),
  };
}

/** Retention: tokens that expired before `cutoff`. */
export async function deleteExpiredStreamTokens(em: Em, cutoff: Date): Promise<number> {
  const rows = await em.execute('delete from stream_tokens where expires_at < ? returning 1', [cutoff.toISOString()]);
  return rows.length;
}
