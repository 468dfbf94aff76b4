/**
 * The closing line of an engine pick (docs/VALUE_ENGINE.md, "Closing line"): at kickoff, the
 * consensus of the references' last prices before kickoff for the pick's market, from each
 * reference that quoted the pick's selection at the pick's own point. References older than the
 * staleness bound at kickoff count only when no fresh one exists, and then the close is stale
 * (shown, left out of the CLV average). Unlike detection, references that disagree still close:
 * the close is a measurement, not a bet. Pure: no I/O.
 */
import type { DevigMethod } from './devig.js';
import type { OddsOutcome } from './odds-feed.js';
import { DEFAULT_MAX_EXCHANGE_SPREAD, referenceConsensus, referenceRecords, type ReferenceBook, type ReferenceRecord } from './reference-consensus.js';

/** A reference's last pre-kickoff market, as stored for the pick's event, generation and market. */
export interface StoredReferenceMarket {
  bookmaker: string;
  /** Back prices, an exchange's lay prices beside them (`lay`). */
  prices: OddsOutcome[];
  updatedAt: Date;
}

export interface ClosingPick {
  selection: string;
  /** The pick's point; null in h2h. */
  line: number | null;
  kickoffAt: Date;
}

export interface ClosingLine {
  /** The selection's consensus no-vig price. */
  fairOdds: number;
  /** Every used reference was older than the bound at kickoff. */
  stale: boolean;
  /** The oldest used reference's last_update, and its age at kickoff. */
  at: Date;
  ageSecondsAtKickoff: number;
  references: ReferenceRecord[];
}

/**
 * The close of one pick, or null when no configured reference quoted its selection at its point
 * before kickoff (a reference that moved off the point, pulled the market or was refused by the
 * devig gives none: the pick then settles without closing odds).
 */
export function closingLineOf(
  pick: ClosingPick,
  stored: readonly StoredReferenceMarket[],
  references: readonly ReferenceBook[],
  method: DevigMethod,
  maxAgeSeconds: number,
  maxExchangeSpread: number = DEFAULT_MAX_EXCHANGE_SPREAD,
): ClosingLine | null {
  const quotes = references.flatMap((reference) => {
    const market = stored.find((row) => row.bookmaker === reference.key);
    if (!market || market.updatedAt.getTime() >= pick.kickoffAt.getTime()) return [];
    // The point this reference quoted for this very selection, read by name: it holds whichever side the feed calls home.
    const quoted = market.prices.find((o) => o.name === pick.selection);
    if (!quoted || (quoted.point ?? null) !== pick.line) return [];
    return [{ bookmaker: reference.key, weight: reference.weight, outcomes: market.prices, updatedAt: market.updatedAt, age: (pick.kickoffAt.getTime() - market.updatedAt.getTime()) / 1000 }];
  });
  const fresh = quotes.filter((quote) => quote.age <= maxAgeSeconds);
  const stale = fresh.length === 0;
  // An exchange closes on its back/lay midpoint when its lay prices were kept with the market.
  const consensus = referenceConsensus(stale ? quotes : fresh, method, maxExchangeSpread);
  if (!('quotes' in consensus)) return null;
  const index = consensus.names.indexOf(pick.selection);
  if (index < 0) return null;
  const used = consensus.quotes.map((quote) => quotes.find((candidate) => candidate.bookmaker === quote.bookmaker)!);
  const oldest = used.reduce((a, b) => (b.age > a.age ? b : a));
  return {
    fairOdds: 1 / consensus.probabilities[index]!,
    stale,
    at: oldest.updatedAt,
    ageSecondsAtKickoff: oldest.age,
    references: referenceRecords(consensus),
  };
}
