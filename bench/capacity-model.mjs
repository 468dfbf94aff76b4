/**
 * The capacity model of docs/PERFORMANCE.md "Capacity": per-instance constants read from the
 * benches' own results files (services mode: PostgreSQL + Redis), the shared parts' limits
 * measured by bench:scale-out, and from them what a given load needs. One place for every
 * figure the table shows, so the table changes when a bench's results do.
 */
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { BENCH_DIR } from './common.mjs';

const read = (file) => JSON.parse(readFileSync(path.join(BENCH_DIR, file), 'utf8'));

/** What one instance is planned to spend: 60 % of its one event loop, 1 GiB of RSS for streams. */
export const PLAN = { cpuShare: 0.6, streamMemoryMiB: 1024, fanOutBudgetMs: 250, cachedShare: 0.9, picksPerSecondPeak: 20 };

/** The per-instance constants, each with where it comes from. */
export function instanceConstants() {
  const bench = read('results.json').modes.services.targets;
  const streams = read('streams-results.json').modes.services;
  const webhooks = read('webhooks-results.json').modes.services;
  const engine = read('engine-results.json');
  const kept = webhooks.rates.filter((rate) => rate.achievedPerSecond >= 0.95 * rate.offeredPerSecond && rate.missing === 0);
  const steadyMs = engine.modes.services.summary.steadyPoll.p50;
  return {
    cachedRequestUs: { value: bench.list.serverCpuUsPerRequest, from: 'npm run bench: GET /api/v1/picks, cached page, server CPU per request' },
    uncachedRequestUs: { value: bench['list-uncached'].serverCpuUsPerRequest, from: 'npm run bench: the same list, every request to PostgreSQL' },
    publicRequestUs: { value: bench.public.serverCpuUsPerRequest, from: 'npm run bench: GET /api/public/picks/today' },
    streamFrameUs: { value: streams.delivery.serverCpuUsPerFrame, from: 'npm run bench:streams: server CPU per frame delivered, 10,000 clients' },
    streamRssKiB: { value: streams.idle.rssPerStreamKiB, from: 'npm run bench:streams: RSS per idle stream, 10,000 clients' },
    streamConnectMs: { value: streams.connect.serverCpuMsPerStream, from: 'npm run bench:streams: server CPU per stream admitted' },
    webhookDeliveriesPerSecond: { value: Math.max(...kept.map((rate) => rate.offeredPerSecond)), from: 'npm run bench:webhooks: the highest offered rate one dispatcher kept up with' },
    engineMsPer1000Prices: { value: steadyMs === undefined ? null : Math.round((steadyMs / engine.settings.prices) * 1000 * 10) / 10, from: 'npm run bench:engine: steady poll p50 per 1,000 prices (28,000 a poll)' },
  };
}

/** PostgreSQL's bulk write rate as the engine's first poll sees it (every price new, both price tables). */
export function engineBulkRowsPerSecond() {
  const engine = read('engine-results.json');
  return Math.round(((2 * engine.settings.prices) / engine.modes.services.summary.firstPollParts.storeMs) * 1000);
}

/** What each shared part does when it is the first to saturate. */
export const REMEDIES = {
  'Redis (one core)': "Redis Cluster: the limiter's keys carry the API key id in a hash tag (rl:{id}:...), so they shard by key; or a local lease of part of a key's hour",
  'Redis pub/sub': 'sharded pub/sub (SPUBLISH / SSUBSCRIBE) by channel on Redis Cluster',
  'PostgreSQL reads': "read replicas for pages and replays, and resuming from the instance's own recent frames (a reconnect after a deploy replays from PostgreSQL today)",
};

const ceil = (x) => Math.max(1, Math.ceil(x));

/**
 * What serves `subscribers` streams and `requestsPerSecond` API requests, from the constants
 * `c` (instanceConstants values) and the shared limits `s` (bench:scale-out's measurements).
 */
export function plan({ subscribers = 0, requestsPerSecond = 0 }, c, s) {
  // Streams: an event's fan-out on one instance must fit the latency budget, and the streams
  // its memory budget; a pick goes through Redis once per instance.
  const streamsByLatency = Math.floor(PLAN.fanOutBudgetMs * 1000 / c.streamFrameUs);
  const streamsByMemory = Math.floor((PLAN.streamMemoryMiB * 1024) / c.streamRssKiB);
  const streamsPerInstance = Math.min(streamsByLatency, streamsByMemory);
  const streamInstances = subscribers ? ceil(subscribers / streamsPerInstance) : 0;
  // Requests: a mix of cached and uncached pages at 60 % of one core each.
  const requestUs = PLAN.cachedShare * c.cachedRequestUs + (1 - PLAN.cachedShare) * c.uncachedRequestUs;
  const requestsPerInstance = Math.floor((PLAN.cpuShare * 1e6) / requestUs);
  const apiInstances = requestsPerSecond ? ceil(requestsPerSecond / requestsPerInstance) : 0;
  const redisCommandsPerSecond = requestsPerSecond /* one limiter decision each */ + PLAN.picksPerSecondPeak * streamInstances;
  const pgQueriesPerSecond = requestsPerSecond * (1 - PLAN.cachedShare);
  // A deploy: every stream back within 30 s (EventSource retries after 3 s), each resuming with
  // Last-Event-ID, one replay query (API keys come from the in-process cache).
  const reconnectsPerSecond = subscribers / 30;
  const shares = {
    'Redis (one core)': redisCommandsPerSecond / s.redisCommandsPerSecond,
    'Redis pub/sub': (PLAN.picksPerSecondPeak * streamInstances) / s.redisPubSubPerSecond,
    'PostgreSQL reads': (pgQueriesPerSecond + reconnectsPerSecond) / s.pgReadsPerSecond,
  };
  const [firstShared, firstShare] = Object.entries(shares).sort((a, b) => b[1] - a[1])[0];
  return {
    streamsPerInstance,
    streamInstances,
    requestsPerInstance,
    apiInstances,
    redisCommandsPerSecond: Math.round(redisCommandsPerSecond),
    pgQueriesPerSecond: Math.round(pgQueriesPerSecond + reconnectsPerSecond),
    firstShared,
    firstShare: Math.round(firstShare * 100) / 100,
    remedy: REMEDIES[firstShared],
  };
}
