import type { Tier } from './api-key.js';

/** Who is calling: decided once per request from the Authorization header. */
export type Principal =
  | { kind: 'anonymous' }
  /** A credential was presented but is not valid: any guarded field answers invalid_api_key. */
  | { kind: 'invalid' }
  | { kind: 'admin' }
  | { kind: 'apiKey'; apiKeyId: string; tier: Tier }
  /**
   * A stream token (docs/API.md, "Frontends"): reads the issuing key's pick stream and nothing
   * else, with the key's current tier, from its origins, until it expires.
   */
  | {
      kind: 'streamToken';
      /** The token's stored hash: what its own allowances (opens per minute) are counted by. */
      tokenHash: string;
      apiKeyId: string;
      tier: Tier;
      origins: readonly string[];
      /** Milliseconds from authentication to expiry, by the service's clock: an open stream ends then. */
      remainingMs: number;
    }
  /** A customer signed in to the dashboard (session cookie, dashboard adapter only; docs/DASHBOARD.md). */
  | { kind: 'account'; accountId: string; tier: Tier; sessionId: string };

/**
 * What an answer may depend on besides the request itself: the kind of caller and its tier.
 * Two callers of one access level see the same data (nothing cached or shared is per key), so
 * the caches of rendered answers and the shared subscription results key by it, never by key.
 */
export function accessLevelOf(principal: Principal): string {
  return 'tier' in principal ? `${principal.kind}:${principal.tier}` : principal.kind;
}
