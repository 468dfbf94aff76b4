import { GraphQLError } from 'graphql';
import { MINIMUM_TIER } from '../../domain/access.js';
import { ErrorCode, errorHead, InvalidParameterError } from '../../domain/errors.js';
import { fromPickSnapshot } from '../../domain/pick-shape.js';
import { pickEventStream } from '../../services/events/event-stream.js';
import type { PickEventMessage } from '../../services/events/outbox-relay.js';
import { slotOwnerOf, tooManyStreamsMessage, type StreamSlot } from '../../services/stream-slots.js';
import { builder } from '../builder.js';
import type { Context, ServerContext } from '../context.js';
import { PickRef } from './pick.js';

const SEQUENCE = /^\d{1,15}$/;
/** What the customers' pick feed carries (pickFeed, the REST stream): new picks and their availability, never settlements. */
const PICK_FEED_EVENTS = ['pick.published', 'pick.availability_changed'] as const;

function parseSequence(value: string | null | undefined): number | null {
  if (value == null) return null;
  if (!SEQUENCE.test(value)) throw new InvalidParameterError('afterSequence', 'afterSequence must be the sequence of an earlier event');
  return Number(value);
}

// Every subscriber on this instance receives the same message object: convert it once.
const recordOf = new WeakMap<PickEventMessage, ReturnType<typeof fromPickSnapshot>>();
function pickRecordOf(event: PickEventMessage) {
  let record = recordOf.get(event);
  if (!record) {
    record = fromPickSnapshot(event.pick);
    recordOf.set(event, record);
  }
  return record;
}

const PickEventRef = builder.objectRef<PickEventMessage>('PickEvent').implement({
  description: 'A pick.published, pick.settled or pick.availability_changed event.',
  fields: (t) => ({
    sequence: t.string({ description: 'Increases with every event; pass as afterSequence to resume.', resolve: (event) => String(event.seq) }),
    id: t.exposeID('id', { description: 'Event id (the webhook delivery body id).' }),
    type: t.exposeString('type'),
    createdAt: t.field({ type: 'DateTime', resolve: (event) => new Date(event.createdAt) }),
    pick: t.field({ type: PickRef, description: 'The pick as of the event.', resolve: pickRecordOf }),
  }),
});

/**
 * An API key's subscription holds one of the key's stream slots while it runs, whatever the
 * surface (src/services/stream-slots.ts). When all are held it is refused as the request's
 * answer, like a 401: HTTP 429 too_many_streams before any stream byte. A connection that holds
 * a slot of its own (the REST picks stream) takes none here.
 */
function takeStreamSlot(context: Context): StreamSlot | null {
  const { principal, services } = context;
  const owner = slotOwnerOf(principal);
  if (owner === null || services.streamSlots.isCovered(context)) return null;
  const slot = services.streamSlots.reserve(owner.apiKeyId, owner.pool);
  if (slot) return slot;
  throw new GraphQLError(tooManyStreamsMessage(owner.pool, services.streamSlots.limit(owner.pool)), {
    extensions: { code: ErrorCode.tooManyStreams, http: errorHead(ErrorCode.tooManyStreams) },
  });
}

/**
 * What ends a subscription early, and gives its slot back when it ends however it ends:
 *  - the key is revoked or changes tier (the client resubscribes and gets the new answer);
 *  - the HTTP response carrying it closes (yoga and graphql-sse put the Fastify reply in the
 *    context). Besides disconnects and shutdown this covers a subscription yoga answers 406
 *    (Accept: application/json): yoga starts it but never reads or ends it.
 */
function endsWith(context: Context, slot: StreamSlot | null): (end: () => void) => () => void {
  const { principal } = context;
  const response = (context as Context & Partial<Pick<ServerContext, 'reply'>>).reply?.raw;
  return (end) => {
    const stopWatchingAccess =
      principal.kind === 'apiKey' || principal.kind === 'streamToken'
        ? context.services.auth.onAccessChanged((apiKeyId) => {
            if (apiKeyId === principal.apiKeyId) end();
          })
        : null;
    // A stream token's subscription ends when the token expires.
    const expiry = principal.kind === 'streamToken' ? setTimeout(end, principal.remainingMs) : null;
    expiry?.unref();
    if (response?.closed) end();
    else response?.once('close', end);
    return () => {
      if (expiry) clearTimeout(expiry);
      stopWatchingAccess?.();
      response?.off('close', end);
      slot?.release();
    };
  };
}

function subscribeToEvents(context: Context, type: PickEventMessage['type'] | readonly PickEventMessage['type'][], afterSequence: string | null | undefined) {
  const afterSeq = parseSequence(afterSequence);
  const slot = takeStreamSlot(context);
  return pickEventStream(context.services.feed, { type, afterSeq, until: endsWith(context, slot) });
}

type SubscriptionFieldBuilder = Parameters<Parameters<typeof builder.subscriptionFields>[0]>[0];

/** A subscription to some of the outbox's event types, resumable with afterSequence. */
function eventSubscription(
  t: SubscriptionFieldBuilder,
  types: PickEventMessage['type'] | readonly PickEventMessage['type'][],
  description: string,
  authScopes: { tier: (typeof MINIMUM_TIER)['picksStream'] } | { admin: true },
) {
  return t.field({
    type: PickEventRef,
    description,
    authScopes,
    args: { afterSequence: t.arg.string({ description: 'Replay events after this sequence (up to 24 h or 1,000 events), then continue live.' }) },
    subscribe: (_root, args, context) => subscribeToEvents(context, types, args.afterSequence),
    resolve: (event) => event,
  });
}

const STREAM_TIER = { tier: MINIMUM_TIER.picksStream };

builder.subscriptionFields((t) => ({
  pickPublished: eventSubscription(t, 'pick.published', 'New visible picks as they are published or first approved. Enterprise keys and admin.', STREAM_TIER),
  pickAvailabilityChanged: eventSubscription(
    t,
    'pick.availability_changed',
    "A published pick's availability changed status (its `availability`: available, moved, gone), at most once per pick per odds poll. Enterprise keys and admin.",
    STREAM_TIER,
  ),
  pickFeed: eventSubscription(
    t,
    PICK_FEED_EVENTS,
    'pickPublished and pickAvailabilityChanged together, in sequence order: what GET /api/v1/picks/stream carries (one afterSequence resumes both). Enterprise keys and admin.',
    STREAM_TIER,
  ),
  pickSettled: eventSubscription(t, 'pick.settled', 'Settlements as they happen. Admin only.', { admin: true }),
}));
