/**
 * The read cache of the REST reads (their one cache), at the execution layer: each result of a
 * cacheable document is kept keyed by document, variables and access level, so a hit runs no
 * resolver and no database query, while the request's context (API-key lookup, limiter, tier) is
 * still built for every request before it (a refused request never reaches execution).
 *
 * Only operations run by the adapters with a cacheable document are cached (the context flag
 * `cachedRead`, set by adapters/common/operations.ts). /graphql, subscriptions and mutations are
 * never cached; the public endpoint keeps its rendered bodies itself (adapters/public). Misses of one key at the same time
 * share one execution (single flight). Any change that can alter a cached answer (a pick
 * published, held, approved or settled, an analysis written) drops every entry on every
 * instance: the instance that made the change at once, the others when the bus message arrives
 * (src/runtime.ts). An execution that began before such a change may have read the old data, so
 * its result is answered but not kept. The TTLs bound what a lost message could leave stale.
 * docs/DECISIONS.md, "Read cache".
 *
 * Purpose-built rather than @envelop/response-cache: that library also walks every result to
 * index its entities for invalidation by id, which this service never uses (every change drops
 * everything), and that walk was a quarter of the CPU of a miss.
 */
import { Kind, type DocumentNode, type ExecutionResult } from 'graphql';
import type { Plugin } from 'graphql-yoga';
import { LRUCache } from 'lru-cache';
import type { Principal } from '../domain/principal.js';
import type { Context } from './context.js';

/**
 * How long a cached answer may live at most, per root field (ms). The list keeps 2 s; the others
 * change only with writes that invalidate them, so the bound is only for a lost bus message.
 */
export const READ_CACHE_TTL_MS: Readonly<Record<string, number>> = {
  'Query.picks': 2_000,
  'Query.trackRecord': 5_000,
  'Query.matchAnalysis': 5_000,
};

/** For a cacheable document whose fields have no TTL above: the shortest bound. */
const FALLBACK_TTL_MS = 2_000;

/**
 * Cached answers kept per instance (least recently used beyond): a page of 50 picks with its
 * bytes is about 50 KB, so at most about 25 MB.
 */
const READ_CACHE_MAX_ENTRIES = 500;

/**
 * What decides the answer besides the document and variables: the kind of caller and its tier.
 * Two keys of one tier see the same data (nothing in the cached documents is per key).
 */
export function accessLevel(principal: Principal): string {
  switch (principal.kind) {
    case 'apiKey':
      return `key:${principal.tier}`;
    case 'account':
      return `account:${principal.tier}`;
    default:
      return principal.kind;
  }
}

declare module 'fastify' {
  interface FastifyInstance {
    readCacheStats: () => { hits: number; stored: number };
  }
}

export interface ReadCache {
  plugin: Plugin;
  /** Drops every cached answer of this instance. */
  invalidate(): void;
  /** Answers served from the cache (joined misses included) and executions stored in it since start (operations, tests, bench). */
  stats(): { hits: number; stored: number };
}

/** What the cache needs to know of a document, worked out once per parsed document. */
interface DocumentPlan {
  id: string;
  ttlMs: number;
}

function planOf(document: DocumentNode, id: string): DocumentPlan {
  const coordinates: string[] = [];
  for (const definition of document.definitions) {
    if (definition.kind !== Kind.OPERATION_DEFINITION) continue;
    const type = definition.operation === 'query' ? 'Query' : definition.operation === 'mutation' ? 'Mutation' : 'Subscription';
    for (const selection of definition.selectionSet.selections) {
      if (selection.kind === Kind.FIELD) coordinates.push(`${type}.${selection.name.value}`);
    }
  }
  const ttls = coordinates.map((coordinate) => READ_CACHE_TTL_MS[coordinate] ?? FALLBACK_TTL_MS);
  return { id, ttlMs: ttls.length > 0 ? Math.min(...ttls) : FALLBACK_TTL_MS };
}

/** Variables in a key that does not depend on the order they were set in. */
function variableKey(variables: Readonly<Record<string, unknown>> | null | undefined): string {
  if (!variables) return '{}';
  const names = Object.keys(variables).sort();
  return JSON.stringify(names.map((name) => [name, variables[name]]));
}

function isResult(value: unknown): value is ExecutionResult {
  return typeof value === 'object' && value !== null && !(Symbol.asyncIterator in value);
}

export function createReadCache(): ReadCache {
  const store = new LRUCache<string, ExecutionResult>({ max: READ_CACHE_MAX_ENTRIES });
  const inFlight = new Map<string, Promise<ExecutionResult>>();
  // The adapters' documents are parsed once at start-up: each gets a short id the first time it
  // is seen (its text would make every key hundreds of characters long).
  const plans = new WeakMap<DocumentNode, DocumentPlan>();
  let documents = 0;
  let generation = 0;
  let hits = 0;
  let stored = 0;

  function keyOf(document: DocumentNode, variables: Readonly<Record<string, unknown>> | null | undefined, context: Context): { key: string; ttlMs: number } {
    let plan = plans.get(document);
    if (plan === undefined) {
      plan = planOf(document, `d${(documents += 1)}`);
      plans.set(document, plan);
    }
    return { key: `${accessLevel(context.principal)}\n${variableKey(variables)}\n${plan.id}`, ttlMs: plan.ttlMs };
  }

  const plugin: Plugin = {
    onExecute({ args, executeFn, setExecuteFn, setResultAndStopExecution }) {
      const context = args.contextValue as unknown as Context;
      if (context.cachedRead !== true) return;
      const { key, ttlMs } = keyOf(args.document, args.variableValues as Record<string, unknown> | undefined, context);
      const found = store.get(key);
      if (found !== undefined) {
        hits += 1;
        setResultAndStopExecution(found);
        return;
      }
      const pending = inFlight.get(key);
      if (pending) {
        // Join the execution under way; should it throw, run this one on its own.
        return pending.then(
          (result) => {
            hits += 1;
            setResultAndStopExecution(result);
          },
          () => undefined,
        );
      }
      const startedIn = generation;
      let settle!: { resolve: (result: ExecutionResult) => void; reject: (error: unknown) => void };
      const shared = new Promise<ExecutionResult>((resolve, reject) => (settle = { resolve, reject }));
      shared.catch(() => undefined);
      inFlight.set(key, shared);
      let settled = false;
      const finish = (outcome: { result: unknown } | { error: unknown }) => {
        if (settled) return;
        settled = true;
        if (inFlight.get(key) === shared) inFlight.delete(key);
        if ('error' in outcome) return settle.reject(outcome.error);
        const { result } = outcome;
        if (!isResult(result)) return settle.reject(new Error('a stream is not cached'));
        // Errors (a tier refusal, a bad parameter, an outage) are answered, never kept.
        if (startedIn === generation && (result.errors === undefined || result.errors.length === 0)) {
          stored += 1;
          store.set(key, result, { ttl: ttlMs });
        }
        settle.resolve(result);
      };
      setExecuteFn(async (executeArgs) => {
        try {
          const result = await executeFn(executeArgs);
          finish({ result });
          return result;
        } catch (error) {
          finish({ error });
          throw error;
        }
      });
      // Should a later plugin answer without executing, its answer settles the waiters.
      return { onExecuteDone: ({ result }) => finish({ result }) };
    },
  };

  return {
    plugin,
    invalidate() {
      generation += 1;
      store.clear();
      // Requests arriving from now on must not join an execution that may predate the change.
      inFlight.clear();
    },
    stats: () => ({ hits, stored }),
  };
}
