/**
 * The in-process limiter: exact for one process (no REDIS_URL), and the Redis limiter's
 * per-instance fallback while Redis is unreachable. Hourly buckets and month counts live in
 * Maps; month counts are seeded from PostgreSQL on first use and written back as absolute
 * values on a timer and at close.
 */
import type { ServiceLog } from '../log.js';
import { oneAtATime } from '../one-at-a-time.js';
import type { TierLimit } from '../../domain/access.js';
import { systemClock } from '../../domain/clock.js';
import {
  BUCKET_WIDTH_MS,
  WINDOW_MS,
  bucketOf,
  currentBucket,
  decide,
  isLaterUsage,
  monthKeyOf,
  oldestCountedBucket,
  pruneBefore,
  standing,
  type MonthlyUsage,
} from '../../domain/rate-limit.js';
import { AnonymousWindows, DEFAULT_ANONYMOUS_LIMIT, type AnonymousDecision } from './anonymous-window.js';
import type { Admission, HourlyState, LimitDecision, LimiterMode, MonthlyState, RateLimiter, UsageReadDecision } from './rate-limiter.js';
import { UsageReadWindows } from './usage-window.js';
import { StreamTokenOpens, type StreamTokenOpenDecision } from './stream-token-opens.js';
import type { MonthlyUsageStore } from './usage-store.js';

export const DEFAULT_FLUSH_INTERVAL_MS = 5_000;
/** A key-month untouched for this long is forgotten once flushed (re-seeded if it returns). */
const IDLE_MONTH_EVICTION_MS = WINDOW_MS;

export interface MemoryRateLimiterOptions {
  usageStore: MonthlyUsageStore;
  /** Milliseconds since the epoch; tests inject a clock. */
  now?: () => number;
  /**
   * How often dirty month counts are written to the usage store. null: never on a timer, only
   * through flush() and close() (the Redis limiter's fallback, whose counts go to Redis first).
   */
  flushIntervalMs?: number | null;
  log?: ServiceLog;
  /** Requests per minute per address without credentials (ANONYMOUS_GRAPHQL_LIMIT). */
  anonymousLimit?: number;
}

interface MonthCount {
  apiKeyId: string;
  month: string;
  /**
   * The month as this process knows it: the seeded usage plus what it admitted (`count`), less
   * what it took back (moved to `refunded`).
   */
  usage: MonthlyUsage;
  /** The latest state the usage store has accepted (or was seeded with). */
  persisted: MonthlyUsage;
  lastUsedMs: number;
}

function keyMonthId(apiKeyId: string, month: string): string {
  return `${apiKeyId}|${month}`;
}

export class MemoryRateLimiter implements RateLimiter {
  private readonly usageStore: MonthlyUsageStore;
  private readonly now: () => number;
  private readonly log: ServiceLog | undefined;
  /** API key -> its hourly buckets (bucket number -> admitted requests), pruned to the window. */
  private readonly windows = new Map<string, Map<number, number>>();
  private readonly months = new Map<string, MonthCount>();
  private readonly anonymous: AnonymousWindows;
  private readonly usageReads = new UsageReadWindows();
  private readonly streamTokenOpens = new StreamTokenOpens();
  /** One load per key-month, shared by every request that arrives while it runs. */
  private readonly seeding = new Map<string, Promise<void>>();
  private readonly timers: NodeJS.Timeout[] = [];
  /** Flushes run one after another: close() waits for a timer's flush, then writes the rest. */
  private readonly oneFlushAtATime = oneAtATime();
  private closed = false;

  constructor(options: MemoryRateLimiterOptions) {
    this.usageStore = options.usageStore;
    this.now = options.now ?? (() => systemClock.now().getTime());
    this.log = options.log;
    this.anonymous = new AnonymousWindows(options.anonymousLimit ?? DEFAULT_ANONYMOUS_LIMIT);
    const flushIntervalMs = options.flushIntervalMs === undefined ? DEFAULT_FLUSH_INTERVAL_MS : options.flushIntervalMs;
    if (flushIntervalMs !== null) {
      if (!(flushIntervalMs > 0)) throw new RangeError(`flushIntervalMs must be positive, got ${flushIntervalMs}`);
      this.timers.push(setInterval(() => void this.flushReportingFailure(), flushIntervalMs).unref());
    }
    // Buckets only leave the window once a minute: evicting more often would find nothing new.
    this.timers.push(setInterval(() => this.evictIdle(), BUCKET_WIDTH_MS).unref());
  }

  async consume(apiKeyId: string, policy: TierLimit): Promise<LimitDecision> {
    this.assertOpen();
    const { nowMs, month } = await this.currentMonth(apiKeyId);
    // Nothing below awaits, so requests for one key decide strictly one after another.
    const buckets = this.bucketsOf(apiKeyId);
    const verdict = decide({ nowMs, buckets, monthUsed: month.usage.count }, policy);
    month.lastUsedMs = nowMs;
    if (!verdict.allowed) return verdict;
    const bucket = currentBucket(buckets, nowMs);
    buckets.set(bucket, (buckets.get(bucket) ?? 0) + 1);
    pruneBefore(buckets, oldestCountedBucket(bucket));
    month.usage.count += 1;
    return { ...verdict, admission: { apiKeyId, month: month.month, bucket, by: 'memory' } };
  }

  async release(admission: Admission): Promise<void> {
    const month = this.months.get(keyMonthId(admission.apiKeyId, admission.month));
    if (month && month.usage.count > 0) {
      month.usage.count -= 1;
      month.usage.refunded += 1;
    }
    const buckets = this.windows.get(admission.apiKeyId);
    const inBucket = buckets?.get(admission.bucket) ?? 0;
    if (inBucket > 1) buckets!.set(admission.bucket, inBucket - 1);
    else if (inBucket === 1) buckets!.delete(admission.bucket);
  }

