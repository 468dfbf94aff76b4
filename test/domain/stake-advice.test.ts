/**
 * Stake advice (docs/API.md, "Stake advice"): min(cap, 100 x multiplier x full Kelly), two
 * decimals. Expectations are worked out by hand from the formula in the docs.
 */
import { describe, expect, it } from 'vitest';
import { DEFAULT_STAKE_ADVICE, priceEdges, stakePct } from '../../src/domain/odds.js';

describe('stake advice', () => {
  it.each([
    // full Kelly, multiplier, cap, advice
    [0.0833333, 0.25, 2, 2], // 2.08 %, capped at 2
    [0.04, 0.25, 2, 1], // a quarter of 4 %
    [0.0123, 0.25, 2, 0.31], // 0.3075 -> 0.31
    [0, 0.25, 2, 0], // no edge, no stake
    [0.5, 1, 100, 50], // full Kelly, no cap to speak of
    [0.5, 1, 10, 10],
  ])('full Kelly %d x %d, cap %d -> %d %%', (kelly, kellyMultiplier, maxPct, expected) => {
    expect(stakePct(kelly, { kellyMultiplier, maxPct })).toBe(expected);
  });

  it('is part of a pick\'s pricing, from the unrounded Kelly: odds 2.2 against fair 2.0 untaxed advise 2 % by default, 2.08 % uncapped', () => {
    // Full Kelly = (0.5 x 1.2 - 0.5) / 1.2 = 0.083333...
    expect(priceEdges({ odds: 2.2, referenceFairOdds: 2, taxRate: 0 }).stakePct).toBe(2);
    expect(priceEdges({ odds: 2.2, referenceFairOdds: 2, taxRate: 0 }, undefined, { kellyMultiplier: 0.25, maxPct: 5 }).stakePct).toBe(2.08);
    // Taxed 5.3 % on stakes: b = 2.2 x 0.947 - 1 = 1.0834; Kelly = (0.5 x 1.0834 - 0.5) / 1.0834 = 0.038490...; a quarter is 0.96 %.
    expect(priceEdges({ odds: 2.2, referenceFairOdds: 2, taxRate: 0.053 }, undefined, DEFAULT_STAKE_ADVICE).stakePct).toBe(0.96);
  });
});
