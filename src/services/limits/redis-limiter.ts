/**
 * The shared limiter: every instance decides through one atomic Lua script per request, so
 * the hourly window and the month cap hold across all instances (docs/RATE_LIMITING.md). The
 * script reads the time from Redis (instance clocks do not matter), computes the UTC month
 * itself, applies the decision rule of src/domain/rate-limit.ts and hands its usage snapshot
 * back so the standing (remaining, reset, Retry-After) is computed by the same domain code as
 * the in-memory limiter's.
 *
 * Durability: month counters are seeded from PostgreSQL when absent (first use, or after
 * Redis lost its data) before any request is admitted, and their absolute values are written
 * back every flushIntervalMs.
 *
 * Outages: Redis errors or slowness never turn into a 429 or a hang. Commands fail at once
 * while disconnected (no offline queue) and a decision waits at most replyTimeoutMs for
 * Redis; the request is then handed to the fallback (redis-fallback.ts), which decides in
 * memory per instance, probes Redis and hands what it admitted back to Redis.
 *
 * The Lua scripts live in ./lua/ and run as ioredis custom commands (defineCommand: EVALSHA,
 * and EVAL when Redis does not have the script, as after a restart or SCRIPT FLUSH).
 *
 * Cost: an admitted request is one command (the decide script; seeding happens once per key
 * and month, flushes run on a timer), in O(1) inside Redis (lua/decide.lua keeps the hourly
 * total in its hash); no auto-pipelining (limiterRedisOptions says why).
 */
import type { ServiceLog } from '../log.js';
import { oneAtATime } from '../one-at-a-time.js';
import { randomUUID } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { Redis, type RedisOptions } from 'ioredis';
import type { TierLimit } from '../../domain/access.js';
import { systemClock } from '../../domain/clock.js';
import { currentBucket, decide, monthKeyOf, standing } from '../../domain/rate-limit.js';
import { utcMonthKey } from '../../domain/time.js';
import { ANONYMOUS_WINDOW_MS, anonymousDecision, anonymousWindowOf, DEFAULT_ANONYMOUS_LIMIT, type AnonymousDecision } from './anonymous-window.js';
import { DEFAULT_FLUSH_INTERVAL_MS } from './memory-limiter.js';
import type { Admission, HourlyState, LimitDecision, LimiterMode, MonthlyState, RateLimiter, UsageReadDecision } from './rate-limiter.js';
import { USAGE_READ_WINDOW_MS, usageReadDecision, usageReadWindowOf } from './usage-window.js';
import { rollingWindowDecision } from './rolling-window.js';
import { STREAM_TOKEN_OPENS_WINDOW_MS, type StreamTokenOpenDecision } from './stream-token-opens.js';
import { RedisFallback, RedisUnavailableError, type FallbackAdmits, type KeyMonth } from './redis-fallback.js';
import type { MonthlyUsageStore } from './usage-store.js';

/**
 * A request must be decided within 50 ms: a hung Redis may take this much of it, leaving the
 * rest for the fallback (which may have to read the month from PostgreSQL first).
 */
export const DEFAULT_REPLY_TIMEOUT_MS = 30;
/**
 * ioredis' own command timeout only cleans up commands a frozen Redis never answers; the
 * decisions do not wait for it (see replyTimeoutMs).
 */
const COMMAND_CLEANUP_TIMEOUT_MS = 2_000;
/** Month counters outlive their month by over a week, then expire (PostgreSQL keeps them). */
const MONTH_COUNTER_TTL_MS = 40 * 86_400_000;
/** Hourly buckets live 61 minutes after the last admission; a little more for clock slack. */
const HOURLY_HASH_TTL_MS = 3_700_000;

