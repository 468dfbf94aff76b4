import type { FastifyInstance } from 'fastify';
import type { Yoga } from '../graphql/yoga.js';
import { GRAPHQL_BODY_LIMIT_BYTES } from './http-limits.js';

/**
 * Mounts yoga at /graphql inside Fastify, sharing Fastify's parsed body, request id and logging.
 * yoga's own event streams (subscriptions with Accept: text/event-stream) are ended on SIGTERM
 * like the other streams, so the drain does not wait for them.
 */
export function registerGraphQLRoute(app: FastifyInstance, yoga: Yoga): { openStreams(): number } {
  const openStreams = new Set<() => void>();
  app.addHook('preClose', async () => {
    for (const end of [...openStreams]) end();
  });

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
      // A GraphQL answer is one caller's, and some carry a secret shown once (createApiKey,
      // createStreamToken, a webhook's signing secret): no cache stores any of them.
      if (!reply.hasHeader('cache-control')) reply.header('cache-control', 'no-store');
      reply.status(response.status);
      const isEventStream = response.body !== null && (response.headers.get('content-type') ?? '').startsWith('text/event-stream');
      reply.send(isEventStream ? endable(response.body!, openStreams) : response.body);
      return reply;
    },
  });
  return { openStreams: () => openStreams.size };
}

/**
 * yoga's event stream, read through a stream of ours so it can be ended from outside: ending
 * cancels yoga's stream (which ends the subscription) and closes ours, so the response ends
 * properly rather than being cut. There is no `complete` event: the subscription did not
 * finish, and the client resubscribes (elsewhere, on SIGTERM) with afterSequence.
 */
function endable(body: ReadableStream<Uint8Array>, open: Set<() => void>): ReadableStream<Uint8Array> {
  const reader = body.getReader();
  const end = () => {
    open.delete(end);
    void reader.cancel().catch(() => undefined);
  };
  open.add(end);
  return new ReadableStream<Uint8Array>({
    async pull(controller) {
      let chunk: ReadableStreamReadResult<Uint8Array>;
      try {
        chunk = await reader.read();
      } catch (error) {
        open.delete(end);
        controller.error(error);
        return;
      }
      if (chunk.done) {
        open.delete(end);
        controller.close();
      } else {
        controller.enqueue(chunk.value);
      }
    },
    cancel: end,
  });
}
