/**
 * Value detection (docs/VALUE_ENGINE.md, "Detection"): one odds-feed event -> the candidate
 * picks of each of its markets (h2h, and spreads and totals one line at a time: a book is
 * compared only with the reference's market at the same line), priced against the reference
 * bookmaker's devigged (fair) price with
 * the edge, post-tax edge and Kelly math of odds.ts, plus a machine reason for every outcome
 * that yields no pick. Pure: no I/O, the clock comes in as `now`.
 */
import { DEFAULT_DEVIG_METHOD, type DevigAllResult, type DevigMethod, type DevigRefusalReason, MAX_BOOKSUM, overround } from './devig.js';
import {
  consensusByMethod,
  consensusMargin,
  DEFAULT_MAX_EXCHANGE_SPREAD,
  isExchangeRefusal,
  referenceConsensus,
  referenceRecords,
  referenceSpread,
  type Consensus,
  type ExchangeRefusalReason,
  type QuoteRefusal,
  type ReferenceBook,
  type ReferenceQuote,
  type ReferenceRecord,
} from './reference-consensus.js';
import { marketLineOf } from './engine-rules.js';
import { describeSelection, type PickWarning } from './pick.js';
import { DRAW_SELECTION, type Market } from './market.js';
import { sportSlugOfKey, type OddsBookmaker, type OddsEvent, type OddsMarket, type OddsOutcome } from './odds-feed.js';
import {
  commissionAsTaxRate,
  DEFAULT_STAKE_ADVICE,
  DEFAULT_TAX_RATE,
  type EdgeTier,
  edgePct,
  edgeTier,
  EXCHANGE_COMMISSIONS,
  isExchange,
  postTaxEdgeFraction,
  kellyFraction,
  stakePct,
  type StakeAdvice,
} from './odds.js';

export interface OddsRange {
  /** Inclusive bounds on the offered (pre-tax) decimal price. */
  min: number;
  max: number;
}

export interface DetectionOptions {
  /** The sharp books whose consensus is the fair price (REFERENCE_BOOKMAKERS), in order of precedence. */
  references: readonly ReferenceBook[];
  devigMethod: DevigMethod;
  /** References' fair probabilities of a selection further apart than this (absolute) make no pick. */
  maxReferenceSpread: number;
  /** A reference margin above this (0.08 = 8 %) marks the pick wide_reference_market. */
  maxReferenceMargin: number;
  /**
   * Tax on stakes per feed bookmaker key, as a fraction (0.053 = 5.3 %); for an exchange
   * (EXCHANGE_COMMISSIONS' keys) its commission on net winnings instead.
   */
  taxRates: Readonly<Record<string, number>>;
  defaultTaxRate: number;
  /** An exchange reference whose lay / back - 1 exceeds this on any outcome is no reference (REFERENCE_MAX_EXCHANGE_SPREAD). */
  maxExchangeSpread: number;
  /** Smallest post-tax edge that makes a pick, as a fraction (0.02 = 2 %). */
  minEdge: number;
  oddsRange: OddsRange;
  horizonHours: number;
  referenceMaxAgeSeconds: number;
  /** Post-tax edge (fraction) from which a pick is held for review: too good to be true. */
  reviewEdge: number;
  /** A last_update further than this ahead of our clock makes its market stale (FEED_CLOCK_SKEW_SECONDS). */
  clockSkewSeconds: number;
}

export const DEFAULT_DETECTION_OPTIONS: Readonly<DetectionOptions> = Object.freeze({
  references: Object.freeze([Object.freeze({ key: 'pinnacle', weight: 1 })]),
  devigMethod: DEFAULT_DEVIG_METHOD,
  maxReferenceSpread: 0.03,
  maxReferenceMargin: 0.08,
  taxRates: Object.freeze({}),
  defaultTaxRate: DEFAULT_TAX_RATE,
  maxExchangeSpread: DEFAULT_MAX_EXCHANGE_SPREAD,
  minEdge: 0.02,
  oddsRange: Object.freeze({ min: 1.2, max: 15 }),
  horizonHours: 72,
  referenceMaxAgeSeconds: 300,
  reviewEdge: 0.25,
  clockSkewSeconds: 60,
});

/**
 * A soft book's price above this multiple of the reference's price for the same outcome is a
 * mistake, a suspended line or another market, not value: the book's whole market is left out.
 */
export const SANE_PRICE_MULTIPLE = 3;
/** A full market whose implied probabilities sum below this offers a negative margin: no book does. */
export const MIN_SOFT_BOOKSUM = 1 - 1e-9;

export type OfferRejection = 'below_min_edge' | 'outside_odds_range' | 'offered_stale';

/** Why a soft book's whole market is left out of an event (logged as a feed skip). */
export type BookRejection = 'outcome_not_in_reference' | 'price_beyond_reference_multiple' | 'negative_margin' | 'reference_outcomes_differ' | ExchangeRefusalReason;

