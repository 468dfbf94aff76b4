/**
 * The cache of "today's top picks", below every surface that reads them: the public REST
 * endpoint, anonymous GraphQL and API keys all resolve `todayPicks` through it, so a burst
 * of requests (or one request with many aliased `todayPicks`) costs one database query per
 * key every few seconds. Requests that miss together share one query (single flight), and
 * invalidate() drops everything at once when a pick becomes visible or hidden.
 */
import { LRUCache } from 'lru-cache';

/** How long a list stays cached at most; any visibility change drops it sooner. */
export const TODAY_PICKS_CACHE_TTL_MS = 5_000;

export class TodayPicksCache<T extends object> {
  // A handful of keys per UTC day (one per sport and one without): a small bound is plenty.
  private readonly cache = new LRUCache<string, T>({ max: 100, ttl: TODAY_PICKS_CACHE_TTL_MS });
  private readonly inFlight = new Map<string, Promise<T>>();
  /** Bumped by invalidate(): a load that started before it is served but not cached. */
  private generation = 0;

  get(key: string, load: () => Promise<T>): Promise<T> {
    const cached = this.cache.get(key);
    if (cached !== undefined) return Promise.resolve(cached);
    const pending = this.inFlight.get(key);
    if (pending) return pending;
    const startedIn = this.generation;
    const shared: Promise<T> = load()
      .then((value) => {
        if (startedIn === this.generation) this.cache.set(key, value);
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
    // Requests arriving from now on must not join a query that may predate the change.
    this.inFlight.clear();
  }
}
