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

/** One reference's market at one point, as observed. */
export interface ReferenceQuote {
  bookmaker: string;
  weight: number;
  outcomes: readonly OddsOutcome[];
  updatedAt: Date;
}

type DevigMethodField = keyof DevigAllResult;

/** A reference's market priced on its own: probabilities in the consensus's outcome order. */
export interface PricedQuote extends ReferenceQuote {
  /** By the chosen method, aligned with Consensus.names. */
  probabilities: number[];
  /** For each of Consensus.names, the index of its outcome in `outcomes`. */
  order: number[];
  /** The reference's margin S - 1. */
  margin: number;
}

export type QuoteRefusal = { bookmaker: string; reason: DevigRefusalReason | 'outcomes_differ'; detail: string };

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
 * Prices each quote with `method` and combines them. A quote the devig refuses, or whose outcome
 * names differ from the first usable quote's (a two-way market beside a three-way one), is left
 * out and listed in `refused`. Only `refused` when no quote is usable (the devig refused them all,
 * or none was given).
 */
export function referenceConsensus(quotes: readonly ReferenceQuote[], method: DevigMethod): Consensus | { refused: QuoteRefusal[] } {
  const priced: PricedQuote[] = [];
  const refused: QuoteRefusal[] = [];
  let names: string[] | null = null;
  for (const quote of quotes) {
    const prices = quote.outcomes.map((o) => o.price);
    let chosen: number[];
    try {
      chosen = devig(prices, method).probabilities;
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
    priced.push({ ...quote, probabilities: order.map((index) => chosen[index]!), order, margin: overround(prices) });
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
  const perQuote = consensus.quotes.map((quote) => ({ weight: quote.weight, order: quote.order, all: devigAll(quote.outcomes.map((o) => o.price)) }));
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
  prices: OddsOutcome[];
  /** The reference's own fair probability per outcome name, by the chosen method. */
  fairProbabilities: Record<string, number>;
  updatedAt: Date;
}

export function referenceRecords(consensus: Consensus): ReferenceRecord[] {
  return consensus.quotes.map((quote) => ({
    bookmaker: quote.bookmaker,
    weight: quote.weight,
    prices: quote.outcomes.map((o) => ({ ...o })),
    fairProbabilities: Object.fromEntries(consensus.names.map((name, index) => [name, quote.probabilities[index]!])),
    updatedAt: quote.updatedAt,
  }));
}
