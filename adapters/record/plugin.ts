/**
 * GET /record: the public track record as a page (docs/API.md, "Record page"). Anonymous and
 * cacheable like the public endpoint; one HTML answer rendered on the server from two GraphQL
 * documents run as the server itself (no customer principal): the track record (the figures the
 * paid API serves, kept in the read cache) and the revealed picks of the public ledger (only what
 * /api/public/ledger shows). Filters are the API's parameters, refused with its codes and
 * messages, as an HTML page.
 */
import { createHash } from 'node:crypto';
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import type { ExecutionResult, GraphQLSchema } from 'graphql';
import { DAYS_BACK, REVEALED_PICKS_PAGE } from '../../src/domain/bounds.js';
import { ErrorCode } from '../../src/domain/errors.js';
import { MARKETS } from '../../src/domain/market.js';
import { isSportSlug, SPORT_SLUGS } from '../../src/domain/sports.js';
import type { Context } from '../../src/graphql/context.js';
import type { Yoga } from '../../src/graphql/yoga.js';
import { errorPageHeaders, httpError, httpErrorOf, httpErrorOfGraphQL, type HttpError } from '../../src/server/http-errors.js';
import { RecordLedgerDocument, TrackRecordDocument, type RecordLedgerQuery, type TrackRecordQuery } from '../common/generated/graphql.js';
import { registerMethodNotAllowed } from '../common/method-not-allowed.js';
import { SingleFlightCache } from '../common/single-flight-cache.js';
import { openInternalOperation, prepareOperation } from '../common/operations.js';
import { pageHeaders, SELF } from '../common/page-chrome.js';
import { inRestNames, pageParam, parseParams, type ParamSpec } from '../common/params.js';
import { notModified } from '../public/plugin.js';
import { IMMUTABLE_CACHE_CONTROL } from '../../src/server/static-assets.js';
import { recordErrorPage, recordPage, RECORD_PATH, type RecordFilters } from './page.js';
import { STYLESHEET, STYLESHEET_PATH } from './stylesheet.js';

/** Shared caches and browsers keep the page a minute: picks are revealed at kickoff, results come in hours later. */
export const RECORD_CACHE_CONTROL = 'public, max-age=60';

/** Nothing but this origin's stylesheets and favicon: no script at all, no other host, no inline style; the filters' form sends here. */
const PAGE_HEADERS = pageHeaders({ styles: SELF, images: SELF, forms: 'self' });
export const RECORD_CONTENT_SECURITY_POLICY = PAGE_HEADERS['content-security-policy'];

/** The API's own parameters (GET /api/v1/track-record): the same names, forms and refusals. */
const PARAMS: readonly ParamSpec[] = [
  { name: 'sport', in: 'query', type: 'string', enum: SPORT_SLUGS, variable: 'sport', description: 'One sport.' },
  { name: 'market', in: 'query', type: 'string', enum: MARKETS, variable: 'market', description: 'One market.' },
  { name: 'days_back', in: 'query', type: 'integer', ...pageParam(DAYS_BACK), variable: 'daysBack', description: 'The window in days.' },
];

/** The form sends "" for "all": an empty value is no filter (the API would refuse it). */
function withoutEmpty(query: Record<string, unknown>): Record<string, unknown> {
  return Object.fromEntries(Object.entries(query).filter(([, value]) => value !== ''));
}

/** The filters to show again in the form of an error page: the valid ones, defaults for the rest. */
function filtersShown(query: Record<string, unknown>): RecordFilters {
  const sport = typeof query.sport === 'string' && isSportSlug(query.sport) ? query.sport : null;
  const market = typeof query.market === 'string' && (MARKETS as readonly string[]).includes(query.market) ? query.market : null;
  const days = typeof query.days_back === 'string' && /^\d{1,3}$/.test(query.days_back) ? Number(query.days_back) : NaN;
  return { sport, market, daysBack: days >= 1 && days <= DAYS_BACK.max ? days : DAYS_BACK.default };
}

/** How long a track record the page showed may be shown again at most: a change drops it sooner (invalidate). */
const RECORD_TTL_MS = 5_000;

