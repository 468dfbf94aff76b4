import type { ServiceLog } from '../../src/services/log.js';
import { randomUUID } from 'node:crypto';
import { once } from 'node:events';
import { performance } from 'node:perf_hooks';
import fc from 'fast-check';
import { Redis } from 'ioredis';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import type { TierLimit } from '../../src/domain/access.js';
import { readFileSync } from 'node:fs';
import { ManualClock } from '../../src/domain/clock.js';
import { bucketLeavesWindowAt, monthKeyOf } from '../../src/domain/rate-limit.js';
import { startOfNextUtcMonth, utcMonthKey } from '../../src/domain/time.js';
import { MemoryRateLimiter } from '../../src/services/limits/memory-limiter.js';
import type { LimitDecision } from '../../src/services/limits/rate-limiter.js';
import {
  DEFAULT_REPLY_TIMEOUT_MS,
  LUA_MONTH_OF,
  RedisRateLimiter,
  hourlyKey,
  limiterRedisOptions,
  monthKey,
} from '../../src/services/limits/redis-limiter.js';
import { describeLimiterContract } from './contract.js';
import { startFrozenRedis, startProxy, startSilentServer, type LoopbackServer } from './network.js';
import { openUsageDatabase, realRedisUrl, type UsageDatabase } from './support.js';

// How fast a decision is while Redis misbehaves is a benchmark's question (docs/PERFORMANCE.md),
// not a timed assertion here: these tests check that decisions are made without Redis's answer
// (while replies are held, a limiter that waited would never decide) and that nothing is lost.

function silentLog() {
  return { warn: vi.fn(), info: vi.fn(), error: vi.fn() };
}

let database: UsageDatabase;

beforeAll(async () => {
  database = await openUsageDatabase();
});

afterAll(async () => {
  await database.close();
});

describe('RedisRateLimiter while Redis is unreachable', () => {
  const servers: LoopbackServer[] = [];

  beforeAll(async () => {
    servers.push(await startSilentServer(), await startFrozenRedis());
  });

  afterAll(async () => {
    await Promise.all(servers.map((server) => server.close()));
  });

  /** How to reach each broken Redis; a client is handed over once ioredis calls it ready. */
  const outages: [string, () => Promise<{ url: string } | { client: Redis }>][] = [
    ['nothing listens on the port', async () => ({ url: 'redis://127.0.0.1:1' })],
    ['the server accepts connections but never answers', async () => ({ url: servers[0]!.url })],
    [
      'the server completed the handshake and then froze',
      async () => {
        const client = new Redis(servers[1]!.url, limiterRedisOptions());
        clients.push(client);
        await once(client, 'ready');
        return { client };
      },
    ],
  ];
  const clients: Redis[] = [];

  afterAll(() => {
    for (const client of clients) client.disconnect();
  });

  it.each(outages)('decides every request in memory, without Redis\'s answer, when %s', async (_, connection) => {
    const log = silentLog();
    const clock = new ManualClock('2026-11-22T10:00:00Z');
    const limiter = new RedisRateLimiter({ ...(await connection()), usageStore: database.usageStore, now: () => clock.now().getTime(), log });
    try {
      const key = await database.createApiKey();
      const policy = { hourly: 25, monthly: 1_000 };
      const decisions: LimitDecision[] = [];
      for (let i = 0; i < 30; i += 1) {
        decisions.push(await limiter.consume(key, policy));
        expect(limiter.mode()).toBe('fallback');
      }
      // The outage costs no request: the first 25 pass, the rest are over the hourly limit.
      expect(decisions.map((decision) => decision.allowed)).toEqual([...Array(25).fill(true), ...Array(5).fill(false)]);
      expect(decisions[25]).toMatchObject({ reason: 'hourly', hourly: { remaining: 0 }, monthly: { used: 25 } });
      expect(log.warn).toHaveBeenCalledTimes(1);
      expect(await limiter.ping()).toBe(false);
      await limiter.close();
      // Counts Redis never took go to PostgreSQL at close.
      expect(await database.storedCount(key, '2026-11')).toBe(25);
    } finally {
      await limiter.close();
    }
  });

  it.each(outages)('admits exactly 25 of 60 parallel requests when %s', async (_, connection) => {
    const limiter = new RedisRateLimiter({ ...(await connection()), usageStore: database.usageStore, log: silentLog() });
    try {
      const key = randomUUID();
      const decisions = await Promise.all(Array.from({ length: 60 }, () => limiter.consume(key, { hourly: 25, monthly: 1_000 })));
      expect(decisions.filter((decision) => decision.allowed)).toHaveLength(25);
      expect(limiter.mode()).toBe('fallback');
    } finally {
      await limiter.close();
    }
  });
});

