import { InvalidParameterError } from './errors.js';

/** Market codes the service publishes. h2h = head to head (1X2 / moneyline). */
export const MARKETS = ['h2h'] as const;
export type Market = (typeof MARKETS)[number];
export const DEFAULT_MARKET: Market = 'h2h';
export const DRAW_SELECTION = 'Draw';

export function validateMarket(value: string): Market {
  if (!(MARKETS as readonly string[]).includes(value)) {
    throw new InvalidParameterError('market', `market must be one of: ${MARKETS.join(', ')}`);
  }
  return value as Market;
}

/** In a head-to-head market the selection is one side's name or "Draw". */
export function validateSelection(market: Market, selection: string, homeTeam: string, awayTeam: string): string {
  const trimmed = selection.trim();
  const allowed = [homeTeam, awayTeam, DRAW_SELECTION];
  if (market === 'h2h' && !allowed.includes(trimmed)) {
    throw new InvalidParameterError('selection', `selection must be the home team, the away team or "${DRAW_SELECTION}"`);
  }
  return trimmed;
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