export interface SkippedBook {
  bookmaker: string;
  /** The market left out (the book's other markets may still be compared). */
  market: Market;
  line: number | null;
  reason: BookRejection;
  /** The numbers behind the reason, for the log line. */
  detail: string;
}

/** An offer the engine did not take although it qualified: its edge was too good to be true. */
export interface ExcludedOffer {
  bookmaker: string;
  price: number;
  reason: 'too_good';
}

export type RejectionReason =
  | 'no_reference'
  | 'reference_stale'
  | `reference_refused:${DevigRefusalReason | ExchangeRefusalReason}`
  | 'references_disagree'
  | 'kickoff_past'
  | 'beyond_horizon'
  | 'no_offer'
  | OfferRejection;

/** Every method's fair probability of one selection; null where that method refuses the market. */
export interface SelectionFairProbabilities {
  multiplicative: number | null;
  additive: number | null;
  power: number | null;
  shin: number | null;
  oddsRatio: number | null;
}

export interface OfferedPrice {
  /** The feed's bookmaker key. */
  bookmaker: string;
  price: number;
  /** The market's last_update, else the bookmaker's. */
  updatedAt: Date;
}

/** A reference price as stored in provenance: a line market's outcome keeps its point. */
export type ReferencePrice = OddsOutcome;


/** What the engine stores as the pick's provenance (plus the event id and detection time). */
export interface DetectionProvenance {
  /** The first reference behind the price (in REFERENCE_BOOKMAKERS order), its prices and time. */
  referenceBookmaker: string;
  referencePrices: ReferencePrice[];
  referenceUpdatedAt: Date;
  /** Every reference behind the price: prices, own fair probabilities, weight, time. */
  references: ReferenceRecord[];
  /** The references' titles, in the order of `references` (the analysis names them). */
  referenceTitles: string[];
  devigMethod: DevigMethod;
  fairProbabilities: SelectionFairProbabilities;
  /** Every other bookmaker's price for this selection, in feed order (stale ones included). */
  offeredPrices: OfferedPrice[];
  /** Qualifying offers passed over for a plausible one, their edge at or above reviewEdge. */
  excludedOffers: ExcludedOffer[];
}

export interface ConfidenceInputs {
  /** The references' overround S - 1 (0.03 = 3 %), their weighted mean. */
  margin: number;
  /** How many references price the selection. */
  references: number;
  /** (max - min) of the methods' probabilities of this selection, relative to the chosen method's. */
  methodDisagreement: number;
  /** Seconds since the oldest used reference market's last_update. */
  referenceAgeSeconds: number;
  /** Seconds since the offering book's market last_update. */
  offeredAgeSeconds: number;
  /** The offering book's own margin S - 1; null when it does not price every outcome of the reference. */
  offeredMargin: number | null;
  /** Pre-tax edge as a fraction (price / fair - 1). */
  edge: number;
}

export interface ValueCandidate {
  eventId: string;
  market: Market;
  selection: string;
  /** The selection's line: its team's handicap (spreads), the point (totals), null for h2h. */
  line: number | null;
  bookmakerKey: string;
  bookmakerTitle: string;
  /** The offered decimal price (before tax). */
  price: number;
  taxRate: number;
  offeredUpdatedAt: Date;
  /** Fair probability of the selection by `devigMethod`, and its fair odds 1 / p. */
  fairProbability: number;
  fairOdds: number;
  /** Pre-tax edge in percent: (price / fair - 1) x 100 (odds.ts edgePct). */
  edgePercent: number;
  /** Post-tax edge as a fraction: price x (1 - tax) / fair - 1 (odds.ts postTaxEdgeFraction). */
  edgePostTaxFraction: number;
  kellyFraction: number;
  edgeTier: EdgeTier;
  /** Post-tax edge >= reviewEdge: the pick waits for an operator. */
  held: boolean;
  /** 0..100, see confidenceScore. */
  confidence: number;
  confidenceInputs: ConfidenceInputs;
  /** single_sharp_reference, wide_reference_market (stale_close comes at kickoff, with the close). */
  warnings: PickWarning[];
  provenance: DetectionProvenance;
}

export interface RejectedOffer {
  bookmaker: string;
  price: number;
  reason: OfferRejection;
}

export interface RejectedOutcome {
  market: Market;
  selection: string;
  line: number | null;
  reason: RejectionReason;
  /** For offer-level reasons: why each bookmaker's price was not taken. */
  offers?: RejectedOffer[];
  /** For references_disagree: each reference's fair probability of the selection. */
  referenceProbabilities?: { bookmaker: string; probability: number }[];
}

export interface DetectionOutcome {
  eventId: string;
  candidates: ValueCandidate[];
  rejected: RejectedOutcome[];
  /** Soft books whose whole market was left out of this event, with the reason. */
  skippedBooks: SkippedBook[];
}

