import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import {
  BUCKET_WIDTH_MS,
  WINDOW_MS,
  bucketLeavesWindowAt,
  bucketOf,
  countInWindow,
  currentBucket,
  decide,
  monthKeyOf,
  monthResetsAt,
  oldestCountedBucket,
  pruneBefore,
  resetAt,
  retryAfterSeconds,
  secondsUntilNextMonth,
  standing,
} from '../../src/domain/rate-limit.js';

const at = (iso: string): number => Date.parse(iso);
const unix = (iso: string): number => at(iso) / 1000;
const NO_MONTHLY_CAP = Number.MAX_SAFE_INTEGER;

describe('buckets', () => {
  it('puts a time in its one-minute bucket', () => {
    expect(bucketOf(0)).toBe(0);
    expect(bucketOf(59_999)).toBe(0);
    expect(bucketOf(60_000)).toBe(1);
    expect(bucketOf(at('2026-11-22T10:00:59.999Z'))).toBe(at('2026-11-22T10:00:00Z') / BUCKET_WIDTH_MS);
  });

  it('counts the current bucket and the 60 before it, nothing else', () => {
    const current = 1_000;
    const buckets = new Map([
      [current - 61, 100],
      [current - 60, 1],
      [current - 30, 2],
      [current, 4],
      [current + 1, 1000],
    ]);
    expect(oldestCountedBucket(current)).toBe(current - 60);
    expect(countInWindow(buckets, current)).toBe(7);
    expect(countInWindow(buckets, current + 60)).toBe(1004);
  });

  it('reads the string-keyed records Redis hands back', () => {
    expect(countInWindow({ '940': 1, '999': 2, '1000': 3, '939': 9 }, 1000)).toBe(6);
  });

  it('prunes buckets older than the given one, in place', () => {
    const buckets = new Map([
      [5, 1],
      [6, 1],
      [7, 1],
    ]);
    expect(pruneBefore(buckets, 7)).toBe(2);
    expect([...buckets.keys()]).toEqual([7]);
    expect(pruneBefore(buckets, 7)).toBe(0);
  });

  it('counts in the newest bucket when the clock stepped back behind it', () => {
    expect(currentBucket(new Map([[10, 1]]), 5 * BUCKET_WIDTH_MS)).toBe(10);
    expect(currentBucket(new Map([[10, 1]]), 12 * BUCKET_WIDTH_MS)).toBe(12);
    expect(currentBucket(new Map(), 12 * BUCKET_WIDTH_MS)).toBe(12);
  });
});

describe('resetAt', () => {
  const c = bucketOf(at('2026-11-22T10:30:15Z'));

  it('is when the oldest counted bucket holding requests leaves (61 buckets after its start)', () => {
    const buckets = new Map([
      [c - 61, 3], // already outside the window: ignored
      [c - 20, 1],
      [c - 5, 2],
    ]);
    expect(resetAt(buckets, c)).toBe(unix('2026-11-22T10:10:00Z') + 3660);
    expect(bucketLeavesWindowAt(c - 20)).toBe(unix('2026-11-22T11:11:00Z'));
  });

  it('with nothing counted, is when a request made now would leave', () => {
    expect(resetAt(new Map(), c)).toBe(unix('2026-11-22T11:31:00Z'));
  });
});

describe('retryAfterSeconds', () => {
  const now = at('2026-11-22T10:30:15.250Z');
  const c = bucketOf(now);

  it('waits for the oldest bucket to leave when the count is at the limit', () => {
    const buckets = new Map([
      [c - 60, 1],
      [c - 10, 2],
    ]);
    // Bucket c-60 (09:30) leaves at 10:31:00: 44.75 s from now, rounded up.
    expect(retryAfterSeconds(buckets, c, 3, now)).toBe(45);
  });

  it('waits for as many buckets as needed when the limit was lowered below the count', () => {
    const buckets = new Map([
      [c - 50, 2],
      [c - 40, 2],
      [c - 30, 2],
    ]);
    // Count 6, limit 3: buckets c-50 (09:40) and c-40 (09:50) must leave; the latter at
    // 10:51:00, 1244.75 s from now.
    expect(retryAfterSeconds(buckets, c, 3, now)).toBe(1245);
  });

  it('is at least one second', () => {
    const justBefore = at('2026-11-22T10:31:00Z') - 1;
    expect(retryAfterSeconds(new Map([[bucketOf(justBefore) - 60, 1]]), bucketOf(justBefore), 1, justBefore)).toBe(1);
    expect(retryAfterSeconds(new Map(), c, 5, now)).toBe(1);
  });
});