/** Registers the page; what it returns drops its kept track records (call it on every change a record can show). */
export function registerRecordPage(app: FastifyInstance, yoga: Yoga, schema: GraphQLSchema, internalContext: Context): { invalidate(): void } {
  // The very document of GET /api/v1/track-record: the page shows the API's figures.
  const trackRecord = prepareOperation(schema, TrackRecordDocument);
  // Its results per filter: the page is public, so a burst of views costs one execution.
  const records = new SingleFlightCache<ExecutionResult<TrackRecordQuery>>({ max: 200, ttlMs: RECORD_TTL_MS, cacheable: (result) => !result.errors?.length });
  // Not cached: what is revealed moves with the clock (at each kickoff), not with writes.
  const ledger = prepareOperation(schema, RecordLedgerDocument);

  function sendErrorPage(req: FastifyRequest, reply: FastifyReply, error: HttpError, filters: RecordFilters): FastifyReply {
    if (error.status >= 500) req.log.error({ code: error.code, message: error.message }, 'record page failed');
    // An internal error's own message never leaves the server; the others say what to do.
    const message = error.code === ErrorCode.internalError ? 'Something went wrong on our side. Please try again in a moment.' : error.message;
    return reply
      .status(error.status)
      .headers({ ...PAGE_HEADERS, ...errorPageHeaders(error), 'cache-control': 'no-store' })
      .type('text/html; charset=utf-8')
      .send(recordErrorPage({ status: error.status, code: error.code, message, filters }));
  }

  app.route({
    method: 'GET',
    url: RECORD_PATH,
    schema: { hide: true },
    handler: async (req, reply) => {
      const query = withoutEmpty((req.query ?? {}) as Record<string, unknown>);
      const shown = filtersShown(query);
      const parsed = parseParams(PARAMS, query, {});
      if (parsed.error) return sendErrorPage(req, reply, httpErrorOf(parsed.error), shown);
      const filters: RecordFilters = {
        sport: (parsed.variables.sport as string | undefined) ?? null,
        market: (parsed.variables.market as string | undefined) ?? null,
        daysBack: (parsed.variables.daysBack as number | undefined) ?? DAYS_BACK.default,
      };

      // A context of its own per request (plugins may extend it), named after the request for the logs.
      const runner = openInternalOperation(yoga, { ...internalContext, requestId: req.id });
      let results: [ExecutionResult<TrackRecordQuery>, ExecutionResult<RecordLedgerQuery>];
      try {
        results = await Promise.all([records.get(JSON.stringify(filters), () => runner.execute(trackRecord, filters)), runner.execute(ledger, { ...filters, limit: REVEALED_PICKS_PAGE.default })]);
      } catch (error) {
        return sendErrorPage(req, reply, httpErrorOf(error, (unexpected) => req.log.error({ err: unexpected }, 'record page failed')), shown);
      }
      const [record, revealed] = results;
      const error = record.errors?.[0] ?? revealed.errors?.[0];
      if (error) {
        const failure = httpErrorOfGraphQL(inRestNames(error, PARAMS), { onUnexpected: (unexpected) => req.log.error({ error: unexpected }, 'record operation failed without a known code') });
        return sendErrorPage(req, reply, failure, shown);
      }
      if (!record.data || !revealed.data) return sendErrorPage(req, reply, httpError(ErrorCode.internalError), shown);

      const body = recordPage({ filters, record: record.data.trackRecord, picks: revealed.data.revealedLedgerPicks, head: revealed.data.ledgerHead });
      const etag = `"${createHash('sha256').update(body).digest('base64url').slice(0, 27)}"`;
      const headers = { ...PAGE_HEADERS, 'cache-control': RECORD_CACHE_CONTROL, etag };
      if (notModified(req.headers['if-none-match'], etag)) return reply.status(304).headers(headers).send();
      return reply.status(200).headers(headers).type('text/html; charset=utf-8').send(body);
    },
  });
  registerMethodNotAllowed(app, RECORD_PATH, ['GET']);

  // Compressed, with an ETag, by the app's static asset hook (src/server/static-assets.ts).
  app.route({
    method: 'GET',
    url: STYLESHEET_PATH,
    schema: { hide: true },
    handler: async (_req, reply) => reply.status(200).header('cache-control', IMMUTABLE_CACHE_CONTROL).type('text/css; charset=utf-8').send(STYLESHEET),
  });
  registerMethodNotAllowed(app, STYLESHEET_PATH, ['GET']);
  return { invalidate: () => records.invalidate() };
}
