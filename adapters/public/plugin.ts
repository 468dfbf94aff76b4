/**
 * GET /api/public/picks/today (docs/DECISIONS.md, "Public endpoint"): anonymous, CORS-open, CDN-cached,
 * indented JSON, ETag/304. This read path's one cache is here: the rendered bytes, ETag and headers
 * per (UTC day, limit, sport) for 5 s, so a burst is answered synchronously, without building a
 * GraphQL context, executing or rendering again. It is dropped whenever a pick becomes visible or
 * hidden (src/app.ts wires every cache's invalidation).
 */
import { createHash } from 'node:crypto';
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { GraphQLError, type GraphQLSchema } from 'graphql';
import { SingleFlightCache } from '../common/single-flight-cache.js';
import { TODAY_PAGE } from '../../src/domain/bounds.js';
import type { Clock } from '../../src/domain/clock.js';
import { PUBLIC_PICK_LIST } from '../../src/domain/public-picks-shape.js';
import { resourceJson } from '../../src/domain/resource-shape.js';
import { SPORT_SLUGS } from '../../src/domain/sports.js';
import { perUtcPeriod, utcDateString } from '../../src/domain/time.js';
import type { Yoga } from '../../src/graphql/yoga.js';
import { httpError, httpErrorOf, httpErrorOfGraphQL, sendHttpError, type HttpError } from '../../src/server/http-errors.js';
import { registerMethodNotAllowed } from '../common/method-not-allowed.js';
import { TodayPicksDocument } from '../common/generated/graphql.js';
import { publicPick } from '../common/v1-json.js';
import { openOperation, prepareOperation } from '../common/operations.js';
import { openApiRouteSchema } from '../common/openapi.js';
import { pageParam, parseParams, type ParamSpec } from '../common/params.js';
import { publicEnvelopeSchema } from '../common/schemas.js';

export const PUBLIC_PATH = '/api/public/picks/today';
export const PUBLIC_CACHE_CONTROL = 'public, s-maxage=300, stale-while-revalidate=600';
export const PUBLIC_CACHE_TTL_MS = 5_000;

const PARAMS: readonly ParamSpec[] = [
  { name: 'limit', in: 'query', type: 'integer', ...pageParam(TODAY_PAGE), variable: 'limit', description: 'Number of picks.' },
  { name: 'sport', in: 'query', type: 'string', enum: SPORT_SLUGS, variable: 'sport', description: 'Sport slug.' },
];

export const CORS_HEADERS = {
  'access-control-allow-origin': '*',
  'access-control-allow-methods': 'GET, HEAD, OPTIONS',
  'access-control-allow-headers': 'Content-Type, If-None-Match',
  'access-control-expose-headers': 'ETag, X-Request-Id',
  'access-control-max-age': '86400',
};

/** A public answer rendered once and kept (here and in ./ledger.ts). */
export interface RenderedBody {
  /** Encoded once: every cache hit sends the same bytes without re-encoding the string. */
  body: Buffer;
  etag: string;
  /** Built once per cache entry, so a hit sets them in one call: the 200's, and the 304's (no content-type, as there is no body). */
  headers: Readonly<Record<string, string>>;
  notModifiedHeaders: Readonly<Record<string, string>>;
}

function renderedHeaders(etag: string): Pick<RenderedBody, 'headers' | 'notModifiedHeaders'> {
  const notModifiedHeaders = Object.freeze({ ...CORS_HEADERS, 'cache-control': PUBLIC_CACHE_CONTROL, etag, vary: 'Accept-Encoding' });
  return { notModifiedHeaders, headers: Object.freeze({ ...notModifiedHeaders, 'content-type': 'application/json; charset=utf-8' }) };
}

/**
 * The cache key of a (day, limit, sport): validation happens behind GraphQL, so the key must
 * tell every raw input apart, '' from absent included. The prefix has a fixed length and ends in
 * a space, limit is digits or nothing, and sport, when given, follows '=': no two inputs meet.
 */
function cacheKeyOf(dayPrefix: string, limit: unknown, sport: unknown): string {
  if (limit === undefined && sport === undefined) return dayPrefix;
  return `${dayPrefix}${limit === undefined ? '' : String(limit)}${sport === undefined ? '' : `=${String(sport)}`}`;
}

/**
 * If-None-Match (RFC 9110 section 13.1.2), weak comparison: a listed tag equal to the current
 * one, or `*`, which matches whenever there is a current representation (there always is once
 * the picks are rendered).
 */
