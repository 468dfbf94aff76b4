import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import {
  DEFAULT_DEVIG_METHOD,
  DEVIG_METHODS,
  DevigError,
  type DevigMethod,
  type DevigRefusalReason,
  MAX_BOOKSUM,
  MIN_BOOKSUM,
  SOLVER_MAX_ITERATIONS,
  SolvedMarkets,
  devig,
  devigAll,
  isDevigMethod,
  overround,
  solvedMarkets,
  withoutRememberedSolutions,
} from '../../src/domain/devig.js';

function expectRefusal(fn: () => unknown, reason: DevigRefusalReason): void {
  try {
    fn();
  } catch (error) {
    expect(error).toBeInstanceOf(DevigError);
    expect((error as DevigError).reason).toBe(reason);
    return;
  }
  expect.fail(`expected DevigError ${reason}`);
}

function expectEach(actual: readonly number[], expected: readonly number[], tolerance: number): void {
  expect(actual).toHaveLength(expected.length);
  actual.forEach((value, i) => expect(Math.abs(value - expected[i]!)).toBeLessThanOrEqual(tolerance));
}

/** pytest.approx's default: relative 1e-6, absolute 1e-12. */
function expectApprox(actual: number, expected: number): void {
  expect(Math.abs(actual - expected)).toBeLessThanOrEqual(Math.max(1e-6 * Math.abs(expected), 1e-12));
}

const total = (values: readonly number[]) => values.reduce((a, b) => a + b, 0);

describe('method names', () => {
  it('are the five config spellings, power by default', () => {
    expect(DEVIG_METHODS).toEqual(['multiplicative', 'additive', 'power', 'shin', 'odds_ratio']);
    expect(DEFAULT_DEVIG_METHOD).toBe('power');
    expect(isDevigMethod('odds_ratio')).toBe(true);
    expect(isDevigMethod('oddsRatio')).toBe(false);
  });
});

// penaltyblog (github.com/martineastwood/penaltyblog), which defines all five methods exactly
// as here: multiplicative pi / S, additive pi + (1 - S) / n, power pi^k, Shin with the same z
// formula, odds ratio pi / (c + pi - c pi); its solver is scipy's ridder on [0, 100].
describe('published reference values: penaltyblog', () => {
  const odds = [2.7, 2.3, 4.4];

  // v1.9.0, commit ead9c57a1106251d0b81ad9b80b75bd8ad3b8679, docs/implied/implied.rst
  // ("Quick Start" and "Using Different Methods and Formats"; the latter's American odds
  // +170/+130/+340 are decimal 2.7/2.3/4.4). Printed at full double precision; ridder's
  // xtol (2e-12) bounds their error, so 1e-9 is a fair tolerance.
  it('v1.9.0 docs: multiplicative and Shin at full precision', () => {
    const multiplicative = devig(odds, 'multiplicative');
    expectEach(multiplicative.probabilities, [0.35873803615739097, 0.4211272598369373, 0.22013470400567173], 1e-9);
    expect(multiplicative.overround).toBeCloseTo(0.0324, 4); // "Margin: 0.0324"
    expect(overround(odds)).toBeCloseTo(0.0324, 4);

    const shin = devig(odds, 'shin');
    expectEach(shin.probabilities, [0.35934391959159157, 0.42324384818283234, 0.21741223222458853], 1e-9);
    expect(shin.parameter).toBeCloseTo(0.0162, 4); // "Shin's z parameter: 0.0162"
  });

  // v1.5.0, commit 653485f09e789eaa7954b9705ce584e05638c4fb, test/test_implied.py (the last
  // release whose tests carry numbers). Its own check is `(actual - expected).sum() < 0.001`
  // (kept below as written). The 7-digit power, Shin and odds-ratio vectors come from an
  // older solver run and sit up to 1.0e-5 from the exact roots (Shin's third value: 0.2174022
  // published, 0.2174122 exact, as the v1.9.0 docs above confirm), so the per-value check is
  // 2e-5: tight enough to catch a wrong formula, loose enough for their rounding.
  const published: Record<DevigMethod, number[]> = {
    multiplicative: [0.35873804, 0.42112726, 0.2201347],
    additive: [0.3595618, 0.423974, 0.2164642],
    power: [0.3591708, 0.4237291, 0.2171001],
    shin: [0.3593461, 0.4232517, 0.2174022],
    odds_ratio: [0.3588103, 0.4225611, 0.2186286],
  };
  it.each(DEVIG_METHODS)('v1.5.0 tests: %s', (method) => {
    const { probabilities } = devig(odds, method);
    const expected = published[method];
    expect(total(probabilities.map((p, i) => p - expected[i]!))).toBeLessThan(0.001);
    expectEach(probabilities, expected, 2e-5);
  });
});

