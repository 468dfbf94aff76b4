/**
 * The one seeded PRNG of the benches and the soak (mulberry32): a seed replays the same
 * numbers, so the same seed gives the same traffic, feed and fault schedule.
 */

/** mulberry32: a small seeded PRNG returning numbers in [0, 1). */
export function rng(seed) {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

/** Uniform in [lo, hi) from the generator `r`. */
export const between = (r, lo, hi) => lo + r() * (hi - lo);

/** One of `items`, drawn with `r`. */
export const choose = (r, items) => items[Math.floor(r() * items.length)];
