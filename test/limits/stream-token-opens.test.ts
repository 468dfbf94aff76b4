/**
 * A stream token's opens in both engines: at most `limit` in any rolling minute (a log of the
 * admitted opens, not aligned minutes), exact in memory, shared through Redis by every instance,
 * decided in memory when Redis does not answer, and never touching the issuing key's limits.
 */
import { randomUUID } from 'node:crypto';
import { describe, expect, it, vi } from 'vitest';
import { MemoryRateLimiter } from '../../src/services/limits/memory-limiter.js';
import type { RateLimiter } from '../../src/services/limits/rate-limiter.js';
import { RedisRateLimiter } from '../../src/services/limits/redis-limiter.js';
import { rollingWindowDecision } from '../../src/services/limits/rolling-window.js';
import { limiterHarness, noUsage } from './harness.js';
import { realRedisUrl } from './support.js';

const START = Date.parse('2026-11-22T12:00:30Z');
const POLICY = { hourly: 5, monthly: 100 };
const LIMIT = 4;

const { clock, now, track, silentRedisUrl } = limiterHarness(START);

async function opens(limiter: RateLimiter, tokenHash: string, count: number): Promise<number> {
  let admitted = 0;
  for (let i = 0; i < count; i += 1) if ((await limiter.consumeStreamTokenOpen(tokenHash, LIMIT)).allowed) admitted += 1;
  return admitted;
}

/**
 * The rolling minute, driven the same way on any engine: four opens 15 s apart fill it; the
 * fifth waits for the first to leave (60 s after it), then exactly one place is free.
 */
async function expectRollingMinute(limiter: RateLimiter): Promise<void> {
  const token = randomUUID();
  for (let i = 0; i < LIMIT; i += 1) {
    expect((await limiter.consumeStreamTokenOpen(token, LIMIT)).allowed).toBe(true);
    clock.ms += 15_000;
  }
  // +60 s: the first open (at +0) is exactly a minute old and has left; one place.
  expect(await opens(limiter, token, 2)).toBe(1);
  clock.ms += 5_000;
  // +65 s: the minute (+5 s, +65 s] holds +15, +30, +45 and +60: the next place frees at +75 s.
  const refused = await limiter.consumeStreamTokenOpen(token, LIMIT);
  expect(refused).toEqual({ allowed: false, limit: LIMIT, remaining: 0, retryAfterSeconds: 10 });
  // A refused open is not logged: it does not push the next place back.
  clock.ms += 10_000;
  expect(await opens(limiter, token, 2)).toBe(1);
  // Another token, and the key's own limits, saw none of it.
  expect(await opens(limiter, randomUUID(), LIMIT + 1)).toBe(LIMIT);
  expect(await limiter.peek(token, POLICY)).toMatchObject({ hourly: { remaining: 5 }, monthly: { used: 0 } });
}

describe('rollingWindowDecision', () => {
  it('admits below the limit and names the wait until the oldest open leaves the minute', () => {
    expect(rollingWindowDecision(0, undefined, 30, 60_000, START)).toEqual({ allowed: true, limit: 30, remaining: 29, retryAfterSeconds: 60 });
    expect(rollingWindowDecision(29, START - 59_000, 30, 60_000, START)).toEqual({ allowed: true, limit: 30, remaining: 0, retryAfterSeconds: 60 });
    expect(rollingWindowDecision(30, START - 59_000, 30, 60_000, START)).toEqual({ allowed: false, limit: 30, remaining: 0, retryAfterSeconds: 1 });
    expect(rollingWindowDecision(30, START - 10_500, 30, 60_000, START)).toEqual({ allowed: false, limit: 30, remaining: 0, retryAfterSeconds: 50 });
  });
});

describe('in memory', () => {
  it('keeps a rolling minute per token, apart from the key limits', async () => {
    await expectRollingMinute(track(new MemoryRateLimiter({ usageStore: noUsage, now })));
  });

  it('forgets tokens whose opens have all left the minute', async () => {
    const limiter = track(new MemoryRateLimiter({ usageStore: noUsage, now }));
    const token = randomUUID();
    expect(await opens(limiter, token, LIMIT + 1)).toBe(LIMIT);
    clock.ms += 60_000;
    limiter.evictIdle();
    expect(await opens(limiter, token, LIMIT + 1)).toBe(LIMIT);
  });
});

describe('Redis not answering', () => {
  it('decides in memory, exactly, per instance', async () => {
    const limiter = track(new RedisRateLimiter({ url: await silentRedisUrl(), usageStore: noUsage, now, log: { warn: vi.fn(), info: vi.fn(), error: vi.fn() } }));
    expect(await opens(limiter, randomUUID(), LIMIT + 1)).toBe(LIMIT);
    expect(limiter.mode()).toBe('fallback');
  });
});

// Real Redis only, like the Redis suites of redis-limiter.test.ts.
if (realRedisUrl) describe('in Redis', () => {
  const replyTimeoutMs = 1_000;

  it('keeps the same rolling minute per token', async () => {
    const limiter = track(new RedisRateLimiter({ url: realRedisUrl!, usageStore: noUsage, now, replyTimeoutMs }));
    await expectRollingMinute(limiter);
    expect(limiter.mode()).toBe('redis');
  });

  it('is shared by every instance and admits exactly the limit under concurrent opens', async () => {
    const a = track(new RedisRateLimiter({ url: realRedisUrl!, usageStore: noUsage, now, replyTimeoutMs }));
    const b = track(new RedisRateLimiter({ url: realRedisUrl!, usageStore: noUsage, now, replyTimeoutMs }));
    const token = randomUUID();
    const decisions = await Promise.all(Array.from({ length: 20 }, (_, i) => (i % 2 ? a : b).consumeStreamTokenOpen(token, LIMIT)));
    expect(decisions.filter((decision) => decision.allowed)).toHaveLength(LIMIT);
    expect(a.mode()).toBe('redis');
  });
});
