/**
 * Value detection (docs/VALUE_ENGINE.md, "Detection"): one odds-feed event -> the candidate
 * picks of its h2h market, priced against the reference bookmaker's devigged (fair) price with
 * the edge, post-tax edge and Kelly math of odds.ts, plus a machine reason for every outcome
 * that yields no pick. Pure: no I/O, the clock comes in as `now`.
 */
import {
  DEFAULT_DEVIG_METHOD,
  DevigError,
  type DevigAllResult,
  type DevigMethod,
  MAX_BOOKSUM,
  devig,
  devigAll,
  overround,
} from './devig.js';
import { DRAW_SELECTION } from './market.js';
import { H2H_MARKET, type OddsBookmaker, type OddsEvent, type OddsMarket } from './odds-feed.js';
import { DEFAULT_TAX_RATE, type EdgeTier, edgePct, edgePctPostTax, edgeTier, kellyFraction } from './odds.js';

export interface OddsRange {
  /** Inclusive bounds on the offered (pre-tax) decimal price. */
  min: number;
  max: number;
}

export interface DetectionOptions {
  referenceBookmaker: string;
  devigMethod: DevigMethod;
  /** Tax on stakes per feed bookmaker key, as a fraction (0.053 = 5.3 %). */
  taxRates: Readonly<Record<string, number>>;
  defaultTaxRate: number;
  /** Smallest post-tax edge that makes a pick, as a fraction (0.02 = 2 %). */
  minEdge: number;
  oddsRange: OddsRange;
  horizonHours: number;
  referenceMaxAgeSeconds: number;
  /** Post-tax edge (fraction) from which a pick is held for review: too good to be true. */
  reviewEdge: number;
}

export const DEFAULT_DETECTION_OPTIONS: Readonly<DetectionOptions> = Object.freeze({
  referenceBookmaker: 'pinnacle',
  devigMethod: DEFAULT_DEVIG_METHOD,
  taxRates: Object.freeze({}),
  defaultTaxRate: DEFAULT_TAX_RATE,
  minEdge: 0.02,
  oddsRange: Object.freeze({ min: 1.2, max: 15 }),
  horizonHours: 72,
  referenceMaxAgeSeconds: 300,
  reviewEdge: 0.25,
});

export type OfferRejection = 'below_min_edge' | 'outside_odds_range' | 'offered_stale';

export type RejectionReason =
  | 'no_reference'
  | 'reference_stale'
  | `reference_refused:${DevigError['reason']}`
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

/** What the engine stores as the pick's provenance (plus the event id and detection time). */
export interface DetectionProvenance {
  referenceBookmaker: string;
  referenceBookmakerTitle: string;
  referencePrices: { name: string; price: number }[];
  referenceUpdatedAt: Date;
  devigMethod: DevigMethod;
  fairProbabilities: SelectionFairProbabilities;
  /** Every other bookmaker's price for this selection, in feed order (stale ones included). */
  offeredPrices: OfferedPrice[];
}

export interface ConfidenceInputs {
  /** Reference market's overround S - 1 (0.03 = 3 %). */
  margin: number;
  /** (max - min) of the methods' probabilities of this selection, relative to the chosen method's. */
  methodDisagreement: number;
  /** Seconds since the reference market's last_update. */
  referenceAgeSeconds: number;
}

export interface ValueCandidate {
  eventId: string;
  market: typeof H2H_MARKET;
  selection: string;
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
  /** Post-tax edge as a fraction: price x (1 - tax) / fair - 1 (odds.ts edgePctPostTax). */
  edgePostTaxFraction: number;
  kellyFraction: number;
  edgeTier: EdgeTier;
  /** Post-tax edge >= reviewEdge: the pick waits for an operator. */
  held: boolean;
  /** 0..100, see confidenceScore. */
  confidence: number;
  confidenceInputs: ConfidenceInputs;
  provenance: DetectionProvenance;
}

export interface RejectedOffer {
  bookmaker: string;
  price: number;
  reason: OfferRejection;
}

