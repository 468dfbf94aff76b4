/**
 * The fair price of a market from one or several sharp references (docs/VALUE_ENGINE.md,
 * "References"): each reference's market is devigged on its own, and an outcome's fair
 * probability is the weighted mean of theirs, renormalised so the market sums to 1. Detection
 * and the closing line both price through here. Pure: no I/O, no clock.
 */
import { DevigError, devig, devigAll, overround, type DevigAllResult, type DevigMethod, type DevigRefusalReason } from './devig.js';
import type { OddsOutcome } from './odds-feed.js';

/** A configured sharp book: its feed key and its weight in the consensus (0 < weight <= 100). */
export interface ReferenceBook {
  key: string;
  weight: number;
}

export const REFERENCE_WEIGHT_MAX = 100;

/** One reference's market at one point, as observed (an exchange's outcomes carry their lay prices). */
export interface ReferenceQuote {
  bookmaker: string;
  weight: number;
  outcomes: readonly OddsOutcome[];
  updatedAt: Date;
}

/** How a reference's market became probabilities: its back/lay midpoint (an exchange), or the devig method. */
export type ReferencePricing = 'midpoint' | 'devig';

/** Why an exchange's back and lay prices make no reference (docs/VALUE_ENGINE.md, "Exchanges"). */
export type ExchangeRefusalReason = 'exchange_lay_missing' | 'exchange_lay_below_back' | 'exchange_spread_wide';

export function isExchangeRefusal(reason: string): reason is ExchangeRefusalReason {
  return reason === 'exchange_lay_missing' || reason === 'exchange_lay_below_back' || reason === 'exchange_spread_wide';
}

/** The widest relative spread (lay / back - 1) an exchange reference may show on any outcome (REFERENCE_MAX_EXCHANGE_SPREAD's default). */
export const DEFAULT_MAX_EXCHANGE_SPREAD = 0.05;

/**
 * An exchange's own fair estimate: per outcome q = (1/back + 1/lay) / 2, normalised to sum 1; no
 * devig runs. Null when no outcome has a lay price (a book: devig it); a refusal when only some
 * have one, a lay is below its back, or a spread is wider than `maxSpread` (a thin market is no
 * reference).
 */
export function exchangeMidpoint(outcomes: readonly OddsOutcome[], maxSpread: number): number[] | { reason: ExchangeRefusalReason; detail: string } | null {
  if (outcomes.every((o) => o.lay === undefined)) return null;
  const missing = outcomes.find((o) => o.lay === undefined);
  if (missing) return { reason: 'exchange_lay_missing', detail: `has no lay price for "${missing.name}"` };
  const below = outcomes.find((o) => o.lay! < o.price);
  if (below) return { reason: 'exchange_lay_below_back', detail: `lays "${below.name}" at ${below.lay}, below its back price ${below.price}` };
  // 2.1 / 2.0 - 1 is 0.05000000000000004 in doubles: a spread at the bound is at the bound.
  const wide = outcomes.find((o) => o.lay! / o.price - 1 > maxSpread + 1e-9);
  if (wide) {
    return { reason: 'exchange_spread_wide', detail: `"${wide.name}" backs at ${wide.price} and lays at ${wide.lay}: a spread of ${((wide.lay! / wide.price - 1) * 100).toFixed(2)} % > ${(maxSpread * 100).toFixed(2)} %` };
  }
  const raw = outcomes.map((o) => (1 / o.price + 1 / o.lay!) / 2);
  const total = raw.reduce((sum, q) => sum + q, 0);
  return raw.map((q) => q / total);
}

type DevigMethodField = keyof DevigAllResult;

/** A reference's market priced on its own: probabilities in the consensus's outcome order. */
export interface PricedQuote extends ReferenceQuote {
  /** By the chosen method (an exchange's midpoint whatever the method), aligned with Consensus.names. */
  probabilities: number[];
  pricing: ReferencePricing;
  /** For each of Consensus.names, the index of its outcome in `outcomes`. */
  order: number[];
  /** The reference's margin S - 1. */
  margin: number;
}

export type QuoteRefusal = { bookmaker: string; reason: DevigRefusalReason | ExchangeRefusalReason | 'outcomes_differ'; detail: string };

export interface Consensus {
  /** The outcome names, in the first usable reference's order. */
  names: string[];
  /** The references the price is made of, in the order given. */
  quotes: PricedQuote[];
  /** The weighted, renormalised probability of each outcome by the chosen method (aligned with names). */
  probabilities: number[];
  /** Quotes left out: refused by the devig, or pricing other outcomes than the first. */
  refused: QuoteRefusal[];
}

/**
 * Prices each quote, an exchange's by its back/lay midpoint (exchangeMidpoint), any other by
 * `method`, and combines them. A quote refused by either, or whose outcome names differ from the
 * first usable quote's (a two-way market beside a three-way one), is left out and listed in
 * `refused`. Only `refused` when no quote is usable (all refused, or none given).
 */
