/**
 * Dashboard sign-in and sessions (docs/DASHBOARD.md).
 *
 * - Sign-in: throttled per account (by the email typed) and per client address; the password
 *   is checked with scrypt in constant time, against a dummy hash when the email is unknown,
 *   so a wrong email and a wrong password cost the same and answer the same.
 * - Throttling is race-free across instances: an attempt first records itself as a failure
 *   (committed at once), then counts the others; a successful attempt deletes its record.
 * - Sessions: a random token in the cookie, its SHA-256 in the database; idle and absolute
 *   expiry; the tier is read with the session, so a tier change shows at once.
 */
import { randomBytes } from 'node:crypto';
import { normalizeEmail, PASSWORD_MAX_LENGTH } from '../domain/account.js';
import type { Tier } from '../domain/api-key.js';
import type { Clock } from '../domain/clock.js';
import { InvalidCredentialsError, LoginThrottledError } from '../domain/errors.js';
import { combineVerdicts, LOGIN_THROTTLE, throttleSubject, throttleVerdict, type ThrottleScope } from '../domain/login-throttle.js';
import { hashPassword, verifyPassword } from '../domain/password.js';
import type { Principal } from '../domain/principal.js';
import {
  generateSessionToken,
  hashSessionToken,
  isSessionTokenShape,
  SESSION_ABSOLUTE_MS,
  SESSION_IDLE_MS,
  SESSION_TOUCH_INTERVAL_MS,
  sessionState,
} from '../domain/session.js';
import type { Orm } from '../persistence/orm.js';
import type { AccountService } from './accounts.js';
import { newId } from './ids.js';

export type AccountPrincipal = Extract<Principal, { kind: 'account' }>;

export interface SignInResult {
  /** The session token for the cookie: not stored, shown to nobody else. */
  token: string;
  expiresAt: Date;
  accountId: string;
}

/** Old failures and dead sessions are deleted at most this often per instance. */
const PRUNE_INTERVAL_MS = 60_000;
const FAILURE_RETENTION_MS = 24 * 3_600_000;

interface SessionRow {
  id: string;
  account_id: string;
  last_seen_at: Date | string;
  expires_at: Date | string;
  tier: Tier;
}

export class DashboardAuthService {
  private dummyHash: Promise<string> | null = null;
  private secret: Promise<Buffer> | null = null;
  private lastPruneMs = 0;

  constructor(
    private readonly orm: Orm,
    private readonly clock: Clock,
    private readonly accounts: AccountService,
  ) {}

  async signIn(input: { email: unknown; password: unknown; ip: string }): Promise<SignInResult> {
    const typedEmail = typeof input.email === 'string' ? input.email.trim().toLowerCase() : '';
    const password = typeof input.password === 'string' ? input.password : '';
    const subjects: Record<ThrottleScope, string> = { account: throttleSubject('account', typedEmail), ip: throttleSubject('ip', input.ip) };
    const now = this.clock.now();
    const em = this.orm.em.fork();

    // 1. Record this attempt as a failure (committed), then judge by everyone else's.
    const pending = { account: newId(), ip: newId() };
    await em.execute('insert into login_failures (id, scope, subject, failed_at) values (?, ?, ?, ?), (?, ?, ?, ?)', [
      pending.account, 'account', subjects.account, now, pending.ip, 'ip', subjects.ip, now,
    ]);
    const windowStart = new Date(now.getTime() - Math.max(LOGIN_THROTTLE.account.windowMs, LOGIN_THROTTLE.ip.windowMs));
    const others = await em.execute<{ scope: ThrottleScope; failed_at: Date | string }[]>(
      `select scope, failed_at from login_failures
        where ((scope = 'account' and subject = ?) or (scope = 'ip' and subject = ?)) and failed_at > ? and id not in (?, ?)`,
      [subjects.account, subjects.ip, windowStart, pending.account, pending.ip],
    );
    const times = (scope: ThrottleScope) => others.filter((row) => row.scope === scope).map((row) => new Date(row.failed_at).getTime());
    const verdict = combineVerdicts([
      throttleVerdict(times('account'), LOGIN_THROTTLE.account, now.getTime()),
      throttleVerdict(times('ip'), LOGIN_THROTTLE.ip, now.getTime()),
    ]);
    if (!verdict.allowed) {
      // A refused attempt does not extend the lock-out.
      await em.execute('delete from login_failures where id in (?, ?)', [pending.account, pending.ip]);
      throw new LoginThrottledError(verdict.retryAfterSeconds);
    }

    // 2. Constant work whether or not the account exists.
    let account = null;
    try {
      account = await this.accounts.findByEmail(normalizeEmail(typedEmail));
    } catch {
      account = null; // not an email address: treated exactly like an unknown one
    }
    const candidate = password.length > 0 && password.length <= PASSWORD_MAX_LENGTH * 4 ? password : '\u0000';
    const matches = await verifyPassword(candidate, account?.passwordHash ?? (await this.dummy()));
    this.pruneSoon(now);
    if (!account || !matches || candidate === '\u0000') throw new InvalidCredentialsError();

    // 3. Success: the account's failures are forgiven, the address's are kept; a new session.
    const token = generateSessionToken();
    const expiresAt = new Date(now.getTime() + SESSION_ABSOLUTE_MS);
    await em.transactional(async (tx) => {
      await tx.execute(`delete from login_failures where (scope = 'account' and subject = ?) or id = ?`, [subjects.account, pending.ip]);
      await tx.execute(
        'insert into dashboard_sessions (id, token_hash, account_id, created_at, last_seen_at, expires_at) values (?, ?, ?, ?, ?, ?)',
        [newId(), hashSessionToken(token), account.id, now, now, expiresAt],
      );
    });
    return { token, expiresAt, accountId: account.id };
  }

