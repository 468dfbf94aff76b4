/**
 * The read cache's own rules on a small schema (the HTTP behaviour is in
 * test/integration/read-cache.test.ts): only executions flagged `cachedRead` are cached, keyed
 * by access level and variables (in any order), errors are not kept, and an execution that
 * began before an invalidation is answered but not stored.
 */
import { createSchema, createYoga } from 'graphql-yoga';
import { parse } from 'graphql';
import { describe, expect, it } from 'vitest';
import type { Principal } from '../../src/domain/principal.js';
import { accessLevel, createReadCache } from '../../src/graphql/read-cache.js';

function setup() {
  let calls = 0;
  let gate: Promise<void> = Promise.resolve();
  const readCache = createReadCache();
  const yoga = createYoga({
    schema: createSchema({
      typeDefs: 'type Query { picks(first: Int, sport: String): String, failing: String }',
      resolvers: {
        Query: {
          picks: async (_root: unknown, args: { first?: number; sport?: string }) => {
            calls += 1;
            await gate;
            return `${args.sport ?? 'all'}:${args.first ?? 0}:${calls}`;
          },
          failing: () => {
            calls += 1;
            throw new Error('down');
          },
        },
      },
    }),
    plugins: [readCache.plugin],
    logging: false,
    maskedErrors: false,
  });
  const document = parse('query ($first: Int, $sport: String) { picks(first: $first, sport: $sport) }');
  const failing = parse('{ failing }');
  async function run(principal: Principal, variables: Record<string, unknown> = {}, options: { cached?: boolean; doc?: typeof document } = {}) {
    const { execute, schema } = yoga.getEnveloped({});
    const contextValue = { principal, ...(options.cached === false ? {} : { cachedRead: true }) };
    return (await execute({ schema, document: options.doc ?? document, variableValues: variables, contextValue })) as { data?: { picks?: string }; errors?: unknown[] };
  }
  return {
    readCache,
    run,
    failing,
    calls: () => calls,
    hold: () => {
      let release!: () => void;
      gate = new Promise((resolve) => (release = resolve));
      return () => {
        release();
        gate = Promise.resolve();
      };
    },
  };
}

const growth: Principal = { kind: 'apiKey', apiKeyId: 'a', tier: 'growth' };
const otherGrowth: Principal = { kind: 'apiKey', apiKeyId: 'b', tier: 'growth' };
const starter: Principal = { kind: 'apiKey', apiKeyId: 'c', tier: 'starter' };

describe('read cache', () => {
  it('keys by access level and variables, whatever their order, and hands back the same result object', async () => {
    const t = setup();
    const first = await t.run(growth, { first: 5, sport: 'soccer' });
    const second = await t.run(otherGrowth, { sport: 'soccer', first: 5 });
    expect(second).toBe(first);
    expect(t.calls()).toBe(1);
    await t.run(starter, { first: 5, sport: 'soccer' });
    await t.run(growth, { first: 6, sport: 'soccer' });
    expect(t.calls()).toBe(3);
    expect(t.readCache.stats()).toEqual({ hits: 1, stored: 3 });
  });

  it('caches nothing without the cachedRead flag, and never an answer with errors', async () => {
    const t = setup();
    await t.run(growth, {}, { cached: false });
    await t.run(growth, {}, { cached: false });
    expect(t.calls()).toBe(2);
    const failed = await t.run(growth, {}, { doc: t.failing });
    expect(failed.errors).toHaveLength(1);
    await t.run(growth, {}, { doc: t.failing });
    expect(t.calls()).toBe(4);
    expect(t.readCache.stats().stored).toBe(0);
  });

  it('drops everything on invalidate(), and does not store an execution that began before it', async () => {
    const t = setup();
    await t.run(growth, { first: 1 });
    t.readCache.invalidate();
    await t.run(growth, { first: 1 });
    expect(t.calls()).toBe(2);
    // An execution in flight across an invalidation: answered, not stored.
    const release = t.hold();
    const inFlight = t.run(growth, { first: 2 });
    await new Promise((resolve) => setImmediate(resolve));
    t.readCache.invalidate();
    release();
    expect((await inFlight).data?.picks).toBe('all:2:3');
    const next = await t.run(growth, { first: 2 });
    expect(next.data?.picks).toBe('all:2:4');
    expect(t.calls()).toBe(4);
    // Stored again once an execution ran entirely after the invalidation.
    expect(await t.run(growth, { first: 2 })).toBe(next);
  });

  it('runs misses of one key that meet in flight once (single flight), and caches the result for later ones', async () => {
    const t = setup();
    const release = t.hold();
    const runs = [t.run(growth, { first: 3 }), t.run(otherGrowth, { first: 3 }), t.run(growth, { first: 3 })];
    await new Promise((resolve) => setImmediate(resolve));
    release();
    const results = await Promise.all(runs);
    expect(results.map((result) => result.data?.picks)).toEqual(['all:3:1', 'all:3:1', 'all:3:1']);
    expect(t.calls()).toBe(1);
    expect((await t.run(growth, { first: 3 })).data?.picks).toBe('all:3:1');
    expect(t.readCache.stats()).toEqual({ hits: 3, stored: 1 });
  });

  it('names access levels by caller kind and tier, never by key', () => {
    expect(accessLevel(growth)).toBe('key:growth');
    expect(accessLevel(otherGrowth)).toBe('key:growth');
    expect(accessLevel({ kind: 'account', accountId: 'x', tier: 'enterprise', sessionId: 's' })).toBe('account:enterprise');
    expect(accessLevel({ kind: 'admin' })).toBe('admin');
    expect(accessLevel({ kind: 'anonymous' })).toBe('anonymous');
  });
});
