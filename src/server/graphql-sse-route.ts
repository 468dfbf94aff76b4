/**
 * GraphQL subscriptions over Server-Sent Events at /graphql/stream (graphql-sse), in its
 * distinct-connections mode only: one subscription per GET or POST with
 * `Accept: text/event-stream`. Every step runs through yoga's envelop, as on /graphql and in
 * the REST adapters: parsing and validation with the document limits (before the caller is
 * authenticated or counted), the context (authentication, limits), the argument guard, the
 * shared subscription results and error masking; this route adds only what is its own (a
 * stream token's scope, the HTTP framing). A refused request answers with its status and a
 * GraphQL error body `{errors: [{message, extensions: {code}}]}` before any stream byte.
 *
 * graphql-sse's single-connection mode is not served (docs/REALTIME.md): its reservations
 * (PUT) never expire in graphql-sse 2.6.1 and took the client's token, so anyone could fill the
 * memory. PUT and DELETE answer 405; a token sent along is ignored by an event-stream request
 * and refused (400) on any other; graphql-sse's reservation table is never written.
 */
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { GraphQLError, type ExecutionResult } from 'graphql';
import { createHandler, TOKEN_HEADER_KEY, TOKEN_QUERY_KEY } from 'graphql-sse';
import { ERROR_HTTP_STATUS, ErrorCode } from '../domain/errors.js';
import { errorHeadersFor, httpError, httpErrorOfGraphQL, type HttpError } from './http-errors.js';
import type { Context } from '../graphql/context.js';
import { toPublicGraphQLError, type Yoga } from '../graphql/yoga.js';
import { admitStreamOperation, envelopedExecution, streamedError, type OperationContext } from './stream-operation.js';
import { rateLimitHeaders } from './rate-limit-headers.js';
import { registerStreamPreflight, streamCorsHeaders } from './stream-cors.js';

export const GRAPHQL_SSE_PATH = '/graphql/stream';
const ALLOWED_METHODS = 'GET, POST';
const EVENT_STREAM = 'text/event-stream';

/** Whether the Accept header lists text/event-stream (graphql-sse itself compares the whole header). */
function acceptsEventStream(accept: string | undefined): boolean {
  return (accept ?? '').split(',').some((range) => range.split(';')[0]!.trim().toLowerCase() === EVENT_STREAM);
}

function carriesStreamToken(req: FastifyRequest): boolean {
  if (req.headers[TOKEN_HEADER_KEY] !== undefined) return true;
  return new URL(req.url, 'http://localhost').searchParams.has(TOKEN_QUERY_KEY);
}

function errorBody(code: ErrorCode, message: string): string {
  return JSON.stringify({ errors: [{ message, extensions: { code } }] });
}

/** graphql-sse's own refusals (unparsable request or document, a mutation over GET) in the route's coded shape. */
function codedRefusal(status: number, body: string | null): HttpError {
  let message: string | undefined;
  try {
    message = (JSON.parse(body ?? '') as { errors?: { message?: string }[] }).errors?.[0]?.message;
  } catch {
    message = undefined;
  }
  if (status === ERROR_HTTP_STATUS.method_not_allowed) {
    return httpError(ErrorCode.methodNotAllowed, message ?? 'Mutations are sent with POST.');
  }
  const fallback = status === 415 ? 'Send the subscription as a JSON body (Content-Type: application/json) or as GET query parameters.' : 'The request is not a valid GraphQL request.';
  return httpError(ErrorCode.invalidRequest, message ?? fallback);
}


