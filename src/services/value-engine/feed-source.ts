/**
 * Where the engine's odds and scores come from: The Odds API v4 over HTTP, or the built-in
 * simulated feed of the embedded demo. Both hand back the JSON body as v4 sends it, so the same
 * parser (src/domain/odds-feed.ts) reads both.
 */
import { Agent, request } from 'undici';
import { REDACTED, redactUrl } from '../../domain/redaction.js';
import { MARKETS } from '../../domain/market.js';
import { DEFAULT_SIMULATED_SEED, SIMULATED_SCHEDULE_ORIGIN_MS, SimulatedFeed } from './simulated-feed.js';
import type { Clock } from '../../domain/clock.js';

export interface FeedResponse {
  /** The JSON-parsed body, not yet validated. */
  body: unknown;
  /** v4's x-requests-remaining / x-requests-used, when sent. */
  requestsRemaining: number | null;
  requestsUsed: number | null;
}

export interface FeedSource {
  /** `GET /v4/sports/{sportKey}/odds?...&markets=h2h,spreads,totals&oddsFormat=decimal&dateFormat=iso` */
  odds(sportKey: string, signal?: AbortSignal): Promise<FeedResponse>;
  /** `GET /v4/sports/{sportKey}/scores?...&daysFrom=3&dateFormat=iso` */
  scores(sportKey: string, signal?: AbortSignal): Promise<FeedResponse>;
  /** `GET /v4/sports/{sportKey}/events?dateFormat=iso`: the kickoffs, free of credits (a credit budget's plan reads them). */
  events?(sportKey: string, signal?: AbortSignal): Promise<FeedResponse>;
  /** For logs: where the feed is, without credentials. */
  readonly description: string;
  /** False for a source that sends no requests (the simulated feed): the feed's request metrics count real requests only. */
  readonly counted?: boolean;
  /** Releases connections (HTTP feed). */
  close?(): Promise<void>;
}

export type FeedErrorKind = 'timeout' | 'network' | 'http_status' | 'rate_limited' | 'malformed_json' | 'too_large';

/** What a feed answer told about itself, when there was an answer (all null otherwise). */
export interface FeedErrorDetails {
  /** The HTTP status of the answer. */
  status?: number | null;
  /** The feed's own `message` field of a JSON error body: at most 200 characters, credentials redacted. */
  feedMessage?: string | null;
  /** v4's x-requests-remaining / x-requests-used, when sent. */
  requestsRemaining?: number | null;
  requestsUsed?: number | null;
  /** v4's `error_code` of a JSON error body (`OUT_OF_USAGE_CREDITS`, `EXCEEDED_FREQ_LIMIT` ...), when it is one. */
  feedErrorCode?: string | null;
}

/**
 * A feed request that produced nothing usable; `retryAfterMs` is set from a 429's Retry-After.
 * When the feed answered, the answer's status, its `message` and the quota headers are kept: v4
 * answers 401 both for a bad key and for a plan with no requests left, and only these tell them
 * apart. Nothing in here carries the API key, so all of it may be logged.
 */
export class FeedError extends Error {
  readonly status: number | null;
  readonly feedMessage: string | null;
  readonly requestsRemaining: number | null;
  readonly requestsUsed: number | null;
  readonly feedErrorCode: string | null;

  constructor(
    readonly kind: FeedErrorKind,
    message: string,
    readonly retryAfterMs: number | null = null,
    details: FeedErrorDetails = {},
  ) {
    super(message);
    this.name = 'FeedError';
    this.status = details.status ?? null;
    this.feedMessage = details.feedMessage ?? null;
    this.requestsRemaining = details.requestsRemaining ?? null;
    this.requestsUsed = details.requestsUsed ?? null;
    this.feedErrorCode = details.feedErrorCode ?? null;
  }

  /** The feed answered 2xx (and charged for it) but its body could not be used: not JSON, too large, cut short. */
  get unusableSuccess(): boolean {
    return this.status !== null && this.status >= 200 && this.status <= 299;
  }

  /** The metrics' status label: the answer's status, or `error` when there was no usable answer. */
  get statusLabel(): string {
    return this.status === null || this.unusableSuccess ? 'error' : String(this.status);
  }

  /**
   * The feed says the key has no credits left: a 401 or 429 reporting 0 remaining, or v4's
   * OUT_OF_USAGE_CREDITS. A 429 for frequency (EXCEEDED_FREQ_LIMIT, credits left) is not.
   */
  get creditsExhausted(): boolean {
    if (this.feedErrorCode === 'OUT_OF_USAGE_CREDITS') return true;
    return (this.status === 401 || this.status === 429) && this.requestsRemaining === 0;
  }

  /** The fields a log line shows: those that are known. */
  logFields(): FeedErrorDetails {
    const fields: FeedErrorDetails = {};
    if (this.status !== null) fields.status = this.status;
    if (this.feedMessage !== null) fields.feedMessage = this.feedMessage;
    if (this.requestsRemaining !== null) fields.requestsRemaining = this.requestsRemaining;
    if (this.requestsUsed !== null) fields.requestsUsed = this.requestsUsed;
    if (this.feedErrorCode !== null) fields.feedErrorCode = this.feedErrorCode;
    return fields;
  }
}

