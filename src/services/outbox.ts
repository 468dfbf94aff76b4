import type { Em } from '../persistence/orm.js';
import { OutboxEventEntity, type EventType } from '../persistence/entities/outbox-event.js';
import type { PickEntity } from '../persistence/entities/pick.js';
import { v1PickJson } from '../domain/pick-view.js';
import { newId } from './ids.js';

/**
 * Records an event in the caller's transaction (the transactional outbox): the pick change
 * and its event commit together or not at all. The relay publishes it after commit.
 */
export async function appendPickEvent(em: Em, type: EventType, pick: PickEntity, at: Date): Promise<OutboxEventEntity> {
  // The event references the pick row: write the pick change first, inside the same transaction.
  await em.flush();
  return em.create(OutboxEventEntity, {
    id: newId(),
    type,
    pickId: pick.id,
    payload: { ...v1PickJson(pick) },
    createdAt: at,
    relayedAt: null,
  } as never);
}