/** Margin at which the margin factor reaches 0: the devig's own ceiling (MAX_BOOKSUM - 1 = 25 %). */
export const CONFIDENCE_ZERO_MARGIN = MAX_BOOKSUM - 1;
/** Relative method disagreement at which the disagreement factor reaches 0 (10 % of the probability). */
export const CONFIDENCE_ZERO_DISAGREEMENT = 0.1;
/** Age factor at the oldest accepted market (referenceMaxAgeSeconds): it falls linearly from 1 to this. */
export const CONFIDENCE_AGE_FLOOR = 0.5;
/** The offering book's usual margins: outside them its price says less about the match. */
export const CONFIDENCE_BOOK_MARGIN = Object.freeze({ low: 0.02, high: 0.12, zeroBelowLow: 0.04, zeroAboveHigh: 0.13 });
/** Edges up to this are what markets usually allow; beyond, the edge factor falls. */
export const CONFIDENCE_USUAL_EDGE = 0.05;
/** How far past the usual edge the edge factor has halved (5 % + 20 % = 25 %). */
export const CONFIDENCE_EDGE_HALVING = 0.2;
/** The support factor when one reference alone prices the selection (1 with two or more). */
export const CONFIDENCE_SINGLE_REFERENCE = 0.85;

const clamp01 = (value: number): number => (value <= 0 ? 0 : value >= 1 ? 1 : value);

/**
 * confidence = round(100 x f x g x h(ref) x h(offer) x b x e), each factor in [0, 1] and
 * non-increasing in its input (docs/VALUE_ENGINE.md, "Confidence"):
 * f = 1 - margin / 0.25 (reference margin), g = 1 - disagreement / 0.10 (devig methods),
 * h(age) = 1 - 0.5 x age / referenceMaxAgeSeconds (reference and offered market),
 * b = 1 inside the offering book's usual margin [0.02, 0.12], falling to 0 at -0.02 and 0.25,
 * e = 1 / (1 + max(0, edge - 0.05) / 0.20) (an edge far beyond what markets allow is more
 * likely an error than value), r = 0.85 when one reference alone prices it, else 1.
 */
export function confidenceScore(inputs: ConfidenceInputs, referenceMaxAgeSeconds: number): number {
  const margin = clamp01(1 - Math.max(0, inputs.margin) / CONFIDENCE_ZERO_MARGIN);
  const agreement = clamp01(1 - Math.max(0, inputs.methodDisagreement) / CONFIDENCE_ZERO_DISAGREEMENT);
  const freshness = (age: number) => clamp01(1 - ((1 - CONFIDENCE_AGE_FLOOR) * Math.max(0, age)) / referenceMaxAgeSeconds);
  const score = Math.round(
    100 *
      margin *
      agreement *
      freshness(inputs.referenceAgeSeconds) *
      freshness(inputs.offeredAgeSeconds) *
      bookMarginFactor(inputs.offeredMargin) *
      edgeFactor(inputs.edge) *
      (inputs.references >= 2 ? 1 : CONFIDENCE_SINGLE_REFERENCE),
  );
  return Number.isFinite(score) ? Math.min(100, Math.max(0, score)) : 0;
}

/** 1 inside the usual margins of a soft book, linearly down to 0 outside them; 1 when unknown. */
export function bookMarginFactor(margin: number | null): number {
  if (margin === null) return 1;
  const { low, high, zeroBelowLow, zeroAboveHigh } = CONFIDENCE_BOOK_MARGIN;
  if (margin < low) return clamp01(1 - (low - margin) / zeroBelowLow);
  if (margin > high) return clamp01(1 - (margin - high) / zeroAboveHigh);
  return 1;
}

/** 1 up to the usual edge, then 1 / (1 + excess / 0.20): half at 25 %, under a third at 50 %. */
export function edgeFactor(edge: number): number {
  if (!Number.isFinite(edge)) return 0;
  return 1 / (1 + Math.max(0, edge - CONFIDENCE_USUAL_EDGE) / CONFIDENCE_EDGE_HALVING);
}

/** One market of an event: its key and, for spreads and totals, its line (OddsMarket.line). */
export interface MarketSlot {
  key: Market;
  line: number | null;
}

/** A bookmaker's market at exactly this slot; a different line is another market. */
function marketAt(bookmaker: OddsBookmaker, slot: MarketSlot): OddsMarket | undefined {
  return bookmaker.markets.find((market) => market.key === slot.key && market.line === slot.line);
}

/** The configured references present in the event, in configuration order. */
function referencesIn(event: OddsEvent, references: readonly ReferenceBook[]): { bookmaker: OddsBookmaker; weight: number }[] {
  return references.flatMap((reference) => {
    const bookmaker = event.bookmakers.find((candidate) => candidate.key === reference.key);
    return bookmaker ? [{ bookmaker, weight: reference.weight }] : [];
  });
}

/** The event's markets: the references' first, then any other book's in feed order. */
function marketSlotsOf(event: OddsEvent, references: readonly OddsBookmaker[]): MarketSlot[] {
  const slots: MarketSlot[] = [];
  for (const bookmaker of [...references, ...event.bookmakers]) {
    for (const market of bookmaker.markets) {
      if (!slots.some((slot) => slot.key === market.key && slot.line === market.line)) slots.push({ key: market.key, line: market.line });
    }
  }
  return slots;
}

