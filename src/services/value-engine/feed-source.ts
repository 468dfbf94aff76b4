/**
 * Where the engine's odds and scores come from: The Odds API v4 over HTTP, or the built-in
 * simulated feed of the embedded demo. Both hand back the JSON body as v4 sends it, so the same
 * parser (src/domain/odds-feed.ts) reads both.
 */
import { Agent, request } from 'undici';
import { redactUrl } from '../../domain/redaction.js';
import { SimulatedFeed } from '../../seed/simulated-feed.js';
import type { Clock } from '../../domain/clock.js';

export interface FeedResponse {
  /** The JSON-parsed body, not yet validated. */
  body: unknown;
  /** v4's x-requests-remaining / x-requests-used, when sent. */
  requestsRemaining: number | null;
  requestsUsed: number | null;
}

export interface FeedSource {
  /** `GET /v4/sports/{sportKey}/odds?...&markets=h2h&oddsFormat=decimal&dateFormat=iso` */
  odds(sportKey: string, signal?: AbortSignal): Promise<FeedResponse>;
  /** `GET /v4/sports/{sportKey}/scores?...&daysFrom=3&dateFormat=iso` */
  scores(sportKey: string, signal?: AbortSignal): Promise<FeedResponse>;
  /** For logs: where the feed is, without credentials. */
  readonly description: string;
  /** Releases connections (HTTP feed). */
  close?(): Promise<void>;
}

export type FeedErrorKind = 'timeout' | 'network' | 'http_status' | 'rate_limited' | 'malformed_json' | 'too_large';

/** A feed request that produced nothing usable; `retryAfterMs` is set from a 429's Retry-After. */
export class FeedError extends Error {
  constructor(
    readonly kind: FeedErrorKind,
    message: string,
    readonly retryAfterMs: number | null = null,
  ) {
    super(message);
    this.name = 'FeedError';
  }
}

/** A feed answer is given this long, headers and body together. */
export const FEED_TIMEOUT_MS = 10_000;
/** Far above a real v4 answer (a busy sport with every region is a few MB). */
export const MAX_FEED_BODY_BYTES = 32 * 1024 * 1024;
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

export interface HttpFeedOptions {
  /** ODDS_FEED_URL, no trailing slash. */
  url: string;
  apiKey: string;
  regions: string[];
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
      markets: 'h2h',
      oddsFormat: 'decimal',
      dateFormat: 'iso',
    }, signal);
  }

  scores(sportKey: string, signal?: AbortSignal): Promise<FeedResponse> {
    return this.get(`/v4/sports/${encodeURIComponent(sportKey)}/scores`, { daysFrom: '3', dateFormat: 'iso' }, signal);
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
      if (response.statusCode === 429) {
        await response.body.dump().catch(() => undefined);
        throw new FeedError('rate_limited', `${shown} answered 429 (rate limited)`, parseRetryAfter(header('retry-after'), Date.now()));
      }
      if (response.statusCode < 200 || response.statusCode > 299) {
        await response.body.dump().catch(() => undefined);
        throw new FeedError('http_status', `${shown} answered HTTP ${response.statusCode}`);
      }
      const text = await readCapped(response.body, MAX_FEED_BODY_BYTES);
      let body: unknown;
      try {
        body = JSON.parse(text);
      } catch {
        throw new FeedError('malformed_json', `${shown} answered a body that is not JSON`);
      }
      return { body, requestsRemaining, requestsUsed };
    } catch (error) {
      if (error instanceof FeedError) throw error;
      if (timeout.aborted) throw new FeedError('timeout', `no complete answer from ${shown} within ${timeoutMs / 1000} s`);
      throw new FeedError('network', `request to ${shown} failed: ${(error as Error).message}`);
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

/** The embedded demo's feed: the simulated market at the clock's time, in the v4 format. */
export class SimulatedFeedSource implements FeedSource {
  readonly description = 'the built-in simulated feed (DEMO_FEED)';
  private readonly feed: SimulatedFeed;

  constructor(private readonly clock: Clock, sportKeys: readonly string[]) {
    const startedAt = clock.now();
    // Seeded by the start time: event ids are derived from the seed, so each start plays new
    // fixtures instead of reusing the ids (and the engine's pick slots) of an earlier run.
    const seed = Math.floor(startedAt.getTime() / 1000) % 2_147_483_647;
    this.feed = new SimulatedFeed({ startedAt, seed, sportKeys: [...sportKeys] });
  }

  async odds(sportKey: string): Promise<FeedResponse> {
    return { body: this.feed.odds(sportKey, this.clock.now()), requestsRemaining: null, requestsUsed: null };
  }

  async scores(sportKey: string): Promise<FeedResponse> {
    return { body: this.feed.scores(sportKey, this.clock.now()), requestsRemaining: null, requestsUsed: null };
  }
}