// shin (github.com/mberk/shin) v0.2.1, commit c6f8b6fe81c3c6fd825cf0a72f552522257149e9,
// tests/test_shin.py: same p formula and z; its tolerance is pytest.approx (rel 1e-6).
describe('published reference values: shin package', () => {
  it('test_calculate_implied_probabilities_full_output: [2.6, 2.4, 4.3]', () => {
    const result = devig([2.6, 2.4, 4.3], 'shin');
    expectApprox(result.probabilities[0]!, 0.3729941);
    expectApprox(result.probabilities[1]!, 0.4047794);
    expectApprox(result.probabilities[2]!, 0.2222265);
    expectApprox(result.parameter!, 0.01694251);
  });

  it('test_calculate_implied_probabilities_two_outcomes: [1.5, 2.74] is additive, closed form', () => {
    const odds = [1.5, 2.74];
    const inverse = odds.map((o) => 1 / o);
    const booksum = total(inverse);
    const result = devig(odds, 'shin');
    expect(result.iterations).toBe(0);
    expectApprox(result.probabilities[0]!, inverse[0]! - (booksum - 1) / 2);
    expectApprox(result.probabilities[1]!, inverse[1]! - (booksum - 1) / 2);
  });
});

// implied (github.com/opisthokonta/implied, R) v0.6, commit
// e2941b356844872d6e14cd4fbf61a94ab7fbcd8f, tests/testthat/test_1.R. Its tests assert
// properties, not numbers: every method's rows sum to 1 (tolerance 5e-5) with margin > 0,
// and `my_odds2` is "designed to be problematic with the additive method" (problematic TRUE
// for additive, FALSE for power and Shin).
describe('published reference markets: implied (R)', () => {
  const myOdds = [
    [4.2, 3.7, 1.95],
    [2.45, 3.7, 2.9],
    [2.05, 3.2, 3.8],
    [1.595, 3.99, 6.76],
    [1.19, 7.0, 14.0],
  ];
  it.each(myOdds)('my_odds row %s %s %s: every method sums to 1, margin > 0', (...row) => {
    expect(overround(row)).toBeGreaterThan(0);
    for (const method of DEVIG_METHODS) {
      expect(Math.abs(total(devig(row, method).probabilities) - 1)).toBeLessThan(5e-5);
    }
  });

  it('my_odds2 long shots: additive refused, power, Shin and odds ratio not', () => {
    // my_odds2 = 1 / c(0.870, 0.2, 0.1, 0.05, 0.02, 0.01): its booksum is 1.25 in decimals
    // but 1.2500000000000002 in doubles, just above the cap, so it is refused as a whole;
    // with the favourite quoted as 1.15 (S = 1.2496) it is the same long-shot market.
    const exact = [0.87, 0.2, 0.1, 0.05, 0.02, 0.01].map((p) => 1 / p);
    expectRefusal(() => devig(exact, 'power'), 'overround_out_of_range');

    const prices = [1.15, 5, 10, 20, 50, 100];
    expectRefusal(() => devig(prices, 'additive'), 'method_refused');
    const all = devigAll(prices);
    expect(all.additive).toBeNull();
    for (const probabilities of [all.multiplicative, all.power, all.shin, all.oddsRatio]) {
      expect(probabilities).not.toBeNull();
      expect(Math.abs(total(probabilities!) - 1)).toBeLessThan(1e-9);
      expect(probabilities!.every((p) => p > 0 && p < 1)).toBe(true);
    }
  });
});