  async peek(apiKeyId: string, policy: TierLimit): Promise<{ hourly: HourlyState; monthly: MonthlyState }> {
    this.assertOpen();
    const { nowMs, month } = await this.currentMonth(apiKeyId);
    const buckets = this.windows.get(apiKeyId) ?? new Map<number, number>();
    return standing({ nowMs, buckets, monthUsed: month.usage.count }, policy);
  }

  async consumeAnonymous(clientKey: string): Promise<AnonymousDecision> {
    this.assertOpen();
    return this.anonymous.consume(clientKey, this.now());
  }

  async consumeUsageRead(apiKeyId: string): Promise<UsageReadDecision> {
    this.assertOpen();
    return this.usageReads.consume(apiKeyId, this.now());
  }

  async consumeStreamTokenOpen(tokenHash: string, limit: number): Promise<StreamTokenOpenDecision> {
    this.assertOpen();
    return this.streamTokenOpens.consume(tokenHash, limit, this.now());
  }

  mode(): LimiterMode {
    return 'memory';
  }

  /** Nothing external to wait for: always ready. */
  async ping(): Promise<boolean> {
    return true;
  }

  /** Writes every month count that grew since its last write (absolute values). */
  flush(): Promise<void> {
    // A failed flush leaves its months dirty for the next one.
    return this.oneFlushAtATime(() => this.writeDirtyMonths());
  }

  /**
   * Keeps memory bounded: drops buckets that left the window, hourly state with nothing left
   * in it, and month counts idle for an hour that are already stored (they are re-seeded from
   * the usage store if the key returns).
   */
  evictIdle(): void {
    const nowMs = this.now();
    const oldestKept = oldestCountedBucket(bucketOf(nowMs));
    for (const [apiKeyId, buckets] of this.windows) {
      pruneBefore(buckets, oldestKept);
      if (buckets.size === 0) this.windows.delete(apiKeyId);
    }
    for (const [id, month] of this.months) {
      if (!isLaterUsage(month.usage, month.persisted) && nowMs - month.lastUsedMs > IDLE_MONTH_EVICTION_MS) this.months.delete(id);
    }
    this.anonymous.evictEnded(nowMs);
    this.usageReads.evictEnded(nowMs);
    this.streamTokenOpens.evictEnded(nowMs);
  }

  /**
   * Forgets every count without writing it. For the Redis limiter's fallback, whose counts go
   * to Redis instead: once Redis has taken them (to free the memory), and when an outage
   * starts, so the fallback seeds from PostgreSQL afresh rather than from an earlier outage.
   */
  reset(): void {
    this.windows.clear();
    this.months.clear();
    this.anonymous.clear();
    this.usageReads.clear();
    this.streamTokenOpens.clear();
  }

  /** How much is held in memory (tests, the footprint measurement). */
  stats(): { hourlyWindows: number; monthCounts: number } {
    return { hourlyWindows: this.windows.size, monthCounts: this.months.size };
  }

  async close(): Promise<void> {
    if (this.closed) return;
    this.closed = true;
    for (const timer of this.timers) clearInterval(timer);
    // Requests already waiting for a seed still decide; their counts belong in the last flush.
    await Promise.allSettled([...this.seeding.values()]);
    await this.flush();
  }

  private assertOpen(): void {
    if (this.closed) throw new Error('MemoryRateLimiter is closed');
  }

  private bucketsOf(apiKeyId: string): Map<number, number> {
    let buckets = this.windows.get(apiKeyId);
    if (!buckets) {
      buckets = new Map();
      this.windows.set(apiKeyId, buckets);
    }
    return buckets;
  }

  /** The key's count for the month the clock is in, seeded from the usage store if needed. */
  private async currentMonth(apiKeyId: string): Promise<{ nowMs: number; month: MonthCount }> {
    for (;;) {
      // Read the clock after every wait: time moves while a seed loads (maybe into a new month).
      const nowMs = this.now();
      const month = this.months.get(keyMonthId(apiKeyId, monthKeyOf(nowMs)));
      if (month) return { nowMs, month };
      await this.seed(apiKeyId, monthKeyOf(nowMs));
    }
  }

  private seed(apiKeyId: string, month: string): Promise<void> {
    const id = keyMonthId(apiKeyId, month);
    let pending = this.seeding.get(id);
    if (!pending) {
      pending = this.usageStore
        .load(apiKeyId, month)
        .then((stored) => {
          // A failed load stores nothing, so the next request tries again.
          this.months.set(id, { apiKeyId, month, usage: { ...stored }, persisted: stored, lastUsedMs: this.now() });
        })
        .finally(() => this.seeding.delete(id));
      this.seeding.set(id, pending);
    }
    return pending;
  }

  private async writeDirtyMonths(): Promise<void> {
    const dirty = [...this.months.values()].filter((month) => isLaterUsage(month.usage, month.persisted));
    if (dirty.length === 0) return;
    // Copies: requests admitted while the write runs change month.usage, not what was written.
    const written = dirty.map((month) => ({ ...month.usage }));
    await this.usageStore.flush(dirty.map((month, index) => ({ apiKeyId: month.apiKeyId, month: month.month, ...written[index]! })));
    dirty.forEach((month, index) => {
      if (isLaterUsage(written[index]!, month.persisted)) month.persisted = written[index]!;
    });
  }

  private async flushReportingFailure(): Promise<void> {
    try {
      await this.flush();
    } catch (error) {
      this.log?.warn({ err: error }, 'rate limiter: writing monthly usage failed; retrying at the next flush');
    }
  }
}
