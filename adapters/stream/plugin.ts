/**
 * GET /api/v1/picks/stream (docs/API.md, "Picks stream"): executes the pickFeed subscription
 * through the shared schema and writes the documented frames:
 *
 *   id: <sequence>            (addition: resume with Last-Event-ID)
 *   event: pick.published     (or pick.availability: a published pick's availability changed)
 *   data: <Pick JSON of docs/API.md "Pick", one line>
 *   <blank line>
 *
 * opened by ": stream open" and "retry: 3000" as soon as the stream is admitted, plus
 * ": heartbeat" comments. One request is counted at connect. Each connection's own
 * subscription decides admission (auth, tier) and serves the Last-Event-ID replay; live frames
 * come from the instance's one broadcast (broadcast.ts). A client that cannot keep up (more
 * than MAX_BUFFERED_BYTES unsent) is disconnected; closing frees everything.
 */
import type { ServerResponse } from 'node:http';
import type { FastifyBaseLogger, FastifyInstance } from 'fastify';
import { GraphQLError, type ExecutionResult, type GraphQLSchema } from 'graphql';
import { LRUCache } from 'lru-cache';
import { ErrorCode } from '../../src/domain/errors.js';
import type { Context } from '../../src/graphql/context.js';
import type { Yoga } from '../../src/graphql/yoga.js';
import { MAX_STREAMS_PER_KEY, slotOwnerOf, tooManyStreamsMessage, type StreamSlot } from '../../src/services/stream-slots.js';
import { registerStreamPreflight, streamCorsHeaders } from '../../src/server/stream-cors.js';
import { rateLimitHeaders } from '../../src/server/rate-limit-headers.js';
import { sendError, sendGraphQLError } from '../../src/server/http-errors.js';
import { registerMethodNotAllowed } from '../common/method-not-allowed.js';
import { openApiRouteSchema } from '../common/openapi.js';
import { ApiKeyAccessChangedDocument, PickFeedDocument, type PickFeedSubscription } from '../common/generated/graphql.js';
import { openInternalOperation, openOperation, prepareOperation } from '../common/operations.js';
import { v1Pick } from '../common/v1-json.js';
import { picksStreamEventName } from '../../src/domain/stream-events.js';
import { boundedWriter } from './bounded-writer.js';
import { StreamBroadcast, type BroadcastMember, type StreamFrame } from './broadcast.js';
import { followSubscription, type Follower } from './follow.js';

export const STREAM_PATH = '/api/v1/picks/stream';
export const MAX_BUFFERED_BYTES = 256 * 1024;
const LAST_EVENT_ID = /^\d{1,15}$/;
/** Said before a stream token's stream ends at its expiry (a comment: EventSource ignores it, a reader sees why). */
export const STREAM_TOKEN_EXPIRED = ': stream token expired; mint a new one and reconnect\n\n';
/** EventSource's reconnection delay, sent as the stream's `retry:` field. */
export const STREAM_RETRY_MS = 3_000;
/** Written as soon as a stream is admitted: a comment and the reconnection delay (no event). */
export const STREAM_OPENING = `: stream open\nretry: ${STREAM_RETRY_MS}\n\n`;

export interface StreamOptions {
  heartbeatSeconds: number;
  now: () => number;
  /** What the instance's broadcast subscribes with (src/graphql/yoga.ts internalContext). */
  internalContext: Context;
}

export interface StreamAdapter {
  openStreams(): number;
}

declare module 'fastify' {
  interface FastifyInstance {
    /** Open GET /api/v1/picks/stream connections on this instance (set by buildApp). */
    openStreams: () => number;
  }
}

