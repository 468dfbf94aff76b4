/**
 * What the Redis limiter does when Redis does not answer (docs/RATE_LIMITING.md, "Redis down or
 * hanging"): the mode switching between 'redis' and 'fallback', the per-instance
 * MemoryRateLimiter that decides meanwhile, the probes that notice Redis is back, and the hand-over
 * of the requests admitted meanwhile to the Redis month counters before Redis decides again.
 * Redis itself is reached only through the callbacks the limiter passes in.
 */
import type { ServiceLog } from '../log.js';
import { performance } from 'node:perf_hooks';
import type { TierLimit } from '../../domain/access.js';
import type { AnonymousDecision } from './anonymous-window.js';
import type { UsageReadDecision } from './usage-window.js';
import type { StreamTokenOpenDecision } from './stream-token-opens.js';
import { MemoryRateLimiter } from './memory-limiter.js';
import type { Admission, HourlyState, LimitDecision, LimiterMode, MonthlyState } from './rate-limiter.js';
import type { MonthlyUsageStore } from './usage-store.js';

/**
 * A Redis that stays connected but stops answering is given up on (fallback for every request)
 * once it has answered nothing for this long; before that, only the requests it failed to
 * answer are decided in memory, so one slow reply on a busy machine costs one request's
 * accuracy rather than a probe interval of all of them.
 */
const OUTAGE_CONFIRMATION_MS = 1_000;
/** While in fallback, Redis is probed at most this often (and on every reconnect). */
export const DEFAULT_PROBE_INTERVAL_MS = 1_000;

/** A Redis command failed or timed out: decide in memory instead. */
export class RedisUnavailableError extends Error {
  constructor(cause: unknown) {
    super(`Redis unavailable: ${cause instanceof Error ? cause.message : String(cause)}`, { cause });
    this.name = 'RedisUnavailableError';
  }
}

export interface KeyMonth {
  apiKeyId: string;
  month: string;
}

/**
 * Requests of one key-month the fallback admitted that Redis has not counted, less those Redis
 * counted although the fallback answered them (a reply past the deadline): may be negative.
 */
export interface FallbackAdmits extends KeyMonth {
  count: number;
}

export interface RedisFallbackOptions {
  usageStore: MonthlyUsageStore;
  /** Milliseconds since the epoch; tests only. */
  now?: () => number;
  log?: ServiceLog;
  anonymousLimit: number;
  probeIntervalMs?: number;
  /** True while Redis answers a PING in time. */
  ping: () => Promise<boolean>;
  /** Whether the connection to Redis is established (ioredis status 'ready'). */
  connected: () => boolean;
  /** Adds one key-month's fallback admissions to its Redis month counter (throws on failure). */
  addToRedis: (admits: FallbackAdmits) => Promise<void>;
}

export class RedisFallback {
  /** Decides while Redis is unreachable. Its counts reach Redis (or, at close, PostgreSQL). */
  private readonly memory: MemoryRateLimiter;
  private readonly log: ServiceLog | undefined;
  private readonly probeIntervalMs: number;
  private readonly ping: () => Promise<boolean>;
  private readonly connected: () => boolean;
  private readonly addToRedis: (admits: FallbackAdmits) => Promise<void>;
  /** Redis month-counter key -> requests the fallback admitted that Redis has not counted. */
  private admits = new Map<string, FallbackAdmits>();
  private healthy = true;
  /** performance.now() of Redis' last answer. */
  private lastAnswerAt = Number.NEGATIVE_INFINITY;
  private lastMode: LimiterMode = 'redis';
  private probing = false;
  private probeCoolingDown = false;
  private stopped = false;

  constructor(options: RedisFallbackOptions) {
    this.log = options.log;
    this.probeIntervalMs = options.probeIntervalMs ?? DEFAULT_PROBE_INTERVAL_MS;
    this.ping = options.ping;
    this.connected = options.connected;
    this.addToRedis = options.addToRedis;
    this.memory = new MemoryRateLimiter({
      usageStore: options.usageStore,
      now: options.now,
      flushIntervalMs: null,
      log: options.log,
      anonymousLimit: options.anonymousLimit,
    });
  }

  /** Which engine decided the last request (or, after a successful probe, decides the next). */
  mode(): LimiterMode {
    return this.lastMode;
  }

  /** Whether Redis is believed to answer (not in fallback). */
  get redisHealthy(): boolean {
    return this.healthy;
  }

  /** Whether to ask Redis; in fallback, also the moment to check whether Redis is back. */
  redisUsable(): boolean {
    if (!this.healthy) void this.probe();
    return this.healthy;
  }

  /** Redis answered a command. */
  noteAnswer(): void {
    this.lastAnswerAt = performance.now();
  }

  /** Redis decided a request. */
  decidedInRedis(): void {
    this.lastMode = 'redis';
  }

