/**
 * The webhook benchmark receiver (forked by bench/webhooks-run.mjs; control over IPC only).
 *
 * A node:https server on 127.0.0.1 and a free port, presenting the test certificate
 * (test/fixtures/tls: SANs hooks.test, *.hooks.test, localhost, 127.0.0.1; the server child
 * trusts its CA through NODE_EXTRA_CA_CERTS). It answers every request 200 with an empty
 * body as soon as the (small) body has been read, and records per request:
 *   - arrival: wall clock (performance.timeOrigin + performance.now()) when the request
 *     handler runs, i.e. when the request head has been parsed;
 *   - X-Service-Delivery (the delivery id, equal on every attempt of a delivery);
 *   - the event id (body.id) and the pick id (body.data.id);
 *   - the path (/k<i>/s<j>: which subscription).
 *
 * IPC commands: reset, progress (request count), arrivals (everything recorded since the
 * last reset, column-wise), mark / since (CPU and loop delay over a window), stop.
 */
import { readFileSync } from 'node:fs';
import { createServer } from 'node:https';
import path from 'node:path';
import { monitorEventLoopDelay } from 'node:perf_hooks';
import { fileURLToPath } from 'node:url';
import { serveCommands, wallNow, windowMeter } from './common.mjs';

if (!process.send) {
  process.stderr.write('bench/webhooks-receiver.mjs is started by bench/webhooks-run.mjs (npm run bench:webhooks), not directly.\n');
  process.exit(2);
}

const TLS_DIR = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..', 'test', 'fixtures', 'tls');

let arrivedAt = [];
let deliveryIds = [];
let eventIds = [];
let pickIds = [];
let paths = [];
let bad = 0;
let badSamples = [];
let tlsConnections = 0;
let tlsErrors = 0;

const server = createServer({ cert: readFileSync(path.join(TLS_DIR, 'server.pem')), key: readFileSync(path.join(TLS_DIR, 'server-key.pem')) }, (req, res) => {
  const t = wallNow();
  const chunks = [];
  req.on('data', (chunk) => chunks.push(chunk));
  req.on('end', () => {
    let eventId = null;
    let pickId = null;
    try {
      const body = JSON.parse(Buffer.concat(chunks).toString('utf8'));
      eventId = body.id ?? null;
      pickId = body.data?.id ?? null;
    } catch {
      // counted below
    }
    const delivery = req.headers['x-service-delivery'];
    if (req.method !== 'POST' || typeof delivery !== 'string' || !eventId || !pickId) {
      bad += 1;
      if (badSamples.length < 5) badSamples.push({ method: req.method, url: req.url, delivery: delivery ?? null, eventId, pickId });
    }
    arrivedAt.push(t);
    deliveryIds.push(typeof delivery === 'string' ? delivery : '');
    eventIds.push(eventId ?? '');
    pickIds.push(pickId ?? '');
    paths.push(req.url ?? '');
    res.on('error', () => {});
    res.writeHead(200, { 'content-length': '0' });
    res.end();
  });
});
// Keep-alive connections stay open between the rates of a run.
server.keepAliveTimeout = 60_000;
server.headersTimeout = 65_000;
server.on('secureConnection', () => {
  tlsConnections += 1;
});
server.on('tlsClientError', () => {
  tlsErrors += 1;
});

await new Promise((resolve, reject) => {
  server.once('error', reject);
  server.listen({ port: 0, host: '127.0.0.1', backlog: 1024 }, resolve);
});

const loopDelay = monitorEventLoopDelay({ resolution: 1 });
loopDelay.enable();
const meter = windowMeter(loopDelay);

serveCommands({
  async reset() {
    arrivedAt = [];
    deliveryIds = [];
    eventIds = [];
    pickIds = [];
    paths = [];
    bad = 0;
    badSamples = [];
    return true;
  },
  async progress() {
    return { count: arrivedAt.length, tlsConnections, tlsErrors };
  },
  async arrivals() {
    return { arrivedAt: Float64Array.from(arrivedAt), deliveryIds, eventIds, pickIds, paths, bad, badSamples, tlsConnections, tlsErrors };
  },
  async mark() {
    return meter.mark();
  },
  async since({ mark }) {
    return meter.since(mark);
  },
  async stop() {
    setImmediate(() => {
      server.closeAllConnections();
      server.close(() => process.exit(0));
      setTimeout(() => process.exit(0), 2_000).unref();
    });
    return true;
  },
});

process.send({ type: 'ready', port: server.address().port });
