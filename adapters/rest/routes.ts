/**
 * The /api/v1 read endpoints (docs/API.md); the webhook routes are in webhook-routes.ts.
 * Each route: one GraphQL document, its parameters (and body), the documented response
 * schema, and the mapping of the GraphQL data to the documented JSON. Nothing here decides
 * access or validity: the GraphQL layer does (the tier each route needs is its fields' scopes).
 */
import type { TypedDocumentNode } from '@graphql-typed-document-node/core';
import { DAYS_BACK, PICKS_PAGE } from '../../src/domain/bounds.js';
import { NotFoundError, type ErrorCode } from '../../src/domain/errors.js';
import { MARKETS } from '../../src/domain/market.js';
import { SPORT_SLUGS } from '../../src/domain/sports.js';
import type { HeaderSpec } from '../common/openapi.js';
import { pageParam, type ParamSpec } from '../common/params.js';
import { matchAnalysisSchema, pickListSchema, pickReceiptSchema, trackRecordSchema } from '../common/schemas.js';
import { ListPicksDocument, MatchAnalysisDocument, PickReceiptDocument, TrackRecordDocument } from '../common/generated/graphql.js';
import { v1Pick } from '../common/v1-json.js';
import { MATCH_ANALYSIS } from '../../src/domain/match-analysis-shape.js';
import { PICK_RECEIPT } from '../../src/domain/ledger-shape.js';
import { resourceJson } from '../../src/domain/resource-shape.js';
import { TRACK_RECORD } from '../../src/domain/track-record-shape.js';

export type RestMethod = 'GET' | 'POST' | 'PATCH' | 'DELETE';

/**
 * A JSON object request body (Content-Type: application/json). The plugin reads it (not JSON,
 * not an object, wrong Content-Type: 400 invalid_request); toVariables checks the form of each
 * field and maps it to GraphQL variables, throwing an AppError (invalid_request for a missing
 * field, invalid_parameter for a field of the wrong form). Unknown fields are ignored. Like a
 * query parameter of the wrong form, a body error is reported after auth, limits and tier.
 */
export interface RestBody {
  /** JSON Schema of the body for the OpenAPI document (documentation only). */
  schema: object;
  /** No body at all is an empty object (every field optional), not 400 invalid_request. */
  optional?: boolean;
  toVariables(body: Record<string, unknown>): Record<string, unknown>;
}

/**
 * A route's variables are built at run time from its parameter table and body, so GraphQL
 * validates them against the document; the compiler cannot.
 */
type RuntimeVariables = any;

export interface RestRoute<TData = unknown> {
  operationId: string;
  method: RestMethod;
  url: string;
  summary: string;
  description: string;
  /** The route's typed document (adapters/common/generated/graphql.ts, `npm run codegen`). */
  document: TypedDocumentNode<TData, RuntimeVariables>;
  params: readonly ParamSpec[];
  /** Routes without one ignore whatever body is sent. */
  body?: RestBody;
  /**
   * Answers may be kept this long at most (ms) in the read cache (read-cache.ts), as their
   * serialised bytes: for reads whose answer depends only on the variables and the caller's
   * access level. Every change that can alter an answer drops them sooner; the bound is for a
   * lost bus message.
   */
  cacheTtlMs?: number;
  /** 200 unless stated; 204 sends no body (toBody's result is dropped). */
  successStatus?: 200 | 201 | 204;
  responseSchema: object;
  /**
   * Documented error codes of this route (docs/API.md): codes, or an HTTP status for its usual
   * codes; the ones every route can answer are added by adapters/common/openapi.ts.
   */
  errors: readonly (ErrorCode | number)[];
  /**
   * Headers of the success answer beside the usual ones: documented in OpenAPI, and one whose
   * schema is a `const` is sent with that value (SECRET_ANSWER_HEADERS).
   */
  successHeaders?: Readonly<Record<string, HeaderSpec>>;
  toBody(data: TData): unknown;
}

/** An answer that shows a secret once (a stream token, a signing secret): no cache may keep it. */
export const SECRET_ANSWER_HEADERS: Readonly<Record<string, HeaderSpec>> = Object.freeze({
  'Cache-Control': { description: 'The answer holds a secret shown only here: never stored by a cache.', schema: { type: 'string', const: 'no-store' }, required: true },
});

/** Declares a route: toBody receives the result type generated for its document. */
export function restRoute<TData>(route: RestRoute<TData>): RestRoute<TData> {
  return route;
}

