/**
 * A subscriber's iterator over the pick feed: order, de-duplication, type filter, bounded
 * buffering (a slow subscriber is ended, memory does not grow) and clean-up on return().
 */
import { describe, expect, it } from 'vitest';
import { ManualClock } from '../../src/domain/clock.js';
import type { PickSnapshot } from '../../src/domain/pick-view.js';
import { BusChannel } from '../../src/services/events/event-bus.js';
import { pickEventStream, SlowSubscriberError } from '../../src/services/events/event-stream.js';
import { MemoryEventBus } from '../../src/services/events/memory-bus.js';
import type { PickEventMessage } from '../../src/services/events/outbox-relay.js';
import { PickFeed } from '../../src/services/events/pick-feed.js';
import type { Orm } from '../../src/persistence/orm.js';

function message(seq: number, type: PickEventMessage['type'] = 'pick.published'): PickEventMessage {
  return { seq, id: `event-${seq}`, type, createdAt: '2026-11-22T12:00:00.000Z', pick: { id: `pick-${seq}` } as PickSnapshot };
}

async function setup() {
  const bus = new MemoryEventBus();
  // Replay is not used here, so the feed never touches the database.
  const feed = new PickFeed(null as unknown as Orm, bus, new ManualClock('2026-11-22T12:00:00Z'));
  await feed.start();
  const send = async (m: PickEventMessage) => {
    await bus.publish(BusChannel.pickEvents, JSON.stringify(m));
    await new Promise((resolve) => setImmediate(resolve));
  };
  return { feed, send };
}

describe('pickEventStream', () => {
  it('yields live events of its type in order and drops repeats', async () => {
    const { feed, send } = await setup();
    const stream = pickEventStream(feed, { type: 'pick.published' });
    await send(message(1));
    await send(message(2, 'pick.settled'));
    await send(message(3));
    await send(message(3));
    await send(message(1));
    await send(message(4));
    const seen: number[] = [];
    for (let i = 0; i < 3; i += 1) seen.push((await stream.next()).value!.seq);
    expect(seen).toEqual([1, 3, 4]);
    await stream.return!();
  });

  it('ends a subscriber that falls more than queueLimit events behind', async () => {
    const { feed, send } = await setup();
    const stream = pickEventStream(feed, { type: 'pick.published', queueLimit: 5 });
    for (let seq = 1; seq <= 8; seq += 1) await send(message(seq));
    await expect(stream.next()).rejects.toBeInstanceOf(SlowSubscriberError);
    expect(feed.listenerCount).toBe(0);
  });

  it('unsubscribes on return() and finishes a pending next()', async () => {
    const { feed } = await setup();
    const stream = pickEventStream(feed, { type: 'pick.published' });
    expect(feed.listenerCount).toBe(1);
    const pending = stream.next();
    await stream.return!();
    expect(await pending).toEqual({ value: undefined, done: true });
    expect(feed.listenerCount).toBe(0);
  });
});
