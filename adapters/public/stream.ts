/**
 * GET /api/public/picks/stream (docs/API.md, "Public live feed"): anonymous, CORS-open Server-Sent
 * Events for the service's own pages and embeds. A published pick is sent as `pick.published`
 * with the public pick shape once PUBLIC_STREAM_DELAY_SECONDS have passed since its publication
 * (by default the public endpoint's CDN age, so the feed gives away nothing the endpoint does
 * not), and only when it is then among the top 50 of today's public picks: a pick held or
 * withdrawn before then is never sent. Frames carry the event's sequence as `id`; a reconnect
 * with Last-Event-ID (or `last_event_id`) replays this instance's recent frames after it.
 */
import { clientAddressKey } from '../../src/domain/client-address.js';
import type { FastifyInstance, FastifyReply } from 'fastify';
import type { GraphQLSchema } from 'graphql';
import type { Clock } from '../../src/domain/clock.js';
import { ErrorCode } from '../../src/domain/errors.js';
import type { Context } from '../../src/graphql/context.js';
import type { Yoga } from '../../src/graphql/yoga.js';
import { sendError } from '../../src/server/http-errors.js';
import { PublicPickEventsDocument, TodayPicksDocument, type PublicPickEventsSubscription } from '../common/generated/graphql.js';
import { registerMethodNotAllowed } from '../common/method-not-allowed.js';
import { openApiRouteSchema } from '../common/openapi.js';
import { openInternalOperation, prepareOperation } from '../common/operations.js';
import { publicPick } from '../common/v1-json.js';
import { followSubscription, type Follower } from '../stream/follow.js';
import { boundedWriter } from '../stream/bounded-writer.js';
import { MAX_BUFFERED_BYTES, STREAM_OPENING } from '../stream/plugin.js';
import { PUBLIC_STREAM_EVENT_NAME } from '../../src/domain/stream-events.js';

export const PUBLIC_STREAM_PATH = '/api/public/picks/stream';
/** The public endpoint's limit: a pick is sent only when it is among these at its delay's end. */
export const PUBLIC_STREAM_TOP = 50;
/** How often due picks are looked for: a pick is sent at most this long after its delay ends. */
const RELEASE_TICK_MS = 1_000;
/** Frames kept for resuming (this instance's). */
const REPLAY_FRAMES = 1_000;
const LAST_EVENT_ID = /^\d{1,15}$/;
const CORS_HEADERS = {
  'access-control-allow-origin': '*',
  'access-control-allow-methods': 'GET, OPTIONS',
  'access-control-allow-headers': 'Last-Event-ID',
  'access-control-max-age': '86400',
};

export interface PublicStreamOptions {
  delaySeconds: number;
  perAddress: number;
  maxStreams: number;
  heartbeatSeconds: number;
  clock: Clock;
  internalContext: Context;
}

declare module 'fastify' {
  interface FastifyInstance {
    /** Open GET /api/public/picks/stream connections on this instance (set by buildApp). */
    openPublicStreams: () => number;
  }
}

interface Frame {
  seq: number;
  text: string;
}

