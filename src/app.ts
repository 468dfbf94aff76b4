/**
 * The Fastify app factory, used by the entry point and by tests through inject().
 */
import { randomUUID } from 'node:crypto';
import Fastify, { type FastifyInstance, type FastifyServerOptions, type LogController } from 'fastify';
import { ErrorCode } from './domain/errors.js';
import { registerLedgerRoutes } from '../adapters/public/ledger.js';
import { registerPublicRoutes } from '../adapters/public/plugin.js';
import { PUBLIC_STREAM_PATH, registerPublicStream } from '../adapters/public/stream.js';
import { registerRecordPage } from '../adapters/record/plugin.js';
import { admitUnroutedRequest, registerRestRoutes } from '../adapters/rest/plugin.js';
import { registerStreamRoutes, STREAM_PATH, STREAM_RETRY_MS } from '../adapters/stream/plugin.js';
import { registerDashboardRoutes } from '../adapters/dashboard/plugin.js';
import { registerOpenApi } from '../adapters/common/openapi.js';
import { registerAsyncApi } from '../adapters/common/asyncapi.js';
import { DOCS_SCRIPT_PATH, registerApiReference } from '../adapters/docs/plugin.js';
import { answerGraphiQLPage, GRAPHIQL_OPTIONS, registerGraphiQLAssets, renderGraphiQL } from '../adapters/home/graphiql.js';
import { registerHomePage } from '../adapters/home/plugin.js';
import { getSchema } from './graphql/schema.js';
import { createYogaServer, internalContext } from './graphql/yoga.js';
import { graphqlTracingPlugins } from './graphql/tracing.js';
import type { Runtime } from './runtime.js';
import { createFrameworkErrorHandler } from './server/framework-errors.js';
import { handleHttpError, sendError } from './server/http-errors.js';
import { registerGraphQLRoute } from './server/graphql-route.js';
import { GRAPHQL_SSE_PATH, registerGraphQLSseRoute } from './server/graphql-sse-route.js';
import { GRAPHQL_WS_PATH, registerGraphQLWsRoute } from './server/graphql-ws-route.js';
import { registerHealthRoutes } from './server/health.js';
import { registerRequestMetrics } from './server/request-metrics.js';
import { registerRateLimitHeaders } from './server/rate-limit-headers.js';
import { registerStaticAssetEncoding } from './server/static-assets.js';
import { ServiceLogs } from './server/logging.js';
import { tracingActive } from './server/tracing-switch.js';
import {
  BODY_LIMIT_BYTES,
  clientErrorHandler,
  DEFAULT_SERVER_TIMEOUTS,
  nodeHttpOptions,
  registerHttpRefusals,
  socketTimeoutMs,
  type ServerTimeouts,
} from './server/http-limits.js';

export { BODY_LIMIT_BYTES };
export { LOG_REDACT_PATHS } from './server/logging.js';
const INCOMING_REQUEST_ID = /^[A-Za-z0-9._-]{8,128}$/;

export interface AppOptions {
  logger?: FastifyServerOptions['logger'];
  /** An existing pino logger (the entry point shares one with the runtime). */
  loggerInstance?: FastifyServerOptions['loggerInstance'];
  /** How Fastify logs each request (src/serve.ts: at debug in embedded mode); ServiceLogs by default. */
  logController?: LogController;
  /** Server timeouts (tests shorten them); defaults in src/server/http-limits.ts. */
  timeouts?: Partial<ServerTimeouts>;
}


