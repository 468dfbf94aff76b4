import type { Clock } from '../domain/clock.js';
import { apiKeyDisplayPrefix, generateApiKey, hashApiKey, type Tier } from '../domain/api-key.js';
import { MAX_ACTIVE_KEYS_PER_ACCOUNT } from '../domain/account.js';
import { ApiKeyLimitError, InvalidParameterError, NotFoundError } from '../domain/errors.js';
import { checkText } from '../domain/text.js';
import type { ApiKeyRecord } from '../domain/account-records.js';
import { lockAccount } from '../persistence/accounts-repository.js';
import {
  apiKeyRecordFromEntity,
  countActiveKeysOfAccount,
  findApiKey,
  findApiKeyByHash,
  findApiKeyOfAccount,
  insertApiKey,
  listApiKeys,
} from '../persistence/api-keys-repository.js';
import type { Orm } from '../persistence/orm.js';
import { newId } from './ids.js';
import { isUuid } from '../domain/uuid.js';

export interface CreatedApiKey {
  /** The plaintext key: returned once, never stored. */
  key: string;
  apiKey: ApiKeyRecord;
}

export const LABEL_MAX_LENGTH = 100;

/** attachToAccount: attached now, already the account's, or why not (nothing changed). */
export type AttachOutcome = 'attached' | 'owned' | 'unknown_key' | 'other_account' | 'revoked' | 'other_tier' | 'key_limit';

export class ApiKeyService {
  constructor(
    private readonly orm: Orm,
    private readonly clock: Clock,
  ) {}

  /**
   * A new key. With accountId the key belongs to that account and carries its tier (tier may
   * be omitted, and must equal the account's when given); the account's row lock serialises
   * this against setAccountTier and against other creations (MAX_ACTIVE_KEYS_PER_ACCOUNT).
   * Without an account the tier is required (a free-standing key).
   */
  async create(input: { tier?: Tier | null; label?: string | null; accountId?: string | number | null }): Promise<CreatedApiKey> {
    // Labels tell keys apart in listings: no invisible or text-direction characters (src/domain/text.ts).
    const label = input.label == null ? null : checkText('label', input.label, 'name').trim();
    if (label !== null && (label === '' || label.length > LABEL_MAX_LENGTH || /\p{Cc}/u.test(label))) {
      throw new InvalidParameterError('label', `label must be 1 to ${LABEL_MAX_LENGTH} characters, without control characters`);
    }
    const accountId = input.accountId == null ? null : String(input.accountId);
    if (accountId === null && input.tier == null) throw new InvalidParameterError('tier', 'tier is required for a key without an account (accountId)');
    if (accountId !== null && !isUuid(accountId)) throw new NotFoundError(`No account with id ${accountId}.`);
    const key = generateApiKey();
    const apiKey = await this.orm.em.fork().transactional(async (em) => {
      let tier = input.tier ?? null;
      if (accountId !== null) {
        const account = await lockAccount(em, accountId);
        if (!account) throw new NotFoundError(`No account with id ${accountId}.`);
        if (tier !== null && tier !== account.tier) {
          throw new InvalidParameterError('tier', `keys of an account carry the account's tier (${account.tier}); omit tier or change the account's tier`);
        }
        tier = account.tier;
        if ((await countActiveKeysOfAccount(em, accountId)) >= MAX_ACTIVE_KEYS_PER_ACCOUNT) throw new ApiKeyLimitError(MAX_ACTIVE_KEYS_PER_ACCOUNT);
      }
      return insertApiKey(em, {
        id: newId(),
        keyHash: hashApiKey(key),
        displayPrefix: apiKeyDisplayPrefix(key),
        tier: tier!,
        label,
        createdAt: this.clock.now(),
        accountId,
      });
    });
    return { key, apiKey: apiKeyRecordFromEntity(apiKey) };
  }

  /**
   * Gives an existing free-standing key (by its plaintext) to an account: the embedded demo
   * account takes the demo key of its tier at every start (src/seed/demo-account.ts). Idempotent:
   * a key the account already owns answers 'owned'. A key is never taken from another account,
   * and only a key of the account's tier is given (an account's keys carry its tier), within the
   * account's active-key limit; the account's row lock serialises this against tier changes and
   * key creation.
   */
  async attachToAccount(accountId: string, key: string): Promise<AttachOutcome> {
    if (!isUuid(accountId)) throw new NotFoundError(`No account with id ${accountId}.`);
    return this.orm.em.fork().transactional(async (em) => {
      const account = await lockAccount(em, accountId);
      if (!account) throw new NotFoundError(`No account with id ${accountId}.`);
      const apiKey = await findApiKeyByHash(em, hashApiKey(key));
      if (!apiKey) return 'unknown_key';
      if (apiKey.accountId != null && apiKey.accountId !== accountId) return 'other_account';
      // A revoked key is no demo key to offer, owned or not.
      if (apiKey.revokedAt) return 'revoked';
      if (apiKey.accountId === accountId) return 'owned';
      if (apiKey.tier !== account.tier) return 'other_tier';
      if ((await countActiveKeysOfAccount(em, accountId)) >= MAX_ACTIVE_KEYS_PER_ACCOUNT) return 'key_limit';
      apiKey.accountId = accountId;
      return 'attached';
    });
  }

  /** Idempotent: revoking a revoked key keeps its first revocation time. */
  async revoke(id: string, owner: { accountId?: string } = {}): Promise<ApiKeyRecord> {
    if (!isUuid(id)) throw new NotFoundError(`No API key with id ${id}.`);
    const em = this.orm.em.fork();
    const apiKey = await findApiKey(em, id);
    // Another account's key is not_found: its existence is not revealed.
    if (!apiKey || (owner.accountId !== undefined && apiKey.accountId !== owner.accountId)) throw new NotFoundError(`No API key with id ${id}.`);
    if (!apiKey.revokedAt) {
      apiKey.revokedAt = this.clock.now();
      await em.flush();
    }
    return apiKeyRecordFromEntity(apiKey);
  }

  async list(): Promise<ApiKeyRecord[]> {
    return (await listApiKeys(this.orm.em.fork())).map(apiKeyRecordFromEntity);
  }

  /** The account's keys, newest first, revoked ones included. */
  async listForAccount(accountId: string): Promise<ApiKeyRecord[]> {
    return (await listApiKeys(this.orm.em.fork(), { accountId })).map(apiKeyRecordFromEntity);
  }

  /** One of the account's keys; not_found for an unknown id or another account's key. */
  async getForAccount(accountId: string, id: string): Promise<ApiKeyRecord> {
    const apiKey = isUuid(id) ? await findApiKeyOfAccount(this.orm.em.fork(), accountId, id) : null;
    if (!apiKey) throw new NotFoundError(`No API key with id ${id}.`);
    return apiKeyRecordFromEntity(apiKey);
  }

  /** The active key with this SHA-256, or null (unknown or revoked). */
  async findActiveByHash(keyHash: string): Promise<ApiKeyRecord | null> {
    const apiKey = await findApiKeyByHash(this.orm.em.fork(), keyHash);
    if (!apiKey || apiKey.revokedAt) return null;
    return apiKeyRecordFromEntity(apiKey);
  }
}
