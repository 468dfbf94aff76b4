/**
 * The stream benchmark server process (forked by bench/streams-run.mjs; control over IPC only).
 *
 * Builds the real app from dist/ the way src/serve.ts does (loadConfig -> createRuntime ->
 * buildApp), logger off, NODE_ENV=production, on 127.0.0.1 and a free port, like
 * bench/server.mjs. GET /api/v1/picks/stream allows at most 10 concurrent streams per API
 * key (src/services/stream-slots.ts MAX_STREAMS_PER_KEY, shared by every way of subscribing), so it creates enough enterprise keys
 * (runtime.services.apiKeys.create) for the requested client count and writes them to a
 * file for the load processes. BENCH_TIER_LIMITS gives enterprise 10^8 an hour / 10^9 a month.
 *
 * IPC commands (the control channel):
 *   stats      { gc? }        RSS and heap (after a full GC when started with --expose-gc),
 *                             open streams (the adapter's own count), feed listeners, fds
 *   publish    { count, intervalMs }  publishes picks through runtime.services.picks.publish
 *                             and records, per pick id, Date.now() right after publish()
 *                             resolves (the transaction has committed by then)
 *   mark / since               CPU, event-loop utilisation and loop delay over a window
 *   profileStart / profileStop a CPU profile through the inspector (what --cpu-prof records)
 *   stop                       closes the app and the runtime, cleans its Redis counters
 *
 * STREAMS_TARGET=baseline adds, in the same process and event loop, a bare node:http server
 * on its own loopback port whose GET /__bench/stream is the cheapest SSE fan-out the same
 * feed allows: no auth, no GraphQL, one PickFeed listener for all clients, each event
 * rendered once (same frame layout and Pick JSON via v1PickJson) and the same string written to
 * every socket. It is the floor the real adapter is compared with, not a proposal as such.
 *
 * Environment (set by streams-run.mjs): STREAMS_MODE embedded|services, STREAMS_DATA_DIR
 * (embedded), STREAMS_DB_URL + STREAMS_REDIS_URL (services), STREAMS_KEYS (how many keys),
 * STREAMS_KEYS_FILE, STREAM_HEARTBEAT_SECONDS (30).
 */
