/**
 * The guarantees every RateLimiter gives (docs/API.md "Rate limits", docs/RATE_LIMITING.md), as one suite run
 * against each implementation. Each test uses fresh random API key ids, so suites can share a
 * Redis without flushing it.
 */
import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import type { TierLimit } from '../../src/domain/access.js';
import { ManualClock } from '../../src/domain/clock.js';
import { WINDOW_MS } from '../../src/domain/rate-limit.js';
import type { LimitDecision, LimiterMode, RateLimiter } from '../../src/services/limits/rate-limiter.js';
import type { MonthlyUsageStore } from '../../src/services/limits/usage-store.js';
import type { UsageDatabase } from './support.js';

export interface LimiterFactoryOptions {
  usageStore: MonthlyUsageStore;
  now: () => number;
}

export type LimiterFactory = (options: LimiterFactoryOptions) => RateLimiter;

const at = (iso: string): number => Date.parse(iso);
const unix = (iso: string): number => at(iso) / 1000;

/** mulberry32: a reproducible trace without a dependency. */
function seededRandom(seed: number): () => number {
  let state = seed;
  return () => {
    state = (state + 0x6d2b79f5) | 0;
    let t = Math.imul(state ^ (state >>> 15), 1 | state);
    t = (t + Math.imul(t ^ (t >>> 7), 61 | t)) ^ t;
    return ((t ^ (t >>> 14)) >>> 0) / 4_294_967_296;
  };
}

function withoutAdmission(decision: LimitDecision): LimitDecision {
  if (!decision.allowed) return decision;
  const { admission: _admission, ...rest } = decision;
  return rest;
}

function admittedCount(decisions: LimitDecision[]): number {
  return decisions.filter((decision) => decision.allowed).length;
}

