/**
 * The AsyncAPI 3.0 document of the service's event surfaces (GET /api/v1/asyncapi.json), made
 * from the declarations OpenAPI uses: the schemas (adapters/common/schemas.ts), the event names
 * (src/domain/stream-events.ts, WEBHOOK_EVENT_TYPES), the webhook headers and the error schema.
 * It describes the service as the application: every operation is one the service sends on:
 * the REST picks stream, the public live feed, the GraphQL stream (SSE and WebSocket) and the
 * webhook deliveries.
 * AsyncAPI has no binding for Server-Sent Events: the SSE channels are HTTPS channels whose
 * message names are the frames' `event:` names, their framing said in the descriptions.
 */
import type { FastifyInstance } from 'fastify';
import { PICKS_STREAM_EVENT_NAMES, PUBLIC_STREAM_EVENT_NAME } from '../../src/domain/stream-events.js';
import { WEBHOOK_EVENT_TYPES } from '../../src/domain/webhook.js';
import { OPENAPI_PATH, WEBHOOK_REQUEST_HEADERS } from './openapi.js';
import { API_SCHEMAS } from './schemas.js';

export const ASYNCAPI_PATH = '/api/v1/asyncapi.json';

export interface EventSurfacePaths {
  picksStream: string;
  publicStream: string;
  graphqlStream: string;
  graphqlWs: string;
  /** The SSE reconnection delay the streams announce (`retry:`), ms. */
  retryMs: number;
  /** STREAM_HEARTBEAT_SECONDS. */
  heartbeatSeconds: number;
}

/** OpenAPI's `#/components/schemas/X` is AsyncAPI's too: the schemas move over unchanged. */
const schemaRef = (name: keyof typeof API_SCHEMAS) => ({ $ref: `#/components/schemas/${name}` });

const SSE_FRAMING =
  'Server-Sent Events (`text/event-stream; charset=utf-8`): each message is a frame `id: <sequence>`, `event: <message name>`, `data: <payload as one line of JSON>`, then a blank line. ';

/** The SSE message of an event name on a stream: its payload and the frame's id. */
function sseMessage(name: string, title: string, summary: string, payload: object) {
  return {
    name,
    title,
    summary,
    contentType: 'application/json',
    payload,
    headers: {
      type: 'object',
      description: 'The SSE fields beside `data:` (not HTTP headers).',
      properties: {
        id: { type: 'integer', minimum: 1, description: 'The event sequence: resume after it with `Last-Event-ID`.' },
        event: { type: 'string', const: name },
      },
    },
  };
}

/** Channel and message ids: the event name without its dots. */
const idOf = (name: string) => name.replace(/[._](\w)/g, (_match, letter: string) => letter.toUpperCase());

