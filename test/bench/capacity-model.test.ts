/**
 * The capacity model's arithmetic (bench/capacity-model.mjs), on round constants whose answers
 * are worked out by hand here: the table in docs/PERFORMANCE.md "Capacity" is only as good as it.
 */
import { describe, expect, it } from 'vitest';
// @ts-expect-error: a bench module in plain JavaScript, without declarations
import { PLAN, instanceConstants, plan } from '../../bench/capacity-model.mjs';

const constants = { cachedRequestUs: 100, uncachedRequestUs: 1_000, streamFrameUs: 25, streamRssKiB: 16 };
const limits = { redisDecisionsPerSecond: 50_000, redisPubSubPerSecond: 100_000, pgReadsPerSecond: 10_000 };

describe('capacity model', () => {
  it('keeps the planning assumptions the docs state', () => {
    expect(PLAN).toEqual({ cpuShare: 0.6, streamMemoryMiB: 1024, fanOutBudgetMs: 250, cachedShare: 0.9, picksPerSecondPeak: 20, messagesPerPick: 2, reconnectWithinS: 3, relayPollsPerSecond: 10 });
  });

  it('sizes stream instances by the CPU of back-to-back fan-outs at the peak', () => {
    // One fan-out may take 250 ms: 250,000 / 25 µs = 10,000 streams. At 20 picks a second the
    // fan-outs run back to back, 4 a second: 600,000 µs / (4 x 25 µs) = 6,000 streams. Memory:
    // 1 GiB / 16 KiB = 65,536. CPU decides.
    const p = plan({ subscribers: 1_000_000 }, constants, limits);
    expect(p.streamsPerInstance).toBe(6_000);
    expect(p.streamsBoundBy).toBe('CPU at the peak');
    expect(p.streamInstances).toBe(167);
    // A restarted instance's 6,000 streams back within 3 s: 2,000 limiter decisions a second.
    expect(p.redisDecisionsPerSecond).toBe(2_000);
    // 20 picks x 2 messages to each of 167 instances.
    expect(p.busDeliveriesPerSecond).toBe(6_680);
    // 2,000 replays + 2,000 key lookups + 167 relays x 10 polls.
    expect(p.pgQueriesPerSecond).toBe(5_670);
    expect(p.firstShared).toBe('PostgreSQL reads');
    expect(p.firstShare).toBe(0.57);
    expect(p.remedy).toMatch(/replicas/);
  });

  it('sizes stream instances by memory when streams are large', () => {
    // 1 GiB / 256 KiB = 4,096 streams, fewer than the CPU's 6,000.
    const p = plan({ subscribers: 10_000 }, { ...constants, streamRssKiB: 256 }, limits);
    expect(p.streamsPerInstance).toBe(4_096);
    expect(p.streamsBoundBy).toBe('memory');
    expect(p.streamInstances).toBe(3);
  });

  it('sizes API instances by the cached / uncached mix at 60 % of a core', () => {
    // 0.9 x 100 + 0.1 x 1,000 = 190 µs a request; 600,000 µs / 190 = 3,157 requests a second.
    const p = plan({ requestsPerSecond: 100_000 }, constants, limits);
    expect(p.requestsPerInstance).toBe(3_157);
    expect(p.apiInstances).toBe(32);
    // One limiter decision per request; a tenth of requests plus 32 relays x 10 polls reach PostgreSQL.
    expect(p.redisDecisionsPerSecond).toBe(100_000);
    expect(p.pgQueriesPerSecond).toBe(10_320);
    expect(p.firstShared).toBe('Redis (limiter decisions)');
    expect(p.firstShare).toBe(2);
  });

  it('reads every constant from the benches\' results files', () => {
    for (const [name, constant] of Object.entries(instanceConstants() as Record<string, { value: unknown; from: string }>)) {
      expect(typeof constant.value, name).toBe('number');
      expect(Number.isFinite(constant.value as number) && (constant.value as number) > 0, name).toBe(true);
      expect(constant.from, name).toMatch(/^npm run bench/);
    }
  });
});
