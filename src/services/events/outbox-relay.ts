/**
 * The outbox relay: publishes committed events to the bus at least once, in commit order,
 * and marks them relayed. One instance relays at a time (a transaction-scoped advisory lock
 * per batch): events stay in order across instances, and when the relaying instance dies
 * its lock dies with its connection, so another instance takes over at its next tick; when it
 * freezes instead, PostgreSQL ends its idle transaction after RELAY_LOCK_IDLE_TIMEOUT_MS.
 * A crash between publish and commit republishes the batch; consumers drop repeated seqs.
 *
 * When the bus cannot publish (Redis down), the batch's webhook fan-out still commits (it is
 * idempotent: `on conflict do nothing`), so webhooks do not wait for Redis; the batch stays
 * unrelayed and is published when the bus answers again. Failed ticks back off up to 1 s.
 */
import type { ServiceLog } from '../log.js';
import type { Em, Orm } from '../../persistence/orm.js';
import { listUnrelayedEvents, markRelayed, tryRelayLock, type OutboxEventRecord } from '../../persistence/outbox-repository.js';
import { BusChannel, type EventBus } from './event-bus.js';

/** A committed pick event as the bus, the stream and webhooks carry it. */
export type PickEventMessage = OutboxEventRecord;

/** Longest pause between attempts while batches keep failing (bus or database down). */
export const RELAY_MAX_BACKOFF_MS = 1_000;
/**
 * A relaying instance that leaves its transaction idle this long (frozen, partitioned) loses
 * its session and the lock with it. Far above a healthy batch's pauses: each publish waits at
 * most the bus' 1 s command timeout.
 */
export const RELAY_LOCK_IDLE_TIMEOUT_MS = 5_000;

/** The bus refused a batch; its fan-out committed, the batch stays unrelayed. */
export class RelayPublishError extends Error {
  constructor(readonly fannedOutEvents: number, cause: unknown) {
    super(`publishing to the event bus failed: ${(cause as Error)?.message ?? String(cause)}`, { cause });
    this.name = 'RelayPublishError';
  }
}

export interface OutboxRelayOptions {
  intervalMs?: number;
  batchSize?: number;
  log?: ServiceLog;
  /** Runs inside the relay transaction for each batch: the webhook fan-out commits with it. */
  onBatch?: (em: Em, messages: PickEventMessage[]) => Promise<void>;
  /** After a batch committed (e.g. wake the local webhook dispatcher). */
  onCommitted?: (messages: PickEventMessage[]) => void;
  /** RELAY_LOCK_IDLE_TIMEOUT_MS; tests shorten it. */
  lockIdleTimeoutMs?: number;
}

export class OutboxRelay {
  private timer: NodeJS.Timeout | null = null;
  private stopped = true;
  private running: Promise<void> | null = null;
  /** A commit kicked during a pass, which may have listed the outbox before it: pass again at once. */
  private kickedWhileRunning = false;
  private readonly intervalMs: number;
  private readonly batchSize: number;
  private failures = 0;

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
    if (this.stopped) return;
    // Kept while failing too: the pass under way may succeed, and the commit must not wait.
    if (this.running) this.kickedWhileRunning = true;
    // While passes fail (the bus down), the backoff's timer already comes back for it.
    else if (this.failures === 0) this.schedule(0);
  }

  async stop(): Promise<void> {
    this.stopped = true;
    if (this.timer) clearTimeout(this.timer);
    this.timer = null;
    await this.running;
  }

  /**
   * One batch; returns how many events were relayed (0 when another instance holds the lock).
   * Throws RelayPublishError when the bus refused the batch (its fan-out committed anyway).
   */
  async relayOnce(): Promise<number> {
    let publishError: unknown = null;
    const relayed = await this.orm.em.fork().transactional(async (em) => {
      if (!(await tryRelayLock(em, this.options.lockIdleTimeoutMs ?? RELAY_LOCK_IDLE_TIMEOUT_MS))) return [] as PickEventMessage[];
      const messages = await listUnrelayedEvents(em, this.batchSize);
      if (messages.length === 0) return [];
      await this.options.onBatch?.(em as Em, messages);
      try {
        for (const message of messages) await this.bus.publish(BusChannel.pickEvents, JSON.stringify(message));
      } catch (error) {
        // Commit the fan-out, leave the batch unrelayed: it is published again next time.
        publishError = error;
        return messages;
      }
      await markRelayed(em, messages.map((message) => message.id));
      return messages;
    });
    if (relayed.length > 0) this.options.onCommitted?.(relayed);
    if (publishError !== null) throw new RelayPublishError(relayed.length, publishError);
    return relayed.length;
  }

  private schedule(delayMs: number): void {
    if (this.stopped) return;
    if (this.timer) clearTimeout(this.timer);
    this.timer = setTimeout(() => {
      this.timer = null;
      this.running = this.tick().finally(() => {
        this.running = null;
        if (this.kickedWhileRunning) this.kick();
      });
    }, delayMs);
    this.timer.unref();
  }

  private async tick(): Promise<void> {
    this.kickedWhileRunning = false;
    let relayed = 0;
    try {
      relayed = await this.relayOnce();
      if (this.failures > 0) this.options.log?.info?.({ failedAttempts: this.failures }, 'outbox relay: relaying again');
      this.failures = 0;
    } catch (error) {
      // Logged once per outage, not at every retry.
      if (this.failures === 0) this.options.log?.warn({ err: (error as Error).message }, 'outbox relay: batch failed, retrying until it succeeds');
      this.failures += 1;
    }
    const backoff = this.failures === 0 ? 0 : Math.min(this.intervalMs * 2 ** (this.failures - 1), RELAY_MAX_BACKOFF_MS);
    this.schedule(relayed === this.batchSize ? 0 : Math.max(this.intervalMs, backoff));
  }
}
