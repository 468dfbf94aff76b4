/**
 * Customer accounts and the dashboard's tables: accounts, dashboard_sessions, login_failures
 * (sign-in throttling) and dashboard_secret (one row per deployment).
 */
import type { AccountCredentials, AccountRecord } from '../domain/account-records.js';
import type { Tier } from '../domain/api-key.js';
import type { ThrottleScope } from '../domain/login-throttle.js';
import { AccountEntity } from './entities/account.js';
import type { Em } from './orm.js';

export function accountRecordFromEntity(account: AccountEntity): AccountRecord {
  return { id: account.id, email: account.email, tier: account.tier, createdAt: account.createdAt, updatedAt: account.updatedAt };
}

/** A new account in the unit of work of `em`: flush to write it (a unique violation means the email is taken). */
export function insertAccount(em: Em, account: AccountCredentials): AccountEntity {
  return em.create(AccountEntity, account);
}

export function findAccount(em: Em, id: string): Promise<AccountEntity | null> {
  return em.findOne(AccountEntity, { id });
}

/** The account read again from the database (not from the identity map). */
export function reloadAccount(em: Em, id: string): Promise<AccountEntity> {
  return em.findOneOrFail(AccountEntity, { id }, { refresh: true });
}

export function findAccountByEmail(em: Em, email: string): Promise<AccountEntity | null> {
  return em.findOne(AccountEntity, { email });
}

/** Newest first. */
export function listAccounts(em: Em): Promise<AccountEntity[]> {
  return em.find(AccountEntity, {}, { orderBy: { createdAt: 'desc', id: 'desc' } });
}

/** Row-locks the account for the transaction of `em` and returns its tier; null when there is no such account. */
export async function lockAccount(em: Em, id: string): Promise<{ tier: Tier } | null> {
  const rows = await em.execute<{ tier: Tier }[]>('select tier from accounts where id = ? for update', [id]);
  return rows[0] ?? null;
}

export async function updateAccountTier(em: Em, id: string, tier: Tier, at: Date): Promise<void> {
  await em.execute('update accounts set tier = ?, updated_at = ? where id = ?', [tier, at, id]);
}

export async function updateAccountPassword(em: Em, id: string, passwordHash: string, at: Date): Promise<void> {
  await em.execute('update accounts set password_hash = ?, updated_at = ? where id = ?', [passwordHash, at, id]);
}

// --- Sign-in throttling (login_failures) ---

export interface PendingFailures {
  account: string;
  ip: string;
}

/** Records one attempt as a failure per scope (committed at once: other instances count it). */
export async function insertLoginFailures(em: Em, ids: PendingFailures, subjects: Record<ThrottleScope, string>, at: Date): Promise<void> {
  await em.execute('insert into login_failures (id, scope, subject, failed_at) values (?, ?, ?, ?), (?, ?, ?, ?)', [
    ids.account, 'account', subjects.account, at, ids.ip, 'ip', subjects.ip, at,
  ]);
}

/** The other failures of these subjects after `since`, as times in ms per scope. */
export async function otherLoginFailures(
  em: Em,
  subjects: Record<ThrottleScope, string>,
  since: Date,
  except: PendingFailures,
): Promise<{ scope: ThrottleScope; failedAtMs: number }[]> {
  const rows = await em.execute<{ scope: ThrottleScope; failed_at: Date | string }[]>(
    `select scope, failed_at from login_failures
      where ((scope = 'account' and subject = ?) or (scope = 'ip' and subject = ?)) and failed_at > ? and id not in (?, ?)`,
    [subjects.account, subjects.ip, since, except.account, except.ip],
  );
  return rows.map((row) => ({ scope: row.scope, failedAtMs: new Date(row.failed_at).getTime() }));
}

export async function deleteLoginFailures(em: Em, ids: PendingFailures): Promise<void> {
  await em.execute('delete from login_failures where id in (?, ?)', [ids.account, ids.ip]);
}

/** After a successful sign-in: every failure of the account, and this attempt's address record. */
export async function forgiveLoginFailures(em: Em, accountSubject: string, pendingIpId: string): Promise<void> {
  await em.execute(`delete from login_failures where (scope = 'account' and subject = ?) or id = ?`, [accountSubject, pendingIpId]);
}

export async function deleteLoginFailuresBefore(em: Em, before: Date): Promise<void> {
  await em.execute('delete from login_failures where failed_at < ?', [before]);
}

// --- Dashboard sessions ---

export interface SessionWithTier {
  id: string;
  accountId: string;
  lastSeenAt: Date;
  expiresAt: Date;
  tier: Tier;
}

export async function insertSession(
  em: Em,
  session: { id: string; tokenHash: string; accountId: string; createdAt: Date; expiresAt: Date },
): Promise<void> {
  await em.execute(
    'insert into dashboard_sessions (id, token_hash, account_id, created_at, last_seen_at, expires_at) values (?, ?, ?, ?, ?, ?)',
    [session.id, session.tokenHash, session.accountId, session.createdAt, session.createdAt, session.expiresAt],
  );
}

/** The session with this token hash and its account's current tier, or null. */
export async function findSessionByTokenHash(em: Em, tokenHash: string): Promise<SessionWithTier | null> {
  const rows = await em.execute<{ id: string; account_id: string; last_seen_at: Date | string; expires_at: Date | string; tier: Tier }[]>(
    `select s.id, s.account_id, s.last_seen_at, s.expires_at, a.tier
       from dashboard_sessions s join accounts a on a.id = s.account_id
      where s.token_hash = ?`,
    [tokenHash],
  );
  const row = rows[0];
  if (!row) return null;
  return { id: row.id, accountId: row.account_id, lastSeenAt: new Date(row.last_seen_at), expiresAt: new Date(row.expires_at), tier: row.tier };
}

export async function deleteSession(em: Em, id: string): Promise<void> {
  await em.execute('delete from dashboard_sessions where id = ?', [id]);
}

export async function deleteSessionByTokenHash(em: Em, tokenHash: string): Promise<void> {
  await em.execute('delete from dashboard_sessions where token_hash = ?', [tokenHash]);
}

/** Moves last_seen_at forward only (concurrent requests may touch in any order). */
export async function touchSession(em: Em, id: string, at: Date): Promise<void> {
  await em.execute('update dashboard_sessions set last_seen_at = greatest(last_seen_at, ?) where id = ?', [at, id]);
}

/** Sessions past their absolute expiry, or idle since `idleBefore`. */
export async function deleteDeadSessions(em: Em, now: Date, idleBefore: Date): Promise<void> {
  await em.execute('delete from dashboard_sessions where expires_at <= ? or last_seen_at <= ?', [now, idleBefore]);
}

// --- The deployment's dashboard secret ---

/** The deployment's secret (hex), created with `candidate` if there is none yet (the first writer wins). */
export async function ensureDashboardSecret(em: Em, candidate: string, at: Date): Promise<string> {
  await em.execute('insert into dashboard_secret (secret, created_at) values (?, ?) on conflict (singleton) do nothing', [candidate, at]);
  const rows = await em.execute<{ secret: string }[]>('select secret from dashboard_secret');
  return rows[0]!.secret;
}
