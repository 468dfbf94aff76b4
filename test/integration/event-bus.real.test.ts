/**
 * Redis pub/sub recovery (real-services suite): the subscriber connection dies and the bus
 * resubscribes by itself.
 */
import { randomUUID } from 'node:crypto';
import { Redis } from 'ioredis';
import { afterEach, describe, expect, it } from 'vitest';
import { RedisEventBus } from '../../src/services/events/redis-bus.js';

const redisUrl = process.env.REDIS_URL!.trim();
const opened: RedisEventBus[] = [];
afterEach(async () => {
  await Promise.all(opened.splice(0).map((bus) => bus.close()));
});

describe('redis event bus recovery', () => {
  it('resubscribes by itself after its subscriber connection is killed', async () => {
    const name = `bus-test-${randomUUID().slice(0, 8)}`;
    const namespace = randomUUID();
    const publisher = new RedisEventBus(redisUrl, { namespace });
    const subscriber = new RedisEventBus(redisUrl, { namespace, connectionName: name });
    opened.push(publisher, subscriber);
    expect(await publisher.ready()).toBe(true);
    expect(await subscriber.ready()).toBe(true);
    const channel = `test:${randomUUID()}`;
    const inbox: string[] = [];
    await subscriber.subscribe(channel, (message) => inbox.push(message));
    await publisher.publish(channel, 'before');
    await new Promise((resolve) => setTimeout(resolve, 100));
    expect(inbox).toEqual(['before']);
    const admin = new Redis(redisUrl);
    try {
      // Kill this bus's subscriber connection: what a Redis restart looks like to the client.
      const clients = (await admin.call('CLIENT', 'LIST', 'TYPE', 'pubsub')) as string;
      const ids = clients
        .split('\n')
        .filter((line) => line.includes(`name=${name}-sub`))
        .map((line) => /\bid=(\d+)/.exec(line)?.[1]);
      expect(ids).toHaveLength(1);
      await admin.call('CLIENT', 'KILL', 'ID', ids[0]!);
    } finally {
      admin.disconnect();
    }
    const deadline = Date.now() + 5_000;
    while (!inbox.includes('after') && Date.now() < deadline) {
      await publisher.publish(channel, 'after').catch(() => undefined);
      await new Promise((resolve) => setTimeout(resolve, 100));
    }
    expect(inbox).toContain('after');
  });

  it('keeps deployments apart: a bus of another namespace on the same Redis sees nothing', async () => {
    const mine = randomUUID();
    const publisher = new RedisEventBus(redisUrl, { namespace: mine });
    const sameDeployment = new RedisEventBus(redisUrl, { namespace: mine });
    const otherDeployment = new RedisEventBus(redisUrl, { namespace: randomUUID() });
    opened.push(publisher, sameDeployment, otherDeployment);
    for (const bus of opened) expect(await bus.ready()).toBe(true);
    const same: string[] = [];
    const other: string[] = [];
    await sameDeployment.subscribe('picks:events', (message) => same.push(message));
    await otherDeployment.subscribe('picks:events', (message) => other.push(message));
    await publisher.publish('picks:events', 'hello');
    const deadline = Date.now() + 2_000;
    while (same.length === 0 && Date.now() < deadline) await new Promise((resolve) => setTimeout(resolve, 20));
    await new Promise((resolve) => setTimeout(resolve, 100));
    expect(same).toEqual(['hello']);
    expect(other).toEqual([]);
  });
});