/** A selection's own line in a slot: the point quoted for it (every book at the slot quotes the same); null in h2h. */
function selectionLine(slot: MarketSlot, selection: string, event: OddsEvent): number | null {
  if (slot.line === null) return null;
  for (const bookmaker of event.bookmakers) {
    const point = marketAt(bookmaker, slot)?.outcomes.find((o) => o.name === selection)?.point;
    if (point !== undefined) return point;
  }
  return null;
}

function marketUpdatedAt(bookmaker: OddsBookmaker, market: OddsMarket): Date {
  return market.lastUpdate ?? bookmaker.lastUpdate;
}

/**
 * Seconds since `at`. A time ahead of our clock within the allowed skew counts as brand new; one
 * further ahead is a broken clock, and its market is stale (Infinity), never fresh.
 */
function ageSeconds(at: Date, now: Date, clockSkewSeconds: number): number {
  const age = (now.getTime() - at.getTime()) / 1000;
  if (age < -clockSkewSeconds) return Number.POSITIVE_INFINITY;
  return Math.max(0, age);
}

/** Outcome names of the event's markets at a slot: the references' first, then any others in feed order. */
function selectionsOf(event: OddsEvent, references: readonly OddsBookmaker[], slot: MarketSlot): string[] {
  const names: string[] = [];
  for (const bookmaker of [...references, ...event.bookmakers]) {
    for (const outcome of marketAt(bookmaker, slot)?.outcomes ?? []) if (!names.includes(outcome.name)) names.push(outcome.name);
  }
  return names;
}

/** The consensus behind one market, with what detection needs beside it. */
interface PricedSlot {
  consensus: Consensus;
  /** The first used reference's market: the yardstick of a soft book's sanity (saneSoftMarket). */
  primary: OddsMarket;
  titles: string[];
  /** Seconds since the oldest used reference's last_update. */
  referenceAge: number;
}

/**
 * Per outcome of each of the event's markets (h2h; spreads and totals at each line): a
 * candidate for the best post-tax price among the offers that pass every filter, or a reason.
 * Reasons are checked in this order: kickoff, horizon, references (none at that line, all stale,
 * all refused by the devig), then the offers (none), the references disagreeing on the selection,
 * then the reason of the best post-tax offer when no offer qualifies.
 */
export function detectValue(event: OddsEvent, options: Partial<DetectionOptions>, now: Date): DetectionOutcome {
  const opts: DetectionOptions = { ...DEFAULT_DETECTION_OPTIONS, ...options };
  const references = referencesIn(event, opts.references);
  const outcome: DetectionOutcome = { eventId: event.id, candidates: [], rejected: [], skippedBooks: [] };
  const untilKickoffMs = event.commenceTime.getTime() - now.getTime();
  const timing: RejectionReason | null = !(untilKickoffMs > 0) ? 'kickoff_past' : untilKickoffMs > opts.horizonHours * 3_600_000 ? 'beyond_horizon' : null;
  const referenceBooks = references.map((reference) => reference.bookmaker);
  for (const slot of marketSlotsOf(event, referenceBooks)) detectMarket(event, slot, references, timing, opts, now, outcome);
  return outcome;
}

/** detectValue for one market (key and line) of the event, into `outcome`. */
function detectMarket(
  event: OddsEvent,
  slot: MarketSlot,
  references: readonly { bookmaker: OddsBookmaker; weight: number }[],
  timing: RejectionReason | null,
  opts: DetectionOptions,
  now: Date,
  outcome: DetectionOutcome,
): void {
  const referenceBooks = references.map((reference) => reference.bookmaker);
  const selections = selectionsOf(event, referenceBooks, slot);
  const rejectAll = (reason: RejectionReason) => {
    for (const selection of selections) outcome.rejected.push({ market: slot.key, selection, line: selectionLine(slot, selection, event), reason });
  };
  if (timing !== null) return rejectAll(timing);

  const priced = priceSlot(slot, references, opts, now);
  // A reference left out is a skip to log whether or not the others still price the market.
  for (const refusal of 'reason' in priced ? priced.refused : priced.consensus.refused) {
    if (refusal.reason === 'outcomes_differ') {
      outcome.skippedBooks.push({ bookmaker: refusal.bookmaker, market: slot.key, line: slot.line, reason: 'reference_outcomes_differ', detail: `the reference ${refusal.detail}, so it is left out of the consensus` });
    } else if (isExchangeRefusal(refusal.reason)) {
      outcome.skippedBooks.push({ bookmaker: refusal.bookmaker, market: slot.key, line: slot.line, reason: refusal.reason, detail: `${refusal.detail}, so it is left out of the consensus` });
    }
  }
  if ('reason' in priced) return rejectAll(priced.reason);

  const usable = new Set<string>();
  for (const bookmaker of event.bookmakers) {
    // A reference book is never also an offer: it is part of the price it would be compared with.
    if (opts.references.some((reference) => reference.key === bookmaker.key)) continue;
    const market = marketAt(bookmaker, slot);
    if (!market) continue;
    const skip = saneSoftMarket(market, priced.primary);
    if (skip) outcome.skippedBooks.push({ bookmaker: bookmaker.key, market: slot.key, line: slot.line, ...skip });
    else usable.add(bookmaker.key);
  }

  for (const selection of selections) {
    const result = detectSelection(event, slot, selection, priced, usable, opts, now);
    if ('reason' in result) outcome.rejected.push(result);
    else outcome.candidates.push(result);
  }
}

