/**
 * The one error exit of every HTTP surface (/api/v1, its stream, the public endpoint,
 * /graphql/stream, the dashboard, Fastify's own error and not-found handlers, its router's
 * refusals in src/server/framework-errors.ts): a thrown error, a GraphQL error or a code
 * becomes an HttpError - the status and default message of the code's row in the error table
 * (src/domain/errors.ts), its headers (Retry-After) and the documented body
 * `{error, message, ...extras}`. The surfaces only choose how to write it: JSON, indented JSON
 * with CORS (public), a GraphQL-shaped body (/graphql/stream) or an HTML page (dashboard).
 */
import type { FastifyError, FastifyReply, FastifyRequest } from 'fastify';
import { GraphQLError } from 'graphql';
import { ERRORS, ErrorCode, errorHead, isAppError, isErrorCode, type ErrorExtras } from '../domain/errors.js';
import { isDatabaseUnavailable } from '../persistence/availability.js';

export interface HttpError {
  status: number;
  code: ErrorCode;
  message: string;
  extras: ErrorExtras;
  headers: Record<string, string>;
}

/** The answer for a code: the table's status and default message, its head's headers (errorHead) as for a request without credentials. */
export function httpError(code: ErrorCode, message: string = ERRORS[code].message, extras: ErrorExtras = {}): HttpError {
  const { status, headers } = errorHead(code, extras);
  return { status, code, message, extras, headers };
}

/** The documented JSON body. */
export function errorBody(error: HttpError): Record<string, unknown> {
  return { error: error.code, message: error.message, ...error.extras };
}

/** What became of a GraphQL error whose code is not in the table. */
export interface GraphQLErrorOptions {
  /**
   * `internal` (default): the REST adapters run their own fixed documents, so an unknown code is
   * our bug. `request`: a caller's own document (/graphql/stream), refused by GraphQL itself
   * (its own codes): invalid_request.
   */
  unknownCode?: 'internal' | 'request';
  /** Told about an error masked as internal_error (to log it). */
  onUnexpected?: (error: unknown) => void;
}

/** A GraphQL error as yoga hands it out (extensions.code and extras; `http` is yoga's and dropped). */
export function httpErrorOfGraphQL(error: Pick<GraphQLError, 'message' | 'extensions'>, options: GraphQLErrorOptions = {}): HttpError {
  const { code, http: _http, ...extras } = (error.extensions ?? {}) as Record<string, unknown>;
  if (!isErrorCode(code)) {
    if (options.unknownCode === 'request' && typeof code === 'string') return httpError(ErrorCode.invalidRequest, error.message);
    // A document or schema mismatch: our bug, not the caller's.
    options.onUnexpected?.(error);
    return httpError(ErrorCode.internalError);
  }
  // An internal error's own message never leaves the server.
  if (code === ErrorCode.internalError) return httpError(code);
  return httpError(code, error.message, extras as ErrorExtras);
}

/** What a refused body is told, said once: Fastify's own refusals below and the REST adapter's deferred parsing. */
export const BODY_ERROR_MESSAGES = {
  notJson: 'The request body is not valid JSON.',
  unsupportedContentType: 'Unsupported Content-Type; send application/json.',
} as const;

/**
 * Fastify's own refusals of a request, by their codes (node_modules/fastify/lib/errors.js):
 * every code a request can make Fastify raise, so none leaves with Fastify's body or message
 * (which may echo the path). The router's reach the error exit through `frameworkErrors`
 * (src/server/framework-errors.ts), the others through the error handler. The table-driven
 * test/server/framework-errors.test.ts drives each with a request, or shows it unreachable.
 */
export const FASTIFY_ERRORS: Readonly<Record<string, { code: ErrorCode; message: string }>> = {
  // The router (frameworkErrors).
  FST_ERR_BAD_URL: { code: ErrorCode.invalidRequest, message: 'The request path is not valid percent-encoding.' },
  // A malformed id is 404, never 400 (docs/API.md, "Requests"): no id is this long.
  FST_ERR_MAX_PARAM_LENGTH: { code: ErrorCode.notFound, message: 'No such resource: a path segment is longer than any id.' },
  FST_ERR_NOT_FOUND: { code: ErrorCode.notFound, message: ERRORS.not_found.message },
  // Bodies and their headers.
  FST_ERR_CTP_BODY_TOO_LARGE: { code: ErrorCode.payloadTooLarge, message: ERRORS.payload_too_large.message },
  FST_ERR_CTP_INVALID_MEDIA_TYPE: { code: ErrorCode.invalidRequest, message: BODY_ERROR_MESSAGES.unsupportedContentType },
  FST_ERR_CTP_EMPTY_JSON_BODY: { code: ErrorCode.invalidRequest, message: 'The JSON body is empty.' },
  FST_ERR_CTP_INVALID_JSON_BODY: { code: ErrorCode.invalidRequest, message: BODY_ERROR_MESSAGES.notJson },
  FST_ERR_CTP_INVALID_CONTENT_LENGTH: { code: ErrorCode.invalidRequest, message: 'The Content-Length header does not match the body.' },
  FST_ERR_ROUTE_MISSING_CONTENT_TYPE: { code: ErrorCode.invalidRequest, message: 'The Content-Type header is missing; send application/json.' },
  FST_ERR_ROUTE_MISSING_CONTENT: { code: ErrorCode.invalidRequest, message: 'The request body is missing.' },
  // Route schemas are documentation only (adapters/common/openapi.ts: passThroughValidator), so
  // this never fires; were it to, it would not echo the schema's wording.
  FST_ERR_VALIDATION: { code: ErrorCode.invalidRequest, message: 'The request does not have the documented form.' },
  // Only with a route's handlerTimeout, which no route sets: the server's failure, retried.
  FST_ERR_HANDLER_TIMEOUT: { code: ErrorCode.serviceUnavailable, message: ERRORS.service_unavailable.message },
};

