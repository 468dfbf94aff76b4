/**
 * What one API key costs in memory, recorded in docs/RATE_LIMITING.md and guarded here:
 * in Redis (MEMORY USAGE of the hourly hash and the month counter of a key at its hourly
 * limit, requests spread across the hour) and in process (MemoryRateLimiter heap per key).
 * The numbers are printed; the assertions leave roughly twice what was measured.
 */
import { randomUUID } from 'node:crypto';
import { setFlagsFromString } from 'node:v8';
import { runInNewContext } from 'node:vm';
import { Redis } from 'ioredis';
import { afterAll, describe, expect, it, vi } from 'vitest';
import { DEFAULT_TIER_LIMITS } from '../../src/domain/access.js';
import { ManualClock } from '../../src/domain/clock.js';
import { WINDOW_MS } from '../../src/domain/rate-limit.js';
import { MemoryRateLimiter } from '../../src/services/limits/memory-limiter.js';
import { RedisRateLimiter, hourlyKey, monthKey } from '../../src/services/limits/redis-limiter.js';
import type { MonthlyUsageStore } from '../../src/services/limits/usage-store.js';
import { realRedisUrl } from './support.js';

const emptyUsage: MonthlyUsageStore = { load: async () => ({ count: 0, refunded: 0 }), flush: async () => undefined };
const START = '2026-11-22T10:00:00Z';

describe('in-process memory per key', () => {
  it('stays under 4 KiB for a key with requests in every counted bucket', async () => {
    setFlagsFromString('--expose-gc');
    const gc = runInNewContext('gc') as () => void;
    const clock = new ManualClock(START);
    const limiter = new MemoryRateLimiter({ usageStore: emptyUsage, now: () => clock.now().getTime(), flushIntervalMs: null });
    const keys = Array.from({ length: 2_000 }, () => randomUUID());
    const policy = { hourly: 1_000, monthly: 100_000 };
    gc();
    const before = process.memoryUsage().heapUsed;
    for (let minute = 0; minute <= 60; minute += 1) {
      clock.set(new Date(Date.parse(START) + minute * 60_000));
      for (const key of keys) await limiter.consume(key, policy);
    }
    gc();
    const perKey = (process.memoryUsage().heapUsed - before) / keys.length;
    console.info(`MemoryRateLimiter: ${Math.round(perKey)} B of heap per key (61 buckets and its month count)`);
    expect(limiter.stats()).toEqual({ hourlyWindows: keys.length, monthCounts: keys.length });
    expect(perKey).toBeLessThan(4 * 1024);
    await limiter.close();
  });
});

if (realRedisUrl) {
  const redisUrl = realRedisUrl;

  describe('Redis memory per key', () => {
    const admin = new Redis(redisUrl);
    const clock = new ManualClock(START);
    // A generous reply time: a loaded machine must not move requests to the fallback here.
    const limiter = new RedisRateLimiter({ url: redisUrl, usageStore: emptyUsage, now: () => clock.now().getTime(), replyTimeoutMs: 1_000 });

    afterAll(async () => {
      await limiter.close();
      await admin.quit();
    });

    it.each(Object.entries(DEFAULT_TIER_LIMITS))('stays under 2 KiB for a %s key at its hourly limit', async (tier, policy) => {
      await vi.waitFor(async () => expect(await limiter.ping()).toBe(true));
      const key = randomUUID();
      // The whole limit in 100 steps 36 s apart, so every bucket of the hour holds requests.
      const steps = 100;
      const perStep = policy.hourly / steps;
      for (let step = 0; step < steps; step += 1) {
        clock.set(new Date(Date.parse(START) + step * (WINDOW_MS / steps)));
        const decisions = await Promise.all(Array.from({ length: perStep }, () => limiter.consume(key, policy)));
        expect(decisions.every((decision) => decision.allowed)).toBe(true);
      }
      expect(limiter.mode()).toBe('redis');
      const hourly = Number(await admin.call('MEMORY', 'USAGE', hourlyKey(key), 'SAMPLES', '0'));
      const monthly = Number(await admin.call('MEMORY', 'USAGE', monthKey(key, '2026-11'), 'SAMPLES', '0'));
      const buckets = await admin.hlen(hourlyKey(key));
      const encoding = await admin.object('ENCODING', hourlyKey(key));
      console.info(`Redis ${tier} (${policy.hourly}/h): hourly hash ${hourly} B (${buckets} buckets, ${encoding}), month counter ${monthly} B, total ${hourly + monthly} B`);
      expect(hourly + monthly).toBeLessThan(2 * 1024);
    });
  });
}