  /** The signed-in account for a session token, or anonymous (no, unknown, expired or signed-out session). */
  async principalFor(token: string | null | undefined): Promise<AccountPrincipal | { kind: 'anonymous' }> {
    if (!isSessionTokenShape(token)) return { kind: 'anonymous' };
    const em = this.orm.em.fork();
    const rows = await em.execute<SessionRow[]>(
      `select s.id, s.account_id, s.last_seen_at, s.expires_at, a.tier
         from dashboard_sessions s join accounts a on a.id = s.account_id
        where s.token_hash = ?`,
      [hashSessionToken(token)],
    );
    const row = rows[0];
    if (!row) return { kind: 'anonymous' };
    const now = this.clock.now();
    const lastSeenAt = new Date(row.last_seen_at);
    if (sessionState({ lastSeenAt, expiresAt: new Date(row.expires_at) }, now) !== 'active') {
      await em.execute('delete from dashboard_sessions where id = ?', [row.id]);
      return { kind: 'anonymous' };
    }
    if (now.getTime() - lastSeenAt.getTime() >= SESSION_TOUCH_INTERVAL_MS) {
      await em.execute('update dashboard_sessions set last_seen_at = greatest(last_seen_at, ?) where id = ?', [now, row.id]);
    }
    return { kind: 'account', accountId: row.account_id, tier: row.tier, sessionId: row.id };
  }

  /** Ends the session on every instance at once (the row is gone). Unknown tokens are ignored. */
  async signOut(token: string | null | undefined): Promise<void> {
    if (!isSessionTokenShape(token)) return;
    await this.orm.em.fork().execute('delete from dashboard_sessions where token_hash = ?', [hashSessionToken(token)]);
  }

  /**
   * 32 random bytes per deployment (this database), created on first use and shared by every
   * instance: the dashboard derives its cookie-signing and CSRF keys from it.
   */
  serverSecret(): Promise<Buffer> {
    this.secret ??= (async () => {
      const em = this.orm.em.fork();
      await em.execute('insert into dashboard_secret (secret, created_at) values (?, ?) on conflict (singleton) do nothing', [
        randomBytes(32).toString('hex'),
        this.clock.now(),
      ]);
      const rows = await em.execute<{ secret: string }[]>('select secret from dashboard_secret');
      return Buffer.from(rows[0]!.secret, 'hex');
    })().catch((error: unknown) => {
      this.secret = null;
      throw error;
    });
    return this.secret;
  }

  private dummy(): Promise<string> {
    this.dummyHash ??= hashPassword(randomBytes(16).toString('hex'));
    return this.dummyHash;
  }

  /** Deletes failures older than a day and sessions that can no longer be used. */
  private pruneSoon(now: Date): void {
    if (now.getTime() - this.lastPruneMs < PRUNE_INTERVAL_MS) return;
    this.lastPruneMs = now.getTime();
    const em = this.orm.em.fork();
    void (async () => {
      await em.execute('delete from login_failures where failed_at < ?', [new Date(now.getTime() - FAILURE_RETENTION_MS)]);
      await em.execute('delete from dashboard_sessions where expires_at <= ? or last_seen_at <= ?', [now, new Date(now.getTime() - SESSION_IDLE_MS)]);
    })().catch(() => undefined);
  }
}
