/**
 * The relay when the bus refuses to publish (Redis down): the webhook fan-out of the batch
 * commits anyway, the batch stays unrelayed, and it is published and marked relayed, without
 * a second delivery, once the bus answers again. And a commit's kick that arrives during a
 * pass is not lost.
 */
import { afterEach, describe, expect, it } from 'vitest';
import { MemoryEventBus } from '../../src/services/events/memory-bus.js';
import { OutboxRelay, RelayPublishError } from '../../src/services/events/outbox-relay.js';
import { createTestApp, type TestApp } from '../helpers/app.js';
import { CREATE_KEY, pickInput, PUBLISH } from '../helpers/fixtures.js';
import { waitUntil } from '../helpers/processes.js';

class FlakyBus extends MemoryEventBus {
  down = true;
  readonly published: string[] = [];
  override async publish(channel: string, message: string): Promise<void> {
    if (this.down) throw new Error('Connection is closed.');
    this.published.push(message);
    await super.publish(channel, message);
  }
}

let t: TestApp | null = null;
afterEach(async () => {
  await t?.close();
  t = null;
});

describe('OutboxRelay with the bus down', () => {
  it('commits the webhook fan-out without the bus and relays the batch once the bus is back', async () => {
    t = await createTestApp({ env: { WEBHOOK_HOST_OVERRIDES: 'hooks.test=127.0.0.1' }, runtime: { startDispatcher: false } });
    await t.runtime.relay.stop();
    const key = (await t.graphql<{ createApiKey: { key: string } }>(CREATE_KEY, { input: { tier: 'GROWTH' } })).data!.createApiKey.key;
    const created = await t.graphql(
      `mutation($input: CreateWebhookSubscriptionInput!) { createWebhookSubscription(input: $input) { subscription { id } } }`,
      { input: { url: 'https://hooks.test:8443/in', events: ['PICK_PUBLISHED'] } },
      `Bearer ${key}`,
    );
    expect(created.errors).toBeUndefined();
    const pick = (await t.graphql<{ publishPick: { id: string } }>(PUBLISH, { input: pickInput({ homeTeam: 'Down FC', selection: 'Down FC' }) })).data!.publishPick.id;

    const bus = new FlakyBus();
    const committed: number[] = [];
    const services = t.runtime.services;
    const relay = new OutboxRelay(t.runtime.orm, bus, {
      onBatch: async (em, messages) => void (await services.webhooks.fanOut(em, messages)),
      onCommitted: (messages) => committed.push(messages.length),
    });
    const em = () => t!.runtime.orm.em.fork();
    const count = async (sql: string) => Number((await em().execute<{ n: string }[]>(sql))[0]!.n);

    await expect(relay.relayOnce()).rejects.toBeInstanceOf(RelayPublishError);
    // Webhooks do not wait for the bus: the delivery exists (and the dispatcher was told) ...
    expect(await count('select count(*) as n from webhook_deliveries')).toBe(1);
    expect(committed).toEqual([1]);
    // ... while the event stays in the outbox for the bus.
    expect(await count('select count(*) as n from outbox_events where relayed_at is null')).toBe(1);

    // Still down: trying again adds no second delivery.
    await expect(relay.relayOnce()).rejects.toBeInstanceOf(RelayPublishError);
    expect(await count('select count(*) as n from webhook_deliveries')).toBe(1);

    bus.down = false;
    expect(await relay.relayOnce()).toBe(1);
    expect(bus.published.map((raw) => (JSON.parse(raw) as { pick: { id: string } }).pick.id)).toEqual([pick]);
    expect(await count('select count(*) as n from outbox_events where relayed_at is null')).toBe(0);
    expect(await count('select count(*) as n from webhook_deliveries')).toBe(1);
    expect(await relay.relayOnce()).toBe(0);
  });
});

/** A relay whose first pass, once it has relayed its batch, waits for `release` before it ends. */
class HeldRelay extends OutboxRelay {
  passes = 0;
  private releaseFirst: () => void = () => undefined;
  private readonly firstHeld = new Promise<void>((resolve) => (this.releaseFirst = resolve));
  private markFirstRelayed: () => void = () => undefined;
  readonly firstRelayed = new Promise<void>((resolve) => (this.markFirstRelayed = resolve));

  release(): void {
    this.releaseFirst();
  }

  override async relayOnce(): Promise<number> {
    const relayed = await super.relayOnce();
    this.passes += 1;
    if (this.passes === 1) {
      this.markFirstRelayed();
      await this.firstHeld;
    }
    return relayed;
  }
}

describe('OutboxRelay kicked during a pass', () => {
  it('relays an event committed while a pass was under way right after that pass, not at the next tick', async () => {
    t = await createTestApp({ runtime: { startDispatcher: false } });
    await t.runtime.relay.stop();
    const publish = async (team: string) => {
      const published = await t!.graphql<{ publishPick: { id: string } }>(PUBLISH, { input: pickInput({ homeTeam: team, selection: team }) });
      expect(published.errors).toBeUndefined();
    };
    const unrelayed = async () =>
      Number((await t!.runtime.orm.em.fork().execute<{ n: string }[]>('select count(*) as n from outbox_events where relayed_at is null'))[0]!.n);
    // An idle tick far beyond the test's time: only a kick can relay the second event.
    const relay = new HeldRelay(t.runtime.orm, new MemoryEventBus(), { intervalMs: 3_600_000 });
    await publish('Before FC');
    relay.start();
    try {
      await relay.firstRelayed;
      expect(await unrelayed()).toBe(0);
      // The pass listed the outbox before this commit: its kick arrives while the pass still runs.
      await publish('During FC');
      relay.kick();
      relay.release();
      await waitUntil('the event committed during the pass relayed', async () => relay.passes === 2 && (await unrelayed()) === 0, 20_000, 20);
      expect(relay.passes).toBe(2);
    } finally {
      relay.release();
      await relay.stop();
    }
  });
});