export async function buildApp(runtime: Runtime, options: AppOptions = {}): Promise<FastifyInstance> {
  const timeouts: ServerTimeouts = { ...DEFAULT_SERVER_TIMEOUTS, ...options.timeouts };
  // Paths Fastify's router refuses (bad percent-encoding, ...) leave through the one error exit
  // too (src/server/framework-errors.ts); the /api/v1 checks are bound once the routes exist.
  const frameworkErrors = createFrameworkErrorHandler();
  const app = Fastify({
    ...(options.loggerInstance ? { loggerInstance: options.loggerInstance } : { logger: options.logger ?? false }),
    logController: options.logController ?? new ServiceLogs(),
    bodyLimit: BODY_LIMIT_BYTES,
    // Hostile connections (src/server/http-limits.ts): header size, slowloris, slow bodies, idle sockets.
    http: nodeHttpOptions(timeouts),
    requestTimeout: timeouts.requestTimeoutMs,
    connectionTimeout: socketTimeoutMs(timeouts, runtime.config.streamHeartbeatSeconds),
    keepAliveTimeout: timeouts.keepAliveTimeoutMs,
    clientErrorHandler,
    frameworkErrors: frameworkErrors.handler,
    // X-Forwarded-For / -Proto count only from the proxies named in TRUST_PROXY (none by default).
    trustProxy: runtime.config.trustProxy.length > 0 ? runtime.config.trustProxy : false,
    // A caller-supplied X-Request-Id is kept when sane, so traces join across a load balancer.
    requestIdHeader: false,
    genReqId: (req) => {
      const incoming = req.headers['x-request-id'];
      return typeof incoming === 'string' && INCOMING_REQUEST_ID.test(incoming) ? incoming : randomUUID();
    },
    // Draining (close() on SIGTERM) is ours, see below: requests already received complete
    // instead of being cut (`true` would destroy every socket, busy ones included), and requests
    // arriving meanwhile get our JSON 503 rather than Fastify's own body.
    return503OnClosing: false,
    forceCloseConnections: false,
  });

  // The app-wide hooks are callback style: they run on every request and do no async work, so
  // each would otherwise cost a promise and a microtask turn.
  app.addHook('onRequest', (req, reply, done) => {
    reply.header('x-request-id', req.id);
    done();
  });
  // Requests Node would refuse itself with an empty body (no Host, an unknown Expect).
  registerHttpRefusals(app);

  // Drain: streams are ended by their own preClose hooks; a request that arrives on a kept-alive
  // connection is refused with 503 service_unavailable (a load balancer retries it elsewhere);
  // responses carry `Connection: close`, and sockets are closed as soon as they are idle, so
  // close() ends when the last request in flight has been answered. src/serve.ts bounds it.
  let draining: NodeJS.Timeout | null = null;
  app.addHook('preClose', async () => {
    draining = setInterval(() => app.server.closeIdleConnections(), 50).unref();
  });
  app.addHook('onClose', async () => {
    if (draining) clearInterval(draining);
  });
  app.addHook('onRequest', (_req, reply, done) => {
    if (!draining) return done();
    reply.header('connection', 'close');
    // Answered here: done() is not called, so the route never runs.
    sendError(reply, ErrorCode.serviceUnavailable, 'This instance is shutting down; retry the request.');
  });
  app.addHook('onSend', (_req, reply, payload, done) => {
    if (draining) reply.header('connection', 'close');
    done(null, payload);
  });

  registerRequestMetrics(app, runtime.metrics);

  app.setErrorHandler(handleHttpError);
  app.setNotFoundHandler((req, reply) => sendError(reply, ErrorCode.notFound, `No route for ${req.method} ${req.url.split('?')[0]}.`));

  // GraphiQL needs introspection: served outside production while introspection is on.
  const graphiql = !runtime.config.production && runtime.config.graphqlIntrospection;
  const yoga = createYogaServer({
    services: runtime.services,
    // Its page and assets come from this app, not a CDN (adapters/home/graphiql.ts).
    graphiql: graphiql ? { options: GRAPHIQL_OPTIONS, render: renderGraphiQL, answer: answerGraphiQLPage } : null,
    introspection: runtime.config.graphqlIntrospection,
    corsOrigins: runtime.config.graphqlCorsOrigins,
    logUnexpected: (error) => app.log.error({ err: error }, 'unexpected GraphQL error'),
    // The operation's span (docs/OPERATIONS.md, "Traces"): only when the process traces.
    tracing: tracingActive() ? await graphqlTracingPlugins() : [],
  });
  // Static assets answered compressed, with ETags (src/server/static-assets.ts): every route under
  // an /assets/ path, and Scalar's bundle, whose path is the package's. Before the routes' scopes.
  registerStaticAssetEncoding(app, (url) => url.includes('/assets/') || url === DOCS_SCRIPT_PATH);
  await registerOpenApi(app);
  registerAsyncApi(app, {
    picksStream: STREAM_PATH,
    publicStream: PUBLIC_STREAM_PATH,
    graphqlStream: GRAPHQL_SSE_PATH,
    graphqlWs: GRAPHQL_WS_PATH,
    retryMs: STREAM_RETRY_MS,
    heartbeatSeconds: runtime.config.streamHeartbeatSeconds,
  });
  registerRateLimitHeaders(
    app,
    () => runtime.clock.now().getTime(),
    (admission) => void runtime.services.auth.release(admission).catch((error: unknown) => app.log.warn({ err: error }, 'rate limiter: taking back a request answered 429 or 5xx failed; it stays counted')),
  );
  const graphqlRoute = registerGraphQLRoute(app, yoga);
  const graphqlSse = registerGraphQLSseRoute(app, yoga, {
    now: () => runtime.clock.now().getTime(),
    logUnexpected: (error) => app.log.error({ err: error }, 'unexpected GraphQL error'),
  });
  const graphqlWs = await registerGraphQLWsRoute(app, yoga, runtime.services, {
    heartbeatSeconds: runtime.config.streamHeartbeatSeconds,
    logUnexpected: (error) => app.log.error({ err: error }, 'unexpected GraphQL error'),
  });
  const readCaches = registerRestRoutes(app, yoga, getSchema());
  // Dropped with every visibility change, here or (through the bus) on another instance.
  runtime.onVisibilityChange(() => readCaches.invalidate());
  frameworkErrors.bind({ admitCustomerApi: (req, reply) => admitUnroutedRequest(yoga, req, reply), now: () => runtime.clock.now().getTime() });
  const streams = registerStreamRoutes(app, yoga, getSchema(), {
    heartbeatSeconds: runtime.config.streamHeartbeatSeconds,
    now: () => runtime.clock.now().getTime(),
    internalContext: internalContext(runtime.services),
  });
  // How many SSE picks streams this instance holds (operations, the stream benchmark).
  app.decorate('openStreams', () => streams.openStreams());
  // Hits and stores of the read cache (tests, the benchmark).
  app.decorate('readCacheStats', () => readCaches.stats());
  const publicAdapter = registerPublicRoutes(app, yoga, getSchema(), runtime.clock);
  const ledgerAdapter = registerLedgerRoutes(app, yoga, getSchema(), runtime.clock);
  const recordPage = registerRecordPage(app, yoga, getSchema(), internalContext(runtime.services));
  runtime.onVisibilityChange(() => recordPage.invalidate());
  const publicStream = registerPublicStream(app, yoga, getSchema(), {
    ...runtime.config.publicStream,
    heartbeatSeconds: runtime.config.streamHeartbeatSeconds,
    clock: runtime.clock,
    internalContext: internalContext(runtime.services),
  });
  // How many public live feeds this instance holds (operations, tests).
  app.decorate('openPublicStreams', () => publicStream.openStreams());
  runtime.onVisibilityChange(() => publicAdapter.invalidate());
  runtime.metrics.readFrom({
    streamsOpen: () => ({
      rest: streams.openStreams(),
      graphql: graphqlRoute.openStreams() + graphqlSse.openStreams() + graphqlWs.openSockets(),
      public: publicStream.openStreams(),
      // Streams opened with a stream token, of any surface: also counted in rest or graphql.
      token: runtime.services.streamSlots.held('token'),
    }),
  });
  // Every ledger append is announced with the change it records (publish, approve, hold, settle, reschedule).
  runtime.onVisibilityChange(() => ledgerAdapter.invalidate());
  // The customer dashboard (HTML, session cookie, CSRF): its own encapsulated scope under /dashboard.
  await registerDashboardRoutes(app, {
    yoga,
    schema: getSchema(),
    services: runtime.services,
    clock: runtime.clock,
    tierLimits: runtime.config.tierLimits,
    localWebhookReceivers: runtime.config.localWebhookReceivers,
  });
  // The API reference for people at /docs, rendered from the served OpenAPI document.
  await registerApiReference(app);
  // The landing page at / (its GraphiQL link only where GraphiQL is served), and GraphiQL's assets.
  registerHomePage(app, { graphiql });
  if (graphiql) registerGraphiQLAssets(app);
  registerHealthRoutes(app, runtime.readiness, () => {
    const feed = runtime.feedState();
    return {
      limiter: runtime.limiter.mode(),
      // Information only: a feed that fails leaves the instance serving what it has.
      ...(feed
        ? {
            feed: {
              polling: feed.polling,
              last_poll_age_seconds: feed.lastPollAgeSeconds,
              last_error: feed.lastError,
              ...(feed.creditsStopped !== undefined ? { credits_stopped: feed.creditsStopped } : {}),
            },
          }
        : {}),
    };
  });

  await app.ready();
  return app;
}