/** A feed answer is given this long, headers and body together. */
export const FEED_TIMEOUT_MS = 10_000;
/** Far above a real v4 answer (a busy sport with every region is a few MB). */
export const MAX_FEED_BODY_BYTES = 32 * 1024 * 1024;
/** An error answer's body is read this far for its `message` (v4's are a few hundred bytes). */
const MAX_ERROR_BODY_BYTES = 64 * 1024;
/** The feed's `message` is logged at most this long. */
export const MAX_FEED_MESSAGE_LENGTH = 200;
/** A Retry-After longer than this is honoured as this (the next poll comes anyway). */
const MAX_RETRY_AFTER_MS = 5 * 60_000;

/** Retry-After as seconds or an HTTP date; null when absent or unreadable. */
export function parseRetryAfter(value: string | null, nowMs: number): number | null {
  if (value === null) return null;
  const trimmed = value.trim();
  if (/^\d{1,9}$/.test(trimmed)) return Math.min(Number(trimmed) * 1000, MAX_RETRY_AFTER_MS);
  const at = Date.parse(trimmed);
  if (Number.isNaN(at)) return null;
  return Math.min(Math.max(0, at - nowMs), MAX_RETRY_AFTER_MS);
}

function headerNumber(value: string | null): number | null {
  if (value === null || !/^\d{1,15}$/.test(value.trim())) return null;
  return Number(value.trim());
}

