import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { roundTo } from '../../src/domain/numbers.js';

describe('roundTo', () => {
  it.each([
    [1.005, 2, 1.01],
    [2.675, 2, 2.68],
    [1.0049, 2, 1],
    [-1.005, 2, -1.01],
    [0.1 + 0.2, 2, 0.3],
    [2.5, 0, 3],
    [-2.5, 0, -3],
    [0.5, 0, 1],
    [1234.56789, 4, 1234.5679],
    [0.03848993908, 4, 0.0385],
    [10.000000000000009, 2, 10],
    [19.047619047619, 2, 19.05],
    [-0.125, 2, -0.13],
    [0.125, 2, 0.13],
    [1e-7, 2, 0],
    [123456789.125, 2, 123456789.13],
    [1e21, 2, 1e21],
    [5, 3, 5],
  ])('roundTo(%d, %d) = %d', (value, decimals, expected) => {
    expect(roundTo(value, decimals)).toBe(expected);
  });

  it('treats accumulated float drift as noise', () => {
    // The sum is 0.16499999999999998 in binary floating point; the decimal value is 0.165.
    const sum = 0.02 + 0.141 + 0.004;
    expect(sum).not.toBe(0.165);
    expect(roundTo(sum, 2)).toBe(0.17);
    expect(roundTo(-sum, 2)).toBe(-0.17);
  });

  it('never returns -0', () => {
    expect(Object.is(roundTo(-0.001, 2), 0)).toBe(true);
    expect(Object.is(roundTo(-0.004999, 2), 0)).toBe(true);
    expect(Object.is(roundTo(-0, 2), 0)).toBe(true);
    expect(Object.is(roundTo(-0.4, 0), 0)).toBe(true);
  });

  it('passes non-finite values through', () => {
    expect(roundTo(Number.NaN, 2)).toBeNaN();
    expect(roundTo(Number.POSITIVE_INFINITY, 2)).toBe(Number.POSITIVE_INFINITY);
    expect(roundTo(Number.NEGATIVE_INFINITY, 2)).toBe(Number.NEGATIVE_INFINITY);
  });

  it('rejects bad decimal counts', () => {
    expect(() => roundTo(1, -1)).toThrow(RangeError);
    expect(() => roundTo(1, 1.5)).toThrow(RangeError);
    expect(() => roundTo(1, 16)).toThrow(RangeError);
  });

  it('rounds decimal ties away from zero', () => {
    fc.assert(
      fc.property(fc.integer({ min: 0, max: 99_999_999 }), fc.integer({ min: 0, max: 4 }), fc.boolean(), (n, d, negative) => {
        // n.5 x 10^-d written in decimal, e.g. n=100, d=2 -> 1.005
        const tie = Number(`${n}5e-${d + 1}`);
        const expected = Number(`${n + 1}e-${d}`);
        const sign = negative ? -1 : 1;
        expect(roundTo(sign * tie, d)).toBe(sign * expected);
      }),
    );
  });

  it('leaves numbers that already have at most d decimals unchanged', () => {
    fc.assert(
      fc.property(fc.integer({ min: -1e12, max: 1e12 }), fc.integer({ min: 0, max: 4 }), (m, d) => {
        const x = Number(`${m}e-${d}`);
        expect(roundTo(x, d)).toBe(x === 0 ? 0 : x);
      }),
    );
  });

  it('does not round twice (regression: 26178.15116045 to 6 decimals)', () => {
    expect(roundTo(26178.15116045, 6)).toBe(26178.15116);
  });

  it('is idempotent, symmetric and within half a unit', () => {
    fc.assert(
      fc.property(
        fc.double({ min: -1e6, max: 1e6, noNaN: true, noDefaultInfinity: true }),
        fc.integer({ min: 0, max: 6 }),
        (x, d) => {
          const r = roundTo(x, d);
          expect(roundTo(r, d)).toBe(r);
          expect(Object.is(r, -0)).toBe(false);
          const mirrored = roundTo(-x, d);
          expect(mirrored === 0 ? 0 : -mirrored).toBe(r === 0 ? 0 : r);
          expect(Math.abs(r - x)).toBeLessThanOrEqual(0.5 * 10 ** -d + 1e-9);
        },
      ),
    );
  });
});