export function registerStreamRoutes(app: FastifyInstance, yoga: Yoga, schema: GraphQLSchema, options: StreamOptions): StreamAdapter {
  const operation = prepareOperation(schema, PickFeedDocument);
  const accessOperation = prepareOperation(schema, ApiKeyAccessChangedDocument);
  // A key's streams count against its slots (src/services/stream-slots.ts), shared with its
  // GraphQL subscriptions, from admission on; they end when the key is revoked or changes tier.
  const slots = options.internalContext.services.streamSlots;
  // Every connection renders the same frame for an event: render it once per sequence.
  const frames = new LRUCache<string, StreamFrame>({ max: 256 });
  const closers = new Set<() => void>();

  function renderFrame(result: ExecutionResult<PickFeedSubscription>): StreamFrame | null {
    const event = result.data?.pickFeed;
    if (!event) return null;
    let frame = frames.get(event.sequence);
    if (frame === undefined) {
      frame = {
        seq: Number(event.sequence),
        text: `id: ${event.sequence}\nevent: ${picksStreamEventName(event.type)}\ndata: ${JSON.stringify(v1Pick(event.pick))}\n\n`,
      };
      frames.set(event.sequence, frame);
    }
    return frame;
  }

  // The instance's one live subscription (broadcast.ts); frames are the same for every
  // principal the stream admits, so it runs as the server itself.
  const internal = openInternalOperation(yoga, options.internalContext);
  const broadcast = new StreamBroadcast({
    subscribe: (afterSequence) => internal.subscribe(operation, { afterSequence }),
    render: renderFrame,
    heartbeatMs: options.heartbeatSeconds * 1000,
    onError: (error) => app.log.warn({ err: (error as Error).message }, 'stream broadcast resubscribing'),
  });
  // Keys revoked or moved to another tier, on any instance: their streams end. A client whose
  // key is still good reconnects with Last-Event-ID and misses nothing.
  let accessWatch: Follower | null = null;
  app.addHook('onReady', async () => {
    await broadcast.start();
    accessWatch = await followSubscription({
      open: () => internal.subscribe(accessOperation, {}),
      onResult: (result) => {
        const change = result.data?.apiKeyAccessChanged;
        if (!change) throw new Error(result.errors?.[0]?.message ?? 'a subscription result without a change');
        slots.endStreamsOf(change.apiKeyId);
      },
      onError: (error) => app.log.warn({ err: (error as Error).message }, 'stream access watch resubscribing'),
    });
  });

  // SIGTERM: end every stream cleanly so the server can drain.
  app.addHook('preClose', async () => {
    for (const close of [...closers]) close();
    await broadcast.close();
    await accessWatch?.stop();
  });

  app.route({
    method: 'GET',
    url: STREAM_PATH,
    schema: openApiRouteSchema({
      operationId: 'streamPicks',
      summary: 'Server-Sent Events stream of new published picks and their availability (Enterprise)',
      description:
        'Send `Accept: text/event-stream`. Admission errors (401, 429, 403, 400) are JSON, before any stream byte. One request is counted at connect. ' +
        'Every pick that becomes visible arrives as a `pick.published` frame, and every change of a published pick\'s availability status as a `pick.availability` frame (the same Pick, its `availability` changed; at most one per pick per odds poll); reconnect with `Last-Event-ID` to replay what was missed (the last 24 h or 1,000 events, whichever reaches further back), then continue live, without duplicates or gaps. ' +
        `At most ${MAX_STREAMS_PER_KEY} concurrent streams per API key (every way of subscribing together); a key's streams end when it is revoked or changes tier. ` +
        'A stream opened with a stream token ends at the token\'s expiry (after a `: stream token expired` comment) and carries `Access-Control-Allow-Origin` for the token\'s origins; its streams have their own allowance per key.',
      url: STREAM_PATH,
      params: [
        {
          name: 'access_token',
          in: 'query',
          type: 'string',
          variable: 'accessToken',
          description:
            "A stream token (`sst_...`, POST /api/v1/stream-tokens) instead of the Authorization header, for EventSource, which cannot send headers. Never an API key. The page's Origin must be one of the token's origins.",
        },
        {
          name: 'last_event_id',
          in: 'query',
          type: 'string',
          variable: 'lastEventId',
          description: 'As the Last-Event-ID header, for a fresh EventSource; the header wins when both are sent (EventSource sends it on every reconnect).',
        },
      ],
      requestHeaders: {
        'Last-Event-ID': { description: 'The `id` of the last event received: the stream replays the events after it. Digits only, else 400 invalid_parameter.', schema: { type: 'string', pattern: '^[0-9]{1,15}$' } },
      },
      responseSchema: {
        type: 'string',
        description:
          'UTF-8 text/event-stream. Opens with `: stream open` and `retry: <ms>`. Each event: `id: <sequence>`, `event: pick.published` or `event: pick.availability`, `data: <Pick JSON on one line>` (the Pick schema), a blank line. ' +
          'A `: heartbeat` comment every 30 s (STREAM_HEARTBEAT_SECONDS) keeps the connection open.',
      },
      successDescription: 'The event stream; it stays open until the client closes it.',
      successMediaType: 'text/event-stream',
      successExample: `: stream open\nretry: ${STREAM_RETRY_MS}\n\nid: 1042\nevent: pick.published\ndata: {"id":"0b7f3c9e-5d2a-4e61-9a8b-3c4d5e6f7a81","sport":"soccer","league":"Premier League","home_team":"Arsenal","away_team":"Chelsea","kickoff_at":"2026-12-01T15:00:00.000Z","pick":"Arsenal to win @ 2.2","odds":2.2,"edge_pct":10,"confidence":70,"status":"published","settled_at":null,"result":null}\n\n: heartbeat\n\n`,
      successHeaders: {
        'Cache-Control': { description: 'The stream is never cached.', schema: { type: 'string', const: 'no-cache' }, required: true },
      },
      errors: ['tier_upgrade_required', 'too_many_streams', 'stream_token_rate_limited'],
    }),
    handler: async (req, reply) => {
      const query = req.query as Record<string, unknown>;
      const accessToken = query.access_token;
      if (accessToken !== undefined && typeof accessToken !== 'string') {
        return sendError(reply, ErrorCode.invalidApiKey, 'Send one access_token.');
      }
      const runner = await openOperation(yoga, { req, reply, customerApi: true, streamEndpoint: accessToken === undefined ? {} : { accessToken } });
      if (runner instanceof GraphQLError) return sendGraphQLError(reply, runner);
      // The header, which EventSource sends on every reconnect, wins over the query parameter a
      // fresh EventSource can only send in its URL.
      const headerId = req.headers['last-event-id'];
      const lastEventId = headerId ?? query.last_event_id;
      if (lastEventId !== undefined && (typeof lastEventId !== 'string' || !LAST_EVENT_ID.test(lastEventId))) {
        const parameter = headerId === undefined ? 'last_event_id' : 'Last-Event-ID';
        return sendError(reply, ErrorCode.invalidParameter, `${parameter} must be the id of an earlier event.`, { parameter });
      }
      const { principal } = runner.context;
      // Taken before the subscribe await, so concurrent connects cannot overshoot; held for the
      // whole connection, so the connection's own subscription takes none (cover). A stream
      // token's streams count against the key's token allowance, not its own.
      const owner = slotOwnerOf(principal);
      const slot = owner ? slots.reserve(owner.apiKeyId, owner.pool) : null;
      if (owner && !slot) return sendError(reply, ErrorCode.tooManyStreams, tooManyStreamsMessage(owner.pool, slots.limit(owner.pool)));
      if (slot) slots.cover(runner.context, slot);
      const release = () => slot?.release();
      // The connection's own subscription: auth, tier and replay exactly as on /graphql.
      let outcome: AsyncIterableIterator<ExecutionResult<PickFeedSubscription>> | ExecutionResult<PickFeedSubscription>;
      try {
        outcome = await runner.subscribe(operation, { afterSequence: lastEventId ?? null });
      } catch (error) {
        release();
        throw error;
      }
      if (!(Symbol.asyncIterator in outcome)) {
        release();
        return sendGraphQLError(reply, outcome.errors?.[0] ?? { message: 'No stream', extensions: {} });
      }
      const results = outcome;
      if (slot?.revoked) {
        // Revoked or re-tiered while being admitted: answered as if it had arrived a moment later.
        release();
        void results.return?.();
        return sendError(reply, ErrorCode.invalidApiKey, 'The API key was revoked or changed tier while the stream was opening; reconnect.');
      }

      reply.hijack();
      const connection = openConnection({
        res: reply.raw,
        log: req.log,
        slot,
        expiresInMs: principal.kind === 'streamToken' ? principal.remainingMs : null,
        stopReplay: () => void results.return?.(),
        broadcast,
        closers,
      });
      // The client may have left while it was being admitted: everything is let go already.
      if (connection.closed) return;
      // Fresh, or resuming from at or past the broadcast's latest event (an EventSource's usual
      // reconnect): nothing to replay, so the broadcast serves it from now on and the
      // connection's own subscription ends at once.
      const liveAtOnce = lastEventId === undefined || broadcast.canTakeOver(Number(lastEventId));
      if (liveAtOnce) {
        if (lastEventId === undefined) broadcast.goLiveNow(connection.member);
        else broadcast.goLive(connection.member, Number(lastEventId));
        void results.return?.();
        connection.replayDone();
      }

      reply.raw.writeHead(200, {
        'content-type': 'text/event-stream; charset=utf-8',
        'cache-control': 'no-cache',
        connection: 'keep-alive',
        'x-accel-buffering': 'no',
        'x-request-id': String(req.id),
        ...(req.rateLimit ? rateLimitHeaders(req.rateLimit, options.now()) : {}),
        ...streamCorsHeaders(principal, req.headers.origin),
      });
      // The first bytes at once: the client (and any proxy) sees the stream is open without
      // waiting for the first heartbeat, and learns how long to wait before reconnecting.
      connection.write(STREAM_OPENING);
      flattenSentHeader(reply.raw);
      if (liveAtOnce) return;

      // Resuming: the replay comes through the connection's subscription, then the broadcast takes over.
      try {
        for await (const result of results) {
          const frame = renderFrame(result);
          if (!frame) break;
          connection.write(frame.text);
          if (connection.closed) return;
          if (broadcast.canTakeOver(frame.seq)) {
            broadcast.goLive(connection.member, frame.seq);
            connection.replayDone();
            return; // leaving the loop ends the connection's subscription
          }
        }
      } catch (error) {
        req.log.warn({ err: (error as Error).message }, 'stream ended');
      }
      connection.close();
    },
  });
  registerStreamPreflight(app, STREAM_PATH);
  registerMethodNotAllowed(app, STREAM_PATH, ['GET', 'OPTIONS']);

  return {
    openStreams: () => closers.size,
  };
}

