/**
 * The rate-limit rules (docs/API.md, "Rate limits"; docs/RATE_LIMITING.md), pure and engine-free: the
 * in-memory limiter runs them directly; the Redis Lua script applies the same decision rule
 * atomically and hands its usage snapshot back here to compute the standing and Retry-After.
 *
 * Hourly: a sliding window of CONSERVATIVE one-minute buckets. A request at t ms lands in
 * bucket c = floor(t / 60 000); a decision counts the buckets c-60 .. c inclusive (61 of
 * them). The oldest bucket straddles the start of the rolling hour and is counted whole, so
 * the counted span [(c-60) x 60 s, t] always covers the exact rolling hour [t-3600 s, t]:
 * no rolling 3600 s can ever hold more than the limit. The price: a request leaves the count
 * when its whole bucket does, at most 60 s after it would leave an exact sliding log.
 *
 * Monthly: one counter per UTC calendar month ('YYYY-MM'), reset at 00:00:00 UTC on the 1st.
 *
 * Decision: monthly exhausted -> deny 'monthly'; else hourly exhausted -> deny 'hourly'; else
 * allow and count one in the current bucket and the month. Denied requests count nothing.
 */
import type { TierLimit } from './access.js';
import { perUtcPeriod, startOfNextUtcMonth, utcMonthKey } from './time.js';

/**
 * An admitted request whose answer counts nothing: a 429 (whichever limit refused it after
 * admission: too many streams, webhook subscriptions or token mints) or a 5xx (a database
 * outage's 503, an internal error). The HTTP status of an answer, or of a GraphQL refusal's code.
 */
export function answerCountsNothing(status: number): boolean {
  return status === 429 || status >= 500;
}

export const BUCKET_WIDTH_MS = 60_000;
/** The exact window the guarantee is about; the buckets cover it conservatively. */
export const WINDOW_MS = 3_600_000;
/** Buckets counted before the current one: c-60 .. c-1, then c itself. */
const PAST_BUCKETS_COUNTED = WINDOW_MS / BUCKET_WIDTH_MS;

/** Bucket number -> admitted requests in it. Redis hands back string fields, hence Record. */
export type Buckets = ReadonlyMap<number, number> | Readonly<Record<string, number>>;

export interface HourlyState {
  limit: number;
  /** Requests still admissible in the current rolling hour (after this request, if counted). */
  remaining: number;
  /** Unix seconds when the oldest counted request leaves the window. */
  resetAt: number;
}

export interface MonthlyState {
  limit: number;
  used: number;
  remaining: number;
  /** 00:00:00 UTC on the first day of the next month. */
  resetsAt: Date;
}

/** Which engine decided a request: Redis, the in-memory limiter, or the in-memory fallback of the Redis one. */
export type LimiterEngine = 'redis' | 'memory' | 'fallback';

/**
 * What an admitted request counted (set by the engines): enough to take it back when its
 * answer turns out to be a 5xx, which counts nothing.
 */
export interface Admission {
  apiKeyId: string;
  /** 'YYYY-MM' of the month counter it was counted in. */
  month: string;
  /** The hourly bucket it was counted in. */
  bucket: number;
  by: LimiterEngine;
}

/** A limiter's answer for one request: the one decision type of every engine and of the HTTP headers. */
export type LimitDecision =
  | { allowed: true; hourly: HourlyState; monthly: MonthlyState; admission?: Admission }
  | {
      allowed: false;
      reason: 'hourly' | 'monthly';
      /** Whole seconds (>= 1) until a request would be admitted again. */
      retryAfterSeconds: number;
      hourly: HourlyState;
      monthly: MonthlyState;
    };

/**
 * A key's month as stored: `count` requests counted (admitted less refunded), `refunded`
 * admitted requests taken back (answered 5xx, or counted by Redis for a request the fallback
 * answered). Admitted (count + refunded) and refunded only grow.
 */
export interface MonthlyUsage {
  count: number;
  refunded: number;
}

/**
 * Whether `a` is a later state of the same key-month than `b`: admitted more, or as many and
 * refunded more. Absolute writes keep the later state, so their order and repetition do not matter.
 */
export function isLaterUsage(a: MonthlyUsage, b: MonthlyUsage): boolean {
  const admittedA = a.count + a.refunded;
  const admittedB = b.count + b.refunded;
  return admittedA > admittedB || (admittedA === admittedB && a.refunded > b.refunded);
}

/** What a decision needs to know: the key's buckets and month usage before this request. */
export interface UsageSnapshot {
  nowMs: number;
  buckets: Buckets;
  monthUsed: number;
}

export function bucketOf(ms: number): number {
  return Math.floor(ms / BUCKET_WIDTH_MS);
}

export function oldestCountedBucket(current: number): number {
  return current - PAST_BUCKETS_COUNTED;
}

/** Unix seconds at which bucket b stops being counted: when bucket b+61 begins. */
export function bucketLeavesWindowAt(bucket: number): number {
  return ((bucket + PAST_BUCKETS_COUNTED + 1) * BUCKET_WIDTH_MS) / 1000;
}

function entriesOf(buckets: Buckets): [number, number][] {
  if (buckets instanceof Map) return [...buckets.entries()];
  return Object.entries(buckets).map(([bucket, count]) => [Number(bucket), count]);
}

/**
 * The bucket a request at nowMs is counted in. Normally bucketOf(nowMs); if the clock stepped
 * back behind a bucket that already holds requests, the newest bucket is used instead, because
 * a window ending before counted requests would not see them (and would admit too many).
 */
export function currentBucket(buckets: Buckets, nowMs: number): number {
  let current = bucketOf(nowMs);
  for (const [bucket, count] of entriesOf(buckets)) {
    if (count > 0 && bucket > current) current = bucket;
  }
  return current;
}

