/**
 * The per-instance fan-out of pick events: one bus subscription per process, delivered to
 * every local listener (SSE streams, GraphQL subscriptions), repeated seqs dropped, plus
 * replay from the outbox for reconnecting clients (Last-Event-ID).
 */
import type { Clock } from '../../domain/clock.js';
import type { EventType } from '../../persistence/entities/outbox-event.js';
import type { Orm } from '../../persistence/orm.js';
import { BusChannel, type EventBus } from './event-bus.js';
import { toMessage, type OutboxRow, type PickEventMessage } from './outbox-relay.js';

export type PickEventListener = (message: PickEventMessage) => void;

/** How far back a reconnecting client is replayed: at least 24 h or 1,000 events. */
export const REPLAY_WINDOW_MS = 24 * 60 * 60 * 1000;
export const REPLAY_MAX_EVENTS = 1_000;

export class PickFeed {
  private readonly listeners = new Set<PickEventListener>();
  private lastSeq = 0;
  private unsubscribe: (() => Promise<void>) | null = null;

  constructor(
    private readonly orm: Orm,
    private readonly bus: EventBus,
    private readonly clock: Clock,
  ) {}

  async start(): Promise<void> {
    this.unsubscribe = await this.bus.subscribe(BusChannel.pickEvents, (raw) => {
      let message: PickEventMessage;
      try {
        message = JSON.parse(raw) as PickEventMessage;
      } catch {
        return;
      }
      // At-least-once relay: a batch republished after a relay crash arrives again.
      if (message.seq <= this.lastSeq) return;
      this.lastSeq = message.seq;
      for (const listener of this.listeners) listener(message);
    });
  }

  listen(listener: PickEventListener): () => void {
    this.listeners.add(listener);
    return () => {
      this.listeners.delete(listener);
    };
  }

  get listenerCount(): number {
    return this.listeners.size;
  }

  /**
   * Events of one type after `afterSeq` within the replay window, oldest first, skipping
   * picks that are hidden (held for review) now.
   */
  async replay(type: EventType, afterSeq: number): Promise<PickEventMessage[]> {
    const since = new Date(this.clock.now().getTime() - REPLAY_WINDOW_MS);
    const rows = await this.orm.em.fork().execute<OutboxRow[]>(
      `select * from (
         select e.id, e.seq, e.type, e.payload, e.created_at
           from outbox_events e join picks p on p.id = e.pick_id
          where e.type = ? and e.seq > ? and (e.created_at >= ? or e.seq > (select max(seq) - ? from outbox_events))
            and p.status <> 'admin_review'
          order by e.seq desc
          limit ?
       ) recent order by seq`,
      [type, afterSeq, since, REPLAY_MAX_EVENTS, REPLAY_MAX_EVENTS],
    );
    return rows.map(toMessage);
  }

  async close(): Promise<void> {
    this.listeners.clear();
    await this.unsubscribe?.();
  }
}