if (realRedisUrl) {
  const redisUrl = realRedisUrl;

  // Tests about decisions rather than outages give Redis a generous reply time: on a loaded
  // 2-CPU CI machine a reply can miss the production deadline, and a request decided in
  // memory there would fail them for a reason they are not about.
  const RELAXED_REPLY_TIMEOUT_MS = 1_000;

  describeLimiterContract(
    'RedisRateLimiter',
    ({ usageStore, now }) => new RedisRateLimiter({ url: redisUrl, usageStore, now, log: silentLog(), replyTimeoutMs: RELAXED_REPLY_TIMEOUT_MS }),
    'redis',
    () => database,
  );

  describe('RedisRateLimiter on a real Redis', () => {
    let admin: Redis;
    const open: RedisRateLimiter[] = [];

    beforeAll(() => {
      admin = new Redis(redisUrl);
    });

    afterAll(async () => {
      await Promise.all(open.map((limiter) => limiter.close()));
      await admin.quit();
    });

    async function setUp(
      options: { url?: string; flushIntervalMs?: number; probeIntervalMs?: number; replyTimeoutMs?: number; log?: ServiceLog; injectClock?: boolean } = {},
    ) {
      const clock = new ManualClock('2026-11-22T10:00:00Z');
      const limiter = new RedisRateLimiter({
        url: options.url ?? redisUrl,
        usageStore: database.usageStore,
        now: options.injectClock === false ? undefined : () => clock.now().getTime(),
        flushIntervalMs: options.flushIntervalMs,
        probeIntervalMs: options.probeIntervalMs,
        replyTimeoutMs: options.replyTimeoutMs ?? RELAXED_REPLY_TIMEOUT_MS,
        log: options.log ?? silentLog(),
      });
      open.push(limiter);
      await vi.waitFor(async () => expect(await limiter.ping()).toBe(true));
      return { clock, limiter };
    }

    it('computes the UTC month inside Lua exactly as the service does', async () => {
      const monthStarts = Array.from({ length: (2200 - 1970) * 12 }, (_, index) => Date.UTC(1970, index, 1));
      const edges = monthStarts.flatMap((start) => [start - 1, start]).filter((ms) => ms >= 0);
      const random = fc.sample(fc.integer({ min: 0, max: Date.UTC(9999, 11, 31, 23, 59, 59, 999) }), 2_000);
      const times = [...edges, ...random];
      const months = (await admin.eval(
        `${LUA_MONTH_OF}\nlocal out = {}\nfor i = 1, #ARGV do out[i] = month_of(tonumber(ARGV[i])) end\nreturn out`,
        0,
        ...times.map(String),
      )) as string[];
      expect(months).toEqual(times.map((ms) => utcMonthKey(new Date(ms))));
    });

    it('re-seeds a lost month counter from PostgreSQL before admitting anything', async () => {
      const { limiter } = await setUp();
      const key = await database.createApiKey();
      const policy: TierLimit = { hourly: 100, monthly: 5 };
      for (let i = 0; i < 5; i += 1) expect((await limiter.consume(key, policy)).allowed).toBe(true);
      await limiter.flush();
      expect(await database.storedCount(key, '2026-11')).toBe(5);

      // Redis loses its data.
      await admin.del(hourlyKey(key), monthKey(key, '2026-11'));
      const afterLoss = await Promise.all(Array.from({ length: 20 }, () => limiter.consume(key, policy)));
      expect(afterLoss.every((decision) => !decision.allowed && decision.reason === 'monthly')).toBe(true);
      expect(await admin.get(monthKey(key, '2026-11'))).toBe('5');
      expect(await admin.pttl(monthKey(key, '2026-11'))).toBeGreaterThan(39 * 86_400_000);
    });

    it('admits exactly the limit across two instances with 64 concurrent clients', async () => {
      const first = await setUp();
      const second = await setUp();
      const hourlyKeyId = randomUUID();
      const hourlyCap = { hourly: 40, monthly: 10_000 };
      const hourly = await Promise.all(
        Array.from({ length: 64 }, (_, index) => (index % 2 === 0 ? first : second).limiter.consume(hourlyKeyId, hourlyCap)),
      );
      expect(hourly.filter((decision) => decision.allowed)).toHaveLength(40);

      const monthlyKeyId = randomUUID();
      const monthlyCap = { hourly: 1_000, monthly: 30 };
      const monthly = await Promise.all(
        Array.from({ length: 64 }, (_, index) => (index % 2 === 0 ? first : second).limiter.consume(monthlyKeyId, monthlyCap)),
      );
      expect(monthly.filter((decision) => decision.allowed)).toHaveLength(30);
      expect(await admin.get(monthKey(monthlyKeyId, '2026-11'))).toBe('30');
    });

    it('decides on Redis time when no clock is injected', async () => {
      const { limiter } = await setUp({ injectClock: false });
      const key = randomUUID();
      const [seconds] = (await admin.time()) as [string | number, string | number];
      const decision = await limiter.consume(key, { hourly: 10, monthly: 100 });
      const redisNow = Number(seconds) * 1000;
      expect(decision.monthly.resetsAt).toEqual(startOfNextUtcMonth(new Date(redisNow)));
      expect(decision.hourly.resetAt).toBeGreaterThanOrEqual(redisNow / 1000 + 3600);
      expect(decision.hourly.resetAt).toBeLessThanOrEqual(redisNow / 1000 + 3662);
      expect(await admin.get(monthKey(key, monthKeyOf(redisNow)))).toBe('1');
    });

    it('decides by the script\'s time even when this instance\'s clock is months off', async () => {
      const { clock, limiter } = await setUp();
      clock.set('2031-03-15T12:00:00Z');
      const key = randomUUID();
      expect(await limiter.consume(key, { hourly: 10, monthly: 100 })).toMatchObject({
        allowed: true,
        monthly: { used: 1, resetsAt: new Date('2031-04-01T00:00:00Z') },
      });
      expect(await admin.get(monthKey(key, '2031-03'))).toBe('1');
      // Across a year's edge: the months declared around January are December and February.
      clock.set('2031-01-01T00:00:00.500Z');
      expect(await limiter.consume(key, { hourly: 10, monthly: 100 })).toMatchObject({ allowed: true, monthly: { used: 1, resetsAt: new Date('2031-02-01T00:00:00Z') } });
      clock.set('2030-12-31T23:59:59.500Z');
      expect(await limiter.consume(key, { hourly: 10, monthly: 100 })).toMatchObject({ allowed: true, monthly: { used: 1, resetsAt: new Date('2031-01-01T00:00:00Z') } });
      expect([await admin.get(monthKey(key, '2030-12')), await admin.get(monthKey(key, '2031-01'))]).toEqual(['1', '1']);
    });

    it('still decides in Redis after Redis forgot its scripts (SCRIPT FLUSH, as after a restart)', async () => {
      const log = silentLog();
      const { limiter } = await setUp({ log });
      const key = randomUUID();
      const policy = { hourly: 100, monthly: 1_000 };
      expect(await limiter.consume(key, policy)).toMatchObject({ allowed: true, monthly: { used: 1 } });

      await admin.script('FLUSH');
      expect(await limiter.consume(key, policy)).toMatchObject({ allowed: true, monthly: { used: 2 } });
      expect(limiter.mode()).toBe('redis');
      expect((await limiter.peek(key, policy)).monthly.used).toBe(2);
      expect(await admin.get(monthKey(key, '2026-11'))).toBe('2');
      expect(log.warn).not.toHaveBeenCalled();
    });

    it('copies month counters to PostgreSQL on its flush timer', async () => {
      const { limiter } = await setUp({ flushIntervalMs: 25 });
      const key = await database.createApiKey();
      for (let i = 0; i < 3; i += 1) await limiter.consume(key, { hourly: 10, monthly: 100 });
      await vi.waitFor(async () => expect(await database.storedCount(key, '2026-11')).toBe(3));
    });

    it('decides a request Redis is slow to answer in memory, without giving up on Redis', async () => {
      const proxy = await startProxy(redisUrl);
      const log = silentLog();
      // The production reply deadline: the held reply below is decided without.
      const { limiter } = await setUp({ url: proxy.url, replyTimeoutMs: DEFAULT_REPLY_TIMEOUT_MS, log });
      try {
        const key = randomUUID();
        const policy = { hourly: 100, monthly: 1_000 };
        for (let i = 0; i < 3; i += 1) await limiter.consume(key, policy);

        // Redis holds its reply until after this decision: the limiter decides without it.
        proxy.holdReplies();
        expect((await limiter.consume(key, policy)).allowed).toBe(true);
        expect(limiter.mode()).toBe('fallback');
        proxy.releaseReplies();

        expect(await limiter.consume(key, policy)).toMatchObject({ allowed: true });
        expect(limiter.mode()).toBe('redis');
        expect(log.warn).not.toHaveBeenCalled();
        // The slow request reached Redis and was counted there too; the late reply said so, so
        // the flush's hand-over does not add the fallback's admission: 5 admitted, 5 counted.
        await limiter.flush();
        expect(await admin.get(monthKey(key, '2026-11'))).toBe('5');
      } finally {
        await limiter.close();
        await proxy.close();
      }
    });

    it('takes back what Redis counted for a request the fallback refused after its reply came too late', async () => {
      const proxy = await startProxy(redisUrl);
      const { limiter } = await setUp({ url: proxy.url, replyTimeoutMs: DEFAULT_REPLY_TIMEOUT_MS });
      try {
        const key = await database.createApiKey();
        const policy = { hourly: 100, monthly: 10 };
        // PostgreSQL (what the fallback starts from) says the month is used up; the Redis
        // counter, as after a lost flush, says 5: Redis admits, the fallback refuses.
        await database.usageStore.flush([{ apiKeyId: key, month: '2026-11', count: 10, refunded: 0 }]);
        await admin.set(monthKey(key, '2026-11'), '5');

        proxy.holdReplies();
        const refused = await limiter.consume(key, policy);
        expect(refused).toMatchObject({ allowed: false, reason: 'monthly' });
        expect(limiter.mode()).toBe('fallback');
        proxy.releaseReplies();
        // The next decision's reply comes after the late one on the same connection.
        expect(await limiter.consume(key, policy)).toMatchObject({ allowed: true });
        expect(await admin.get(monthKey(key, '2026-11'))).toBe('7');

        // The request answered 429 is taken back: only the one answered 200 stays counted.
        await limiter.flush();
        expect(await admin.get(monthKey(key, '2026-11'))).toBe('6');
      } finally {
        await limiter.close();
        await proxy.close();
      }
    });

    it('falls back during an outage, then hands the fallback admissions to Redis and decides there again', async () => {
      const proxy = await startProxy(redisUrl);
      const log = silentLog();
      const { limiter } = await setUp({ url: proxy.url, probeIntervalMs: 20, replyTimeoutMs: DEFAULT_REPLY_TIMEOUT_MS, log });
      try {
        const key = await database.createApiKey();
        const policy = { hourly: 100, monthly: 1_000 };
        for (let i = 0; i < 3; i += 1) await limiter.consume(key, policy);
        expect(limiter.mode()).toBe('redis');

        proxy.cut();
        for (let i = 0; i < 2; i += 1) {
          expect((await limiter.consume(key, policy)).allowed).toBe(true);
        }
        expect(limiter.mode()).toBe('fallback');
        expect(log.warn).toHaveBeenCalledTimes(1);

        proxy.restore();
        let admittedWhileRecovering = 0;
        await vi.waitFor(
          async () => {
            if ((await limiter.consume(key, policy)).allowed) admittedWhileRecovering += 1;
            expect(limiter.mode()).toBe('redis');
          },
          { timeout: 5_000, interval: 50 },
        );
        expect(log.info).toHaveBeenCalledTimes(1);
        expect(await limiter.ping()).toBe(true);
        // After the next flush every admitted request is in the Redis month counter and in
        // PostgreSQL: those before the outage, during it, and while it recovered (a fallback
        // decision racing the hand-over is handed over by that flush).
        await limiter.flush();
        const admitted = 3 + 2 + admittedWhileRecovering;
        expect(await admin.get(monthKey(key, '2026-11'))).toBe(String(admitted));
        expect((await limiter.peek(key, policy)).monthly.used).toBe(admitted);
        expect(await database.storedCount(key, '2026-11')).toBe(admitted);
      } finally {
        await limiter.close();
        await proxy.close();
      }
    });

    /** The hourly hash as stored: its buckets, and the summary the decide script keeps beside them. */
    async function readHourlyHash(apiKeyId: string) {
      const { '-1': summary, ...fields } = await admin.hgetall(hourlyKey(apiKeyId));
      const buckets = new Map(Object.entries(fields).map(([bucket, count]) => [Number(bucket), Number(count)]));
      const [total, oldest, newest] = summary ? summary.split(',').map(Number) : [];
      return { summary: summary ? { total, oldest, newest } : null, buckets };
    }

    it('sends one command to Redis per admitted request, concurrent ones included', async () => {
      const client = new Redis(redisUrl, limiterRedisOptions());
      const clock = new ManualClock('2026-11-22T10:00:00Z');
      const limiter = new RedisRateLimiter({
        client,
        usageStore: database.usageStore,
        now: () => clock.now().getTime(),
        flushIntervalMs: 3_600_000,
        replyTimeoutMs: RELAXED_REPLY_TIMEOUT_MS,
        log: silentLog(),
      });
      const monitor = await admin.monitor();
      try {
        await vi.waitFor(async () => expect(await limiter.ping()).toBe(true));
        const key = randomUUID();
        const policy = { hourly: 100, monthly: 1_000 };
        // The key's first request in a month seeds the month counter: not the case measured here.
        await limiter.consume(key, policy);
        const address = /addr=(\S+)/.exec(String(await client.call('CLIENT', 'INFO')))?.[1];
        expect(address).toBeDefined();

        // Every command Redis executes, from any client (the script's own calls come from 'lua').
        const executed: { source: string; args: string[] }[] = [];
        monitor.on('monitor', (_time: string, args: string[], source: string) => executed.push({ source, args }));
        /** The commands of the limiter's connection Redis executed while `work` ran, between two markers. */
        async function limiterCommandsDuring(work: () => Promise<unknown>): Promise<string[]> {
          const [start, end] = [randomUUID(), randomUUID()];
          const markerAt = (marker: string) => executed.findIndex(({ args }) => args[0] === 'echo' && args[1] === marker);
          await admin.echo(start);
          await work();
          await admin.echo(end);
          await vi.waitFor(() => expect(markerAt(end)).toBeGreaterThan(-1));
          return executed
            .slice(markerAt(start) + 1, markerAt(end))
            .filter(({ source }) => source === address)
            .map(({ args }) => args[0]!.toLowerCase());
        }

        expect(await limiterCommandsDuring(async () => expect((await limiter.consume(key, policy)).allowed).toBe(true))).toEqual(['evalsha']);

        const concurrent = await limiterCommandsDuring(async () => {
          const decisions = await Promise.all(Array.from({ length: 10 }, () => limiter.consume(key, policy)));
          expect(decisions.every((decision) => decision.allowed)).toBe(true);
        });
        expect(concurrent).toEqual(Array(10).fill('evalsha'));
      } finally {
        monitor.disconnect();
        await limiter.close();
        await client.quit();
      }
    });

    it('keeps a running hourly total equal to the sum of its buckets across window rollovers, deciding as in memory', async () => {
      const { clock, limiter } = await setUp();
      const memory = new MemoryRateLimiter({ usageStore: database.usageStore, now: () => clock.now().getTime(), flushIntervalMs: null });
      const key = randomUUID();
      const start = clock.now().getTime();
      // Minutes with requests (several in some): a full window, rollovers by one bucket, gaps
      // longer than the window, and the clock stepping back behind counted buckets.
      const minutes = [0, 0, 0, 1, 5, 30, 59, 60, 60, 61, 62, 62, 65, 90, 121, 122, 123, 200, 260, 261, 262, 330, 328, 329, 331, 400, 460, 461, 521, 522];
      try {
        for (const [step, minute] of minutes.entries()) {
          clock.set(new Date(start + minute * 60_000 + ((step * 7_919) % 60_000)));
          // Now and then a limit already reached, so that refusals (and their Retry-After) are compared too.
          const policy = { hourly: step % 4 === 3 ? 3 : 1_000, monthly: 1_000 };
          const { admission, ...decision } = { admission: undefined, ...(await limiter.consume(key, policy)) };
          const { admission: memoryAdmission, ...memoryDecision } = { admission: undefined, ...(await memory.consume(key, policy)) };
          expect(decision).toEqual(memoryDecision);
          // The same month and bucket to take a request back from.
          expect(admission && { ...admission, by: 'memory' }).toEqual(memoryAdmission);
          const { summary, buckets } = await readHourlyHash(key);
          const counts = [...buckets.values()];
          const sum = counts.reduce((total, count) => total + count, 0);
          expect(summary).toEqual(sum === 0 ? null : { total: sum, oldest: Math.min(...buckets.keys()), newest: Math.max(...buckets.keys()) });
          // Only the counted window is kept: the decision's standing is the stored buckets'.
          expect(decision.hourly.remaining).toBe(Math.max(0, policy.hourly - sum));
          if (sum > 0) expect(decision.hourly.resetAt).toBe(bucketLeavesWindowAt(Math.min(...buckets.keys())));
          expect(await limiter.peek(key, policy)).toEqual(await memory.peek(key, policy));
        }
      } finally {
        await memory.close();
      }
    });

    it('stays exact beside an instance running the previous decide script (rolling deployment)', async () => {
      const previousDecide = `${LUA_MONTH_OF}\n${readFileSync(new URL('./previous-decide.lua', import.meta.url), 'utf8')}`;
      const { clock, limiter } = await setUp();
      const key = randomUUID();
      const policy = { hourly: 30, monthly: 1_000 };
      const start = clock.now().getTime();
      /** One request decided by an instance of the previous version; true if admitted. */
      async function previousInstanceConsumes(): Promise<boolean> {
        const months = ['2026-10', '2026-11', '2026-12'].map((month) => monthKey(key, month));
        const reply = (await admin.eval(previousDecide, 4, hourlyKey(key), ...months, policy.hourly, policy.monthly, String(clock.now().getTime()), 'consume', 3_700_000)) as (string | number)[];
        expect(reply[0]).toBe('ok');
        return reply[3] === 1;
      }

      let admitted = 0;
      for (let i = 0; i < 60; i += 1) {
        clock.set(new Date(start + i * 20_000));
        // The current version first (it seeds the month counter), then both in turn.
        if (i % 3 === 1) {
          if (await previousInstanceConsumes()) admitted += 1;
        } else {
          const decision = await limiter.consume(key, policy);
          if (decision.allowed) admitted += 1;
          const { buckets } = await readHourlyHash(key);
          const sum = [...buckets.values()].reduce((total, count) => total + count, 0);
          expect(decision.hourly.remaining).toBe(policy.hourly - sum);
        }
      }
      // Within one window, both versions together admit exactly the limit.
      expect(admitted).toBe(policy.hourly);

      // A new window, written by both versions again: still one count.
      clock.set(new Date(start + 3 * 3_600_000));
      expect(await previousInstanceConsumes()).toBe(true);
      expect(await limiter.consume(key, policy)).toMatchObject({ allowed: true, hourly: { remaining: policy.hourly - 2 } });
      expect(await previousInstanceConsumes()).toBe(true);
      expect(await limiter.consume(key, policy)).toMatchObject({ allowed: true, hourly: { remaining: policy.hourly - 4 } });
      expect(await readHourlyHash(key)).toMatchObject({ summary: { total: 4 } });
      expect(await admin.pttl(hourlyKey(key))).toBeGreaterThan(3_600_000);
    });
  });
}
