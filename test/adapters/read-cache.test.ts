/**
 * The REST reads' cache on its own (the HTTP behaviour is in test/integration/read-cache.test.ts):
 * answers are keyed by access level and variables (in any order), never by key; a route's own
 * answer (a 404) is kept, execution errors and throws are not; a read that began before an invalidation is answered but not kept; and
 * misses of one key meeting in flight run once.
 */
import { describe, expect, it } from 'vitest';
import { assertCacheableRead, createReadCaches, readKey, type ReadAnswer } from '../../adapters/rest/read-cache.js';
import { ALL_REST_ROUTES } from '../../adapters/rest/plugin.js';
import { NotFoundError } from '../../src/domain/errors.js';
import type { Principal } from '../../src/domain/principal.js';

const growth: Principal = { kind: 'apiKey', apiKeyId: 'a', tier: 'growth' };
const otherGrowth: Principal = { kind: 'apiKey', apiKeyId: 'b', tier: 'growth' };
const starter: Principal = { kind: 'apiKey', apiKeyId: 'c', tier: 'starter' };

function counted() {
  let loads = 0;
  const load = (text: string) => async (): Promise<ReadAnswer> => {
    loads += 1;
    return { bytes: Buffer.from(`${text}:${loads}`) };
  };
  return { load, loads: () => loads };
}

function gate() {
  let open!: () => void;
  const opened = new Promise<void>((resolve) => (open = resolve));
  return { open, opened };
}

describe('REST read cache', () => {
  it('keys by access level and variables whatever their order, never by key', () => {
    expect(readKey(growth, { first: 5, sport: 'soccer' })).toBe(readKey(otherGrowth, { sport: 'soccer', first: 5 }));
    expect(readKey(growth, { first: 5 })).not.toBe(readKey(starter, { first: 5 }));
    expect(readKey(growth, { first: 5 })).not.toBe(readKey(growth, { first: 6 }));
    expect(readKey({ kind: 'account', accountId: 'x', tier: 'growth', sessionId: 's' }, {})).not.toBe(readKey(growth, {}));
    expect(readKey({ kind: 'admin' }, {})).toBe('admin\n[]');
    expect(readKey(growth, { first: 5 })).toBe('apiKey:growth\n[["first",5]]');
  });

  it('answers a repeated read of one access level from the cache, and counts it', async () => {
    const caches = createReadCaches();
    const route = caches.forRoute(60_000);
    const { load, loads } = counted();
    const first = await route.read(growth, { first: 5 }, load('page'));
    const second = await route.read(otherGrowth, { first: 5 }, load('page'));
    expect(second).toBe(first);
    await route.read(starter, { first: 5 }, load('page'));
    expect(loads()).toBe(2);
    expect(caches.stats()).toEqual({ hits: 1, stored: 2 });
  });

  it('keeps an answer the route made of the data (a 404) like a body', async () => {
    const caches = createReadCaches();
    const route = caches.forRoute(60_000);
    let runs = 0;
    const missing = async (): Promise<ReadAnswer> => {
      runs += 1;
      return { routeAnswer: new NotFoundError('No analysis exists for this match.') };
    };
    const first = await route.read(growth, { matchId: 'x' }, missing);
    expect(await route.read(growth, { matchId: 'x' }, missing)).toBe(first);
    expect(runs).toBe(1);
  });

  it('keeps no execution error and no throw: each read of a refused answer runs again', async () => {
    const caches = createReadCaches();
    const route = caches.forRoute(60_000);
    let runs = 0;
    const refuse = async (): Promise<ReadAnswer> => {
      runs += 1;
      return { error: { message: 'down', extensions: { code: 'service_unavailable' } } };
    };
    expect(await route.read(growth, {}, refuse)).toHaveProperty('error');
    await route.read(growth, {}, refuse);
    const missing = async (): Promise<ReadAnswer> => {
      runs += 1;
      throw new Error('not found');
    };
    await expect(route.read(growth, { id: 1 }, missing)).rejects.toThrow('not found');
    await expect(route.read(growth, { id: 1 }, missing)).rejects.toThrow('not found');
    expect(runs).toBe(4);
    expect(caches.stats().stored).toBe(0);
  });

  it('drops every route on invalidate(), and does not keep a read that began before it', async () => {
    const caches = createReadCaches();
    const list = caches.forRoute(60_000);
    const record = caches.forRoute(60_000);
    const { load, loads } = counted();
    await list.read(growth, {}, load('list'));
    await record.read(growth, {}, load('record'));
    caches.invalidate();
    await list.read(growth, {}, load('list'));
    await record.read(growth, {}, load('record'));
    expect(loads()).toBe(4);
    // A read in flight across an invalidation: answered, not kept.
    const held = gate();
    const inFlight = list.read(growth, { first: 2 }, async () => {
      await held.opened;
      return { bytes: Buffer.from('old') };
    });
    caches.invalidate();
    held.open();
    expect(String((await inFlight as { bytes: Buffer }).bytes)).toBe('old');
    const next = await list.read(growth, { first: 2 }, load('new'));
    expect(String((next as { bytes: Buffer }).bytes)).toBe('new:5');
    expect(await list.read(growth, { first: 2 }, load('new'))).toBe(next);
  });

  it('runs misses of one key that meet in flight once', async () => {
    const caches = createReadCaches();
    const route = caches.forRoute(60_000);
    const held = gate();
    let runs = 0;
    const slow = async (): Promise<ReadAnswer> => {
      runs += 1;
      await held.opened;
      return { bytes: Buffer.from('page') };
    };
    const reads = [route.read(growth, { first: 3 }, slow), route.read(otherGrowth, { first: 3 }, slow), route.read(growth, { first: 3 }, slow)];
    held.open();
    const answers = await Promise.all(reads);
    expect(new Set(answers).size).toBe(1);
    expect(runs).toBe(1);
    expect(caches.stats()).toEqual({ hits: 2, stored: 1 });
  });

  it('is declared only by reads whose answer every caller of an access level may share', () => {
    const read = { operationId: 'listPicks', method: 'GET', cacheTtlMs: 2_000 };
    expect(() => assertCacheableRead(read)).not.toThrow();
    expect(() => assertCacheableRead({ ...read, method: 'POST' })).toThrow(/only a GET/);
    expect(() => assertCacheableRead({ ...read, successStatus: 204 })).toThrow(/only a GET/);
    expect(() => assertCacheableRead({ ...read, successHeaders: { 'Cache-Control': {} } })).toThrow(/only a GET/);
    expect(() => assertCacheableRead({ ...read, method: 'POST', cacheTtlMs: undefined })).not.toThrow();
    // The routes served today: the three reads, and nothing that writes or shows a secret.
    expect(ALL_REST_ROUTES.filter((route) => route.cacheTtlMs !== undefined).map((route) => route.operationId)).toEqual(['listPicks', 'getTrackRecord', 'getMatchAnalysis']);
  });
});
