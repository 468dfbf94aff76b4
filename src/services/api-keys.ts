import type { Clock } from '../domain/clock.js';
import { apiKeyDisplayPrefix, generateApiKey, hashApiKey, type Tier } from '../domain/api-key.js';
import { InvalidParameterError, NotFoundError } from '../domain/errors.js';
import { ApiKeyEntity } from '../persistence/entities/api-key.js';
import type { Orm } from '../persistence/orm.js';
import { newId } from './ids.js';
import { isUuid } from './picks.js';

export interface CreatedApiKey {
  /** The plaintext key: returned once, never stored. */
  key: string;
  apiKey: ApiKeyEntity;
}

export const LABEL_MAX_LENGTH = 100;

export class ApiKeyService {
  constructor(
    private readonly orm: Orm,
    private readonly clock: Clock,
  ) {}

  async create(input: { tier: Tier; label?: string | null }): Promise<CreatedApiKey> {
    const label = input.label == null ? null : input.label.trim();
    if (label !== null && (label === '' || label.length > LABEL_MAX_LENGTH)) {
      throw new InvalidParameterError('label', `label must be 1 to ${LABEL_MAX_LENGTH} characters`);
    }
    const key = generateApiKey();
    const em = this.orm.em.fork();
    const apiKey = em.create(ApiKeyEntity, {
      id: newId(),
      keyHash: hashApiKey(key),
      displayPrefix: apiKeyDisplayPrefix(key),
      tier: input.tier,
      label,
      createdAt: this.clock.now(),
      revokedAt: null,
      lastUsedAt: null,
    });
    await em.flush();
    return { key, apiKey };
  }

  /** Idempotent: revoking a revoked key keeps its first revocation time. */
  async revoke(id: string): Promise<ApiKeyEntity> {
    if (!isUuid(id)) throw new NotFoundError(`No API key with id ${id}.`);
    const em = this.orm.em.fork();
    const apiKey = await em.findOne(ApiKeyEntity, { id });
    if (!apiKey) throw new NotFoundError(`No API key with id ${id}.`);
    if (!apiKey.revokedAt) {
      apiKey.revokedAt = this.clock.now();
      await em.flush();
    }
    return apiKey;
  }

  async list(): Promise<ApiKeyEntity[]> {
    return this.orm.em.fork().find(ApiKeyEntity, {}, { orderBy: { createdAt: 'desc', id: 'desc' } });
  }

  /** The active key with this SHA-256, or null (unknown or revoked). */
  async findActiveByHash(keyHash: string): Promise<ApiKeyEntity | null> {
    const apiKey = await this.orm.em.fork().findOne(ApiKeyEntity, { keyHash });
    if (!apiKey || apiKey.revokedAt) return null;
    return apiKey;
  }
}
