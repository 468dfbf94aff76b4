/**
 * The shared limiter: every instance decides through one atomic Lua script per request, so
 * the hourly window and the month cap hold across all instances (DESIGN section 3). The
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
 * Redis; the instance then decides with a per-instance MemoryRateLimiter ('fallback') and
 * probes Redis in the background. When Redis answers, the requests admitted meanwhile are
 * added to the Redis month counters and Redis decides again.
 */
import { createHash } from 'node:crypto';
import { performance } from 'node:perf_hooks';
import { Redis, type RedisOptions } from 'ioredis';
import type { TierLimit } from '../../domain/access.js';
import { systemClock } from '../../domain/clock.js';
import { decide, monthKeyOf, standing, type Verdict } from '../../domain/rate-limit.js';
import { ANONYMOUS_WINDOW_MS, anonymousDecision, anonymousWindowOf, DEFAULT_ANONYMOUS_LIMIT, type AnonymousDecision } from './anonymous-window.js';
import { DEFAULT_FLUSH_INTERVAL_MS, MemoryRateLimiter } from './memory-limiter.js';
import type { HourlyState, LimitDecision, LimiterLog, LimiterMode, MonthlyState, RateLimiter } from './rate-limiter.js';
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
/**
 * A Redis that stays connected but stops answering is given up on (fallback for every request)
 * once it has answered nothing for this long; before that, only the requests it failed to
 * answer are decided in memory, so one slow reply on a busy machine costs one request's
 * accuracy rather than a probe interval of all of them.
 */
const OUTAGE_CONFIRMATION_MS = 1_000;
/** While in fallback, Redis is probed at most this often (and on every reconnect). */
const DEFAULT_PROBE_INTERVAL_MS = 1_000;
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
  };
}

export function hourlyKey(apiKeyId: string): string {
  // The {hash tag} keeps both keys of an API key in one cluster slot, as a script requires.
  return `rl:{${apiKeyId}}:h`;
}

export function monthKey(apiKeyId: string, month: string): string {
  return `rl:{${apiKeyId}}:m:${month}`;
}

/**
 * One counter per deployment, client address and minute; it expires shortly after its minute.
 * (API key ids are unique across deployments; addresses are not.)
 */
export function anonymousKey(namespace: string, clientKey: string, window: number): string {
  return `rl:anon:${namespace}:${clientKey}:${window}`;
}
const ANONYMOUS_COUNTER_TTL_MS = ANONYMOUS_WINDOW_MS + 5_000;

/**
 * 'YYYY-MM' of a time in ms, in Lua: days since the epoch to a civil date (H. Hinnant's
 * days_from_civil inverse), valid from 1970 on. Exported so a test can run it inside Redis.
 */
export const LUA_MONTH_OF = `
local function month_of(ms)
  local z = math.floor(ms / 86400000) + 719468
  local era = math.floor(z / 146097)
  local doe = z - era * 146097
  local yoe = math.floor((doe - math.floor(doe / 1460) + math.floor(doe / 36524) - math.floor(doe / 146096)) / 365)
  local doy = doe - (365 * yoe + math.floor(yoe / 4) - math.floor(yoe / 100))
  local mp = math.floor((5 * doy + 2) / 153)
  local month = mp < 10 and mp + 3 or mp - 9
  local year = yoe + era * 400
  if month <= 2 then year = year + 1 end
  return string.format('%04d-%02d', year, month)
end
`;

/**
 * KEYS[1] the hourly hash (bucket -> count); KEYS[2..4] month counters for the caller's guess
 * of the previous, current and next month (declared keys, as a cluster requires; the script
 * picks the one matching Redis time). ARGV: hourly limit, monthly limit, now in ms or '' for
 * Redis TIME, 'consume' or 'peek'.
 * Replies: {'seed', month} when the month counter is missing (the caller seeds it from
 * PostgreSQL and runs again, so nothing is admitted on a lost count); {'month', month} when
 * no declared key matches; {'ok', month, nowMs, allowed, monthUsedBefore, bucket, count, ...}
 * with the counted buckets as they were before this request.
 */
