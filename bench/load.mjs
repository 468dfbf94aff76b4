/**
 * The load generator, a separate process forked by bench/run.mjs for each target: it takes
 * one job over IPC, runs it against 127.0.0.1 only, answers with the numbers and exits.
 *
 *   check       one GET: status, content-type and body digest (is the target what we think?)
 *   autocannon  a warm-up run, then the measured run (fixed durations, pipelining 1)
 *   paced       open loop at a fixed, evenly spaced rate; exact per-request times
 *   loop        one client in a closed loop for a fixed time; exact per-request times
 *   sequential  one request at a time, round-robin over several targets, exact times
 *               (autocannon's histogram has 1 ms buckets: too coarse for sub-ms differences)
 */
import { createHash } from 'node:crypto';
import http from 'node:http';
import autocannon from 'autocannon';
import { percentile, r3 } from './lib/stats.mjs';

function assertLoopback(url) {
  const { hostname } = new URL(url);
  if (hostname !== '127.0.0.1') throw new Error(`load generator only targets 127.0.0.1, refused ${url}`);
}

function get(agent, url, headers) {
  return new Promise((resolve, reject) => {
    const req = http.get(url, { agent, headers, timeout: 10_000 }, (res) => {
      const chunks = [];
      res.on('data', (chunk) => chunks.push(chunk));
      res.on('end', () => resolve({ status: res.statusCode, headers: res.headers, body: Buffer.concat(chunks) }));
      res.on('error', reject);
    });
    req.on('timeout', () => req.destroy(new Error(`timeout: ${url}`)));
    req.on('error', reject);
  });
}

/**
 * A distinct timestamp per n: n milliseconds before 2020-01-01, older than every seeded pick
 * (their kickoffs start two years before today), so the page is the same whatever n is.
 */
export function sinceFor(n) {
  return new Date(Date.UTC(2020, 0, 1) - n).toISOString();
}

/**
 * The `since` values of one job: sinceBase, sinceBase + 1, ... within its block (run.mjs gives
 * every job its own block, so no value repeats within a run); next() throws past the block.
 */
function sinceSequence({ sinceBase, sinceBlock }) {
  if (!Number.isSafeInteger(sinceBase) || !Number.isSafeInteger(sinceBlock)) throw new Error('distinctSince needs sinceBase and sinceBlock');
  let used = 0;
  return {
    next() {
      if (used >= sinceBlock) throw new Error(`more than ${sinceBlock} requests: the since values would leave their block`);
      return sinceFor(sinceBase + used++);
    },
  };
}

function summariseAutocannon(result) {
  return {
    durationS: result.duration,
    connections: result.connections,
    pipelining: result.pipelining,
    requestsTotal: result.requests.total,
    reqPerSec: result.requests.average,
    reqPerSecStddev: result.requests.stddev,
    latencyMs: {
      mean: result.latency.mean,
      p50: result.latency.p50,
      p90: result.latency.p90,
      p99: result.latency.p99,
      max: result.latency.max,
    },
    bytesPerSec: result.throughput.average,
    ok2xx: result['2xx'],
    non2xx: result.non2xx,
    errors: result.errors,
    timeouts: result.timeouts,
    statusCodeStats: result.statusCodeStats,
  };
}