/** Connection settings that make commands fail fast while Redis is unreachable. */
export function limiterRedisOptions(): RedisOptions {
  return {
    // No queueing while disconnected: a command fails at once instead of waiting.
    enableOfflineQueue: false,
    commandTimeout: COMMAND_CLEANUP_TIMEOUT_MS,
    maxRetriesPerRequest: 0,
    connectTimeout: 1_000,
    // Reconnect forever, backing off to at most 2 s between attempts.
    retryStrategy: (attempt) => Math.min(50 * 2 ** attempt, 2_000),
    // No auto-pipelining: a lone decision costs more client CPU with it (76 against 43 µs
    // measured), it pays only from about 8 decisions per event-loop turn, and since ioredis
    // holds the next batch until the previous one is answered, a burst (64 concurrent requests
    // over two instances) waited past replyTimeoutMs and was decided by the per-instance
    // fallback, admitting 41 of a limit of 25 (scale-out.real.test.ts).
    enableAutoPipelining: false,
  };
}

export function hourlyKey(apiKeyId: string): string {
  // The {hash tag} keeps both keys of an API key in one cluster slot, as a script requires.
  return `rl:{${apiKeyId}}:h`;
}

export function monthKey(apiKeyId: string, month: string): string {
  return `rl:{${apiKeyId}}:m:${month}`;
}

/** The admitted requests of the month taken back (only grows; see release). */
export function refundsKey(apiKeyId: string, month: string): string {
  return `rl:{${apiKeyId}}:r:${month}`;
}

/**
 * One counter per deployment, client address and minute; it expires shortly after its minute.
 * (API key ids are unique across deployments; addresses are not.)
 */
export function anonymousKey(namespace: string, clientKey: string, window: number): string {
  return `rl:anon:${namespace}:${clientKey}:${window}`;
}
const ANONYMOUS_COUNTER_TTL_MS = ANONYMOUS_WINDOW_MS + 5_000;

/** One counter per API key and clock hour of usage reads (in the key's cluster slot); it expires shortly after its hour. */
export function usageReadKey(apiKeyId: string, window: number): string {
  return `rl:{${apiKeyId}}:u:${window}`;
}
const USAGE_READ_COUNTER_TTL_MS = USAGE_READ_WINDOW_MS + 5_000;

/** The opens of one stream token in its rolling minute (a sorted set that expires a minute after its last open). */
export function streamTokenOpensKey(tokenHash: string): string {
  return `rl:st:${tokenHash}`;
}

function luaSource(file: string): string {
  return readFileSync(new URL(`./lua/${file}`, import.meta.url), 'utf8');
}

/**
 * month_of(ms) -> 'YYYY-MM' in Lua (lua/month-of.lua), prepended to the scripts that need it.
 * Exported so a test can run it inside Redis.
 */
export const LUA_MONTH_OF = luaSource('month-of.lua');
const DECIDE_LUA = `${LUA_MONTH_OF}\n${luaSource('decide.lua')}`;
const ADD_IF_PRESENT_LUA = luaSource('add-if-present.lua');
const REFUND_LUA = luaSource('refund.lua');
const ROLLING_WINDOW_LUA = luaSource('rolling-window.lua');

/** The limiter's scripts as commands of its client (see defineLimiterCommands). */
interface LimiterCommands {
  /** lua/decide.lua: KEYS hourly hash, previous, current and next month counter; ARGV see there. */
  rateLimitDecide(...keysAndArgs: (string | number)[]): Promise<(string | number)[]>;
  /** lua/add-if-present.lua: the new count, or null if the counter does not exist. */
  rateLimitAddIfPresent(monthCounter: string, refundsCounter: string, count: number): Promise<number | null>;
  /** lua/refund.lua: takes one admitted request back from its month and bucket. */
  rateLimitRefund(hourlyHash: string, monthCounter: string, refundsCounter: string, bucket: number): Promise<number>;
  /** lua/rolling-window.lua: [events in the window before this one, the oldest's time or -1]. */
  rateLimitRollingWindow(log: string, nowMs: number, windowMs: number, limit: number, member: string): Promise<[number, number]>;
}

/**
 * Registers the scripts on the client. ioredis sends EVALSHA and falls back to EVAL itself when
 * Redis answers NOSCRIPT (first use, a restart, SCRIPT FLUSH).
 */
function defineLimiterCommands(client: Redis): Redis & LimiterCommands {
  client.defineCommand('rateLimitDecide', { numberOfKeys: 4, lua: DECIDE_LUA });
  client.defineCommand('rateLimitAddIfPresent', { numberOfKeys: 2, lua: ADD_IF_PRESENT_LUA });
  client.defineCommand('rateLimitRefund', { numberOfKeys: 3, lua: REFUND_LUA });
  client.defineCommand('rateLimitRollingWindow', { numberOfKeys: 1, lua: ROLLING_WINDOW_LUA });
  return client as Redis & LimiterCommands;
}

