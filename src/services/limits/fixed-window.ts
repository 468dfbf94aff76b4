/**
 * Fixed-window counters: at most `limit` admitted requests per subject (an address, an API key)
 * in each window of `windowMs`, windows aligned to the epoch. The simpler sibling of the hourly
 * sliding window (src/domain/rate-limit.ts), for limits that only bound how often one subject
 * can make the service do something: the anonymous GraphQL limit (anonymous-window.ts) and the
 * usage endpoint's own window (usage-window.ts). Nothing is durable. The engines hold the counts
 * (in memory here, in Redis in redis-limiter.ts); the decision is the same function for both.
 */
import { LRUCache } from 'lru-cache';

export interface WindowDecision {
  allowed: boolean;
  /** Requests per window per subject. */
  limit: number;
  /** Requests still admissible in this window (after this one, if admitted). */
  remaining: number;
  /** Whole seconds (>= 1) until the window ends, when the subject may send again. */
  retryAfterSeconds: number;
}

export function windowOf(nowMs: number, windowMs: number): number {
  return Math.floor(nowMs / windowMs);
}

/** The decision for a request that makes `count` requests of its subject in the current window. */
export function windowDecision(count: number, limit: number, windowMs: number, nowMs: number): WindowDecision {
  const windowEndsMs = (windowOf(nowMs, windowMs) + 1) * windowMs;
  return {
    allowed: count <= limit,
    limit,
    remaining: Math.max(0, limit - count),
    retryAfterSeconds: Math.max(1, Math.ceil((windowEndsMs - nowMs) / 1000)),
  };
}

/** In-memory windows: exact for one process; also the Redis engine's fallback. */
export class FixedWindows {
  private readonly windows: LRUCache<string, { window: number; count: number }>;

  /**
   * `maxTracked`: subjects tracked at once; a flood from more distinct subjects than this within
   * a window evicts the least recent ones (they start counting again) instead of growing the heap.
   */
  constructor(
    private readonly limit: number,
    private readonly windowMs: number,
    maxTracked: number,
  ) {
    this.windows = new LRUCache({ max: maxTracked });
  }

  consume(subject: string, nowMs: number): WindowDecision {
    const window = windowOf(nowMs, this.windowMs);
    let entry = this.windows.get(subject);
    if (!entry || entry.window < window) {
      entry = { window, count: 0 };
      this.windows.set(subject, entry);
    }
    const decision = windowDecision(entry.count + 1, this.limit, this.windowMs, nowMs);
    // Refused requests are not counted: the count only has to reach the limit.
    if (decision.allowed) entry.count += 1;
    return decision;
  }

  /** Drops windows that have ended. */
  evictEnded(nowMs: number): void {
    const window = windowOf(nowMs, this.windowMs);
    for (const [subject, entry] of this.windows.entries()) if (entry.window < window) this.windows.delete(subject);
  }

  clear(): void {
    this.windows.clear();
  }

  get size(): number {
    return this.windows.size;
  }
}