export function notModified(ifNoneMatch: string | undefined, etag: string): boolean {
  if (typeof ifNoneMatch !== 'string') return false;
  return ifNoneMatch.split(',').some((tag) => {
    const trimmed = tag.trim();
    return trimmed === '*' || trimmed.replace(/^W\//, '') === etag;
  });
}

/** A kept body (or the error its render met): 304 without a body when If-None-Match names its ETag. */
export function answerRendered(req: FastifyRequest, reply: FastifyReply, outcome: RenderedBody | { error: HttpError }): FastifyReply {
  if ('error' in outcome) return sendPublicError(reply, outcome.error);
  if (notModified(req.headers['if-none-match'], outcome.etag)) return reply.status(304).headers(outcome.notModifiedHeaders).send();
  return reply.status(200).headers(outcome.headers).send(outcome.body);
}

/** Errors as everywhere else (status, Retry-After, body), plus CORS, no caching and indented JSON. */
export function sendPublicError(reply: FastifyReply, error: HttpError) {
  return sendHttpError(reply, error, { headers: { ...CORS_HEADERS, 'cache-control': 'no-store' }, indent: 2 });
}

export interface PublicAdapter {
  /** Drops cached bodies: call when a pick becomes visible or hidden. */
  invalidate(): void;
}

export function registerPublicRoutes(app: FastifyInstance, yoga: Yoga, schema: GraphQLSchema, clock: Clock): PublicAdapter {
  const operation = prepareOperation(schema, TodayPicksDocument);
  type RenderOutcome = RenderedBody | { error: HttpError };
  // Requests that miss together share one render; errors are answered, never cached.
  const cache = new SingleFlightCache<RenderOutcome>({ max: 1_000, ttlMs: PUBLIC_CACHE_TTL_MS, cacheable: (outcome) => !('error' in outcome) });
  // The UTC day's key prefix, formatted only when the day changes.
  const dayPrefixOf = perUtcPeriod('day', (at) => `${utcDateString(at)} `);

  async function render(
    req: FastifyRequest,
    reply: FastifyReply,
    variables: Record<string, unknown>,
    now: Date,
  ): Promise<RenderOutcome> {
    const runner = await openOperation(yoga, { req, reply, anonymous: true });
    if (runner instanceof GraphQLError) return { error: httpErrorOf(runner) };
    const result = await runner.execute(operation, variables);
    const error = result.errors?.[0];
    if (error || !result.data) {
      return { error: error ? httpErrorOfGraphQL(error, { onUnexpected: (unexpected) => req.log.error({ error: unexpected }, 'public operation failed without a known code') }) : httpError('internal_error') };
    }
    const picks = result.data.todayPicks.map(publicPick);
    const body = JSON.stringify(resourceJson(PUBLIC_PICK_LIST, { generatedAt: now, count: picks.length, picks }, 'value'), null, 2);
    // The ETag covers the picks only, so an unchanged list revalidates even as generatedAt moves.
    const etag = `"${createHash('sha256').update(JSON.stringify(picks)).digest('base64url').slice(0, 27)}"`;
    return { body: Buffer.from(body, 'utf8'), etag, ...renderedHeaders(etag) };
  }

  app.route({
    method: 'GET',
    url: PUBLIC_PATH,
    schema: openApiRouteSchema({
      operationId: 'getTodayPicks',
      summary: "Today's top picks (anonymous)",
      description:
        'Picks first published on the current UTC date (published or settled), best post-tax edge first, then newest. No key needed; credentials sent are ignored. ' +
        'CORS-open; indented JSON; cached by CDNs for 5 minutes, so poll at most once per minute and revalidate with If-None-Match.',
      url: PUBLIC_PATH,
      params: PARAMS,
      requestHeaders: {
        'If-None-Match': { description: 'An ETag of an earlier answer: 304 without a body while the picks are unchanged.', schema: { type: 'string' } },
      },
      responseSchema: publicEnvelopeSchema,
      successDescription: "Today's picks, indented JSON.",
      successHeaders: {
        ETag: { description: 'Hash of the picks only: unchanged picks keep their ETag while generatedAt moves.', schema: { type: 'string', examples: ['"Jz3kq9Xc1o2bTf6LwQ8rVn4HsAe"'] }, required: true },
        'Cache-Control': { description: 'Shared caches keep the answer 5 minutes.', schema: { type: 'string', const: PUBLIC_CACHE_CONTROL }, required: true },
        'Access-Control-Allow-Origin': { description: 'Any origin, without credentials.', schema: { type: 'string', const: '*' }, required: true },
      },
      otherResponses: {
        304: {
          description: 'Not Modified: If-None-Match names the current ETag (or is `*`). No body.',
          headers: {
            ETag: { description: 'The current ETag.', schema: { type: 'string' }, required: true },
            'Cache-Control': { description: 'As on 200.', schema: { type: 'string', const: PUBLIC_CACHE_CONTROL }, required: true },
          },
        },
      },
      errors: ['invalid_parameter'],
      errorHeaders: {
        'Cache-Control': { description: 'Errors are never cached.', schema: { type: 'string', const: 'no-store' }, required: true },
        'Access-Control-Allow-Origin': { description: 'Any origin, without credentials.', schema: { type: 'string', const: '*' }, required: true },
      },
      anonymous: true,
    }),
    // Not async: a hit is answered synchronously, without a promise; a miss returns the promise of
    // the one render of its key, which it starts or joins.
    handler: (req, reply) => {
      const parsed = parseParams(PARAMS, req.query as Record<string, unknown>, {});
      if (parsed.error) {
        sendPublicError(reply, httpErrorOf(parsed.error));
        return;
      }
      const now = clock.now();
      const cacheKey = cacheKeyOf(dayPrefixOf(now.getTime()), parsed.variables.limit, parsed.variables.sport);
      const cached = cache.peek(cacheKey);
      if (cached) {
        answerRendered(req, reply, cached);
        return;
      }
      return cache.get(cacheKey, () => render(req, reply, parsed.variables, now)).then((outcome) => answerRendered(req, reply, outcome));
    },
  });

  app.options(PUBLIC_PATH, { schema: { hide: true } }, async (_req, reply) => reply.status(204).headers(CORS_HEADERS).send());
  registerMethodNotAllowed(app, PUBLIC_PATH, ['GET', 'OPTIONS']);

  return {
    invalidate: () => cache.invalidate(),
  };
}
