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

/** An event generation: the scope of the one-side rule (planEngineCandidates). */
export function engineEventKey(eventId: string, generation: number): string {
  return `${eventId}\u0000${generation}`;
}

/** A reference's market as kept for the closing line (per event generation, market and bookmaker). */
export interface KeptReferenceMarket {
  line: number | null;
  prices: OddsOutcome[];
  updatedAt: Date;
}

/**
 * Whether an observation replaces the kept market: only observations from before kickoff
 * count (the close is the last pre-kickoff market), never an older one than kept, and an
 * unchanged one whenever it is newer: the close is dated by the reference's own last
 * last_update, so its age at kickoff is exact. recordReferenceMarkets' SQL applies the same rule.
 */
export function replacesKeptReference(kept: KeptReferenceMarket | undefined, observed: KeptReferenceMarket, kickoff: Date): boolean {
  if (observed.updatedAt.getTime() >= kickoff.getTime()) return false;
  if (!kept) return true;
  if (kept.updatedAt.getTime() > observed.updatedAt.getTime()) return false;
  return kept.line !== observed.line || JSON.stringify(kept.prices) !== JSON.stringify(observed.prices) || kept.updatedAt.getTime() < observed.updatedAt.getTime();
}

/** Why the engine holds a pick for an operator instead of publishing it (provenance.holdReasons). */
export const HOLD_REASONS = ['too_good', 'opposite_side'] as const;
export type HoldReason = (typeof HOLD_REASONS)[number];

/**
 * The line of the market a selection belongs to (the feed's market line): the home side's
 * handicap in spreads (an away pick at +1.5 is in the market of home -1.5), the point in totals,
 * null in h2h.
 */
export function marketLineOf(market: string, selection: string, line: number | null, homeTeam: string): number | null {
  if (market === 'h2h' || line === null) return null;
  // 0 - 0 is -0, which would key a pick'em line apart from its twin.
  return market === 'spreads' && selection !== homeTeam ? 0 - line || 0 : line;
}

/** An engine pick the event already has, as the one-side rule reads it. */
export interface KnownEnginePick {
  market: string;
  selection: string;
  line: number | null;
  status: string;
  /** Published once (whatever it is now): customers may have acted on it. */
  everVisible: boolean;
}

/** What the engine does with one detected candidate (planEngineCandidates). */
export type CandidatePlan<K> =
  /** A new pick, published unless `holdReasons` names why it waits for an operator. */
  | { action: 'create'; holdReasons: HoldReason[] }
  /** A held pick nobody has seen takes this plausible offer and is published. */
  | { action: 'promote'; held: K }
  /** Nothing: the slot has its pick, or a held one must keep waiting. */
  | { action: 'none'; reason: 'slot_taken' | 'opposite_side' };

/** What planEngineCandidates needs of a detected candidate. */
export interface PlannedCandidate {
  market: string;
  selection: string;
  line: number | null;
  /** Post-tax edge at or above the review edge: held as too_good. */
  held: boolean;
  edgePostTaxFraction: number;
}

/**
 * One side per market (docs/VALUE_ENGINE.md, "One side per market"): the engine publishes at
 * most one selection per event generation, market and market line. A candidate on another side
 * of a market where a pick was ever visible, or where a better candidate of the same poll is
 * published, is created held with `opposite_side` (an operator may approve it) and a held pick
 * is never promoted there. Within one poll the best post-tax edge wins, ties to detection order.
 * `known` are this event generation's engine picks (none of another), keyed by
 * engineSelectionKey; the plans come in the candidates' order.
 */
export function planEngineCandidates<K extends KnownEnginePick, C extends PlannedCandidate>(
  event: { id: string; generation: number; homeTeam: string },
  candidates: readonly C[],
  known: ReadonlyMap<string, K>,
): CandidatePlan<K>[] {
  const marketOf = (pick: { market: string; selection: string; line: number | null }) =>
    `${pick.market}\u0000${marketLineOf(pick.market, pick.selection, pick.line, event.homeTeam) ?? ''}`;
  // The side each market has shown customers (or will show after this poll).
  const shown = new Map<string, string>();
  for (const pick of known.values()) if (pick.everVisible && !shown.has(marketOf(pick))) shown.set(marketOf(pick), pick.selection);

  const plans: CandidatePlan<K>[] = new Array(candidates.length);
  const order = candidates.map((candidate, index) => ({ candidate, index }));
  // Stable: equal edges keep detection order.
  order.sort((a, b) => b.candidate.edgePostTaxFraction - a.candidate.edgePostTaxFraction);
  for (const { candidate, index } of order) {
    const market = marketOf(candidate);
    const side = shown.get(market);
    const opposite = side !== undefined && side !== candidate.selection;
    const slot = known.get(engineSelectionKey(event.id, event.generation, candidate.market, candidate.selection, candidate.line));
    if (slot) {
      const promotable = !candidate.held && slot.status === 'admin_review' && !slot.everVisible;
      if (!promotable) plans[index] = { action: 'none', reason: 'slot_taken' };
      else if (opposite) plans[index] = { action: 'none', reason: 'opposite_side' };
      else {
        plans[index] = { action: 'promote', held: slot };
        shown.set(market, candidate.selection);
      }
      continue;
    }
    const holdReasons: HoldReason[] = [...(candidate.held ? (['too_good'] as const) : []), ...(opposite ? (['opposite_side'] as const) : [])];
    plans[index] = { action: 'create', holdReasons };
    if (holdReasons.length === 0) shown.set(market, candidate.selection);
  }
  return plans;
}

/** How long the engine watches the configured references before it names one that quoted nothing. */
export const QUIET_REFERENCE_WINDOW_MS = 60 * 60 * 1000;

/** The odds polled since `startMs`: how many events, and which configured references quoted any. */
export interface ReferenceWatch {
  startMs: number;
  events: number;
  quoted: ReadonlySet<string>;
}

/**
 * Adds a poll's events to the watch. When the watch has run its window, it answers the
 * configured references that quoted none of the events polled in it (none when no event was
 * polled: a quiet feed says nothing about a reference) and starts a new watch from this poll.
 */
export function watchReferences(
  watch: ReferenceWatch | null,
  events: readonly OddsEvent[],
  referenceKeys: readonly string[],
  nowMs: number,
  windowMs: number = QUIET_REFERENCE_WINDOW_MS,
): { watch: ReferenceWatch; quiet: string[] } {
  let current = watch ?? { startMs: nowMs, events: 0, quoted: new Set<string>() };
  let quiet: string[] = [];
  if (nowMs - current.startMs >= windowMs) {
    if (current.events > 0) quiet = referenceKeys.filter((key) => !current.quoted.has(key));
    current = { startMs: nowMs, events: 0, quoted: new Set<string>() };
  }
  const quoted = new Set(current.quoted);
  for (const event of events) for (const bookmaker of event.bookmakers) if (referenceKeys.includes(bookmaker.key)) quoted.add(bookmaker.key);
  return { watch: { startMs: current.startMs, events: current.events + events.length, quoted }, quiet };
}

/** Whether `shown` (picks customers saw) holds another side of `pick`'s market: the one-side rule's check at the write. */
export function showsOtherSide(
  pick: { market: string; selection: string; line: number | null },
  shown: readonly { market: string; selection: string; line: number | null }[],
  homeTeam: string,
): boolean {
  const line = marketLineOf(pick.market, pick.selection, pick.line, homeTeam);
  return shown.some((other) => other.market === pick.market && other.selection !== pick.selection && marketLineOf(other.market, other.selection, other.line, homeTeam) === line);
}
