/**
 * What the service's logs may carry: never a credential. Authorization headers, cookies and
 * keys in bodies are redacted by path; a request's URL is logged with credential-looking query
 * parameters and API keys replaced (src/domain/redaction.ts).
 */
import { context, isSpanContextValid, trace } from '@opentelemetry/api';
import { LogController, type FastifyReply, type FastifyRequest } from 'fastify';
import type { LoggerOptions } from 'pino';
import { REDACTED, redactUrl } from '../domain/redaction.js';
import { tracingActive } from './tracing-switch.js';

export const LOG_REDACT_PATHS = [
  'req.headers.authorization',
  'req.headers.cookie',
  'headers.authorization',
  'headers.cookie',
  '*.key',
  '*.hmac_secret',
  '*.adminToken',
];

interface LoggedRequest {
  method: string;
  url: string;
  host?: string;
  ip?: string;
  socket?: { remotePort?: number };
}

/** Fastify's request serializer, with the URL redacted. */
function serializeRequest(req: LoggedRequest) {
  return { method: req.method, url: redactUrl(req.url), host: req.host, remoteAddress: req.ip, remotePort: req.socket?.remotePort };
}

/** Fastify's line when the server listens (its default text), as src/serve.ts asks for it. */
const LISTENING_PREFIX = 'Server listening at ';
/** pino's number for info. */
const INFO = 30;
export function listeningText(address: string): string {
  return `${LISTENING_PREFIX}${address}`;
}

export interface ServiceLoggerExtras {
  /**
   * Log Fastify's "Server listening at ..." at debug instead of info: in embedded mode the start
   * banner, printed right after, says the same for people, and nothing at info comes before it.
   */
  quietListening?: boolean;
}

/**
 * The active span's ids on a line logged while one is active (tracing on only), under the names
 * OpenTelemetry's pino instrumentation uses: a line leads to its trace and back.
 */
export function activeTraceFields(): Record<string, string> {
  const span = trace.getSpan(context.active());
  if (!span) return {};
  const spanContext = span.spanContext();
  if (!isSpanContextValid(spanContext)) return {};
  return { trace_id: spanContext.traceId, span_id: spanContext.spanId, trace_flags: `0${spanContext.traceFlags.toString(16)}` };
}

/** The pino options of every service logger (the entry point's, and the tests' that check logging). */
export function serviceLoggerOptions(level: string, extras: ServiceLoggerExtras = {}): LoggerOptions {
  const options: LoggerOptions = { level, redact: { paths: LOG_REDACT_PATHS, censor: REDACTED }, serializers: { req: serializeRequest } };
  if (tracingActive()) options.mixin = activeTraceFields;
  if (extras.quietListening) {
    options.hooks = {
      // Fastify logs the listening line with its own logger.info and no option for the level.
      logMethod(args, method, levelValue) {
        const [message] = args;
        if (levelValue === INFO && typeof message === 'string' && message.startsWith(LISTENING_PREFIX)) return this.debug(message);
        return method.apply(this, args);
      },
    };
  }
  return options;
}

/**
 * Fastify's request logging for every mode, but a client closing a stream (an SSE reader going
 * away, the ordinary end of every stream) is logged at debug, not info: it is not news. Other
 * stream errors stay at warn.
 */
export class ServiceLogs extends LogController {
  override streamError(error: Error, request: FastifyRequest, reply: FastifyReply): void {
    if ((error as NodeJS.ErrnoException).code !== 'ERR_STREAM_PREMATURE_CLOSE') return super.streamError(error, request, reply);
    if (this.isLogDisabled(request)) return;
    reply.log.debug({ res: reply }, 'stream closed by the client');
  }
}

/**
 * Fastify's per-request lines ("incoming request", "request completed") at debug instead of
 * info; a request that failed is still logged at error. For embedded mode (src/serve.ts), a
 * developer's machine, where a line per request at the default level buries the start banner;
 * LOG_LEVEL=debug shows them again.
 */
export class DebugRequestLogs extends ServiceLogs {
  override incomingRequest(request: FastifyRequest): void {
    if (this.isLogDisabled(request)) return;
    request.log.debug({ req: request }, 'incoming request');
  }

  override requestCompleted(error: Error | null | undefined, request: FastifyRequest, reply: FastifyReply): void {
    if (error) return super.requestCompleted(error, request, reply);
    if (this.isLogDisabled(request)) return;
    reply.log.debug({ res: reply, responseTime: reply.elapsedTime }, 'request completed');
  }
}
