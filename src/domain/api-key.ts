/** API keys and tiers (docs/API.md, "Authentication and tiers"). */
import { randomBytes as cryptoRandomBytes } from 'node:crypto';
import { secretDigest } from './secrets.js';

export const API_KEY_PREFIX = 'service_';
const API_KEY_BYTES = 32;
const API_KEY_SHAPE = /^service_[0-9a-f]{64}$/;
const DISPLAY_PREFIX_LENGTH = 12;

/** A new plaintext key: prefix + 64 lowercase hex. Shown once; only its hash is stored. */
export function generateApiKey(randomBytes: (n: number) => Buffer = cryptoRandomBytes): string {
  const bytes = randomBytes(API_KEY_BYTES);
  if (bytes.length !== API_KEY_BYTES) {
    throw new RangeError(`generateApiKey: expected ${API_KEY_BYTES} random bytes, got ${bytes.length}`);
  }
  return API_KEY_PREFIX + bytes.toString('hex');
}

/** Shape check before any lookup, so malformed keys never reach the database. */
export function isApiKeyShape(value: string): boolean {
  return typeof value === 'string' && API_KEY_SHAPE.test(value);
}

/** SHA-256 suffices (no slow hash needed): keys carry 256 bits of entropy. */
export function hashApiKey(key: string): string {
  return apiKeyHashOfDigest(secretDigest(key));
}

/** hashApiKey from the key's secretDigest, when the caller has it already. */
export function apiKeyHashOfDigest(digest: Buffer): string {
  return digest.toString('hex');
}

/** Enough to recognise a key in listings without revealing it, e.g. "service_1a2b". */
export function apiKeyDisplayPrefix(key: string): string {
  return key.slice(0, DISPLAY_PREFIX_LENGTH);
}

const BEARER = /^bearer ([^\s]+)$/i;

/** The token of "Bearer <token>" (scheme case-insensitive, one space, one token), else null. */
export function parseBearerToken(header: string | undefined): string | null {
  if (typeof header !== 'string') return null;
  const match = BEARER.exec(header);
  return match?.[1] ?? null;
}

export const TIERS = ['starter', 'growth', 'enterprise'] as const;
export type Tier = (typeof TIERS)[number];

export function isTier(value: string): value is Tier {
  return (TIERS as readonly string[]).includes(value);
}

/** Position in TIERS: higher tiers include everything lower ones may do. */
export function tierRank(t: Tier): number {
  const rank = TIERS.indexOf(t);
  if (rank < 0) throw new RangeError(`Unknown tier ${String(t)}`);
  return rank;
}

export function tierAtLeast(t: Tier, min: Tier): boolean {
  return tierRank(t) >= tierRank(min);
}
