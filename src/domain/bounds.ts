/**
 * Page sizes and windows, declared once and put on the GraphQL arguments that take them
 * (src/graphql/argument-guard.ts checks every operation's values before it runs): the argument
 * descriptions, defaults and complexity, and the REST parameters' documentation read these. A
 * value out of range is 400 invalid_parameter naming the caller's own parameter: `limit` on REST,
 * `first` on GraphQL, and so on.
 */
import { InvalidParameterError } from './errors.js';

export interface Bound {
  /** Used when the caller gives none. */
  readonly default: number;
  /** The largest value accepted. */
  readonly max: number;
  /** The smallest value accepted; 1 when absent (a page size). */
  readonly min?: number;
}

/** A value with bounds and no default (a required argument, or one whose default is computed). */
export type Range = Pick<Bound, 'min' | 'max'>;

/** A ledger seq or tree size in the proofs (`seq`, `tree_size`, `from`, `to`): 1 to GraphQL's Int. */
export const LEDGER_SIZE: Range = { min: 1, max: 2_147_483_647 };

/** GET /api/v1/picks and `picks(first:)`. */
export const PICKS_PAGE: Bound = { default: 50, max: 200 };
/** GET /api/public/picks/today and `todayPicks(limit:)`. */
export const TODAY_PAGE: Bound = { default: 20, max: 50 };
/** GET /api/v1/webhooks/{id}/deliveries and `deliveries(first:)`. */
export const DELIVERIES_PAGE: Bound = { default: 20, max: 100 };
/** The track record's lookback window in days (`days_back`, `daysBack`). */
export const DAYS_BACK: Bound = { default: 30, max: 365 };

/** `revealedLedgerPicks(limit:)`: the picks with their ledger entries one answer lists (the record page shows 50). */
export const REVEALED_PICKS_PAGE: Bound = { default: 50, max: 100 };

/**
 * The refusal of a value outside the bound, named as the caller named it; null when it is an
 * integer from 1 to max. Validated, never clamped (docs/API.md, "Lists and cursors"). The message
 * starts with the parameter's name, so a surface that names it differently renames it there.
 */
export function boundViolation(bound: Range | Bound, parameter: string, value: number): InvalidParameterError | null {
  const min = bound.min ?? 1;
  if (Number.isInteger(value) && value >= min && value <= bound.max) return null;
  return new InvalidParameterError(parameter, `${parameter} must be an integer between ${min} and ${bound.max}`);
}

/** For argument descriptions: "1 to 200; default 50." */
export function describeBound(bound: Range | Bound): string {
  return `${bound.min ?? 1} to ${bound.max}${'default' in bound ? `; default ${bound.default}` : ''}.`;
}

/** Events in one ingestOdds / ingestScores call (the GraphQL body limit allows about a hundred full events anyway). */
export const INGEST_EVENTS_MAX = 500;
/** Points one oddsHistory answer returns at most (oldest first): days of a busy event's line movement. */
export const ODDS_HISTORY_POINTS_MAX = 10_000;
/** ODDS_HISTORY_DAYS' default: two weeks of line movement. */
export const DEFAULT_ODDS_HISTORY_DAYS = 14;
/** GET /api/public/ledger and `ledger(limit:)`: entries per page. */
export const LEDGER_PAGE: Bound = { default: 100, max: 500 };
/** `after` of GET /api/public/ledger and `ledger(after:)`: a seq (0 = from the start), within GraphQL's Int. */
export const LEDGER_AFTER: Bound = { min: 0, default: 0, max: 2_147_483_647 };
