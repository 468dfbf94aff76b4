/**
 * The transactional outbox (outbox_events): appended in the transaction of the pick change it
 * describes, read by the relay (in seq order), by the stream replay and catch-up, and pruned
 * by the retention job.
 */
import type { PickSnapshot } from '../domain/pick-shape.js';
import { OutboxEventEntity, type EventType } from './entities/outbox-event.js';
import type { Em } from './orm.js';
import { VISIBLE_STATUSES } from '../domain/pick.js';
import { jsonOf, statusIn } from './sql.js';

const VISIBLE_SQL = statusIn(VISIBLE_STATUSES);

/** Advisory lock key held by transactions that append outbox events. */
export const OUTBOX_WRITE_LOCK = 7_243_001;
/** Advisory lock key of the relay: one instance relays at a time. */
export const RELAY_LOCK = 7_243_002;

export interface OutboxRow {
  id: string;
  seq: string | number;
  type: EventType;
  payload: { pick: PickSnapshot } | string;
  created_at: Date | string;
}

/** An outbox event as read back (payload parsed, seq a number). */
export interface OutboxEventRecord {
  seq: number;
  id: string;
  type: EventType;
  createdAt: string;
  pick: PickSnapshot;
}

export function outboxRecordFromRow(row: OutboxRow): OutboxEventRecord {
  const payload = jsonOf<{ pick: PickSnapshot }>(row.payload);
  return {
    seq: Number(row.seq),
    id: row.id,
    type: row.type,
    createdAt: new Date(row.created_at).toISOString(),
    pick: payload.pick,
  };
}

/**
 * Appends an event in the caller's transaction. The pick change is flushed first (the event
 * references the pick row), then event writers serialise until commit so that seq order is
 * commit order: the relay and Last-Event-ID resume rely on never seeing seq N+1 before seq N
 * is visible.
 */
export async function appendOutboxEvents(
  em: Em,
  events: readonly { id: string; type: EventType; pickId: string; pick: PickSnapshot; createdAt: Date }[],
): Promise<void> {
  if (events.length === 0) return;
  await em.flush();
  await em.execute('select pg_advisory_xact_lock(?)', [OUTBOX_WRITE_LOCK]);
  // Created in order, inserted in that order at the next flush: seq follows the order given.
  for (const event of events) {
    em.create(OutboxEventEntity, {
      id: event.id,
      type: event.type,
      pickId: event.pickId,
      payload: { pick: event.pick },
      createdAt: event.createdAt,
      relayedAt: null,
    } as never);
  }
}

/**
 * Takes the relay lock for the transaction of `em`; false when another instance holds it.
 * The lock lives as long as the transaction, so a holder that stops answering (a frozen
 * process, a network partition) would keep it as long as its connection stays open:
 * PostgreSQL ends the session once the transaction has been idle for `idleTimeoutMs`, which
 * releases the lock for the other instances.
 */
export async function tryRelayLock(em: Em, idleTimeoutMs: number): Promise<boolean> {
  if (!Number.isSafeInteger(idleTimeoutMs) || idleTimeoutMs < 1) throw new RangeError(`idleTimeoutMs must be a positive integer, got ${idleTimeoutMs}`);
  const [lock] = await em.execute<{ locked: boolean }[]>(
    "select set_config('idle_in_transaction_session_timeout', ?, true), pg_try_advisory_xact_lock(?) as locked",
    [String(idleTimeoutMs), RELAY_LOCK],
  );
  return Boolean(lock?.locked);
}

/** The oldest unrelayed events, in seq order. */
export async function listUnrelayedEvents(em: Em, limit: number): Promise<OutboxEventRecord[]> {
  const rows = await em.execute<OutboxRow[]>(
    'select id, seq, type, payload, created_at from outbox_events where relayed_at is null order by seq limit ?',
    [limit],
  );
  return rows.map(outboxRecordFromRow);
}

export async function markRelayed(em: Em, ids: string[]): Promise<void> {
  if (ids.length === 0) return;
  await em.execute(`update outbox_events set relayed_at = now() where id in (${ids.map(() => '?').join(', ')})`, ids);
}

/** The highest seq written so far (0 when there is none). */
export async function newestSeq(em: Em): Promise<number> {
  const [newest] = await em.execute<{ seq: string | number | null }[]>('select max(seq) as seq from outbox_events');
  return Number(newest?.seq ?? 0);
}

/** The newest `limit` events after `afterSeq`, oldest first. */
export async function listEventsAfter(em: Em, afterSeq: number, limit: number): Promise<OutboxEventRecord[]> {
  const rows = await em.execute<OutboxRow[]>(
    `select * from (
       select id, seq, type, payload, created_at from outbox_events where seq > ? order by seq desc limit ?
     ) missed order by seq`,
    [afterSeq, limit],
  );
  return rows.map(outboxRecordFromRow);
}

/**
 * Events of one type after `afterSeq` created since `since` or among the newest `newest`
 * events, at most `newest` of them (the latest), oldest first, skipping picks hidden now.
 */
export async function listReplayEvents(
  em: Em,
  query: { types: readonly EventType[]; afterSeq: number; since: Date; newest: number },
): Promise<OutboxEventRecord[]> {
  const rows = await em.execute<OutboxRow[]>(
    `select * from (
       select e.id, e.seq, e.type, e.payload, e.created_at
         from outbox_events e join picks p on p.id = e.pick_id
        where e.type in (select jsonb_array_elements_text(?::jsonb)) and e.seq > ? and (e.created_at >= ? or e.seq > (select max(seq) - ? from outbox_events))
          and p.${VISIBLE_SQL}
        order by e.seq desc
        limit ?
     ) recent order by seq`,
    [JSON.stringify(query.types), query.afterSeq, query.since, query.newest, query.newest],
  );
  return rows.map(outboxRecordFromRow);
}

/**
 * Deletes one batch of events older than `cutoff` that are relayed, that no delivery refers
 * to, and that are not among the newest `keepNewest`; returns how many went.
 */
export async function deletePrunableEvents(em: Em, cutoff: Date, keepNewest: number, batch: number): Promise<number> {
  const deleted = await em.execute<{ id: string }[]>(
    `delete from outbox_events where id in (
       select e.id from outbox_events e
        where e.created_at < ? and e.relayed_at is not null
          and e.seq <= (select max(seq) from outbox_events) - ?
          and not exists (select 1 from webhook_deliveries d where d.event_id = e.id)
        order by e.created_at limit ? for update skip locked)
     returning id`,
    [cutoff, keepNewest, batch],
  );
  return deleted.length;
}
