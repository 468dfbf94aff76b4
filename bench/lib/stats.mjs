/** Rounding, percentiles, medians and summaries shared by every bench. */

export const r1 = (v) => (v === null || v === undefined || Number.isNaN(v) ? null : Math.round(v * 10) / 10);
export const r2 = (v) => (v === null || v === undefined || Number.isNaN(v) ? null : Math.round(v * 100) / 100);
export const r3 = (v) => (v === null || v === undefined || Number.isNaN(v) ? null : Math.round(v * 1000) / 1000);

/** The nearest-rank percentile `p` (0..100) of an ascending array; null when empty. */
export function percentile(sorted, p) {
  if (sorted.length === 0) return null;
  const index = Math.min(sorted.length - 1, Math.max(0, Math.ceil((p / 100) * sorted.length) - 1));
  return sorted[index];
}

/** The median (mean of the middle two for an even count). */
export function median(values) {
  const sorted = [...values].sort((x, y) => x - y);
  const mid = Math.floor(sorted.length / 2);
  return sorted.length % 2 ? sorted[mid] : (sorted[mid - 1] + sorted[mid]) / 2;
}

/** The arithmetic mean; 0 for none. */
export const mean = (xs) => (xs.length ? xs.reduce((a, b) => a + b, 0) / xs.length : 0);

/** n, min, mean, p50, p90, p99, max (one decimal). */
export function summarise(values) {
  const sorted = Float64Array.from(values).sort();
  let sum = 0;
  for (const v of sorted) sum += v;
  return {
    n: sorted.length,
    min: r1(sorted.length ? sorted[0] : null),
    mean: r1(sorted.length ? sum / sorted.length : null),
    p50: r1(percentile(sorted, 50)),
    p90: r1(percentile(sorted, 90)),
    p99: r1(percentile(sorted, 99)),
    max: r1(sorted.length ? sorted[sorted.length - 1] : null),
  };
}
