import type { Tier } from './api-key.js';

/** Who is calling: decided once per request from the Authorization header. */
export type Principal =
  | { kind: 'anonymous' }
  /** A credential was presented but is not valid: any guarded field answers invalid_api_key. */
  | { kind: 'invalid' }
  | { kind: 'admin' }
  | { kind: 'apiKey'; apiKeyId: string; tier: Tier }
  /** A customer signed in to the dashboard (session cookie, dashboard adapter only; docs/DASHBOARD.md). */
  | { kind: 'account'; accountId: string; tier: Tier; sessionId: string };
