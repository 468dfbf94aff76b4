/**
 * The feed across a cut-off bus (what a Redis restart is to pub/sub): events committed while
 * the subscription was down are delivered from the outbox once the bus has re-subscribed, in
 * order and once, and events from before the feed started are not.
 */
import { afterEach, describe, expect, it } from 'vitest';
import { systemClock } from '../../src/domain/clock.js';
import { BusChannel } from '../../src/services/events/event-bus.js';
import { MemoryEventBus } from '../../src/services/events/memory-bus.js';
import type { PickEventMessage } from '../../src/services/events/outbox-relay.js';
import { PickFeed } from '../../src/services/events/pick-feed.js';
import { createTestApp, type TestApp } from '../helpers/app.js';
import { pickInput, PUBLISH, SETTLE } from '../helpers/fixtures.js';

/** A bus that can be cut off and reports its re-subscription, like the Redis one. */
class CuttableBus extends MemoryEventBus {
  private readonly resubscribed = new Set<() => void>();
  onResubscribed(listener: () => void): () => void {
    this.resubscribed.add(listener);
    return () => void this.resubscribed.delete(listener);
  }
  reconnect(): void {
    for (const listener of this.resubscribed) listener();
  }
}

let t: TestApp | null = null;
afterEach(async () => {
  await t?.close();
  t = null;
});

async function publish(app: TestApp, team: string): Promise<string> {
  const result = await app.graphql<{ publishPick: { id: string } }>(PUBLISH, { input: pickInput({ homeTeam: team, selection: team }) });
  return result.data!.publishPick.id;
}

describe('PickFeed catch-up after the bus re-subscribed', () => {
  it('delivers what was committed while cut off, in order, once, and nothing from before it started', async () => {
    t = await createTestApp();
    const before = await publish(t, 'Before FC');
    // This feed's bus never sees the app's relay: everything published now is "missed".
    const bus = new CuttableBus();
    const feed = new PickFeed(t.runtime.orm, bus, systemClock);
    await feed.start();
    const seen: PickEventMessage[] = [];
    feed.listen((message) => seen.push(message));

    const missed = [await publish(t, 'Missed 1 FC'), await publish(t, 'Missed 2 FC')];
    await t.graphql(SETTLE, { input: { id: missed[0], result: 'WON', closingOdds: 2.1 } });
    expect(seen).toEqual([]);

    bus.reconnect();
    await feed.catchUp();
    expect(seen.map((m) => [m.type, m.pick.id])).toEqual([
      ['pick.published', missed[0]],
      ['pick.published', missed[1]],
      ['pick.settled', missed[0]],
    ]);
    expect(seen.map((m) => m.pick.id)).not.toContain(before);
    const seqs = seen.map((m) => m.seq);
    expect([...seqs].sort((x, y) => x - y)).toEqual(seqs);

    // The relay publishing the same events later, and another reconnect, add nothing.
    for (const message of seen.slice()) await bus.publish(BusChannel.pickEvents, JSON.stringify(message));
    await new Promise((resolve) => setImmediate(resolve));
    bus.reconnect();
    await feed.catchUp();
    expect(seen).toHaveLength(3);

    // Live delivery goes on after the catch-up.
    const live = { ...seen[2]!, seq: seen[2]!.seq + 1, id: 'live' };
    await bus.publish(BusChannel.pickEvents, JSON.stringify(live));
    await new Promise((resolve) => setImmediate(resolve));
    expect(seen.at(-1)?.id).toBe('live');
    await feed.close();
  });
});
