/**
 * Which limiter a process uses: the shared Redis one (with its per-instance fallback) when
 * REDIS_URL is set, otherwise the in-memory one, exact for a single process.
 */
import type { ServiceLog } from '../log.js';
import { MemoryRateLimiter } from './memory-limiter.js';
import type { RateLimiter } from './rate-limiter.js';
import { RedisRateLimiter } from './redis-limiter.js';
import type { MonthlyUsageStore } from './usage-store.js';

export interface CreateRateLimiterOptions {
  redisUrl: string | null;
  usageStore: MonthlyUsageStore;
  /** Milliseconds since the epoch; tests only (production decides on Redis' clock). */
  now?: () => number;
  flushIntervalMs?: number;
  log?: ServiceLog;
  /** Requests per minute per address without credentials (ANONYMOUS_GRAPHQL_LIMIT). */
  anonymousLimit?: number;
  /** Redis only: the deployment id, so deployments sharing one Redis count addresses apart. */
  namespace?: string;
}

export function createRateLimiter({ redisUrl, usageStore, now, flushIntervalMs, log, anonymousLimit, namespace }: CreateRateLimiterOptions): RateLimiter {
  if (redisUrl) return new RedisRateLimiter({ url: redisUrl, usageStore, now, flushIntervalMs, log, anonymousLimit, namespace });
  return new MemoryRateLimiter({ usageStore, now, flushIntervalMs, log, anonymousLimit });
}

