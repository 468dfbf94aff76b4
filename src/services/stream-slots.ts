/**
 * The stream slots of API keys on this instance. Every way of subscribing (the REST picks
 * stream, graphql-sse at /graphql/stream, yoga's own SSE on /graphql) holds one slot for as
 * long as it runs, at most MAX_STREAMS_PER_KEY per key, all surfaces together; the next one is
 * refused with 429 too_many_streams. Operators are not counted.
 *
 * Per instance, like the REST limit always was: behind a load balancer with N instances a key
 * can hold up to 10 x N streams (docs/REALTIME.md).
 */
export const MAX_STREAMS_PER_KEY = 10;

export interface StreamSlot {
  readonly apiKeyId: string;
  /** Set when the key's access changed: a stream still being admitted must not start. */
  revoked: boolean;
  /** Ends the stream holding the slot; its holder sets it once the stream is open (a no-op before). */
  end: () => void;
  /** Gives the slot back. Safe to call more than once. */
  release(): void;
}

export class StreamSlots {
  private readonly byKey = new Map<string, Set<StreamSlot>>();
  /** Contexts whose connection already holds a slot (see cover). */
  private readonly covered = new WeakMap<object, StreamSlot>();

  /**
   * Takes one of the key's slots, or answers null when all are held. Check and take are one
   * synchronous step, so connects arriving together cannot overshoot.
   */
  reserve(apiKeyId: string): StreamSlot | null {
    let slots = this.byKey.get(apiKeyId);
    if (!slots) {
      slots = new Set();
      this.byKey.set(apiKeyId, slots);
    }
    if (slots.size >= MAX_STREAMS_PER_KEY) return null;
    let released = false;
    const slot: StreamSlot = {
      apiKeyId,
      revoked: false,
      end: () => undefined,
      release: () => {
        if (released) return;
        released = true;
        const held = this.byKey.get(apiKeyId);
        held?.delete(slot);
        if (held?.size === 0) this.byKey.delete(apiKeyId);
      },
    };
    slots.add(slot);
    return slot;
  }

  /**
   * A connection that holds a slot for its whole life (the REST picks stream, which drops its own
   * subscription once the broadcast serves it) runs its subscriptions with this context: they
   * take no second slot.
   */
  cover(context: object, slot: StreamSlot): void {
    this.covered.set(context, slot);
  }

  isCovered(context: object): boolean {
    return this.covered.has(context);
  }

  /** The key was revoked or changed tier: marks its slots and ends the streams holding them. */
  endStreamsOf(apiKeyId: string): void {
    for (const slot of [...(this.byKey.get(apiKeyId) ?? [])]) {
      slot.revoked = true;
      slot.end();
    }
  }

  /** Slots the key holds on this instance. */
  count(apiKeyId: string): number {
    return this.byKey.get(apiKeyId)?.size ?? 0;
  }
}