describe('months', () => {
  it.each([
    ['2026-11-30T23:59:59.999Z', '2026-11', '2026-12-01T00:00:00.000Z', 1],
    ['2026-12-01T00:00:00.000Z', '2026-12', '2027-01-01T00:00:00.000Z', 31 * 86_400],
    ['2026-12-31T23:59:58.500Z', '2026-12', '2027-01-01T00:00:00.000Z', 2],
    ['2028-02-29T12:00:00.000Z', '2028-02', '2028-03-01T00:00:00.000Z', 12 * 3600],
  ])('%s is in %s, which resets at %s', (time, month, resetsAt, secondsLeft) => {
    expect(monthKeyOf(at(time))).toBe(month);
    expect(monthResetsAt(at(time)).toISOString()).toBe(resetsAt);
    expect(secondsUntilNextMonth(at(time))).toBe(secondsLeft);
  });

  it('names the month of any instant asked in any order (monthKeyOf remembers the last month)', () => {
    fc.assert(
      fc.property(fc.array(fc.integer({ min: Date.UTC(1990, 0, 1), max: Date.UTC(2100, 0, 1) }), { maxLength: 20 }), (instants) => {
        for (const ms of instants) {
          expect(monthKeyOf(ms)).toBe(new Date(ms).toISOString().slice(0, 7));
          expect(monthKeyOf(ms - 1)).toBe(new Date(ms - 1).toISOString().slice(0, 7));
        }
      }),
    );
    expect([at('2026-11-30T23:59:59.999Z'), at('2026-12-01T00:00:00.000Z'), at('2026-11-30T23:59:59.999Z')].map(monthKeyOf)).toEqual(['2026-11', '2026-12', '2026-11']);
  });
});

describe('decide', () => {
  const now = at('2026-11-22T10:00:30Z');
  const c = bucketOf(now);
  const policy = { hourly: 3, monthly: 10 };

  it('allows and reports the standing including this request', () => {
    expect(decide({ nowMs: now, buckets: new Map([[c - 1, 1]]), monthUsed: 4 }, policy)).toEqual({
      allowed: true,
      hourly: { limit: 3, remaining: 1, resetAt: unix('2026-11-22T11:00:00Z') },
      monthly: { limit: 10, used: 5, remaining: 5, resetsAt: new Date('2026-12-01T00:00:00Z') },
    });
  });

  it('denies on the hourly limit without counting, with the exact Retry-After', () => {
    const buckets = new Map([
      [c - 59, 1],
      [c, 2],
    ]);
    expect(decide({ nowMs: now, buckets, monthUsed: 4 }, policy)).toEqual({
      allowed: false,
      reason: 'hourly',
      // Bucket 09:01 leaves at 10:02:00, 90 s after 10:00:30.
      retryAfterSeconds: 90,
      hourly: { limit: 3, remaining: 0, resetAt: unix('2026-11-22T10:02:00Z') },
      monthly: { limit: 10, used: 4, remaining: 6, resetsAt: new Date('2026-12-01T00:00:00Z') },
    });
  });

  it('checks the month first: an exhausted month denies with the time to the next month', () => {
    const verdict = decide({ nowMs: now, buckets: new Map([[c, 3]]), monthUsed: 10 }, policy);
    expect(verdict).toMatchObject({ allowed: false, reason: 'monthly', retryAfterSeconds: unix('2026-12-01T00:00:00Z') - now / 1000 });
    expect(verdict.monthly).toEqual({ limit: 10, used: 10, remaining: 0, resetsAt: new Date('2026-12-01T00:00:00Z') });
  });

  it('never reports negative remaining values when usage is above a lowered limit', () => {
    const verdict = decide({ nowMs: now, buckets: new Map([[c, 7]]), monthUsed: 25 }, policy);
    expect(verdict.hourly.remaining).toBe(0);
    expect(verdict.monthly.remaining).toBe(0);
  });

  it('peeks without counting', () => {
    expect(standing({ nowMs: now, buckets: new Map([[c, 1]]), monthUsed: 4 }, policy)).toEqual({
      hourly: { limit: 3, remaining: 2, resetAt: unix('2026-11-22T11:01:00Z') },
      monthly: { limit: 10, used: 4, remaining: 6, resetsAt: new Date('2026-12-01T00:00:00Z') },
    });
  });

  it.each([0, -1, 1.5, Number.NaN])('rejects a limit of %s', (limit) => {
    expect(() => decide({ nowMs: now, buckets: new Map(), monthUsed: 0 }, { hourly: limit, monthly: 10 })).toThrow(RangeError);
    expect(() => decide({ nowMs: now, buckets: new Map(), monthUsed: 0 }, { hourly: 10, monthly: limit })).toThrow(RangeError);
  });
});

/** Runs the decision rule over request times, as a limiter does, and records what happened. */
function simulate(times: number[], limit: number) {
  const buckets = new Map<number, number>();
  const admitted: number[] = [];
  const rejections: { atMs: number; retryAfterSeconds: number; buckets: Map<number, number>; admitted: number[] }[] = [];
  for (const nowMs of times) {
    const verdict = decide({ nowMs, buckets, monthUsed: 0 }, { hourly: limit, monthly: NO_MONTHLY_CAP });
    if (verdict.allowed) {
      const bucket = currentBucket(buckets, nowMs);
      buckets.set(bucket, (buckets.get(bucket) ?? 0) + 1);
      pruneBefore(buckets, oldestCountedBucket(bucket));
      admitted.push(nowMs);
    } else {
      rejections.push({ atMs: nowMs, retryAfterSeconds: verdict.retryAfterSeconds, buckets: new Map(buckets), admitted: [...admitted] });
    }
  }
  return { admitted, rejections };
}

