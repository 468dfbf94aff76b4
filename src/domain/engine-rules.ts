/**
 * The value engine's bookkeeping rules that are not detection itself (docs/VALUE_ENGINE.md):
 * which markets an event is read for, which generation of a reused event id a record belongs
 * to, what identifies an engine pick's slot, and which reference observation is kept for the
 * closing line. Pure: the live engine applies them through its repositories (the SQL twins are
 * tested against them), the backtest applies them in memory.
 */
import { hasLines, type Market } from './market.js';
import type { OddsEvent, OddsOutcome } from './odds-feed.js';
import type { SportSlug } from './sports.js';

/** The event with only the markets the engine reads for its sport; bookmakers left with none go. */
export function readMarkets(event: OddsEvent, sport: SportSlug, markets: readonly Market[]): OddsEvent {
  const read = (key: Market) => markets.includes(key) && (key === 'h2h' || hasLines(sport));
  const bookmakers = event.bookmakers
    .map((bookmaker) => ({ ...bookmaker, markets: bookmaker.markets.filter((market) => read(market.key)) }))
    .filter((bookmaker) => bookmaker.markets.length > 0);
  return { ...event, bookmakers };
}

/** What the engine remembers of an event to place the feed's next record of it. */
export interface KnownEvent {
  commenceTime: Date;
  generation: number;
  completed: boolean;
}

/**
 * The generation the feed's record of an event belongs to: a stored event with a final whose id
 * comes back with another commence_time is a new fixture (the feed reused the id), so its
 * generation is the next one; anything else keeps the stored generation (0 for a new event).
 * The SQL of upsertOddsEvents applies the same rule.
 */
export function generationOf(stored: KnownEvent | undefined, commenceTime: Date): number {
  if (!stored) return 0;
  return stored.completed && stored.commenceTime.getTime() !== commenceTime.getTime() ? stored.generation + 1 : stored.generation;
}

/** One engine pick per event generation, market, selection and line (the unique index's key). */
export function engineSelectionKey(eventId: string, generation: number, market: string, selection: string, line: number | null): string {
  return `${eventId}\u0000${generation}\u0000${market}\u0000${selection}\u0000${line ?? ''}`;
}

/** A reference's market as kept for the closing line (per event generation, market and bookmaker). */
export interface KeptReferenceMarket {
  line: number | null;
  prices: OddsOutcome[];
  updatedAt: Date;
}

/** An unchanged reference market still refreshes its time after this long, so a close's age is right to within it. */
export const REFERENCE_REFRESH_MS = 60_000;

/**
 * Whether an observation replaces the kept market: only observations from before kickoff
 * count (the close is the last pre-kickoff market), never an older one than kept, and an
 * unchanged one only to refresh a time more than a minute old. recordReferenceMarkets' SQL
 * applies the same rule.
 */
export function replacesKeptReference(kept: KeptReferenceMarket | undefined, observed: KeptReferenceMarket, kickoff: Date): boolean {
  if (observed.updatedAt.getTime() >= kickoff.getTime()) return false;
  if (!kept) return true;
  if (kept.updatedAt.getTime() > observed.updatedAt.getTime()) return false;
  return (
    kept.line !== observed.line ||
    JSON.stringify(kept.prices) !== JSON.stringify(observed.prices) ||
    kept.updatedAt.getTime() < observed.updatedAt.getTime() - REFERENCE_REFRESH_MS
  );
}