/** Ends the wait for a connection being set up: it is usable, or it failed. */
const CONNECTION_SETTLED_EVENTS = ['ready', 'close', 'end', 'error'] as const;

interface Snapshot {
  month: string;
  nowMs: number;
  allowed: boolean;
  monthUsed: number;
  buckets: Map<number, number>;
}

export type RedisRateLimiterOptions = ({ url: string; client?: never } | { client: Redis; url?: never }) & {
  usageStore: MonthlyUsageStore;
  /**
   * Milliseconds since the epoch. Tests only: when set, the script uses it instead of Redis
   * TIME. Production leaves it unset so the decision never depends on an instance's clock.
   */
  now?: () => number;
  /** How often month counters are copied to PostgreSQL; keep it at 10 s or less. */
  flushIntervalMs?: number;
  /**
   * Longest wait for Redis (a reply, or a connection being set up) before deciding in memory.
   * A passed client should be created with limiterRedisOptions().
   */
  replyTimeoutMs?: number;
  probeIntervalMs?: number;
  log?: ServiceLog;
  /** Requests per minute per address without credentials (ANONYMOUS_GRAPHQL_LIMIT). */
  anonymousLimit?: number;
  /** Keeps the anonymous counters of deployments sharing one Redis apart (the deployment id). */
  namespace?: string;
};

export class RedisRateLimiter implements RateLimiter {
  private readonly client: Redis & LimiterCommands;
  private readonly ownsClient: boolean;
  private readonly usageStore: MonthlyUsageStore;
  private readonly injectedNow: (() => number) | undefined;
  private readonly log: ServiceLog | undefined;
  /** Decides whatever Redis does not answer in time; owns the 'redis' / 'fallback' mode. */
  private readonly fallback: RedisFallback;
  /** Redis month-counter key -> key-month touched since the last flush. */
  private touched = new Map<string, KeyMonth>();
  /** One seed per month counter at a time, shared by concurrent first requests. */
  private readonly seeding = new Map<string, Promise<void>>();
  private readonly flushTimer: NodeJS.Timeout;
  private readonly oneFlushAtATime = oneAtATime();
  private readonly replyTimeoutMs: number;
  private readonly anonymousLimit: number;
  private readonly namespace: string;
  private connecting: Promise<void> | null = null;
  private closed = false;

  constructor(options: RedisRateLimiterOptions) {
    this.replyTimeoutMs = options.replyTimeoutMs ?? DEFAULT_REPLY_TIMEOUT_MS;
    const client = options.client ?? new Redis(options.url, limiterRedisOptions());
    this.ownsClient = !options.client;
    this.client = defineLimiterCommands(client);
    this.usageStore = options.usageStore;
    this.injectedNow = options.now;
    this.log = options.log;
    this.anonymousLimit = options.anonymousLimit ?? DEFAULT_ANONYMOUS_LIMIT;
    this.namespace = options.namespace ?? 'default';
    this.fallback = new RedisFallback({
      usageStore: options.usageStore,
      now: options.now,
      log: options.log,
      anonymousLimit: this.anonymousLimit,
      probeIntervalMs: options.probeIntervalMs,
      ping: () => this.ping(),
      connected: () => this.client.status === 'ready',
      addToRedis: (admits) => this.addToMonthCounter(admits),
    });
    // Failures surface through the commands (and the fallback transition is logged there);
    // without a listener ioredis would print every reconnect error to stderr.
    this.client.on('error', () => undefined);
    this.client.on('ready', () => this.fallback.noteReconnected());
    const flushIntervalMs = options.flushIntervalMs ?? DEFAULT_FLUSH_INTERVAL_MS;
    if (!(flushIntervalMs > 0)) throw new RangeError(`flushIntervalMs must be positive, got ${flushIntervalMs}`);
    this.flushTimer = setInterval(() => void this.flushReportingFailure(), flushIntervalMs).unref();
  }