/**
 * Anything thrown: an AppError, a GraphQL error, one of Fastify's request errors, the database
 * being out of reach (503, not a bug), or else an internal error (told to onUnexpected).
 */
export function httpErrorOf(error: unknown, onUnexpected?: (error: unknown) => void): HttpError {
  if (isAppError(error)) return httpError(error.code, error.message, error.extras);
  if (error instanceof GraphQLError) {
    if (isAppError(error.originalError)) return httpErrorOf(error.originalError, onUnexpected);
    return httpErrorOfGraphQL(error, { onUnexpected });
  }
  const fastifyError = error as Partial<FastifyError> | null;
  const known = typeof fastifyError?.code === 'string' ? FASTIFY_ERRORS[fastifyError.code] : undefined;
  if (known) return httpError(known.code, known.message);
  if (fastifyError?.statusCode === 400 || error instanceof SyntaxError) return httpError(ErrorCode.invalidRequest, BODY_ERROR_MESSAGES.notJson);
  if (typeof fastifyError?.statusCode === 'number' && fastifyError.statusCode >= 400 && fastifyError.statusCode < 500) {
    // A Fastify code missing from the table above (a newer Fastify): its message may echo the request.
    const fromFastify = typeof fastifyError.code === 'string' && fastifyError.code.startsWith('FST_');
    return httpError(ErrorCode.invalidRequest, fromFastify ? ERRORS.invalid_request.message : String(fastifyError.message));
  }
  // The database is down or restarting: 503 at once (the pool fails fast), never a 500 or a hang.
  if (isDatabaseUnavailable(error)) return httpError(ErrorCode.serviceUnavailable);
  onUnexpected?.(error);
  return httpError(ErrorCode.internalError);
}

export interface SendOptions {
  /** More headers (the public endpoint's CORS). */
  headers?: Record<string, string>;
  /** Indentation of the JSON body (the public endpoint answers indented JSON). */
  indent?: number;
}

/** Whether the request carried an Authorization header (any value: a credential was presented). */
function credentialSent(req: Pick<FastifyRequest, 'headers'>): boolean {
  const authorization = req.headers.authorization;
  return authorization !== undefined && authorization !== '';
}

/**
 * The headers of an error answering this request: Retry-After, and for a 401 invalid_api_key
 * the Bearer challenge (RFC 6750), `error="invalid_token"` when a credential was sent.
 */
export function errorHeadersFor(error: HttpError, req: Pick<FastifyRequest, 'headers'>): Record<string, string> {
  return errorHead(error.code, error.extras, credentialSent(req)).headers;
}

/** Writes an HttpError as the documented JSON. */
export function sendHttpError(reply: FastifyReply, error: HttpError, options: SendOptions = {}): FastifyReply {
  reply
    .status(error.status)
    .headers({ ...options.headers, ...errorHeadersFor(error, reply.request) })
    .type('application/json; charset=utf-8');
  return reply.send(options.indent === undefined ? errorBody(error) : JSON.stringify(errorBody(error), null, options.indent));
}

/** Fastify's error handler (buildApp): whatever a route throws leaves here; unexpected errors are logged. */
export function handleHttpError(error: unknown, req: FastifyRequest, reply: FastifyReply): FastifyReply {
  return sendHttpError(reply, httpErrorOf(error, (unexpected) => req.log.error({ err: unexpected }, 'unhandled error')));
}

/** Shorthand: the JSON answer for a code. */
export function sendError(reply: FastifyReply, code: ErrorCode, message?: string, extras?: ErrorExtras): FastifyReply {
  return sendHttpError(reply, httpError(code, message, extras));
}

/** A GraphQL error (from a REST adapter's own document) as the documented JSON. */
export function sendGraphQLError(reply: FastifyReply, error: Pick<GraphQLError, 'message' | 'extensions'>): FastifyReply {
  return sendHttpError(reply, httpErrorOfGraphQL(error, { onUnexpected: (unexpected) => reply.log.error({ error: unexpected }, 'REST operation failed without a known code') }));
}

/** The headers of an error answered as an HTML page: its own and the code in X-Error-Code. */
export function errorPageHeaders(error: HttpError): Record<string, string> {
  return { ...error.headers, 'x-error-code': error.code };
}
