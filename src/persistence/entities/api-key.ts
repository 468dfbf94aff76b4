import { defineEntity, p } from '@mikro-orm/core';
import type { Tier } from '../../domain/api-key.js';

/** A customer API key. Only the SHA-256 of the key is stored; displayPrefix helps people tell keys apart. */
export const ApiKeySchema = defineEntity({
  name: 'ApiKey',
  tableName: 'api_keys',
  properties: {
    id: p.uuid().primary(),
    keyHash: p.text().unique('api_keys_key_hash_key'),
    displayPrefix: p.text(),
    tier: p.text().$type<Tier>(),
    label: p.text().nullable(),
    createdAt: p.datetime(),
    revokedAt: p.datetime().nullable(),
    lastUsedAt: p.datetime().nullable(),
    /** The owning customer account; null for a free-standing key (docs/DASHBOARD.md). */
    accountId: p.uuid().nullable(),
  },
  indexes: [
    {
      name: 'api_keys_account_idx',
      columns: [{ name: 'account_id' }, { name: 'created_at', sort: 'desc' }],
      where: 'account_id is not null',
    },
  ],
  checks: [
    { name: 'api_keys_key_hash_check', expression: "key_hash ~ '^[0-9a-f]{64}$'" },
    { name: 'api_keys_tier_check', expression: "tier in ('starter', 'growth', 'enterprise')" },
  ],
});

export class ApiKeyEntity extends ApiKeySchema.class {}
ApiKeySchema.setClass(ApiKeyEntity);
