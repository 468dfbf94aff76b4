/**
 * Customer accounts (docs/DASHBOARD.md): created by an admin with email, password and tier;
 * a tier change is applied to every key of the account in the same transaction.
 */
import { normalizeEmail, validateNewPassword } from '../domain/account.js';
import type { Tier } from '../domain/api-key.js';
import type { Clock } from '../domain/clock.js';
import { DuplicateEmailError, NotFoundError } from '../domain/errors.js';
import { checkText, textViolation } from '../domain/text.js';
import { hashPassword } from '../domain/password.js';
import { AccountEntity } from '../persistence/entities/account.js';
import { isUniqueViolation } from '../persistence/availability.js';
import type { Orm } from '../persistence/orm.js';
import type { AccessChange } from './auth.js';
import { newId } from './ids.js';
import { isUuid } from './picks.js';

export interface AccountServiceHooks {
  /** After a tier change committed: the keys whose tier changed (the auth caches must drop them). */
  keysChanged?: (keys: AccessChange[]) => Promise<void>;
}

export class AccountService {
  constructor(
    private readonly orm: Orm,
    private readonly clock: Clock,
    private readonly hooks: AccountServiceHooks = {},
  ) {}

  async create(input: { email: unknown; password: unknown; tier: Tier }): Promise<AccountEntity> {
    // An email is a name people read: no controls, invisible or text-direction characters (src/domain/text.ts).
    if (typeof input.email === 'string') checkText('email', input.email, 'name');
    if (typeof input.password === 'string') checkText('password', input.password, 'line');
    const email = normalizeEmail(input.email);
    const password = validateNewPassword(input.password);
    const passwordHash = await hashPassword(password);
    const em = this.orm.em.fork();
    const now = this.clock.now();
    const account = em.create(AccountEntity, { id: newId(), email, passwordHash, tier: input.tier, createdAt: now, updatedAt: now });
    try {
      await em.flush();
    } catch (error) {
      if (isUniqueViolation(error)) throw new DuplicateEmailError();
      throw error;
    }
    return account;
  }

  async get(id: string): Promise<AccountEntity> {
    const account = isUuid(id) ? await this.orm.em.fork().findOne(AccountEntity, { id }) : null;
    if (!account) throw new NotFoundError(`No account with id ${id}.`);
    return account;
  }

  async list(): Promise<AccountEntity[]> {
    return this.orm.em.fork().find(AccountEntity, {}, { orderBy: { createdAt: 'desc', id: 'desc' } });
  }

  /** For sign-in only: the account with this (normalised) email, or null. */
  async findByEmail(email: string): Promise<AccountEntity | null> {
    // No account can have such an email: no query (a NUL would be a database error).
    if (textViolation(email, 'name') !== null) return null;
    return this.orm.em.fork().findOne(AccountEntity, { email });
  }

  /**
   * Sets the account's tier and its keys' tier in one transaction (the account row lock
   * serialises it against key creation), then has every instance's auth cache drop the keys
   * whose tier changed (keysChanged), so their next request runs with the new tier.
   */
  async setTier(id: string, tier: Tier): Promise<AccountEntity> {
    if (!isUuid(id)) throw new NotFoundError(`No account with id ${id}.`);
    const { account, changedKeys } = await this.orm.em.fork().transactional(async (em) => {
      const locked = await em.execute<{ id: string }[]>('select id from accounts where id = ? for update', [id]);
      if (!locked[0]) throw new NotFoundError(`No account with id ${id}.`);
      const now = this.clock.now();
      await em.execute('update accounts set tier = ?, updated_at = ? where id = ?', [tier, now, id]);
      const changed = await em.execute<{ id: string; key_hash: string }[]>(
        'update api_keys set tier = ? where account_id = ? and tier <> ? returning id, key_hash',
        [tier, id, tier],
      );
      const account = await em.findOneOrFail(AccountEntity, { id }, { refresh: true });
      return { account, changedKeys: changed.map((row) => ({ apiKeyId: row.id, keyHash: row.key_hash })) };
    });
    if (changedKeys.length > 0) await this.hooks.keysChanged?.(changedKeys);
    return account;
  }
}