/** `usageDatabase` is read once the suite runs (the calling file opens it in beforeAll). */
export function describeLimiterContract(
  name: string,
  createLimiter: LimiterFactory,
  expectedMode: LimiterMode,
  usageDatabase: () => UsageDatabase,
): void {
  describe(`${name} (limiter contract)`, () => {
    let database: UsageDatabase;
    const open: RateLimiter[] = [];

    beforeAll(() => {
      database = usageDatabase();
    });

    afterAll(async () => {
      await Promise.all(open.map((limiter) => limiter.close()));
    });

    async function setUp(start: string): Promise<{ clock: ManualClock; limiter: RateLimiter }> {
      const clock = new ManualClock(start);
      const limiter = createLimiter({ usageStore: database.usageStore, now: () => clock.now().getTime() });
      open.push(limiter);
      // Used once ready, as /readyz would have it (a Redis connection is still being set up).
      await vi.waitFor(async () => expect(await limiter.ping()).toBe(true));
      return { clock, limiter };
    }

    /** The decision at `iso`, without what the admission counted (the release test checks that). */
    async function consumeAt(limiter: RateLimiter, clock: ManualClock, iso: string, apiKeyId: string, policy: TierLimit) {
      clock.set(iso);
      return withoutAdmission(await limiter.consume(apiKeyId, policy));
    }

    it('admits exactly 25 of 60 parallel requests on a 25/h key, one remaining value each', async () => {
      const { limiter } = await setUp('2026-11-22T10:00:00Z');
      const key = randomUUID();
      const policy = { hourly: 25, monthly: 10_000 };
      const decisions = await Promise.all(Array.from({ length: 60 }, () => limiter.consume(key, policy)));
      expect(admittedCount(decisions)).toBe(25);
      const remaining = decisions.filter((decision) => decision.allowed).map((decision) => decision.hourly.remaining);
      expect(remaining.sort((a, b) => a - b)).toEqual(Array.from({ length: 25 }, (_, index) => index));
      for (const decision of decisions.filter((d) => !d.allowed)) expect(decision).toMatchObject({ reason: 'hourly' });
      expect(await limiter.peek(key, policy)).toMatchObject({ hourly: { remaining: 0 }, monthly: { used: 25 } });
      expect(limiter.mode()).toBe(expectedMode);
    });

    it('counts nothing for rejected requests', async () => {
      const { clock, limiter } = await setUp('2026-11-22T10:00:00Z');
      const key = randomUUID();
      const hourlyCapped = { hourly: 3, monthly: 100 };
      for (let i = 0; i < 3; i += 1) expect((await limiter.consume(key, hourlyCapped)).allowed).toBe(true);
      for (let i = 0; i < 5; i += 1) expect(await limiter.consume(key, hourlyCapped)).toMatchObject({ allowed: false, reason: 'hourly' });
      expect(await limiter.peek(key, hourlyCapped)).toMatchObject({ hourly: { remaining: 0 }, monthly: { used: 3 } });
      // An hour and a minute later exactly 3 are admitted again: the 5 rejections took no room.
      clock.advance(WINDOW_MS + 60_000);
      const again = [];
      for (let i = 0; i < 4; i += 1) again.push(await limiter.consume(key, hourlyCapped));
      expect(again.map((decision) => decision.allowed)).toEqual([true, true, true, false]);

      // Six counted this month; a cap of 6 rejects without touching the hourly window either.
      const monthCapped = { hourly: 100, monthly: 6 };
      for (let i = 0; i < 3; i += 1) expect(await limiter.consume(key, monthCapped)).toMatchObject({ allowed: false, reason: 'monthly' });
      expect(await limiter.peek(key, monthCapped)).toMatchObject({ hourly: { remaining: 97 }, monthly: { used: 6 } });
    });

    it('takes a released request back from the hour and the month, and stores it as refunded', async () => {
      const { limiter } = await setUp('2026-11-22T10:00:00Z');
      const key = await database.createApiKey();
      const policy = { hourly: 3, monthly: 100 };
      const admitted = [];
      for (let i = 0; i < 3; i += 1) admitted.push(await limiter.consume(key, policy));
      expect(await limiter.consume(key, policy)).toMatchObject({ allowed: false, reason: 'hourly' });
      const [first] = admitted;
      expect(first).toMatchObject({ allowed: true, admission: { apiKeyId: key, month: '2026-11', by: expectedMode } });
      // Its answer was a 5xx: the request counts nothing, and its room in the hour is free again.
      if (!first?.allowed || !first.admission) throw new Error('the first request was admitted');
      await limiter.release(first.admission);
      expect(await limiter.peek(key, policy)).toMatchObject({ hourly: { remaining: 1 }, monthly: { used: 2 } });
      expect(await limiter.consume(key, policy)).toMatchObject({ allowed: true, hourly: { remaining: 0 }, monthly: { used: 3 } });
      await limiter.flush();
      expect(await database.usageStore.load(key, '2026-11')).toEqual({ count: 3, refunded: 1 });
    });

    it('never admits more than the limit in any rolling hour, bursts at bucket and window edges included', async () => {
      const { clock, limiter } = await setUp('2026-11-22T10:00:59.999Z');
      const key = randomUUID();
      const policy = { hourly: 5, monthly: 10_000 };
      const admittedAt: number[] = [];
      const burst = async (iso: string, size: number) => {
        clock.set(iso);
        const decisions = await Promise.all(Array.from({ length: size }, () => limiter.consume(key, policy)));
        for (const decision of decisions) if (decision.allowed) admittedAt.push(at(iso));
        return admittedCount(decisions);
      };
      expect(await burst('2026-11-22T10:00:59.999Z', 3)).toBe(3); // last ms of a bucket
      expect(await burst('2026-11-22T10:01:00.000Z', 4)).toBe(2); // first ms of the next one
      expect(await burst('2026-11-22T10:59:59.999Z', 3)).toBe(0);
      // Exactly one hour after the first burst: an exact log would admit, the bucket still counts.
      expect(await burst('2026-11-22T11:00:59.999Z', 3)).toBe(0);
      expect(await burst('2026-11-22T11:01:00.000Z', 5)).toBe(3);
      expect(await burst('2026-11-22T11:01:59.999Z', 5)).toBe(0);
      expect(await burst('2026-11-22T11:02:00.000Z', 5)).toBe(2);
      for (let i = 0; i + policy.hourly < admittedAt.length; i += 1) {
        expect(admittedAt[i + policy.hourly]! - admittedAt[i]!).toBeGreaterThan(WINDOW_MS);
      }
    });

    it('resumes admission at most 60 s after an exact sliding log would', async () => {
      const { clock, limiter } = await setUp('2026-11-22T10:00:00.000Z');
      const key = randomUUID();
      const policy = { hourly: 2, monthly: 10_000 };
      await limiter.consume(key, policy);
      await limiter.consume(key, policy);
      // The exact log admits again at 11:00:00.000; the bucket of 10:00 leaves at 11:01:00.000.
      const atExactInstant = await consumeAt(limiter, clock, '2026-11-22T11:00:00.000Z', key, policy);
      expect(atExactInstant).toMatchObject({ allowed: false, reason: 'hourly', retryAfterSeconds: 60 });
      expect((await consumeAt(limiter, clock, '2026-11-22T11:00:59.999Z', key, policy)).allowed).toBe(false);
      expect((await consumeAt(limiter, clock, '2026-11-22T11:01:00.000Z', key, policy)).allowed).toBe(true);
    });

    it('follows a random trace exactly as the bucket rule prescribes', async () => {
      const { clock, limiter } = await setUp('2026-11-22T10:00:00Z');
      const key = randomUUID();
      const policy = { hourly: 7, monthly: 10_000 };
      const random = seededRandom(42);
      const admittedAt: number[] = [];
      for (let i = 0; i < 150; i += 1) {
        clock.advance(Math.floor(random() * random() * 30 * 60_000));
        const t = clock.now().getTime();
        const decision = await limiter.consume(key, policy);
        const inExactHour = admittedAt.filter((time) => time > t - WINDOW_MS).length;
        if (decision.allowed) {
          admittedAt.push(t);
          expect(inExactHour).toBeLessThan(policy.hourly);
        } else {
          // Rejected: the exact log is full now, or was full less than 60 s ago.
          expect(admittedAt.filter((time) => time > t - WINDOW_MS - 60_000).length).toBeGreaterThanOrEqual(policy.hourly);
        }
      }
      expect(admittedAt.length).toBeGreaterThan(30);
    });

    it('caps each UTC calendar month exactly and resets at 00:00:00 UTC on the 1st', async () => {
      const { clock, limiter } = await setUp('2026-11-30T23:59:58.000Z');
      const key = randomUUID();
      const policy = { hourly: 100, monthly: 3 };
      const november = new Date('2026-12-01T00:00:00.000Z');
      for (let i = 0; i < 3; i += 1) {
        expect(await limiter.consume(key, policy)).toMatchObject({ allowed: true, monthly: { used: i + 1, remaining: 2 - i, resetsAt: november } });
      }
      expect(await consumeAt(limiter, clock, '2026-11-30T23:59:59.999Z', key, policy)).toEqual({
        allowed: false,
        reason: 'monthly',
        retryAfterSeconds: 1,
        hourly: { limit: 100, remaining: 97, resetAt: unix('2026-12-01T01:00:00Z') },
        monthly: { limit: 3, used: 3, remaining: 0, resetsAt: november },
      });
      const december = await consumeAt(limiter, clock, '2026-12-01T00:00:00.000Z', key, policy);
      expect(december).toEqual({
        allowed: true,
        // November's requests still count in the rolling hour.
        hourly: { limit: 100, remaining: 96, resetAt: unix('2026-12-01T01:00:00Z') },
        monthly: { limit: 3, used: 1, remaining: 2, resetsAt: new Date('2027-01-01T00:00:00.000Z') },
      });
      await limiter.consume(key, policy);
      await limiter.consume(key, policy);
      expect(await consumeAt(limiter, clock, '2026-12-31T23:59:58.500Z', key, policy)).toMatchObject({
        allowed: false,
        reason: 'monthly',
        retryAfterSeconds: 2,
        monthly: { used: 3, resetsAt: new Date('2027-01-01T00:00:00.000Z') },
      });
    });

    it('reports exact header values on a hand-computed sequence', async () => {
      const { clock, limiter } = await setUp('2026-11-22T10:00:30.000Z');
      const key = randomUUID();
      const policy = { hourly: 3, monthly: 1_000 };
      const monthly = (used: number) => ({ limit: 1_000, used, remaining: 1_000 - used, resetsAt: new Date('2026-12-01T00:00:00Z') });
      // Requests of the 10:00 bucket leave the window at 11:01:00.
      expect(withoutAdmission(await limiter.consume(key, policy))).toEqual({ allowed: true, hourly: { limit: 3, remaining: 2, resetAt: unix('2026-11-22T11:01:00Z') }, monthly: monthly(1) });
      expect(await consumeAt(limiter, clock, '2026-11-22T10:20:10.000Z', key, policy)).toEqual({
        allowed: true,
        hourly: { limit: 3, remaining: 1, resetAt: unix('2026-11-22T11:01:00Z') },
        monthly: monthly(2),
      });
      expect(await consumeAt(limiter, clock, '2026-11-22T10:40:00.000Z', key, policy)).toMatchObject({ allowed: true, hourly: { remaining: 0 } });
      expect(await consumeAt(limiter, clock, '2026-11-22T10:50:00.250Z', key, policy)).toEqual({
        allowed: false,
        reason: 'hourly',
        retryAfterSeconds: 660, // 659.75 s to 11:01:00, rounded up
        hourly: { limit: 3, remaining: 0, resetAt: unix('2026-11-22T11:01:00Z') },
        monthly: monthly(3),
      });
      expect(await consumeAt(limiter, clock, '2026-11-22T11:00:59.999Z', key, policy)).toMatchObject({ allowed: false, retryAfterSeconds: 1 });
      // The 10:00 request left; the oldest counted is now the 10:20 one, leaving at 11:21:00.
      expect(await consumeAt(limiter, clock, '2026-11-22T11:01:00.000Z', key, policy)).toEqual({
        allowed: true,
        hourly: { limit: 3, remaining: 0, resetAt: unix('2026-11-22T11:21:00Z') },
        monthly: monthly(4),
      });
      // A tier downgrade to 1/h: three requests must leave before one more is admitted.
      expect(await consumeAt(limiter, clock, '2026-11-22T11:05:00.000Z', key, { hourly: 1, monthly: 1_000 })).toEqual({
        allowed: false,
        reason: 'hourly',
        retryAfterSeconds: unix('2026-11-22T12:02:00Z') - unix('2026-11-22T11:05:00Z'),
        hourly: { limit: 1, remaining: 0, resetAt: unix('2026-11-22T11:21:00Z') },
        monthly: monthly(4),
      });
    });

    it('peeks without counting anything', async () => {
      const { limiter } = await setUp('2026-11-22T10:00:30.000Z');
      const key = randomUUID();
      const policy = { hourly: 3, monthly: 1_000 };
      const fresh = { hourly: { limit: 3, remaining: 3, resetAt: unix('2026-11-22T11:01:00Z') }, monthly: { limit: 1_000, used: 0, remaining: 1_000, resetsAt: new Date('2026-12-01T00:00:00Z') } };
      expect(await limiter.peek(key, policy)).toEqual(fresh);
      expect(await limiter.peek(key, policy)).toEqual(fresh);
      await limiter.consume(key, policy);
      expect(await limiter.peek(key, policy)).toMatchObject({ hourly: { remaining: 2 }, monthly: { used: 1 } });
    });

    it('writes monthly usage to PostgreSQL at close, and a new instance continues the count', async () => {
      const first = await setUp('2026-11-22T10:00:00Z');
      const key = await database.createApiKey();
      const policy = { hourly: 100, monthly: 10 };
      for (let i = 0; i < 7; i += 1) await first.limiter.consume(key, policy);
      await first.limiter.close();
      expect(await database.storedCount(key, '2026-11')).toBe(7);

      const second = await setUp('2026-11-22T12:00:00Z');
      expect(await second.limiter.peek(key, policy)).toMatchObject({ monthly: { used: 7, remaining: 3 } });
      const decisions = [];
      for (let i = 0; i < 5; i += 1) decisions.push(await second.limiter.consume(key, policy));
      expect(decisions.map((decision) => decision.allowed)).toEqual([true, true, true, false, false]);
      await second.limiter.close();
      expect(await database.storedCount(key, '2026-11')).toBe(10);
    });
  });
}
