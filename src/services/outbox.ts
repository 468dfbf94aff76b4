import type { EventType } from '../persistence/entities/outbox-event.js';
import { appendOutboxEvents } from '../persistence/outbox-repository.js';
import type { Em } from '../persistence/orm.js';
import { toPickSnapshot, type PickValues } from '../domain/pick-shape.js';
import { newId } from './ids.js';

/**
 * Records an event in the caller's transaction (the transactional outbox): the pick change
 * and its event commit together or not at all. The relay publishes it after commit.
 */
export async function appendPickEvent(em: Em, type: EventType, pick: PickValues, at: Date): Promise<void> {
  await appendPickEvents(em, type, [{ pick, at }]);
}

/** Several picks' events of one type, in the order given, with one lock and one flush. */
export async function appendPickEvents(em: Em, type: EventType, items: readonly { pick: PickValues; at: Date }[]): Promise<void> {
  await appendOutboxEvents(
    em,
    items.map(({ pick, at }) => ({ id: newId(), type, pickId: pick.id, pick: toPickSnapshot(pick), createdAt: at })),
  );
}
