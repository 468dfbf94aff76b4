import type { Tier } from './api-key.js';

/** Who is calling: decided once per request from the Authorization header. */
export type Principal =
  | { kind: 'anonymous' }
  /** A credential was presented but is not valid: any guarded field answers invalid_api_key. */
  | { kind: 'invalid' }
  | { kind: 'admin' }
  | { kind: 'apiKey'; apiKeyId: string; tier: Tier };