  async consume(apiKeyId: string, policy: TierLimit): Promise<LimitDecision> {
    return this.inRedisElseFallback(
      async () => {
        const snapshot = await this.runDecideScript(apiKeyId, policy, 'consume');
        const verdict = decide(snapshot, policy);
        if (verdict.allowed !== snapshot.allowed) {
          throw new Error('rate limiter: the Lua script and the domain rule disagree');
        }
        this.touched.set(monthKey(apiKeyId, snapshot.month), { apiKeyId, month: snapshot.month });
        this.fallback.decidedInRedis();
        if (!verdict.allowed) return verdict;
        return { ...verdict, admission: { apiKeyId, month: snapshot.month, bucket: currentBucket(snapshot.buckets, snapshot.nowMs), by: 'redis' } };
      },
      () => this.fallback.consume(apiKeyId, policy),
    );
  }

  /**
   * A request the fallback admitted is taken back there. One Redis admitted is taken back in
   * Redis (month and bucket); while Redis does not answer, its month is handed over later,
   * and its bucket stays counted (the hourly window only errs on the strict side).
   */
  async release(admission: Admission): Promise<void> {
    if (admission.by === 'fallback') return this.fallback.release(admission);
    const { apiKeyId, month, bucket } = admission;
    if (this.fallback.redisHealthy) {
      try {
        await this.redis(() => this.client.rateLimitRefund(hourlyKey(apiKeyId), monthKey(apiKeyId, month), refundsKey(apiKeyId, month), bucket));
        this.touched.set(monthKey(apiKeyId, month), { apiKeyId, month });
        return;
      } catch {
        // Not taken back in Redis now: handed over with the fallback's counts later.
      }
    }
    this.fallback.takeBack({ apiKeyId, month });
  }

  async peek(apiKeyId: string, policy: TierLimit): Promise<{ hourly: HourlyState; monthly: MonthlyState }> {
    return this.inRedisElseFallback(
      async () => standing(await this.runDecideScript(apiKeyId, policy, 'peek'), policy),
      () => this.fallback.peek(apiKeyId, policy),
    );
  }

  /**
   * A fixed one-minute window per address, shared by every instance: INCR and PEXPIRE in one
   * round trip, the minute taken from this instance's clock (instances differ by milliseconds,
   * which only moves a window's edge). Refused requests are counted too; the counter only has to
   * reach the limit. Redis down or slow: this instance's own windows decide, as for API keys.
   */
  async consumeAnonymous(clientKey: string): Promise<AnonymousDecision> {
    return this.inRedisElseFallback(
      async () => {
        const nowMs = this.injectedNow?.() ?? systemClock.now().getTime();
        const count = await this.countInWindow(anonymousKey(this.namespace, clientKey, anonymousWindowOf(nowMs)), ANONYMOUS_COUNTER_TTL_MS);
        return anonymousDecision(count, this.anonymousLimit, nowMs);
      },
      () => this.fallback.consumeAnonymous(clientKey),
    );
  }

  /** The usage endpoint's hourly window per key, shared by every instance like the anonymous one. */
  async consumeUsageRead(apiKeyId: string): Promise<UsageReadDecision> {
    return this.inRedisElseFallback(
      async () => {
        const nowMs = this.injectedNow?.() ?? systemClock.now().getTime();
        const count = await this.countInWindow(usageReadKey(apiKeyId, usageReadWindowOf(nowMs)), USAGE_READ_COUNTER_TTL_MS);
        return usageReadDecision(count, nowMs);
      },
      () => this.fallback.consumeUsageRead(apiKeyId),
    );
  }

  /**
   * One open of a stream token against its rolling minute, shared by every instance (the log's
   * times from this instance's clock, as the anonymous window's minute). Redis down or slow:
   * this instance's own logs decide.
   */
  async consumeStreamTokenOpen(tokenHash: string, limit: number): Promise<StreamTokenOpenDecision> {
    return this.inRedisElseFallback(
      async () => {
        const nowMs = this.injectedNow?.() ?? systemClock.now().getTime();
        const member = `${nowMs}:${randomUUID()}`;
        const [count, oldest] = await this.redis(() => this.client.rateLimitRollingWindow(streamTokenOpensKey(tokenHash), nowMs, STREAM_TOKEN_OPENS_WINDOW_MS, limit, member));
        this.fallback.decidedInRedis();
        return rollingWindowDecision(Number(count), Number(oldest) < 0 ? undefined : Number(oldest), limit, STREAM_TOKEN_OPENS_WINDOW_MS, nowMs);
      },
      () => this.fallback.consumeStreamTokenOpen(tokenHash, limit),
    );
  }

