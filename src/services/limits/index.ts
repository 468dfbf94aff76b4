/**
 * Which limiter a process uses: the shared Redis one (with its per-instance fallback) when
 * REDIS_URL is set, otherwise the in-memory one, exact for a single process.
 */
import { MemoryRateLimiter } from './memory-limiter.js';
import type { LimiterLog, RateLimiter } from './rate-limiter.js';
import { RedisRateLimiter } from './redis-limiter.js';
import type { MonthlyUsageStore } from './usage-store.js';

export interface CreateRateLimiterOptions {
  redisUrl: string | null;
  usageStore: MonthlyUsageStore;
  /** Milliseconds since the epoch; tests only (production decides on Redis' clock). */
  now?: () => number;
  flushIntervalMs?: number;
  log?: LimiterLog;
}

export function createRateLimiter({ redisUrl, usageStore, now, flushIntervalMs, log }: CreateRateLimiterOptions): RateLimiter {
  if (redisUrl) return new RedisRateLimiter({ url: redisUrl, usageStore, now, flushIntervalMs, log });
  return new MemoryRateLimiter({ usageStore, now, flushIntervalMs, log });
}