export interface RejectedOutcome {
  selection: string;
  reason: RejectionReason;
  /** For offer-level reasons: why each bookmaker's price was not taken. */
  offers?: RejectedOffer[];
}

export interface DetectionOutcome {
  eventId: string;
  candidates: ValueCandidate[];
  rejected: RejectedOutcome[];
}

/** Margin at which the margin factor reaches 0: the devig's own ceiling (MAX_BOOKSUM - 1 = 25 %). */
export const CONFIDENCE_ZERO_MARGIN = MAX_BOOKSUM - 1;
/** Relative method disagreement at which the disagreement factor reaches 0 (10 % of the probability). */
export const CONFIDENCE_ZERO_DISAGREEMENT = 0.1;
/** Age factor at the oldest accepted reference (referenceMaxAgeSeconds): it falls linearly from 1 to this. */
export const CONFIDENCE_AGE_FLOOR = 0.5;

const clamp01 = (value: number): number => (value <= 0 ? 0 : value >= 1 ? 1 : value);

/**
 * confidence = round(100 x f(margin) x g(disagreement) x h(age)), with
 * f = clamp(1 - margin / 0.25), g = clamp(1 - disagreement / 0.10),
 * h = clamp(1 - 0.5 x age / referenceMaxAgeSeconds); clamp to [0, 1]. Each factor is
 * non-increasing in its input, so the score never rises when one input grows.
 */
export function confidenceScore(inputs: ConfidenceInputs, referenceMaxAgeSeconds: number): number {
  const margin = clamp01(1 - Math.max(0, inputs.margin) / CONFIDENCE_ZERO_MARGIN);
  const agreement = clamp01(1 - Math.max(0, inputs.methodDisagreement) / CONFIDENCE_ZERO_DISAGREEMENT);
  const freshness = clamp01(
    1 - ((1 - CONFIDENCE_AGE_FLOOR) * Math.max(0, inputs.referenceAgeSeconds)) / referenceMaxAgeSeconds,
  );
  const score = Math.round(100 * margin * agreement * freshness);
  return Number.isFinite(score) ? Math.min(100, Math.max(0, score)) : 0;
}

function h2hMarket(bookmaker: OddsBookmaker): OddsMarket | undefined {
  return bookmaker.markets.find((market) => market.key === H2H_MARKET);
}

function marketUpdatedAt(bookmaker: OddsBookmaker, market: OddsMarket): Date {
  return market.lastUpdate ?? bookmaker.lastUpdate;
}

/** Seconds since `at`; a time ahead of our clock (feed clock skew) counts as brand new. */
function ageSeconds(at: Date, now: Date): number {
  return Math.max(0, (now.getTime() - at.getTime()) / 1000);
}

/** Outcome names of the event's h2h markets: the reference's first, then any others in feed order. */
function selectionsOf(event: OddsEvent, reference: OddsBookmaker | undefined): string[] {
  const names: string[] = [];
  const add = (market: OddsMarket | undefined) => {
    for (const outcome of market?.outcomes ?? []) if (!names.includes(outcome.name)) names.push(outcome.name);
  };
  if (reference) add(h2hMarket(reference));
  for (const bookmaker of event.bookmakers) add(h2hMarket(bookmaker));
  return names;
}

interface PricedReference {
  bookmaker: OddsBookmaker;
  market: OddsMarket;
  updatedAt: Date;
  chosen: number[];
  all: DevigAllResult;
}

/**
 * Per outcome of the event's h2h market: a candidate for the best post-tax price among the
 * offers that pass every filter, or a reason. Reasons are checked in this order: kickoff,
 * horizon, reference (missing, stale, refused by the devig), then the offers (none, or the
 * reason of the best post-tax offer when no offer qualifies).
 */
