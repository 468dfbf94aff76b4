/**
 * `npm run bench:reservations`: the graphql-sse reservation flood against the built server
 * (docs/OPERATIONS.md, "Reservation flood").
 *
 * graphql-sse's single-connection mode reserved a stream for every `PUT /graphql/stream`, with
 * or without credentials, under the client's own token, and never let one go: 10,000 PUTs kept
 * about 150 MB and one client on 32 connections exhausted the heap. The service no longer
 * serves that mode. This bench checks it the way the attack ran:
 *
 *   1. starts `node dist/src/main.js` (what `npm start` runs) in embedded mode: a fresh temp
 *      DATA_DIR, NODE_ENV=production, on 127.0.0.1 and a free port;
 *   2. creates BENCH_RESERVATION_KEYS (100) Enterprise keys through the admin GraphQL mutation
 *      createApiKey;
 *   3. warms up with BENCH_RESERVATION_WARMUP (2,000) PUTs, then reads the server's RSS
 *      (/proc/<pid>/status VmRSS): the start;
 *   4. sends BENCH_RESERVATION_PUTS (200,000) PUTs over loopback, BENCH_RESERVATION_CONCURRENCY
 *      (256) in flight on BENCH_RESERVATION_CONNECTIONS (32) connections, each with its own
 *      client-chosen token of BENCH_RESERVATION_TOKEN_BYTES (1,024) in
 *      X-GraphQL-Event-Stream-Token: half without credentials, half spread over the keys (far
 *      past their 10 streams each). RSS is sampled every 250 ms;
 *   5. waits BENCH_RESERVATION_WAIT_S (35, past the 30 s a reservation would have been given),
 *      forcing nothing (no GC), and reads RSS again: the end; VmHWM is the peak;
 *   6. tries to use reservations of the flood: GET with a flooded token (header and query
 *      parameter) and Accept: text/event-stream, which would be the reserved stream, and a POST
 *      attaching an operation to it; none may get a stream;
 *   7. stops the server with SIGTERM.
 *
 * It passes when the end RSS is within 20 MiB of the start and no flooded token opens anything.
 * Output: bench/reservation-flood-results.json and a summary on stdout.
 */
import { randomBytes } from 'node:crypto';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { Pool } from 'undici';
import { BENCH_DIR, HOST, ROOT, intEnv, loadAverage, log, machine, sleep } from './common.mjs';
import { freePort, startInstance } from './lib/launcher.mjs';
import { r1 } from './lib/stats.mjs';
import { serverEnv } from './server-common.mjs';

const RESULTS_FILE = path.join(BENCH_DIR, 'reservation-flood-results.json');
const MIB = 1024 * 1024;
const RSS_BUDGET_MIB = 20;

const settings = {
  puts: intEnv('BENCH_RESERVATION_PUTS', 200_000, 1_000, 2_000_000),
  keys: intEnv('BENCH_RESERVATION_KEYS', 100, 1, 1_000),
  concurrency: intEnv('BENCH_RESERVATION_CONCURRENCY', 256, 1, 4_096),
  connections: intEnv('BENCH_RESERVATION_CONNECTIONS', 32, 1, 512),
  tokenBytes: intEnv('BENCH_RESERVATION_TOKEN_BYTES', 1_024, 16, 14_000),
  warmup: intEnv('BENCH_RESERVATION_WARMUP', 2_000, 0, 100_000),
  waitSeconds: intEnv('BENCH_RESERVATION_WAIT_S', 35, 0, 600),
};

/** Resident set size and its high-water mark of a process, in bytes (/proc/<pid>/status). */
function memoryOf(pid) {
  const status = readFileSync(`/proc/${pid}/status`, 'utf8');
  const kib = (field) => Number(new RegExp(`^${field}:\\s+(\\d+) kB`, 'm').exec(status)?.[1] ?? NaN) * 1024;
  return { rss: kib('VmRSS'), hwm: kib('VmHWM') };
}

const mib = (bytes) => r1(bytes / MIB);

/** A token as the attack sent them: chosen by the client, unique, long. */
function floodToken(i) {
  const id = `flood-${i}-`;
  return id + 'x'.repeat(Math.max(0, settings.tokenBytes - id.length));
}

