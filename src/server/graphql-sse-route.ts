/**
 * GraphQL subscriptions over Server-Sent Events at /graphql/stream (graphql-sse), in both
 * its distinct-connections and single-connection modes. The context is built by the same
 * function as /graphql, so a subscription is authenticated, counted and tier-checked exactly
 * like a query; a refused request answers with its status and a GraphQL error body.
 */
import type { FastifyInstance } from 'fastify';
import { GraphQLError } from 'graphql';
import type { FastifyReply, FastifyRequest } from 'fastify';
import { createHandler } from 'graphql-sse';
import type { Context } from '../graphql/context.js';
import { getSchema } from '../graphql/schema.js';
import { assertRequestLimits, guardedValidate } from '../graphql/limits.js';
import { buildContext, toPublicGraphQLError } from '../graphql/yoga.js';
import type { Services } from '../services/index.js';
import { rateLimitHeaders } from './rate-limit-headers.js';

export const GRAPHQL_SSE_PATH = '/graphql/stream';

export function registerGraphQLSseRoute(
  app: FastifyInstance,
  services: Services,
  options: { now: () => number; logUnexpected: (error: unknown) => void; introspection: boolean },
): void {
  type SseContext = Context & Record<PropertyKey, unknown>;
  const handler = createHandler<FastifyRequest, { reply: FastifyReply }, SseContext>({
    schema: getSchema(),
    // The limits and introspection policy of /graphql (src/graphql/limits.ts): every limit
    // (the cost with the variables) before graphql-sse builds the context, so a refused
    // document is not counted; the introspection policy with validation. A refusal is thrown:
    // 400 query_too_complex.
    onSubscribe: (_req, params) => assertRequestLimits(getSchema(), params),
    validate: guardedValidate({ introspection: options.introspection }),
    context: async (req) => (await buildContext(services, req.raw)) as SseContext,
    onNext: (_context, _req, result) => {
      if (!result.errors) return;
      return { ...result, errors: result.errors.map((error) => toPublicGraphQLError(error, options.logUnexpected)) };
    },
  });

  /**
   * graphql-sse's own Fastify adapter reports an absent header as the string "undefined",
   * which puts every distinct-connection client on one shared single-connection token.
   * This adapter passes absent headers as null.
   */
  const openStreams = new Set<FastifyReply['raw']>();
  // SIGTERM: end open event streams so the server can drain.
  app.addHook('preClose', async () => {
    for (const raw of openStreams) raw.end();
  });

  async function serve(req: FastifyRequest, reply: FastifyReply): Promise<void> {
    const [body, init] = await handler({
      method: req.method,
      url: req.url,
      headers: {
        get: (key: string) => {
          const value = req.headers[key.toLowerCase()];
          if (value === undefined) return null;
          return Array.isArray(value) ? value.join('\n') : String(value);
        },
      },
      body: () => Promise.resolve((req.body as string | Record<string, unknown> | undefined) ?? ''),
      raw: req,
      context: { reply },
    });
    reply.hijack();
    reply.raw.writeHead(init.status, init.statusText, { ...init.headers, 'x-request-id': String(req.id) });
    if (!body || typeof body === 'string') {
      reply.raw.end(body ?? undefined);
      return;
    }
    openStreams.add(reply.raw);
    reply.raw.once('close', () => {
      openStreams.delete(reply.raw);
      void body.return(undefined);
    });
    for await (const chunk of body) {
      if (!reply.raw.writable) break;
      reply.raw.write(chunk);
    }
    openStreams.delete(reply.raw);
    reply.raw.end();
  }

  app.route({
    method: ['GET', 'POST', 'PUT', 'DELETE'],
    url: GRAPHQL_SSE_PATH,
    schema: { hide: true },
    handler: async (req, reply) => {
      try {
        await serve(req, reply);
      } catch (error) {
        if (reply.raw.headersSent) {
          reply.raw.end();
          return;
        }
        const refused = error instanceof GraphQLError && typeof error.extensions.code === 'string';
        const body = toPublicGraphQLError(error, options.logUnexpected);
        const { http, ...extensions } = body.extensions as Record<string, unknown>;
        // A refusal carries its status; so does a database outage (503), recognised by toPublicGraphQLError.
        const status = (http as { status?: number } | undefined)?.status ?? (refused ? 400 : 500);
        reply.raw.writeHead(status, {
          'content-type': 'application/json; charset=utf-8',
          'x-request-id': String(req.id),
          ...(req.rateLimit ? rateLimitHeaders(req.rateLimit, options.now()) : {}),
        });
        reply.raw.end(JSON.stringify({ errors: [{ message: body.message, extensions }] }));
      }
    },
  });
}
