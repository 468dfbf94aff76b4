/**
 * GraphQL over WebSocket at /graphql/ws (the graphql-ws library, protocol
 * `graphql-transport-ws`, on @fastify/websocket): what Apollo Client's GraphQLWsLink, urql and
 * Relay speak by default. Every operation is admitted as on /graphql/stream, by the one admission
 * (src/server/stream-operation.ts): document limits before anything is counted, then the context
 * (authentication, limits, the anonymous rules), then a stream token's scope; the subscription
 * resolvers hold the stream slots and end on expiry or revocation (src/graphql/schema/pick-events.ts).
 * What is this transport's own:
 * - the credential rides in `connection_init`'s payload, `{"authorization": "Bearer <key, stream
 *   token or admin token>"}` (a browser cannot set headers on a WebSocket); a stream token is
 *   checked against the upgrade request's Origin;
 * - refusals of the caller close the socket with graphql-ws close codes, the reason being the
 *   error code: 4401 a credential that is not one, 4403 a stream token from another origin, 4429
 *   the caller over a limit at an operation's admission, or the stream caps (graphql-ws's own
 *   client does not retry a 4429 by itself: reconnect after the wait); 4400 a message that is not
 *   the protocol's and 4408 no `connection_init` within 3 s are graphql-ws's own. A refusal of one
 *   operation (its tier, a field a token may not select, a document over the limits, a
 *   mutation's own limit) is that operation's `error` or result, and the socket stays open;
 * - keep-alive: a ping every STREAM_HEARTBEAT_SECONDS, the socket ended when no pong follows.
 */
import { EventEmitter } from 'node:events';
import websocket, { type WebSocket } from '@fastify/websocket';
import type { FastifyInstance, FastifyRequest } from 'fastify';
import { GraphQLError, type ExecutionResult } from 'graphql';
import { CloseCode } from 'graphql-ws';
import { makeHandler, type Extra } from 'graphql-ws/use/@fastify/websocket';
import { ERROR_HTTP_STATUS, isErrorCode } from '../domain/errors.js';
import { streamTokenOriginAllowed } from '../domain/stream-token.js';
import type { Services } from '../services/index.js';
import type { Yoga } from '../graphql/yoga.js';
import { admitStreamOperation, envelopedExecution, streamedError } from './stream-operation.js';

export const GRAPHQL_WS_PATH = '/graphql/ws';
/** A message is one operation: GraphQL's body limit on /graphql is of this order. */
const MAX_MESSAGE_BYTES = 256 * 1024;

/** The close code of a refusal of the caller, by its HTTP status; null: the operation's own error. */
function closeCodeOf(error: unknown): { code: number; reason: string } | null {
  if (!(error instanceof GraphQLError)) return null;
  const code = error.extensions?.code;
  if (typeof code !== 'string' || !isErrorCode(code)) return null;
  const status = ERROR_HTTP_STATUS[code];
  if (status === 401) return { code: CloseCode.Unauthorized, reason: code };
  if (status === 429) return { code: 4429, reason: code };
  return null;
}

/** The upgrade request as the context's request: its address, id and Origin, the credential from connection_init. */
function requestOf(extra: Extra, authorization: string | undefined): FastifyRequest {
  const { request } = extra;
  return {
    id: request.id,
    ip: request.ip,
    headers: { origin: request.headers.origin, ...(authorization === undefined ? {} : { authorization }) },
    log: request.log,
  } as unknown as FastifyRequest;
}

/**
 * The socket as the subscriptions' resolvers watch an HTTP response (`reply.raw`): closed, or a
 * 'close' event. Every subscription of the socket ends with it, and gives its stream slot back,
 * also one graphql-ws no longer tracks (a `complete` and a new `subscribe` of the same id sent
 * while the first was being admitted leave the first running, unknown to graphql-ws).
 */
const connections = new WeakMap<WebSocket, EventEmitter & { readonly closed: boolean }>();
function connectionOf(socket: WebSocket): EventEmitter & { readonly closed: boolean } {
  let connection = connections.get(socket);
  if (!connection) {
    const emitter = new EventEmitter();
    connection = Object.defineProperty(emitter, 'closed', { get: () => socket.readyState >= socket.CLOSING }) as EventEmitter & { readonly closed: boolean };
    socket.once('close', () => emitter.emit('close'));
    connections.set(socket, connection);
  }
  return connection;
}