async function createKeys(base, adminToken, count) {
  const keys = [];
  for (let i = 0; i < count; i += 1) {
    const res = await fetch(`${base}/graphql`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', authorization: `Bearer ${adminToken}` },
      body: JSON.stringify({
        query: 'mutation($input: CreateApiKeyInput!) { createApiKey(input: $input) { key } }',
        variables: { input: { tier: 'ENTERPRISE', label: `reservation-flood-${i}` } },
      }),
    });
    const body = await res.json();
    if (!body.data?.createApiKey?.key) throw new Error(`createApiKey failed: ${res.status} ${JSON.stringify(body)}`);
    keys.push(body.data.createApiKey.key);
  }
  return keys;
}

/** Sends `count` PUTs (numbered from `first`), `concurrency` in flight; counts statuses. */
async function flood(pool, keys, first, count, onProgress) {
  const statuses = {};
  let next = first;
  const end = first + count;
  let done = 0;
  async function worker() {
    while (next < end) {
      const i = next;
      next += 1;
      const headers = { accept: 'text/plain', 'x-graphql-event-stream-token': floodToken(i) };
      if (i % 2 === 1) headers.authorization = `Bearer ${keys[Math.floor(i / 2) % keys.length]}`;
      let status;
      try {
        const res = await pool.request({ path: '/graphql/stream', method: 'PUT', headers });
        status = String(res.statusCode);
        await res.body.dump();
      } catch (error) {
        status = `error ${error.code ?? error.name}`;
      }
      statuses[status] = (statuses[status] ?? 0) + 1;
      done += 1;
      if (done % 20_000 === 0) onProgress?.(done);
    }
  }
  await Promise.all(Array.from({ length: settings.concurrency }, worker));
  return statuses;
}

/** What a reservation of the flood would open: its stream (GET, header or parameter) and an operation on it (POST). */
async function probeReservations(base, keys) {
  const probes = [];
  for (const i of [0, 1, settings.puts - 2, settings.puts - 1]) {
    const token = floodToken(settings.warmup + i);
    const auth = i % 2 === 1 ? { authorization: `Bearer ${keys[Math.floor((settings.warmup + i) / 2) % keys.length]}` } : {};
    const attempts = [
      { what: 'GET, token header, Accept: text/event-stream', url: '/graphql/stream', init: { headers: { accept: 'text/event-stream', 'x-graphql-event-stream-token': token, ...auth } } },
      { what: 'GET, token parameter, Accept: text/event-stream', url: `/graphql/stream?token=${encodeURIComponent(token)}`, init: { headers: { accept: 'text/event-stream', ...auth } } },
      {
        what: 'POST an operation onto the reservation',
        url: '/graphql/stream',
        init: {
          method: 'POST',
          headers: { accept: 'application/json', 'content-type': 'application/json', 'x-graphql-event-stream-token': token, ...auth },
          body: JSON.stringify({ query: 'subscription { pickPublished { sequence } }', extensions: { operationId: '1' } }),
        },
      },
    ];
    for (const attempt of attempts) {
      const controller = new AbortController();
      const res = await fetch(`${base}${attempt.url}`, { ...attempt.init, signal: controller.signal });
      const contentType = res.headers.get('content-type') ?? '';
      const stream = contentType.startsWith('text/event-stream');
      const body = stream ? '' : await res.text();
      controller.abort();
      probes.push({ what: attempt.what, credentials: Boolean(auth.authorization), status: res.status, stream, code: stream ? null : (JSON.parse(body || '{}').errors?.[0]?.extensions?.code ?? null) });
    }
  }
  return probes;
}

