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
import type { AccountCredentials, AccountRecord } from '../domain/account-records.js';
import {
  accountRecordFromEntity,
  findAccount,
  findAccountByEmail,
  insertAccount,
  listAccounts,
  lockAccount,
  reloadAccount,
  updateAccountPassword,
  updateAccountTier,
} from '../persistence/accounts-repository.js';
import { setTierOfAccountKeys } from '../persistence/api-keys-repository.js';
import { isUniqueViolation } from '../persistence/availability.js';
import type { Orm } from '../persistence/orm.js';
import type { AccessChange } from './auth.js';
import { newId } from './ids.js';
import { isUuid } from '../domain/uuid.js';

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

  async create(input: { email: unknown; password: unknown; tier: Tier }): Promise<AccountRecord> {
    // An email is a name people read: no controls, invisible or text-direction characters (src/domain/text.ts).
    if (typeof input.email === 'string') checkText('email', input.email, 'name');
    if (typeof input.password === 'string') checkText('password', input.password, 'line');
    const email = normalizeEmail(input.email);
    const password = validateNewPassword(input.password);
    const passwordHash = await hashPassword(password);
    const em = this.orm.em.fork();
    const now = this.clock.now();
    const account = insertAccount(em, { id: newId(), email, passwordHash, tier: input.tier, createdAt: now, updatedAt: now });
    try {
      await em.flush();
    } catch (error) {
      if (isUniqueViolation(error)) throw new DuplicateEmailError();
      throw error;
    }
    return accountRecordFromEntity(account);
  }

  async get(id: string): Promise<AccountRecord> {
    const account = isUuid(id) ? await findAccount(this.orm.em.fork(), id) : null;
    if (!account) throw new NotFoundError(`No account with id ${id}.`);
    return accountRecordFromEntity(account);
  }

  async list(): Promise<AccountRecord[]> {
    return (await listAccounts(this.orm.em.fork())).map(accountRecordFromEntity);
  }

  /** For sign-in only: the account with this (normalised) email, or null. */
  async findByEmail(email: string): Promise<AccountCredentials | null> {
    // No account can have such an email: no query (a NUL would be a database error).
    if (textViolation(email, 'name') !== null) return null;
    const account = await findAccountByEmail(this.orm.em.fork(), email);
    return account && { ...accountRecordFromEntity(account), passwordHash: account.passwordHash };
  }

  /**
   * Sets the account's tier and its keys' tier in one transaction (the account row lock
   * serialises it against key creation), then has every instance's auth cache drop the keys
   * whose tier changed (keysChanged), so their next request runs with the new tier.
   */
  async setTier(id: string, tier: Tier): Promise<AccountRecord> {
    if (!isUuid(id)) throw new NotFoundError(`No account with id ${id}.`);
    const { account, changedKeys } = await this.orm.em.fork().transactional(async (em) => {
      if (!(await lockAccount(em, id))) throw new NotFoundError(`No account with id ${id}.`);
      await updateAccountTier(em, id, tier, this.clock.now());
      const changed = await setTierOfAccountKeys(em, id, tier);
      const account = accountRecordFromEntity(await reloadAccount(em, id));
      return { account, changedKeys: changed.map((key) => ({ apiKeyId: key.id, keyHash: key.keyHash })) };
    });
    if (changedKeys.length > 0) await this.hooks.keysChanged?.(changedKeys);
    return account;
  }

  /**
   * A new password for an account (the embedded demo account's, when its password file was
   * replaced). Its sessions stay: the caller is the operator's own start-up, not a reset flow.
   */
  async setPassword(id: string, password: unknown): Promise<void> {
    if (typeof password === 'string') checkText('password', password, 'line');
    const passwordHash = await hashPassword(validateNewPassword(password));
    await updateAccountPassword(this.orm.em.fork(), id, passwordHash, this.clock.now());
  }
}
