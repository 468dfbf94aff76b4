/**
 * Fastify's `frameworkErrors` option: the requests its router refuses before any route, hook
 * or handler runs. FST_ERR_BAD_URL (a path that is not valid percent-encoding:
 * `/api/v1/picks/%ZZ`), FST_ERR_MAX_PARAM_LENGTH (a path segment over 100 characters where
 * only a route parameter fits and no wildcard route takes the path: `/dashboard/webhooks/<101
 * characters>/delete`) and FST_ERR_ASYNC_CONSTRAINT (no route of this app has an asynchronous
 * constraint). Without this option Fastify writes its own body (`{"error":"Bad Request",
 * "code":"FST_ERR_BAD_URL",...}`, echoing the path) and no X-Request-Id.
 *
 * Fastify hands such a request over outside every route, so none of the app's onRequest or
 * onSend hooks run for it: this handler does what they would, then answers through the one
 * error exit (src/server/http-errors.ts, whose table maps the codes; the message never echoes
 * the path). Under /api/v1 a refused path is an unknown path there (docs/DECISIONS.md, "Unknown
 * paths"): checked first (a refused credential is 401, a key over its limits 429) and, with a
 * valid key, counted one unit and answered with the rate-limit headers. A refusal that is the
 * server's failure (5xx) is answered without the checks, so it counts nothing.
 */
import type { FastifyError, FastifyReply, FastifyRequest } from 'fastify';
import type { GraphQLError } from 'graphql';
import { httpErrorOf, httpErrorOfGraphQL, sendHttpError, type HttpError } from './http-errors.js';
import { rateLimitHeaders } from './rate-limit-headers.js';

/** What the handler needs of the app, known once its routes are registered (src/app.ts). */
export interface FrameworkErrorContext {
  /**
   * The checks of a request under /api/v1 that no route answers (adapters/rest/plugin.ts,
   * admitUnroutedRequest): the refusal (401, 429, 503), or null when admitted (a valid key is
   * then counted and `req.rateLimit` holds its decision).
   */
  admitCustomerApi(req: FastifyRequest, reply: FastifyReply): Promise<GraphQLError | null>;
  /** The clock of the rate-limit headers (milliseconds). */
  now(): number;
}

export type FrameworkErrorHandler = (error: FastifyError, req: FastifyRequest, reply: FastifyReply) => void;

/** The first two segments of a path, percent-decoded where they can be. */
function leadingSegments(url: string): [string, string] {
  // The absolute form of a request target (`GET http://host/api/v1/... HTTP/1.1`) is routed by its path.
  const path = url.replace(/^[a-z][a-z0-9+.-]*:\/\/[^/?#]*/i, '').split('?')[0]!;
  const [, first = '', second = ''] = path.split('/', 3);
  const decode = (segment: string) => {
    try {
      return decodeURIComponent(segment);
    } catch {
      return segment;
    }
  };
  return [decode(first), decode(second)];
}

/** Whether a request target is under /api/v1 (the router decodes `/api/v%31/...` to it too). */
export function underCustomerApi(url: string): boolean {
  const [first, second] = leadingSegments(url);
  return first === 'api' && second === 'v1';
}

/**
 * The `frameworkErrors` handler, and `bind` to hand it the app's checks once they exist. Until
 * then (no request is routed before the app is ready) it answers without the /api/v1 checks.
 */
export function createFrameworkErrorHandler(): { handler: FrameworkErrorHandler; bind(context: FrameworkErrorContext): void } {
  let context: FrameworkErrorContext | null = null;

  async function answer(error: FastifyError, req: FastifyRequest, reply: FastifyReply): Promise<void> {
    // As the app's first onRequest hook does for every routed request.
    reply.header('x-request-id', req.id);
    const logUnexpected = (unexpected: unknown) => req.log.error({ err: unexpected }, 'unexpected error in the router');
    let refusal: HttpError = httpErrorOf(error, logUnexpected);
    if (context && refusal.status < 500 && underCustomerApi(req.url)) {
      try {
        const refused = await context.admitCustomerApi(req, reply);
        if (refused) refusal = httpErrorOfGraphQL(refused, { onUnexpected: logUnexpected });
      } catch (checkError) {
        // The database out of reach while checking the key: 503, as on every route.
        refusal = httpErrorOf(checkError, logUnexpected);
      }
      // As the rate limiter's onSend hook does for every routed request with a decision.
      if (req.rateLimit) reply.headers(rateLimitHeaders(req.rateLimit, context.now()));
    }
    sendHttpError(reply, refusal);
  }

  return {
    handler: (error, req, reply) => {
      answer(error, req, reply).catch((unexpected: unknown) => {
        req.log.error({ err: unexpected }, 'answering a router refusal failed');
        if (!reply.sent) reply.raw.destroy();
      });
    },
    bind(bound) {
      context = bound;
    },
  };
}
