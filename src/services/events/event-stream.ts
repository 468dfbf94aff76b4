/**
 * One subscriber's view of the pick feed as an async iterator: replay after a sequence
 * number first (resume), then live events, without duplicates or gaps. Live events that
 * arrive during the replay query are buffered and de-duplicated by seq. The buffer is
 * bounded: a subscriber that falls too far behind is ended rather than letting memory grow.
 */
import type { EventType } from '../../persistence/entities/outbox-event.js';
import type { PickEventMessage } from './outbox-relay.js';
import type { PickFeed } from './pick-feed.js';

export const SUBSCRIBER_QUEUE_LIMIT = 1_000;

export class SlowSubscriberError extends Error {
  constructor() {
    super('The subscriber fell too far behind and was disconnected.');
    this.name = 'SlowSubscriberError';
  }
}

export interface PickEventStreamOptions {
  /** The event types the subscriber receives, in sequence order (one or several). */
  type: EventType | readonly EventType[];
  afterSeq?: number | null;
  queueLimit?: number;
  /**
   * Ends the stream early: called with `end` at once; returns its own clean-up. Used to end a
   * subscriber whose API key is revoked or changes tier.
   */
  until?: (end: () => void) => () => void;
}

export function pickEventStream(feed: PickFeed, options: PickEventStreamOptions): AsyncIterableIterator<PickEventMessage> {
  const limit = options.queueLimit ?? SUBSCRIBER_QUEUE_LIMIT;
  const queue: PickEventMessage[] = [];
  let waiting: ((result: IteratorResult<PickEventMessage>) => void) | null = null;
  let failed: ((error: Error) => void) | null = null;
  let overflow = false;
  let done = false;
  let lastSeq = options.afterSeq ?? 0;
  let replaying = options.afterSeq != null;
  const types: readonly EventType[] = typeof options.type === 'string' ? [options.type] : options.type;

  const stopListening = feed.listen((message) => {
    if (done || !types.includes(message.type)) return;
    if (waiting && !replaying && queue.length === 0) {
      if (message.seq <= lastSeq) return;
      lastSeq = message.seq;
      const resolve = waiting;
      waiting = null;
      failed = null;
      resolve({ value: message, done: false });
      return;
    }
    if (queue.length >= limit) {
      overflow = true;
      failed?.(new SlowSubscriberError());
      return;
    }
    queue.push(message);
  });

  const replayed: Promise<void> = replaying
    ? feed.replay(types, options.afterSeq ?? 0).then((missed) => {
        // Replayed events go first; live ones buffered meanwhile follow, minus duplicates.
        queue.unshift(...missed);
        replaying = false;
      })
    : Promise.resolve();

  let stopUntil: (() => void) | null = null;
  const finish = () => {
    done = true;
    stopUntil?.();
    stopListening();
    queue.length = 0;
    waiting?.({ value: undefined, done: true });
    waiting = null;
  };

  stopUntil = options.until?.(() => finish()) ?? null;
  if (done) stopUntil?.();

  const iterator: AsyncIterableIterator<PickEventMessage> = {
    async next() {
      await replayed;
      if (overflow) {
        finish();
        throw new SlowSubscriberError();
      }
      while (queue.length > 0) {
        const message = queue.shift()!;
        if (message.seq <= lastSeq) continue;
        lastSeq = message.seq;
        return { value: message, done: false };
      }
      if (done) return { value: undefined, done: true };
      return new Promise<IteratorResult<PickEventMessage>>((resolve, reject) => {
        waiting = resolve;
        failed = (error) => {
          finish();
          reject(error);
        };
      });
    },
    async return() {
      finish();
      return { value: undefined, done: true };
    },
    async throw(error?: unknown) {
      finish();
      throw error;
    },
    [Symbol.asyncIterator]() {
      return iterator;
    },
  };
  return iterator;
}
