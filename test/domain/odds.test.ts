import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { InvalidParameterError } from '../../src/domain/errors.js';
import {
  DEFAULT_EDGE_TIER_THRESHOLDS,
  DEFAULT_TAX_RATE,
  EDGE_TIERS,
  edgePct,
  postTaxEdgeFraction,
  edgeTier,
  kellyFraction,
  priceEdges,
  validateDecimalOdds,
  validateTaxRate,
} from '../../src/domain/odds.js';

function expectInvalidParameter(fn: () => void, parameter: string): void {
  try {
    fn();
  } catch (error) {
    expect(error).toBeInstanceOf(InvalidParameterError);
    const e = error as InvalidParameterError;
    expect(e.code).toBe('invalid_parameter');
    expect(e.extras).toEqual({ parameter });
    expect(e.message).toContain(parameter);
    return;
  }
  expect.fail(`expected InvalidParameterError for ${parameter}`);
}

const odds = fc.double({ min: 1.01, max: 1000, noNaN: true });
const taxRate = fc.double({ min: 0, max: 0.3, noNaN: true });

describe('constants', () => {
  it('match the documented formulas', () => {
    expect(DEFAULT_TAX_RATE).toBe(0.053);
    expect(DEFAULT_EDGE_TIER_THRESHOLDS).toEqual({ bigEdge: 0.08, stark: 0.04 });
    expect(EDGE_TIERS).toEqual(['big_edge', 'stark', 'standard']);
  });
});

describe('edgePct', () => {
  it('is (odds / fair - 1) x 100', () => {
    expect(edgePct(2.2, 2.0)).toBeCloseTo(10, 12);
    expect(edgePct(2.0, 2.0)).toBe(0);
    expect(edgePct(1.8, 2.0)).toBeCloseTo(-10, 12);
    expect(edgePct(2.5, 2.1)).toBeCloseTo(19.047619047619, 10);
  });
});

describe('postTaxEdgeFraction (edgePctPostTax in the API)', () => {
  it('is odds x (1 - tax) / fair - 1, a fraction', () => {
    expect(postTaxEdgeFraction(2.2, 2.0, 0.053)).toBeCloseTo(0.0417, 12);
    expect(postTaxEdgeFraction(2.2, 2.0, 0)).toBeCloseTo(0.1, 12);
    expect(postTaxEdgeFraction(2.5, 2.1, 0.053)).toBeCloseTo(0.12738095238095, 12);
    expect(postTaxEdgeFraction(2.0, 2.0, 0.053)).toBeCloseTo(-0.053, 12);
  });

  it('equals edgePct / 100 without tax', () => {
    fc.assert(
      fc.property(odds, odds, (o, f) => {
        expect(postTaxEdgeFraction(o, f, 0)).toBeCloseTo(edgePct(o, f) / 100, 9);
      }),
    );
  });
});

describe('kellyFraction', () => {
  it('matches hand-computed cases', () => {
    // p = 0.5, b = 2.2 x 0.947 - 1 = 1.0834: (0.5417 - 0.5) / 1.0834
    expect(kellyFraction(2.2, 2.0, 0.053)).toBeCloseTo(0.0417 / 1.0834, 12);
    expect(kellyFraction(2.2, 2.0, 0.053)).toBeCloseTo(0.03849, 5);
    // Untaxed: p = 0.5, b = 1.2 -> (0.6 - 0.5) / 1.2
    expect(kellyFraction(2.2, 2.0, 0)).toBeCloseTo(1 / 12, 12);
    // p = 1/2.1, b = 1.3675
    expect(kellyFraction(2.5, 2.1, 0.053)).toBeCloseTo(0.093148777, 8);
  });

  it('is 0 without a post-tax edge', () => {
    expect(kellyFraction(2.0, 2.0, 0)).toBe(0);
    expect(kellyFraction(2.0, 2.0, 0.053)).toBe(0);
    expect(kellyFraction(1.5, 2.0, 0)).toBe(0);
  });

  it('is 0 when the net odds pay nothing (b <= 0)', () => {
    // b = 1.05 x 0.947 - 1 < 0, even though the fair odds are lower still.
    expect(kellyFraction(1.05, 1.01, 0.053)).toBe(0);
    // b = 0 exactly
    expect(kellyFraction(2, 1.5, 0.5)).toBe(0);
  });

  it('never returns -0', () => {
    expect(Object.is(kellyFraction(1.5, 2.0, 0), 0)).toBe(true);
  });

  it('is the classic (p x odds - 1) / (odds - 1) without tax', () => {
    fc.assert(
      fc.property(odds, odds, (o, f) => {
        const p = 1 / f;
        expect(kellyFraction(o, f, 0)).toBeCloseTo(Math.max(0, (p * o - 1) / (o - 1)), 9);
      }),
    );
  });

  it('lies in [0, 1) and is positive exactly when the post-tax edge is', () => {
    fc.assert(
      fc.property(odds, odds, taxRate, (o, f, t) => {
        const k = kellyFraction(o, f, t);
        expect(k).toBeGreaterThanOrEqual(0);
        expect(k).toBeLessThan(1);
        const edge = postTaxEdgeFraction(o, f, t);
        if (Math.abs(edge) > 1e-9) expect(k > 0).toBe(edge > 0);
      }),
    );
  });
});

