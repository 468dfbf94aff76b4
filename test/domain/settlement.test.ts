import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { PICK_RESULTS, type PickResult } from '../../src/domain/pick.js';
import { settlementProfit } from '../../src/domain/settlement.js';

describe('settlementProfit', () => {
  it.each([
    ['won', 2.5, 1.5],
    ['won', 1.8, 0.8],
    ['half_won', 2.5, 0.75],
    ['half_won', 3.0, 1],
    ['void', 2.5, 0],
    ['half_lost', 2.5, -0.5],
    ['half_lost', 10, -0.5],
    ['lost', 2.5, -1],
    ['lost', 1.2, -1],
  ] as [PickResult, number, number][])('%s at %d -> %d units', (result, odds, profit) => {
    expect(settlementProfit(result, odds)).toBeCloseTo(profit, 12);
  });

  it('void is exactly zero', () => {
    expect(Object.is(settlementProfit('void', 3), 0)).toBe(true);
  });

  it('half results are half of the full ones', () => {
    fc.assert(
      fc.property(fc.double({ min: 1.01, max: 1000, noNaN: true }), (odds) => {
        expect(settlementProfit('half_won', odds)).toBeCloseTo(settlementProfit('won', odds) / 2, 9);
        expect(settlementProfit('half_lost', odds)).toBe(settlementProfit('lost', odds) / 2);
        expect(settlementProfit('won', odds)).toBeGreaterThan(0);
        expect(settlementProfit('lost', odds)).toBe(-1);
      }),
    );
  });

  it('orders the results from best to worst', () => {
    const order: PickResult[] = ['won', 'half_won', 'void', 'half_lost', 'lost'];
    expect([...PICK_RESULTS].sort()).toEqual([...order].sort());
    const profits = order.map((r) => settlementProfit(r, 2));
    expect(profits).toEqual([1, 0.5, 0, -0.5, -1]);
  });

  it('throws on an unknown result instead of returning garbage', () => {
    expect(() => settlementProfit('push' as PickResult, 2)).toThrow(RangeError);
  });
});