  /** INCR and PEXPIRE of a fixed-window counter in one round trip: the count with this request. */
  private async countInWindow(key: string, ttlMs: number): Promise<number> {
    const [count] = resultsOf(await this.redis(() => this.client.multi().incr(key).pexpire(key, ttlMs).exec()), 2);
    this.fallback.decidedInRedis();
    return Number(count);
  }

  mode(): LimiterMode {
    return this.fallback.mode();
  }

  /** For /readyz: true while Redis answers a PING within the reply timeout. */
  async ping(): Promise<boolean> {
    try {
      return (await this.redis(() => this.client.ping())) === 'PONG';
    } catch {
      return false;
    }
  }

  /**
   * Copies the month counters touched since the last flush to PostgreSQL (absolute values
   * read from Redis, so any instance may flush any counter) after handing Redis what the
   * fallback admitted, if Redis answers.
   */
  flush(): Promise<void> {
    return this.oneFlushAtATime(() => this.flushToDatabase());
  }

  async close(): Promise<void> {
    if (this.closed) return;
    this.closed = true;
    this.fallback.stop();
    clearInterval(this.flushTimer);
    try {
      await this.flush();
    } catch (error) {
      // Redis went away at the last moment: its counters stay there for the next flush of
      // another instance (or are re-seeded); what the fallback admitted is written below.
      this.log?.warn({ err: error }, 'rate limiter: final flush of monthly usage failed');
    }
    try {
      await this.fallback.close();
    } finally {
      if (this.ownsClient) await this.quit();
    }
  }

  /** Decides with Redis; a request Redis does not answer in time goes to the fallback. */
  private async inRedisElseFallback<T>(inRedis: () => Promise<T>, inFallback: () => Promise<T>): Promise<T> {
    if (this.closed) throw new Error('RedisRateLimiter is closed');
    if (this.fallback.redisUsable()) {
      try {
        return await inRedis();
      } catch (error) {
        if (!(error instanceof RedisUnavailableError)) throw error;
        this.fallback.noteFailure(error);
      }
    }
    return inFallback();
  }

  /**
   * A decide reply that arrived after the deadline, when the fallback had already answered
   * the request: if Redis admitted it, its month count is taken back (the fallback counted
   * the request if it admitted it, and a refused request counts nothing).
   */
  private takeBackLateAdmission(apiKeyId: string, reply: (string | number)[]): void {
    const [status, month, , allowed] = reply;
    if (status === 'ok' && Number(allowed) === 1) this.fallback.takeBack({ apiKeyId, month: String(month) });
  }

  /**
   * Runs Redis commands, waiting first for a connection being set up; any failure, or no
   * answer within replyTimeoutMs, becomes RedisUnavailableError. `onLate` gets a result that
   * arrives after the deadline.
   */
  private async redis<T>(commands: () => Promise<T>, onLate?: (result: T) => void): Promise<T> {
    let timer: NodeJS.Timeout | undefined;
    const deadline = new Promise<never>((_, reject) => {
      timer = setTimeout(() => {
        // A busy event loop fires this timer late, before reading a reply that may already
        // be waiting in the socket: let pending I/O run once, so only Redis' slowness counts.
        setImmediate(() => reject(new Error(`no answer within ${this.replyTimeoutMs} ms`)));
      }, this.replyTimeoutMs);
    });
    const answer = this.whenConnected().then(commands);
    try {
      const result = await Promise.race([answer, deadline]);
      this.fallback.noteAnswer();
      return result;
    } catch (error) {
      if (onLate) answer.then(onLate, () => undefined);
      throw new RedisUnavailableError(error);
    } finally {
      clearTimeout(timer);
    }
  }

