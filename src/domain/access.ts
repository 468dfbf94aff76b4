/**
 * The one place that knows what each tier may do: which operations need which minimum tier
 * (docs/API.md, "Authentication and tiers") and the default hourly and monthly limits (docs/API.md, "Rate limits"; TIER_LIMITS may
 * override the numbers through the config loader).
 */
import type { Tier } from './api-key.js';

export interface TierLimit {
  hourly: number;
  monthly: number;
}
export type TierLimits = Record<Tier, TierLimit>;

export const DEFAULT_TIER_LIMITS: Readonly<TierLimits> = Object.freeze({
  starter: Object.freeze({ hourly: 100, monthly: 10_000 }),
  growth: Object.freeze({ hourly: 1_000, monthly: 100_000 }),
  enterprise: Object.freeze({ hourly: 10_000, monthly: 1_000_000 }),
});

/** Minimum tier per customer-facing operation (the tier table of docs/API.md, "Authentication and tiers"). */
export const MINIMUM_TIER = {
  listPicks: 'starter',
  trackRecord: 'growth',
  matchAnalysis: 'growth',
  webhooks: 'growth',
  picksStream: 'enterprise',
  streamTokens: 'enterprise',
} as const satisfies Record<string, Tier>;
