import { defineEntity, p } from '@mikro-orm/core';
import type { Tier } from '../../domain/api-key.js';

/** A customer API key. Only the SHA-256 of the key is stored; displayPrefix helps people tell keys apart. */
export const ApiKeySchema = defineEntity({
  name: 'ApiKey',
  tableName: 'api_keys',
  properties: {
    id: p.uuid().primary(),
    keyHash: p.text().unique(),
    displayPrefix: p.text(),
    tier: p.text().$type<Tier>(),
    label: p.text().nullable(),
    createdAt: p.datetime(),
    revokedAt: p.datetime().nullable(),
    lastUsedAt: p.datetime().nullable(),
    /** The owning customer account; null for a free-standing key (docs/DASHBOARD.md). */
    accountId: p.uuid().nullable(),
  },
});

export class ApiKeyEntity extends ApiKeySchema.class {}
ApiKeySchema.setClass(ApiKeyEntity);