describe('refusals', () => {
  it.each([
    [[1, 2], 'invalid_price'],
    [[0.5, 3], 'invalid_price'],
    [[-2, 3], 'invalid_price'],
    [[Number.NaN, 2], 'invalid_price'],
    [[Number.POSITIVE_INFINITY, 2], 'invalid_price'],
    [['2' as unknown as number, 2], 'invalid_price'],
    [[2], 'too_few_outcomes'],
    [[], 'too_few_outcomes'],
    [[1.5, 1.5], 'overround_out_of_range'], // S = 1.333
    [[2.1, 2.1], 'overround_out_of_range'], // S = 0.952: an arbitrage, not a market
  ] as Array<[number[], DevigRefusalReason]>)('%j is refused: %s', (prices, reason) => {
    for (const method of DEVIG_METHODS) expectRefusal(() => devig(prices, method), reason);
    expectRefusal(() => devigAll(prices), reason);
  });

  it('the booksum range is [1 - 1e-9, 1.25], inclusive', () => {
    expect(MIN_BOOKSUM).toBe(1 - 1e-9);
    expect(MAX_BOOKSUM).toBe(1.25);
    const scaled = (booksum: number) => [2 / booksum, 2 / booksum];
    expectRefusal(() => devig(scaled(1 - 1e-8), 'power'), 'overround_out_of_range');
    expect(devig(scaled(1 - 1e-10), 'power').probabilities).toHaveLength(2);
    expect(devig([1.6, 1.6], 'power').overround).toBe(0.25); // 1/1.6 = 0.625 exactly
    expectRefusal(() => devig(scaled(1.2500001), 'power'), 'overround_out_of_range');
  });

  it('an unknown method is refused', () => {
    expectRefusal(() => devig([2, 2], 'logarithmic' as DevigMethod), 'unknown_method');
  });

  it('additive refuses only where a probability would be <= 0', () => {
    // S = 1.1: (S - 1) / 3 = 0.0333 exceeds the 1 / 50 long shot.
    const pi = [0.6, 0.48];
    const prices = [...pi.map((p) => 1 / p), 50];
    expectRefusal(() => devig(prices, 'additive'), 'method_refused');
    expect(devig([2.7, 2.3, 4.4], 'additive').probabilities.every((p) => p > 0)).toBe(true);
  });

  it('the margin helper validates prices but not the range', () => {
    expect(overround([1.5, 1.5])).toBeCloseTo(1 / 3, 12);
    expectRefusal(() => overround([1.5]), 'too_few_outcomes');
    expectRefusal(() => overround([1.5, Number.NaN]), 'invalid_price');
  });
});

describe('results', () => {
  it('carry fair prices, the overround, the method and its parameter', () => {
    const result = devig([2.7, 2.3, 4.4], 'power');
    expect(result.method).toBe('power');
    expect(result.fairPrices).toEqual(result.probabilities.map((p) => 1 / p));
    expect(result.overround).toBeCloseTo(1 / 2.7 + 1 / 2.3 + 1 / 4.4 - 1, 15);
    expect(result.parameter).toBeGreaterThan(1); // k > 1 takes margin off a booksum above 1
    expect(devig([2.7, 2.3, 4.4], 'odds_ratio').parameter).toBeGreaterThan(1);
    expect(devig([2.7, 2.3, 4.4], 'multiplicative').parameter).toBeUndefined();
    expect(devig([2.7, 2.3, 4.4], 'additive').parameter).toBeUndefined();
  });

  it('devigAll names the methods as the provenance does', () => {
    const all = devigAll([2.7, 2.3, 4.4]);
    expect(Object.keys(all)).toEqual(['multiplicative', 'additive', 'power', 'shin', 'oddsRatio']);
    expect(all.oddsRatio).toEqual(devig([2.7, 2.3, 4.4], 'odds_ratio').probabilities);
    expect(all.power).toEqual(devig([2.7, 2.3, 4.4], 'power').probabilities);
  });

  it('power gives the long shot the lowest probability of the methods that never refuse (docs/VALUE_ENGINE.md)', () => {
    for (const prices of [[2.7, 2.3, 4.4], [1.4, 4.8, 9.5], [1.25, 4.2]]) {
      const longShot = prices.indexOf(Math.max(...prices));
      const power = devig(prices, 'power').probabilities[longShot]!;
      for (const method of ['multiplicative', 'shin', 'odds_ratio'] as const) {
        expect(power).toBeLessThan(devig(prices, method).probabilities[longShot]!);
      }
    }
  });

  it('solvers terminate on extreme markets within the iteration cap', () => {
    const extremes = [
      [1.000001, 1e6],
      [1.0000001, 40, 1e7],
      [1.01, 150, 160, 170],
      [1 + 1e-12, 1e11],
      [1.05, 30, 40, 50, 60, 70],
      [6, 6, 6, 6, 6, 6],
      [1.25, 5], // S = 1 exactly
    ];
    for (const prices of extremes) {
      for (const method of DEVIG_METHODS) {
        const result = tryDevig(prices, method);
        if (!result) continue;
        expect(result.iterations).toBeLessThanOrEqual(SOLVER_MAX_ITERATIONS);
        expect(Math.abs(total(result.probabilities) - 1)).toBeLessThan(1e-9);
        expect(result.probabilities.every((p) => p > 0 && p < 1)).toBe(true);
      }
    }
  });
});

