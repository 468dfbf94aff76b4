/**
 * Traces (docs/OPERATIONS.md, "Traces"), on the built server as `npm start` runs it: the real
 * process with the standard OpenTelemetry environment, exporting over OTLP/HTTP (JSON) to a
 * receiver on 127.0.0.1 that decodes every span (test/helpers/otlp-receiver.ts). Embedded mode
 * (PGlite, the demo seed and its simulated feed): no PostgreSQL needed; Redis too when a
 * redis-server binary is there (a private one, on loopback).
 *
 * - a REST request sent with a `traceparent` continues that trace: the HTTP server span (its
 *   parent the caller's span), the GraphQL operation the adapter executes, and its SQL (values
 *   left out of the text), and Redis commands;
 * - a log line written while the request's span is active carries its trace_id and span_id;
 * - a webhook attempt sends a `traceparent` naming its undici request span, which the receiver
 *   got, under a `webhook.deliver` span: in the request's trace for a test delivery, a trace of
 *   its own for a dispatched one;
 * - an engine poll is a trace of its own (`engine.poll`), its SQL under it;
 * - SIGTERM exports the spans still buffered before the process exits;
 * - with no OTLP endpoint, the process loads nothing of the SDK (a module probe preloaded into
 *   the server records every module it resolves; the traced start is its positive control).
 */
import { randomBytes } from 'node:crypto';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { tracingRequested } from '../../src/server/tracing-switch.js';
import { PUBLISH, pickInput } from '../helpers/fixtures.js';
import { startHttpReceiver, type HttpReceiver } from '../helpers/http-receiver.js';
import { SPAN_KIND, startOtlpReceiver, type OtlpReceiver, type ReceivedSpan } from '../helpers/otlp-receiver.js';
import { ensureBuilt, findRedisServer, freePorts, PrivateRedis, REPO_ROOT, startServer, waitUntil, type ServerProcess } from '../helpers/processes.js';

const START_MS = 180_000;
const SPANS_MS = 20_000;
const MODULE_PROBE = path.join(REPO_ROOT, 'test/helpers/module-probe.mjs');
/** Packages of the SDK side: none may load when tracing is off (@opentelemetry/api may, it is a no-op). */
const SDK_MODULE = /\/node_modules\/(?:@opentelemetry\/(?!api\/)|@fastify\/otel\/|@envelop\/opentelemetry\/|import-in-the-middle\/|require-in-the-middle\/)/;

const redisBinary = (() => {
  try {
    return findRedisServer();
  } catch {
    return null;
  }
})();

/** A W3C trace context of our own: random ids, sampled. */
function callerContext(): { traceId: string; spanId: string; traceparent: string } {
  const traceId = randomBytes(16).toString('hex');
  const spanId = randomBytes(8).toString('hex');
  return { traceId, spanId, traceparent: `00-${traceId}-${spanId}-01` };
}

const TRACEPARENT = /^00-([0-9a-f]{32})-([0-9a-f]{16})-0[01]$/;

/** The span's parent chain within its trace, nearest first. */
function ancestorsOf(span: ReceivedSpan, spans: readonly ReceivedSpan[]): ReceivedSpan[] {
  const byId = new Map(spans.map((candidate) => [candidate.spanId, candidate]));
  const chain: ReceivedSpan[] = [];
  for (let parent = span.parentSpanId && byId.get(span.parentSpanId); parent; parent = parent.parentSpanId && byId.get(parent.parentSpanId)) {
    chain.push(parent);
  }
  return chain;
}

const isSql = (span: ReceivedSpan) => span.attributes['db.system.name'] === 'postgresql';
const isGraphQLOperation = (span: ReceivedSpan) => typeof span.attributes['graphql.execute.operationName'] === 'string';

function demoKeys(dataDir: string): Record<string, string> {
  return JSON.parse(readFileSync(path.join(dataDir, 'demo-keys.json'), 'utf8')) as Record<string, string>;
}

function logRecords(server: ServerProcess): Record<string, unknown>[] {
  return server.lines.filter((line) => line.startsWith('{')).map((line) => JSON.parse(line) as Record<string, unknown>);
}

