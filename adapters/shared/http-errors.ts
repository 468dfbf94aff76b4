/**
 * GraphQL errors -> HTTP: the status comes from the one code table in src/domain/errors.ts,
 * the body is { error, message, ...documented extras }.
 */
import type { FastifyReply } from 'fastify';
import type { GraphQLError } from 'graphql';
import { ERROR_HTTP_STATUS, ErrorCode, type ErrorExtras } from '../../src/domain/errors.js';
import { sendError } from '../../src/server/errors.js';

function isErrorCode(code: unknown): code is ErrorCode {
  return typeof code === 'string' && code in ERROR_HTTP_STATUS;
}

export function sendGraphQLError(reply: FastifyReply, error: Pick<GraphQLError, 'message' | 'extensions'>): FastifyReply {
  const { code, http: _http, ...extras } = error.extensions as Record<string, unknown>;
  if (!isErrorCode(code)) {
    // A document or schema mismatch: our bug, not the caller's.
    reply.log.error({ error }, 'REST operation failed without a known code');
    return sendError(reply, ErrorCode.internalError, 'Unexpected server error; retry with exponential backoff.');
  }
  const message = code === ErrorCode.internalError ? 'Unexpected server error; retry with exponential backoff.' : error.message;
  return sendError(reply, code, message, extras as ErrorExtras);
}
