/**
 * Devigging: one bookmaker market's decimal prices -> fair (no-margin) probabilities, by the
 * five standard methods (docs/VALUE_ENGINE.md, "Devigging"). With pi = 1 / price and
 * S = sum of pi (the booksum; S - 1 is the margin):
 *
 * - multiplicative: p = pi / S
 * - additive:       p = pi - (S - 1) / n            (refused when any p <= 0)
 * - power:          p = pi^k,                         k solves sum p = 1
 * - shin:           p = (sqrt(z^2 + 4 (1 - z) pi^2 / S) - z) / (2 (1 - z)), z solves sum p = 1
 * - odds_ratio:     p = pi / (c + pi - c pi),          c solves sum p = 1
 *
 * Pure: no I/O. Refusals are a DevigError with a reason code; it is internal to the value
 * engine (a refused market is skipped and logged), not an API error.
 */

export const DEVIG_METHODS = ['multiplicative', 'additive', 'power', 'shin', 'odds_ratio'] as const;
export type DevigMethod = (typeof DEVIG_METHODS)[number];

/** Power removes the most margin from long shots, so it yields the fewest false long-shot edges. */
export const DEFAULT_DEVIG_METHOD: DevigMethod = 'power';

export function isDevigMethod(value: string): value is DevigMethod {
  return (DEVIG_METHODS as readonly string[]).includes(value);
}

/** A fair book may round a hair below 1; anything further below is an arbitrage, not a market. */
export const MIN_BOOKSUM = 1 - 1e-9;
/** Above a 25 % margin the prices say more about the bookmaker than about the match. */
export const MAX_BOOKSUM = 1.25;
/** The solvers stop once |sum p - 1| is at most this. */
export const SOLVER_TOLERANCE = 1e-12;
/**
 * Hard cap on bisection steps. Every bracket below is finite, and halving it reaches either
 * the tolerance or adjacent doubles well within 200 steps (from a width of 1e15 down to one
 * ulp of a value near 1 is about 100 halvings), so the cap is a guard, never the exit.
 */
export const SOLVER_MAX_ITERATIONS = 200;
/** A solver result is accepted only this close to a sum of 1, even when the bracket collapsed. */
const ACCEPTED_SUM_ERROR = 1e-9;

export type DevigRefusalReason =
  | 'invalid_price'
  | 'too_few_outcomes'
  | 'overround_out_of_range'
  | 'method_refused'
  | 'solver_failed'
  | 'unknown_method';

export class DevigError extends Error {
  override readonly name = 'DevigError';
  constructor(
    readonly reason: DevigRefusalReason,
    message: string,
    readonly method?: DevigMethod,
  ) {
    super(message);
  }
}

export interface DevigResult {
  /** Fair probabilities, in the order of the prices; each in (0, 1), summing to 1. */
  probabilities: number[];
  /** 1 / probability for each outcome. */
  fairPrices: number[];
  /** S - 1 of the input prices. */
  overround: number;
  method: DevigMethod;
  /** k (power), z (shin) or c (odds_ratio); absent for the closed-form methods. */
  parameter?: number;
  /** Bisection steps the solver took (0 for a closed form); never above SOLVER_MAX_ITERATIONS. */
  iterations: number;
}

/** Each method's fair probabilities for one market; null where that method refuses it. */
export interface DevigAllResult {
  multiplicative: number[] | null;
  additive: number[] | null;
  power: number[] | null;
  shin: number[] | null;
  oddsRatio: number[] | null;
}

function impliedProbabilities(prices: readonly number[]): number[] {
  if (!Array.isArray(prices) || prices.length < 2) {
    throw new DevigError('too_few_outcomes', 'a market needs at least 2 outcomes');
  }
  for (const price of prices) {
    if (typeof price !== 'number' || !Number.isFinite(price) || price <= 1) {
      throw new DevigError('invalid_price', `every price must be a finite decimal price above 1, got ${String(price)}`);
    }
  }
  return prices.map((price) => 1 / price);
}

function sum(values: readonly number[]): number {
  let total = 0;
  for (const value of values) total += value;
  return total;
}

/** The margin (overround) S - 1 of a market's prices; validates the prices but not the range. */
export function overround(prices: readonly number[]): number {
  return sum(impliedProbabilities(prices)) - 1;
}

interface Solution {
  parameter: number;
  probabilities: number[];
  iterations: number;
}

/**
 * Bisection for the root of a decreasing `excess(x) = sum p(x) - 1` with excess(lo) >= 0 >=
 * excess(hi). Chosen over Newton because every bracket here is known in closed form, so
 * convergence is guaranteed without derivatives or safeguards, and the 30-40 evaluations of a
 * 2-6 term sum cost microseconds.
 */