/** `apiKey=...`, `api_key: ...` and the like in free text (a URL's query is redactUrl's). */
const KEY_IN_TEXT = /\b(api[-_]?key|access[-_]?token|token|secret|password)(\s*[=:]\s*)[^\s&"',;:()<>[\]{}]+/gi;

/**
 * The feed's own `message` as a log may show it: the configured key (as is and URL-encoded) and
 * credential-looking parameters replaced wherever they stand, control characters made spaces,
 * then cut to 200 characters (after redacting, so a key is never left in half).
 */
export function feedMessageForLog(message: string, apiKey: string): string {
  let text = message;
  for (const secret of new Set([apiKey, encodeURIComponent(apiKey)])) {
    if (secret.length > 0) text = text.split(secret).join(REDACTED);
  }
  text = redactUrl(text).replace(KEY_IN_TEXT, `$1$2${REDACTED}`);
  // eslint-disable-next-line no-control-regex
  text = text.replace(/[\u0000-\u001f\u007f-\u009f]/g, ' ').trim();
  const characters = Array.from(text);
  return characters.length <= MAX_FEED_MESSAGE_LENGTH ? text : `${characters.slice(0, MAX_FEED_MESSAGE_LENGTH - 1).join('')}…`;
}

export interface HttpFeedOptions {
  /** ODDS_FEED_URL, no trailing slash. */
  url: string;
  apiKey: string;
  regions: string[];
  /** The v4 market keys asked for (ODDS_FEED_MARKETS); all when absent. */
  markets?: readonly string[];
  timeoutMs?: number;
}

/** The Odds API v4 (or any server speaking it) over HTTP. */
export class HttpFeedSource implements FeedSource {
  readonly description: string;
  // Its own pool: connections idle between polls are closed by us first, so a poll never
  // reuses a socket the feed has just closed; redirects are not followed (undici's default).
  private readonly agent = new Agent({ keepAliveTimeout: 2_000, keepAliveMaxTimeout: 2_000 });

  constructor(private readonly options: HttpFeedOptions) {
    this.description = redactUrl(options.url);
  }

  odds(sportKey: string, signal?: AbortSignal): Promise<FeedResponse> {
    return this.get(`/v4/sports/${encodeURIComponent(sportKey)}/odds`, {
      regions: this.options.regions.join(','),
      markets: (this.options.markets ?? MARKETS).join(','),
      oddsFormat: 'decimal',
      dateFormat: 'iso',
    }, signal);
  }

  scores(sportKey: string, signal?: AbortSignal): Promise<FeedResponse> {
    return this.get(`/v4/sports/${encodeURIComponent(sportKey)}/scores`, { daysFrom: '3', dateFormat: 'iso' }, signal);
  }

  events(sportKey: string, signal?: AbortSignal): Promise<FeedResponse> {
    return this.get(`/v4/sports/${encodeURIComponent(sportKey)}/events`, { dateFormat: 'iso' }, signal);
  }

  private async get(path: string, query: Record<string, string>, signal?: AbortSignal): Promise<FeedResponse> {
    const url = new URL(this.options.url + path);
    url.searchParams.set('apiKey', this.options.apiKey);
    for (const [name, value] of Object.entries(query)) url.searchParams.set(name, value);
    // Every message names the URL without its apiKey: these messages reach the logs.
    const shown = redactUrl(url.toString());
    const timeoutMs = this.options.timeoutMs ?? FEED_TIMEOUT_MS;
    const timeout = AbortSignal.timeout(timeoutMs);
    const combined = signal ? AbortSignal.any([signal, timeout]) : timeout;
    try {
      const response = await request(url, { method: 'GET', signal: combined, headers: { accept: 'application/json' }, dispatcher: this.agent });
      const header = (name: string) => {
        const value = response.headers[name];
        return typeof value === 'string' ? value : null;
      };
      const requestsRemaining = headerNumber(header('x-requests-remaining'));
      const requestsUsed = headerNumber(header('x-requests-used'));
      const status = response.statusCode;
      if (status < 200 || status > 299) {
        const { message, errorCode } = await this.errorBody(response.body);
        const details = { status, feedMessage: message, feedErrorCode: errorCode, requestsRemaining, requestsUsed };
        if (status === 429) {
          throw new FeedError('rate_limited', `${shown} answered 429 (rate limited)`, parseRetryAfter(header('retry-after'), Date.now()), details);
        }
        throw new FeedError('http_status', `${shown} answered HTTP ${status}`, null, details);
      }
      let text: string;
      try {
        text = await readCapped(response.body, MAX_FEED_BODY_BYTES);
      } catch (error) {
        // The feed answered (and charged): the status and its headers go with the failure.
        const answered = { status, requestsRemaining, requestsUsed };
        if (error instanceof FeedError) throw new FeedError(error.kind, error.message, null, answered);
        if (timeout.aborted) throw new FeedError('timeout', `no complete answer from ${shown} within ${timeoutMs / 1000} s`, null, answered);
        throw new FeedError('network', `request to ${shown} failed: ${(error as Error).message}`, null, answered);
      }
      let body: unknown;
      try {
        body = JSON.parse(text);
      } catch {
        throw new FeedError('malformed_json', `${shown} answered a body that is not JSON`, null, { status, requestsRemaining, requestsUsed });
      }
      return { body, requestsRemaining, requestsUsed };
    } catch (error) {
      if (error instanceof FeedError) throw error;
      if (timeout.aborted) throw new FeedError('timeout', `no complete answer from ${shown} within ${timeoutMs / 1000} s`);
      throw new FeedError('network', `request to ${shown} failed: ${(error as Error).message}`);
    }
  }

  /**
   * The `message` of an error answer's JSON body (v4: `{"message": "...", "error_code": "..."}`),
   * ready for a log, and its `error_code` when it is an upper-case code; null when the body is not
   * such JSON, too large or does not arrive in time.
   */
  private async errorBody(body: AsyncIterable<Buffer> & { destroy(): void }): Promise<{ message: string | null; errorCode: string | null }> {
    try {
      const parsed: unknown = JSON.parse(await readCapped(body, MAX_ERROR_BODY_BYTES));
      const fields = typeof parsed === 'object' && parsed !== null ? (parsed as { message?: unknown; error_code?: unknown }) : {};
      const message = typeof fields.message === 'string' && fields.message.trim() !== '' ? feedMessageForLog(fields.message, this.options.apiKey) : null;
      const errorCode = typeof fields.error_code === 'string' && /^[A-Z][A-Z0-9_]{0,63}$/.test(fields.error_code) ? fields.error_code : null;
      return { message, errorCode };
    } catch {
      body.destroy();
      return { message: null, errorCode: null };
    }
  }

  async close(): Promise<void> {
    await this.agent.close();
  }
}

async function readCapped(body: AsyncIterable<Buffer> & { destroy(): void }, maxBytes: number): Promise<string> {
  const chunks: Buffer[] = [];
  let total = 0;
  for await (const chunk of body) {
    total += chunk.byteLength;
    if (total > maxBytes) {
      body.destroy();
      throw new FeedError('too_large', `the feed's answer exceeds ${maxBytes} bytes`);
    }
    chunks.push(chunk);
  }
  return Buffer.concat(chunks).toString('utf8');
}

/**
 * The embedded demo's feed: the simulated market at the clock's time, in the v4 format. The
 * schedule is fixed (seed and origin), never derived from the start time: a restarted demo
 * plays the same fixtures at the same times, so an event whose picks were published before the
 * restart keeps its id, kickoff and final, and the first scores poll after its match ends
 * settles them.
 */
export class SimulatedFeedSource implements FeedSource {
  readonly description = 'the built-in simulated feed (DEMO_FEED)';
  readonly counted = false;
  private readonly feed: SimulatedFeed;

  constructor(private readonly clock: Clock, sportKeys: readonly string[]) {
    this.feed = new SimulatedFeed({ startedAt: new Date(SIMULATED_SCHEDULE_ORIGIN_MS), seed: DEFAULT_SIMULATED_SEED, sportKeys: [...sportKeys] });
  }

  async odds(sportKey: string): Promise<FeedResponse> {
    return { body: this.feed.odds(sportKey, this.clock.now()), requestsRemaining: null, requestsUsed: null };
  }

  async scores(sportKey: string): Promise<FeedResponse> {
    return { body: this.feed.scores(sportKey, this.clock.now()), requestsRemaining: null, requestsUsed: null };
  }
}
