/**
 * The REST reads' cache of their answers: for each route whose table entry declares
 * `cacheTtlMs`, the rendered body of a successful answer is kept, keyed by the caller's access
 * level (src/domain/principal.ts) and the route's variables, so a hit runs no resolver, no
 * database query and no serialisation. The request's context (API-key lookup, limiter, tier) is
 * still built before every read, so a refused request never reaches it. Misses of one key at
 * the same time share one execution (single flight). Errors of the execution (an outage) are
 * answered and never kept.
 *
 * Any change that can alter an answer (a pick published, held, approved or settled, an
 * analysis written) drops every entry on every instance: the instance that made it at once,
 * the others when the bus message arrives (src/app.ts, onVisibilityChange). A read that began
 * before such a change may have seen the old data: it is answered but not kept. The TTLs bound
 * what a lost message could leave stale.
 *
 * The cache belongs to this adapter, not to the GraphQL layer: /graphql, subscriptions and
 * mutations never meet it. Purpose-built rather than @envelop/response-cache: that library also
 * walks every result to index its entities for invalidation by id, which this service never
 * uses (every change drops everything), and that walk was a quarter of the CPU of a miss.
 */
import type { GraphQLError } from 'graphql';
import type { AppError } from '../../src/domain/errors.js';
import { accessLevelOf, type Principal } from '../../src/domain/principal.js';
import { SingleFlightCache } from '../common/single-flight-cache.js';

declare module 'fastify' {
  interface FastifyInstance {
    readCacheStats: () => { hits: number; stored: number };
  }
}

/**
 * A read's outcome: the bytes of its success body; the documented answer the route made of the
 * data instead (a 404 for an analysis that does not exist), kept like a body since it changes
 * only with the data; or the GraphQL error of the execution (an outage, a refusal), never kept.
 */
export type ReadAnswer = { bytes: Buffer } | { routeAnswer: AppError } | { error: ReadRefusal };
export type ReadRefusal = Pick<GraphQLError, 'message' | 'extensions'>;

/**
 * Answers kept per cached route at most (least recently used beyond): a page of 50 picks is
 * about 50 KB, so at most about 25 MB for the list.
 */
const ANSWERS_PER_ROUTE = 500;

/** Variables in a key that does not depend on the order they were set in. */
function variableKey(variables: Readonly<Record<string, unknown>>): string {
  const names = Object.keys(variables).sort();
  return JSON.stringify(names.map((name) => [name, variables[name]]));
}

/** The key of a read: who may see the answer, and what was asked. */
export function readKey(principal: Principal, variables: Readonly<Record<string, unknown>>): string {
  return `${accessLevelOf(principal)}\n${variableKey(variables)}`;
}

/**
 * Refuses (at start-up) a route declaring cacheTtlMs whose answer must not be shared between the
 * callers of an access level: a write, a 204, or an answer with headers of its own (a secret
 * shown once is Cache-Control: no-store).
 */
export function assertCacheableRead(route: { operationId: string; method: string; cacheTtlMs?: number; successStatus?: number; successHeaders?: object }): void {
  if (route.cacheTtlMs === undefined) return;
  if (route.method !== 'GET' || route.successStatus === 204 || route.successHeaders !== undefined) {
    throw new Error(`${route.operationId}: only a GET answering a body without headers of its own may declare cacheTtlMs`);
  }
}

export interface RouteReadCache {
  read(principal: Principal, variables: Readonly<Record<string, unknown>>, load: () => Promise<ReadAnswer>): Promise<ReadAnswer>;
}

export interface ReadCaches {
  /** The cache of one route, kept at most ttlMs per answer. */
  forRoute(ttlMs: number): RouteReadCache;
  /** Drops every kept answer of this instance. */
  invalidate(): void;
  /** Reads answered without an execution of their own, and answers kept, since start (operations, tests, bench). */
  stats(): { hits: number; stored: number };
}

export function createReadCaches(): ReadCaches {
  const caches: SingleFlightCache<ReadAnswer>[] = [];
  return {
    forRoute(ttlMs) {
      const cache = new SingleFlightCache<ReadAnswer>({ max: ANSWERS_PER_ROUTE, ttlMs, cacheable: (answer) => !('error' in answer) });
      caches.push(cache);
      return { read: (principal, variables, load) => cache.get(readKey(principal, variables), load) };
    },
    invalidate() {
      for (const cache of caches) cache.invalidate();
    },
    stats() {
      const total = { hits: 0, stored: 0 };
      for (const cache of caches) {
        const { hits, stored } = cache.stats();
        total.hits += hits;
        total.stored += stored;
      }
      return total;
    },
  };
}
