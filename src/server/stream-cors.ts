/**
 * CORS of the stream endpoints (docs/API.md, "Frontends"). The preflight answers any origin:
 * what a page may read is decided by the credential, not the preflight. The stream itself is
 * readable across origins only with a stream token minted for the request's origin; API keys
 * belong on servers, so their streams never carry CORS headers.
 */
import type { FastifyInstance } from 'fastify';
import type { Principal } from '../domain/principal.js';

export const STREAM_CORS_METHODS = 'GET, POST';
export const STREAM_CORS_HEADERS = 'Authorization, Content-Type, Last-Event-ID';
/** How long a browser may reuse a preflight answer. */
const PREFLIGHT_MAX_AGE_SECONDS = 600;

/** OPTIONS on a stream endpoint: 204 to any origin, no credentials (cookies are never read). */
export function registerStreamPreflight(app: FastifyInstance, url: string): void {
  app.route({
    method: 'OPTIONS',
    url,
    schema: { hide: true },
    handler: (req, reply) => {
      const origin = typeof req.headers.origin === 'string' ? req.headers.origin : '*';
      return reply
        .status(204)
        .headers({
          'access-control-allow-origin': origin,
          'access-control-allow-methods': STREAM_CORS_METHODS,
          'access-control-allow-headers': STREAM_CORS_HEADERS,
          'access-control-max-age': String(PREFLIGHT_MAX_AGE_SECONDS),
          vary: 'Origin',
        })
        .send();
    },
  });
}

/** The CORS headers of an admitted stream: the origin, when a stream token was minted for it. */
export function streamCorsHeaders(principal: Principal, origin: string | string[] | undefined): Record<string, string> {
  if (principal.kind !== 'streamToken' || typeof origin !== 'string' || !principal.origins.includes(origin)) return {};
  return { 'access-control-allow-origin': origin, vary: 'Origin' };
}
