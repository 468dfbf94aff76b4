import type { EventType } from '../persistence/entities/outbox-event.js';
import { appendOutboxEvent } from '../persistence/outbox-repository.js';
import type { Em } from '../persistence/orm.js';
import { toPickSnapshot, type PickValues } from '../domain/pick-shape.js';
import { newId } from './ids.js';

/**
 * Records an event in the caller's transaction (the transactional outbox): the pick change
 * and its event commit together or not at all. The relay publishes it after commit.
 */
export async function appendPickEvent(em: Em, type: EventType, pick: PickValues, at: Date): Promise<void> {
  await appendOutboxEvent(em, { id: newId(), type, pickId: pick.id, pick: toPickSnapshot(pick), createdAt: at });
}
