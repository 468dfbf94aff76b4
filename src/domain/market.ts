import { InvalidParameterError } from './errors.js';
import type { SportSlug } from './sports.js';

/**
 * Market codes the service publishes (The Odds API's keys): h2h = head to head (1X2 /
 * moneyline); spreads = a handicap on one team (Asian handicap in soccer); totals = the match's
 * total over or under a point.
 */
export const MARKETS = ['h2h', 'spreads', 'totals'] as const;
export type Market = (typeof MARKETS)[number];
export const DEFAULT_MARKET: Market = 'h2h';
export const DRAW_SELECTION = 'Draw';
export const OVER = 'Over';
export const UNDER = 'Under';

/**
 * The sports whose spreads and totals are published, with what their lines count (docs/API.md,
 * "Pick"); the other sports are h2h only.
 */
export const LINE_UNITS: Readonly<Partial<Record<SportSlug, string>>> = Object.freeze({
  soccer: 'goals',
  basketball: 'points',
  americanfootball: 'points',
  icehockey: 'goals',
  baseball: 'runs',
  rugbyunion: 'points',
});

/** The largest handicap and total accepted: beyond any real line (a basketball total is about 230). */
const MAX_SPREAD = 100;
const MAX_TOTAL = 1000;

export function validateMarket(value: string): Market {
  if (!(MARKETS as readonly string[]).includes(value)) {
    throw new InvalidParameterError('market', `market must be one of: ${MARKETS.join(', ')}`);
  }
  return value as Market;
}

/**
 * The selection of a market: h2h, one side's name or "Draw"; spreads, one side's name (its
 * handicap is the line); totals, "Over" or "Under".
 */
export function validateSelection(market: Market, selection: string, homeTeam: string, awayTeam: string): string {
  const trimmed = selection.trim();
  if (market === 'h2h' && ![homeTeam, awayTeam, DRAW_SELECTION].includes(trimmed)) {
    throw new InvalidParameterError('selection', `selection must be the home team, the away team or "${DRAW_SELECTION}"`);
  }
  if (market === 'spreads' && ![homeTeam, awayTeam].includes(trimmed)) {
    throw new InvalidParameterError('selection', 'selection of a spreads pick must be the home team or the away team');
  }
  if (market === 'totals' && trimmed !== OVER && trimmed !== UNDER) {
    throw new InvalidParameterError('selection', `selection of a totals pick must be "${OVER}" or "${UNDER}"`);
  }
  return trimmed;
}

/**
 * The line of a pick: none for h2h; for spreads (the selected team's handicap) and totals (the
 * point), a multiple of 0.25 (quarter lines are two half stakes), in a sport that has lines.
 */
export function validateLine(market: Market, line: number | null | undefined, sport: SportSlug): number | null {
  if (market === 'h2h') {
    if (line != null) throw new InvalidParameterError('line', 'line must be absent for an h2h pick');
    return null;
  }
  if (!hasLines(sport)) {
    throw new InvalidParameterError('market', `market ${market} is not published for ${sport}; its sports are ${Object.keys(LINE_UNITS).join(', ')}`);
  }
  const problem = lineProblem(market, line);
  if (problem !== null) throw new InvalidParameterError('line', `line of a ${market} pick ${problem}`);
  return line as number;
}

/**
 * Why a spreads or totals point is not a line the service prices or settles (a multiple of 0.25
 * within the market's bounds), or null when it is. Shared by manual picks and the odds feed.
 */
export function lineProblem(market: Exclude<Market, 'h2h'>, line: unknown): string | null {
  const legal = typeof line === 'number' && Number.isFinite(line) && Number.isInteger(line * 4);
  if (legal && (market === 'spreads' ? Math.abs(line) <= MAX_SPREAD : line > 0 && line <= MAX_TOTAL)) return null;
  const range = market === 'spreads' ? `from -${MAX_SPREAD} to ${MAX_SPREAD}` : `above 0 and at most ${MAX_TOTAL}`;
  return `must be a multiple of 0.25 ${range}`;
}

/** Whether a sport publishes spreads and totals (LINE_UNITS); the others are h2h only. */
export function hasLines(sport: SportSlug): boolean {
  return LINE_UNITS[sport] !== undefined;
}

/** A line as the description shows it: a handicap with its sign ("+0.25", "-1.5", "0"), a total as is. */
export function formatLine(market: Market, line: number): string {
  return market === 'spreads' && line > 0 ? `+${line}` : String(line);
}

// `_` as in the odds feed's keys (betfair_ex_eu): the engine stores the feed's key as the slug.
const BOOKMAKER_SLUG = /^[a-z0-9][a-z0-9_-]{0,39}$/;

export function validateBookmaker(name: string, slug: string): { name: string; slug: string } {
  const trimmedName = name.trim();
  if (trimmedName === '' || trimmedName.length > 80) {
    throw new InvalidParameterError('bookmaker.name', 'bookmaker.name must be 1 to 80 characters');
  }
  if (!BOOKMAKER_SLUG.test(slug)) {
    throw new InvalidParameterError('bookmaker.slug', 'bookmaker.slug must be 1 to 40 lowercase letters, digits, dashes or underscores');
  }
  return { name: trimmedName, slug };
}

export function validateLeague(value: string): string {
  const trimmed = value.trim();
  if (trimmed === '' || trimmed.length > 120) {
    throw new InvalidParameterError('league', 'league must be 1 to 120 characters');
  }
  return trimmed;
}