export function detectValue(event: OddsEvent, options: Partial<DetectionOptions>, now: Date): DetectionOutcome {
  const opts: DetectionOptions = { ...DEFAULT_DETECTION_OPTIONS, ...options };
  const reference = event.bookmakers.find((bookmaker) => bookmaker.key === opts.referenceBookmaker);
  const selections = selectionsOf(event, reference);
  const outcome: DetectionOutcome = { eventId: event.id, candidates: [], rejected: [] };
  const rejectAll = (reason: RejectionReason) => {
    for (const selection of selections) outcome.rejected.push({ selection, reason });
    return outcome;
  };

  const untilKickoffMs = event.commenceTime.getTime() - now.getTime();
  if (!(untilKickoffMs > 0)) return rejectAll('kickoff_past');
  if (untilKickoffMs > opts.horizonHours * 3_600_000) return rejectAll('beyond_horizon');

  const referenceMarket = reference ? h2hMarket(reference) : undefined;
  if (!reference || !referenceMarket) return rejectAll('no_reference');
  const referenceUpdatedAt = marketUpdatedAt(reference, referenceMarket);
  const referenceAge = ageSeconds(referenceUpdatedAt, now);
  if (referenceAge > opts.referenceMaxAgeSeconds) return rejectAll('reference_stale');

  let priced: PricedReference;
  try {
    const prices = referenceMarket.outcomes.map((o) => o.price);
    priced = {
      bookmaker: reference,
      market: referenceMarket,
      updatedAt: referenceUpdatedAt,
      chosen: devig(prices, opts.devigMethod).probabilities,
      all: devigAll(prices),
    };
  } catch (error) {
    if (error instanceof DevigError) return rejectAll(`reference_refused:${error.reason}`);
    throw error;
  }

  for (const selection of selections) {
    const result = detectSelection(event, selection, priced, opts, now, referenceAge);
    if ('reason' in result) outcome.rejected.push(result);
    else outcome.candidates.push(result);
  }
  return outcome;
}

interface Offer {
  bookmaker: OddsBookmaker;
  price: number;
  updatedAt: Date;
  taxRate: number;
  netPrice: number;
}

