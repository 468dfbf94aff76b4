/**
 * A short-lived cache whose misses share one load (single flight): a burst of requests for
 * the same key, or one request asking it many times, costs one load per key per TTL.
 * invalidate() drops everything at once (but the values declared immutable); a load that
 * started before it is served to its waiters but not cached. The public adapters' cache of
 * their rendered bodies (the public endpoint's, the ledger's) and the REST reads' answers.
 */
import { LRUCache } from 'lru-cache';

export interface SingleFlightCacheOptions<T> {
  max: number;
  /** How long a value stays cached at most (wall time); invalidate() drops it sooner. */
  ttlMs: number;
  /** Values that may be kept (default: all); the others are only handed to their waiters. */
  cacheable?: (value: T) => boolean;
  /** Bytes kept at most besides `max` values, each value counted by bytesOf: for values whose sizes differ a lot. */
  byteBudget?: { maxBytes: number; bytesOf: (value: T) => number };
  /**
   * Asked of a cached value on every read; a value no longer fresh is dropped and loaded again
   * (for values that go stale at a time of the app's clock, which the wall-time TTL cannot follow).
   */
  isFresh?: (value: T) => boolean;
  /** Values no change can make stale: kept without ttlMs and through invalidate(), until evicted. */
  immutable?: (value: T) => boolean;
}

export class SingleFlightCache<T extends object> {
  private readonly cache: LRUCache<string, T>;
  private readonly inFlight = new Map<string, Promise<T>>();
  private readonly cacheable: (value: T) => boolean;
  private readonly isFresh: ((value: T) => boolean) | null;
  private readonly immutable: ((value: T) => boolean) | null;
  /** Bumped by invalidate(). */
  private generation = 0;
  /** Reads of get() answered without a load of their own (cached, or joining one in flight). */
  private hits = 0;
  /** Loaded values kept. */
  private stored = 0;

  constructor(options: SingleFlightCacheOptions<T>) {
    this.cache = new LRUCache<string, T>({
      max: options.max,
      ttl: options.ttlMs,
      ...(options.byteBudget ? { maxSize: options.byteBudget.maxBytes, sizeCalculation: options.byteBudget.bytesOf } : {}),
    });
    this.cacheable = options.cacheable ?? (() => true);
    this.isFresh = options.isFresh ?? null;
    this.immutable = options.immutable ?? null;
  }

  /** The cached value, synchronously (a hit costs no promise). */
  peek(key: string): T | undefined {
    const cached = this.cache.get(key);
    if (cached === undefined || this.isFresh === null || this.isFresh(cached)) return cached;
    this.cache.delete(key);
    return undefined;
  }

  get(key: string, load: () => Promise<T>): Promise<T> {
    const cached = this.peek(key);
    if (cached !== undefined) {
      this.hits += 1;
      return Promise.resolve(cached);
    }
    const pending = this.inFlight.get(key);
    if (pending) {
      this.hits += 1;
      return pending;
    }
    const startedIn = this.generation;
    const shared: Promise<T> = load()
      .then((value) => {
        if (startedIn === this.generation && this.cacheable(value)) {
          this.stored += 1;
          // ttl 0: no wall-time bound for this value.
          this.cache.set(key, value, this.immutable?.(value) ? { ttl: 0 } : undefined);
        }
        return value;
      })
      .finally(() => {
        if (this.inFlight.get(key) === shared) this.inFlight.delete(key);
      });
    this.inFlight.set(key, shared);
    return shared;
  }

  /** For operations, tests and the bench: see hits and stored above. */
  stats(): { hits: number; stored: number } {
    return { hits: this.hits, stored: this.stored };
  }

  invalidate(): void {
    this.generation += 1;
    if (this.immutable === null) {
      this.cache.clear();
    } else {
      const immutable = this.immutable;
      const changeable = [...this.cache.entries()].filter(([, value]) => !immutable(value)).map(([key]) => key);
      for (const key of changeable) this.cache.delete(key);
    }
    // Requests arriving from now on must not join a load that may predate the change.
    this.inFlight.clear();
  }
}