async function main() {
  const dataDir = mkdtempSync(path.join(os.tmpdir(), 'picks-reservations-'));
  const adminToken = `bench-admin-${randomBytes(16).toString('hex')}`;
  const port = await freePort();
  const env = await serverEnv({ mode: 'embedded', modeVar: 'mode', adminToken, dataDir, extra: { PORT: String(port) } });
  const base = `http://${HOST}:${port}`;
  process.on('exit', () => rmSync(dataDir, { recursive: true, force: true }));

  log(`bench:reservations: ${settings.puts.toLocaleString('en')} PUTs, ${settings.keys} keys, ${settings.concurrency} in flight on ${settings.connections} connections, tokens of ${settings.tokenBytes} bytes`);
  // The shared launcher (lib/launcher.mjs): killed on any exit of this process.
  const server = await startInstance({ name: 'picks', port, env, baseEnv: process.env, probe: '/readyz', timeoutMs: 120_000 });
  try {
    await server.ready;
  } catch (error) {
    throw new Error(`the server was not ready: ${error.message}`);
  }
  const keys = await createKeys(base, adminToken, settings.keys);
  const ready = memoryOf(server.pid);
  log(`  server pid ${server.pid} ready, ${keys.length} keys created; RSS ${mib(ready.rss)} MiB`);

  const pool = new Pool(base, { connections: settings.connections, pipelining: 1 });
  if (settings.warmup > 0) await flood(pool, keys, 0, settings.warmup);
  const start = memoryOf(server.pid);
  log(`  after ${settings.warmup.toLocaleString('en')} warm-up PUTs: RSS ${mib(start.rss)} MiB (start)`);

  let peakSampled = start.rss;
  const samples = [];
  const sampler = setInterval(() => {
    const { rss } = memoryOf(server.pid);
    peakSampled = Math.max(peakSampled, rss);
    samples.push(rss);
  }, 250);
  const t0 = performance.now();
  const statuses = await flood(pool, keys, settings.warmup, settings.puts, (done) => log(`  ${done.toLocaleString('en')} sent, RSS ${mib(memoryOf(server.pid).rss)} MiB`));
  const floodMs = performance.now() - t0;
  const afterFlood = memoryOf(server.pid);
  await pool.close();
  log(`  flood done in ${r1(floodMs / 1000)} s (${Math.round(settings.puts / (floodMs / 1000)).toLocaleString('en')}/s): ${JSON.stringify(statuses)}; RSS ${mib(afterFlood.rss)} MiB`);

  log(`  waiting ${settings.waitSeconds} s, forcing nothing`);
  await sleep(settings.waitSeconds * 1000);
  clearInterval(sampler);
  const end = memoryOf(server.pid);
  peakSampled = Math.max(peakSampled, end.rss);
  log(`  end RSS ${mib(end.rss)} MiB (start ${mib(start.rss)}, peak sampled ${mib(peakSampled)}, VmHWM ${mib(end.hwm)})`);

  const probes = await probeReservations(base, keys);
  const streamsOpened = probes.filter((probe) => probe.stream || probe.status < 300).length;
  log(`  ${probes.length} attempts to use flooded tokens: ${streamsOpened} opened anything; statuses ${[...new Set(probes.map((probe) => `${probe.status} ${probe.code}`))].join(', ')}`);

  const exit = await server.stop('SIGTERM', 30_000);

  const endMinusStartMiB = r1((end.rss - start.rss) / MIB);
  const passed = endMinusStartMiB <= RSS_BUDGET_MIB && streamsOpened === 0 && Object.keys(statuses).every((status) => status === '405');
  const results = {
    date: new Date().toISOString(),
    machine: machine(),
    loadAverage: loadAverage(),
    mode: 'embedded',
    settings,
    statuses,
    floodSeconds: r1(floodMs / 1000),
    requestsPerSecond: Math.round(settings.puts / (floodMs / 1000)),
    rssMiB: {
      ready: mib(ready.rss),
      start: mib(start.rss),
      afterFlood: mib(afterFlood.rss),
      peakSampled: mib(peakSampled),
      highWaterMark: mib(end.hwm),
      end: mib(end.rss),
      endMinusStart: endMinusStartMiB,
      budget: RSS_BUDGET_MIB,
    },
    reservationAttempts: probes,
    serverExit: exit,
    passed,
  };
  writeFileSync(RESULTS_FILE, `${JSON.stringify(results, null, 2)}\n`);
  log(`  ${passed ? 'PASS' : 'FAIL'}: end - start ${endMinusStartMiB} MiB (budget ${RSS_BUDGET_MIB}), ${streamsOpened} reservations usable; written to ${path.relative(ROOT, RESULTS_FILE)}`);
  if (!passed) process.exitCode = 1;
}

main().catch((error) => {
  process.stderr.write(`bench:reservations failed: ${error?.stack ?? error}\n`);
  process.exit(1);
});