export function registerGraphQLSseRoute(app: FastifyInstance, yoga: Yoga, options: { now: () => number; logUnexpected: (error: unknown) => void }): { openStreams(): number } {
  // Who each admitted request is, for its response's CORS headers.
  const principals = new WeakMap<FastifyRequest, Context['principal']>();
  // graphql-sse runs each operation with its own request's envelop.
  const operations = envelopedExecution();
  const handler = createHandler<FastifyRequest, { reply: FastifyReply }, OperationContext>({
    // Never a token: graphql-sse then serves every request as a distinct connection and never
    // touches its table of single-connection reservations.
    authenticate: () => null,
    // Validated below, through the envelop (its rules and limits).
    validate: () => [],
    execute: operations.execute,
    subscribe: operations.subscribe,
    onSubscribe: async (req, params) => {
      const reply = req.context.reply;
      // The request's parameters ride in the context, as on /graphql: the cost limit reads the variables.
      const admission = await admitStreamOperation(yoga, { req: req.raw, reply, streamEndpoint: {}, params }, params, { mutations: req.method !== 'GET' });
      switch (admission.outcome) {
        case 'unparsable':
          return [JSON.stringify({ errors: [{ message: admission.error.message }] }), { status: 400, statusText: 'Bad Request' }];
        case 'invalid':
          // Answered as one event carrying the errors, then complete (as graphql-sse answers an event-stream request).
          return (async function* validationErrors() { yield { errors: admission.errors }; })();
        case 'mutation':
          // Mutations are sent with POST (graphql-sse's own rule, checked before anything is counted).
          return [JSON.stringify({ errors: [{ message: 'Cannot perform mutations over GET' }] }), { status: 405, statusText: 'Method Not Allowed' }];
      }
      principals.set(req.raw, admission.context.principal);
      operations.remember(admission);
      return admission.args;
    },
    // A subscription refused as a whole request (429 too_many_streams carries its HTTP status)
    // is the response, not a first event of a 200 stream.
    onOperation: (_context, _req, _args, result) => {
      if (Symbol.asyncIterator in result) return;
      const refusal = (result as ExecutionResult).errors?.find((error) => error.extensions?.http);
      if (refusal) throw refusal;
    },
    onNext: (_context, _req, result) => {
      if (!result.errors) return;
      return { ...result, errors: result.errors.map((error) => streamedError(error, options.logUnexpected)) };
    },
  });

  const openStreams = new Set<FastifyReply['raw']>();
  // SIGTERM: end open event streams so the server can drain.
  app.addHook('preClose', async () => {
    for (const raw of openStreams) raw.end();
  });

  /**
   * graphql-sse's own Fastify adapter reports an absent header as the string "undefined"; this
   * one passes absent headers as null, and Accept as graphql-sse's exact `text/event-stream`
   * once the route has decided the request is an event stream.
   */
  async function serve(req: FastifyRequest, reply: FastifyReply): Promise<void> {
    const [body, init] = await handler({
      method: req.method,
      url: req.url,
      headers: {
        get: (key: string) => {
          const name = key.toLowerCase();
          if (name === 'accept') return EVENT_STREAM;
          const value = req.headers[name];
          if (value === undefined) return null;
          return Array.isArray(value) ? value.join('\n') : String(value);
        },
      },
      body: () => Promise.resolve((req.body as string | Record<string, unknown> | undefined) ?? ''),
      raw: req,
      context: { reply },
    });
    reply.hijack();
    if (!body || typeof body === 'string') {
      if (init.status < 400) {
        reply.raw.writeHead(init.status, init.statusText, { ...init.headers, 'x-request-id': String(req.id) });
        reply.raw.end(body ?? undefined);
        return;
      }
      const refusal = codedRefusal(init.status, body);
      reply.raw.writeHead(refusal.status, {
        ...refusal.headers,
        ...(refusal.code === ErrorCode.methodNotAllowed ? { allow: 'POST' } : {}),
        'content-type': 'application/json; charset=utf-8',
        'x-request-id': String(req.id),
        ...(req.rateLimit ? rateLimitHeaders(req.rateLimit, options.now()) : {}),
      });
      reply.raw.end(errorBody(refusal.code, refusal.message));
      return;
    }
    reply.raw.writeHead(init.status, init.statusText, {
      ...init.headers,
      'x-request-id': String(req.id),
      ...(req.rateLimit ? rateLimitHeaders(req.rateLimit, options.now()) : {}),
      ...streamCorsHeaders(principals.get(req) ?? { kind: 'anonymous' }, req.headers.origin),
    });
    if (reply.raw.closed) {
      // The client left while the subscription was being set up.
      void body.return(undefined);
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

  /** A refusal before graphql-sse is involved: nothing authenticated, nothing allocated. */
  function refuse(reply: FastifyReply, code: ErrorCode, message: string): FastifyReply {
    const refusal = httpError(code, message);
    if (code === ErrorCode.methodNotAllowed) reply.header('allow', ALLOWED_METHODS);
    return reply
      .status(refusal.status)
      .headers(refusal.headers)
      .type('application/json; charset=utf-8')
      .send(errorBody(code, message));
  }

  registerStreamPreflight(app, GRAPHQL_SSE_PATH);
  app.route({
    method: ['PUT', 'DELETE'],
    url: GRAPHQL_SSE_PATH,
    schema: { hide: true },
    handler: (req, reply) =>
      refuse(
        reply,
        ErrorCode.methodNotAllowed,
        `${req.method} is not allowed here: graphql-sse's single-connection mode is not served. Open each subscription as its own event stream (GET or POST with Accept: text/event-stream, graphql-sse's client with singleConnection: false) and close the connection to end it.`,
      ),
  });

  app.route({
    method: ['GET', 'POST'],
    url: GRAPHQL_SSE_PATH,
    schema: { hide: true },
    handler: async (req, reply) => {
      if (!acceptsEventStream(req.headers.accept)) {
        return refuse(
          reply,
          ErrorCode.invalidRequest,
          carriesStreamToken(req)
            ? `graphql-sse's single-connection mode (the ${TOKEN_HEADER_KEY} header or ${TOKEN_QUERY_KEY} parameter) is not served: open each subscription as its own event stream with Accept: text/event-stream.`
            : `${GRAPHQL_SSE_PATH} serves subscriptions as Server-Sent Events: send Accept: text/event-stream (queries and mutations go to POST /graphql).`,
        );
      }
      try {
        await serve(req, reply);
      } catch (error) {
        if (reply.raw.headersSent) {
          reply.raw.end();
          return;
        }
        if (!reply.sent) reply.hijack();
        const body = toPublicGraphQLError(error, options.logUnexpected);
        const { http: _http, ...extensions } = body.extensions as Record<string, unknown>;
        // Status and Retry-After (an anonymous 429, a database outage's 503) from the one error
        // exit; GraphQL's own refusals of the caller's document are invalid_request.
        const refusal = httpErrorOfGraphQL(body, { unknownCode: 'request' });
        reply.raw.writeHead(refusal.status, {
          'content-type': 'application/json; charset=utf-8',
          'x-request-id': String(req.id),
          ...errorHeadersFor(refusal, req),
          ...(req.rateLimit ? rateLimitHeaders(req.rateLimit, options.now()) : {}),
        });
        reply.raw.end(JSON.stringify({ errors: [{ message: body.message, extensions }] }));
      }
    },
  });
  return { openStreams: () => openStreams.size };
}
