/**
 * Announcing a change the way an instance announces one on the bus (src/runtime.ts): for tests
 * that rewrite rows under the service, as an operator with database access could, and then read
 * what the service keeps of them (the public ledger's bodies, docs/DECISIONS.md "Ledger cache").
 */
import { BusChannel } from '../../src/services/events/event-bus.js';
import type { TestApp } from './app.js';

/** Publishes a visibility change and resolves once this instance has acted on it. */
export async function announceChange(t: TestApp): Promise<void> {
  // Listeners run in the order they were added: the app's caches, then this one.
  const heard = new Promise<void>((resolve) => t.runtime.onVisibilityChange(resolve));
  await t.runtime.bus.publish(BusChannel.pickVisibility, '1');
  await heard;
}
