import { randomUUID } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { createRateLimiter } from '../../src/services/limits/index.js';
import { MemoryRateLimiter } from '../../src/services/limits/memory-limiter.js';
import { RedisRateLimiter } from '../../src/services/limits/redis-limiter.js';
import type { MonthlyUsageStore } from '../../src/services/limits/usage-store.js';

const emptyUsage: MonthlyUsageStore = { load: async () => ({ count: 0, refunded: 0 }), flush: async () => undefined };

describe('createRateLimiter', () => {
  it('builds the in-memory limiter without a Redis URL', async () => {
    const limiter = createRateLimiter({ redisUrl: null, usageStore: emptyUsage });
    expect(limiter).toBeInstanceOf(MemoryRateLimiter);
    expect((await limiter.consume(randomUUID(), { hourly: 1, monthly: 1 })).allowed).toBe(true);
    expect(limiter.mode()).toBe('memory');
    await limiter.close();
  });

  it('builds the Redis limiter, with its fallback, from a Redis URL', async () => {
    const limiter = createRateLimiter({ redisUrl: 'redis://127.0.0.1:1', usageStore: emptyUsage });
    expect(limiter).toBeInstanceOf(RedisRateLimiter);
    expect((await limiter.consume(randomUUID(), { hourly: 1, monthly: 1 })).allowed).toBe(true);
    expect(limiter.mode()).toBe('fallback');
    await limiter.close();
  });
});
