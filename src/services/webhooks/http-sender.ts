/**
 * One webhook POST over undici, SSRF-safe:
 *
 * - every send re-runs guard.check(url), so DNS is re-resolved and a host that now answers
 *   a non-public address fails as 'invalid_url' before any connection is attempted;
 * - the shared Agent's connect.lookup is createGuardedLookup(guard): each new connection
 *   resolves again through the guard and connects only to the addresses judged in that
 *   lookup. Resolving twice closes the rebinding window between the pre-check and the
 *   connect (a per-send pinned Agent would too, but would give up keep-alive pooling,
 *   which the ~500 deliveries/s target needs). A pooled connection being reused was
 *   opened to an address that was checked at its connect time;
 * - redirects are never followed (undici's request does not follow them unless a redirect
 *   interceptor is installed), and a 3xx is a failed delivery.
 */
import { performance } from 'node:perf_hooks';
import { SpanStatusCode } from '@opentelemetry/api';
import { Agent } from 'undici';
import { ErrorCode, isAppError, type AppError } from '../../domain/errors.js';
import { responseBodyText } from '../../domain/webhook.js';
import { inSpan } from '../spans.js';
import { createGuardedLookup, type CheckedTarget, type WebhookUrlGuard } from './url-guard.js';

export type SendErrorKind = 'invalid_url' | 'timeout' | 'connection' | 'tls' | 'redirect' | 'http_status';

export interface SendOutcome {
  ok: boolean;
  statusCode: number | null;
  errorKind: SendErrorKind | null;
  errorMessage: string | null;
  /**
   * The first maxResponseBytes of the response body decoded as UTF-8 (invalid bytes and NUL as
   * U+FFFD, a character cut at the end left out; see responseBodyText); null when no response arrived.
   */
  responseBody: string | null;
  durationMs: number;
}

export interface SendInput {
  url: string;
  headers: Record<string, string>;
  body: string | Buffer;
}

export interface WebhookSenderOptions {
  guard: WebhookUrlGuard;
  /** Whole send, DNS to last body byte read. */
  timeoutMs?: number;
  maxResponseBytes?: number;
  userAgent: string;
}

export const DEFAULT_WEBHOOK_TIMEOUT_MS = 10_000;
export const DEFAULT_MAX_RESPONSE_BYTES = 4096;

// OpenSSL certificate verification codes as node reports them in error.code.
const TLS_CERT_CODES = new Set([
  'CERT_HAS_EXPIRED',
  'CERT_NOT_YET_VALID',
  'CERT_REVOKED',
  'CERT_UNTRUSTED',
  'CERT_REJECTED',
  'CERT_SIGNATURE_FAILURE',
  'DEPTH_ZERO_SELF_SIGNED_CERT',
  'SELF_SIGNED_CERT_IN_CHAIN',
  'UNABLE_TO_GET_ISSUER_CERT',
  'UNABLE_TO_GET_ISSUER_CERT_LOCALLY',
  'UNABLE_TO_VERIFY_LEAF_SIGNATURE',
  'HOSTNAME_MISMATCH',
]);

const TIMEOUT_CODES = new Set(['UND_ERR_CONNECT_TIMEOUT', 'UND_ERR_HEADERS_TIMEOUT', 'UND_ERR_BODY_TIMEOUT', 'ETIMEDOUT']);

/** The error and everything it wraps (cause chains, happy-eyeballs AggregateErrors). */
function errorChain(error: unknown): unknown[] {
  const seen: unknown[] = [];
  const queue: unknown[] = [error];
  while (queue.length > 0 && seen.length < 20) {
    const next = queue.shift();
    if (next === undefined || next === null || seen.includes(next)) continue;
    seen.push(next);
    if (next instanceof AggregateError) queue.push(...next.errors);
    if (next instanceof Error && next.cause !== undefined) queue.push(next.cause);
  }
  return seen;
}

function fieldOf(error: unknown, name: string): string {
  if (typeof error !== 'object' || error === null) return '';
  const value = (error as Record<string, unknown>)[name];
  return typeof value === 'string' ? value : '';
}

