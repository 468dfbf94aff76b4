/**
 * Significant digits kept before decimal rounding. Binary doubles turn 1.005 into
 * 1.00499999999999989..., and long sums drift in the last bits; cutting to 15
 * significant digits first treats that drift as noise, so ties round the way a human
 * reading the decimal value expects. Values here (odds, percentages, units) never
 * carry meaningful precision beyond 15 digits (doubles hold 15 to 17); fewer digits would
 * round twice and could move a result by more than half a unit.
 */
const SIGNIFICANT_DIGITS = 15;

/** Multiplies by 10^exponent through the decimal representation, so no binary error is added. */
function shiftDecimal(value: number, exponent: number): number {
  const [mantissa, exp] = value.toExponential().split('e');
  return Number(`${mantissa}e${Number(exp) + exponent}`);
}

/**
 * Rounds half away from zero to `decimals` decimal places. Never returns -0.
 * Non-finite input is returned unchanged (NaN stays NaN) so bugs stay visible.
 */
export function roundTo(value: number, decimals: number): number {
  if (!Number.isInteger(decimals) || decimals < 0 || decimals > 15) {
    throw new RangeError(`roundTo: decimals must be an integer between 0 and 15, got ${decimals}`);
  }
  if (!Number.isFinite(value)) return value;
  if (value === 0) return 0;
  const magnitude = Number(Math.abs(value).toPrecision(SIGNIFICANT_DIGITS));
  const rounded = Math.round(shiftDecimal(magnitude, decimals));
  if (rounded === 0) return 0;
  const result = shiftDecimal(rounded, -decimals);
  return value < 0 ? -result : result;
}
