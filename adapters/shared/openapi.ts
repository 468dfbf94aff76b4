/**
 * The OpenAPI 3.1 document is generated from the route definitions by @fastify/swagger.
 * Route schemas are documentation only: requests are validated by the services behind
 * GraphQL (so errors keep the documented codes and check order), and responses are
 * serialised with JSON.stringify; tests validate real responses against the document.
 */
import type { FastifyInstance, RouteShorthandOptions } from 'fastify';
import swagger from '@fastify/swagger';
import type { ParamSpec } from './params.js';
import { errorSchema } from './schemas.js';

export interface DocumentedRoute {
  operationId: string;
  summary: string;
  description: string;
  params: readonly ParamSpec[];
  /** A JSON request body (Content-Type: application/json): its schema, for the document. */
  body?: { schema: object };
  responseSchema: object;
  successStatus?: number;
  errors: readonly number[];
  tags?: string[];
  anonymous?: boolean;
}

function paramSchema(spec: ParamSpec): object {
  const base = { description: spec.description };
  if (spec.type === 'integer') return { ...base, type: 'integer', minimum: spec.minimum, maximum: spec.maximum, default: spec.default };
  return { ...base, type: 'string', ...(spec.format ? { format: spec.format } : {}), ...(spec.enum ? { enum: [...spec.enum] } : {}) };
}

function objectOf(specs: readonly ParamSpec[]): object | undefined {
  if (specs.length === 0) return undefined;
  return {
    type: 'object',
    properties: Object.fromEntries(specs.map((spec) => [spec.name, paramSchema(spec)])),
    required: specs.filter((spec) => spec.required).map((spec) => spec.name),
  };
}

const passThroughValidator = () => () => true;
const plainSerializer = () => (data: unknown) => JSON.stringify(data);

export function openApiRouteSchema(route: DocumentedRoute): RouteShorthandOptions['schema'] {
  const response: Record<string, object> = { [route.successStatus ?? 200]: route.responseSchema };
  for (const status of route.errors) response[status] = errorSchema;
  const querystring = objectOf(route.params.filter((spec) => spec.in === 'query'));
  const params = objectOf(route.params.filter((spec) => spec.in === 'path'));
  return {
    operationId: route.operationId,
    summary: route.summary,
    description: route.description,
    tags: route.tags ?? ['v1'],
    ...(route.anonymous ? {} : { security: [{ bearerAuth: [] }] }),
    ...(querystring ? { querystring } : {}),
    ...(params ? { params } : {}),
    ...(route.body ? { body: route.body.schema } : {}),
    response,
  } as RouteShorthandOptions['schema'];
}

/** Registers @fastify/swagger; must run before the documented routes are added. */
export async function registerOpenApi(app: FastifyInstance): Promise<void> {
  app.setValidatorCompiler(passThroughValidator);
  app.setSerializerCompiler(plainSerializer);
  await app.register(swagger, {
    openapi: {
      openapi: '3.1.0',
      info: {
        title: 'Sports-Betting Picks Service API',
        version: '1.0.0',
        description: 'Decisions the contract leaves open (check order, cursors, limits): docs/DECISIONS.md in the repository. Every /api/v1 response to a valid key carries X-RateLimit-Limit, X-RateLimit-Remaining and X-RateLimit-Reset; 429 responses carry Retry-After.',
      },
      components: { securitySchemes: { bearerAuth: { type: 'http', scheme: 'bearer', description: 'service_ followed by 64 lowercase hex characters' } } },
    },
  });
  app.get('/api/v1/openapi.json', { schema: { hide: true } }, async () => app.swagger());
}
