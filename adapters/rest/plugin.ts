/**
 * Registers the /api/v1 REST routes: HTTP request -> variables, GraphQL result -> the
 * documented JSON, extensions.code -> status and error body. JSON 405 with Allow for known
 * paths and other methods. No CORS on /api/v1 (server-to-server API keys).
 */
import type { FastifyInstance } from 'fastify';
import { GraphQLError, type GraphQLSchema } from 'graphql';
import { ErrorCode, isAppError } from '../../src/domain/errors.js';
import { assertTier } from '../../src/graphql/builder.js';
import type { Yoga } from '../../src/graphql/yoga.js';
import { sendError } from '../../src/server/errors.js';
import { sendGraphQLError } from '../shared/http-errors.js';
import { openOperation, prepareOperation } from '../shared/operations.js';
import { parseParams } from '../shared/params.js';
import { openApiRouteSchema } from '../shared/openapi.js';
import { REST_ROUTES, type RestRoute } from './routes.js';

const ALL_METHODS = ['GET', 'HEAD', 'POST', 'PUT', 'PATCH', 'DELETE', 'OPTIONS'] as const;

export function registerMethodNotAllowed(app: FastifyInstance, url: string, allowed: readonly string[]): void {
  const allow = [...new Set([...allowed, ...(allowed.includes('GET') ? ['HEAD'] : [])])];
  const others = ALL_METHODS.filter((method) => !allow.includes(method));
  app.route({
    method: others,
    url,
    schema: { hide: true },
    handler: (req, reply) =>
      sendError(reply.header('allow', allow.join(', ')), ErrorCode.methodNotAllowed, `${req.method} is not allowed here; use ${allow.join(', ')}.`),
  });
}

export function registerRestRoutes(app: FastifyInstance, yoga: Yoga, schema: GraphQLSchema, routes: readonly RestRoute[] = REST_ROUTES): void {
  for (const route of routes) {
    const operation = prepareOperation(schema, route.documentFile, route.operationName);
    app.route({
      method: route.method,
      url: route.url,
      schema: openApiRouteSchema(route),
      handler: async (req, reply) => {
        const parsed = parseParams(route.params, req.query as Record<string, unknown>, req.params as Record<string, unknown>);
        const runner = await openOperation(yoga, { req, reply });
        if (runner instanceof GraphQLError) return sendGraphQLError(reply, runner);
        if (parsed.error) {
          // Check order (DESIGN section 3): 401 -> 429 -> 403 -> 400.
          try {
            assertTier(runner.context.principal, route.minimumTier);
          } catch (error) {
            if (isAppError(error)) return sendError(reply, error.code, error.message, error.extras);
            throw error;
          }
          return sendError(reply, parsed.error.code, parsed.error.message, parsed.error.extras);
        }
        const result = await runner.execute(operation, parsed.variables);
        const firstError = result.errors?.[0];
        if (firstError || !result.data) return sendGraphQLError(reply, firstError ?? { message: 'No data', extensions: {} });
        try {
          return reply.status(200).send(route.toBody(result.data as Record<string, unknown>));
        } catch (error) {
          if (isAppError(error)) return sendError(reply, error.code, error.message, error.extras);
          throw error;
        }
      },
    });
    registerMethodNotAllowed(app, route.url, [route.method]);
  }
}