/** Requests counted by a decision in bucket c: the sum of buckets c-60 .. c. */
export function countInWindow(buckets: Buckets, current: number): number {
  const oldest = oldestCountedBucket(current);
  let total = 0;
  for (const [bucket, count] of entriesOf(buckets)) {
    if (bucket >= oldest && bucket <= current) total += count;
  }
  return total;
}

/** Removes, in place, every bucket older than `oldestKept`; returns how many were removed. */
export function pruneBefore(buckets: Map<number, number>, oldestKept: number): number {
  let removed = 0;
  for (const bucket of buckets.keys()) {
    if (bucket < oldestKept) {
      buckets.delete(bucket);
      removed += 1;
    }
  }
  return removed;
}

/** Counted buckets c-60 .. c holding requests, oldest first. */
function countedBuckets(buckets: Buckets, current: number): [number, number][] {
  const oldest = oldestCountedBucket(current);
  return entriesOf(buckets)
    .filter(([bucket, count]) => count > 0 && bucket >= oldest && bucket <= current)
    .sort(([a], [b]) => a - b);
}

/**
 * X-RateLimit-Reset: unix seconds when the oldest counted request leaves the window. With
 * nothing counted, when a request made now would leave it.
 */
export function resetAt(buckets: Buckets, current: number): number {
  const [oldest] = countedBuckets(buckets, current);
  return bucketLeavesWindowAt(oldest ? oldest[0] : current);
}

/**
 * Whole seconds (>= 1) from nowMs until enough of the oldest buckets have left the window that
 * the count is below the limit, i.e. until a request would be admitted (ignoring the month).
 */
export function retryAfterSeconds(buckets: Buckets, current: number, limit: number, nowMs: number): number {
  let count = countInWindow(buckets, current);
  let admissibleAtMs = nowMs;
  for (const [bucket, inBucket] of countedBuckets(buckets, current)) {
    if (count < limit) break;
    count -= inBucket;
    admissibleAtMs = bucketLeavesWindowAt(bucket) * 1000;
  }
  return secondsUntil(admissibleAtMs, nowMs);
}

function secondsUntil(targetMs: number, nowMs: number): number {
  return Math.max(1, Math.ceil((targetMs - nowMs) / 1000));
}

/** 'YYYY-MM' of the UTC calendar month containing ms: the key monthly usage is kept under. */
export const monthKeyOf: (ms: number) => string = perUtcPeriod('month', utcMonthKey);

/** 00:00:00 UTC on the first day of the month after the one containing ms. */
export function monthResetsAt(ms: number): Date {
  return startOfNextUtcMonth(new Date(ms));
}

/** Retry-After of a monthly denial: whole seconds (>= 1) until the next month starts. */
export function secondsUntilNextMonth(ms: number): number {
  return secondsUntil(monthResetsAt(ms).getTime(), ms);
}

function assertPolicy(policy: TierLimit): void {
  for (const field of ['hourly', 'monthly'] as const) {
    if (!Number.isSafeInteger(policy[field]) || policy[field] < 1) {
      throw new RangeError(`rate limit: ${field} limit must be a positive integer, got ${policy[field]}`);
    }
  }
}

function hourlyStanding(buckets: Buckets, current: number, limit: number, counted: number): HourlyState {
  return { limit, remaining: Math.max(0, limit - counted), resetAt: resetAt(buckets, current) };
}

function monthlyStanding(nowMs: number, limit: number, used: number): MonthlyState {
  return { limit, used, remaining: Math.max(0, limit - used), resetsAt: monthResetsAt(nowMs) };
}

/** The standing without counting anything (dashboards, peek). */
export function standing(snapshot: UsageSnapshot, policy: TierLimit): { hourly: HourlyState; monthly: MonthlyState } {
  assertPolicy(policy);
  const { nowMs, buckets, monthUsed } = snapshot;
  const current = currentBucket(buckets, nowMs);
  return {
    hourly: hourlyStanding(buckets, current, policy.hourly, countInWindow(buckets, current)),
    monthly: monthlyStanding(nowMs, policy.monthly, monthUsed),
  };
}

/**
 * Decides one request from the usage before it. When allowed, the caller counts one request
 * in bucket currentBucket(buckets, nowMs) and one in monthKeyOf(nowMs); the returned standing
 * already includes that request.
 */
export function decide(snapshot: UsageSnapshot, policy: TierLimit): LimitDecision {
  assertPolicy(policy);
  const { nowMs, buckets, monthUsed } = snapshot;
  const current = currentBucket(buckets, nowMs);
  const counted = countInWindow(buckets, current);
  if (monthUsed >= policy.monthly) {
    return {
      allowed: false,
      reason: 'monthly',
      retryAfterSeconds: secondsUntilNextMonth(nowMs),
      hourly: hourlyStanding(buckets, current, policy.hourly, counted),
      monthly: monthlyStanding(nowMs, policy.monthly, monthUsed),
    };
  }
  if (counted >= policy.hourly) {
    return {
      allowed: false,
      reason: 'hourly',
      retryAfterSeconds: retryAfterSeconds(buckets, current, policy.hourly, nowMs),
      hourly: hourlyStanding(buckets, current, policy.hourly, counted),
      monthly: monthlyStanding(nowMs, policy.monthly, monthUsed),
    };
  }
  // With nothing counted yet, resetAt already answers for the current bucket, where this
  // request goes: the standing can be computed from the usage before it.
  return {
    allowed: true,
    hourly: hourlyStanding(buckets, current, policy.hourly, counted + 1),
    monthly: monthlyStanding(nowMs, policy.monthly, monthUsed + 1),
  };
}
