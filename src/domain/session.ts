/**
 * Dashboard sessions (docs/DASHBOARD.md): a random 32-byte token in an httpOnly cookie; only
 * its SHA-256 is stored. A session ends after 30 minutes without a request (idle) and 12 hours
 * after sign-in (absolute), whichever comes first.
 */
import { createHash, randomBytes } from 'node:crypto';

export const SESSION_IDLE_MS = 30 * 60_000;
export const SESSION_ABSOLUTE_MS = 12 * 3_600_000;
/** last_seen_at is written at most this often per session (not on every request). */
export const SESSION_TOUCH_INTERVAL_MS = 60_000;
const TOKEN_SHAPE = /^[A-Za-z0-9_-]{43}$/;

export function generateSessionToken(): string {
  return randomBytes(32).toString('base64url');
}

export function isSessionTokenShape(value: unknown): value is string {
  return typeof value === 'string' && TOKEN_SHAPE.test(value);
}

export function hashSessionToken(token: string): string {
  return createHash('sha256').update(token, 'utf8').digest('hex');
}

export interface SessionTimes {
  lastSeenAt: Date;
  expiresAt: Date;
}

export type SessionState = 'active' | 'idle_expired' | 'expired';

export function sessionState(session: SessionTimes, now: Date): SessionState {
  if (now.getTime() >= session.expiresAt.getTime()) return 'expired';
  if (now.getTime() - session.lastSeenAt.getTime() >= SESSION_IDLE_MS) return 'idle_expired';
  return 'active';
}
