/**
 * The anonymous GraphQL limit (docs/RATE_LIMITING.md): requests without credentials to
 * /graphql and /graphql/stream, counted per client address in fixed one-minute windows. No
 * monthly cap and nothing durable: the limit only bounds what one address can make the
 * service do. The counting is fixed-window.ts's; the engines hold the counts (in memory, in
 * Redis in redis-limiter.ts).
 */
import { FixedWindows, windowDecision, windowOf, type WindowDecision } from './fixed-window.js';

export const ANONYMOUS_WINDOW_MS = 60_000;
export const DEFAULT_ANONYMOUS_LIMIT = 120;
/**
 * Addresses tracked at once in memory: a flood from more distinct addresses than this within a
 * minute evicts the least recent ones (they start counting again) instead of growing the heap.
 */
const MAX_TRACKED_ADDRESSES = 100_000;

/** Requests per minute per address; `remaining` and `retryAfterSeconds` are the minute's. */
export type AnonymousDecision = WindowDecision;

export function anonymousWindowOf(nowMs: number): number {
  return windowOf(nowMs, ANONYMOUS_WINDOW_MS);
}

/** The decision for a request that makes `count` requests of this address in the current window. */
export function anonymousDecision(count: number, limit: number, nowMs: number): AnonymousDecision {
  return windowDecision(count, limit, ANONYMOUS_WINDOW_MS, nowMs);
}

/** In-memory windows of the anonymous limit: exact for one process; also the Redis engine's fallback. */
export class AnonymousWindows extends FixedWindows {
  constructor(limit: number) {
    super(limit, ANONYMOUS_WINDOW_MS, MAX_TRACKED_ADDRESSES);
  }
}