const sportParam = (description: string): ParamSpec => ({
  name: 'sport',
  in: 'query',
  type: 'string',
  enum: SPORT_SLUGS,
  variable: 'sport',
  description,
});

export const REST_ROUTES: readonly RestRoute[] = [
  restRoute({
    operationId: 'listPicks',
    // A page moves with every publication: the shortest bound.
    cacheTtlMs: 2_000,
    method: 'GET',
    url: '/api/v1/picks',
    summary: 'List published and settled picks',
    description: 'Kickoff time descending, then id descending; keyset pagination with `cursor`. admin_review picks are never returned.',
    document: ListPicksDocument,
    params: [
      sportParam('Sport slug filter (exact).'),
      { name: 'league', in: 'query', type: 'string', variable: 'league', description: 'League name filter (exact).' },
      { name: 'market', in: 'query', type: 'string', enum: MARKETS, variable: 'market', description: 'Market filter: h2h, spreads or totals.' },
      { name: 'since', in: 'query', type: 'string', format: 'date-time', variable: 'since', description: 'Only picks with kickoff_at after this time (ISO 8601 with a time zone).' },
      { name: 'limit', in: 'query', type: 'integer', ...pageParam(PICKS_PAGE), variable: 'first', description: 'Page size.' },
      { name: 'cursor', in: 'query', type: 'string', variable: 'after', description: 'next_cursor of the previous response, unchanged.' },
    ],
    responseSchema: pickListSchema,
    errors: [400, 401, 429],
    toBody: ({ picks: page }) => ({ data: page.nodes.map(v1Pick), next_cursor: page.pageInfo.endCursor, count: page.count }),
  }),
  restRoute({
    operationId: 'getTrackRecord',
    cacheTtlMs: 5_000,
    method: 'GET',
    url: '/api/v1/track-record',
    summary: 'Aggregated performance of settled picks',
    description: 'Flat 1-unit stakes over picks settled in the last `days_back` days.',
    document: TrackRecordDocument,
    params: [
      sportParam('Scope to one sport.'),
      { name: 'market', in: 'query', type: 'string', enum: MARKETS, variable: 'market', description: 'Scope to one market: h2h, spreads or totals.' },
      { name: 'days_back', in: 'query', type: 'integer', ...pageParam(DAYS_BACK), variable: 'daysBack', description: 'Lookback window in days.' },
    ],
    responseSchema: trackRecordSchema,
    errors: [400, 401, 403, 429],
    toBody: ({ trackRecord: record }) => resourceJson(TRACK_RECORD, record),
  }),
  restRoute({
    operationId: 'getMatchAnalysis',
    cacheTtlMs: 5_000,
    method: 'GET',
    url: '/api/v1/match-analyses/:matchId',
    summary: 'Analysis text for the match of a pick',
    description: '`matchId` is the pick `id`. 404 not_found when there is no analysis (or no visible pick).',
    document: MatchAnalysisDocument,
    params: [{ name: 'matchId', in: 'path', type: 'string', format: 'uuid', required: true, variable: 'matchId', description: 'The pick id.' }],
    responseSchema: matchAnalysisSchema,
    errors: [401, 403, 404, 429],
    toBody: ({ matchAnalysis: analysis }) => {
      if (!analysis) throw new NotFoundError('No analysis exists for this match.');
      return resourceJson(MATCH_ANALYSIS, analysis);
    },
  }),
  restRoute({
    operationId: 'getPickReceipt',
    // Not kept in the read cache: a new checkpoint changes it without any change of a pick.
    method: 'GET',
    url: '/api/v1/picks/:id/receipt',
    summary: "A pick's ledger receipt, to check offline",
    description:
      "The pick's ledger entries, each with its pick, salt and RFC 9162 inclusion proof against the latest signed checkpoint, and that checkpoint with its cosignatures. " +
      'Entries appended after it are listed in `pending`. 404 not_found for an unknown or hidden pick. See "Verifying the record".',
    document: PickReceiptDocument,
    params: [{ name: 'id', in: 'path', type: 'string', format: 'uuid', required: true, variable: 'id', description: 'The pick id.' }],
    responseSchema: pickReceiptSchema,
    errors: [401, 403, 404, 429],
    toBody: ({ pick }) => {
      if (!pick?.receipt) throw new NotFoundError('No visible pick on the ledger has this id.');
      return resourceJson(PICK_RECEIPT, pick.receipt);
    },
  }),
];
