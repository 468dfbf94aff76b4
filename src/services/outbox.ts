import type { Em } from '../persistence/orm.js';
import { OutboxEventEntity, type EventType } from '../persistence/entities/outbox-event.js';
import type { PickEntity } from '../persistence/entities/pick.js';
import { toPickSnapshot } from '../domain/pick-view.js';
import { newId } from './ids.js';

/** Advisory lock key held by transactions that append outbox events. */
export const OUTBOX_WRITE_LOCK = 7_243_001;

/**
 * Records an event in the caller's transaction (the transactional outbox): the pick change
 * and its event commit together or not at all. The relay publishes it after commit.
 */
export async function appendPickEvent(em: Em, type: EventType, pick: PickEntity, at: Date): Promise<OutboxEventEntity> {
  // The event references the pick row: write the pick change first, inside the same transaction.
  await em.flush();
  // Serialise event writers until commit so that seq order is commit order: the relay and
  // Last-Event-ID resume rely on never seeing seq N+1 before seq N is visible.
  await em.execute('select pg_advisory_xact_lock(?)', [OUTBOX_WRITE_LOCK]);
  return em.create(OutboxEventEntity, {
    id: newId(),
    type,
    pickId: pick.id,
    payload: { pick: toPickSnapshot(pick) },
    createdAt: at,
    relayedAt: null,
  } as never);
}