describe('edgeTier', () => {
  it.each([
    [0.2, 'big_edge'],
    [0.08, 'big_edge'],
    [0.0799999, 'stark'],
    [0.04, 'stark'],
    [0.0399999, 'standard'],
    [0, 'standard'],
    [-0.5, 'standard'],
    [Number.NaN, 'standard'],
  ] as const)('%d -> %s', (edge, tier) => {
    expect(edgeTier(edge)).toBe(tier);
  });

  it('honours configured thresholds', () => {
    const thresholds = { bigEdge: 0.1, stark: 0.02 };
    expect(edgeTier(0.09, thresholds)).toBe('stark');
    expect(edgeTier(0.1, thresholds)).toBe('big_edge');
    expect(edgeTier(0.02, thresholds)).toBe('stark');
    expect(edgeTier(0.019, thresholds)).toBe('standard');
  });
});

describe('priceEdges', () => {
  it('prices a stark pick', () => {
    expect(priceEdges({ odds: 2.2, referenceFairOdds: 2.0, taxRate: 0.053 })).toEqual({
      edgePct: 10,
      edgePctPostTax: 0.0417,
      kellyFraction: 0.0385,
      edgeTier: 'stark',
      // A quarter of full Kelly (0.03849), in percent: 0.96.
      stakePct: 0.96,
    });
  });

  it('prices a big edge', () => {
    expect(priceEdges({ odds: 2.5, referenceFairOdds: 2.1, taxRate: 0.053 })).toEqual({
      edgePct: 19.05,
      edgePctPostTax: 0.1274,
      kellyFraction: 0.0931,
      edgeTier: 'big_edge',
      // A quarter of 9.31 % is 2.33 %: capped at 2.
      stakePct: 2,
    });
  });

  it('prices a pick without post-tax edge', () => {
    expect(priceEdges({ odds: 2.0, referenceFairOdds: 2.0, taxRate: 0.053 })).toEqual({
      edgePct: 0,
      edgePctPostTax: -0.053,
      kellyFraction: 0,
      edgeTier: 'standard',
      stakePct: 0,
    });
  });

  it('decides the tier on the unrounded post-tax edge', () => {
    // 2.07992 / 2 - 1 = 0.03996, stored as 0.04 but below the stark threshold.
    const priced = priceEdges({ odds: 2.07992, referenceFairOdds: 2, taxRate: 0 });
    expect(priced.edgePctPostTax).toBe(0.04);
    expect(priced.edgeTier).toBe('standard');
    // 2.15992 / 2 - 1 = 0.07996 -> stored 0.08, still stark.
    const priced2 = priceEdges({ odds: 2.15992, referenceFairOdds: 2, taxRate: 0 });
    expect(priced2.edgePctPostTax).toBe(0.08);
    expect(priced2.edgeTier).toBe('stark');
  });

  it('uses custom thresholds', () => {
    expect(priceEdges({ odds: 2.2, referenceFairOdds: 2.0, taxRate: 0.053 }, { bigEdge: 0.04, stark: 0.01 }).edgeTier).toBe(
      'big_edge',
    );
  });

  it('rejects invalid inputs with the field name', () => {
    expectInvalidParameter(() => priceEdges({ odds: 1, referenceFairOdds: 2, taxRate: 0 }), 'odds');
    expectInvalidParameter(() => priceEdges({ odds: 2, referenceFairOdds: Number.NaN, taxRate: 0 }), 'referenceFairOdds');
    expectInvalidParameter(() => priceEdges({ odds: 2, referenceFairOdds: 2, taxRate: 1 }), 'taxRate');
  });

  it('stores rounded values consistent with the raw formulas', () => {
    fc.assert(
      fc.property(odds, odds, taxRate, (o, f, t) => {
        const priced = priceEdges({ odds: o, referenceFairOdds: f, taxRate: t });
        expect(Math.abs(priced.edgePct - edgePct(o, f))).toBeLessThanOrEqual(0.005 + 1e-9);
        expect(Math.abs(priced.edgePctPostTax - postTaxEdgeFraction(o, f, t))).toBeLessThanOrEqual(0.00005 + 1e-12);
        expect(Math.abs(priced.kellyFraction - kellyFraction(o, f, t))).toBeLessThanOrEqual(0.00005 + 1e-12);
        expect(priced.edgeTier).toBe(edgeTier(postTaxEdgeFraction(o, f, t)));
        expect(Number.isFinite(priced.edgePct)).toBe(true);
      }),
    );
  });
});

describe('validateDecimalOdds', () => {
  it.each([1.01, 1.0000001, 2, 3.4, 999.99, 1000])('accepts %d', (value) => {
    expect(() => validateDecimalOdds('odds', value)).not.toThrow();
  });

  it.each([1, 0.5, 0, -2, 1000.01, 1e6, Number.NaN, Number.POSITIVE_INFINITY, Number.NEGATIVE_INFINITY])(
    'rejects %d',
    (value) => {
      expectInvalidParameter(() => validateDecimalOdds('closingOdds', value), 'closingOdds');
    },
  );

  it('rejects non-numbers that slip past the type system', () => {
    expectInvalidParameter(() => validateDecimalOdds('odds', '2.0' as unknown as number), 'odds');
  });
});

describe('validateTaxRate', () => {
  it.each([0, 0.053, 0.5, 0.999999])('accepts %d', (value) => {
    expect(() => validateTaxRate('taxRate', value)).not.toThrow();
  });

  it.each([1, 1.5, -0.01, Number.NaN, Number.POSITIVE_INFINITY])('rejects %d', (value) => {
    expectInvalidParameter(() => validateTaxRate('bookmaker.taxRate', value), 'bookmaker.taxRate');
  });
});