  /**
   * While a connection is being set up (start-up, or just after a drop) commands would fail
   * at once (no offline queue): wait for the handshake instead, within the caller's deadline,
   * rather than deciding the first requests of every process start in memory. All waiting
   * requests share one wait.
   */
  private whenConnected(): Promise<void> {
    if (this.client.status !== 'connecting' && this.client.status !== 'connect') return Promise.resolve();
    this.connecting ??= new Promise<void>((resolve) => {
      const settle = () => {
        for (const event of CONNECTION_SETTLED_EVENTS) this.client.off(event, settle);
        this.connecting = null;
        resolve();
      };
      for (const event of CONNECTION_SETTLED_EVENTS) this.client.on(event, settle);
    });
    return this.connecting;
  }

  private async runDecideScript(apiKeyId: string, policy: TierLimit, operation: 'consume' | 'peek'): Promise<Snapshot> {
    const nowArgument = this.injectedNow ? String(this.injectedNow()) : '';
    // This instance's clock only guesses which month keys to declare. The script decides by
    // its own time (Redis TIME, or a test's clock) and names the month if the guess was off.
    let monthGuess = monthKeyOf(systemClock.now().getTime());
    // At most: one seed, and one correction of a guess more than a month off.
    for (let attempt = 0; attempt < 3; attempt += 1) {
      const keys = [hourlyKey(apiKeyId), ...neighbouringMonths(monthGuess).map((month) => monthKey(apiKeyId, month))];
      const reply = await this.redis(
        () => this.client.rateLimitDecide(...keys, policy.hourly, policy.monthly, nowArgument, operation, HOURLY_HASH_TTL_MS),
        // Past the deadline the fallback answers the request; if Redis counted it anyway, the
        // fallback's answer stands and Redis' count is taken back at the next hand-over.
        operation === 'consume' ? (late) => this.takeBackLateAdmission(apiKeyId, late) : undefined,
      );
      const [status, month] = reply;
      if (status === 'ok') return parseSnapshot(reply);
      if (status === 'seed') await this.seedMonth(apiKeyId, String(month));
      else monthGuess = String(month);
    }
    throw new RedisUnavailableError(new Error('the decide script kept asking for a seed'));
  }

  /** Loads the month from PostgreSQL into Redis unless another request or instance did. */
  private seedMonth(apiKeyId: string, month: string): Promise<void> {
    const key = monthKey(apiKeyId, month);
    let pending = this.seeding.get(key);
    if (!pending) {
      pending = (async () => {
        const stored = await this.usageStore.load(apiKeyId, month);
        // Both or neither: a later flush reads them as one state.
        const replies = await this.redis(() =>
          this.client
            .multi()
            .set(key, stored.count, 'PX', MONTH_COUNTER_TTL_MS, 'NX')
            .set(refundsKey(apiKeyId, month), stored.refunded, 'PX', MONTH_COUNTER_TTL_MS, 'NX')
            .exec(),
        );
        resultsOf(replies, 2);
      })().finally(() => this.seeding.delete(key));
      this.seeding.set(key, pending);
    }
    return pending;
  }

  /**
   * The fallback's hand-over of one key-month. A counter Redis lost is seeded from PostgreSQL
   * first; the fallback never writes to PostgreSQL before this, so that seed cannot already
   * contain these requests. Requests to take back from a counter Redis lost are dropped: the
   * seed may or may not hold them, and the count errs on the side of one too many.
   */
  private async addToMonthCounter(admits: FallbackAdmits): Promise<void> {
    const key = monthKey(admits.apiKeyId, admits.month);
    const addIfPresent = () => this.redis(() => this.client.rateLimitAddIfPresent(key, refundsKey(admits.apiKeyId, admits.month), admits.count));
    if ((await addIfPresent()) === null) {
      if (admits.count < 0) return;
      await this.seedMonth(admits.apiKeyId, admits.month);
      if ((await addIfPresent()) === null) {
        throw new RedisUnavailableError(new Error(`${key} vanished right after it was seeded`));
      }
    }
    this.touched.set(key, { apiKeyId: admits.apiKeyId, month: admits.month });
  }

