/**
 * The usage endpoint's own window in both engines: 60 reads per key per clock hour, exact in
 * memory, shared through Redis by every instance, decided in memory when Redis does not answer,
 * and never touching the key's hourly limit or monthly cap.
 */
import { randomUUID } from 'node:crypto';
import { describe, expect, it, vi } from 'vitest';
import { MemoryRateLimiter } from '../../src/services/limits/memory-limiter.js';
import type { RateLimiter } from '../../src/services/limits/rate-limiter.js';
import { RedisRateLimiter } from '../../src/services/limits/redis-limiter.js';
import { USAGE_READ_LIMIT, usageReadDecision } from '../../src/services/limits/usage-window.js';
import { limiterHarness, noUsage } from './harness.js';
import { realRedisUrl } from './support.js';

const HOUR = Date.parse('2026-11-22T12:00:00Z');
const POLICY = { hourly: 5, monthly: 100 };

const { clock, now, track, silentRedisUrl } = limiterHarness(HOUR);

async function reads(limiter: RateLimiter, apiKeyId: string, count: number): Promise<number> {
  let admitted = 0;
  for (let i = 0; i < count; i += 1) if ((await limiter.consumeUsageRead(apiKeyId)).allowed) admitted += 1;
  return admitted;
}

describe('usageReadDecision', () => {
  it('admits 60 reads per clock hour and tells how long until the hour ends', () => {
    expect(USAGE_READ_LIMIT).toBe(60);
    expect(usageReadDecision(60, HOUR + 15 * 60_000)).toEqual({ allowed: true, limit: 60, remaining: 0, retryAfterSeconds: 2_700 });
    expect(usageReadDecision(61, HOUR + 3_599_001)).toEqual({ allowed: false, limit: 60, remaining: 0, retryAfterSeconds: 1 });
    expect(usageReadDecision(1, HOUR)).toMatchObject({ remaining: 59, retryAfterSeconds: 3_600 });
  });
});

describe('in memory', () => {
  it('admits 60 reads per key and hour, apart from the key limits', async () => {
    const limiter = track(new MemoryRateLimiter({ usageStore: noUsage, now }));
    const key = randomUUID();
    expect(await reads(limiter, key, 65)).toBe(60);
    expect(await reads(limiter, randomUUID(), 1)).toBe(1);
    // The key's own limits saw none of it.
    expect(await limiter.peek(key, POLICY)).toMatchObject({ hourly: { remaining: 5 }, monthly: { used: 0 } });
    expect((await limiter.consume(key, POLICY)).allowed).toBe(true);
    clock.ms = HOUR + 3_600_000;
    limiter.evictIdle();
    expect(await reads(limiter, key, 61)).toBe(60);
  });
});

describe('Redis not answering', () => {
  it('decides in memory, exactly, per instance', async () => {
    const limiter = track(new RedisRateLimiter({ url: await silentRedisUrl(), usageStore: noUsage, now, log: { warn: vi.fn(), info: vi.fn(), error: vi.fn() } }));
    expect(await reads(limiter, randomUUID(), 61)).toBe(60);
    expect(limiter.mode()).toBe('fallback');
  });
});

// Real Redis only, like the Redis suites of redis-limiter.test.ts.
if (realRedisUrl) describe('in Redis', () => {
  // About sharing, not deadlines (see anonymous-limiter.test.ts).
  const replyTimeoutMs = 1_000;

  it('is shared by every instance, per key and hour, apart from the key limits', async () => {
    const a = track(new RedisRateLimiter({ url: realRedisUrl!, usageStore: noUsage, now, replyTimeoutMs }));
    const b = track(new RedisRateLimiter({ url: realRedisUrl!, usageStore: noUsage, now, replyTimeoutMs }));
    const key = randomUUID();
    expect(await reads(a, key, 30)).toBe(30);
    expect(await reads(b, key, 31)).toBe(30);
    expect((await a.consumeUsageRead(key)).retryAfterSeconds).toBe(3_600);
    expect(a.mode()).toBe('redis');
    expect(await reads(a, randomUUID(), 1)).toBe(1);
    expect(await a.peek(key, POLICY)).toMatchObject({ monthly: { used: 0 } });
    clock.ms = HOUR + 3_600_000;
    expect(await reads(b, key, 1)).toBe(1);
  });

  it('admits exactly the limit under concurrent reads from two instances', async () => {
    const a = track(new RedisRateLimiter({ url: realRedisUrl!, usageStore: noUsage, now, replyTimeoutMs }));
    const b = track(new RedisRateLimiter({ url: realRedisUrl!, usageStore: noUsage, now, replyTimeoutMs }));
    const key = randomUUID();
    const decisions = await Promise.all(Array.from({ length: 100 }, (_, i) => (i % 2 ? a : b).consumeUsageRead(key)));
    expect(decisions.filter((decision) => decision.allowed)).toHaveLength(USAGE_READ_LIMIT);
  });
});
