/**
 * The prices an instance last confirmed in odds_latest, kept in memory so that a poll sends the
 * store only what moved: in a steady poll about 5 % of the prices, instead of every price for
 * the database to compare.
 *
 * The memory is only as good as the assumption that nobody else wrote odds_latest since this
 * instance's last write. Every writer of the table therefore increments one shared number (the
 * write epoch, odds_latest_epoch) in its transaction before it writes; the row's lock orders the
 * writers by commit. The memory is used only when the number a write gets follows the one of its
 * own last confirmed write, and is forgotten otherwise (another instance or a retention run wrote
 * in between), so that write sends every price. A writer that does not take the epoch (an older
 * version during a rolling deploy, a hand-written statement) is caught by the refresh: every
 * PRICE_MEMORY_REFRESH_MS the memory starts over and a poll sends every price.
 */

/** One bookmaker's price of one outcome, as a poll stores it. */
export interface PricePoint {
  eventId: string;
  bookmaker: string;
  market: string;
  /** The outcome's name, with its point in a line market ("Arsenal -0.5", "Over 2.5"). */
  outcome: string;
  price: number;
  /** The feed's last_update of the market (else the bookmaker's). */
  at: Date;
}

/** How long an event no poll mentioned stays in memory (kickoff passed, or its sport's polls stopped). */
export const PRICE_MEMORY_IDLE_MS = 60 * 60 * 1000;

/** How long the memory is trusted after a write that sent every price (see above). */
export const PRICE_MEMORY_REFRESH_MS = 15 * 60 * 1000;

// Unambiguous: a bookmaker key is [a-z0-9_-] and a market one of a few names, so no field but the
// first and the last can hold the separator.
const SEPARATOR = '\u0000';

/** The key of a price within its event. */
export function priceKeyWithinEvent(point: Pick<PricePoint, 'bookmaker' | 'market' | 'outcome'>): string {
  return `${point.bookmaker}${SEPARATOR}${point.market}${SEPARATOR}${point.outcome}`;
}

export class PriceMemory {
  private readonly events = new Map<string, { seenMs: number; prices: Map<string, number> }>();
  /** The write epoch of the last write this memory holds the outcome of; null: it holds nothing. */
  private epoch: bigint | null = null;
  /** When the memory started from a write that sent every price. */
  private startedMs = 0;

  /**
   * Whether a write numbered `epoch` at `nowMs` may use the memory: it comes right after the last
   * write this memory confirmed, and the memory is younger than PRICE_MEMORY_REFRESH_MS.
   */
  follows(epoch: bigint, nowMs: number): boolean {
    return this.epoch !== null && epoch === this.epoch + 1n && nowMs - this.startedMs < PRICE_MEMORY_REFRESH_MS;
  }

  /** Forgets every price: the next write sends all it has. */
  forget(): void {
    this.events.clear();
    this.epoch = null;
  }

  /**
   * The points to send: those whose price differs from the remembered one or that no price is
   * remembered for. A key given twice in one batch is sent every time, as the database decides
   * between them (the latest `at` wins), and is not remembered.
   */
  toSend<T extends PricePoint>(points: readonly T[]): { send: T[]; repeated: Set<string> } {
    // A poll's points come grouped by event: one lookup per event, one key built per point.
    const seen = new Map<string, Set<string>>();
    const withinKeys: string[] = new Array(points.length);
    const repeated = new Set<string>();
    points.forEach((point, index) => {
      const within = (withinKeys[index] = priceKeyWithinEvent(point));
      let keys = seen.get(point.eventId);
      if (!keys) seen.set(point.eventId, (keys = new Set()));
      if (keys.has(within)) repeated.add(`${point.eventId}${SEPARATOR}${within}`);
      else keys.add(within);
    });
    const send = points.filter((point, index) => {
      const within = withinKeys[index]!;
      if (repeated.size > 0 && repeated.has(`${point.eventId}${SEPARATOR}${within}`)) return true;
      return this.events.get(point.eventId)?.prices.get(within) !== point.price;
    });
    return { send, repeated };
  }

  /**
   * After the write numbered `epoch` committed: the points it sent now hold in odds_latest,
   * except `unconfirmed` (a newer price the database kept, or a key given twice), which are
   * forgotten. Events no poll mentioned for PRICE_MEMORY_IDLE_MS are dropped.
   */
  confirm(sent: readonly PricePoint[], unconfirmed: ReadonlySet<string>, epoch: bigint, nowMs: number, mentionedEventIds: Iterable<string>): void {
    if (this.epoch === null) this.startedMs = nowMs;
    for (const eventId of mentionedEventIds) {
      const entry = this.events.get(eventId);
      if (entry) entry.seenMs = nowMs;
      else this.events.set(eventId, { seenMs: nowMs, prices: new Map() });
    }
    for (const point of sent) {
      const withinEvent = priceKeyWithinEvent(point);
      let entry = this.events.get(point.eventId);
      if (!entry) this.events.set(point.eventId, (entry = { seenMs: nowMs, prices: new Map() }));
      if (unconfirmed.size > 0 && unconfirmed.has(`${point.eventId}${SEPARATOR}${withinEvent}`)) entry.prices.delete(withinEvent);
      else entry.prices.set(withinEvent, point.price);
    }
    for (const [eventId, entry] of this.events) if (nowMs - entry.seenMs > PRICE_MEMORY_IDLE_MS) this.events.delete(eventId);
    this.epoch = epoch;
  }

  /** The full key of a price, as `toSend` and `confirm` use it in `repeated` and `unconfirmed`. */
  static keyOf(point: Pick<PricePoint, 'eventId' | 'bookmaker' | 'market' | 'outcome'>): string {
    return `${point.eventId}${SEPARATOR}${priceKeyWithinEvent(point)}`;
  }

  /** How many prices are remembered (metrics, tests). */
  size(): number {
    let total = 0;
    for (const entry of this.events.values()) total += entry.prices.size;
    return total;
  }
}