const DECIDE_SCRIPT = `${LUA_MONTH_OF}
local now_ms
if ARGV[3] ~= '' then
  now_ms = tonumber(ARGV[3])
else
  local time = redis.call('TIME')
  now_ms = tonumber(time[1]) * 1000 + math.floor(tonumber(time[2]) / 1000)
end
local month = month_of(now_ms)
local month_key
for i = 2, #KEYS do
  if string.sub(KEYS[i], -7) == month then month_key = KEYS[i] end
end
if not month_key then return {'month', month} end
local used = redis.call('GET', month_key)
if not used then return {'seed', month} end
used = tonumber(used)

local fields = redis.call('HGETALL', KEYS[1])
-- The newest bucket wins over the clock if the clock stepped back (see currentBucket).
local current = math.floor(now_ms / 60000)
for i = 1, #fields, 2 do
  local bucket = tonumber(fields[i])
  if bucket > current and tonumber(fields[i + 1]) > 0 then current = bucket end
end
local oldest = current - 60
local counted = 0
local snapshot = {}
local stale = {}
for i = 1, #fields, 2 do
  local bucket = tonumber(fields[i])
  local count = tonumber(fields[i + 1])
  if bucket < oldest then
    stale[#stale + 1] = fields[i]
  else
    counted = counted + count
    snapshot[#snapshot + 1] = bucket
    snapshot[#snapshot + 1] = count
  end
end

local allowed = 0
if used < tonumber(ARGV[2]) and counted < tonumber(ARGV[1]) then allowed = 1 end
if ARGV[4] == 'consume' then
  if #stale > 0 then redis.call('HDEL', KEYS[1], unpack(stale)) end
  if allowed == 1 then
    redis.call('HINCRBY', KEYS[1], string.format('%d', current), 1)
    redis.call('PEXPIRE', KEYS[1], ${HOURLY_HASH_TTL_MS})
    redis.call('INCR', month_key)
  end
end
return {'ok', month, now_ms, allowed, used, unpack(snapshot)}
`;

/** Adds requests admitted during an outage to a month counter, if the counter exists. */
const ADD_IF_PRESENT_SCRIPT = `
if redis.call('EXISTS', KEYS[1]) == 0 then return -1 end
return redis.call('INCRBY', KEYS[1], ARGV[1])
`;

interface Script {
  source: string;
  sha1: string;
}

function script(source: string): Script {
  return { source, sha1: createHash('sha1').update(source).digest('hex') };
}

const DECIDE = script(DECIDE_SCRIPT);
/** Ends the wait for a connection being set up: it is usable, or it failed. */
const CONNECTION_SETTLED_EVENTS = ['ready', 'close', 'end', 'error'] as const;
const ADD_IF_PRESENT = script(ADD_IF_PRESENT_SCRIPT);

/** A Redis command failed or timed out: decide in memory instead. */
class RedisUnavailableError extends Error {
  constructor(cause: unknown) {
    super(`Redis unavailable: ${cause instanceof Error ? cause.message : String(cause)}`, { cause });
    this.name = 'RedisUnavailableError';
  }
}

interface Snapshot {
  month: string;
  nowMs: number;
  allowed: boolean;
  monthUsed: number;
  buckets: Map<number, number>;
}

interface KeyMonth {
  apiKeyId: string;
  month: string;
}

interface FallbackAdmits extends KeyMonth {
  count: number;
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
  log?: LimiterLog;
  /** Requests per minute per address without credentials (ANONYMOUS_GRAPHQL_LIMIT). */
  anonymousLimit?: number;
  /** Keeps the anonymous counters of deployments sharing one Redis apart (the deployment id). */
  namespace?: string;
};

export class RedisRateLimiter implements RateLimiter {
  private readonly client: Redis;
  private readonly ownsClient: boolean;
  private readonly usageStore: MonthlyUsageStore;
  private readonly injectedNow: (() => number) | undefined;
  private readonly probeIntervalMs: number;
  private readonly log: LimiterLog | undefined;
  /** Decides while Redis is unreachable. Its counts reach Redis (or, at close, PostgreSQL). */
  private readonly fallback: MemoryRateLimiter;
  /** Redis month-counter key -> key-month touched since the last flush. */
  private touched = new Map<string, KeyMonth>();
  /** Redis month-counter key -> requests the fallback admitted that Redis has not counted. */
  private fallbackAdmits = new Map<string, FallbackAdmits>();
  /** One seed per month counter at a time, shared by concurrent first requests. */
  private readonly seeding = new Map<string, Promise<void>>();
  private readonly flushTimer: NodeJS.Timeout;
  private flushQueue: Promise<void> = Promise.resolve();
  private redisHealthy = true;
  /** performance.now() of Redis' last answer. */
  private lastAnswerAt = Number.NEGATIVE_INFINITY;
  private lastMode: LimiterMode = 'redis';
  private readonly replyTimeoutMs: number;
  private readonly anonymousLimit: number;
  private readonly namespace: string;
  private connecting: Promise<void> | null = null;
  private probing = false;
  private probeCoolingDown = false;
  private closed = false;

