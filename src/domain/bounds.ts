/**
 * Page sizes and windows, declared once: the REST parameter specs (minimum, maximum, default),
 * the GraphQL argument descriptions and complexity, and the services that validate them all
 * read these. A value out of range is 400 invalid_parameter naming the caller's own parameter:
 * `limit` on REST, `first` on GraphQL, and so on.
 */
import { InvalidParameterError } from './errors.js';

export interface Bound {
  /** Used when the caller gives none. */
  readonly default: number;
  /** The largest value accepted; the smallest is always 1. */
  readonly max: number;
}

/** GET /api/v1/picks and `picks(first:)`. */
export const PICKS_PAGE: Bound = { default: 50, max: 200 };
/** GET /api/public/picks/today and `todayPicks(limit:)`. */
export const TODAY_PAGE: Bound = { default: 20, max: 50 };
/** GET /api/v1/webhooks/{id}/deliveries and `deliveries(first:)`. */
export const DELIVERIES_PAGE: Bound = { default: 20, max: 100 };
/** The track record's lookback window in days (`days_back`, `daysBack`). */
export const DAYS_BACK: Bound = { default: 30, max: 365 };

/** An integer from 1 to max, or invalid_parameter naming `parameter`: validated, never clamped (docs/API.md, "Lists and cursors"). */
export function validatePageSize(parameter: string, value: number, max: number): void {
  if (typeof value !== 'number' || !Number.isInteger(value) || value < 1 || value > max) {
    throw new InvalidParameterError(parameter, `${parameter} must be an integer between 1 and ${max}`);
  }
}

/** The caller's value (or the default when absent), checked against the bound under the caller's name. */
export function withinBound(bound: Bound, parameter: string, value: number | null | undefined): number {
  const chosen = value ?? bound.default;
  validatePageSize(parameter, chosen, bound.max);
  return chosen;
}

/** For argument descriptions: "1 to 200; default 50." */
export function describeBound(bound: Bound): string {
  return `1 to ${bound.max}; default ${bound.default}.`;
}

/** Events in one ingestOdds / ingestScores call (the GraphQL body limit allows about a hundred full events anyway). */
export const INGEST_EVENTS_MAX = 500;
/** Points one oddsHistory answer returns at most (oldest first): days of a busy event's line movement. */
export const ODDS_HISTORY_POINTS_MAX = 10_000;
/** ODDS_HISTORY_DAYS' default: two weeks of line movement. */
export const DEFAULT_ODDS_HISTORY_DAYS = 14;
