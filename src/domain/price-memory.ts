/**
 * The prices an instance last confirmed in odds_latest, and the reference markets it last
 * confirmed in reference_markets, kept in memory so that a poll sends the store only what moved:
 * in a steady poll about 5 % of the prices, instead of every price for the database to compare.
 * A row is skipped only when the database held exactly it after this instance's last write, so
 * skipping it skips a statement that would have changed nothing.
 *
 * The memory is only as good as the assumption that nobody else wrote odds_latest since this
 * instance's last write. Every writer of the table therefore increments one shared number (the
 * write epoch, odds_latest_epoch) in its transaction before it writes; the row's lock orders the
 * writers by commit. The memory is used only when the number a write gets follows the one of its
 * own last confirmed write, and is forgotten otherwise (another instance or a retention run wrote
 * in between), so that write sends every price. Both tables are written in the same transaction
 * after the epoch is taken, so one epoch serves both memories. A writer that does not take the
 * epoch (an older version during a rolling deploy, a hand-written statement) is caught by the
 * refresh: every PRICE_MEMORY_REFRESH_MS the memory starts over and a poll sends every price.
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

/** One reference's market as a poll stores it in reference_markets (the closing line's source). */
export interface ReferenceMarketRow {
  eventId: string;
  generation: number;
  /** The reference book (one of REFERENCE_BOOKMAKERS). */
  bookmaker: string;
  market: string;
  /** The market's line: null for h2h, the home handicap for spreads, the point for totals. */
  line: number | null;
  /** The reference's own prices (the closing line devigs them). */
  prices: { name: string; price: number; point?: number }[];
  /** The reference market's feed last_update. */
  updatedAt: Date;
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

/** A row's full key: its event and its key within the event (`repeated` and `unconfirmed` hold these). */
function fullKey(eventId: string, withinEvent: string): string {
  return `${eventId}${SEPARATOR}${withinEvent}`;
}

/** The key of a reference market within its event (reference_markets' primary key without the event). */
export function referenceKeyWithinEvent(row: Pick<ReferenceMarketRow, 'generation' | 'market' | 'bookmaker'>): string {
  return `${row.generation}${SEPARATOR}${row.market}${SEPARATOR}${row.bookmaker}`;
}

/**
 * Everything the reference_markets upsert compares (line, prices, time): equal strings, equal
 * rows. The prices in their order, as the jsonb comparison of arrays is ordered too.
 */
function referenceContent(row: ReferenceMarketRow): string {
  return `${row.line}${SEPARATOR}${row.updatedAt.getTime()}${SEPARATOR}${JSON.stringify(row.prices)}`;
}

/** The rows of one table a writer last confirmed, per event, with what it compares of each. */
export class RowMemory<T extends { eventId: string }> {
  private readonly events = new Map<string, { seenMs: number; rows: Map<string, number | string> }>();
  /** The write epoch of the last write this memory holds the outcome of; null: it holds nothing. */
  private epoch: bigint | null = null;
  /** When the memory started from a write that sent every row. */
  private startedMs = 0;

  constructor(
    /** The row's key within its event. */
    private readonly keyWithinEvent: (row: T) => string,
    /** What the writer compares of the row: a row with the same content is not sent. */
    private readonly contentOf: (row: T) => number | string,
  ) {}

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
  toSend<R extends T>(points: readonly R[]): { send: R[]; repeated: Set<string> } {
    // A poll's points come grouped by event: one lookup per event, one key built per point.
    const seen = new Map<string, Set<string>>();
    const withinKeys: string[] = new Array(points.length);
    const repeated = new Set<string>();
    points.forEach((point, index) => {
      const within = (withinKeys[index] = this.keyWithinEvent(point));
      let keys = seen.get(point.eventId);
      if (!keys) seen.set(point.eventId, (keys = new Set()));
      if (keys.has(within)) repeated.add(fullKey(point.eventId, within));
      else keys.add(within);
    });
    const send = points.filter((point, index) => {
      const within = withinKeys[index]!;
      if (repeated.size > 0 && repeated.has(fullKey(point.eventId, within))) return true;
      return this.events.get(point.eventId)?.rows.get(within) !== this.contentOf(point);
    });
    return { send, repeated };
  }

  /**
   * After the write numbered `epoch` committed: the points it sent now hold in odds_latest,
   * except `unconfirmed` (a newer price the database kept, or a key given twice), which are
   * forgotten. Events no poll mentioned for PRICE_MEMORY_IDLE_MS are dropped.
   */
  confirm(sent: readonly T[], unconfirmed: ReadonlySet<string>, epoch: bigint, nowMs: number, mentionedEventIds: Iterable<string>): void {
    if (this.epoch === null) this.startedMs = nowMs;
    for (const eventId of mentionedEventIds) {
      const entry = this.events.get(eventId);
      if (entry) entry.seenMs = nowMs;
      else this.events.set(eventId, { seenMs: nowMs, rows: new Map() });
    }
    for (const point of sent) {
      const withinEvent = this.keyWithinEvent(point);
      let entry = this.events.get(point.eventId);
      if (!entry) this.events.set(point.eventId, (entry = { seenMs: nowMs, rows: new Map() }));
      if (unconfirmed.size > 0 && unconfirmed.has(fullKey(point.eventId, withinEvent))) entry.rows.delete(withinEvent);
      else entry.rows.set(withinEvent, this.contentOf(point));
    }
    for (const [eventId, entry] of this.events) if (nowMs - entry.seenMs > PRICE_MEMORY_IDLE_MS) this.events.delete(eventId);
    this.epoch = epoch;
  }

  /** How many rows are remembered (metrics, tests). */
  size(): number {
    let total = 0;
    for (const entry of this.events.values()) total += entry.rows.size;
    return total;
  }
}

/** odds_latest: a price is sent when it differs from the one confirmed. */
export class PriceMemory extends RowMemory<PricePoint> {
  constructor() {
    super(priceKeyWithinEvent, (point) => point.price);
  }

  /** The full key of a price, as `toSend` and `confirm` use it in `repeated` and `unconfirmed`. */
  static keyOf(point: Pick<PricePoint, 'eventId' | 'bookmaker' | 'market' | 'outcome'>): string {
    return fullKey(point.eventId, priceKeyWithinEvent(point));
  }
}

/**
 * reference_markets: a reference's market is sent when its line, prices or last_update differ
 * from the ones confirmed (each of them is a reason for the upsert to write).
 */
export class ReferenceMemory extends RowMemory<ReferenceMarketRow> {
  constructor() {
    super(referenceKeyWithinEvent, referenceContent);
  }

  /** The full key of a reference market, as `confirm` takes it in `unconfirmed`. */
  static keyOf(row: Pick<ReferenceMarketRow, 'eventId' | 'generation' | 'market' | 'bookmaker'>): string {
    return fullKey(row.eventId, referenceKeyWithinEvent(row));
  }
}
