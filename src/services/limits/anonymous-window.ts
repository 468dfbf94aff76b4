/**
 * The anonymous GraphQL limit (docs/RATE_LIMITING.md): requests without credentials to
 * /graphql and /graphql/stream, counted per client address in fixed one-minute windows. No
 * monthly cap and nothing durable: the limit only bounds what one address can make the
 * service do. The counting is fixed-window.ts's; the engines hold the counts (in memory, in
 * Redis in redis-limiter.ts).
 */
import { isIP } from 'node:net';
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

/** In-memory windows of the anonymous limit: exact for one process; also the Redis engine's fallback. */
export class AnonymousWindows extends FixedWindows {
  constructor(limit: number) {
    super(limit, ANONYMOUS_WINDOW_MS, MAX_TRACKED_ADDRESSES);
  }
}
