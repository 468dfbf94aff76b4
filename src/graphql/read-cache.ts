/**
 * The read cache of the REST adapters' documents, at the execution layer: @envelop/response-cache
 * keeps each result keyed by document, variables and access level, so a hit runs no resolver
 * and no database query, while the request's context (API-key lookup, limiter, tier) is still
 * built for every request before it (a refused request never reaches execution).
 *
 * Only operations run by the adapters with a cacheable document are cached (the context flag
 * `cachedRead`, set by adapters/common/operations.ts); /graphql, subscriptions and mutations
 * are never cached. Any change that can alter a cached answer (a pick published, held,
 * approved or settled, an analysis written) drops every entry on every instance: the instance
 * that made the change at once, the others when the bus message arrives (src/runtime.ts). The
 * TTLs bound what a lost message could leave stale. docs/DECISIONS.md, "Read cache".
 */
import { useResponseCache, type Cache } from '@envelop/response-cache';
import type { ExecutionResult } from 'graphql';
import { LRUCache } from 'lru-cache';
import type { DocumentNode } from 'graphql';
import type { Plugin } from 'graphql-yoga';
import type { Principal } from '../domain/principal.js';
import type { Context } from './context.js';

/**
 * How long a cached answer may live at most, per root field (ms). The list keeps the 2 s its
 * page cache always had; the track record and analyses change only with settlements and
 * writes, which invalidate them, so the bound is only for a lost bus message.
 */
export const READ_CACHE_TTL_MS = {
  'Query.picks': 2_000,
  'Query.trackRecord': 5_000,
  'Query.matchAnalysis': 5_000,
} as const;

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
  /** Answers served from the cache and executions stored in it since start (operations, tests, bench). */
  stats(): { hits: number; stored: number };
}

/**
 * The store behind the plugin: an LRU of results with each entry's TTL, dropped whole on
 * invalidation, plus a generation check: an execution that began before an invalidation may
 * have read the old data, so its result is not stored. (The library's own in-memory store also
 * indexes every entity of every answer for invalidation by id, which is never used here:
 * answers without ids, such as a track record, could not be reached that way.)
 */
function generationGuardedCache(): { cache: Cache; invalidate(): void; stats(): { hits: number; stored: number } } {
  const store = new LRUCache<string, ExecutionResult>({ max: READ_CACHE_MAX_ENTRIES });
  const missedIn = new Map<string, number>();
  let generation = 0;
  let hits = 0;
  let stored = 0;
  const cache: Cache = {
    get(key) {
      const found = store.get(key);
      if (found !== undefined) {
        hits += 1;
        return found;
      }
      // The earliest outstanding miss of a key decides: its data is the oldest. Misses that never
      // store (errors) leave their entry behind; the map is bounded by forgetting them all.
      if (missedIn.size >= READ_CACHE_MAX_ENTRIES * 4) missedIn.clear();
      if (!missedIn.has(key)) missedIn.set(key, generation);
      return null;
    },
    set(key, result, _entities, ttl) {
      const startedIn = missedIn.get(key);
      missedIn.delete(key);
      // Unknown start (forgotten, or another miss of the key stored first): not stored.
      if (startedIn !== generation) return;
      stored += 1;
      store.set(key, result, { ttl: Number.isFinite(ttl) && ttl > 0 ? ttl : FALLBACK_TTL_MS });
    },
    // Never asked: invalidateViaMutation is off; every change drops everything (invalidate()).
    invalidate: () => undefined,
  };
  return {
    cache,
    invalidate() {
      generation += 1;
      store.clear();
      missedIn.clear();
    },
    stats: () => ({ hits, stored }),
  };
}

export function createReadCache(): ReadCache {
  const { cache, invalidate, stats } = generationGuardedCache();
  // The adapters' documents are parsed once at start-up: each gets a short id the first time it
  // is seen (its text would make every key hundreds of characters long).
  const documentIds = new WeakMap<DocumentNode, string>();
  const documentId = (document: DocumentNode) => {
    let id = documentIds.get(document);
    if (id === undefined) {
      id = `d${(documentCount += 1)}`;
      documentIds.set(document, id);
    }
    return id;
  };
  let documentCount = 0;
  const plugin = useResponseCache<Context>({
    cache,
    enabled: (context) => context.cachedRead === true,
    session: (context) => accessLevel(context.principal),
    ttlPerSchemaCoordinate: READ_CACHE_TTL_MS,
    // Mutations never run with the cache enabled; changes invalidate through invalidate().
    invalidateViaMutation: false,
    getDocumentString: (args) => documentId(args.document),
    // Plain string keys: the LRU holds a few thousand of them, hashing would only cost CPU.
    buildResponseCacheKey: ({ documentString, variableValues, sessionId }) =>
      `${sessionId}\n${variableKey(variableValues)}\n${documentString}`,
    // Errors (a tier refusal, a bad parameter, an outage) are answered, never kept.
    shouldCacheResult: ({ result }) => result.errors === undefined || result.errors.length === 0,
    includeExtensionMetadata: false,
  }) as Plugin;
  return { plugin, invalidate, stats };
}

/** Variables in a key that does not depend on the order they were set in. */
function variableKey(variables: Record<string, unknown> | null | undefined): string {
  if (!variables) return '{}';
  const names = Object.keys(variables).sort();
  return JSON.stringify(names.map((name) => [name, variables[name]]));
}
