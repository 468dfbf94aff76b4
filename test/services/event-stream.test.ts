/**
 * A subscriber's iterator over the pick feed: order, de-duplication, type filter, bounded
 * buffering (a slow subscriber is ended, memory does not grow) and clean-up on return().
 */
import { describe, expect, it } from 'vitest';
import { ManualClock } from '../../src/domain/clock.js';
import type { PickSnapshot } from '../../src/domain/pick-shape.js';
import { BusChannel } from '../../src/services/events/event-bus.js';
import { pickEventStream, SlowSubscriberError } from '../../src/services/events/event-stream.js';
import { MemoryEventBus } from '../../src/services/events/memory-bus.js';
import type { PickEventMessage } from '../../src/services/events/outbox-relay.js';
import { FANOUT_SLICE, PickFeed } from '../../src/services/events/pick-feed.js';
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

describe('PickFeed fan-out', () => {
  it('ends when its `until` signal fires, and drops the signal on return()', async () => {
    const { feed } = await setup();
    let end: (() => void) | null = null;
    let cleanedUp = 0;
    const until = (signal: () => void) => {
      end = signal;
      return () => void (cleanedUp += 1);
    };
    const stream = pickEventStream(feed, { type: 'pick.published', until });
    expect(feed.listenerCount).toBe(1);
    const pending = stream.next();
    end!();
    expect(await pending).toEqual({ value: undefined, done: true });
    expect(feed.listenerCount).toBe(0);
    expect(cleanedUp).toBe(1);

    const other = pickEventStream(feed, { type: 'pick.published', until });
    await other.return!();
    expect(cleanedUp).toBe(2);
  });

  it('delivers every event to every listener in order, yielding the event loop between slices', async () => {
    const { feed, send } = await setup();
    const count = FANOUT_SLICE * 2 + 17;
    const received: number[][] = Array.from({ length: count }, () => []);
    const stops = received.map((inbox) => feed.listen((m) => inbox.push(m.seq)));
    // A macrotask queued before delivery runs before the last slice: the fan-out is not one block.
    let macrotaskRanAfter = -1;
    const bus = (feed as unknown as { bus: MemoryEventBus }).bus;
    await bus.publish(BusChannel.pickEvents, JSON.stringify(message(1)));
    await bus.publish(BusChannel.pickEvents, JSON.stringify(message(2)));
    setImmediate(() => (macrotaskRanAfter = received.filter((inbox) => inbox.length > 0).length));
    await send(message(3));
    for (let i = 0; i < 20; i += 1) await new Promise((resolve) => setImmediate(resolve));
    expect(received.every((inbox) => inbox.join() === '1,2,3')).toBe(true);
    expect(macrotaskRanAfter).toBeGreaterThan(0);
    expect(macrotaskRanAfter).toBeLessThan(count);
    stops.forEach((stop) => stop());
    expect(feed.listenerCount).toBe(0);
  });

  it('a listener that leaves during a fan-out gets nothing more; one that throws does not stop the others', async () => {
    const { feed, send } = await setup();
    const late: number[] = [];
    const others: number[] = [];
    let stopLate = () => {};
    // Served in the first slice: removes the listener that sits in the second slice.
    feed.listen(() => stopLate());
    feed.listen(() => {
      throw new Error('boom');
    });
    for (let i = 0; i < FANOUT_SLICE; i += 1) feed.listen((m) => others.push(m.seq));
    stopLate = feed.listen((m) => late.push(m.seq));
    await send(message(1));
    for (let i = 0; i < 5; i += 1) await new Promise((resolve) => setImmediate(resolve));
    expect(others).toHaveLength(FANOUT_SLICE);
    expect(late).toEqual([]);
  });
});
