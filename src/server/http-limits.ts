/**
 * Hostile connections: body and header sizes and the server timeouts (docs/DECISIONS.md,
 * "Hostile input"). Errors Node answers itself, before Fastify sees a request (oversized
 * headers, a request that did not arrive in time, a malformed request line), are written in
 * the service's JSON error shape too; the two requests Node would refuse after parsing them
 * (no Host, an unknown Expect) are handed to Fastify and refused there (registerHttpRefusals).
 */
import { randomUUID } from 'node:crypto';
import { STATUS_CODES, type IncomingMessage, type ServerOptions } from 'node:http';
import type { Socket } from 'node:net';
import type { FastifyInstance } from 'fastify';
import { ERROR_HTTP_STATUS, ErrorCode } from '../domain/errors.js';
import { sendError } from './http-errors.js';

/** Default request body limit (/api/v1, /api/public, /graphql/stream, ...). */
export const BODY_LIMIT_BYTES = 64 * 1024;
/**
 * /graphql: the admin's upsertMatchAnalysis carries up to 20,000 characters, which an
 * ASCII-only JSON encoder (Python's default) sends as up to 120,000 bytes of \uXXXX escapes.
 */
export const GRAPHQL_BODY_LIMIT_BYTES = 128 * 1024;
/** Request line plus all headers (Node's --max-http-header-size, set explicitly). */
export const MAX_HEADER_BYTES = 16 * 1024;

export interface ServerTimeouts {
  /** The request line and every header must have arrived within this time (slowloris). */
  headersTimeoutMs: number;
  /** The whole request, body included, must have arrived within this time. */
  requestTimeoutMs: number;
  /** A socket with no traffic either way for this long is closed (slow readers, stalled peers). */
  connectionTimeoutMs: number;
  /** An idle keep-alive connection between two requests is closed after this. */
  keepAliveTimeoutMs: number;
  /** How often Node checks the headers and request timeouts (their granularity). */
  connectionsCheckingIntervalMs: number;
}

export const DEFAULT_SERVER_TIMEOUTS: ServerTimeouts = {
  headersTimeoutMs: 10_000,
  requestTimeoutMs: 30_000,
  connectionTimeoutMs: 60_000,
  keepAliveTimeoutMs: 5_000,
  connectionsCheckingIntervalMs: 1_000,
};

/**
 * Node's http options. The headers and request timeouts apply until a request has been
 * received in full, so an event stream (a GET, complete as soon as its headers are in) is never
 * cut by them; only the inactivity timeout applies to it, and streams write a heartbeat
 * more often than that (see socketTimeoutMs).
 */
export function nodeHttpOptions(timeouts: ServerTimeouts): ServerOptions {
  return {
    maxHeaderSize: MAX_HEADER_BYTES,
    // Node would answer a missing Host itself, with an empty body: registerHttpRefusals does.
    requireHostHeader: false,
    headersTimeout: timeouts.headersTimeoutMs,
    requestTimeout: timeouts.requestTimeoutMs,
    connectionsCheckingInterval: timeouts.connectionsCheckingIntervalMs,
  };
}

/** The inactivity timeout, never shorter than twice the SSE heartbeat: a quiet stream stays open. */
export function socketTimeoutMs(timeouts: ServerTimeouts, heartbeatSeconds: number): number {
  return Math.max(timeouts.connectionTimeoutMs, 2 * heartbeatSeconds * 1000);
}

function clientErrorCode(error: NodeJS.ErrnoException): ErrorCode {
  if (error.code === 'HPE_HEADER_OVERFLOW') return ErrorCode.headersTooLarge;
  if (error.code === 'ERR_HTTP_REQUEST_TIMEOUT') return ErrorCode.requestTimeout;
  return ErrorCode.invalidRequest;
}

const CLIENT_ERROR_MESSAGES: Partial<Record<ErrorCode, string>> = {
  [ErrorCode.headersTooLarge]: `The request line and headers exceed ${MAX_HEADER_BYTES} bytes.`,
  [ErrorCode.requestTimeout]: 'The request did not arrive in time.',
  [ErrorCode.invalidRequest]: 'The request is not valid HTTP.',
};

/** Fastify's clientErrorHandler: JSON { error, message } and X-Request-Id, then the socket is closed. */
export function clientErrorHandler(error: NodeJS.ErrnoException, socket: Socket): void {
  if (error.code === 'ECONNRESET' || socket.destroyed) return;
  const code = clientErrorCode(error);
  const status = ERROR_HTTP_STATUS[code];
  const body = JSON.stringify({ error: code, message: CLIENT_ERROR_MESSAGES[code] });
  // As Node's own handler: never write into a response that has already started.
  const inFlight = (socket as Socket & { _httpMessage?: { headersSent?: boolean } })._httpMessage;
  if (socket.writable && !inFlight?.headersSent) {
    socket.write(
      `HTTP/1.1 ${status} ${STATUS_CODES[status]}\r\n` +
        `Content-Type: application/json; charset=utf-8\r\nContent-Length: ${Buffer.byteLength(body)}\r\n` +
        `X-Request-Id: ${randomUUID()}\r\nConnection: close\r\n\r\n${body}`,
    );
  }
  socket.destroy();
}

/**
 * Two requests Node parses and would then answer itself, with an empty body and no
 * X-Request-Id: an HTTP/1.1 request without a Host header (400, RFC 9112 3.2) and one whose
 * Expect asks for anything but 100-continue (417). Both are handed to Fastify instead (Node's
 * host check is off in nodeHttpOptions; a checkExpectation listener routes the request as
 * usual) and refused by an onRequest hook through the one error exit: 400 invalid_request,
 * and 400 invalid_parameter naming Expect. Like Node's other refusals they come before
 * authentication and are never counted. Register it after the hook that sets X-Request-Id.
 */
export function registerHttpRefusals(app: FastifyInstance): void {
  const unmetExpectations = new WeakSet<IncomingMessage>();
  // Node emits this instead of 'request' (and answers nothing) for an expectation it cannot
  // meet: only HTTP/1.1, anything but 100-continue, which it meets itself.
  app.server.on('checkExpectation', (req, res) => {
    unmetExpectations.add(req);
    app.server.emit('request', req, res);
  });
  app.addHook('onRequest', (req, reply, done) => {
    if (unmetExpectations.has(req.raw)) {
      sendError(reply, ErrorCode.invalidParameter, 'Expect supports only 100-continue.', { parameter: 'Expect' });
      return;
    }
    if (req.raw.httpVersionMajor === 1 && req.raw.httpVersionMinor === 1 && req.headers.host === undefined) {
      sendError(reply, ErrorCode.invalidRequest, 'An HTTP/1.1 request needs a Host header.');
      return;
    }
    done();
  });
}
