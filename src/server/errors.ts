import type { FastifyError, FastifyReply } from 'fastify';
import { ERROR_HTTP_STATUS, ErrorCode, isAppError, SERVICE_UNAVAILABLE_RETRY_AFTER_SECONDS, ServiceUnavailableError, type ErrorExtras } from '../domain/errors.js';
import { isDatabaseUnavailable } from '../persistence/availability.js';

/** The JSON error body of every HTTP surface: { error, message, ...documented extras }. */
export function sendError(reply: FastifyReply, code: ErrorCode, message: string, extras: ErrorExtras = {}): FastifyReply {
  if (code === ErrorCode.serviceUnavailable) reply.header('retry-after', String(SERVICE_UNAVAILABLE_RETRY_AFTER_SECONDS));
  return reply.status(ERROR_HTTP_STATUS[code]).type('application/json; charset=utf-8').send({ error: code, message, ...extras });
}

/** Maps errors that reach Fastify (framework-level ones and AppErrors thrown by routes). */
export function classifyError(error: FastifyError | Error): { code: ErrorCode; message: string; extras: ErrorExtras } {
  if (isAppError(error)) return { code: error.code, message: error.message, extras: error.extras };
  const fastifyError = error as FastifyError;
  switch (fastifyError.code) {
    case 'FST_ERR_CTP_BODY_TOO_LARGE':
      return { code: ErrorCode.payloadTooLarge, message: 'The request body is too large.', extras: {} };
    case 'FST_ERR_CTP_INVALID_MEDIA_TYPE':
      return { code: ErrorCode.invalidRequest, message: 'Unsupported Content-Type; send application/json.', extras: {} };
    case 'FST_ERR_CTP_EMPTY_JSON_BODY':
      return { code: ErrorCode.invalidRequest, message: 'The JSON body is empty.', extras: {} };
    case 'FST_ERR_CTP_INVALID_CONTENT_LENGTH':
      return { code: ErrorCode.invalidRequest, message: 'The Content-Length header does not match the body.', extras: {} };
    default:
      break;
  }
  if (fastifyError.statusCode === 400 || error instanceof SyntaxError) {
    return { code: ErrorCode.invalidRequest, message: 'The request body is not valid JSON.', extras: {} };
  }
  if (typeof fastifyError.statusCode === 'number' && fastifyError.statusCode >= 400 && fastifyError.statusCode < 500) {
    return { code: ErrorCode.invalidRequest, message: fastifyError.message, extras: {} };
  }
  // The database is down or restarting: 503 at once (the pool fails fast), never a 500 or a hang.
  if (isDatabaseUnavailable(error)) return { code: ErrorCode.serviceUnavailable, message: new ServiceUnavailableError().message, extras: {} };
  return { code: ErrorCode.internalError, message: 'Unexpected server error; retry with exponential backoff.', extras: {} };
}
