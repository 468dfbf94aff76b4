/** Pick lifecycle and input rules (docs/API.md, "Pick"). */
import { InvalidParameterError, InvalidTransitionError } from './errors.js';
import { formatLine, LINE_UNITS, type Market } from './market.js';
import { roundTo } from './numbers.js';
import type { SportSlug } from './sports.js';

/**
 * `discarded`: a held pick an operator threw away before anyone saw it. Internal like
 * admin_review: invisible everywhere, final, and it keeps its (event, market, selection) slot
 * so the value engine never creates that pick again.
 */
export const PICK_STATUSES = ['published', 'settled', 'admin_review', 'discarded'] as const;
export type PickStatus = (typeof PICK_STATUSES)[number];

export const PICK_RESULTS = ['won', 'lost', 'void', 'half_won', 'half_lost'] as const;
export type PickResult = (typeof PICK_RESULTS)[number];

/**
 * What a customer should know before trusting a pick's price (docs/API.md, "Warnings"): one
 * sharp reference behind it, a reference market with a wide margin, a closing line older than
 * CLOSING_LINE_MAX_AGE_SECONDS at kickoff.
 */
export const PICK_WARNINGS = ['single_sharp_reference', 'wide_reference_market', 'stale_close'] as const;
export type PickWarning = (typeof PICK_WARNINGS)[number];

/**
 * Whether a published engine pick's own offer (its book, market, selection and line) can still be
 * bet at value (docs/API.md, "Availability"): `unknown` before the engine's first check and for
 * picks published by hand; `available` quoted with at least PICK_MIN_EDGE post-tax edge against
 * the current fair price; `moved` quoted without it; `gone` no longer quoted.
 */
export const AVAILABILITY_STATUSES = ['unknown', 'available', 'moved', 'gone'] as const;
export type AvailabilityStatus = (typeof AVAILABILITY_STATUSES)[number];

/** admin_review and discarded picks are invisible everywhere; only these reach clients. */
export const VISIBLE_STATUSES: readonly PickStatus[] = ['published', 'settled'];

export function isVisibleStatus(status: PickStatus): boolean {
  return VISIBLE_STATUSES.includes(status);
}

/** The whole state machine; settled is final. */
const ALLOWED_TRANSITIONS: Readonly<Record<PickStatus, readonly PickStatus[]>> = {
  published: ['settled', 'admin_review'],
  admin_review: ['published', 'discarded'],
  settled: [],
  discarded: [],
};

export function canTransition(from: PickStatus, to: PickStatus): boolean {
  return ALLOWED_TRANSITIONS[from]?.includes(to) ?? false;
}

export function assertTransition(from: PickStatus, to: PickStatus): void {
  if (!canTransition(from, to)) {
    throw new InvalidTransitionError(from, to);
  }
}

export function validateConfidence(value: number): void {
  if (typeof value !== 'number' || !Number.isInteger(value) || value < 0 || value > 100) {
    throw new InvalidParameterError('confidence', 'confidence must be an integer between 0 and 100');
  }
}

export const MAX_TEAM_NAME_LENGTH = 120;

// Control characters (NUL above all: PostgreSQL rejects it in text) would turn into a 500
// at the database or break the one-line SSE data frame.
// eslint-disable-next-line no-control-regex
const CONTROL_CHARS = /[\u0000-\u001f\u007f-\u009f]/;

/** Trims and checks a team name; length counts code points, like PostgreSQL varchar. */
export function validateTeamName(parameter: string, value: string): string {
  if (typeof value !== 'string') {
    throw new InvalidParameterError(parameter, `${parameter} must be a string`);
  }
  const trimmed = value.trim();
  if (trimmed.length === 0) {
    throw new InvalidParameterError(parameter, `${parameter} must not be empty`);
  }
  if ([...trimmed].length > MAX_TEAM_NAME_LENGTH) {
    throw new InvalidParameterError(parameter, `${parameter} must be at most ${MAX_TEAM_NAME_LENGTH} characters`);
  }
  if (CONTROL_CHARS.test(trimmed)) {
    throw new InvalidParameterError(parameter, `${parameter} must not contain control characters`);
  }
  return trimmed;
}

/** Odds shown the way bookmakers print them: always two decimals. */
function formatOdds(odds: number): string {
  return roundTo(odds, 2).toFixed(2);
}

/**
 * The human-readable bet used when the admin gives none (docs/API.md, "Pick"): "Arsenal to win
 * @ 2.10", "Draw @ 3.40", "Arsenal -0.75 @ 1.95", "Over 2.5 goals @ 2.10" (the unit per sport).
 */
export function describePick(input: { market: Market; selection: string; odds: number; line?: number | null; sport: SportSlug }): string {
  return `${describeSelection(input)} @ ${formatOdds(input.odds)}`;
}

/** The description without its price: "Arsenal to win", "Draw", "Arsenal -0.75", "Over 2.5 goals". */
export function describeSelection(input: { market: Market; selection: string; line?: number | null; sport: SportSlug | null }): string {
  const selection = input.selection.trim();
  if (input.market === 'h2h' || input.line == null) {
    return selection.toLowerCase() === 'draw' ? selection : `${selection} to win`;
  }
  const line = formatLine(input.market, input.line);
  if (input.market === 'spreads') return `${selection} ${line}`;
  return `${selection} ${line} ${(input.sport && LINE_UNITS[input.sport]) ?? 'points'}`;
}
