import type { Principal } from '../domain/principal.js';
import { DEFAULT_STREAM_TOKEN_MAX_STREAMS } from '../domain/stream-token.js';

const poolKey = (apiKeyId: string, pool: SlotPool) => `${pool}:${apiKeyId}`;

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

/**
 * Which allowance a stream counts against: the key's own (MAX_STREAMS_PER_KEY), or the streams
 * browsers open with the key's stream tokens (STREAM_TOKEN_MAX_STREAMS, 1,000 by default).
 */
export type SlotPool = 'key' | 'token';

/** Whose allowance a caller's streams count against, and which; null for callers that are not counted (operators). */
export function slotOwnerOf(principal: Principal): { apiKeyId: string; pool: SlotPool } | null {
  if (principal.kind === 'apiKey') return { apiKeyId: principal.apiKeyId, pool: 'key' };
  if (principal.kind === 'streamToken') return { apiKeyId: principal.apiKeyId, pool: 'token' };
  return null;
}

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

  constructor(private readonly limits: Readonly<Record<SlotPool, number>> = { key: MAX_STREAMS_PER_KEY, token: DEFAULT_STREAM_TOKEN_MAX_STREAMS }) {}

  /** How many streams hold a slot of `pool` on this instance, every key together (the metrics). */
  held(pool: SlotPool): number {
    let held = 0;
    for (const [name, slots] of this.byKey) if (name.startsWith(`${pool}:`)) held += slots.size;
    return held;
  }

  /** How many streams a key may hold at once in a pool, on this instance. */
  limit(pool: SlotPool): number {
    return this.limits[pool];
  }
  /** Contexts whose connection already holds a slot (see cover). */
  private readonly covered = new WeakMap<object, StreamSlot>();

  /**
   * Takes one of the key's slots, or answers null when all are held. Check and take are one
   * synchronous step, so connects arriving together cannot overshoot.
   */
  reserve(apiKeyId: string, pool: SlotPool = 'key'): StreamSlot | null {
    const held = poolKey(apiKeyId, pool);
    let slots = this.byKey.get(held);
    if (!slots) {
      slots = new Set();
      this.byKey.set(held, slots);
    }
    if (slots.size >= this.limits[pool]) return null;
    let released = false;
    const slot: StreamSlot = {
      apiKeyId,
      revoked: false,
      end: () => undefined,
      release: () => {
        if (released) return;
        released = true;
        const holding = this.byKey.get(held);
        holding?.delete(slot);
        if (holding?.size === 0) this.byKey.delete(held);
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

  /** The key was revoked or changed tier: marks its slots (its tokens' too) and ends the streams holding them. */
  endStreamsOf(apiKeyId: string): void {
    for (const pool of ['key', 'token'] as const) {
      for (const slot of [...(this.byKey.get(poolKey(apiKeyId, pool)) ?? [])]) {
        slot.revoked = true;
        slot.end();
      }
    }
  }

  /** Slots the key holds in a pool on this instance. */
  count(apiKeyId: string, pool: SlotPool = 'key'): number {
    return this.byKey.get(poolKey(apiKeyId, pool))?.size ?? 0;
  }
}

/** The refusal of a stream past its pool's allowance (429 too_many_streams). */
export function tooManyStreamsMessage(pool: SlotPool, limit: number): string {
  return pool === 'token'
    ? `At most ${limit} concurrent streams per API key on this server opened with its stream tokens; close one first.`
    : `At most ${limit} concurrent streams per API key, every way of subscribing together; close one first.`;
}