let flattened = 0;

/**
 * Node keeps a response's sent header block for the connection's life, built by concatenation:
 * a rope of about 50 pieces (1.9 KB of an idle stream's heap here). Reading one character
 * makes V8 flatten it in place into one string of its length (about 0.5 KB); the pieces go.
 */
export function flattenSentHeader(res: ServerResponse): void {
  const header: unknown = (res as { _header?: unknown })._header;
  // Kept observable: an unused charCodeAt is dead code to an optimizing compiler, which then
  // neither reads the string nor flattens it.
  if (typeof header === 'string' && header.length > 0) flattened ^= header.charCodeAt(0);
}

interface StreamConnection {
  readonly member: BroadcastMember;
  readonly closed: boolean;
  write(chunk: string): void;
  close(): void;
  /** The connection's own subscription has ended (gone live, or never needed): forget it. */
  replayDone(): void;
}

/**
 * One admitted stream from the moment its response is hijacked. Its closures keep only what
 * this scope holds (the response, its slot, its timer), not the handler's GraphQL execution
 * (context, request caches, the connection's own subscription): that is let go as soon as the
 * broadcast serves the connection, and was most of an idle stream's memory when it was kept.
 */
function openConnection(input: {
  res: ServerResponse;
  log: FastifyBaseLogger;
  slot: StreamSlot | null;
  expiresInMs: number | null;
  stopReplay: () => void;
  broadcast: StreamBroadcast<PickFeedSubscription>;
  closers: Set<() => void>;
}): StreamConnection {
  const { res, log, slot, broadcast, closers } = input;
  let stopReplay: (() => void) | null = input.stopReplay;
  let closed = false;
  const writeBounded = boundedWriter(res, MAX_BUFFERED_BYTES, (buffered) => {
    log.warn({ buffered }, 'stream client too slow; disconnecting');
    close();
  });
  const write = (chunk: string): void => {
    if (!closed) writeBounded(chunk);
  };
  const member: BroadcastMember = { write };
  // A stream token's stream ends when the token expires, saying so first.
  const expiry = input.expiresInMs === null ? null : setTimeout(() => (write(STREAM_TOKEN_EXPIRED), close()), input.expiresInMs);
  expiry?.unref();
  const close = (): void => {
    if (closed) return;
    closed = true;
    if (expiry) clearTimeout(expiry);
    broadcast.remove(member);
    closers.delete(close);
    slot?.release();
    stopReplay?.();
    stopReplay = null;
    res.end();
  };
  // Joined before the headers go out: every event committed after the client sees them arrives.
  broadcast.add(member);
  closers.add(close);
  if (slot) slot.end = close;
  res.req.on('close', close);
  res.on('error', close);
  // A client that left during admission: its 'close' has been emitted already.
  if (res.destroyed || res.req.destroyed) close();
  return {
    member,
    get closed() {
      return closed;
    },
    write,
    close,
    replayDone() {
      stopReplay = null;
    },
  };
}