export function registerPublicStream(app: FastifyInstance, yoga: Yoga, schema: GraphQLSchema, options: PublicStreamOptions): { openStreams(): number } {
  const events = prepareOperation(schema, PublicPickEventsDocument);
  const today = prepareOperation(schema, TodayPicksDocument);
  const internal = openInternalOperation(yoga, options.internalContext);
  const clients = new Set<(text: string) => void>();
  const byAddress = new Map<string, number>();
  const recent: Frame[] = [];
  // Published picks waiting for their delay to end, in publication order; checked against the
  // service's clock every tick.
  const pending: { seq: number; pickId: string; dueAt: number }[] = [];
  let releasing = false;
  const ticker = setInterval(() => void releaseDue(), RELEASE_TICK_MS);
  ticker.unref();
  // One timer beats for every feed of the instance.
  const heartbeat = setInterval(() => {
    for (const write of clients) write(': heartbeat\n\n');
  }, options.heartbeatSeconds * 1000);
  heartbeat.unref();
  const closers = new Set<() => void>();
  let follower: Follower | null = null;

  function send(frame: Frame): void {
    recent.push(frame);
    if (recent.length > REPLAY_FRAMES) recent.shift();
    for (const write of clients) write(frame.text);
  }

  /** At the delay's end: sent when the pick is then among today's top public picks. */
  async function release(seq: number, pickId: string): Promise<void> {
    // A context of its own per check: a context's todayPicks is read once (per request, by design).
    const result = await openInternalOperation(yoga, { ...options.internalContext }).execute(today, { limit: PUBLIC_STREAM_TOP });
    const pick = result.data?.todayPicks.find((node) => node.id === pickId);
    if (!pick) return;
    send({ seq, text: `id: ${seq}\nevent: ${PUBLIC_STREAM_EVENT_NAME}\ndata: ${JSON.stringify(publicPick(pick))}\n\n` });
  }

  function schedule(event: PublicPickEventsSubscription['pickPublished']): void {
    pending.push({ seq: Number(event.sequence), pickId: event.pick.id, dueAt: new Date(event.createdAt).getTime() + options.delaySeconds * 1000 });
  }

  /** Sends, in order, the picks whose delay has ended (one tick at a time). */
  async function releaseDue(): Promise<void> {
    if (releasing) return;
    releasing = true;
    try {
      const now = options.clock.now().getTime();
      while (pending.length > 0 && pending[0]!.dueAt <= now) {
        const { seq, pickId } = pending.shift()!;
        await release(seq, pickId).catch((error: unknown) => app.log.warn({ err: (error as Error).message, pickId }, 'public stream: could not check a pick'));
      }
    } finally {
      releasing = false;
    }
  }

  app.addHook('onReady', async () => {
    follower = await followSubscription({
      open: () => internal.subscribe(events, {}),
      onResult: (result) => {
        const event = (result.data as PublicPickEventsSubscription | undefined)?.pickPublished;
        if (!event) throw new Error(result.errors?.[0]?.message ?? 'a subscription result without an event');
        schedule(event);
      },
      onError: (error) => app.log.warn({ err: (error as Error).message }, 'public stream resubscribing'),
    });
  });
  app.addHook('preClose', async () => {
    for (const close of [...closers]) close();
    clearInterval(ticker);
    clearInterval(heartbeat);
    await follower?.stop();
  });

  app.route({
    method: 'GET',
    url: PUBLIC_STREAM_PATH,
    schema: openApiRouteSchema({
      operationId: 'streamPublicPicks',
      summary: 'Public live feed of top picks (anonymous, Server-Sent Events)',
      description:
        `No key; any origin. A published pick is sent ${'`PUBLIC_STREAM_DELAY_SECONDS`'} (default 300) after its publication when it is then among the top ${PUBLIC_STREAM_TOP} of today's public picks; held or withdrawn picks never. ` +
        'Resume with Last-Event-ID or `last_event_id` (this server\'s last 1,000 frames). At most 4 feeds per client address (429 too_many_streams) and 10,000 per server (503).',
      url: PUBLIC_STREAM_PATH,
      params: [
        { name: 'last_event_id', in: 'query', type: 'string', variable: 'lastEventId', description: 'As the Last-Event-ID header, for a fresh EventSource; the header wins when both are sent.' },
      ],
      requestHeaders: {
        'Last-Event-ID': { description: 'The `id` of the last event received. Digits only, else 400 invalid_parameter.', schema: { type: 'string', pattern: '^[0-9]{1,15}$' } },
      },
      responseSchema: {
        type: 'string',
        description: 'UTF-8 text/event-stream framed as the picks stream; each `data` is a PublicPick on one line.',
      },
      successDescription: 'The event stream; it stays open until the client closes it.',
      successMediaType: 'text/event-stream',
      successExample: `: stream open\nretry: 3000\n\nid: 1042\nevent: pick.published\ndata: {"id":"0b7f3c9e-5d2a-4e61-9a8b-3c4d5e6f7a81"}\n\n: heartbeat\n\n`,
      successHeaders: {
        'Access-Control-Allow-Origin': { description: 'Any origin, without credentials.', schema: { type: 'string', const: '*' }, required: true },
      },
      errors: ['invalid_parameter', 'too_many_streams', 'service_unavailable'],
      anonymous: true,
    }),
    handler: (req, reply) => {
      const sendPublic = (code: ErrorCode, message: string) => sendError(reply.headers({ ...CORS_HEADERS, 'cache-control': 'no-store' }), code, message);
      const query = req.query as Record<string, unknown>;
      const headerId = req.headers['last-event-id'];
      const lastEventId = headerId ?? query.last_event_id;
      if (lastEventId !== undefined && (typeof lastEventId !== 'string' || !LAST_EVENT_ID.test(lastEventId))) {
        return sendPublic(ErrorCode.invalidParameter, `${headerId === undefined ? 'last_event_id' : 'Last-Event-ID'} must be the id of an earlier event.`);
      }
      if (closers.size >= options.maxStreams) {
        return sendPublic(ErrorCode.serviceUnavailable, 'The public live feed is at capacity on this server; retry shortly.');
      }
      // One client per IPv6 /64, as every per-address allowance counts.
      const address = clientAddressKey(req.ip);
      const held = byAddress.get(address) ?? 0;
      if (held >= options.perAddress) {
        return sendPublic(ErrorCode.tooManyStreams, `At most ${options.perAddress} public live feeds per client address; close one first.`);
      }
      byAddress.set(address, held + 1);
      return open(reply, address, lastEventId === undefined ? null : Number(lastEventId));
    },
  });

  function open(reply: FastifyReply, address: string, after: number | null): void {
    reply.hijack();
    const res = reply.raw;
    let closed = false;
    const close = () => {
      if (closed) return;
      closed = true;
      clients.delete(write);
      closers.delete(close);
      const held = (byAddress.get(address) ?? 1) - 1;
      if (held <= 0) byAddress.delete(address);
      else byAddress.set(address, held);
      res.end();
    };
    const writeBounded = boundedWriter(res, MAX_BUFFERED_BYTES, () => close());
    function write(text: string): void {
      if (!closed) writeBounded(text);
    }
    closers.add(close);
    res.on('close', close);
    res.on('error', close);
    res.writeHead(200, {
      ...CORS_HEADERS,
      'content-type': 'text/event-stream; charset=utf-8',
      'cache-control': 'no-cache',
      connection: 'keep-alive',
      'x-accel-buffering': 'no',
    });
    write(STREAM_OPENING);
    if (after !== null) for (const frame of recent) if (frame.seq > after) write(frame.text);
    clients.add(write);
  }

  app.options(PUBLIC_STREAM_PATH, { schema: { hide: true } }, async (_req, reply) => reply.status(204).headers(CORS_HEADERS).send());
  registerMethodNotAllowed(app, PUBLIC_STREAM_PATH, ['GET', 'OPTIONS']);
  return { openStreams: () => closers.size };
}
