/**
 * The usage endpoint's own window (GET /api/v1/usage, docs/RATE_LIMITING.md): reading a key's
 * usage counts nothing against its hourly limit or monthly cap, and answers when they are
 * exhausted, so it has a limit of its own: USAGE_READ_LIMIT reads per key in each fixed clock
 * hour (UTC), then 429 rate_limit_exceeded with Retry-After until the hour ends. Counting is
 * fixed-window.ts's; the engines hold the counts (in memory, in Redis in redis-limiter.ts).
 */
import { FixedWindows, windowDecision, windowOf, type WindowDecision } from './fixed-window.js';

export const USAGE_READ_LIMIT = 60;
export const USAGE_READ_WINDOW_MS = 3_600_000;
/** Keys tracked at once in memory (the least recent are forgotten first). */
const MAX_TRACKED_KEYS = 100_000;

export type UsageReadDecision = WindowDecision;

export function usageReadWindowOf(nowMs: number): number {
  return windowOf(nowMs, USAGE_READ_WINDOW_MS);
}

/** The decision for a read that makes `count` reads of this key in the current hour. */
export function usageReadDecision(count: number, nowMs: number): UsageReadDecision {
  return windowDecision(count, USAGE_READ_LIMIT, USAGE_READ_WINDOW_MS, nowMs);
}

/** In-memory windows of usage reads: exact for one process; also the Redis engine's fallback. */
export class UsageReadWindows extends FixedWindows {
  constructor() {
    super(USAGE_READ_LIMIT, USAGE_READ_WINDOW_MS, MAX_TRACKED_KEYS);
  }
}
