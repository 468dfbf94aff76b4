import { createHash, timingSafeEqual } from 'node:crypto';

/** Constant-time string equality: both sides are hashed first so lengths leak nothing. */
export function secretsEqual(presented: string, expected: string): boolean {
  const a = createHash('sha256').update(presented, 'utf8').digest();
  const b = createHash('sha256').update(expected, 'utf8').digest();
  return timingSafeEqual(a, b);
}
