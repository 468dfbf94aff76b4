/**
 * Accounts, API keys and match analyses as services return them (and GraphQL exposes them):
 * plain records, never ORM entities.
 */
import type { Tier } from './api-key.js';
import type { Static } from 'typebox';
import type { MATCH_ANALYSIS } from './match-analysis-shape.js';

export interface AccountRecord {
  id: string;
  email: string;
  tier: Tier;
  createdAt: Date;
  updatedAt: Date;
}

/** What sign-in needs besides the account: never leaves the services. */
export interface AccountCredentials extends AccountRecord {
  passwordHash: string;
}

export interface ApiKeyRecord {
  id: string;
  /** SHA-256 of the key: what the auth cache and the revocation broadcast are keyed by. */
  keyHash: string;
  displayPrefix: string;
  tier: Tier;
  label: string | null;
  createdAt: Date;
  revokedAt: Date | null;
  lastUsedAt: Date | null;
  /** The owning account; null for a free-standing key. */
  accountId: string | null;
}

/** As declared (MATCH_ANALYSIS). */
export type MatchAnalysisRecord = Static<typeof MATCH_ANALYSIS>;
