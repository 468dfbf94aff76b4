/**
 * Registers the /api/v1 REST routes: HTTP request -> variables, GraphQL result -> the
 * documented JSON; errors leave through src/server/http-errors.ts. JSON 405 with Allow for known
 * paths and other methods. No CORS on /api/v1 (server-to-server API keys).
 *
 * Request bodies are read by the content-type parsers of this plugin's scope but judged in
 * the handler, so a body that is not JSON gets its 400 after 401 -> 429 -> 403 like any
 * parameter of the wrong form (check order: docs/DECISIONS.md), and counts one unit. Only an oversized
 * body (413) or a broken Content-Length is refused before authentication: it is never read.
 * A Content-Type that is not a media type at all, which Fastify refuses before any parser,
 * is judged in the handler the same way (judgeUnparsableContentType).
 */
import type { FastifyError, FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { GraphQLError, type GraphQLSchema } from 'graphql';
import { AppError, ErrorCode, isAppError, NotFoundError } from '../../src/domain/errors.js';
import type { Yoga } from '../../src/graphql/yoga.js';
import { BODY_ERROR_MESSAGES, sendGraphQLError } from '../../src/server/http-errors.js';
import { registerMethodNotAllowed } from '../common/method-not-allowed.js';
import { openOperation, prepareOperation } from '../common/operations.js';
import { inRestNames, parseParams, type ParsedParams } from '../common/params.js';
import { openApiRouteSchema } from '../common/openapi.js';
import { assertCacheableRead, createReadCaches, type ReadCaches, type ReadRefusal } from './read-cache.js';
import { REST_ROUTES, type RestRoute } from './routes.js';
import { USAGE_ROUTE, type UsageMeteredRoute } from './usage-route.js';
import { WEBHOOK_ROUTES } from './webhook-routes.js';
import { STREAM_TOKEN_ROUTES } from './stream-token-routes.js';

/** Every method a client may send to a path that does not exist. */
const UNKNOWN_PATH_METHODS = ['GET', 'HEAD', 'POST', 'PUT', 'PATCH', 'DELETE', 'OPTIONS'];

export const ALL_REST_ROUTES: readonly RestRoute[] = [...REST_ROUTES, USAGE_ROUTE, ...WEBHOOK_ROUTES, ...STREAM_TOKEN_ROUTES];

/** GET /api/v1/usage is counted against its own window, not the key's limits (usage-route.ts). */
function countedAsUsageRead(route: RestRoute): boolean {
  return (route as Partial<UsageMeteredRoute>).usageEndpoint === true;
}

/** What this scope's content-type parsers hand to the handler: read, not yet judged. */
class JsonBody {
  constructor(readonly value: unknown) {}
}
class UnreadableBody {
  constructor(readonly message: string) {}
}

function deferBodyParsing(scope: FastifyInstance): void {
  // Fastify's own JSON parser (prototype-poisoning protection included), without its throw.
  const parseJson = scope.getDefaultJsonParser('error', 'error');
  scope.removeAllContentTypeParsers();
  scope.addContentTypeParser('application/json', { parseAs: 'string' }, (req, text, done) => {
    // An empty body with Content-Type application/json is no body (a common client default).
    if ((text as string).trim() === '') return done(null, undefined);
    parseJson(req, text as string, (error, value) => done(null, error ? new UnreadableBody(BODY_ERROR_MESSAGES.notJson) : new JsonBody(value)));
  });
  scope.addContentTypeParser('*', { parseAs: 'buffer' }, (_req, buffer, done) =>
    done(null, (buffer as Buffer).length === 0 ? undefined : new UnreadableBody(BODY_ERROR_MESSAGES.unsupportedContentType)),
  );
}

/** Whether a request carries a body, as Fastify decides before choosing a parser. */
function bodySent(req: FastifyRequest): boolean {
  const length = req.headers['content-length'];
  return req.headers['transfer-encoding'] !== undefined || (length !== undefined && length !== '0');
}

/**
 * A Content-Type that is not a media type (`foo`, `/;;`) is refused by Fastify itself, before
 * any parser of this scope and so before authentication (FST_ERR_CTP_INVALID_MEDIA_TYPE). To
 * this API it is one more Content-Type it does not read: the route's handler runs with the body
 * unread, as the catch-all parser would have left it, so it is judged after 401 -> 429 -> 403
 * and counted like any unreadable body. Every other error goes on to the app's error exit.
 */
function judgeUnparsableContentType(this: FastifyInstance, error: FastifyError, req: FastifyRequest, reply: FastifyReply): unknown {
  if (error.code !== 'FST_ERR_CTP_INVALID_MEDIA_TYPE') throw error;
  req.body = bodySent(req) ? new UnreadableBody(BODY_ERROR_MESSAGES.unsupportedContentType) : undefined;
  return req.routeOptions.handler.call(this, req, reply);
}

/**
 * The checks of a request under /api/v1 that no route answers: an unknown path (below), or a
 * path Fastify's router refused (src/server/framework-errors.ts). A refused credential is 401,
 * a key over its limits 429; else null, and a valid key has been counted one unit (its decision
 * is on the request, for the rate-limit headers). A request without credentials is not counted.
 */
export async function admitUnroutedRequest(yoga: Yoga, req: FastifyRequest, reply: FastifyReply): Promise<GraphQLError | null> {
  const runner = await openOperation(yoga, { req, reply, customerApi: true });
  return runner instanceof GraphQLError ? runner : null;
}

/** Query and path parameters, then the JSON body: the variables, or the first error of form. */
function readRequest(route: RestRoute, req: FastifyRequest): ParsedParams | { variables: Record<string, unknown>; error: AppError } {
  const parsed = parseParams(route.params, req.query as Record<string, unknown>, req.params as Record<string, unknown>);
  if (parsed.error || !route.body) return parsed;
  const raw = req.body;
  try {
    if (raw instanceof UnreadableBody) throw new AppError(ErrorCode.invalidRequest, raw.message);
    if (raw === undefined && route.body.optional) return { variables: { ...parsed.variables, ...route.body.toVariables({}) }, error: null };
    if (!(raw instanceof JsonBody)) throw new AppError(ErrorCode.invalidRequest, 'A JSON object body is required (Content-Type: application/json).');
    const value = raw.value;
    if (typeof value !== 'object' || value === null || Array.isArray(value)) {
      throw new AppError(ErrorCode.invalidRequest, 'The request body must be a JSON object.');
    }
    return { variables: { ...parsed.variables, ...route.body.toVariables(value as Record<string, unknown>) }, error: null };
  } catch (error) {
    if (isAppError(error)) return { variables: parsed.variables, error };
    throw error;
  }
}

const JSON_CONTENT_TYPE = 'application/json; charset=utf-8';

/** The methods of each path, so a 405 lists all of them in Allow. */
function methodsByUrl(routes: readonly RestRoute[]): Map<string, string[]> {
  const byUrl = new Map<string, string[]>();
  for (const route of routes) byUrl.set(route.url, [...(byUrl.get(route.url) ?? []), route.method]);
  return byUrl;
}

/** Sets the success answer's declared constant headers (Cache-Control: no-store on a secret). */
function setSuccessHeaders(reply: FastifyReply, route: RestRoute): FastifyReply {
  for (const [name, spec] of Object.entries(route.successHeaders ?? {})) {
    const value = (spec.schema as { const?: unknown }).const;
    if (typeof value === 'string') reply.header(name, value);
  }
  return reply.status(route.successStatus ?? 200);
}

/** Registers the routes; what it returns drops the cached reads (call it on every change an answer can show). */
export function registerRestRoutes(app: FastifyInstance, yoga: Yoga, schema: GraphQLSchema, routes: readonly RestRoute[] = ALL_REST_ROUTES): ReadCaches {
  const readCaches = createReadCaches();
  for (const route of routes) assertCacheableRead(route);
  // Prepared now: a document that does not validate stops start-up.
  const prepared = routes.map((route) => ({
    route,
    operation: prepareOperation(schema, route.document),
    cache: route.cacheTtlMs === undefined ? null : readCaches.forRoute(route.cacheTtlMs),
  }));
  void app.register(async (scope) => {
    deferBodyParsing(scope);
    scope.setErrorHandler(judgeUnparsableContentType);
    for (const { route, operation, cache } of prepared) {
      scope.route({
        method: route.method,
        url: route.url,
        schema: openApiRouteSchema(route),
        handler: async (req, reply) => {
          const form = readRequest(route, req);
          const runner = await openOperation(yoga, { req, reply, customerApi: true, ...(countedAsUsageRead(route) ? { usageEndpoint: true } : {}) });
          if (runner instanceof GraphQLError) return sendGraphQLError(reply, runner);
          if (form.error || cache !== null) {
            // Check order (docs/DECISIONS.md): 401 -> 429 -> 403 -> 400. A field of the route's
            // document the caller may not use is refused first, as its execution would be; and
            // a caller refused never reaches the cache of answers.
            const denied = runner.accessRefusal(operation);
            if (denied) return sendGraphQLError(reply, denied);
            // Thrown errors leave through the one error exit (src/server/http-errors.ts).
            if (form.error) throw form.error;
          }
          const run = async (): Promise<{ body: unknown } | { error: ReadRefusal }> => {
            const result = await runner.execute(operation, form.variables);
            const firstError = result.errors?.[0];
            if (firstError || !result.data) return { error: firstError ? inRestNames(firstError, route.params) : { message: 'No data', extensions: {} } };
            // toBody may throw a documented error (a 404): it leaves through the error exit.
            return { body: route.toBody(result.data) };
          };
          if (cache === null) {
            const answer = await run();
            if ('error' in answer) return sendGraphQLError(reply, answer.error);
            setSuccessHeaders(reply, route);
            return route.successStatus === 204 ? reply.send() : reply.send(answer.body);
          }
          const answer = await cache.read(runner.context.principal, form.variables, async () => {
            try {
              const ran = await run();
              // As send() serialises every route's object (adapters/common/openapi.ts: JSON.stringify).
              return 'error' in ran ? ran : { bytes: Buffer.from(JSON.stringify(ran.body), 'utf8') };
            } catch (error) {
              if (isAppError(error)) return { routeAnswer: error };
              throw error;
            }
          });
          if ('error' in answer) return sendGraphQLError(reply, answer.error);
          if ('routeAnswer' in answer) throw answer.routeAnswer;
          return setSuccessHeaders(reply, route).type(JSON_CONTENT_TYPE).send(answer.bytes);
        },
      });
    }
    for (const [url, methods] of methodsByUrl(routes)) registerMethodNotAllowed(scope, url, methods);
    // Unknown /api/v1 paths (find-my-way prefers every static and parametric route to a
    // wildcard): 404 not_found after the usual checks, so a request with a key is checked and
    // counted like any other and carries the rate-limit headers (docs/DECISIONS.md).
    for (const url of ['/api/v1', '/api/v1/*']) {
      scope.route({
        method: UNKNOWN_PATH_METHODS,
        url,
        exposeHeadRoute: false,
        schema: { hide: true },
        handler: async (req, reply) => {
          const refused = await admitUnroutedRequest(yoga, req, reply);
          if (refused) return sendGraphQLError(reply, refused);
          throw new NotFoundError(`No route for ${req.method} ${req.url.split('?')[0]}.`);
        },
      });
    }
  });
  return readCaches;
}