  /** Switches to the fallback unless Redis is connected and answered within the last second. */
  noteFailure(error: RedisUnavailableError): void {
    if (this.connected() && performance.now() - this.lastAnswerAt < OUTAGE_CONFIRMATION_MS) return;
    this.enter(error);
  }

  /** The connection to Redis was (re-)established: if in fallback, check at once. */
  noteReconnected(): void {
    if (!this.healthy) void this.probe();
  }

  async consume(apiKeyId: string, policy: TierLimit): Promise<LimitDecision> {
    const verdict = await this.memory.consume(apiKeyId, policy);
    this.lastMode = 'fallback';
    if (!verdict.allowed || !verdict.admission) return verdict;
    this.mergeAdmits({ apiKeyId, month: verdict.admission.month, count: 1 });
    return { ...verdict, admission: { ...verdict.admission, by: 'fallback' } };
  }

  /** Takes back a request the fallback admitted: in memory, and from what it hands over to Redis. */
  async release(admission: Admission): Promise<void> {
    await this.memory.release(admission);
    this.takeBack(admission);
  }

  peek(apiKeyId: string, policy: TierLimit): Promise<{ hourly: HourlyState; monthly: MonthlyState }> {
    return this.memory.peek(apiKeyId, policy);
  }

  consumeAnonymous(clientKey: string): Promise<AnonymousDecision> {
    this.lastMode = 'fallback';
    return this.memory.consumeAnonymous(clientKey);
  }

  consumeUsageRead(apiKeyId: string): Promise<UsageReadDecision> {
    this.lastMode = 'fallback';
    return this.memory.consumeUsageRead(apiKeyId);
  }

  consumeStreamTokenOpen(tokenHash: string, limit: number): Promise<StreamTokenOpenDecision> {
    this.lastMode = 'fallback';
    return this.memory.consumeStreamTokenOpen(tokenHash, limit);
  }

  /**
   * One request to take off a month: Redis counted a request the fallback answered (its reply
   * came past the deadline), or a request admitted was answered 5xx. One less to hand over, or
   * one to take off the Redis counter (as refunded).
   */
  takeBack(keyMonth: KeyMonth): void {
    this.mergeAdmits({ ...keyMonth, count: -1 });
  }

  /**
   * Adds the requests the fallback admitted to the Redis month counters (net of what Redis
   * counted for requests the fallback answered). What fails is kept
   * for the next attempt (and the first failure thrown).
   */
  async handOver(): Promise<void> {
    if (this.admits.size === 0) return;
    const pending = [...this.admits.values()];
    this.admits = new Map();
    const results = await Promise.allSettled(pending.map((admits) => this.addToRedis(admits)));
    let firstFailure: unknown = null;
    results.forEach((result, index) => {
      if (result.status === 'fulfilled') return;
      this.mergeAdmits(pending[index]!);
      firstFailure ??= result.reason;
    });
    if (firstFailure !== null) throw firstFailure;
  }

  /** No more probes: the limiter is closing. */
  stop(): void {
    this.stopped = true;
  }

  /** Writes what Redis could not take straight to PostgreSQL (where the greatest count wins). */
  async close(): Promise<void> {
    this.stopped = true;
    if (this.admits.size === 0) this.memory.reset();
    await this.memory.close();
  }

  private enter(error: RedisUnavailableError): void {
    if (!this.healthy) return;
    this.healthy = false;
    // Seed afresh from PostgreSQL: counts from an earlier outage were handed to Redis since.
    this.memory.reset();
    this.log?.warn({ err: error.cause }, 'rate limiter: Redis unavailable, deciding in memory per instance');
  }

  private mergeAdmits(admits: FallbackAdmits): void {
    const key = `${admits.apiKeyId}\n${admits.month}`;
    const entry = this.admits.get(key);
    if (entry) entry.count += admits.count;
    else this.admits.set(key, { ...admits });
    if (this.admits.get(key)!.count === 0) this.admits.delete(key);
  }

  /** Checks Redis at most once per probe interval; on success, hands over and switches back. */
  private async probe(): Promise<void> {
    if (this.probing || this.probeCoolingDown || this.stopped) return;
    this.probing = true;
    try {
      if (!(await this.ping())) return;
      await this.handOver();
      this.healthy = true;
      // The next decision is Redis': say so now (/readyz), not only after the next request.
      this.lastMode = 'redis';
      // Everything it counted is in Redis now; free the memory until the next outage.
      this.memory.reset();
      this.log?.info({}, 'rate limiter: Redis answers again, deciding in Redis');
    } catch {
      // Redis failed again while taking the hand-over; stay in fallback and probe later.
    } finally {
      this.probing = false;
      if (!this.healthy) {
        this.probeCoolingDown = true;
        setTimeout(() => {
          this.probeCoolingDown = false;
          // Connected again but the last probe came too early: look again without waiting for traffic.
          if (!this.healthy && !this.stopped && this.connected()) void this.probe();
        }, this.probeIntervalMs).unref();
      }
    }
  }
}