export function referenceConsensus(
  quotes: readonly ReferenceQuote[],
  method: DevigMethod,
  maxExchangeSpread: number = DEFAULT_MAX_EXCHANGE_SPREAD,
): Consensus | { refused: QuoteRefusal[] } {
  const priced: PricedQuote[] = [];
  const refused: QuoteRefusal[] = [];
  let names: string[] | null = null;
  for (const quote of quotes) {
    const prices = quote.outcomes.map((o) => o.price);
    const midpoint = exchangeMidpoint(quote.outcomes, maxExchangeSpread);
    if (midpoint !== null && !Array.isArray(midpoint)) {
      refused.push({ bookmaker: quote.bookmaker, ...midpoint, detail: `the exchange ${midpoint.detail}` });
      continue;
    }
    let chosen: number[];
    try {
      chosen = midpoint ?? devig(prices, method).probabilities;
    } catch (error) {
      if (!(error instanceof DevigError)) throw error;
      refused.push({ bookmaker: quote.bookmaker, reason: error.reason, detail: error.message });
      continue;
    }
    const own = quote.outcomes.map((o) => o.name);
    names ??= own;
    const order = names.map((name) => own.indexOf(name));
    if (own.length !== names.length || order.includes(-1)) {
      refused.push({ bookmaker: quote.bookmaker, reason: 'outcomes_differ', detail: `prices ${own.join(' / ')}, not ${names.join(' / ')}` });
      continue;
    }
    // An exchange's margin is its back prices' overround, as a book's is its prices'.
    priced.push({ ...quote, probabilities: order.map((index) => chosen[index]!), pricing: midpoint ? 'midpoint' : 'devig', order, margin: overround(prices) });
  }
  if (priced.length === 0 || names === null) return { refused };
  return { names, quotes: priced, probabilities: weightedMean(priced), refused };
}

/**
 * The consensus by every devig method (provenance and the methods' disagreement): per method,
 * the weighted mean over the references it accepts; null for a method that accepts none. Kept
 * apart from referenceConsensus because only a pick needs it, and five methods per reference
 * market cost as much as the rest of detection.
 */
export function consensusByMethod(consensus: Consensus): DevigAllResult {
  // An exchange priced by its midpoint has that price under every method: no devig runs.
  const perQuote = consensus.quotes.map((quote) => ({ weight: quote.weight, order: quote.order, all: quote.pricing === 'midpoint' ? midpointForEveryMethod(quote) : devigAll(quote.outcomes.map((o) => o.price)) }));
  const methods = Object.keys(perQuote[0]!.all) as DevigMethodField[];
  return Object.fromEntries(
    methods.map((key) => {
      const accepting = perQuote.flatMap(({ weight, order, all }) => {
        const list = all[key];
        return list === null ? [] : [{ weight, probabilities: order.map((index) => list[index]!) }];
      });
      return [key, accepting.length === 0 ? null : weightedMean(accepting)];
    }),
  ) as unknown as DevigAllResult;
}

function midpointForEveryMethod(quote: PricedQuote): DevigAllResult {
  // In the quote's own outcome order, as devigAll answers.
  const own = quote.outcomes.map((_, outcome) => quote.probabilities[quote.order.indexOf(outcome)]!);
  return { multiplicative: own, additive: own, power: own, shin: own, oddsRatio: own } as unknown as DevigAllResult;
}

/** Σ w·p / Σ w per outcome, then divided by its sum (each input sums to 1 up to rounding; the result exactly). */
export function weightedMean(vectors: readonly { weight: number; probabilities: readonly number[] }[]): number[] {
  const totalWeight = vectors.reduce((sum, v) => sum + v.weight, 0);
  const mean = vectors[0]!.probabilities.map((_, index) => vectors.reduce((sum, v) => sum + v.weight * v.probabilities[index]!, 0) / totalWeight);
  const total = mean.reduce((sum, p) => sum + p, 0);
  return mean.map((p) => p / total);
}

/** max - min of the references' own probabilities of one outcome (0 with one reference). */
export function referenceSpread(consensus: Consensus, index: number): number {
  const values = consensus.quotes.map((quote) => quote.probabilities[index]!);
  return Math.max(...values) - Math.min(...values);
}

/** The weighted mean margin of the used references. */
export function consensusMargin(consensus: Consensus): number {
  const totalWeight = consensus.quotes.reduce((sum, q) => sum + q.weight, 0);
  return consensus.quotes.reduce((sum, q) => sum + q.weight * q.margin, 0) / totalWeight;
}

/** What provenance records of each reference used: its prices, its own fair probabilities, its weight. */
export interface ReferenceRecord {
  bookmaker: string;
  weight: number;
  /** Back prices, and an exchange's lay prices beside them (`lay`). */
  prices: OddsOutcome[];
  pricing: ReferencePricing;
  /** The reference's own fair probability per outcome name, by the chosen method. */
  fairProbabilities: Record<string, number>;
  updatedAt: Date;
}

export function referenceRecords(consensus: Consensus): ReferenceRecord[] {
  return consensus.quotes.map((quote) => ({
    bookmaker: quote.bookmaker,
    weight: quote.weight,
    prices: quote.outcomes.map((o) => ({ ...o })),
    pricing: quote.pricing,
    fairProbabilities: Object.fromEntries(consensus.names.map((name, index) => [name, quote.probabilities[index]!])),
    updatedAt: quote.updatedAt,
  }));
}
