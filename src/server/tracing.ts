/**
 * The OpenTelemetry SDK of the service, started by src/main.ts before the service's modules load
 * and only when src/server/tracing-switch.ts says tracing is on (docs/OPERATIONS.md, "Traces").
 *
 * Traces only: the exporter, its protocol, headers, timeout, the sampler and the resource come
 * from the standard OTEL_* variables, read by the SDK itself. Metrics stay Prometheus' (/metrics)
 * and logs stay JSON on stdout, so the SDK's OTLP metric and log exporters are not started.
 *
 * Spans come from the field's instrumentations: @fastify/otel (the HTTP server span; it honours
 * an incoming `traceparent`), pg and ioredis (SQL on PostgreSQL, Redis commands), undici (the
 * odds feed and webhook deliveries; it sends `traceparent`). The GraphQL plugin
 * (src/graphql/tracing.ts) and the embedded database's SQL spans (src/persistence/sql-tracing.ts)
 * are added by the app when tracingActive() says so.
 */
import { register } from 'node:module';
import { FastifyOtelInstrumentation } from '@fastify/otel';
import { IORedisInstrumentation } from '@opentelemetry/instrumentation-ioredis';
import { PgInstrumentation } from '@opentelemetry/instrumentation-pg';
import { UndiciInstrumentation } from '@opentelemetry/instrumentation-undici';
import { NodeSDK, resources } from '@opentelemetry/sdk-node';
import type { FastifyRequest } from 'fastify';
import { redactUrl } from '../domain/redaction.js';
import { sanitizeSql } from '../persistence/sql-tracing.js';
import { markTracingStarted } from './tracing-switch.js';

/** service.name unless OTEL_SERVICE_NAME or OTEL_RESOURCE_ATTRIBUTES names another. */
export const DEFAULT_SERVICE_NAME = 'picks-service';

/**
 * The packages the service imports from ESM that the instrumentations patch: the loader hook
 * wraps these alone, not every module the service loads. ioredis is only patched through it
 * (without it, no Redis spans); pg is patched through require-in-the-middle as well, listed so
 * it stays patched however MikroORM comes to load it.
 */
const PATCHED_ESM_PACKAGES = ['pg', 'ioredis'];

/** Probes answer every few seconds: a trace each would bury the requests. */
const UNTRACED_PATHS = new Set(['/healthz', '/readyz']);

/** The HTTP server span as the HTTP conventions name it (`GET /api/v1/picks`), with no credential in its URL. */
function describeRequest(span: { updateName(name: string): unknown; setAttribute(key: string, value: string): unknown }, request: FastifyRequest): void {
  const route = request.routeOptions.url;
  span.updateName(route ? `${request.method} ${route}` : request.method);
  const url = redactUrl(request.url);
  const queryStart = url.indexOf('?');
  span.setAttribute('url.path', queryStart === -1 ? url : url.slice(0, queryStart));
  if (queryStart !== -1) span.setAttribute('url.query', url.slice(queryStart + 1));
}

/** The odds feed's paths (The Odds API v4): no secret in them, and worth seeing in a trace. */
const FEED_PATH = /^\/v4\/sports\/[^/?]+\/(?:odds|scores)(?:\?|$)/;

/**
 * An outgoing request's URL without credentials. The odds feed carries its apiKey in the query
 * (redacted); a webhook receiver's URL may carry its own secret in the path (Slack-style hook
 * URLs), so anything but the feed's paths is shown as its origin alone, as the service's logs
 * and its `webhook.deliver` span show a receiver.
 */
function redactedClientUrl(request: { origin: string; path: string }): Record<string, string> {
  if (!FEED_PATH.test(request.path)) return { 'url.full': request.origin, 'url.path': '/', 'url.query': '' };
  const full = redactUrl(new URL(request.path, request.origin).toString());
  const queryStart = full.indexOf('?');
  return { 'url.full': full, 'url.path': new URL(full).pathname, 'url.query': queryStart === -1 ? '' : full.slice(queryStart) };
}

function instrumentations() {
  return [
    new FastifyOtelInstrumentation({
      // Every Fastify instance gets the plugin when it is created, before any route or hook.
      registerOnInitialization: true,
      // The app's hooks are small synchronous callbacks: a span each would cost more than it tells.
      instrumentHooks: false,
      instrumentHandler: false,
      ignorePaths: (route) => UNTRACED_PATHS.has(route.url.split('?')[0] ?? ''),
      requestHook: describeRequest,
    }),
    // SQL and Redis outside any trace (the outbox relay's and the lease's rounds) would each be a
    // one-span trace: only work that belongs to a request, a poll or a delivery is recorded.
    // MikroORM sends statements with their values written in: the span keeps the shape only.
    new PgInstrumentation({ requireParentSpan: true, enhancedDatabaseReporting: false, requestHook: (span, { query }) => span.setAttribute('db.query.text', sanitizeSql(query.text)) }),
    // The command name alone: arguments carry client addresses (the anonymous limit's keys)
    // and stream-token hashes.
    new IORedisInstrumentation({ requireParentSpan: true, dbStatementSerializer: (command) => command }),
    new UndiciInstrumentation({ startSpanHook: redactedClientUrl }),
  ];
}

/**
 * Starts the SDK: the loader hook first (ESM imports of the patched packages are then
 * interceptable), then the instrumentations and the exporter. Call before importing the service.
 */
export function startTracing(): void {
  register('@opentelemetry/instrumentation/hook.mjs', import.meta.url, { data: { include: PATCHED_ESM_PACKAGES } });
  const sdk = new NodeSDK({
    // The env detector (OTEL_SERVICE_NAME, OTEL_RESOURCE_ATTRIBUTES) is merged over this default.
    resource: resources.defaultResource().merge(resources.resourceFromAttributes({ 'service.name': DEFAULT_SERVICE_NAME })),
    instrumentations: instrumentations(),
    metricReaders: [],
    logRecordProcessors: [],
  });
  sdk.start();
  markTracingStarted(() => sdk.shutdown());
}