  constructor(options: RedisRateLimiterOptions) {
    this.replyTimeoutMs = options.replyTimeoutMs ?? DEFAULT_REPLY_TIMEOUT_MS;
    if (options.client) {
      this.client = options.client;
      this.ownsClient = false;
    } else {
      this.client = new Redis(options.url, limiterRedisOptions());
      this.ownsClient = true;
    }
    // Failures surface through the commands (and the fallback transition is logged there);
    // without a listener ioredis would print every reconnect error to stderr.
    this.client.on('error', () => undefined);
    this.client.on('ready', () => {
      if (!this.redisHealthy) void this.probe();
    });
    this.usageStore = options.usageStore;
    this.injectedNow = options.now;
    this.probeIntervalMs = options.probeIntervalMs ?? DEFAULT_PROBE_INTERVAL_MS;
    this.log = options.log;
    this.anonymousLimit = options.anonymousLimit ?? DEFAULT_ANONYMOUS_LIMIT;
    this.namespace = options.namespace ?? 'default';
    this.fallback = new MemoryRateLimiter({
      usageStore: options.usageStore,
      now: options.now,
      flushIntervalMs: null,
      log: options.log,
      anonymousLimit: this.anonymousLimit,
    });
    const flushIntervalMs = options.flushIntervalMs ?? DEFAULT_FLUSH_INTERVAL_MS;
    if (!(flushIntervalMs > 0)) throw new RangeError(`flushIntervalMs must be positive, got ${flushIntervalMs}`);
    this.flushTimer = setInterval(() => void this.flushReportingFailure(), flushIntervalMs).unref();
  }

  async consume(apiKeyId: string, policy: TierLimit): Promise<LimitDecision> {
    this.assertOpen();
    if (this.redisUsable()) {
      try {
        const snapshot = await this.runDecideScript(apiKeyId, policy, 'consume');
        const verdict = decide(snapshot, policy);
        if (verdict.allowed !== snapshot.allowed) {
          throw new Error('rate limiter: the Lua script and the domain rule disagree');
        }
        this.touched.set(monthKey(apiKeyId, snapshot.month), { apiKeyId, month: snapshot.month });
        this.lastMode = 'redis';
        return verdict;
      } catch (error) {
        if (!(error instanceof RedisUnavailableError)) throw error;
        this.noteRedisFailure(error);
      }
    }
    const verdict = await this.fallback.consume(apiKeyId, policy);
    if (verdict.allowed) this.recordFallbackAdmit(apiKeyId, verdict);
    this.lastMode = 'fallback';
    return verdict;
  }

  async peek(apiKeyId: string, policy: TierLimit): Promise<{ hourly: HourlyState; monthly: MonthlyState }> {
    this.assertOpen();
    if (this.redisUsable()) {
      try {
        return standing(await this.runDecideScript(apiKeyId, policy, 'peek'), policy);
      } catch (error) {
        if (!(error instanceof RedisUnavailableError)) throw error;
        this.noteRedisFailure(error);
      }
    }
    return this.fallback.peek(apiKeyId, policy);
  }

  /**
   * A fixed one-minute window per address, shared by every instance: INCR and PEXPIRE in one
   * round trip, the minute taken from this instance's clock (instances differ by milliseconds,
   * which only moves a window's edge). Refused requests are counted too; the counter only has to
   * reach the limit. Redis down or slow: this instance's own windows decide, as for API keys.
   */
  async consumeAnonymous(clientKey: string): Promise<AnonymousDecision> {
    this.assertOpen();
    if (this.redisUsable()) {
      try {
        const nowMs = this.injectedNow?.() ?? systemClock.now().getTime();
        const key = anonymousKey(this.namespace, clientKey, anonymousWindowOf(nowMs));
        const replies = await this.redis(() => this.client.multi().incr(key).pexpire(key, ANONYMOUS_COUNTER_TTL_MS).exec());
        const [error, count] = replies?.[0] ?? [new Error('no reply'), null];
        if (error) throw new RedisUnavailableError(error);
        this.lastMode = 'redis';
        return anonymousDecision(Number(count), this.anonymousLimit, nowMs);
      } catch (error) {
        if (!(error instanceof RedisUnavailableError)) throw error;
        this.noteRedisFailure(error);
      }
    }
    this.lastMode = 'fallback';
    return this.fallback.consumeAnonymous(clientKey);
  }