function bisect(method: DevigMethod, probabilitiesAt: (x: number) => number[], lo: number, hi: number): Solution {
  const at = (x: number) => {
    const probabilities = probabilitiesAt(x);
    return { probabilities, excess: sum(probabilities) - 1 };
  };
  let low = lo;
  let high = hi;
  let best = at(low);
  let bestX = low;
  if (Math.abs(best.excess) <= SOLVER_TOLERANCE) return { parameter: low, probabilities: best.probabilities, iterations: 0 };
  const top = at(high);
  if (Math.abs(top.excess) < Math.abs(best.excess)) {
    best = top;
    bestX = high;
  }
  let iterations = 0;
  while (iterations < SOLVER_MAX_ITERATIONS && Math.abs(best.excess) > SOLVER_TOLERANCE) {
    const mid = low + (high - low) / 2;
    if (mid <= low || mid >= high) break; // adjacent doubles: no finer answer exists
    iterations += 1;
    const current = at(mid);
    if (Math.abs(current.excess) <= Math.abs(best.excess)) {
      best = current;
      bestX = mid;
    }
    if (current.excess > 0) low = mid;
    else high = mid;
  }
  if (!(Math.abs(best.excess) <= ACCEPTED_SUM_ERROR) || best.probabilities.some((p) => !(p > 0 && p < 1))) {
    throw new DevigError('solver_failed', `${method}: no parameter makes the probabilities sum to 1`, method);
  }
  return { parameter: bestX, probabilities: best.probabilities, iterations };
}

function solvePower(pi: readonly number[], booksum: number, minPrice: number): Solution {
  // sum pi^k <= S * max(pi)^(k-1) = 1 at k = 1 + ln S / ln(min price): a finite upper bracket.
  const lo = booksum >= 1 ? 1 : 0;
  const hi = booksum >= 1 ? 1 + Math.log(booksum) / Math.log(minPrice) : 1;
  return bisect('power', (k) => pi.map((p) => p ** k), lo, hi);
}

/** Shin's p for one outcome; the rationalised form for z >= 0 avoids cancellation near z = 1. */
function shinProbability(z: number, q: number): number {
  const root = Math.sqrt(z * z + 4 * (1 - z) * q);
  return z >= 0 ? (2 * q) / (root + z) : (root - z) / (2 * (1 - z));
}

function solveShin(pi: readonly number[], booksum: number): Solution {
  const q = pi.map((p) => (p * p) / booksum);
  const probabilitiesAt = (z: number) => q.map((qi) => shinProbability(z, qi));
  if (pi.length === 2) {
    // Closed form for two outcomes (the `shin` package, mberk/shin), where Shin equals additive.
    const diff = pi[0]! - pi[1]!;
    const z = ((booksum - 1) * (diff * diff - booksum)) / (booksum * (diff * diff - 1));
    return { parameter: z, probabilities: probabilitiesAt(z), iterations: 0 };
  }
  // sum p = sqrt(S) at z = 0 and sum pi^2 / S < 1 at z = 1; a book a hair under 1 has z < 0,
  // and at z = -1 every p exceeds 1/2, so the sum exceeds 1.
  return booksum >= 1 ? bisect('shin', probabilitiesAt, 0, 1) : bisect('shin', probabilitiesAt, -1, 0);
}

function solveOddsRatio(pi: readonly number[], booksum: number): Solution {
  // For c >= 1 every denominator is at least 1 + (c - 1)(1 - max pi), so the sum is at most 1
  // at c = 1 + (S - 1) / (1 - max pi); at c = 0 every p is 1 and the sum is n > 1.
  const maxPi = Math.max(...pi);
  const lo = booksum >= 1 ? 1 : 0;
  const hi = booksum >= 1 ? 1 + (booksum - 1) / (1 - maxPi) : 1;
  return bisect('odds_ratio', (c) => pi.map((p) => p / (c + p - c * p)), lo, hi);
}

function result(method: DevigMethod, probabilities: number[], booksum: number, solution?: Solution): DevigResult {
  if (probabilities.some((p) => !(p > 0 && p < 1))) {
    throw new DevigError('method_refused', `${method} gives a probability outside (0, 1) for this market`, method);
  }
  const out: DevigResult = {
    probabilities,
    fairPrices: probabilities.map((p) => 1 / p),
    overround: booksum - 1,
    method,
    iterations: solution?.iterations ?? 0,
  };
  if (solution) out.parameter = solution.parameter;
  return out;
}