function invalidUrlIn(chain: unknown[]): AppError | undefined {
  return chain.find((e): e is AppError => isAppError(e) && e.code === ErrorCode.invalidUrl);
}

function classify(error: unknown, signal: AbortSignal): SendErrorKind {
  const chain = errorChain(error);
  // The guard refusing at connect time (DNS now answers a private address) is a URL verdict.
  if (invalidUrlIn(chain) !== undefined) return 'invalid_url';
  if (signal.aborted) return 'timeout';
  if (chain.some((e) => TIMEOUT_CODES.has(fieldOf(e, 'code')) || fieldOf(e, 'name') === 'TimeoutError')) return 'timeout';
  const isTls = (e: unknown): boolean => {
    const code = fieldOf(e, 'code');
    return (
      TLS_CERT_CODES.has(code) ||
      code.startsWith('ERR_TLS_') ||
      code.startsWith('ERR_SSL_') ||
      fieldOf(e, 'library') === 'SSL routines'
    );
  };
  if (chain.some(isTls)) return 'tls';
  return 'connection';
}

function messageOf(error: unknown): string {
  // The guard's own wording ("url host resolves to a non-public address"), however wrapped.
  const invalidUrl = invalidUrlIn(errorChain(error));
  if (invalidUrl !== undefined) return invalidUrl.message;
  if (error instanceof Error) {
    const code = fieldOf(error, 'code');
    return code !== '' && !error.message.includes(code) ? `${code}: ${error.message}` : error.message;
  }
  return String(error);
}

/** Rejects with signal.reason when the signal fires first; the loser keeps running unobserved. */
function raceSignal<T>(promise: Promise<T>, signal: AbortSignal): Promise<T> {
  if (signal.aborted) return Promise.reject(signal.reason);
  return new Promise<T>((resolve, reject) => {
    const onAbort = () => reject(signal.reason);
    signal.addEventListener('abort', onAbort, { once: true });
    promise.then(
      (value) => {
        signal.removeEventListener('abort', onAbort);
        resolve(value);
      },
      (error: unknown) => {
        signal.removeEventListener('abort', onAbort);
        reject(error);
      },
    );
  });
}

/**
 * Reads at most `limit` bytes, then destroys the stream so a huge body is never buffered.
 * `truncated`: the answer had more bytes than that.
 */
async function readCapped(body: AsyncIterable<unknown> & { destroy(): unknown }, limit: number): Promise<{ bytes: Buffer; truncated: boolean }> {
  const chunks: Buffer[] = [];
  let size = 0;
  for await (const chunk of body) {
    const buffer = Buffer.isBuffer(chunk) ? chunk : Buffer.from(String(chunk));
    const room = limit - size;
    if (buffer.length > room) {
      chunks.push(buffer.subarray(0, room));
      size = limit;
      // Leaving the loop destroys the body; undici then drops that connection instead of
      // returning it to the pool, which is the right trade for an oversized answer.
      return { bytes: Buffer.concat(chunks, size), truncated: true };
    }
    chunks.push(buffer);
    size += buffer.length;
  }
  return { bytes: Buffer.concat(chunks, size), truncated: false };
}

/** What the attempt's span tells: the event and delivery (from the signed headers) and the receiver's host. */
function deliveryAttributes(input: SendInput): Record<string, string | boolean> {
  const header = (name: string) => Object.entries(input.headers).find(([key]) => key.toLowerCase() === name)?.[1];
  const attributes: Record<string, string | boolean> = {};
  const eventType = header('x-service-event');
  const deliveryId = header('x-service-delivery');
  if (eventType) attributes['webhook.event_type'] = eventType;
  if (deliveryId) attributes['webhook.delivery_id'] = deliveryId;
  if (header('x-service-test') === 'true') attributes['webhook.test'] = true;
  try {
    attributes['server.address'] = new URL(input.url).hostname;
  } catch {
    // An unparsable URL fails the attempt as invalid_url; the span just lacks the host.
  }
  return attributes;
}

