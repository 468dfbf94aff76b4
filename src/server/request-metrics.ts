/**
 * picks_http_requests_total and picks_http_request_duration_seconds: one onResponse hook for
 * every request. Labels are bounded: the route template Fastify matched (`unmatched` when none
 * did), the method (`other` beyond the usual ones), the surface the template belongs to, each
 * worked out once per template and method and kept with its series, counted in plain numbers
 * (src/services/metrics/request-tally.ts).
 */
import type { FastifyInstance, FastifyRequest, onRequestHookHandler } from 'fastify';
import { HTTP_METHODS, type HttpSurface } from '../services/metrics/catalog.js';
import type { ServiceMetrics } from '../services/metrics/metrics.js';
import type { RouteTally } from '../services/metrics/request-tally.js';

const UNMATCHED = 'unmatched';
const KNOWN_METHODS: ReadonlySet<string> = new Set(HTTP_METHODS);
const STREAM_ROUTES: ReadonlySet<string> = new Set(['/api/v1/picks/stream', '/api/public/picks/stream', '/graphql/stream', '/graphql/ws']);

/** The surface of a route template (or, for a request no route took, of its path). */
export function surfaceOf(path: string): HttpSurface {
  if (STREAM_ROUTES.has(path)) return 'stream';
  if (path.startsWith('/api/public/')) return 'public';
  if (path.startsWith('/api/')) return 'rest';
  if (path === '/graphql' || path.startsWith('/graphql/')) return 'graphql';
  if (path === '/dashboard' || path.startsWith('/dashboard/')) return 'dashboard';
  return 'pages';
}

export function registerRequestMetrics(app: FastifyInstance, metrics: ServiceMetrics): void {
  const series = new Map<string, RouteTally>();
  const seriesOf = (req: FastifyRequest): RouteTally => {
    const template = req.routeOptions.url;
    const method = KNOWN_METHODS.has(req.method) ? req.method : 'other';
    // A path no route took is labelled by its surface alone: raw paths are unbounded.
    const unmatchedSurface = template === undefined ? surfaceOf(req.url.split('?')[0]!) : null;
    const key = `${method} ${template ?? `${UNMATCHED} ${unmatchedSurface}`}`;
    let found = series.get(key);
    if (!found) {
      const surface = unmatchedSurface ?? surfaceOf(template!);
      found = metrics.http.route({ surface, route: template ?? UNMATCHED, method }, surface !== 'stream');
      series.set(key, found);
    }
    return found;
  };
  // The stream routes hand their responses over (hijack), so Fastify's onResponse never runs
  // for them: they are counted when their connection closes. A hook of those routes alone:
  // every other request is spared it. A request answered before it ran (the drain's 503, a
  // refused request) is counted by onResponse like any other.
  const countedAtClose = new WeakSet<FastifyRequest>();
  const countAtClose: onRequestHookHandler = (req, reply, done) => {
    countedAtClose.add(req);
    reply.raw.once('close', () => seriesOf(req).answered(reply.raw.statusCode));
    done();
  };
  app.addHook('onRoute', (route) => {
    if (!STREAM_ROUTES.has(route.url)) return;
    const existing = route.onRequest === undefined ? [] : Array.isArray(route.onRequest) ? route.onRequest : [route.onRequest];
    route.onRequest = [countAtClose, ...existing];
  });
  app.addHook('onResponse', (req, reply, done) => {
    if (!countedAtClose.has(req)) {
      const route = seriesOf(req);
      route.answered(reply.statusCode);
      // An event stream's time is its life, not a latency (yoga's SSE shares /graphql with
      // queries); stream routes keep no latencies at all.
      if (!String(reply.getHeader('content-type') ?? '').startsWith('text/event-stream')) route.took(reply.elapsedTime / 1000);
    }
    done();
  });
}
