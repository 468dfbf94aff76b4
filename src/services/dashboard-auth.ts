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
import { clientAddressKey } from '../domain/client-address.js';
import { randomBytes } from 'node:crypto';
import { normalizeEmail, PASSWORD_MAX_LENGTH } from '../domain/account.js';
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
import {
  deleteDeadSessions,
  deleteLoginFailures,
  deleteLoginFailuresBefore,
  deleteSession,
  deleteSessionByTokenHash,
  ensureDashboardSecret,
  findSessionByTokenHash,
  forgiveLoginFailures,
  insertLoginFailures,
  insertSession,
  otherLoginFailures,
  touchSession,
} from '../persistence/accounts-repository.js';
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
    const subjects: Record<ThrottleScope, string> = { account: throttleSubject('account', typedEmail), ip: throttleSubject('ip', clientAddressKey(input.ip)) };
    const now = this.clock.now();
    const em = this.orm.em.fork();

    // 1. Record this attempt as a failure (committed), then judge by everyone else's.
    const pending = { account: newId(), ip: newId() };
    await insertLoginFailures(em, pending, subjects, now);
    const windowStart = new Date(now.getTime() - Math.max(LOGIN_THROTTLE.account.windowMs, LOGIN_THROTTLE.ip.windowMs));
    const others = await otherLoginFailures(em, subjects, windowStart, pending);
    const times = (scope: ThrottleScope) => others.filter((row) => row.scope === scope).map((row) => row.failedAtMs);
    const verdict = combineVerdicts([
      throttleVerdict(times('account'), LOGIN_THROTTLE.account, now.getTime()),
      throttleVerdict(times('ip'), LOGIN_THROTTLE.ip, now.getTime()),
    ]);
    if (!verdict.allowed) {
      // A refused attempt does not extend the lock-out.
      await deleteLoginFailures(em, pending);
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
      await forgiveLoginFailures(tx, subjects.account, pending.ip);
      await insertSession(tx, { id: newId(), tokenHash: hashSessionToken(token), accountId: account.id, createdAt: now, expiresAt });
    });
    return { token, expiresAt, accountId: account.id };
  }

  /** The signed-in account for a session token, or anonymous (no, unknown, expired or signed-out session). */
  async principalFor(token: string | null | undefined): Promise<AccountPrincipal | { kind: 'anonymous' }> {
    if (!isSessionTokenShape(token)) return { kind: 'anonymous' };
    const em = this.orm.em.fork();
    const session = await findSessionByTokenHash(em, hashSessionToken(token));
    if (!session) return { kind: 'anonymous' };
    const now = this.clock.now();
    if (sessionState({ lastSeenAt: session.lastSeenAt, expiresAt: session.expiresAt }, now) !== 'active') {
      await deleteSession(em, session.id);
      return { kind: 'anonymous' };
    }
    if (now.getTime() - session.lastSeenAt.getTime() >= SESSION_TOUCH_INTERVAL_MS) {
      await touchSession(em, session.id, now);
    }
    return { kind: 'account', accountId: session.accountId, tier: session.tier, sessionId: session.id };
  }

  /** Ends the session on every instance at once (the row is gone). Unknown tokens are ignored. */
  async signOut(token: string | null | undefined): Promise<void> {
    if (!isSessionTokenShape(token)) return;
    await deleteSessionByTokenHash(this.orm.em.fork(), hashSessionToken(token));
  }

  /**
   * 32 random bytes per deployment (this database), created on first use and shared by every
   * instance: the dashboard derives its cookie-signing and CSRF keys from it.
   */
  serverSecret(): Promise<Buffer> {
    this.secret ??= (async () => {
      const secret = await ensureDashboardSecret(this.orm.em.fork(), randomBytes(32).toString('hex'), this.clock.now());
      return Buffer.from(secret, 'hex');
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
      await deleteLoginFailuresBefore(em, new Date(now.getTime() - FAILURE_RETENTION_MS));
      await deleteDeadSessions(em, now, new Date(now.getTime() - SESSION_IDLE_MS));
    })().catch(() => undefined);
  }
}
