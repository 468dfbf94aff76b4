import { defineEntity, p } from '@mikro-orm/core';

export type EventType = 'pick.published' | 'pick.settled';

/**
 * Transactional outbox: written in the same transaction as the pick change it describes,
 * relayed to the event bus and webhook deliveries afterwards. `seq` orders events and is
 * the SSE event id.
 */
export const OutboxEventSchema = defineEntity({
  name: 'OutboxEvent',
  tableName: 'outbox_events',
  properties: {
    id: p.uuid().primary(),
    seq: p.bigint('number').autoincrement().unique(),
    type: p.text().$type<EventType>(),
    pickId: p.uuid(),
    payload: p.json<Record<string, unknown>>(),
    createdAt: p.datetime(),
    relayedAt: p.datetime().nullable(),
  },
});

export class OutboxEventEntity extends OutboxEventSchema.class {}
OutboxEventSchema.setClass(OutboxEventEntity);