/** Stops the server with SIGTERM and answers the modules its probe saw it resolve. */
async function stopAndReadProbe(server: ServerProcess, probeFile: string): Promise<string[]> {
  const status = await server.stop('SIGTERM', 30_000);
  expect(status.code, server.output()).toBe(0);
  return JSON.parse(readFileSync(probeFile, 'utf8')) as string[];
}

describe('which environment turns tracing on', () => {
  it('an OTLP endpoint (general or traces-only) does; OTEL_SDK_DISABLED=true and OTEL_TRACES_EXPORTER=none keep it off', () => {
    expect(tracingRequested({})).toBe(false);
    expect(tracingRequested({ OTEL_SERVICE_NAME: 'picks', OTEL_TRACES_SAMPLER: 'always_on' })).toBe(false);
    expect(tracingRequested({ OTEL_EXPORTER_OTLP_ENDPOINT: '  ' })).toBe(false);
    expect(tracingRequested({ OTEL_EXPORTER_OTLP_ENDPOINT: 'http://127.0.0.1:4318' })).toBe(true);
    expect(tracingRequested({ OTEL_EXPORTER_OTLP_TRACES_ENDPOINT: 'http://127.0.0.1:4318/v1/traces' })).toBe(true);
    expect(tracingRequested({ OTEL_EXPORTER_OTLP_ENDPOINT: 'http://127.0.0.1:4318', OTEL_SDK_DISABLED: 'true' })).toBe(false);
    expect(tracingRequested({ OTEL_EXPORTER_OTLP_ENDPOINT: 'http://127.0.0.1:4318', OTEL_TRACES_EXPORTER: 'none' })).toBe(false);
  });
});

