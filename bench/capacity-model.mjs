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

/**
 * The planning assumptions: 60 % of an instance's one event loop, 1 GiB of RSS for streams, a
 * fan-out within 250 ms, 90 % of requests from the read cache, 20 picks a second at peak with two
 * bus messages each (the event and the read caches' invalidation), a rolling deploy whose
 * restarted instance's streams come back within EventSource's 3 s retry, and each instance's
 * outbox relay looking for work 10 times a second.
 */
export const PLAN = { cpuShare: 0.6, streamMemoryMiB: 1024, fanOutBudgetMs: 250, cachedShare: 0.9, picksPerSecondPeak: 20, messagesPerPick: 2, reconnectWithinS: 3, relayPollsPerSecond: 10 };

/** The per-instance constants, each with where it comes from. */
export function instanceConstants() {
  const benchServices = read('results.json').modes.services;
  const bench = benchServices.targets;
  const streams = read('streams-results.json').modes.services;
  const webhooks = read('webhooks-results.json').modes.services;
  const engine = read('engine-results.json');
  const kept = webhooks.rates.filter((rate) => rate.achievedPerSecond >= 0.95 * rate.offeredPerSecond && rate.missing === 0);
  const steadyMs = engine.modes.services.summary.steadyPoll.p50;
  return {
    cachedRequestUs: { value: bench.list.serverCpuUsPerRequest, from: 'npm run bench: GET /api/v1/picks, cached page, server CPU per request' },
    uncachedRequestUs: { value: bench['list-uncached'].serverCpuUsPerRequest, from: `npm run bench: the same list, every request to PostgreSQL, saturated (${benchServices.date.slice(0, 10)})` },
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
  'Redis (limiter decisions)': "Redis Cluster: the limiter's keys carry the API key id in a hash tag (rl:{id}:...), so they shard by key; or a local lease of part of a key's hour",
  'Redis pub/sub': 'sharded pub/sub (SPUBLISH / SSUBSCRIBE) by channel on Redis Cluster',
  'PostgreSQL reads': "read replicas for pages and replays; resuming from the instance's own recent frames (a reconnect replays from PostgreSQL today); a relay that waits for a notification instead of polling",
};

const ceil = (x) => Math.max(1, Math.ceil(x));

/**
 * What serves `subscribers` streams and `requestsPerSecond` API requests, from the constants
 * `c` (instanceConstants values) and the shared limits `s` (bench:scale-out's measurements).
 */
export function plan({ subscribers = 0, requestsPerSecond = 0 }, c, s) {
  // Streams: one fan-out within the latency budget; at the peak, picks that arrive during a
  // fan-out go out together in the next one, so a socket gets at most one write per budget,
  // which must fit the CPU share; and the streams' memory.
  const streamsByLatency = Math.floor((PLAN.fanOutBudgetMs * 1000) / c.streamFrameUs);
  const fanOutsPerSecond = Math.min(PLAN.picksPerSecondPeak, 1000 / PLAN.fanOutBudgetMs);
  const streamsByCpu = Math.floor((PLAN.cpuShare * 1e6) / (fanOutsPerSecond * c.streamFrameUs));
  const streamsByMemory = Math.floor((PLAN.streamMemoryMiB * 1024) / c.streamRssKiB);
  const streamsPerInstance = Math.min(streamsByLatency, streamsByCpu, streamsByMemory);
  const streamInstances = subscribers ? ceil(subscribers / streamsPerInstance) : 0;
  // Requests: a mix of cached and uncached pages at 60 % of one core each.
  const requestUs = PLAN.cachedShare * c.cachedRequestUs + (1 - PLAN.cachedShare) * c.uncachedRequestUs;
  const requestsPerInstance = Math.floor((PLAN.cpuShare * 1e6) / requestUs);
  const apiInstances = requestsPerSecond ? ceil(requestsPerSecond / requestsPerInstance) : 0;
  const instances = streamInstances + apiInstances;
  // A rolling deploy: the restarted instance's streams reconnect within the retry, each one
  // limiter decision, one replay query and (the cache cold) one API-key lookup.
  const reconnectsPerSecond = Math.min(subscribers, streamsPerInstance) / PLAN.reconnectWithinS;
  const redisDecisionsPerSecond = requestsPerSecond + reconnectsPerSecond;
  // Every instance receives every bus message.
  const busDeliveriesPerSecond = PLAN.picksPerSecondPeak * PLAN.messagesPerPick * instances;
  const pgQueriesPerSecond = requestsPerSecond * (1 - PLAN.cachedShare) + 2 * reconnectsPerSecond + PLAN.relayPollsPerSecond * instances;
  const shares = {
    'Redis (limiter decisions)': redisDecisionsPerSecond / s.redisDecisionsPerSecond,
    'Redis pub/sub': busDeliveriesPerSecond / s.redisPubSubPerSecond,
    'PostgreSQL reads': pgQueriesPerSecond / s.pgReadsPerSecond,
  };
  const [firstShared, firstShare] = Object.entries(shares).sort((a, b) => b[1] - a[1])[0];
  return {
    streamsPerInstance,
    streamsBoundBy: streamsPerInstance === streamsByCpu ? 'CPU at the peak' : streamsPerInstance === streamsByLatency ? 'fan-out latency' : 'memory',
    streamInstances,
    requestsPerInstance,
    apiInstances,
    redisDecisionsPerSecond: Math.round(redisDecisionsPerSecond),
    busDeliveriesPerSecond: Math.round(busDeliveriesPerSecond),
    pgQueriesPerSecond: Math.round(pgQueriesPerSecond),
    firstShared,
    firstShare: Math.round(firstShare * 100) / 100,
    remedy: REMEDIES[firstShared],
  };
}