/** The AsyncAPI 3.0 document; `host` is the server the reader reached (the document is the service's own). */
export function asyncApiDocument(paths: EventSurfacePaths, host = 'api.example.com'): Record<string, unknown> {
  const streamMessages = Object.fromEntries(
    Object.entries(PICKS_STREAM_EVENT_NAMES).map(([type, name]) => [
      `picksStream_${idOf(name)}`,
      sseMessage(
        name,
        `Picks stream: ${name}`,
        type === 'pick.published' ? 'A pick became visible.' : "A published pick's availability status changed; the payload is the pick as of the change.",
        schemaRef('Pick'),
      ),
    ]),
  );
  const publicMessage = sseMessage(PUBLIC_STREAM_EVENT_NAME, `Public feed: ${PUBLIC_STREAM_EVENT_NAME}`, "A pick among today's top public picks, sent after the public delay.", schemaRef('PublicPick'));
  const webhookMessages = Object.fromEntries(
    WEBHOOK_EVENT_TYPES.map((type) => [
      `webhook_${idOf(type)}`,
      {
        name: type,
        title: `Webhook: ${type}`,
        summary: `POSTed to each active subscription that chose \`${type}\`.`,
        contentType: 'application/json',
        headers: {
          type: 'object',
          required: WEBHOOK_REQUEST_HEADERS.filter(([name]) => name !== 'User-Agent').map(([name]) => name),
          properties: Object.fromEntries(WEBHOOK_REQUEST_HEADERS.map(([name, description, schema]) => [name, { ...schema, description }])),
        },
        payload: { allOf: [schemaRef('WebhookEvent'), { type: 'object', properties: { type: { const: type } } }] },
      },
    ]),
  );
  const graphqlMessages = {
    graphqlNext: {
      name: 'next',
      title: 'GraphQL stream: next',
      summary: 'One result of the subscription (graphql-sse "distinct connections" mode): `{"data": {...}}` or `{"errors": [...]}`.',
      contentType: 'application/json',
      payload: { type: 'object', properties: { data: { type: ['object', 'null'] }, errors: { type: 'array', items: { type: 'object' } } } },
    },
    graphqlComplete: {
      name: 'complete',
      title: 'GraphQL stream: complete',
      summary: 'The subscription ended (an expired or revoked credential, or the server closing); no data.',
      payload: { type: 'null' },
    },
  };

  const wsMessages = {
    graphqlWsNext: {
      name: 'next',
      title: 'GraphQL over WebSocket: next',
      summary: 'One result of an operation: `{"id", "type": "next", "payload": {"data": ...} | {"errors": [...]}}`.',
      payload: { type: 'object', required: ['id', 'type', 'payload'], properties: { id: { type: 'string' }, type: { const: 'next' }, payload: graphqlMessages.graphqlNext.payload } },
    },
    graphqlWsError: {
      name: 'error',
      title: 'GraphQL over WebSocket: error',
      summary: 'The operation was refused before it ran (its document, its tier, a field a stream token may not select): `{"id", "type": "error", "payload": [GraphQL errors]}`.',
      payload: { type: 'object', required: ['id', 'type', 'payload'], properties: { id: { type: 'string' }, type: { const: 'error' }, payload: { type: 'array', items: { type: 'object' } } } },
    },
    graphqlWsComplete: {
      name: 'complete',
      title: 'GraphQL over WebSocket: complete',
      summary: 'The operation ended (a query answered; a subscription whose credential expired or was revoked).',
      payload: { type: 'object', required: ['id', 'type'], properties: { id: { type: 'string' }, type: { const: 'complete' } } },
    },
  };

  const channel = (address: string, description: string, messages: Record<string, object>, server = 'api') => ({
    address,
    description,
    messages: Object.fromEntries(Object.keys(messages).map((id) => [id, { $ref: `#/components/messages/${id}` }])),
    servers: [{ $ref: `#/servers/${server}` }],
  });
  const heartbeat = `A \`: heartbeat\` comment every ${paths.heartbeatSeconds} s (STREAM_HEARTBEAT_SECONDS) keeps the connection open; it opens with \`: stream open\` and \`retry: ${paths.retryMs}\`. `;
  const channels = {
    picksStream: channel(
      paths.picksStream,
      `The REST picks stream: \`GET ${paths.picksStream}\` with an API key (Enterprise) or a stream token. ${SSE_FRAMING}${heartbeat}` +
        'Reconnect with `Last-Event-ID` to replay what was missed (the last 24 h or 1,000 events), then continue live, without duplicates or gaps. Admission errors (401, 403, 429) are JSON before the first byte (docs/API.md, "Picks stream").',
      streamMessages,
    ),
    publicStream: channel(
      paths.publicStream,
      `The public live feed: \`GET ${paths.publicStream}\`, anonymous. ${SSE_FRAMING}${heartbeat}Only today's top picks, each after the public delay (PUBLIC_STREAM_DELAY_SECONDS).`,
      { publicStream_pickPublished: publicMessage },
    ),
    graphqlStream: channel(
      paths.graphqlStream,
      `GraphQL subscriptions over SSE (the graphql-sse protocol): \`POST ${paths.graphqlStream}\` with the operation; \`pickPublished\`, \`pickAvailabilityChanged\` and \`pickFeed\` (docs/REALTIME.md). ` +
        'Authentication and admission as on /graphql; a stream token may subscribe to what the picks stream carries only.',
      graphqlMessages,
    ),
    graphqlWs: channel(
      paths.graphqlWs,
      `GraphQL over WebSocket (the graphql-ws protocol, subprotocol \`graphql-transport-ws\`): the client sends \`connection_init\` with \`{"authorization": "Bearer <key, stream token or admin token>"}\` within 3 s, then \`subscribe\` messages; the server answers \`connection_ack\` and, per operation, the messages below. ` +
        `Close codes: 4400 a message outside the protocol, 4401 a credential that is not one, 4403 a stream token from another origin, 4408 no connection_init within 3 s, 4429 over a limit or the stream caps. A ping every ${paths.heartbeatSeconds} s (STREAM_HEARTBEAT_SECONDS). docs/REALTIME.md.`,
      wsMessages,
      'websocket',
    ),
    webhooks: {
      address: '{subscriptionUrl}',
      description: "The webhook deliveries: one POST per event to each subscription's URL, signed by Standard Webhooks (docs/WEBHOOKS.md). Any 2xx within 10 s acknowledges; anything else is retried 1 min, 5 min, 30 min, 2 h and 12 h later.",
      parameters: { subscriptionUrl: { description: 'The `url` of the webhook subscription.' } },
      messages: Object.fromEntries(Object.keys(webhookMessages).map((id) => [id, { $ref: `#/components/messages/${id}` }])),
    },
  };

  const operation = (channelId: string, messages: Record<string, object>, title: string, summary: string) => ({
    action: 'send',
    title,
    summary,
    channel: { $ref: `#/channels/${channelId}` },
    messages: Object.keys(messages).map((id) => ({ $ref: `#/channels/${channelId}/messages/${id}` })),
  });

  return {
    asyncapi: '3.0.0',
    info: {
      title: 'Sports-Betting Picks Service events',
      version: '1.0.0',
      description:
        'The events the service sends: the REST picks stream, the public live feed and the GraphQL stream (Server-Sent Events), GraphQL over WebSocket, and the webhook deliveries. ' +
        `The HTTP API is described by OpenAPI at ${OPENAPI_PATH}; the payload schemas here are its schemas. Clients must ignore fields they do not know.`,
    },
    defaultContentType: 'application/json',
    servers: {
      api: { host, protocol: 'https', description: 'The service that serves this document (http on a developer machine).' },
      websocket: { host, protocol: 'wss', description: 'The same service, WebSocket (ws on a developer machine).' },
    },
    channels,
    operations: {
      sendPicksStream: operation('picksStream', streamMessages, 'Picks stream', 'The service streams each visible pick and each availability change.'),
      sendPublicStream: operation('publicStream', { publicStream_pickPublished: publicMessage }, 'Public live feed', "The service streams today's top picks to anyone."),
      sendGraphqlStream: operation('graphqlStream', graphqlMessages, 'GraphQL stream', 'The service sends the results of a GraphQL subscription.'),
      sendGraphqlWs: operation('graphqlWs', wsMessages, 'GraphQL over WebSocket', 'The service sends the results of the operations a client subscribed to.'),
      sendWebhooks: operation('webhooks', webhookMessages, 'Webhook deliveries', 'The service POSTs each subscribed event to its subscriptions.'),
    },
    components: {
      schemas: API_SCHEMAS,
      messages: { ...streamMessages, publicStream_pickPublished: publicMessage, ...graphqlMessages, ...wsMessages, ...webhookMessages },
    },
  };
}

/** Every event name the document lists, by channel (what the event-name test compares with the code's). */
export function documentedEventNames(document: Record<string, unknown>): Record<string, string[]> {
  const components = (document.components as { messages: Record<string, { name: string }> }).messages;
  const channels = document.channels as Record<string, { messages: Record<string, { $ref: string }> }>;
  return Object.fromEntries(
    Object.entries(channels).map(([id, channel]) => [id, Object.values(channel.messages).map((ref) => components[ref.$ref.split('/').at(-1)!]!.name).sort()]),
  );
}

/** Serves the document, anonymous like the OpenAPI one, with the host the reader reached. */
export function registerAsyncApi(app: FastifyInstance, paths: EventSurfacePaths): void {
  const bodies = new Map<string, string>();
  app.get(ASYNCAPI_PATH, { schema: { hide: true } }, async (req, reply) => {
    const host = /^[A-Za-z0-9.:[\]-]{1,255}$/.test(req.host) ? req.host : 'localhost';
    let body = bodies.get(host);
    if (body === undefined) {
      body = JSON.stringify(asyncApiDocument(paths, host));
      if (bodies.size < 16) bodies.set(host, body);
    }
    return reply.type('application/json; charset=utf-8').send(body);
  });
}
