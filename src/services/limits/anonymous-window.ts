/**
 * The anonymous GraphQL limit (docs/RATE_LIMITING.md): requests without credentials to
 * /graphql and /graphql/stream, counted per client address in fixed one-minute windows. No
 * monthly cap and nothing durable: the limit only bounds what one address can make the
 * service do. The engines hold the counts (in memory here, in Redis in redis-limiter.ts);
 * the decision is the same function for both.
 */
import { isIP } from 'node:net';
import { LRUCache } from 'lru-cache';

export const ANONYMOUS_WINDOW_MS = 60_000;
export const DEFAULT_ANONYMOUS_LIMIT = 120;
/**
 * Addresses tracked at once in memory: a flood from more distinct addresses than this within a
 * minute evicts the least recent ones (they start counting again) instead of growing the heap.
 */
const MAX_TRACKED_ADDRESSES = 100_000;

export interface AnonymousDecision {
  allowed: boolean;
  /** Requests per minute per address. */
  limit: number;
  /** Requests still admissible in this window (after this one, if admitted). */
  remaining: number;
  /** Whole seconds (>= 1) until the window ends, when the address may send again. */
  retryAfterSeconds: number;
}

export function anonymousWindowOf(nowMs: number): number {
  return Math.floor(nowMs / ANONYMOUS_WINDOW_MS);
}

/** The decision for a request that makes `count` requests of this address in the current window. */
export function anonymousDecision(count: number, limit: number, nowMs: number): AnonymousDecision {
  const windowEndsMs = (anonymousWindowOf(nowMs) + 1) * ANONYMOUS_WINDOW_MS;
  return {
    allowed: count <= limit,
    limit,
    remaining: Math.max(0, limit - count),
    retryAfterSeconds: Math.max(1, Math.ceil((windowEndsMs - nowMs) / 1000)),
  };
}

/**
 * What is counted for an address: an IPv4 address as it is (IPv4-mapped IPv6 included), an
 * IPv6 address by its /64 prefix, the smallest block one subscriber is usually given: one
 * client could otherwise send from a fresh address with every request.
 */
export function anonymousClientKey(address: string): string {
  const mapped = /^::ffff:(\d{1,3}(?:\.\d{1,3}){3})$/i.exec(address);
  if (mapped) return mapped[1]!;
  const withoutZone = address.split('%')[0]!;
  if (isIP(withoutZone) !== 6) return address;
  const [head = '', tail] = withoutZone.split('::');
  const groupsOf = (part: string) =>
    part === ''
      ? []
      : part.split(':').flatMap((group) => {
          // An embedded IPv4 address (::1.2.3.4) is two groups.
          if (!group.includes('.')) return [group];
          const [a, b, c, d] = group.split('.').map(Number) as [number, number, number, number];
          return [((a << 8) | b).toString(16), ((c << 8) | d).toString(16)];
        });
  const left = groupsOf(head);
  const right = tail === undefined ? [] : groupsOf(tail);
  const groups = [...left, ...Array<string>(8 - left.length - right.length).fill('0'), ...right];
  return `${groups.slice(0, 4).map((group) => parseInt(group, 16).toString(16)).join(':')}::/64`;
}

/** In-memory windows: exact for one process; also the Redis engine's fallback. */
export class AnonymousWindows {
  private readonly windows = new LRUCache<string, { window: number; count: number }>({ max: MAX_TRACKED_ADDRESSES });

  constructor(private readonly limit: number) {}

  consume(clientKey: string, nowMs: number): AnonymousDecision {
    const window = anonymousWindowOf(nowMs);
    let entry = this.windows.get(clientKey);
    if (!entry || entry.window < window) {
      entry = { window, count: 0 };
      this.windows.set(clientKey, entry);
    }
    const decision = anonymousDecision(entry.count + 1, this.limit, nowMs);
    // Refused requests are not counted: the count only has to reach the limit.
    if (decision.allowed) entry.count += 1;
    return decision;
  }

  /** Drops windows that have ended. */
  evictEnded(nowMs: number): void {
    const window = anonymousWindowOf(nowMs);
    for (const [clientKey, entry] of this.windows.entries()) if (entry.window < window) this.windows.delete(clientKey);
  }

  clear(): void {
    this.windows.clear();
  }

  get size(): number {
    return this.windows.size;
  }
}