import { randomBytes } from 'node:crypto';
import http from 'node:http';
import { readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { monitorEventLoopDelay } from 'node:perf_hooks';
import { buildApp } from '../dist/src/app.js';
import { loadConfig } from '../dist/src/config.js';
import { v1PickJson } from '../dist/src/domain/pick-shape.js';
import { createRuntime } from '../dist/src/runtime.js';
import { HOST, serveCommands, wallNow, windowMeter } from './common.mjs';
import { BENCH_TIER_LIMITS, createEnterpriseKeys, dropLimiterCounters, pickInput, profileCommands, serverEnv, shutdownSoon, truncateTables } from './server-common.mjs';


if (!process.send) {
  process.stderr.write('bench/streams-server.mjs is started by bench/streams-run.mjs (npm run bench:streams), not directly.\n');
  process.exit(2);
}

const mode = process.env.STREAMS_MODE;
const keyCount = Number(process.env.STREAMS_KEYS ?? 1_000);
const adminToken = `bench-admin-${randomBytes(16).toString('hex')}`;

/** Resident memory by kind of mapping (/proc/self/smaps): where RSS that is not V8 heap lives. */
function residentByMapping() {
  let text;
  try {
    text = readFileSync('/proc/self/smaps', 'utf8');
  } catch {
    return null;
  }
  const kinds = {};
  let kind = null;
  let sizeKb = 0;
  for (const line of text.split('\n')) {
    const head = /^[0-9a-f]+-[0-9a-f]+ \S+ \S+ \S+ \S+\s*(.*)$/.exec(line);
    if (head) {
      const name = head[1].trim();
      kind = name === '' ? 'anonymous' : name.startsWith('[') ? name : name.includes('.so') || name.includes('/node') ? 'code/libraries' : 'other files';
      continue;
    }
    if (line.startsWith('Size:')) sizeKb = Number(line.split(/\s+/)[1]);
    if (line.startsWith('Rss:') && kind) {
      const rssKb = Number(line.split(/\s+/)[1]);
      // Big anonymous regions are glibc per-thread malloc arenas (64 MiB reservations) or
      // large mmap()ed allocations; V8 pages are 256 KiB.
      const k = kind === 'anonymous' && sizeKb >= 60 * 1024 ? 'anonymous >= 60 MiB (malloc arenas, WASM memory)' : kind;
      kinds[k] = (kinds[k] ?? 0) + rssKb * 1024;
    }
  }
  return kinds;
}

function openFds() {
  try {
    return readdirSync('/proc/self/fd').length;
  } catch {
    return null;
  }
}

async function main() {
  const env = await serverEnv({
    mode,
    modeVar: 'STREAMS_MODE',
    adminToken,
    dataDir: process.env.STREAMS_DATA_DIR,
    dbUrl: process.env.STREAMS_DB_URL,
    redisUrl: process.env.STREAMS_REDIS_URL,
    extra: { TIER_LIMITS: JSON.stringify(BENCH_TIER_LIMITS), STREAM_HEARTBEAT_SECONDS: process.env.STREAM_HEARTBEAT_SECONDS ?? '30' },
  });
  const config = loadConfig(env);
  const started = performance.now();
  const runtime = await createRuntime(config, { adminToken, migrate: true });

  // Fresh data every run: the bench database (or temp DATA_DIR) is ours alone.
  await truncateTables(runtime.orm, ['outbox_events', 'picks', 'api_keys', 'monthly_usage']);
  const { keys, keyIds } = await createEnterpriseKeys(runtime, keyCount, 'streams');
  writeFileSync(process.env.STREAMS_KEYS_FILE, JSON.stringify(keys), { mode: 0o600 });
  const setupMs = performance.now() - started;

  const app = await buildApp(runtime, { logger: false });
  await app.listen({ port: 0, host: HOST, backlog: 4096 });
  // Open streams: the adapter's own count (app.openStreams), plus the HTTP server's open sockets.
  const feed = runtime.services.feed;

  // The baseline fan-out (STREAMS_TARGET=baseline): see the header.
  const baseline = process.env.STREAMS_TARGET === 'baseline';
  const bareClients = new Set();
  let bare = null;
  if (baseline) {
    const heartbeatMs = config.streamHeartbeatSeconds * 1000;
    bare = http.createServer((req, res) => {
      if (req.method !== 'GET' || req.url !== '/__bench/stream') {
        res.writeHead(404).end();
        return;
      }
      res.writeHead(200, { 'content-type': 'text/event-stream; charset=utf-8', 'cache-control': 'no-cache', connection: 'keep-alive', 'x-accel-buffering': 'no' });
      res.flushHeaders();
      const heartbeat = setInterval(() => res.write(': heartbeat\n\n'), heartbeatMs);
      bareClients.add(res);
      req.on('close', () => {
        clearInterval(heartbeat);
        bareClients.delete(res);
        res.end();
      });
    });
    feed.listen((message) => {
      if (message.type !== 'pick.published' || bareClients.size === 0) return;
      const p = message.pick;
      const frame = `id: ${message.seq}\nevent: pick.published\ndata: ${JSON.stringify(v1PickJson(p))}\n\n`;
      for (const res of bareClients) if (res.writableLength <= 256 * 1024) res.write(frame);
    });
    await new Promise((resolve) => bare.listen({ port: 0, host: HOST, backlog: 4096 }, resolve));
  }

  const loopDelay = monitorEventLoopDelay({ resolution: 1 });
  loopDelay.enable();
  const meter = windowMeter(loopDelay);

  const connections = () =>
    new Promise((resolve) => {
      (baseline ? bare : app.server).getConnections((error, count) => resolve(error ? null : count));
    });

  const commands = {
    async stats({ gc }) {
      if (gc && global.gc) {
        // Several passes: weak callbacks and finalisers of closed sockets need more than one.
        for (let i = 0; i < 3; i += 1) {
          global.gc();
          await new Promise((resolve) => setTimeout(resolve, 50));
        }
      }
      const memory = process.memoryUsage();
      return {
        rss: memory.rss,
        heapUsed: memory.heapUsed,
        heapTotal: memory.heapTotal,
        external: memory.external,
        arrayBuffers: memory.arrayBuffers,
        gcAvailable: Boolean(global.gc),
        openStreams: baseline ? bareClients.size : app.openStreams(),
        feedListeners: feed.listenerCount,
        httpConnections: await connections(),
        fds: openFds(),
        resident: residentByMapping(),
      };
    },
    async mark() {
      return meter.mark();
    },
    async since({ mark }) {
      return meter.since(mark);
    },
    async publish({ count, intervalMs }) {
      const published = [];
      const t0 = wallNow();
      for (let i = 0; i < count; i += 1) {
        // Evenly spaced on an absolute schedule (a slow publish does not shift the next one).
        const due = t0 + i * intervalMs;
        const wait = due - wallNow();
        if (wait > 0) await new Promise((resolve) => setTimeout(resolve, wait));
        const before = wallNow();
        const pick = await runtime.services.picks.publish(pickInput(i));
        const committedAt = wallNow();
        published.push({ id: pick.id, startedAt: before, committedAt });
      }
      return published;
    },
    ...profileCommands(500),
    async stop() {
      return shutdownSoon('streams server', async () => {
        if (bare) {
          for (const res of bareClients) res.destroy();
          bare.close();
        }
        await app.close();
        if (mode === 'services') await dropLimiterCounters(config.redisUrl, keyIds);
        await runtime.close();
      });
    },
  };

  serveCommands(commands);

  process.send({
    type: 'ready',
    appPort: app.server.address().port,
    streamPort: baseline ? bare.address().port : app.server.address().port,
    streamPath: baseline ? '/__bench/stream' : '/api/v1/picks/stream',
    keys: keyCount,
    setupMs: Math.round(setupMs),
    limiterMode: runtime.limiter.mode(),
    heartbeatSeconds: config.streamHeartbeatSeconds,
  });
}

main().catch((error) => {
  process.stderr.write(`streams server failed: ${error?.stack ?? error}\n`);
  process.exit(1);
});