/** A valid market: 2 to 6 outcomes, prices > 1, booksum within [1, 1.25] (or exactly fair). */
function market(fair: boolean, maxOutcomes = 6) {
  return fc
    .record({
      weights: fc.array(fc.double({ min: 1, max: 1000, noNaN: true }), { minLength: 2, maxLength: maxOutcomes }),
      booksum: fair ? fc.constant(1) : fc.double({ min: 1, max: MAX_BOOKSUM, noNaN: true }),
    })
    .map(({ weights, booksum }) => {
      const scale = booksum / total(weights);
      return weights.map((w) => 1 / (w * scale));
    })
    .filter((prices) => {
      const booksum = total(prices.map((p) => 1 / p));
      return prices.every((p) => Number.isFinite(p) && p > 1) && booksum >= MIN_BOOKSUM && booksum <= MAX_BOOKSUM;
    });
}

function tryDevig(prices: number[], method: DevigMethod) {
  try {
    return devig(prices, method);
  } catch (error) {
    // Only additive may refuse a valid market, and only for a probability <= 0.
    expect(error).toBeInstanceOf(DevigError);
    expect((error as DevigError).reason).toBe('method_refused');
    expect(method).toBe('additive');
    const pi = prices.map((p) => 1 / p);
    expect(Math.min(...pi)).toBeLessThanOrEqual((total(pi) - 1) / pi.length);
    return null;
  }
}

describe('properties', () => {
  it('probabilities in (0, 1), summing to 1, in the order of the prices, solvers bounded', () => {
    fc.assert(
      fc.property(market(false), (prices) => {
        const pi = prices.map((p) => 1 / p);
        for (const method of DEVIG_METHODS) {
          const result = tryDevig(prices, method);
          if (!result) continue;
          const p = result.probabilities;
          expect(p.every((x) => x > 0 && x < 1)).toBe(true);
          expect(Math.abs(total(p) - 1)).toBeLessThanOrEqual(1e-9);
          expect(result.iterations).toBeLessThanOrEqual(SOLVER_MAX_ITERATIONS);
          for (let i = 0; i < p.length; i++) {
            for (let j = 0; j < p.length; j++) {
              // A shorter price never gets a lower probability; clearly different ones a higher.
              if (pi[i]! > pi[j]!) expect(p[i]!).toBeGreaterThanOrEqual(p[j]! - 1e-15);
              if (pi[i]! > pi[j]! * (1 + 1e-9)) expect(p[i]!).toBeGreaterThan(p[j]!);
            }
          }
        }
      }),
      { numRuns: 300 },
    );
  });

  it('all five methods agree on a fair book (S = 1)', () => {
    fc.assert(
      fc.property(market(true), (prices) => {
        const reference = devig(prices, 'multiplicative').probabilities;
        for (const method of DEVIG_METHODS) {
          expectEach(devig(prices, method).probabilities, reference, 1e-9);
        }
      }),
      { numRuns: 200 },
    );
  });

  it('Shin equals additive for two outcomes', () => {
    fc.assert(
      fc.property(market(false, 2), (prices) => {
        expectEach(devig(prices, 'shin').probabilities, devig(prices, 'additive').probabilities, 1e-9);
      }),
      { numRuns: 200 },
    );
  });
});