describe('the built server with an OTLP endpoint', () => {
  const dataDir = mkdtempSync(path.join(tmpdir(), 'picks-tracing-'));
  const probeFile = path.join(dataDir, '..', `${path.basename(dataDir)}-modules.json`);
  let otlp: OtlpReceiver;
  let hooks: HttpReceiver;
  let redis: PrivateRedis | null = null;
  let server: ServerProcess;
  let enterpriseKey: string;
  const caller = callerContext();
  let picksStatus = 0;

  beforeAll(async () => {
    await ensureBuilt();
    otlp = await startOtlpReceiver();
    hooks = await startHttpReceiver();
    const [port, redisPort] = await freePorts(2);
    if (redisBinary) {
      redis = new PrivateRedis(redisPort!, redisBinary);
      await redis.start();
    }
    server = await startServer('traced', port!, {
      DATA_DIR: dataDir,
      DEMO_SEED: 'true',
      // Request lines are at debug in embedded mode.
      LOG_LEVEL: 'debug',
      OTEL_EXPORTER_OTLP_ENDPOINT: otlp.endpoint,
      OTEL_EXPORTER_OTLP_PROTOCOL: 'http/json',
      OTEL_BSP_SCHEDULE_DELAY: '100',
      OTEL_TRACES_SAMPLER: 'always_on',
      NODE_OPTIONS: `--import=${MODULE_PROBE}`,
      MODULE_PROBE_FILE: probeFile,
      ...(redis ? { REDIS_URL: redis.url } : {}),
    });
    enterpriseKey = demoKeys(dataDir).enterprise!;
    const answer = await fetch(`${server.url}/api/v1/picks`, { headers: { authorization: `Bearer ${enterpriseKey}`, traceparent: caller.traceparent } });
    picksStatus = answer.status;
    await answer.arrayBuffer();
  }, START_MS);

  afterAll(async () => {
    await server?.stop('SIGKILL');
    await redis?.stop();
    await otlp?.close();
    await hooks?.close();
    rmSync(dataDir, { recursive: true, force: true });
    rmSync(probeFile, { force: true });
  });

  it('GET /api/v1/picks with a traceparent: one trace with the HTTP span (child of the caller), the GraphQL operation and its SQL', async () => {
    expect(picksStatus).toBe(200);
    const trace = await waitUntil(
      'the request trace with HTTP, GraphQL and SQL spans',
      () => {
        const spans = otlp.spansOf(caller.traceId);
        const http = spans.find((span) => span.kind === SPAN_KIND.SERVER && span.attributes['http.route'] === '/api/v1/picks');
        const operation = spans.find(isGraphQLOperation);
        const sqlUnderOperation = operation && spans.find((span) => isSql(span) && ancestorsOf(span, spans).includes(operation));
        return http && operation && sqlUnderOperation ? { spans, http, operation } : null;
      },
      SPANS_MS,
    );
    // The caller's span is the HTTP span's parent: the trace was continued, not restarted.
    expect(trace.http.parentSpanId).toBe(caller.spanId);
    expect(trace.http.name).toBe('GET /api/v1/picks');
    expect(trace.http.attributes['http.response.status_code']).toBe(200);
    expect(trace.http.resource['service.name']).toBe('picks-service');
    // The adapter's inner execution is a child of the request.
    expect(ancestorsOf(trace.operation, trace.spans)).toContain(trace.http);
    expect(trace.operation.kind).toBe(SPAN_KIND.INTERNAL);
    // Every span of the request descends from the HTTP span.
    for (const span of trace.spans) if (span !== trace.http) expect(ancestorsOf(span, trace.spans), span.name).toContain(trace.http);
    const sql = trace.spans.filter(isSql);
    for (const span of sql) {
      expect(span.kind).toBe(SPAN_KIND.CLIENT);
      expect(span.attributes['db.query.text']).toEqual(expect.any(String));
    }
    // The key's lookup is there, without the key's hash MikroORM wrote into the statement.
    const keyLookup = sql.find((span) => span.attributes['db.collection.name'] === 'api_keys');
    expect(keyLookup?.attributes['db.query.text']).toMatch(/key_hash" = \?/);
    for (const span of sql) expect(String(span.attributes['db.query.text'])).not.toMatch(/'[^']*'|[0-9a-f]{32}/);
  });

  it.skipIf(!redisBinary)("the rate limiter's Redis commands are spans of the request's trace", async () => {
    const spans = await waitUntil('Redis spans in the request trace', () => {
      const found = otlp.spansOf(caller.traceId).filter((span) => span.attributes['db.system.name'] === 'redis');
      return found.length > 0 ? found : null;
    }, SPANS_MS);
    for (const span of spans) expect(span.kind).toBe(SPAN_KIND.CLIENT);
  });

  it("a log line written while the request's span is active carries its trace_id and span_id", async () => {
    const http = await waitUntil('the HTTP span', () => otlp.spansOf(caller.traceId).find((span) => span.kind === SPAN_KIND.SERVER), SPANS_MS);
    const completed = logRecords(server).find((record) => record.msg === 'request completed' && record.trace_id === caller.traceId);
    expect(completed, server.output()).toMatchObject({ trace_id: caller.traceId, span_id: http.spanId, trace_flags: '01' });
    // Outside any span nothing is added: the start's lines have no trace_id.
    expect(logRecords(server).find((record) => record.msg === 'value engine: polling the odds feed')).not.toHaveProperty('trace_id');
  });

  it("a webhook attempt sends a traceparent naming its request span, under webhook.deliver: in the request's trace for a test delivery, in its own for a dispatched one", async () => {
    const created = await fetch(`${server.url}/api/v1/webhooks`, {
      method: 'POST',
      headers: { authorization: `Bearer ${enterpriseKey}`, 'content-type': 'application/json' },
      body: JSON.stringify({ url: hooks.url('/hooks'), events: ['pick.published'] }),
    });
    const subscription = (await created.json()) as { subscription_id: string };
    expect(created.status, JSON.stringify(subscription)).toBe(201);

    const testCaller = callerContext();
    const tested = await fetch(`${server.url}/api/v1/webhooks/${subscription.subscription_id}/test`, {
      method: 'POST',
      headers: { authorization: `Bearer ${enterpriseKey}`, traceparent: testCaller.traceparent },
    });
    const result = (await tested.json()) as { delivery_id: string; succeeded: boolean };
    expect(result.succeeded, JSON.stringify(result)).toBe(true);
    const testDelivery = hooks.received.find((request) => request.headers['x-service-delivery'] === result.delivery_id);
    const [, traceId, requestSpanId] = TRACEPARENT.exec(String(testDelivery?.headers.traceparent)) ?? [];
    expect(traceId, JSON.stringify(testDelivery?.headers)).toBe(testCaller.traceId);
    const spans = await waitUntil('the test delivery spans', () => {
      const found = otlp.spansOf(testCaller.traceId);
      return found.some((span) => span.spanId === requestSpanId) ? found : null;
    }, SPANS_MS);
    const request = spans.find((span) => span.spanId === requestSpanId)!;
    expect(request).toMatchObject({ kind: SPAN_KIND.CLIENT, attributes: expect.objectContaining({ 'http.request.method': 'POST', 'http.response.status_code': 204 }) });
    const [deliver] = ancestorsOf(request, spans);
    expect(deliver).toMatchObject({ name: 'webhook.deliver', attributes: expect.objectContaining({ 'webhook.delivery_id': result.delivery_id, 'webhook.event_type': 'pick.published', 'webhook.test': true }) });
    expect(ancestorsOf(deliver!, spans).map((span) => span.name)).toContain(`POST /api/v1/webhooks/:id/test`);

    // A dispatched delivery: a pick published by the operator is delivered by the dispatcher,
    // outside any request.
    const published = await fetch(`${server.url}/graphql`, {
      method: 'POST',
      headers: { authorization: `Bearer ${readFileSync(path.join(dataDir, 'admin-token'), 'utf8').trim()}`, 'content-type': 'application/json' },
      body: JSON.stringify({ query: PUBLISH, variables: { input: pickInput({ homeTeam: 'Traced Rovers', selection: 'Traced Rovers', kickoffAt: new Date(Date.now() + 7 * 86_400_000).toISOString() }) } }),
    });
    const pickId = ((await published.json()) as { data?: { publishPick?: { id: string } } }).data?.publishPick?.id;
    expect(pickId).toEqual(expect.any(String));
    const dispatched = await waitUntil('the dispatched delivery', () => hooks.received.find((received) => received.headers['x-service-test'] === undefined && received.body.includes(pickId!)), 30_000);
    const [, dispatchedTrace, dispatchedSpanId] = TRACEPARENT.exec(String(dispatched.headers.traceparent)) ?? [];
    expect(dispatchedTrace, JSON.stringify(dispatched.headers)).toBeDefined();
    const dispatchedSpans = await waitUntil('the dispatched delivery spans', () => {
      const found = otlp.spansOf(dispatchedTrace!);
      return found.some((span) => span.spanId === dispatchedSpanId) && found.some((span) => span.name === 'webhook.deliver') ? found : null;
    }, SPANS_MS);
    const root = dispatchedSpans.find((span) => span.name === 'webhook.deliver')!;
    expect(root.parentSpanId).toBeUndefined();
    expect(root.attributes['webhook.delivery_id']).toBe(dispatched.headers['x-service-delivery']);
    expect(ancestorsOf(dispatchedSpans.find((span) => span.spanId === dispatchedSpanId)!, dispatchedSpans)).toEqual([root]);
  }, 60_000);

  it('an engine poll is a trace of its own: the engine.poll root span, the detection and its SQL under it', async () => {
    const poll = await waitUntil('an engine poll trace with SQL', () => {
      for (const root of otlp.spans.filter((span) => span.name === 'engine.poll')) {
        const spans = otlp.spansOf(root.traceId);
        const sql = spans.filter((span) => isSql(span) && ancestorsOf(span, spans).includes(root));
        if (sql.length > 0) return { root, spans, sql };
      }
      return null;
    }, 60_000);
    expect(poll.root.parentSpanId).toBeUndefined();
    expect(poll.root.attributes['engine.sport_key']).toEqual(expect.any(String));
    expect(poll.spans.some((span) => span.name === 'engine.ingest' && span.parentSpanId === poll.root.spanId)).toBe(true);
    // Nothing of a request found its way into the poll's trace.
    expect(poll.spans.some((span) => span.kind === SPAN_KIND.SERVER)).toBe(false);
  }, 90_000);

  it('the collector was sent nothing it could not decode, and the start loaded the SDK (the probe sees it)', async () => {
    expect(otlp.refused).toEqual([]);
    const modules = await stopAndReadProbe(server, probeFile);
    expect(modules.filter((url) => SDK_MODULE.test(url)).length).toBeGreaterThan(0);
    expect(modules.some((url) => url.includes('/node_modules/@opentelemetry/sdk-node/'))).toBe(true);
  });
});

describe('the built server on SIGTERM', () => {
  it('exports the spans still buffered before it exits', async () => {
    const dataDir = mkdtempSync(path.join(tmpdir(), 'picks-tracing-flush-'));
    const otlp = await startOtlpReceiver();
    const [port] = await freePorts(1);
    let server: ServerProcess | undefined;
    try {
      await ensureBuilt();
      server = await startServer('traced-flush', port!, {
        DATA_DIR: dataDir,
        DEMO_SEED: 'true',
        DEMO_FEED: 'false',
        OTEL_EXPORTER_OTLP_ENDPOINT: otlp.endpoint,
        OTEL_EXPORTER_OTLP_PROTOCOL: 'http/json',
        // Nothing leaves on a timer or a full batch: only the shutdown's flush exports.
        OTEL_BSP_SCHEDULE_DELAY: '600000',
        OTEL_BSP_MAX_QUEUE_SIZE: '100000',
        OTEL_BSP_MAX_EXPORT_BATCH_SIZE: '100000',
      });
      const caller = callerContext();
      const answer = await fetch(`${server.url}/api/v1/picks`, { headers: { authorization: `Bearer ${demoKeys(dataDir).enterprise}`, traceparent: caller.traceparent } });
      expect(answer.status).toBe(200);
      await answer.arrayBuffer();
      expect(otlp.spansOf(caller.traceId)).toEqual([]);
      const status = await server.stop('SIGTERM', 30_000);
      expect(status.code, server.output()).toBe(0);
      expect(otlp.spansOf(caller.traceId).map((span) => span.kind)).toContain(SPAN_KIND.SERVER);
    } finally {
      await server?.stop('SIGKILL');
      await otlp.close();
      rmSync(dataDir, { recursive: true, force: true });
    }
  }, START_MS);
});

describe('the built server with no OTLP endpoint', () => {
  it('loads nothing of the SDK, and its log lines carry no trace_id', async () => {
    const dataDir = mkdtempSync(path.join(tmpdir(), 'picks-untraced-'));
    const probeFile = path.join(dataDir, '..', `${path.basename(dataDir)}-modules.json`);
    const [port] = await freePorts(1);
    let server: ServerProcess | undefined;
    try {
      await ensureBuilt();
      server = await startServer('untraced', port!, {
        DATA_DIR: dataDir,
        DEMO_SEED: 'true',
        DEMO_FEED: 'false',
        LOG_LEVEL: 'debug',
        // Standard variables that do not name an endpoint leave tracing off.
        OTEL_SERVICE_NAME: 'picks-untraced',
        OTEL_TRACES_SAMPLER: 'always_on',
        NODE_OPTIONS: `--import=${MODULE_PROBE}`,
        MODULE_PROBE_FILE: probeFile,
      });
      const answer = await fetch(`${server.url}/api/v1/picks`, { headers: { authorization: `Bearer ${demoKeys(dataDir).enterprise}`, traceparent: callerContext().traceparent } });
      expect(answer.status).toBe(200);
      await answer.arrayBuffer();
      await waitUntil('the request line', () => logRecords(server!).some((record) => record.msg === 'request completed'));
      expect(logRecords(server).filter((record) => 'trace_id' in record)).toEqual([]);
      const modules = await stopAndReadProbe(server, probeFile);
      // The probe saw the service's own modules load (it works), and no module of the SDK side.
      expect(modules.some((url) => url.endsWith('/dist/src/serve.js'))).toBe(true);
      expect(modules.filter((url) => SDK_MODULE.test(url))).toEqual([]);
    } finally {
      await server?.stop('SIGKILL');
      rmSync(dataDir, { recursive: true, force: true });
      rmSync(probeFile, { force: true });
    }
  }, START_MS);
});
