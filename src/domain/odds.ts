/** Odds math of a pick's edges, Kelly stake and tier (docs/API.md, "Pick"). */
import { InvalidParameterError } from './errors.js';
import { roundTo } from './numbers.js';

/** Default bookmaker tax on stakes (a bet pays odds x (1 - tax) per unit staked); per-bookmaker rates override it. */
export const DEFAULT_TAX_RATE = 0.053;

/**
 * The exchanges The Odds API v4 serves, with their published base commission on net winnings
 * (BOOKMAKER_TAX_RATES overrides each; an account's own rate may be lower). An exchange offer
 * pays 1 + (back - 1) x (1 - commission) per unit staked, not back x (1 - tax).
 */
export const EXCHANGE_COMMISSIONS: Readonly<Record<string, number>> = Object.freeze({
  betfair_ex_eu: 0.05,
  betfair_ex_uk: 0.05,
  betfair_ex_au: 0.05,
  matchbook: 0.02,
  smarkets: 0.02,
});

export function isExchange(bookmakerKey: string): boolean {
  return Object.hasOwn(EXCHANGE_COMMISSIONS, bookmakerKey);
}

/**
 * A commission on net winnings as the tax on stakes that pays the same at this price:
 * price x (1 - t) = 1 + (price - 1) x (1 - c) gives t = c x (price - 1) / price. Picks store a tax
 * rate, so an exchange pick stores this one.
 */
export function commissionAsTaxRate(commission: number, price: number): number {
  return (commission * (price - 1)) / price;
}

export type EdgeTier = 'big_edge' | 'stark' | 'standard';

export interface EdgeTierThresholds {
  bigEdge: number;
  stark: number;
}

export const DEFAULT_EDGE_TIER_THRESHOLDS: Readonly<EdgeTierThresholds> = Object.freeze({
  bigEdge: 0.08,
  stark: 0.04,
});

/** Pre-tax edge in percent: (odds / fair - 1) x 100. */
export function edgePct(odds: number, referenceFairOdds: number): number {
  return (odds / referenceFairOdds - 1) * 100;
}

/**
 * Post-tax edge as a fraction (0.0858 style): odds x (1 - tax) / fair - 1. Stored and served
 * as `edgePctPostTax` / `edge_pct_post_tax`, names the API keeps although the value is no percent.
 */
export function postTaxEdgeFraction(odds: number, referenceFairOdds: number, taxRate: number): number {
  return (odds * (1 - taxRate)) / referenceFairOdds - 1;
}

/**
 * Kelly stake fraction with p = 1 / fair and b = net post-tax odds. Never negative: a
 * bet without edge has stake 0, and so has one whose net odds pay nothing (b <= 0).
 */
export function kellyFraction(odds: number, referenceFairOdds: number, taxRate: number): number {
  const p = 1 / referenceFairOdds;
  const b = odds * (1 - taxRate) - 1;
  if (!(b > 0)) return 0;
  const kelly = (p * b - (1 - p)) / b;
  return kelly > 0 ? kelly : 0;
}

export function edgeTier(
  edgePostTax: number,
  thresholds: EdgeTierThresholds = DEFAULT_EDGE_TIER_THRESHOLDS,
): EdgeTier {
  if (edgePostTax >= thresholds.bigEdge) return 'big_edge';
  if (edgePostTax >= thresholds.stark) return 'stark';
  return 'standard';
}

/**
 * The stake advice (STAKE_KELLY_MULTIPLIER, STAKE_MAX_PCT): full Kelly is the exact math, not a
 * stake anyone should bet; the advice is a fraction of it, capped.
 */
export interface StakeAdvice {
  /** The share of full Kelly advised, 0 < m <= 1. */
  kellyMultiplier: number;
  /** The most ever advised, in percent of the bankroll, 0 < x <= 100. */
  maxPct: number;
}

export const DEFAULT_STAKE_ADVICE: Readonly<StakeAdvice> = Object.freeze({ kellyMultiplier: 0.25, maxPct: 2 });

/** The advised stake in percent of the bankroll: min(maxPct, 100 x kellyMultiplier x full Kelly), two decimals. */
export function stakePct(fullKelly: number, advice: StakeAdvice = DEFAULT_STAKE_ADVICE): number {
  return Math.min(advice.maxPct, roundTo(100 * advice.kellyMultiplier * fullKelly, 2));
}

export interface PickPricing {
  edgePct: number;
  edgePctPostTax: number;
  kellyFraction: number;
  edgeTier: EdgeTier;
  stakePct: number;
}

/**
 * Everything the service stores about a pick's price. Values are rounded for storage;
 * the tier uses the unrounded edge so rounding can never promote a pick across a threshold.
 * Inputs are validated here too, so a caller that forgot cannot store NaN or Infinity.
 */
export function priceEdges(
  input: { odds: number; referenceFairOdds: number; taxRate: number },
  thresholds: EdgeTierThresholds = DEFAULT_EDGE_TIER_THRESHOLDS,
  advice: StakeAdvice = DEFAULT_STAKE_ADVICE,
): PickPricing {
  validateDecimalOdds('odds', input.odds);
  validateDecimalOdds('referenceFairOdds', input.referenceFairOdds);
  validateTaxRate('taxRate', input.taxRate);
  const postTax = postTaxEdgeFraction(input.odds, input.referenceFairOdds, input.taxRate);
  const kelly = kellyFraction(input.odds, input.referenceFairOdds, input.taxRate);
  return {
    edgePct: roundTo(edgePct(input.odds, input.referenceFairOdds), 2),
    edgePctPostTax: roundTo(postTax, 4),
    kellyFraction: roundTo(kelly, 4),
    edgeTier: edgeTier(postTax, thresholds),
    stakePct: stakePct(kelly, advice),
  };
}

export const MAX_DECIMAL_ODDS = 1000;

/** Decimal odds pay back more than the stake (> 1.0); above 1000 is a typo, not a market. */
export function validateDecimalOdds(parameter: string, value: number): void {
  if (typeof value !== 'number' || !Number.isFinite(value) || value <= 1 || value > MAX_DECIMAL_ODDS) {
    throw new InvalidParameterError(
      parameter,
      `${parameter} must be decimal odds greater than 1.0 and at most ${MAX_DECIMAL_ODDS}`,
    );
  }
}

/** A tax of 100% or more would make every bet worthless; 0 means untaxed. */
export function validateTaxRate(parameter: string, value: number): void {
  if (typeof value !== 'number' || !Number.isFinite(value) || value < 0 || value >= 1) {
    throw new InvalidParameterError(parameter, `${parameter} must be a number from 0 (inclusive) to 1 (exclusive)`);
  }
}

/** Every edge tier, strongest first. */
export const EDGE_TIERS = ['big_edge', 'stark', 'standard'] as const satisfies readonly EdgeTier[];