/**
 * The consensus of the references that quote the slot and are fresh, or why there is none: no
 * reference quotes it, every one that does is stale, or the devig refuses them all (the first
 * refusal's reason).
 */
function priceSlot(
  slot: MarketSlot,
  references: readonly { bookmaker: OddsBookmaker; weight: number }[],
  opts: DetectionOptions,
  now: Date,
): PricedSlot | { reason: RejectionReason; refused: QuoteRefusal[] } {
  const quoting = references.flatMap(({ bookmaker, weight }) => {
    const market = marketAt(bookmaker, slot);
    return market ? [{ bookmaker, weight, market, updatedAt: marketUpdatedAt(bookmaker, market) }] : [];
  });
  if (quoting.length === 0) return { reason: 'no_reference', refused: [] };
  const fresh = quoting.filter((quote) => ageSeconds(quote.updatedAt, now, opts.clockSkewSeconds) <= opts.referenceMaxAgeSeconds);
  if (fresh.length === 0) return { reason: 'reference_stale', refused: [] };
  const quotes: ReferenceQuote[] = fresh.map((quote) => ({ bookmaker: quote.bookmaker.key, weight: quote.weight, outcomes: quote.market.outcomes, updatedAt: quote.updatedAt }));
  const consensus = referenceConsensus(quotes, opts.devigMethod, opts.maxExchangeSpread);
  if (!('quotes' in consensus)) return { reason: `reference_refused:${consensus.refused[0]!.reason as DevigRefusalReason | ExchangeRefusalReason}`, refused: consensus.refused };
  const used = consensus.quotes.map((quote) => fresh.find((candidate) => candidate.bookmaker.key === quote.bookmaker)!);
  return {
    consensus,
    primary: used[0]!.market,
    titles: used.map((quote) => quote.bookmaker.title),
    referenceAge: Math.max(...used.map((quote) => ageSeconds(quote.updatedAt, now, opts.clockSkewSeconds))),
  };
}

/**
 * Whether a soft book's market may be compared with the reference's at all: null when it may,
 * else the reason its whole market is left out of the event. A book that prices fewer outcomes
 * than the reference (a soccer book with only the two teams) is compared outcome by outcome.
 */
export function saneSoftMarket(market: OddsMarket, reference: OddsMarket): { reason: BookRejection; detail: string } | null {
  const referencePrice = new Map(reference.outcomes.map((o) => [o.name, o.price]));
  const foreign = market.outcomes.find((o) => !referencePrice.has(o.name));
  if (foreign) {
    return { reason: 'outcome_not_in_reference', detail: `lists "${foreign.name}", which the reference's ${reference.outcomes.length}-way market lacks` };
  }
  for (const o of market.outcomes) {
    const limit = SANE_PRICE_MULTIPLE * referencePrice.get(o.name)!;
    if (o.price > limit) {
      return { reason: 'price_beyond_reference_multiple', detail: `prices "${o.name}" at ${o.price}, above ${SANE_PRICE_MULTIPLE} x the reference's ${referencePrice.get(o.name)}` };
    }
  }
  if (market.outcomes.length === reference.outcomes.length) {
    const booksum = market.outcomes.reduce((sum, o) => sum + 1 / o.price, 0);
    if (booksum < MIN_SOFT_BOOKSUM) {
      return { reason: 'negative_margin', detail: `implied probabilities sum to ${booksum.toFixed(4)}, below 1: no book offers a negative margin` };
    }
  }
  return null;
}

/**
 * The tax on stakes an offer's price pays: BOOKMAKER_TAX_RATES' rate for a book (the default when
 * unnamed); for an exchange, its commission on net winnings (BOOKMAKER_TAX_RATES, else its
 * published base commission) as the equivalent tax at this price.
 */
export function offerTaxRate(bookmakerKey: string, price: number, opts: Pick<DetectionOptions, 'taxRates' | 'defaultTaxRate'>): number {
  const named = opts.taxRates[bookmakerKey];
  if (isExchange(bookmakerKey)) return commissionAsTaxRate(named ?? EXCHANGE_COMMISSIONS[bookmakerKey]!, price);
  return named ?? opts.defaultTaxRate;
}

interface Offer {
  bookmaker: OddsBookmaker;
  price: number;
  updatedAt: Date;
  taxRate: number;
  netPrice: number;
  market: OddsMarket;
}

