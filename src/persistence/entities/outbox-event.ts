import { defineEntity, p } from '@mikro-orm/core';
import { valueIn } from '../sql.js';

/** What the outbox carries (docs/API.md, "Webhooks" and "Picks stream"). */
export const EVENT_TYPES = ['pick.published', 'pick.settled', 'pick.availability_changed'] as const;
export type EventType = (typeof EVENT_TYPES)[number];

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
    seq: p.bigint('number').autoincrement().unique('outbox_events_seq_key'),
    type: p.text().$type<EventType>(),
    pickId: p.uuid(),
    payload: p.json<Record<string, unknown>>(),
    createdAt: p.datetime(),
    relayedAt: p.datetime().nullable(),
  },
  indexes: [
    { name: 'outbox_events_unrelayed_idx', properties: ['seq'], where: 'relayed_at is null' },
    { name: 'outbox_events_created_idx', properties: ['createdAt'] },
  ],
  checks: [{ name: 'outbox_events_type_check', expression: valueIn('type', EVENT_TYPES) }],
});

export class OutboxEventEntity extends OutboxEventSchema.class {}
OutboxEventSchema.setClass(OutboxEventEntity);
