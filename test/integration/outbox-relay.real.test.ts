/**
 * The relay hand-off between instances on one PostgreSQL when the relaying instance freezes
 * (SIGSTOP, a long pause, a partition) in the middle of a batch: its transaction, and the
 * relay lock with it, stays open as long as its connection does. Before the idle timeout on
 * the relay's transaction, no other instance could relay until the frozen one woke up (the
 * held-back event of faults.real.test.ts that missed the stream after a Redis restart).
 *
 * A `.real.test.ts` suite: two connections to one database need PostgreSQL (PGlite has one).
 */
import { afterEach, describe, expect, it, vi } from 'vitest';
import { MemoryEventBus } from '../../src/services/events/memory-bus.js';
import { OutboxRelay } from '../../src/services/events/outbox-relay.js';
import { createTestApp, type TestApp } from '../helpers/app.js';
import { pickInput, PUBLISH } from '../helpers/fixtures.js';

/** A bus whose publish is held (the relaying process frozen mid-batch) until released. */
class HeldBus extends MemoryEventBus {
  readonly published: string[] = [];
  private release!: () => void;
  readonly released = new Promise<void>((resolve) => (this.release = resolve));
  private entered!: () => void;
  /** Resolves when a publish is being held: the batch's transaction holds the relay lock. */
  readonly holding = new Promise<void>((resolve) => (this.entered = resolve));

  constructor(private readonly held: boolean) {
    super();
  }

  override async publish(channel: string, message: string): Promise<void> {
    if (this.held) {
      this.entered();
      await this.released;
    }
    this.published.push(message);
    await super.publish(channel, message);
  }

  wake(): void {
    this.release();
  }
}

const apps: TestApp[] = [];
const heldBuses: HeldBus[] = [];
afterEach(async () => {
  // A failed test may leave a batch held: let it end before the databases close.
  for (const bus of heldBuses.splice(0)) bus.wake();
  for (const app of apps.splice(0).reverse()) await app.close();
});

describe('outbox relay hand-off', () => {
  it('another instance relays the batch a frozen relayer held, once its idle transaction is ended; the frozen one cannot mark it afterwards', async () => {
    const a = await createTestApp({ runtime: { startDispatcher: false } });
    apps.push(a);
    const b = await createTestApp({ sameDatabaseAs: a, runtime: { startDispatcher: false } });
    apps.push(b);
    await Promise.all([a.runtime.relay.stop(), b.runtime.relay.stop()]);
    const pick = (await a.graphql<{ publishPick: { id: string } }>(PUBLISH, { input: pickInput({ homeTeam: 'Frozen FC', selection: 'Frozen FC' }) })).data!.publishPick.id;

    const frozenBus = new HeldBus(true);
    heldBuses.push(frozenBus);
    const frozen = new OutboxRelay(a.runtime.orm, frozenBus, { lockIdleTimeoutMs: 300 });
    const frozenBatch = frozen.relayOnce().then(
      (relayed) => ({ relayed }),
      (error: unknown) => ({ error }),
    );
    // The first instance is inside its batch, holding the lock, and stops answering.
    await frozenBus.holding;

    const liveBus = new HeldBus(false);
    const live = new OutboxRelay(b.runtime.orm, liveBus, { lockIdleTimeoutMs: 300 });
    // Another instance takes the batch over once PostgreSQL ends the idle transaction.
    await vi.waitFor(async () => expect(await live.relayOnce()).toBe(1), { timeout: 15_000, interval: 100 });
    expect(liveBus.published.map((raw) => (JSON.parse(raw) as { pick: { id: string } }).pick.id)).toEqual([pick]);

    // The frozen instance wakes up: its session is gone, so its batch fails instead of
    // committing a second time; the event was relayed once.
    frozenBus.wake();
    expect(await frozenBatch).toMatchObject({ error: expect.anything() });
    const [row] = await b.runtime.orm.em.fork().execute<{ unrelayed: string }[]>('select count(*) as unrelayed from outbox_events where relayed_at is null');
    expect(Number(row!.unrelayed)).toBe(0);
    expect(await live.relayOnce()).toBe(0);
  });
});