/** An exact sliding log: requests in (t - 3600 s, t]. */
function exactCount(admitted: number[], t: number): number {
  return admitted.filter((time) => time > t - WINDOW_MS && time <= t).length;
}

/** The first instant >= t at which an exact sliding log over `admitted` would admit. */
function exactAdmissionInstant(admitted: number[], t: number, limit: number): number {
  const inWindow = admitted.filter((time) => time > t - WINDOW_MS && time <= t);
  if (inWindow.length < limit) return t;
  // The limit-th most recent request has to leave; the limit-1 newer ones may stay.
  return inWindow[inWindow.length - limit]! + WINDOW_MS;
}

const requestTimes = fc
  .tuple(
    fc.integer({ min: 1_700_000_000_000, max: 1_900_000_000_000 }),
    fc.array(
      fc.oneof(
        fc.integer({ min: 0, max: 2_000 }),
        fc.integer({ min: 0, max: 300_000 }),
        // Edges: exactly a bucket, a hair under, exactly the window.
        fc.constantFrom(BUCKET_WIDTH_MS, BUCKET_WIDTH_MS - 1, 1, WINDOW_MS, WINDOW_MS - 1),
      ),
      { minLength: 1, maxLength: 250 },
    ),
  )
  .map(([start, gaps]) => {
    let t = start;
    return gaps.map((gap) => (t += gap));
  });

describe('the hourly guarantee (properties)', () => {
  it('never admits more than the limit in any closed 3600 s interval', () => {
    fc.assert(
      fc.property(requestTimes, fc.integer({ min: 1, max: 12 }), (times, limit) => {
        const { admitted } = simulate(times, limit);
        for (let i = 0; i + limit < admitted.length; i += 1) {
          // limit+1 admissions span more than an hour, so no hour holds them all.
          expect(admitted[i + limit]! - admitted[i]!).toBeGreaterThan(WINDOW_MS);
        }
      }),
      { numRuns: 400 },
    );
  });

  it('never admits a request an exact sliding log would reject', () => {
    fc.assert(
      fc.property(requestTimes, fc.integer({ min: 1, max: 12 }), (times, limit) => {
        const { admitted } = simulate(times, limit);
        admitted.forEach((t, index) => {
          expect(exactCount(admitted.slice(0, index), t)).toBeLessThan(limit);
        });
      }),
      { numRuns: 400 },
    );
  });

  it('admits again within 60 s of when an exact sliding log would, and says so in Retry-After', () => {
    fc.assert(
      fc.property(requestTimes, fc.integer({ min: 1, max: 12 }), (times, limit) => {
        const { rejections } = simulate(times, limit);
        for (const { atMs, retryAfterSeconds: retryAfter, buckets, admitted } of rejections) {
          const exactInstant = exactAdmissionInstant(admitted, atMs, limit);
          const admitsAt = (t: number) => countInWindow(buckets, bucketOf(t)) < limit;
          expect(admitsAt(exactInstant + 60_000)).toBe(true);
          // Retry-After is the first whole second at which the buckets admit.
          expect(admitsAt(atMs + retryAfter * 1000)).toBe(true);
          if (retryAfter > 1) expect(admitsAt(atMs + (retryAfter - 1) * 1000)).toBe(false);
        }
      }),
      { numRuns: 400 },
    );
  });

  it('resumes exactly when the oldest counted bucket leaves: 60 s late at worst, 1 ms at best', () => {
    const limit = 2;
    // Requests at the very start of a bucket: the exact log frees them at 11:00:00.000.
    const early = simulate([at('2026-11-22T10:00:00.000Z'), at('2026-11-22T10:00:00.000Z'), at('2026-11-22T11:00:00.000Z'), at('2026-11-22T11:00:59.999Z'), at('2026-11-22T11:01:00.000Z')], limit);
    expect(early.admitted.map((t) => new Date(t).toISOString())).toEqual([
      '2026-11-22T10:00:00.000Z',
      '2026-11-22T10:00:00.000Z',
      '2026-11-22T11:01:00.000Z',
    ]);
    // Requests at the very end of a bucket: the exact log frees them at 11:00:59.999.
    const late = simulate([at('2026-11-22T10:00:59.999Z'), at('2026-11-22T10:00:59.999Z'), at('2026-11-22T11:00:59.999Z'), at('2026-11-22T11:01:00.000Z')], limit);
    expect(late.admitted.map((t) => new Date(t).toISOString())).toEqual([
      '2026-11-22T10:00:59.999Z',
      '2026-11-22T10:00:59.999Z',
      '2026-11-22T11:01:00.000Z',
    ]);
    expect(late.rejections[0]).toMatchObject({ atMs: at('2026-11-22T11:00:59.999Z'), retryAfterSeconds: 1 });
  });
});