function detectSelection(
  event: OddsEvent,
  slot: MarketSlot,
  selection: string,
  priced: PricedSlot,
  usableBooks: ReadonlySet<string>,
  opts: DetectionOptions,
  now: Date,
): ValueCandidate | RejectedOutcome {
  const { consensus } = priced;
  const line = selectionLine(slot, selection, event);
  const index = consensus.names.indexOf(selection);
  if (index < 0) return { market: slot.key, selection, line, reason: 'no_reference' };

  const offers: Offer[] = [];
  for (const bookmaker of event.bookmakers) {
    if (!usableBooks.has(bookmaker.key)) continue;
    const market = marketAt(bookmaker, slot);
    const offered = market?.outcomes.find((o) => o.name === selection);
    if (!market || !offered) continue;
    const taxRate = offerTaxRate(bookmaker.key, offered.price, opts);
    offers.push({
      bookmaker,
      price: offered.price,
      updatedAt: marketUpdatedAt(bookmaker, market),
      taxRate,
      netPrice: offered.price * (1 - taxRate),
      market,
    });
  }
  if (offers.length === 0) return { market: slot.key, selection, line, reason: 'no_offer' };
  // Checked only where someone offers a price: a disagreement with nothing to bet on is not news.
  if (referenceSpread(consensus, index) > opts.maxReferenceSpread) {
    const referenceProbabilities = consensus.quotes.map((quote) => ({ bookmaker: quote.bookmaker, probability: quote.probabilities[index]! }));
    return { market: slot.key, selection, line, reason: 'references_disagree', referenceProbabilities };
  }
  const fairProbability = consensus.probabilities[index]!;
  const fairOdds = 1 / fairProbability;

  const rejectionOf = (offer: Offer): OfferRejection | null => {
    if (ageSeconds(offer.updatedAt, now, opts.clockSkewSeconds) > opts.referenceMaxAgeSeconds) return 'offered_stale';
    if (offer.price < opts.oddsRange.min || offer.price > opts.oddsRange.max) return 'outside_odds_range';
    if (postTaxEdgeFraction(offer.price, fairOdds, offer.taxRate) < opts.minEdge) return 'below_min_edge';
    return null;
  };
  // Best post-tax price first; a tie keeps feed order (sort is stable).
  const ranked = [...offers].sort((a, b) => b.netPrice - a.netPrice);
  const rejectedOffers: RejectedOffer[] = [];
  const qualifying: Offer[] = [];
  for (const offer of ranked) {
    const rejection = rejectionOf(offer);
    if (rejection === null) qualifying.push(offer);
    else if (qualifying.length === 0) rejectedOffers.push({ bookmaker: offer.bookmaker.key, price: offer.price, reason: rejection });
  }
  if (qualifying.length === 0) return { market: slot.key, selection, line, reason: rejectedOffers[0]!.reason, offers: rejectedOffers };

  // Best plausible price first: an edge at or above reviewEdge looks wrong, so a qualifying
  // offer below it is published instead, and the suspect ones are recorded; only when every
  // qualifying offer looks wrong is the best one held for review.
  const tooGood = (offer: Offer) => postTaxEdgeFraction(offer.price, fairOdds, offer.taxRate) >= opts.reviewEdge;
  const plausible = qualifying.find((offer) => !tooGood(offer));
  const best = plausible ?? qualifying[0]!;
  const excludedOffers: ExcludedOffer[] = plausible
    ? qualifying.filter(tooGood).map((offer) => ({ bookmaker: offer.bookmaker.key, price: offer.price, reason: 'too_good' as const }))
    : [];

  const fairProbabilities = selectionProbabilities(consensusByMethod(consensus), index);
  const edgePostTaxFraction = postTaxEdgeFraction(best.price, fairOdds, best.taxRate);
  const offeredPrices = best.market.outcomes.map((o) => o.price);
  const confidenceInputs: ConfidenceInputs = {
    margin: consensusMargin(consensus),
    references: consensus.quotes.length,
    methodDisagreement: methodDisagreement(fairProbabilities, fairProbability),
    referenceAgeSeconds: priced.referenceAge,
    offeredAgeSeconds: ageSeconds(best.updatedAt, now, opts.clockSkewSeconds),
    offeredMargin: best.market.outcomes.length === consensus.names.length ? overround(offeredPrices) : null,
    edge: best.price / fairOdds - 1,
  };
  const warnings: PickWarning[] = [];
  if (consensus.quotes.length === 1) warnings.push('single_sharp_reference');
  if (consensus.quotes.some((quote) => quote.margin > opts.maxReferenceMargin)) warnings.push('wide_reference_market');
  const primary = consensus.quotes[0]!;
  return {
    eventId: event.id,
    market: slot.key,
    selection,
    line,
    bookmakerKey: best.bookmaker.key,
    bookmakerTitle: best.bookmaker.title,
    price: best.price,
    taxRate: best.taxRate,
    offeredUpdatedAt: best.updatedAt,
    fairProbability,
    fairOdds,
    edgePercent: edgePct(best.price, fairOdds),
    edgePostTaxFraction,
    kellyFraction: kellyFraction(best.price, fairOdds, best.taxRate),
    edgeTier: edgeTier(edgePostTaxFraction),
    held: plausible === undefined,
    confidence: confidenceScore(confidenceInputs, opts.referenceMaxAgeSeconds),
    confidenceInputs,
    warnings,
    provenance: {
      referenceBookmaker: primary.bookmaker,
      referencePrices: primary.outcomes.map((o) => ({ ...o })),
      referenceUpdatedAt: primary.updatedAt,
      references: referenceRecords(consensus),
      referenceTitles: priced.titles,
      devigMethod: opts.devigMethod,
      fairProbabilities,
      offeredPrices: offers.map((o) => ({ bookmaker: o.bookmaker.key, price: o.price, updatedAt: o.updatedAt })),
      excludedOffers,
    },
  };
}

