/**
 * The limiter port (docs/RATE_LIMITING.md, "The decision"): one call per request with a valid key checks
 * the hourly sliding window and the monthly cap together and, when both allow, counts the
 * request in both. Rejected requests consume nothing. Two implementations: Redis (shared by
 * all instances, one atomic Lua round trip) and in-memory (one process).
 */
import type { TierLimit } from '../../domain/access.js';
import type { AnonymousDecision } from './anonymous-window.js';
import type { UsageReadDecision } from './usage-window.js';
import type { StreamTokenOpenDecision } from './stream-token-opens.js';

export type { AnonymousDecision, StreamTokenOpenDecision, UsageReadDecision };

import type { Admission, HourlyState, LimitDecision, LimiterEngine, MonthlyState } from '../../domain/rate-limit.js';

// The decision types are the domain's (src/domain/rate-limit.ts); the port re-exports them for its callers.
export type { Admission, HourlyState, LimitDecision, MonthlyState };

export type LimiterMode = LimiterEngine;

export interface RateLimiter {
  /** Checks both limits and counts the request when both allow it. */
  consume(apiKeyId: string, policy: TierLimit): Promise<LimitDecision>;
  /**
   * Takes back an admitted request (its answer was a 5xx): one less in its month (counted as
   * refunded) and in its hourly bucket. Never throws; what cannot reach the engine now is
   * taken back later or, at worst, stays counted.
   */
  release(admission: Admission): Promise<void>;
  /** The current state without counting anything (dashboards). */
  peek(apiKeyId: string, policy: TierLimit): Promise<{ hourly: HourlyState; monthly: MonthlyState }>;
  /**
   * Counts one request without credentials from a client (clientAddressKey of its address)
   * against the per-minute anonymous limit (anonymous-window.ts).
   */
  consumeAnonymous(clientKey: string): Promise<AnonymousDecision>;
  /**
   * Counts one read of the usage endpoint by a key against that endpoint's own window
   * (usage-window.ts); the key's hourly limit and monthly cap are not touched.
   */
  consumeUsageRead(apiKeyId: string): Promise<UsageReadDecision>;
  /**
   * Counts one stream opened with a stream token (its hash) against the token's rolling minute
   * of `limit` opens (stream-token-opens.ts); the issuing key's limits are not touched.
   */
  consumeStreamTokenOpen(tokenHash: string, limit: number): Promise<StreamTokenOpenDecision>;
  /**
   * Which engine decided the last request: 'fallback' while Redis is unreachable; back to
   * 'redis' as soon as Redis answers a probe again (the next decision is Redis').
   */
  mode(): LimiterMode;
  /** True while the limiter's engine answers (always true in memory); for /readyz. */
  ping(): Promise<boolean>;
  /** Writes monthly usage to PostgreSQL now (it also happens on a timer). */
  flush(): Promise<void>;
  /** Flushes monthly usage to PostgreSQL and stops timers. */
  close(): Promise<void>;
}