  mode(): LimiterMode {
    return this.lastMode;
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
    const run = this.flushQueue.then(() => this.flushToDatabase());
    this.flushQueue = run.catch(() => undefined);
    return run;
  }

  async close(): Promise<void> {
    if (this.closed) return;
    this.closed = true;
    clearInterval(this.flushTimer);
    try {
      await this.flush();
    } catch (error) {
      // Redis went away at the last moment: its counters stay there for the next flush of
      // another instance (or are re-seeded); what the fallback admitted is written below.
      this.log?.warn({ err: error }, 'rate limiter: final flush of monthly usage failed');
    }
    try {
      // Requests Redis could not take go straight to PostgreSQL (where the greatest count wins).
      if (this.fallbackAdmits.size === 0) this.fallback.reset();
      await this.fallback.close();
    } finally {
      if (this.ownsClient) await this.quit();
    }
  }

  private assertOpen(): void {
    if (this.closed) throw new Error('RedisRateLimiter is closed');
  }

  /** Whether to ask Redis; in fallback, also the moment to check whether Redis is back. */
  private redisUsable(): boolean {
    if (!this.redisHealthy) void this.probe();
    return this.redisHealthy;
  }

  /**
   * Runs Redis commands, waiting first for a connection being set up; any failure, or no
   * answer within replyTimeoutMs, becomes RedisUnavailableError.
   */
  private async redis<T>(commands: () => Promise<T>): Promise<T> {
    let timer: NodeJS.Timeout | undefined;
    const deadline = new Promise<never>((_, reject) => {
      timer = setTimeout(() => {
        // A busy event loop fires this timer late, before reading a reply that may already
        // be waiting in the socket: let pending I/O run once, so only Redis' slowness counts.
        setImmediate(() => reject(new Error(`no answer within ${this.replyTimeoutMs} ms`)));
      }, this.replyTimeoutMs);
    });
    try {
      const result = await Promise.race([this.whenConnected().then(commands), deadline]);
      this.lastAnswerAt = performance.now();
      return result;
    } catch (error) {
      throw new RedisUnavailableError(error);
    } finally {
      clearTimeout(timer);
    }
  }