function selectionProbabilities(all: DevigAllResult, index: number): SelectionFairProbabilities {
  const at = (list: number[] | null) => (list ? list[index]! : null);
  return {
    multiplicative: at(all.multiplicative),
    additive: at(all.additive),
    power: at(all.power),
    shin: at(all.shin),
    oddsRatio: at(all.oddsRatio),
  };
}

/** (max - min) of the accepting methods' probabilities, relative to the chosen method's probability. */
export function methodDisagreement(probabilities: SelectionFairProbabilities, chosen: number): number {
  const values = Object.values(probabilities).filter((p): p is number => p !== null);
  if (values.length < 2) return 0;
  return (Math.max(...values) - Math.min(...values)) / chosen;
}

/** "a", "a and b", "a, b and c". */
const wordList = (words: readonly string[]): string => (words.length <= 1 ? words.join('') : `${words.slice(0, -1).join(', ')} and ${words.at(-1)}`);

const percent = (fraction: number, decimals = 1): string => `${(fraction * 100).toFixed(decimals)} %`;

const METHOD_LABELS: Record<keyof SelectionFairProbabilities, string> = {
  multiplicative: 'multiplicative',
  additive: 'additive',
  power: 'power',
  shin: 'shin',
  oddsRatio: 'odds_ratio',
};

/** What the analysis calls the selection: "a draw", "Arsenal", "Arsenal -0.75", "Over 2.5 goals". */
function subjectOf(candidate: ValueCandidate, event: OddsEvent): string {
  if (candidate.market === 'h2h') return candidate.selection === DRAW_SELECTION ? 'a draw' : candidate.selection;
  return describeSelection({ market: candidate.market, selection: candidate.selection, line: candidate.line, sport: sportSlugOfKey(event.sportKey) });
}

/** A few plain sentences from the candidate's numbers (the pick's generated match analysis). */
export function analysisText(candidate: ValueCandidate, event: OddsEvent, advice: StakeAdvice = DEFAULT_STAKE_ADVICE): string {
  const { provenance } = candidate;
  const subject = subjectOf(candidate, event);
  const sentences: string[] = [];
  const fairPrice = `a no-vig ${candidate.fairOdds.toFixed(3)} (${percent(candidate.fairProbability)})`;
  const [single] = provenance.references;
  if (provenance.references.length === 1 && single) {
    sentences.push(
      `${event.homeTeam} v ${event.awayTeam} (${event.sportTitle}): ${provenance.referenceTitles[0]}, the reference, ` +
        `prices ${subject} at ${fairPrice} after the ${provenance.devigMethod} method removes its ${percent(candidate.confidenceInputs.margin)} margin.`,
    );
  } else {
    const weights = provenance.references.map((reference) => String(reference.weight));
    const margins = provenance.references.map((reference) => percent(overround(reference.prices.map((o) => o.price))));
    sentences.push(
      `${event.homeTeam} v ${event.awayTeam} (${event.sportTitle}): ${wordList(provenance.referenceTitles)}, the references ` +
        `(weights ${wordList(weights)}), price ${subject} at ${fairPrice} after the ${provenance.devigMethod} method removes ` +
        `their margins (${wordList(margins)}) and their fair prices are averaged.`,
    );
  }
  sentences.push(
    `${candidate.bookmakerTitle} offers ${candidate.price.toFixed(2)}: an edge of ${candidate.edgePercent.toFixed(1)} % ` +
      `before tax and ${percent(candidate.edgePostTaxFraction)} after its ${percent(candidate.taxRate)} tax.`,
  );
  // Full Kelly is the exact math, not a stake to bet: the analysis quotes the advice beside it.
  sentences.push(
    `Full Kelly would stake ${percent(candidate.kellyFraction)} of the bankroll; the advised stake is ${stakePct(candidate.kellyFraction, advice).toFixed(2)} %.`,
  );
  const entries = (Object.keys(METHOD_LABELS) as (keyof SelectionFairProbabilities)[]).map(
    (field) => [field, provenance.fairProbabilities[field]] as const,
  );
  const accepting = entries.filter((entry): entry is readonly [keyof SelectionFairProbabilities, number] => entry[1] !== null);
  const refusing = entries.filter(([, p]) => p === null).map(([field]) => METHOD_LABELS[field]);
  const low = Math.min(...accepting.map(([, p]) => p));
  const high = Math.max(...accepting.map(([, p]) => p));
  let agreement =
    `The ${accepting.length} devig methods that accept this market put ${subject} between ` +
    `${percent(low)} and ${percent(high)} (a spread of ${((high - low) * 100).toFixed(1)} points)`;
  if (refusing.length > 0) agreement += `; ${refusing.join(' and ')} ${refusing.length === 1 ? 'refuses' : 'refuse'} it`;
  agreement += '.';
  sentences.push(agreement);
  sentences.push(`Confidence ${candidate.confidence} of 100.`);
  if (candidate.held) {
    sentences.push('The edge is large enough to look wrong, so the pick is held for review.');
  } else if (provenance.excludedOffers.length > 0) {
    const passedOver = provenance.excludedOffers.map((offer) => `${offer.price.toFixed(2)} at ${offer.bookmaker}`).join(', ');
    sentences.push(`Higher prices (${passedOver}) looked too good to be true and were passed over.`);
  }
  return sentences.join(' ');
}

