import type { FastifyInstance } from 'fastify';
import type { Yoga } from '../graphql/yoga.js';
import { GRAPHQL_BODY_LIMIT_BYTES } from './http-limits.js';

/** Mounts yoga at /graphql inside Fastify, sharing Fastify's parsed body, request id and logging. */
export function registerGraphQLRoute(app: FastifyInstance, yoga: Yoga): void {
  app.route({
    url: yoga.graphqlEndpoint,
    method: ['GET', 'POST', 'OPTIONS'],
    schema: { hide: true },
    bodyLimit: GRAPHQL_BODY_LIMIT_BYTES,
    handler: async (req, reply) => {
      const response = await yoga.handleNodeRequestAndResponse(req, reply, { req, reply });
      response.headers.forEach((value, key) => {
        reply.header(key, value);
      });
      reply.status(response.status);
      reply.send(response.body);
      return reply;
    },
  });
}
