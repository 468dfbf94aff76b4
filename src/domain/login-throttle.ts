/**
 * Sign-in throttling (docs/DASHBOARD.md): failed attempts are counted per account (by the
 * email typed, so unknown emails behave exactly like known ones) and per client address over
 * a sliding window. Pure: the service loads the failure times and records new ones.
 */
import { createHash } from 'node:crypto';

export interface ThrottlePolicy {
  /** Failures allowed in the window; the next attempt is refused. */
  limit: number;
  windowMs: number;
}

export const LOGIN_THROTTLE: Readonly<{ account: ThrottlePolicy; ip: ThrottlePolicy }> = Object.freeze({
  account: Object.freeze({ limit: 5, windowMs: 15 * 60_000 }),
  ip: Object.freeze({ limit: 20, windowMs: 15 * 60_000 }),
});

export type ThrottleScope = keyof typeof LOGIN_THROTTLE;

export type ThrottleVerdict = { allowed: true } | { allowed: false; retryAfterSeconds: number };

/**
 * Whether another attempt may be made now, given the times (ms) of earlier failures. Refused
 * while `limit` or more failures lie within the window; allowed again when enough of them
 * have left it.
 */
export function throttleVerdict(failureTimesMs: readonly number[], policy: ThrottlePolicy, nowMs: number): ThrottleVerdict {
  const recent = failureTimesMs.filter((at) => at > nowMs - policy.windowMs && at <= nowMs).sort((a, b) => a - b);
  if (recent.length < policy.limit) return { allowed: true };
  // The attempt is allowed once recent.length - limit + 1 failures have aged out.
  const freedAt = recent[recent.length - policy.limit]! + policy.windowMs;
  return { allowed: false, retryAfterSeconds: Math.max(1, Math.ceil((freedAt - nowMs) / 1000)) };
}

/** The longer wait of several verdicts, or allowed when all allow. */
export function combineVerdicts(verdicts: readonly ThrottleVerdict[]): ThrottleVerdict {
  let wait = 0;
  for (const verdict of verdicts) if (!verdict.allowed) wait = Math.max(wait, verdict.retryAfterSeconds);
  return wait === 0 ? { allowed: true } : { allowed: false, retryAfterSeconds: wait };
}

/** What is stored for a throttle subject: a hash, so typed emails and addresses are not kept in clear. */
export function throttleSubject(scope: ThrottleScope, value: string): string {
  return createHash('sha256').update(`${scope}:${value}`, 'utf8').digest('hex');
}