/** One reference's market in one event, as the engine keeps it for the closing line. */
export interface ReferenceObservation {
  bookmaker: string;
  market: Market;
  /** The market's line (OddsMarket.line): null for h2h, the home handicap for spreads, the point for totals. */
  line: number | null;
  /** The reference's own prices (with their points), as the feed sent them. */
  prices: ReferencePrice[];
  /** The reference market's feed last_update (the market's, else the bookmaker's). */
  updatedAt: Date;
}

/**
 * Every configured reference's markets in one event, kept by the engine for the closing line; a
 * market whose last_update is further ahead of `now` than the allowed clock skew is left out (a
 * broken clock never makes a close). The close devigs them (closing-line.ts).
 */
export function referenceObservations(
  event: OddsEvent,
  options: Pick<DetectionOptions, 'references' | 'clockSkewSeconds'>,
  now: Date,
): ReferenceObservation[] {
  return referencesIn(event, options.references).flatMap(({ bookmaker }) =>
    bookmaker.markets.flatMap((market) => {
      const updatedAt = marketUpdatedAt(bookmaker, market);
      if (ageSeconds(updatedAt, now, options.clockSkewSeconds) === Number.POSITIVE_INFINITY) return [];
      return [{ bookmaker: bookmaker.key, market: market.key, line: market.line, prices: market.outcomes.map((o) => ({ ...o })), updatedAt }];
    }),
  );
}

/** What one odds poll shows of a published pick's own offer (src/domain/availability.ts reads it). */
export type OfferSighting =
  /** The book quotes the selection at the pick's line: its price, and the post-tax edge against the references' current fair price. */
  | { kind: 'quoted'; price: number; edgePostTax: number }
  /**
   * Quoted, but not judged: no fresh reference quotes that market, the devig refuses it, or the
   * book's market fails saneSoftMarket (a price the engine would not trust as an offer).
   */
  | { kind: 'unpriced' }
  /** The book no longer quotes that selection at that line (or at all). */
  | { kind: 'gone' };

/** The offer a pick was published on: its book, market, selection and own line (null in h2h). */
export interface OfferKey {
  bookmaker: string;
  market: Market;
  selection: string;
  line: number | null;
}

/**
 * The pick's offer in this poll of its event. Read by name at the pick's own point: a book that
 * lists the outcomes in another order, or quotes the market at another line only, is read right.
 * The tax is the book's at the price now (an exchange's commission depends on the price).
 */
export function sightOffer(event: OddsEvent, offer: OfferKey, options: Partial<DetectionOptions>, now: Date): OfferSighting {
  const opts: DetectionOptions = { ...DEFAULT_DETECTION_OPTIONS, ...options };
  const slot: MarketSlot = { key: offer.market, line: marketLineOf(offer.market, offer.selection, offer.line, event.homeTeam) };
  const bookmaker = event.bookmakers.find((candidate) => candidate.key === offer.bookmaker);
  const market = bookmaker === undefined ? undefined : marketAt(bookmaker, slot);
  const quoted = market?.outcomes.find((outcome) => outcome.name === offer.selection && (outcome.point ?? null) === offer.line);
  if (market === undefined || quoted === undefined) return { kind: 'gone' };
  const priced = priceSlot(slot, referencesIn(event, opts.references), opts, now);
  if ('reason' in priced || saneSoftMarket(market, priced.primary) !== null) return { kind: 'unpriced' };
  const index = priced.consensus.names.indexOf(offer.selection);
  if (index < 0) return { kind: 'unpriced' };
  const fairOdds = 1 / priced.consensus.probabilities[index]!;
  return { kind: 'quoted', price: quoted.price, edgePostTax: postTaxEdgeFraction(quoted.price, fairOdds, offerTaxRate(offer.bookmaker, quoted.price, opts)) };
}

