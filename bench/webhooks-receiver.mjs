/**
 * The webhook benchmark receiver (forked by bench/webhooks-run.mjs; control over IPC only).
 *
 * The shared receiver (lib/webhook-receiver.mjs: node:https on 127.0.0.1 and a free port with
 * the test certificate, whose CA the server child trusts through NODE_EXTRA_CA_CERTS). It answers every request 200 with an empty
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
import { monitorEventLoopDelay } from 'node:perf_hooks';
import { serveCommands, windowMeter } from './common.mjs';
import { startWebhookReceiver } from './lib/webhook-receiver.mjs';

if (!process.send) {
  process.stderr.write('bench/webhooks-receiver.mjs is started by bench/webhooks-run.mjs (npm run bench:webhooks), not directly.\n');
  process.exit(2);
}

let arrivedAt = [];
let deliveryIds = [];
let eventIds = [];
let pickIds = [];
let paths = [];
let bad = 0;
let badSamples = [];

const receiver = await startWebhookReceiver({
  onDelivery({ req, raw, at }) {
    let eventId = null;
    let pickId = null;
    try {
      const body = JSON.parse(raw.toString('utf8'));
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
    arrivedAt.push(at);
    deliveryIds.push(typeof delivery === 'string' ? delivery : '');
    eventIds.push(eventId ?? '');
    pickIds.push(pickId ?? '');
    paths.push(req.url ?? '');
    return { status: 200 };
  },
});
const { counters } = receiver;

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
    return { count: arrivedAt.length, tlsConnections: counters.tlsConnections, tlsErrors: counters.tlsErrors };
  },
  async arrivals() {
    return { arrivedAt: Float64Array.from(arrivedAt), deliveryIds, eventIds, pickIds, paths, bad, badSamples, tlsConnections: counters.tlsConnections, tlsErrors: counters.tlsErrors };
  },
  async mark() {
    return meter.mark();
  },
  async since({ mark }) {
    return meter.since(mark);
  },
  async stop() {
    setImmediate(() => {
      void receiver.close().then(() => process.exit(0));
      setTimeout(() => process.exit(0), 2_000).unref();
    });
    return true;
  },
});

process.send({ type: 'ready', port: receiver.port });
