/**
 * The load process of `npm run bench:scale-out` (forked by bench/scale-out.mjs; 127.0.0.1 only).
 *
 * IPC commands:
 *   http { ports, path, key, connections, rate, durationS }  autocannon against every instance
 *        at once, `connections` and `rate` requests a second each; per port: 2xx responses, other responses, errors, req/s
 *   openStreams { ports, keys, perInstance }  opens `perInstance` GET /api/v1/picks/stream
 *        per instance (10 per key, the adapter's maximum), resolves when all answered 200
 *   frames  pick frames received so far, per port: total, and the fewest and most of one stream
 *        (an `event: pick.published` line each)
 *   closeStreams
 */
import http from 'node:http';
import autocannon from 'autocannon';
import { HOST, serveCommands } from './common.mjs';

const STREAMS_PER_KEY = 10;
const EVENT_LINE = 'event: pick.published\n';
const streams = [];
/** Per port: each stream's count of pick frames. */
const frames = new Map();

function openStream(port, key) {
  const counts = frames.get(port);
  const index = counts.push(0) - 1;
  return new Promise((resolve, reject) => {
    const req = http.get({ host: HOST, port, path: '/api/v1/picks/stream', headers: { authorization: `Bearer ${key}`, accept: 'text/event-stream' }, agent: false }, (res) => {
      if (res.statusCode !== 200) {
        res.resume();
        reject(new Error(`stream on port ${port}: HTTP ${res.statusCode}`));
        return;
      }
      res.setEncoding('utf8');
      // A frame's lines can be split across reads: count whole lines from a carried tail.
      let tail = '';
      res.on('data', (chunk) => {
        const text = tail + chunk;
        let at = text.indexOf(EVENT_LINE);
        let counted = 0;
        let end = 0;
        while (at !== -1) {
          counted += 1;
          end = at + EVENT_LINE.length;
          at = text.indexOf(EVENT_LINE, end);
        }
        tail = text.slice(Math.max(end, text.length - EVENT_LINE.length));
        counts[index] += counted;
      });
      res.on('error', () => undefined);
      streams.push(req);
      resolve();
    });
    req.on('error', reject);
  });
}

serveCommands({
  async http({ ports, path, key, connections, rate, durationS }) {
    const runs = await Promise.all(
      ports.map((port) => autocannon({ url: `http://${HOST}:${port}${path}`, headers: { authorization: `Bearer ${key}` }, connections, overallRate: rate, pipelining: 1, timeout: 30, duration: durationS })),
    );
    return runs.map((run, i) => ({ port: ports[i], ok: run['2xx'], other: run.non2xx, errors: run.errors + run.timeouts, reqPerSec: run.requests.average, p99Ms: run.latency.p99 }));
  },
  async openStreams({ ports, keys, perInstance }) {
    let keyIndex = 0;
    for (const port of ports) {
      frames.set(port, []);
      for (let opened = 0; opened < perInstance; opened += 100) {
        const batch = [];
        for (let i = opened; i < Math.min(perInstance, opened + 100); i += 1) {
          batch.push(openStream(port, keys[Math.floor(keyIndex / STREAMS_PER_KEY)]));
          keyIndex += 1;
        }
        await Promise.all(batch);
      }
    }
    return streams.length;
  },
  async frames() {
    const summary = {};
    for (const [port, counts] of frames) summary[port] = { total: counts.reduce((sum, n) => sum + n, 0), min: Math.min(...counts), max: Math.max(...counts) };
    return summary;
  },
  async closeStreams() {
    for (const req of streams.splice(0)) req.destroy();
    frames.clear();
    return true;
  },
});
process.send({ type: 'ready' });
