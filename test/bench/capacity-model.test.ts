/**
 * The capacity model's arithmetic (bench/capacity-model.mjs), on round constants whose answers
 * are worked out by hand here: the table in docs/PERFORMANCE.md "Capacity" is only as good as it.
 */
import { describe, expect, it } from 'vitest';
// @ts-expect-error: a bench module in plain JavaScript, without declarations
import { PLAN, instanceConstants, plan } from '../../bench/capacity-model.mjs';

const constants = { cachedRequestUs: 100, uncachedRequestUs: 1_000, streamFrameUs: 25, streamRssKiB: 16 };
const limits = { redisCommandsPerSecond: 100_000, redisPubSubPerSecond: 100_000, pgReadsPerSecond: 10_000 };

describe('capacity model', () => {
  it('keeps the planning assumptions the docs state', () => {
    expect(PLAN).toEqual({ cpuShare: 0.6, streamMemoryMiB: 1024, fanOutBudgetMs: 250, cachedShare: 0.9, picksPerSecondPeak: 20 });
  });

  it('sizes stream instances by the fan-out budget when memory allows more', () => {
    // 250 ms / 25 µs = 10,000 streams; 1 GiB / 16 KiB = 65,536: latency decides.
    const p = plan({ subscribers: 1_000_000 }, constants, limits);
    expect(p.streamsPerInstance).toBe(10_000);
    expect(p.streamInstances).toBe(100);
    // 20 picks a second through Redis to each of 100 instances.
    expect(p.redisCommandsPerSecond).toBe(2_000);
    // Every stream back within 30 s of a deploy, one replay query each: 33,333 a second.
    expect(p.pgQueriesPerSecond).toBe(33_333);
    expect(p.firstShared).toBe('PostgreSQL reads');
    expect(p.firstShare).toBe(3.33);
    expect(p.remedy).toMatch(/replicas/);
  });

  it('sizes stream instances by memory when streams are large', () => {
    // 1 GiB / 256 KiB = 4,096 streams, fewer than the 10,000 the fan-out allows.
    const p = plan({ subscribers: 10_000 }, { ...constants, streamRssKiB: 256 }, limits);
    expect(p.streamsPerInstance).toBe(4_096);
    expect(p.streamInstances).toBe(3);
  });

  it('sizes API instances by the cached / uncached mix at 60 % of a core', () => {
    // 0.9 x 100 + 0.1 x 1,000 = 190 µs a request; 600,000 µs / 190 = 3,157 requests a second.
    const p = plan({ requestsPerSecond: 100_000 }, constants, limits);
    expect(p.requestsPerInstance).toBe(3_157);
    expect(p.apiInstances).toBe(32);
    // One limiter decision per request; a tenth of requests reach PostgreSQL.
    expect(p.redisCommandsPerSecond).toBe(100_000);
    expect(p.pgQueriesPerSecond).toBe(10_000);
    expect(p.firstShared).toBe('Redis (one core)');
    expect(p.firstShare).toBe(1);
  });

  it('reads every constant from the benches\' results files', () => {
    for (const [name, constant] of Object.entries(instanceConstants() as Record<string, { value: unknown; from: string }>)) {
      expect(typeof constant.value, name).toBe('number');
      expect(Number.isFinite(constant.value as number) && (constant.value as number) > 0, name).toBe(true);
      expect(constant.from, name).toMatch(/^npm run bench/);
    }
  });
});