const authorizationOf = (payload: Record<string, unknown> | undefined): string | undefined | null => {
  const value = payload?.authorization ?? payload?.Authorization;
  if (value === undefined || value === null) return undefined;
  return typeof value === 'string' ? value : null;
};

export async function registerGraphQLWsRoute(
  app: FastifyInstance,
  yoga: Yoga,
  services: Services,
  options: { heartbeatSeconds: number; logUnexpected: (error: unknown) => void },
): Promise<{ openSockets(): number }> {
  await app.register(websocket, { options: { maxPayload: MAX_MESSAGE_BYTES } });
  const operations = envelopedExecution();
  const close = (extra: Extra, code: number, reason: string) => extra.socket.close(code, reason);

  const handler = makeHandler<Record<string, unknown> | undefined>(
    {
      schema: yoga.getEnveloped({}).schema,
      execute: (args) => operations.execute(args) as Promise<ExecutionResult>,
      subscribe: (args) => operations.subscribe(args) as Promise<ExecutionResult>,
      onConnect: async (ctx) => {
        const authorization = authorizationOf(ctx.connectionParams);
        if (authorization === null) {
          close(ctx.extra, CloseCode.BadRequest, 'invalid_request');
          return false;
        }
        // Who it is, once, to refuse at once a credential that is not one or a token from another
        // origin; each operation is admitted (and counted) again, as over HTTP.
        const principal = await services.auth.principalFor(authorization);
        if (principal.kind === 'invalid') {
          close(ctx.extra, CloseCode.Unauthorized, 'invalid_api_key');
          return false;
        }
        if (principal.kind === 'streamToken' && !streamTokenOriginAllowed(principal.origins, ctx.extra.request.headers.origin)) {
          close(ctx.extra, CloseCode.Forbidden, 'forbidden');
          return false;
        }
        return true;
      },
      onSubscribe: async (ctx, _id, payload) => {
        const req = requestOf(ctx.extra, authorizationOf(ctx.connectionParams) ?? undefined);
        try {
          const reply = { raw: connectionOf(ctx.extra.socket) };
          const admission = await admitStreamOperation(yoga, { req, reply, streamEndpoint: {}, params: payload }, payload, { mutations: true });
          if (admission.outcome === 'unparsable') return [admission.error];
          if (admission.outcome === 'invalid') return [...admission.errors];
          if (admission.outcome === 'mutation') return [new GraphQLError('Mutations are not taken here')];
          operations.remember(admission);
          return admission.args;
        } catch (error) {
          const closing = closeCodeOf(error);
          // The socket closes with the refusal's code; the operation's error goes nowhere then.
          if (closing) close(ctx.extra, closing.code, closing.reason);
          return [streamedError(error, options.logUnexpected)];
        }
      },
      // A subscription refused as a whole, as its HTTP answer would be: too_many_streams (4429),
      // or no credential for it (4401). Any other error of a resolver (a mutation's own limit, as
      // createStreamToken's) is that operation's result, as over HTTP: the socket stays open.
      onOperation: (ctx, _id, _payload, _args, result) => {
        if (Symbol.asyncIterator in result) return;
        const refusal = (result as ExecutionResult).errors
          ?.filter((error) => error.extensions?.code === 'too_many_streams' || error.extensions?.code === 'invalid_api_key')
          .map(closeCodeOf)
          .find((closing) => closing !== null);
        if (refusal) close(ctx.extra, refusal.code, refusal.reason);
      },
      onNext: (_ctx, _id, _payload, _args, result) => {
        if (!result.errors) return;
        return { ...result, errors: result.errors.map((error) => streamedError(error, options.logUnexpected)) } as ExecutionResult;
      },
      onError: (_ctx, _id, _payload, errors) => errors.map((error) => streamedError(error, options.logUnexpected)) as unknown as GraphQLError[],
    },
    options.heartbeatSeconds * 1000,
  );

  app.get(GRAPHQL_WS_PATH, { websocket: true, schema: { hide: true } }, handler);
  return { openSockets: () => app.websocketServer?.clients.size ?? 0 };
}