const jobs = {
  async check({ url, headers, expectSha256, expectContentType, distinctSince, sinceBase, sinceBlock }) {
    assertLoopback(url);
    if (distinctSince) url = `${url}&since=${sinceSequence({ sinceBase, sinceBlock }).next()}`;
    const agent = new http.Agent({ keepAlive: false });
    const res = await get(agent, url, headers);
    const sha256 = createHash('sha256').update(res.body).digest('hex');
    const problems = [];
    if (res.status !== 200) problems.push(`HTTP ${res.status}: ${res.body.toString('utf8').slice(0, 200)}`);
    if (expectContentType && res.headers['content-type'] !== expectContentType) problems.push(`content-type ${res.headers['content-type']} != ${expectContentType}`);
    if (expectSha256 && sha256 !== expectSha256) problems.push('body differs from the captured bytes');
    return { status: res.status, bytes: res.body.length, sha256, problems };
  },

  async autocannon({ url, headers, connections, warmupS, durationS, overallRate, distinctSince, sinceBase, sinceBlock }) {
    assertLoopback(url);
    // 30 s: the app's own requestTimeout; a slower response counts as an error (and fails the run).
    const options = { url, headers, connections, pipelining: 1, timeout: 30, ...(overallRate ? { overallRate } : {}) };
    if (distinctSince) {
      // Every request its own `since` (all older than any pick, so the page is the same): no
      // two requests of the run share a cache key, each one goes to the database.
      const { pathname, search } = new URL(url);
      const since = sinceSequence({ sinceBase, sinceBlock });
      options.requests = [{ setupRequest: (req) => ({ ...req, path: `${pathname}${search}&since=${since.next()}` }) }];
    }
    const warm = warmupS > 0 ? summariseAutocannon(await autocannon({ ...options, duration: warmupS })) : null;
    // The orchestrator marks the server's CPU counters here, between warm-up and measurement.
    await new Promise((resolve) => {
      process.once('message', resolve);
      process.send({ type: 'phase', phase: 'measure' });
    });
    const measured = await autocannon({ ...options, duration: durationS });
    return { warmup: warm, measured: summariseAutocannon(measured) };
  },

  /**
   * Open loop at a fixed rate, evenly spaced (autocannon's rate limit releases each second's
   * budget in a burst): every 1000/rate ms a request goes out on a keep-alive pool, whether or
   * not earlier ones have answered. Exact per-request times, from the scheduled send time.
   */
  async paced({ url, headers, rate, warmupS, durationS, maxSockets }) {
    assertLoopback(url);
    const agent = new http.Agent({ keepAlive: true, maxSockets: maxSockets ?? 32 });
    const run = async (seconds, record) => {
      const samples = [];
      let failures = 0;
      const inflight = new Set();
      const interval = 1000 / rate;
      const start = performance.now();
      const total = Math.round(seconds * rate);
      for (let i = 0; i < total; i += 1) {
        const due = start + i * interval;
        const wait = due - performance.now();
        if (wait > 0) await new Promise((resolve) => setTimeout(resolve, wait));
        const request = get(agent, url, headers).then(
          (res) => {
            if (res.status !== 200) failures += 1;
            samples.push(performance.now() - due);
          },
          () => {
            failures += 1;
          },
        );
        inflight.add(request);
        request.finally(() => inflight.delete(request));
      }
      await Promise.all(inflight);
      const elapsed = (performance.now() - start) / 1000;
      if (!record) return null;
      samples.sort((a, b) => a - b);
      const mean = samples.reduce((a, b) => a + b, 0) / samples.length;
      return {
        requestsTotal: samples.length,
        reqPerSec: samples.length / elapsed,
        failures,
        latencyMs: { mean: r3(mean), p50: r3(percentile(samples, 50)), p90: r3(percentile(samples, 90)), p99: r3(percentile(samples, 99)), max: r3(samples.at(-1)) },
      };
    };
    if (warmupS > 0) await run(warmupS, false);
    await new Promise((resolve) => {
      process.once('message', resolve);
      process.send({ type: 'phase', phase: 'measure' });
    });
    const measured = await run(durationS, true);
    agent.destroy();
    return { measured };
  },

  /**
   * One client in a closed loop (the next request when the last has answered, one keep-alive
   * connection) for a warm-up, then for durationS measured: exact per-request times. The
   * paying customer of the ledger flood, in its own process so the flood's load generator
   * does not delay its timings.
   */
  async loop({ url, headers, warmupS, durationS }) {
    assertLoopback(url);
    const agent = new http.Agent({ keepAlive: true, maxSockets: 1 });
    const run = async (seconds) => {
      const samples = [];
      let failures = 0;
      const end = performance.now() + seconds * 1000;
      while (performance.now() < end) {
        const t0 = performance.now();
        const res = await get(agent, url, headers).catch(() => null);
        samples.push(performance.now() - t0);
        if (res?.status !== 200) failures += 1;
      }
      return { samples, failures };
    };
    if (warmupS > 0) await run(warmupS);
    await new Promise((resolve) => {
      process.once('message', resolve);
      process.send({ type: 'phase', phase: 'measure' });
    });
    const { samples, failures } = await run(durationS);
    agent.destroy();
    samples.sort((a, b) => a - b);
    const mean = samples.reduce((a, b) => a + b, 0) / samples.length;
    return {
      measured: {
        requestsTotal: samples.length,
        failures,
        latencyMs: { mean: r3(mean), p50: r3(percentile(samples, 50)), p95: r3(percentile(samples, 95)), p99: r3(percentile(samples, 99)), max: r3(samples.at(-1)) },
      },
    };
  },

  /**
   * One request at a time, round-robin over the targets (one keep-alive connection each), so
   * background load drifting during the run affects every target alike.
   */
  async sequential({ targets, warmup, n, maxSeconds }) {
    for (const target of targets) assertLoopback(target.url);
    const agents = targets.map(() => new http.Agent({ keepAlive: true, maxSockets: 1 }));
    const samples = targets.map(() => []);
    const failures = targets.map(() => 0);
    const deadline = performance.now() + maxSeconds * 1000;
    for (let i = 0; i < warmup + n && performance.now() < deadline; i += 1) {
      for (let t = 0; t < targets.length; t += 1) {
        const t0 = performance.now();
        const res = await get(agents[t], targets[t].url, targets[t].headers);
        const ms = performance.now() - t0;
        if (res.status !== 200) failures[t] += 1;
        if (i >= warmup) samples[t].push(ms);
      }
    }
    for (const agent of agents) agent.destroy();
    return Object.fromEntries(
      targets.map((target, t) => {
        const sorted = samples[t].sort((a, b) => a - b);
        const mean = sorted.reduce((a, b) => a + b, 0) / sorted.length;
        return [
          target.name,
          {
            n: sorted.length,
            failures: failures[t],
            latencyMs: { mean: r3(mean), p50: r3(percentile(sorted, 50)), p90: r3(percentile(sorted, 90)), p99: r3(percentile(sorted, 99)), max: r3(sorted.at(-1)) },
          },
        ];
      }),
    );
  },
};

process.once('message', async ({ job, args }) => {
  // (further messages are acknowledgements of 'phase' notices)
  try {
    const result = await jobs[job](args);
    process.send({ ok: true, result }, () => process.exit(0));
  } catch (error) {
    process.send({ ok: false, error: String(error?.stack ?? error) }, () => process.exit(1));
  }
});
