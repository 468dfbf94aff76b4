/**
 * The event bus contract, on the in-memory bus always and on Redis pub/sub when REDIS_URL is
 * set (two connections, as two instances would have), including resubscription after the
 * subscriber connection is killed.
 */
import { randomUUID } from 'node:crypto';
import { afterEach, describe, expect, it } from 'vitest';
import type { EventBus } from '../../src/services/events/event-bus.js';
import { MemoryEventBus } from '../../src/services/events/memory-bus.js';
import { RedisEventBus } from '../../src/services/events/redis-bus.js';

const redisUrl = process.env.REDIS_URL?.trim();
const opened: EventBus[] = [];

afterEach(async () => {
  await Promise.all(opened.splice(0).map((bus) => bus.close()));
});

function received(bus: EventBus, channel: string): Promise<{ messages: string[]; next: (count: number) => Promise<string[]> }> {
  const messages: string[] = [];
  const waiters: (() => void)[] = [];
  return bus
    .subscribe(channel, (message) => {
      messages.push(message);
      for (const waiter of waiters.splice(0)) waiter();
    })
    .then(() => ({
      messages,
      next: (count: number) =>
        new Promise<string[]>((resolve, reject) => {
          const timer = setTimeout(() => reject(new Error(`only ${messages.length} of ${count} messages`)), 3_000);
          const check = () => {
            if (messages.length >= count) {
              clearTimeout(timer);
              resolve(messages);
            } else waiters.push(check);
          };
          check();
        }),
    }));
}

const factories: [string, () => [EventBus, EventBus]][] = [
  [
    'memory',
    () => {
      const bus = new MemoryEventBus();
      return [bus, bus];
    },
  ],
];
if (redisUrl) {
  factories.push([
    'redis',
    () => {
      const namespace = randomUUID();
      return [new RedisEventBus(redisUrl, { namespace }), new RedisEventBus(redisUrl, { namespace })];
    },
  ]);
}

async function ready(...buses: EventBus[]): Promise<void> {
  for (const bus of buses) if (bus instanceof RedisEventBus) expect(await bus.ready()).toBe(true);
}

describe.each(factories)('%s event bus', (_name, create) => {
  it('delivers published messages in order to every subscriber, and stops after unsubscribe', async () => {
    const [publisher, subscriber] = create();
    opened.push(publisher, subscriber);
    await ready(publisher, subscriber);
    const channel = `test:${randomUUID()}`;
    const first = await received(subscriber, channel);
    const second = await received(subscriber, channel);
    for (let i = 0; i < 20; i += 1) await publisher.publish(channel, String(i));
    expect(await first.next(20)).toEqual(Array.from({ length: 20 }, (_, i) => String(i)));
    expect(await second.next(20)).toHaveLength(20);
  });

  it('does not cross channels', async () => {
    const [publisher, subscriber] = create();
    opened.push(publisher, subscriber);
    await ready(publisher, subscriber);
    const a = await received(subscriber, `test:${randomUUID()}`);
    await publisher.publish(`test:${randomUUID()}`, 'elsewhere');
    await new Promise((resolve) => setTimeout(resolve, 100));
    expect(a.messages).toEqual([]);
  });
});