  private async evalScript(target: Script, keys: string[], args: (string | number)[]): Promise<unknown> {
    return this.redis(async () => {
      try {
        return await this.client.evalsha(target.sha1, keys.length, ...keys, ...args);
      } catch (error) {
        // First use on this server (or after SCRIPT FLUSH / a restart): send the source once.
        if (!(error instanceof Error) || !error.message.startsWith('NOSCRIPT')) throw error;
        return await this.client.eval(target.source, keys.length, ...keys, ...args);
      }
    });
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
      const reply = (await this.evalScript(DECIDE, keys, [policy.hourly, policy.monthly, nowArgument, operation])) as (string | number)[];
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
        await this.redis(() => this.client.set(key, stored, 'PX', MONTH_COUNTER_TTL_MS, 'NX'));
      })().finally(() => this.seeding.delete(key));
      this.seeding.set(key, pending);
    }
    return pending;
  }

  /** Switches to the fallback unless Redis is connected and answered within the last second. */
  private noteRedisFailure(error: RedisUnavailableError): void {
    if (this.client.status === 'ready' && performance.now() - this.lastAnswerAt < OUTAGE_CONFIRMATION_MS) return;
    this.enterFallback(error);
  }

  private enterFallback(error: RedisUnavailableError): void {
    if (!this.redisHealthy) return;
    this.redisHealthy = false;
    // Seed afresh from PostgreSQL: counts from an earlier outage were handed to Redis since.
    this.fallback.reset();
    this.log?.warn({ err: error.cause }, 'rate limiter: Redis unavailable, deciding in memory per instance');
  }

  private recordFallbackAdmit(apiKeyId: string, verdict: Verdict): void {
    // The decision's month: the one that ends at monthly.resetsAt.
    this.mergeFallbackAdmits({ apiKeyId, month: monthKeyOf(verdict.monthly.resetsAt.getTime() - 1), count: 1 });
  }

  /** Checks Redis at most once per probe interval; on success, hands over and switches back. */
  private async probe(): Promise<void> {
    if (this.probing || this.probeCoolingDown || this.closed) return;
    this.probing = true;
    try {
      if (!(await this.ping())) return;
      await this.handOverFallbackAdmits();
      this.redisHealthy = true;
      // The next decision is Redis': say so now (/readyz), not only after the next request.
      this.lastMode = 'redis';
      // Everything it counted is in Redis now; free the memory until the next outage.
      this.fallback.reset();
      this.log?.info({}, 'rate limiter: Redis answers again, deciding in Redis');
    } catch {
      // Redis failed again while taking the hand-over; stay in fallback and probe later.
    } finally {
      this.probing = false;
      if (!this.redisHealthy) {
        this.probeCoolingDown = true;
        setTimeout(() => {
          this.probeCoolingDown = false;
          // Connected again but the last probe came too early: look again without waiting for traffic.
          if (!this.redisHealthy && !this.closed && this.client.status === 'ready') void this.probe();
        }, this.probeIntervalMs).unref();
      }
    }
  }

  /**
   * Adds the requests the fallback admitted to the Redis month counters. A counter Redis lost
   * is seeded from PostgreSQL first; the fallback never writes to PostgreSQL before this, so
   * that seed cannot already contain these requests. What fails is kept for the next attempt.
   */
  private async handOverFallbackAdmits(): Promise<void> {
    const pending = [...this.fallbackAdmits.values()];
    this.fallbackAdmits = new Map();
    const results = await Promise.allSettled(pending.map((admits) => this.addToMonthCounter(admits)));
    let firstFailure: unknown = null;
    results.forEach((result, index) => {
      if (result.status === 'fulfilled') return;
      this.mergeFallbackAdmits(pending[index]!);
      firstFailure ??= result.reason;
    });
    if (firstFailure !== null) throw firstFailure;
  }

  private async addToMonthCounter(admits: FallbackAdmits): Promise<void> {
    const key = monthKey(admits.apiKeyId, admits.month);
    if ((await this.evalScript(ADD_IF_PRESENT, [key], [admits.count])) === -1) {
      await this.seedMonth(admits.apiKeyId, admits.month);
      if ((await this.evalScript(ADD_IF_PRESENT, [key], [admits.count])) === -1) {
        throw new RedisUnavailableError(new Error(`${key} vanished right after it was seeded`));
      }
    }
    this.touched.set(key, { apiKeyId: admits.apiKeyId, month: admits.month });
  }

  private mergeFallbackAdmits(admits: FallbackAdmits): void {
    const key = monthKey(admits.apiKeyId, admits.month);
    const entry = this.fallbackAdmits.get(key);
    if (entry) entry.count += admits.count;
    else this.fallbackAdmits.set(key, { ...admits });
  }

  private async flushToDatabase(): Promise<void> {
    // During an outage the counters cannot be read; they stay listed until Redis is back.
    if (!this.redisHealthy) return;
    if (this.fallbackAdmits.size > 0) await this.handOverFallbackAdmits();
    if (this.touched.size === 0) return;
    const batch = this.touched;
    this.touched = new Map();
    try {
      const keys = [...batch.keys()];
      const values = await this.redis(() => this.client.pipeline(keys.map((key) => ['get', key])).exec());
      const rows = keys.flatMap((key, index) => {
        const [error, value] = values?.[index] ?? [new Error('no reply'), null];
        if (error) throw new RedisUnavailableError(error);
        // A counter that expired has nothing to add to what PostgreSQL holds.
        if (value === null) return [];
        const { apiKeyId, month } = batch.get(key)!;
        return [{ apiKeyId, month, count: Number(value) }];
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

function neighbouringMonths(month: string): [string, string, string] {
  const [year, monthNumber] = month.split('-').map(Number) as [number, number];
  const start = Date.UTC(year, monthNumber - 1, 1);
  return [monthKeyOf(start - 1), month, monthKeyOf(Date.UTC(year, monthNumber, 1))];
}

function parseSnapshot(reply: (string | number)[]): Snapshot {
  const [, month, nowMs, allowed, monthUsed, ...flatBuckets] = reply;
  const buckets = new Map<number, number>();
  for (let i = 0; i + 1 < flatBuckets.length; i += 2) buckets.set(Number(flatBuckets[i]), Number(flatBuckets[i + 1]));
  return { month: String(month), nowMs: Number(nowMs), allowed: Number(allowed) === 1, monthUsed: Number(monthUsed), buckets };
}
