/**
 * The per-instance fan-out of pick events: one bus subscription per process, delivered to
 * every local listener (GraphQL subscriptions, including the SSE stream adapter's one broadcast and its replaying connections), repeated seqs dropped, plus
 * replay from the outbox for reconnecting clients (Last-Event-ID).
 *
 * Pub/sub keeps nothing for a disconnected subscriber: when the bus reports that its
 * subscriptions were re-established (Redis restarted or was unreachable), the feed catches up
 * from the outbox, delivering the committed events after the last seq it saw, so live listeners
 * miss nothing across a Redis outage. The starting point is the newest seq at start.
 */
import type { Clock } from '../../domain/clock.js';
import type { EventType } from '../../persistence/entities/outbox-event.js';
import type { Orm } from '../../persistence/orm.js';
import { BusChannel, type EventBus } from './event-bus.js';
import type { PickEventMessage } from './outbox-relay.js';
import { listEventsAfter, listReplayEvents, newestSeq } from '../../persistence/outbox-repository.js';

export type PickEventListener = (message: PickEventMessage) => void;

/** How far back a reconnecting client is replayed: at least 24 h or 1,000 events. */
export const REPLAY_WINDOW_MS = 24 * 60 * 60 * 1000;
export const REPLAY_MAX_EVENTS = 1_000;
/** Listeners served per turn of the event loop: commits, the relay and I/O run between slices. */
export const FANOUT_SLICE = 500;

export class PickFeed {
  private readonly listeners = new Set<PickEventListener>();
  private lastSeq = 0;
  private readonly undelivered: PickEventMessage[] = [];
  private delivering = false;
  private unsubscribe: (() => Promise<void>) | null = null;
  private stopCatchUp: (() => void) | null = null;
  private catchingUp: Promise<void> | null = null;
  private catchUpAgain = false;
  private catchUpRetry: NodeJS.Timeout | null = null;
  private closed = false;

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
      this.accept(message);
    });
    if (this.bus.onResubscribed) {
      // Catch-up starts after what exists now; earlier events are the replay's business.
      this.lastSeq = Math.max(this.lastSeq, await newestSeq(this.orm.em.fork()));
      this.stopCatchUp = this.bus.onResubscribed(() => void this.catchUp());
    }
  }

  private accept(message: PickEventMessage): void {
    // At-least-once relay (a batch republished after a relay crash), and catch-up overlapping
    // the live subscription: repeated seqs are dropped.
    if (message.seq <= this.lastSeq) return;
    this.lastSeq = message.seq;
    this.undelivered.push(message);
    if (!this.delivering) void this.deliver();
  }

  /**
   * Delivers the committed events after the last seq seen (at most REPLAY_MAX_EVENTS, the newest),
   * in order. Runs after the bus re-subscribed, so anything published later arrives live; events
   * committed but not yet relayed are delivered now and dropped as repeats when relayed.
   */
  catchUp(): Promise<void> {
    if (this.closed) return Promise.resolve();
    if (this.catchingUp) {
      this.catchUpAgain = true;
      return this.catchingUp;
    }
    this.catchingUp = (async () => {
      try {
        do {
          this.catchUpAgain = false;
          const missed = await listEventsAfter(this.orm.em.fork(), this.lastSeq, REPLAY_MAX_EVENTS);
          for (const message of missed) this.accept(message);
        } while (this.catchUpAgain && !this.closed);
      } catch {
        // The database is unreachable too: try again shortly (nothing is marked as seen).
        if (!this.closed && !this.catchUpRetry) {
          this.catchUpRetry = setTimeout(() => {
            this.catchUpRetry = null;
            void this.catchUp();
          }, 1_000);
          this.catchUpRetry.unref();
        }
      } finally {
        this.catchingUp = null;
      }
    })();
    return this.catchingUp;
  }

  /**
   * Events in order, each to every listener, in slices of FANOUT_SLICE listeners with a
   * macrotask in between: with 10,000 GraphQL subscribers one event must not hold the event loop for the
   * whole fan-out. A listener that leaves mid-event is skipped; one that joins gets the next event.
   */
  private async deliver(): Promise<void> {
    this.delivering = true;
    try {
      while (this.undelivered.length > 0) {
        const message = this.undelivered.shift()!;
        const listeners = [...this.listeners];
        for (let start = 0; start < listeners.length; start += FANOUT_SLICE) {
          if (start > 0) await new Promise<void>((resolve) => setImmediate(resolve));
          for (const listener of listeners.slice(start, start + FANOUT_SLICE)) {
            if (!this.listeners.has(listener)) continue;
            try {
              listener(message);
            } catch {
              // A listener's failure is its own: the others still get the event.
            }
          }
        }
      }
    } finally {
      this.delivering = false;
    }
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
  async replay(types: readonly EventType[], afterSeq: number): Promise<PickEventMessage[]> {
    const since = new Date(this.clock.now().getTime() - REPLAY_WINDOW_MS);
    return listReplayEvents(this.orm.em.fork(), { types, afterSeq, since, newest: REPLAY_MAX_EVENTS });
  }

  async close(): Promise<void> {
    this.closed = true;
    this.stopCatchUp?.();
    if (this.catchUpRetry) clearTimeout(this.catchUpRetry);
    await this.catchingUp;
    this.listeners.clear();
    await this.unsubscribe?.();
  }
}
