import { MINIMUM_TIER } from '../../domain/access.js';
import { InvalidParameterError } from '../../domain/errors.js';
import { fromPickSnapshot } from '../../domain/pick-view.js';
import { pickEventStream } from '../../services/events/event-stream.js';
import type { PickEventMessage } from '../../services/events/outbox-relay.js';
import { builder } from '../builder.js';
import type { Context } from '../context.js';
import { PickRef } from './pick.js';

const SEQUENCE = /^\d{1,15}$/;

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
  description: 'A pick.published or pick.settled event.',
  fields: (t) => ({
    sequence: t.string({ description: 'Increases with every event; pass as afterSequence to resume.', resolve: (event) => String(event.seq) }),
    id: t.exposeID('id', { description: 'Event id (the webhook delivery body id).' }),
    type: t.exposeString('type'),
    createdAt: t.field({ type: 'DateTime', resolve: (event) => new Date(event.createdAt) }),
    pick: t.field({ type: PickRef, description: 'The pick as of the event.', resolve: pickRecordOf }),
  }),
});

/** An API key's subscription ends when the key is revoked or changes tier (the client resubscribes and gets the new answer). */
function untilAccessChanges(context: Context): ((end: () => void) => () => void) | undefined {
  const { principal } = context;
  if (principal.kind !== 'apiKey') return undefined;
  return (end) =>
    context.services.auth.onAccessChanged((apiKeyId) => {
      if (apiKeyId === principal.apiKeyId) end();
    });
}

const resumeArg = (t: Parameters<Parameters<typeof builder.subscriptionFields>[0]>[0]) =>
  t.arg.string({ description: 'Replay events after this sequence (up to 24 h or 1,000 events), then continue live.' });

builder.subscriptionFields((t) => ({
  pickPublished: t.field({
    type: PickEventRef,
    description: 'New visible picks as they are published or first approved. Enterprise keys and admin.',
    authScopes: { tier: MINIMUM_TIER.picksStream },
    args: { afterSequence: resumeArg(t) },
    subscribe: (_root, args, context) =>
      pickEventStream(context.services.feed, {
        type: 'pick.published',
        afterSeq: parseSequence(args.afterSequence),
        until: untilAccessChanges(context),
      }),
    resolve: (event) => event,
  }),
  pickSettled: t.field({
    type: PickEventRef,
    description: 'Settlements as they happen. Admin only.',
    authScopes: { admin: true },
    args: { afterSequence: resumeArg(t) },
    subscribe: (_root, args, context) =>
      pickEventStream(context.services.feed, { type: 'pick.settled', afterSeq: parseSequence(args.afterSequence), until: untilAccessChanges(context) }),
    resolve: (event) => event,
  }),
}));