describe('remembered solutions', () => {
  const solvedMethods = ['power', 'shin', 'odds_ratio'] as const;

  it('a market solved once is answered again by method and prices, each answer its own arrays', () => {
    // Long-shot prices: the three solved methods give three different answers here.
    const prices = [1.25, 5.5, 12];
    const first = structuredClone(solvedMethods.map((method) => devig(prices, method)));
    for (let i = 0; i < first.length; i++) {
      for (let j = i + 1; j < first.length; j++) expect(first[i]!.probabilities).not.toEqual(first[j]!.probabilities);
    }
    const solvedBefore = solvedMarkets.solved;
    const again = solvedMethods.map((method) => devig(prices, method));
    expect(solvedMarkets.solved).toBe(solvedBefore);
    expect(again).toEqual(first);
    // A caller changing its answer changes nobody else's.
    again[0]!.probabilities[0] = 0.5;
    again[0]!.fairPrices[0] = 2;
    expect(devig(prices, 'power')).toEqual(first[0]);
    // A price a hair away is another market.
    const moved = devig([1.25, 5.5, 12.000000000000002], 'power');
    expect(solvedMarkets.solved).toBe(solvedBefore + 1);
    expect(moved.probabilities).not.toEqual(first[0]!.probabilities);
  });

  it('hands the first caller its own arrays too, keeps prices apart in the key, and solves a refusal again', () => {
    const prices = [1.31, 4.7, 9.9];
    const mine = devig(prices, 'odds_ratio');
    const expected = structuredClone(mine);
    mine.probabilities[0] = 0.5;
    expect(devig(prices, 'odds_ratio')).toEqual(expected);

    // Joined without a separator, these two would share a key.
    const memory = new SolvedMarkets(8);
    const even = devig([2, 2], 'multiplicative');
    const uneven = devig([1.9, 2.1], 'multiplicative');
    expect(memory.solve('power', [1.2, 55], () => even)).toEqual(even);
    expect(memory.solve('power', [1.25, 5], () => uneven)).toEqual(uneven);
    expect(memory.solved).toBe(2);

    let attempts = 0;
    const refusedOnce = () => {
      attempts += 1;
      if (attempts === 1) throw new DevigError('solver_failed', 'once');
      return devig([2, 2], 'multiplicative');
    };
    expect(() => memory.solve('shin', [2, 2], refusedOnce)).toThrow(DevigError);
    expect(memory.solve('shin', [2, 2], refusedOnce).probabilities).toEqual([0.5, 0.5]);
    expect(attempts).toBe(2);
    expect(memory.solved).toBe(3);
  });

  it('keeps two generations of `capacity` markets', () => {
    const memory = new SolvedMarkets(2);
    const computed: string[] = [];
    const ask = (price: number) =>
      memory.solve('power', [price, 2], () => {
        computed.push(String(price));
        return devig([price, 2], 'multiplicative');
      });
    ask(1.5);
    ask(1.6);
    ask(1.7); // the current generation was full: 1.5 and 1.6 are now the previous one
    ask(1.5); // found in the previous generation, moved back
    ask(1.8); // full again: 1.7 and 1.5 are the previous generation, 1.6 is gone
    ask(1.5);
    ask(1.6);
    expect(computed).toEqual(['1.5', '1.6', '1.7', '1.8', '1.6']);
    expect(memory.solved).toBe(5);
  });

  it('withoutRememberedSolutions solves every market and keeps the remembered solutions', () => {
    const prices = [1.9, 3.7, 4.4];
    const remembered = devig(prices, 'power');
    const kept = solvedMarkets;
    const solvedBefore = kept.solved;
    const fresh = withoutRememberedSolutions(() => {
      expect(solvedMarkets).not.toBe(kept);
      expect(devig(prices, 'power')).toEqual(remembered);
      expect(devig(prices, 'power')).toEqual(remembered);
      return solvedMarkets.solved;
    });
    expect(fresh).toBe(2);
    expect(solvedMarkets).toBe(kept);
    // Put back when the work throws, too.
    expect(() =>
      withoutRememberedSolutions(() => {
        throw new Error('work failed');
      }),
    ).toThrow('work failed');
    expect(solvedMarkets).toBe(kept);
    devig(prices, 'power');
    expect(kept.solved).toBe(solvedBefore);
  });
});
