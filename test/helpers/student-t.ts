/**
 * Student's t distribution for tests, from its density alone (Lanczos log-gamma, Simpson's rule,
 * bisection): an independent check of the statistics library the service uses.
 */
const LANCZOS = [0.99999999999980993, 676.5203681218851, -1259.1392167224028, 771.32342877765313, -176.61502916214059, 12.507343278686905, -0.13857109526572012, 9.9843695780195716e-6, 1.5056327351493116e-7];

function logGamma(x: number): number {
  if (x < 0.5) return Math.log(Math.PI / Math.sin(Math.PI * x)) - logGamma(1 - x);
  const z = x - 1;
  let sum = LANCZOS[0]!;
  for (let i = 1; i < 9; i += 1) sum += LANCZOS[i]! / (z + i);
  const t = z + 7.5;
  return 0.5 * Math.log(2 * Math.PI) + (z + 0.5) * Math.log(t) - t + Math.log(sum);
}

export function studentDensity(t: number, nu: number): number {
  return Math.exp(logGamma((nu + 1) / 2) - logGamma(nu / 2) - 0.5 * Math.log(nu * Math.PI) - ((nu + 1) / 2) * Math.log(1 + (t * t) / nu));
}

/** P(T <= t): 1/2 plus the density integrated from 0 to |t| (Simpson, 20,000 intervals). */
export function studentCdf(t: number, nu: number): number {
  const x = Math.abs(t);
  const steps = 20_000;
  const h = x / steps;
  let sum = studentDensity(0, nu) + studentDensity(x, nu);
  for (let i = 1; i < steps; i += 1) sum += (i % 2 === 1 ? 4 : 2) * studentDensity(i * h, nu);
  const half = (sum * h) / 3;
  return t >= 0 ? 0.5 + half : 0.5 - half;
}

/** The p-quantile (p > 0.5) by bisection on studentCdf. */
export function studentQuantile(p: number, nu: number): number {
  let low = 0;
  let high = 1000;
  for (let i = 0; i < 80; i += 1) {
    const mid = (low + high) / 2;
    if (studentCdf(mid, nu) < p) low = mid;
    else high = mid;
  }
  return (low + high) / 2;
}