  private async flushToDatabase(): Promise<void> {
    // During an outage the counters cannot be read; they stay listed until Redis is back.
    if (!this.fallback.redisHealthy) return;
    await this.fallback.handOver();
    if (this.touched.size === 0) return;
    const batch = this.touched;
    this.touched = new Map();
    try {
      const keyMonths = [...batch.values()];
      // Each month with its refunds in one MGET (one slot, one moment): a state PostgreSQL can
      // order against any other moment's.
      const values = await this.redis(() =>
        this.client.pipeline(keyMonths.map(({ apiKeyId, month }) => ['mget', monthKey(apiKeyId, month), refundsKey(apiKeyId, month)])).exec(),
      );
      const pairs = resultsOf(values, keyMonths.length) as [string | null, string | null][];
      const rows = keyMonths.flatMap(({ apiKeyId, month }, index) => {
        const [value, refunded] = pairs[index]!;
        // A counter that expired has nothing to add to what PostgreSQL holds.
        if (value === null) return [];
        return [{ apiKeyId, month, count: Number(value), refunded: Number(refunded ?? 0) }];
      });
      await this.usageStore.flush(rows);
    } catch (error) {
      for (const [key, keyMonth] of batch) if (!this.touched.has(key)) this.touched.set(key, keyMonth);
      throw error;
    }
  }

  private async flushReportingFailure(): Promise<void> {
    try {
      await this.flush();
    } catch (error) {
      this.log?.warn({ err: error }, 'rate limiter: flushing monthly usage failed; retrying at the next flush');
    }
  }

  private async quit(): Promise<void> {
    try {
      await this.redis(() => this.client.quit());
    } catch {
      // Unreachable or frozen: there is nothing to say goodbye to.
      this.client.disconnect();
    }
  }
}

/**
 * The replies of the first `count` commands of a MULTI or pipeline, or RedisUnavailableError for
 * the first that failed (or when no reply came at all, as for an aborted transaction).
 */
function resultsOf(replies: [Error | null, unknown][] | null | undefined, count: number): unknown[] {
  return Array.from({ length: count }, (_, index) => {
    const [error, value] = replies?.[index] ?? [new Error('no reply'), null];
    if (error) throw new RedisUnavailableError(error);
    return value;
  });
}

function neighbouringMonths(month: string): readonly [string, string, string] {
  // Asked on every decision, nearly always for the same month: its neighbours are kept (their
  // instants lie outside monthKeyOf's kept month, so each call would format two dates again).
  if (lastNeighbours?.[1] === month) return lastNeighbours;
  const [year, monthNumber] = month.split('-').map(Number) as [number, number];
  const start = Date.UTC(year, monthNumber - 1, 1);
  lastNeighbours = [utcMonthKey(new Date(start - 1)), month, utcMonthKey(new Date(Date.UTC(year, monthNumber, 1)))];
  return lastNeighbours;
}
let lastNeighbours: readonly [string, string, string] | null = null;

/**
 * The script's answer as the domain's snapshot. The script sums the window itself (O(1), see
 * lua/decide.lua) and hands back the counted buckets only when Retry-After needs them (a
 * consume refused for the hourly limit). Otherwise the domain functions get two buckets that
 * give the same answers as the real ones: the oldest counted bucket (X-RateLimit-Reset), the
 * newest (it wins over a clock that stepped back) and the counted total.
 */
function parseSnapshot(reply: (string | number)[]): Snapshot {
  const [, month, nowMs, allowed, monthUsed, counted, oldestCounted, newestCounted, ...flatBuckets] = reply;
  const buckets = new Map<number, number>();
  if (flatBuckets.length > 0) {
    for (let i = 0; i + 1 < flatBuckets.length; i += 2) buckets.set(Number(flatBuckets[i]), Number(flatBuckets[i + 1]));
  } else if (Number(counted) > 0) {
    const oldest = Number(oldestCounted);
    const newest = Number(newestCounted);
    if (oldest === newest) buckets.set(oldest, Number(counted));
    else buckets.set(oldest, Number(counted) - 1).set(newest, 1);
  }
  return { month: String(month), nowMs: Number(nowMs), allowed: Number(allowed) === 1, monthUsed: Number(monthUsed), buckets };
}
