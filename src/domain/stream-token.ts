/**
 * Stream tokens (docs/API.md, "Frontends"): a short-lived, read-only credential a customer's
 * backend mints with its Enterprise key for a browser. It grants one thing, reading the issuing
 * key's pick stream, and only from the origins it names. Pure: the random bytes come in.
 */
import { randomBytes as cryptoRandomBytes } from 'node:crypto';
import { InvalidParameterError } from './errors.js';
import { secretDigest } from './secrets.js';

export const STREAM_TOKEN_PREFIX = 'sst_';
const STREAM_TOKEN_BYTES = 32;
/** 32 random bytes in unpadded base64url are 43 characters. */
const STREAM_TOKEN_SHAPE = /^sst_[A-Za-z0-9_-]{43}$/;

export const STREAM_TOKEN_TTL = Object.freeze({ min: 60, max: 3600, default: 900 });
export const STREAM_TOKEN_MAX_ORIGINS = 10;
/** Tokens one key may mint per rolling hour. */
export const STREAM_TOKENS_PER_HOUR = 60;
export const DEFAULT_STREAM_TOKEN_MAX_STREAMS = 1000;
/** Streams one token may open in a rolling minute (STREAM_TOKEN_OPENS_PER_MINUTE): a page reconnects, a leaked token cannot flood. */
export const STREAM_TOKEN_OPENS_PER_MINUTE = Object.freeze({ min: 1, max: 600, default: 30 });

/** A new token: `sst_` + 256 random bits in base64url. Shown once; only its hash is stored. */
export function generateStreamToken(randomBytes: (n: number) => Buffer = cryptoRandomBytes): string {
  const bytes = randomBytes(STREAM_TOKEN_BYTES);
  if (bytes.length !== STREAM_TOKEN_BYTES) throw new RangeError(`generateStreamToken: expected ${STREAM_TOKEN_BYTES} random bytes, got ${bytes.length}`);
  return STREAM_TOKEN_PREFIX + bytes.toString('base64url');
}

/** Shape check before any lookup, so a malformed token never reaches the database. */
export function isStreamTokenShape(value: unknown): value is string {
  return typeof value === 'string' && STREAM_TOKEN_SHAPE.test(value);
}

export function hashStreamToken(token: string): string {
  return secretDigest(token).toString('hex');
}

/** ttl_seconds: a whole number from 60 to 3600; absent gives 900. */
export function validateStreamTokenTtl(value: unknown): number {
  if (value === undefined || value === null) return STREAM_TOKEN_TTL.default;
  if (typeof value !== 'number' || !Number.isInteger(value) || value < STREAM_TOKEN_TTL.min || value > STREAM_TOKEN_TTL.max) {
    throw new InvalidParameterError('ttl_seconds', `ttl_seconds must be a whole number of seconds from ${STREAM_TOKEN_TTL.min} to ${STREAM_TOKEN_TTL.max}`);
  }
  return value;
}

const LOOPBACK_HOSTS = new Set(['localhost', '127.0.0.1']);

/**
 * origins: at most 10 exact origins, each `https://host[:port]`, or `http://` on localhost or
 * 127.0.0.1 (a developer's machine); no path, query, credentials or trailing slash, as a
 * browser sends `Origin`. Returned as the browser writes them (lower-case host, default port
 * dropped), without repeats.
 */
export function validateStreamTokenOrigins(value: unknown): string[] {
  if (value === undefined || value === null) return [];
  if (!Array.isArray(value)) throw new InvalidParameterError('origins', 'origins must be an array of origins such as "https://app.example.com"');
  if (value.length > STREAM_TOKEN_MAX_ORIGINS) throw new InvalidParameterError('origins', `origins must list at most ${STREAM_TOKEN_MAX_ORIGINS} origins`);
  const origins: string[] = [];
  value.forEach((entry, index) => {
    const origin = originOf(entry);
    if (origin === null) {
      throw new InvalidParameterError(
        'origins',
        `origins[${index}] must be an exact origin: https://host[:port], or http:// on localhost or 127.0.0.1, with no path or trailing slash`,
      );
    }
    if (!origins.includes(origin)) origins.push(origin);
  });
  return origins;
}

function originOf(entry: unknown): string | null {
  if (typeof entry !== 'string' || entry.length > 300 || /\s/.test(entry)) return null;
  let url: URL;
  try {
    url = new URL(entry);
  } catch {
    return null;
  }
  if (url.origin === 'null' || url.username || url.password || url.search || url.hash) return null;
  // The origin itself, nothing more: `https://a.example/` or `https://a.example/app` is not one.
  if (!/^[a-z]+:\/\/[^/]+$/i.test(entry)) return null;
  if (url.protocol === 'https:') return url.origin;
  if (url.protocol === 'http:' && LOOPBACK_HOSTS.has(url.hostname)) return url.origin;
  return null;
}

/**
 * Whether a request's `Origin` may use a token: one of its origins exactly; a token without
 * origins is for non-browser use and refuses any request carrying an Origin, and a token with
 * origins refuses one without (it was minted for browsers on those origins).
 */
export function streamTokenOriginAllowed(origins: readonly string[], requestOrigin: string | undefined): boolean {
  if (origins.length === 0) return requestOrigin === undefined;
  return requestOrigin !== undefined && origins.includes(requestOrigin);
}
