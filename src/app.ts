/**
 * The Fastify app factory, used by the entry point and by tests through inject().
 */
import { randomUUID } from 'node:crypto';
import Fastify, { type FastifyInstance, type FastifyServerOptions } from 'fastify';
import { ErrorCode } from './domain/errors.js';
import { registerPublicRoutes } from '../adapters/public/plugin.js';
import { registerRestRoutes } from '../adapters/rest/plugin.js';
import { registerStreamRoutes } from '../adapters/stream/plugin.js';
import { registerOpenApi } from '../adapters/shared/openapi.js';
import { getSchema } from './graphql/schema.js';
import { createYogaServer } from './graphql/yoga.js';
import type { Runtime } from './runtime.js';
import { classifyError, sendError } from './server/errors.js';
import { registerGraphQLRoute } from './server/graphql-route.js';
import { registerGraphQLSseRoute } from './server/graphql-sse-route.js';
import { registerHealthRoutes } from './server/health.js';
import { registerRateLimitHeaders } from './server/rate-limit-headers.js';

export const BODY_LIMIT_BYTES = 256 * 1024;
const INCOMING_REQUEST_ID = /^[A-Za-z0-9._-]{8,128}$/;

export interface AppOptions {
  logger?: FastifyServerOptions['logger'];
  /** An existing pino logger (the entry point shares one with the runtime). */
  loggerInstance?: FastifyServerOptions['loggerInstance'];
}

/** Logs never carry credentials: Authorization, cookies, and API keys in bodies are redacted. */
export const LOG_REDACT_PATHS = [
  'req.headers.authorization',
  'req.headers.cookie',
  'headers.authorization',
  'headers.cookie',
  '*.key',
  '*.hmac_secret',
  '*.adminToken',
];

export async function buildApp(runtime: Runtime, options: AppOptions = {}): Promise<FastifyInstance> {
  const app = Fastify({
    ...(options.loggerInstance ? { loggerInstance: options.loggerInstance } : { logger: options.logger ?? false }),
    bodyLimit: BODY_LIMIT_BYTES,
    // Slow clients cannot hold a request open indefinitely.
    requestTimeout: 30_000,
    connectionTimeout: 60_000,
    keepAliveTimeout: 5_000,
    // A caller-supplied X-Request-Id is kept when sane, so traces join across a load balancer.
    requestIdHeader: false,
    genReqId: (req) => {
      const incoming = req.headers['x-request-id'];
      return typeof incoming === 'string' && INCOMING_REQUEST_ID.test(incoming) ? incoming : randomUUID();
    },
    return503OnClosing: true,
    // On close, drop keep-alive and streaming sockets instead of waiting for clients to leave.
    forceCloseConnections: true,
  });

  app.addHook('onRequest', async (req, reply) => {
    reply.header('x-request-id', req.id);
  });

  app.setErrorHandler((error, req, reply) => {
    const { code, message, extras } = classifyError(error as Error);
    if (code === ErrorCode.internalError) req.log.error({ err: error }, 'unhandled error');
    return sendError(reply, code, message, extras);
  });
  app.setNotFoundHandler((req, reply) => sendError(reply, ErrorCode.notFound, `No route for ${req.method} ${req.url.split('?')[0]}.`));

  const yoga = createYogaServer({
    services: runtime.services,
    graphiql: !runtime.config.production,
    logUnexpected: (error) => app.log.error({ err: error }, 'unexpected GraphQL error'),
  });
  await registerOpenApi(app);
  registerRateLimitHeaders(app, () => runtime.clock.now().getTime());
  registerGraphQLRoute(app, yoga);
  registerGraphQLSseRoute(app, runtime.services, {
    now: () => runtime.clock.now().getTime(),
    logUnexpected: (error) => app.log.error({ err: error }, 'unexpected GraphQL error'),
  });
  registerRestRoutes(app, yoga, getSchema());
  registerStreamRoutes(app, yoga, getSchema(), {
    heartbeatSeconds: runtime.config.streamHeartbeatSeconds,
    now: () => runtime.clock.now().getTime(),
  });
  const publicAdapter = registerPublicRoutes(app, yoga, getSchema(), runtime.clock);
  runtime.onVisibilityChange(() => publicAdapter.invalidate());
  registerHealthRoutes(app, runtime.readiness, () => ({ limiter: runtime.limiter.mode() }));

  await app.ready();
  return app;
}