export class WebhookSender {
  private readonly guard: WebhookUrlGuard;
  private readonly timeoutMs: number;
  private readonly maxResponseBytes: number;
  private readonly userAgent: string;
  private readonly agent: Agent;

  constructor(options: WebhookSenderOptions) {
    this.guard = options.guard;
    this.timeoutMs = options.timeoutMs ?? DEFAULT_WEBHOOK_TIMEOUT_MS;
    this.maxResponseBytes = options.maxResponseBytes ?? DEFAULT_MAX_RESPONSE_BYTES;
    this.userAgent = options.userAgent;
    this.agent = new Agent({
      connect: { lookup: createGuardedLookup(this.guard), timeout: this.timeoutMs },
      headersTimeout: this.timeoutMs,
      bodyTimeout: this.timeoutMs,
      // Receivers are ordinary HTTP/1.1 endpoints; h1 keeps abort/timeout behaviour per
      // request simple, and keep-alive pooling already gives the throughput we need.
      allowH2: false,
    });
  }

  /**
   * One attempt, as a `webhook.deliver` span (docs/OPERATIONS.md, "Traces"): undici's request
   * span is its child, and the `traceparent` header the receiver gets names that request.
   */
  send(input: SendInput): Promise<SendOutcome> {
    return inSpan('webhook.deliver', deliveryAttributes(input), async (span) => {
      const outcome = await this.attempt(input);
      if (outcome.statusCode !== null) span.setAttribute('http.response.status_code', outcome.statusCode);
      if (!outcome.ok) {
        span.setAttribute('error.type', outcome.errorKind ?? 'error');
        span.setStatus({ code: SpanStatusCode.ERROR, message: outcome.errorMessage ?? undefined });
      }
      return outcome;
    });
  }

  private async attempt(input: SendInput): Promise<SendOutcome> {
    const started = performance.now();
    const elapsed = () => Math.round(performance.now() - started);
    // One deadline for the whole delivery; undici's own timeouts are per phase.
    const signal = AbortSignal.timeout(this.timeoutMs);
    const failure = (errorKind: SendErrorKind, errorMessage: string, statusCode: number | null = null, responseBody: string | null = null): SendOutcome => ({
      ok: false,
      statusCode,
      errorKind,
      errorMessage,
      responseBody,
      durationMs: elapsed(),
    });

    let target: CheckedTarget;
    try {
      target = await raceSignal(this.guard.check(input.url), signal);
    } catch (error) {
      return failure(classify(error, signal), messageOf(error));
    }

    const headers: Record<string, string> = {};
    for (const [name, value] of Object.entries(input.headers)) headers[name.toLowerCase()] = value;
    headers['content-type'] = 'application/json';
    headers['user-agent'] = this.userAgent;

    let statusCode: number | null = null;
    try {
      const response = await this.agent.request({
        origin: target.url.origin,
        path: `${target.url.pathname}${target.url.search}`,
        method: 'POST',
        headers,
        body: input.body,
        signal,
      });
      statusCode = response.statusCode;
      // Bytes decoded with replacement: the text holds no invalid UTF-8, NUL or half character.
      const read = await readCapped(response.body, this.maxResponseBytes);
      const responseBody = responseBodyText(read.bytes, { truncated: read.truncated, maxBytes: this.maxResponseBytes });
      if (statusCode >= 200 && statusCode < 300) {
        return { ok: true, statusCode, errorKind: null, errorMessage: null, responseBody, durationMs: elapsed() };
      }
      if (statusCode >= 300 && statusCode < 400) {
        const location = response.headers.location;
        const where = typeof location === 'string' ? ` to ${location}` : '';
        return failure('redirect', `receiver answered ${statusCode}${where}; redirects are not followed`, statusCode, responseBody);
      }
      return failure('http_status', `receiver answered ${statusCode}`, statusCode, responseBody);
    } catch (error) {
      return failure(classify(error, signal), messageOf(error), statusCode);
    }
  }

  /** Closes pooled connections once in-flight deliveries finish. */
  async close(): Promise<void> {
    await this.agent.close();
  }
}