/** Fair probabilities of one market by one method; throws DevigError when it refuses. */
export function devig(prices: readonly number[], method: DevigMethod): DevigResult {
  if (!isDevigMethod(method)) {
    throw new DevigError('unknown_method', `unknown devig method ${String(method)}; use one of ${DEVIG_METHODS.join(', ')}`);
  }
  const pi = impliedProbabilities(prices);
  const booksum = sum(pi);
  if (!(booksum >= MIN_BOOKSUM && booksum <= MAX_BOOKSUM)) {
    throw new DevigError(
      'overround_out_of_range',
      `the implied probabilities sum to ${booksum}, outside [${MIN_BOOKSUM}, ${MAX_BOOKSUM}]`,
    );
  }
  const n = pi.length;
  switch (method) {
    case 'multiplicative':
      return result(method, pi.map((p) => p / booksum), booksum);
    case 'additive':
      return result(method, pi.map((p) => p - (booksum - 1) / n), booksum);
    case 'power':
    case 'shin':
    case 'odds_ratio':
      return solvedMarkets.solve(method, prices, () => {
        const solution = method === 'power' ? solvePower(pi, booksum, Math.min(...prices)) : method === 'shin' ? solveShin(pi, booksum) : solveOddsRatio(pi, booksum);
        return result(method, solution.probabilities, booksum, solution);
      });
  }
}

/**
 * The solved methods' answers (power, shin, odds_ratio), remembered by method and prices. A
 * steady poll prices most reference markets exactly as the poll before, and their bisection
 * (40-50 steps of a power sum, about 10 µs a market) was a third of detection. Two generations
 * bound the memory: when the current one holds `capacity` markets it becomes the previous one,
 * and an answer found there moves back (a capacity of 0 remembers nothing). Every answer is
 * handed out as fresh arrays, so a caller may keep or change its own. A refusal is not
 * remembered: it is solved again.
 */
export class SolvedMarkets {
  private current = new Map<string, DevigResult>();
  private previous = new Map<string, DevigResult>();
  /** Answers computed (not remembered) so far: for tests and the bench. */
  solved = 0;

  constructor(readonly capacity: number) {}

  solve(method: DevigMethod, prices: readonly number[], compute: () => DevigResult): DevigResult {
    if (this.capacity === 0) {
      const answer = compute();
      this.solved += 1;
      return answer;
    }
    // A number's string is its shortest round-trip form: two price lists share a key only when equal.
    const key = `${method} ${prices.join(' ')}`;
    let answer = this.current.get(key);
    if (answer === undefined) {
      answer = this.previous.get(key);
      if (answer === undefined) {
        answer = compute();
        this.solved += 1;
      }
      if (this.current.size >= this.capacity) {
        this.previous = this.current;
        this.current = new Map();
      }
      this.current.set(key, answer);
    }
    return { ...answer, probabilities: answer.probabilities.slice(), fairPrices: answer.fairPrices.slice() };
  }
}

/** 16,384 markets a generation: two are at most about 8 MB, and hold every reference market of a poll of several sports. */
export let solvedMarkets = new SolvedMarkets(16_384);

/**
 * Runs `work` solving every market, remembering none, and puts the memory back after: how long
 * the devig takes from scratch (the engine bench's pure compute), without losing what the engine
 * remembers. `work` must be synchronous: the memory is back at its first `await`.
 */
export function withoutRememberedSolutions<T>(work: () => T): T {
  const kept = solvedMarkets;
  solvedMarkets = new SolvedMarkets(0);
  try {
    return work();
  } finally {
    solvedMarkets = kept;
  }
}

/**
 * Every method's probabilities for one market (the engine's provenance). A refusal of the
 * market itself (bad price, one outcome, margin out of range) throws, because no method
 * applies; a refusal by one method only (additive on long shots) is null for that method.
 */
export function devigAll(prices: readonly number[]): DevigAllResult {
  devig(prices, 'multiplicative'); // throws the market-level refusals before any method runs
  const attempt = (method: DevigMethod): number[] | null => {
    try {
      return devig(prices, method).probabilities;
    } catch (error) {
      if (error instanceof DevigError && (error.reason === 'method_refused' || error.reason === 'solver_failed')) {
        return null;
      }
      throw error;
    }
  };
  return {
    multiplicative: attempt('multiplicative'),
    additive: attempt('additive'),
    power: attempt('power'),
    shin: attempt('shin'),
    oddsRatio: attempt('odds_ratio'),
  };
}