function detectSelection(
  event: OddsEvent,
  selection: string,
  reference: PricedReference,
  opts: DetectionOptions,
  now: Date,
  referenceAge: number,
): ValueCandidate | RejectedOutcome {
  const index = reference.market.outcomes.findIndex((o) => o.name === selection);
  if (index < 0) return { selection, reason: 'no_reference' };
  const fairProbability = reference.chosen[index]!;
  const fairOdds = 1 / fairProbability;

  const offers: Offer[] = [];
  for (const bookmaker of event.bookmakers) {
    if (bookmaker.key === reference.bookmaker.key) continue;
    const market = h2hMarket(bookmaker);
    const offered = market?.outcomes.find((o) => o.name === selection);
    if (!market || !offered) continue;
    const taxRate = opts.taxRates[bookmaker.key] ?? opts.defaultTaxRate;
    offers.push({
      bookmaker,
      price: offered.price,
      updatedAt: marketUpdatedAt(bookmaker, market),
      taxRate,
      netPrice: offered.price * (1 - taxRate),
    });
  }
  if (offers.length === 0) return { selection, reason: 'no_offer' };

  const rejectionOf = (offer: Offer): OfferRejection | null => {
    if (ageSeconds(offer.updatedAt, now) > opts.referenceMaxAgeSeconds) return 'offered_stale';
    if (offer.price < opts.oddsRange.min || offer.price > opts.oddsRange.max) return 'outside_odds_range';
    if (edgePctPostTax(offer.price, fairOdds, offer.taxRate) < opts.minEdge) return 'below_min_edge';
    return null;
  };
  // Best post-tax price first; a tie keeps feed order (sort is stable).
  const ranked = [...offers].sort((a, b) => b.netPrice - a.netPrice);
  const rejectedOffers: RejectedOffer[] = [];
  let best: Offer | undefined;
  for (const offer of ranked) {
    const rejection = rejectionOf(offer);
    if (rejection === null) {
      best = offer;
      break;
    }
    rejectedOffers.push({ bookmaker: offer.bookmaker.key, price: offer.price, reason: rejection });
  }
  if (!best) return { selection, reason: rejectedOffers[0]!.reason, offers: rejectedOffers };

  const fairProbabilities = selectionProbabilities(reference.all, index);
  const confidenceInputs: ConfidenceInputs = {
    margin: overround(reference.market.outcomes.map((o) => o.price)),
    methodDisagreement: methodDisagreement(fairProbabilities, fairProbability),
    referenceAgeSeconds: referenceAge,
  };
  const edgePostTaxFraction = edgePctPostTax(best.price, fairOdds, best.taxRate);
  return {
    eventId: event.id,
    market: H2H_MARKET,
    selection,
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
    held: edgePostTaxFraction >= opts.reviewEdge,
    confidence: confidenceScore(confidenceInputs, opts.referenceMaxAgeSeconds),
    confidenceInputs,
    provenance: {
      referenceBookmaker: reference.bookmaker.key,
      referenceBookmakerTitle: reference.bookmaker.title,
      referencePrices: reference.market.outcomes.map((o) => ({ name: o.name, price: o.price })),
      referenceUpdatedAt: reference.updatedAt,
      devigMethod: opts.devigMethod,
      fairProbabilities,
      offeredPrices: offers.map((o) => ({ bookmaker: o.bookmaker.key, price: o.price, updatedAt: o.updatedAt })),
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

const percent = (fraction: number, decimals = 1): string => `${(fraction * 100).toFixed(decimals)} %`;

const METHOD_LABELS: Record<keyof SelectionFairProbabilities, string> = {
  multiplicative: 'multiplicative',
  additive: 'additive',
  power: 'power',
  shin: 'shin',
  oddsRatio: 'odds_ratio',
};

/** A few plain sentences from the candidate's numbers (the pick's generated match analysis). */
export function analysisText(candidate: ValueCandidate, event: OddsEvent): string {
  const { provenance } = candidate;
  const subject = candidate.selection === DRAW_SELECTION ? 'a draw' : candidate.selection;
  const sentences: string[] = [];
  sentences.push(
    `${event.homeTeam} v ${event.awayTeam} (${event.sportTitle}): ${provenance.referenceBookmakerTitle}, the reference, ` +
      `prices ${subject} at a no-vig ${candidate.fairOdds.toFixed(3)} (${percent(candidate.fairProbability)}) ` +
      `after the ${provenance.devigMethod} method removes its ${percent(candidate.confidenceInputs.margin)} margin.`,
  );
  sentences.push(
    `${candidate.bookmakerTitle} offers ${candidate.price.toFixed(2)}: an edge of ${candidate.edgePercent.toFixed(1)} % ` +
      `before tax and ${percent(candidate.edgePostTaxFraction)} after its ${percent(candidate.taxRate)} tax.`,
  );
  sentences.push(`Kelly suggests staking ${percent(candidate.kellyFraction)} of the bankroll.`);
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
  }
  return sentences.join(' ');
}

export interface ReferenceFair {
  /** Fair (no-vig) decimal price per outcome name, by the configured devig method. */
  fair: Record<string, number>;
  /** The reference market's feed last_update (the market's, else the bookmaker's). */
  updatedAt: Date;
}

/**
 * The reference's fair prices for one event, kept by the engine for the closing line; null
 * when the event has no reference h2h market or the devig refuses it.
 */
export function referenceFairPrices(event: OddsEvent, options: Pick<DetectionOptions, 'referenceBookmaker' | 'devigMethod'>): ReferenceFair | null {
  const reference = event.bookmakers.find((bookmaker) => bookmaker.key === options.referenceBookmaker);
  const market = reference ? h2hMarket(reference) : undefined;
  if (!reference || !market) return null;
  try {
    const { probabilities } = devig(
      market.outcomes.map((o) => o.price),
      options.devigMethod,
    );
    const fair: Record<string, number> = {};
    market.outcomes.forEach((outcome, index) => {
      fair[outcome.name] = 1 / probabilities[index]!;
    });
    return { fair, updatedAt: marketUpdatedAt(reference, market) };
  } catch (error) {
    if (error instanceof DevigError) return null;
    throw error;
  }
}
