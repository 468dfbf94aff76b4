/**
 * A short-lived cache whose misses share one load (single flight): a burst of requests for
 * the same key, or one request asking it many times, costs one load per key per TTL.
 * invalidate() drops everything at once; a load that started before it is served to its
 * waiters but not cached. The public endpoint's cache of its rendered bodies.
 */
import { LRUCache } from 'lru-cache';

export interface SingleFlightCacheOptions<T> {
  max: number;
  /** How long a value stays cached at most; invalidate() drops it sooner. */
  ttlMs: number;
  /** Values that may be kept (default: all); the others are only handed to their waiters. */
  cacheable?: (value: T) => boolean;
}

export class SingleFlightCache<T extends object> {
  private readonly cache: LRUCache<string, T>;
  private readonly inFlight = new Map<string, Promise<T>>();
  private readonly cacheable: (value: T) => boolean;
  /** Bumped by invalidate(). */
  private generation = 0;

  constructor(options: SingleFlightCacheOptions<T>) {
    this.cache = new LRUCache<string, T>({ max: options.max, ttl: options.ttlMs });
    this.cacheable = options.cacheable ?? (() => true);
  }

  /** The cached value, synchronously (a hit costs no promise). */
  peek(key: string): T | undefined {
    return this.cache.get(key);
  }

  get(key: string, load: () => Promise<T>): Promise<T> {
    const cached = this.cache.get(key);
    if (cached !== undefined) return Promise.resolve(cached);
    const pending = this.inFlight.get(key);
    if (pending) return pending;
    const startedIn = this.generation;
    const shared: Promise<T> = load()
      .then((value) => {
        if (startedIn === this.generation && this.cacheable(value)) this.cache.set(key, value);
        return value;
      })
      .finally(() => {
        if (this.inFlight.get(key) === shared) this.inFlight.delete(key);
      });
    this.inFlight.set(key, shared);
    return shared;
  }

  invalidate(): void {
    this.generation += 1;
    this.cache.clear();
    // Requests arriving from now on must not join a load that may predate the change.
    this.inFlight.clear();
  }
}
