/**
 * The outbox relay: publishes committed events to the bus at least once, in commit order,
 * and marks them relayed. One instance relays at a time (a transaction-scoped advisory lock
 * per batch): events stay in order across instances, and when the relaying instance dies
 * its lock dies with its connection, so another instance takes over at its next tick.
 * A crash between publish and commit republishes the batch; consumers drop repeated seqs.
 */
import type { PickSnapshot } from '../../domain/pick-view.js';
import type { EventType } from '../../persistence/entities/outbox-event.js';
import type { Em, Orm } from '../../persistence/orm.js';
import { BusChannel, type EventBus } from './event-bus.js';

export interface PickEventMessage {
  seq: number;
  id: string;
  type: EventType;
  createdAt: string;
  pick: PickSnapshot;
}

export const RELAY_LOCK = 7_243_002;

export interface OutboxRow {
  id: string;
  seq: string | number;
  type: EventType;
  payload: { pick: PickSnapshot } | string;
  created_at: Date | string;
}

export function toMessage(row: OutboxRow): PickEventMessage {
  const payload = typeof row.payload === 'string' ? (JSON.parse(row.payload) as { pick: PickSnapshot }) : row.payload;
  return {
    seq: Number(row.seq),
    id: row.id,
    type: row.type,
    createdAt: new Date(row.created_at).toISOString(),
    pick: payload.pick,
  };
}

export interface OutboxRelayOptions {
  intervalMs?: number;
  batchSize?: number;
  log?: { warn(details: object, message: string): void };
  /** Runs inside the relay transaction for each batch: the webhook fan-out commits with it. */
  onBatch?: (em: Em, messages: PickEventMessage[]) => Promise<void>;
  /** After a batch committed (e.g. wake the local webhook dispatcher). */
  onCommitted?: (messages: PickEventMessage[]) => void;
}

export class OutboxRelay {
  private timer: NodeJS.Timeout | null = null;
  private stopped = true;
  private running: Promise<void> | null = null;
  private readonly intervalMs: number;
  private readonly batchSize: number;

  constructor(
    private readonly orm: Orm,
    private readonly bus: EventBus,
    private readonly options: OutboxRelayOptions = {},
  ) {
    this.intervalMs = options.intervalMs ?? 100;
    this.batchSize = options.batchSize ?? 500;
  }

  start(): void {
    this.stopped = false;
    this.schedule(0);
  }

  /** Relays soon: called after a local commit so events do not wait for the next tick. */
  kick(): void {
    if (!this.stopped && !this.running) this.schedule(0);
  }

  async stop(): Promise<void> {
    this.stopped = true;
    if (this.timer) clearTimeout(this.timer);
    this.timer = null;
    await this.running;
  }

  /** One batch; returns how many events were relayed (0 when another instance holds the lock). */
  async relayOnce(): Promise<number> {
    const relayed = await this.orm.em.fork().transactional(async (em) => {
      const [lock] = await em.execute<{ locked: boolean }[]>('select pg_try_advisory_xact_lock(?) as locked', [RELAY_LOCK]);
      if (!lock?.locked) return [] as PickEventMessage[];
      const rows = await em.execute<OutboxRow[]>(
        'select id, seq, type, payload, created_at from outbox_events where relayed_at is null order by seq limit ?',
        [this.batchSize],
      );
      if (rows.length === 0) return [];
      const messages = rows.map(toMessage);
      await this.options.onBatch?.(em as Em, messages);
      for (const message of messages) await this.bus.publish(BusChannel.pickEvents, JSON.stringify(message));
      await em.execute(`update outbox_events set relayed_at = now() where id in (${rows.map(() => '?').join(', ')})`, rows.map((row) => row.id));
      return messages;
    });
    if (relayed.length > 0) this.options.onCommitted?.(relayed);
    return relayed.length;
  }

  private schedule(delayMs: number): void {
    if (this.stopped) return;
    if (this.timer) clearTimeout(this.timer);
    this.timer = setTimeout(() => {
      this.timer = null;
      this.running = this.tick().finally(() => {
        this.running = null;
      });
    }, delayMs);
    this.timer.unref();
  }

  private async tick(): Promise<void> {
    let relayed = 0;
    try {
      relayed = await this.relayOnce();
    } catch (error) {
      this.options.log?.warn({ err: (error as Error).message }, 'outbox relay: batch failed, will retry');
    }
    this.schedule(relayed === this.batchSize ? 0 : this.intervalMs);
  }
}
