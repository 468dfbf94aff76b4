import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { ManualClock } from '../../src/domain/clock.js';
import { MemoryRateLimiter } from '../../src/services/limits/memory-limiter.js';
import type { MonthlyUsageStore } from '../../src/services/limits/usage-store.js';
import { describeLimiterContract } from './contract.js';
import { openUsageDatabase, type UsageDatabase } from './support.js';

let database: UsageDatabase;

beforeAll(async () => {
  database = await openUsageDatabase();
});

afterAll(async () => {
  await database.close();
});

describeLimiterContract('MemoryRateLimiter', ({ usageStore, now }) => new MemoryRateLimiter({ usageStore, now }), 'memory', () => database);

describe('MemoryRateLimiter', () => {
  const open: MemoryRateLimiter[] = [];

  afterAll(async () => {
    await Promise.all(open.map((limiter) => limiter.close()));
  });

  function setUp(start: string, usageStore: MonthlyUsageStore = database.usageStore, flushIntervalMs?: number) {
    const clock = new ManualClock(start);
    const limiter = new MemoryRateLimiter({ usageStore, now: () => clock.now().getTime(), flushIntervalMs });
    open.push(limiter);
    return { clock, limiter };
  }

  it('seeds a key-month once for concurrent first requests, then admits only what the month has left', async () => {
    const key = await database.createApiKey();
    await database.usageStore.flush([{ apiKeyId: key, month: '2026-11', count: 20, refunded: 0 }]);
    const load = vi.fn((apiKeyId: string, month: string) => database.usageStore.load(apiKeyId, month));
    const { limiter } = setUp('2026-11-22T10:00:00Z', { load, flush: (rows) => database.usageStore.flush(rows) });
    const decisions = await Promise.all(Array.from({ length: 60 }, () => limiter.consume(key, { hourly: 25, monthly: 30 })));
    expect(load).toHaveBeenCalledTimes(1);
    expect(decisions.filter((decision) => decision.allowed)).toHaveLength(10);
    expect(decisions.filter((decision) => !decision.allowed).every((decision) => !decision.allowed && decision.reason === 'monthly')).toBe(true);
  });

  it('writes dirty months on its flush timer, as absolute counts', async () => {
    const key = await database.createApiKey();
    const { limiter } = setUp('2026-11-22T10:00:00Z', database.usageStore, 25);
    for (let i = 0; i < 3; i += 1) await limiter.consume(key, { hourly: 10, monthly: 100 });
    await vi.waitFor(async () => expect(await database.storedCount(key, '2026-11')).toBe(3));
    await limiter.consume(key, { hourly: 10, monthly: 100 });
    await vi.waitFor(async () => expect(await database.storedCount(key, '2026-11')).toBe(4));
  });

  it('retries a failed seed on the next request instead of remembering the failure', async () => {
    let failNextLoad = true;
    const store: MonthlyUsageStore = {
      load: async (apiKeyId, month) => {
        if (failNextLoad) {
          failNextLoad = false;
          throw new Error('database unavailable');
        }
        return database.usageStore.load(apiKeyId, month);
      },
      flush: (rows) => database.usageStore.flush(rows),
    };
    const { limiter } = setUp('2026-11-22T10:00:00Z', store);
    const key = randomUUID();
    await expect(limiter.consume(key, { hourly: 10, monthly: 100 })).rejects.toThrow('database unavailable');
    expect(await limiter.consume(key, { hourly: 10, monthly: 100 })).toMatchObject({ allowed: true, monthly: { used: 1 } });
  });

  it('keeps months dirty when a flush fails and writes them at the next one', async () => {
    const key = await database.createApiKey();
    let failNextFlush = true;
    const store: MonthlyUsageStore = {
      load: (apiKeyId, month) => database.usageStore.load(apiKeyId, month),
      flush: async (rows) => {
        if (failNextFlush) {
          failNextFlush = false;
          throw new Error('database unavailable');
        }
        return database.usageStore.flush(rows);
      },
    };
    const { limiter } = setUp('2026-11-22T10:00:00Z', store);
    await limiter.consume(key, { hourly: 10, monthly: 100 });
    await limiter.consume(key, { hourly: 10, monthly: 100 });
    await expect(limiter.flush()).rejects.toThrow('database unavailable');
    await limiter.flush();
    expect(await database.storedCount(key, '2026-11')).toBe(2);
  });

  it('forgets buckets out of the window and idle keys, but never an unwritten month', async () => {
    const { clock, limiter } = setUp('2026-11-22T10:00:00Z');
    const keys = await Promise.all(Array.from({ length: 20 }, () => database.createApiKey()));
    for (const key of keys) await limiter.consume(key, { hourly: 10, monthly: 100 });
    expect(limiter.stats()).toEqual({ hourlyWindows: 20, monthCounts: 20 });

    clock.advance(30 * 60_000);
    limiter.evictIdle();
    expect(limiter.stats()).toEqual({ hourlyWindows: 20, monthCounts: 20 });

    clock.advance(2 * 3_600_000);
    limiter.evictIdle();
    // Nothing left in any window; the month counts are not written yet, so they stay.
    expect(limiter.stats()).toEqual({ hourlyWindows: 0, monthCounts: 20 });
    await limiter.flush();
    limiter.evictIdle();
    expect(limiter.stats()).toEqual({ hourlyWindows: 0, monthCounts: 0 });

    // A returning key continues from PostgreSQL.
    expect(await limiter.consume(keys[0]!, { hourly: 10, monthly: 100 })).toMatchObject({ monthly: { used: 2 } });
  });

  it('keeps counting in the newest bucket when the clock steps back', async () => {
    const { clock, limiter } = setUp('2026-11-22T10:30:00Z');
    const key = randomUUID();
    const policy = { hourly: 3, monthly: 100 };
    for (let i = 0; i < 3; i += 1) await limiter.consume(key, policy);
    clock.set('2026-11-22T10:20:00Z');
    // A window ending at 10:20 would not see the 10:30 requests and admit three more.
    expect(await limiter.consume(key, policy)).toMatchObject({ allowed: false, reason: 'hourly' });
  });

  it('refuses requests once closed', async () => {
    const { limiter } = setUp('2026-11-22T10:00:00Z');
    await limiter.close();
    await expect(limiter.consume(randomUUID(), { hourly: 1, monthly: 1 })).rejects.toThrow('closed');
    expect(limiter.mode()).toBe('memory');
    expect(await limiter.ping()).toBe(true);
  });
});
