/**
 * SingleFlightCache (adapters/common/single-flight-cache.ts), the public adapters' cache of
 * rendered bodies: misses of one key share one load, failed or uncacheable loads are handed to
 * their waiters and not kept, a load that began before invalidate() is not kept, a value no
 * longer fresh is loaded again, and immutable values outlive invalidate().
 */
import { describe, expect, it } from 'vitest';
import { SingleFlightCache } from '../../adapters/common/single-flight-cache.js';

interface Value {
  n: number;
  ok?: boolean;
  freshUntil?: number;
  immutable?: boolean;
}

/** A load the test finishes by hand, counting how often it was started. */
function gatedLoads() {
  const releases: ((value: Value | Error) => void)[] = [];
  const load = () =>
    new Promise<Value>((resolve, reject) => {
      releases.push((value) => (value instanceof Error ? reject(value) : resolve(value)));
    });
  return { load, started: () => releases.length, finish: (i: number, value: Value | Error) => releases[i]!(value) };
}

describe('SingleFlightCache', () => {
  it('starts one load for misses of one key while it runs, and hands its value to every waiter', async () => {
    const cache = new SingleFlightCache<Value>({ max: 10, ttlMs: 60_000 });
    const loads = gatedLoads();
    const waiting = Array.from({ length: 5 }, () => cache.get('k', loads.load));
    expect(loads.started()).toBe(1);
    cache.get('other', loads.load);
    expect(loads.started()).toBe(2);
    loads.finish(0, { n: 1 });
    expect((await Promise.all(waiting)).map((value) => value.n)).toEqual([1, 1, 1, 1, 1]);
    expect(cache.peek('k')).toEqual({ n: 1 });
  });

  it('shares a failed load with its waiters and keeps nothing; an uncacheable value is not kept either', async () => {
    const cache = new SingleFlightCache<Value>({ max: 10, ttlMs: 60_000, cacheable: (value) => value.ok !== false });
    const loads = gatedLoads();
    const waiting = Array.from({ length: 3 }, () => cache.get('k', loads.load).catch((error: Error) => error.message));
    loads.finish(0, new Error('down'));
    expect(await Promise.all(waiting)).toEqual(['down', 'down', 'down']);
    expect(cache.peek('k')).toBeUndefined();
    const refused = cache.get('k', loads.load);
    expect(loads.started()).toBe(2);
    loads.finish(1, { n: 2, ok: false });
    expect(await refused).toEqual({ n: 2, ok: false });
    expect(cache.peek('k')).toBeUndefined();
  });

  it('does not keep a load that began before invalidate(), and starts a new one for requests after it', async () => {
    const cache = new SingleFlightCache<Value>({ max: 10, ttlMs: 60_000 });
    const loads = gatedLoads();
    const before = cache.get('k', loads.load);
    cache.invalidate();
    const after = cache.get('k', loads.load);
    expect(loads.started()).toBe(2);
    loads.finish(0, { n: 1 });
    expect(await before).toEqual({ n: 1 });
    expect(cache.peek('k')).toBeUndefined();
    loads.finish(1, { n: 2 });
    expect(await after).toEqual({ n: 2 });
    expect(cache.peek('k')).toEqual({ n: 2 });
  });

  it('loads again a value no longer fresh, and keeps immutable values through invalidate()', async () => {
    let now = 0;
    const cache = new SingleFlightCache<Value>({
      max: 10,
      ttlMs: 60_000,
      isFresh: (value) => value.freshUntil === undefined || now < value.freshUntil,
      immutable: (value) => value.immutable === true,
    });
    await cache.get('until-10', async () => ({ n: 1, freshUntil: 10 }));
    await cache.get('fixed', async () => ({ n: 2, immutable: true }));
    await cache.get('changeable', async () => ({ n: 3 }));
    now = 9;
    expect(cache.peek('until-10')).toEqual({ n: 1, freshUntil: 10 });
    now = 10;
    expect(cache.peek('until-10')).toBeUndefined();
    expect(await cache.get('until-10', async () => ({ n: 4, freshUntil: 20 }))).toEqual({ n: 4, freshUntil: 20 });
    cache.invalidate();
    expect(cache.peek('fixed')).toEqual({ n: 2, immutable: true });
    expect(cache.peek('changeable')).toBeUndefined();
    expect(cache.peek('until-10')).toBeUndefined();
  });

  it('keeps no more bytes than its budget, dropping the least recently used', async () => {
    const cache = new SingleFlightCache<Value>({ max: 100, ttlMs: 60_000, byteBudget: { maxBytes: 10, bytesOf: (value) => value.n } });
    await cache.get('a', async () => ({ n: 4 }));
    await cache.get('b', async () => ({ n: 4 }));
    cache.peek('a');
    await cache.get('c', async () => ({ n: 4 }));
    expect([cache.peek('a'), cache.peek('b'), cache.peek('c')]).toEqual([{ n: 4 }, undefined, { n: 4 }]);
  });
});
