/** API keys: every query of api_keys. */
import type { ApiKeyRecord } from '../domain/account-records.js';
import type { Tier } from '../domain/api-key.js';
import { ApiKeyEntity } from './entities/api-key.js';
import type { Em } from './orm.js';

export function apiKeyRecordFromEntity(key: ApiKeyEntity): ApiKeyRecord {
  return {
    id: key.id,
    keyHash: key.keyHash,
    displayPrefix: key.displayPrefix,
    tier: key.tier,
    label: key.label ?? null,
    createdAt: key.createdAt,
    revokedAt: key.revokedAt ?? null,
    lastUsedAt: key.lastUsedAt ?? null,
    accountId: key.accountId ?? null,
  };
}

/** A new key in the unit of work of `em` (flushed with the transaction). */
export function insertApiKey(em: Em, key: Omit<ApiKeyRecord, 'revokedAt' | 'lastUsedAt'>): ApiKeyEntity {
  return em.create(ApiKeyEntity, { ...key, revokedAt: null, lastUsedAt: null });
}

/** Row-locks the key for the transaction of `em`; false when there is no such key. */
export async function lockApiKey(em: Em, id: string): Promise<boolean> {
  const rows = await em.execute('select id from api_keys where id = ? for update', [id]);
  return rows.length > 0;
}

export async function countActiveKeysOfAccount(em: Em, accountId: string): Promise<number> {
  const rows = await em.execute<{ count: string | number }[]>('select count(*) as count from api_keys where account_id = ? and revoked_at is null', [accountId]);
  return Number(rows[0]?.count ?? 0);
}

export function findApiKey(em: Em, id: string): Promise<ApiKeyEntity | null> {
  return em.findOne(ApiKeyEntity, { id });
}

export function findApiKeyOfAccount(em: Em, accountId: string, id: string): Promise<ApiKeyEntity | null> {
  return em.findOne(ApiKeyEntity, { id, accountId });
}

export function findApiKeyByHash(em: Em, keyHash: string): Promise<ApiKeyEntity | null> {
  return em.findOne(ApiKeyEntity, { keyHash });
}

/** Newest first; only the account's keys when accountId is given. */
export function listApiKeys(em: Em, filter: { accountId?: string } = {}): Promise<ApiKeyEntity[]> {
  return em.find(ApiKeyEntity, filter.accountId === undefined ? {} : { accountId: filter.accountId }, { orderBy: { createdAt: 'desc', id: 'desc' } });
}

/** Gives every key of the account another tier; returns the keys that changed. */
export async function setTierOfAccountKeys(em: Em, accountId: string, tier: Tier): Promise<{ id: string; keyHash: string }[]> {
  const rows = await em.execute<{ id: string; key_hash: string }[]>(
    'update api_keys set tier = ? where account_id = ? and tier <> ? returning id, key_hash',
    [tier, accountId, tier],
  );
  return rows.map((row) => ({ id: row.id, keyHash: row.key_hash }));
}

/** One statement for a batch of (key id, used at) pairs; never moves last_used_at backwards. */
export async function recordLastUsed(em: Em, uses: readonly (readonly [string, Date])[]): Promise<void> {
  if (uses.length === 0) return;
  const values = uses.map(() => '(?::uuid, ?::timestamptz)').join(', ');
  await em.execute(
    `update api_keys as k set last_used_at = greatest(coalesce(k.last_used_at, v.used_at), v.used_at)
       from (values ${values}) as v(id, used_at) where k.id = v.id`,
    uses.flatMap(([id, at]) => [id, at]),
  );
}
