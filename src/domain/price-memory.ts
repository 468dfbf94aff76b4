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

// Between the parts of a full key (what `repeated` and `unconfirmed` hold). Unambiguous: a bookmaker
// key is [a-z0-9_-] and a market one of a few names, so no field but the first and the last can
// hold it.
const SEPARATOR = '\u0000';

/** One part of a row's key within its event: a string, so that the maps and `fullKey` agree on what is one key. */
type KeyPart = string;

/** A row's key within its event, in three parts (the memory nests a map per part). */
type KeyPath<T> = readonly [(row: T) => KeyPart, (row: T) => KeyPart, (row: T) => KeyPart];

const PRICE_KEY: KeyPath<Pick<PricePoint, 'bookmaker' | 'market' | 'outcome'>> = [(point) => point.bookmaker, (point) => point.market, (point) => point.outcome];
const REFERENCE_KEY: KeyPath<Pick<ReferenceMarketRow, 'generation' | 'market' | 'bookmaker'>> = [(row) => String(row.generation), (row) => row.market, (row) => row.bookmaker];

/** A row's full key as one string: its event and its key path (`repeated` and `unconfirmed` hold these). */
function fullKey<T>(path: KeyPath<T>, eventId: string, row: T): string {
  return `${eventId}${SEPARATOR}${path[0](row)}${SEPARATOR}${path[1](row)}${SEPARATOR}${path[2](row)}`;
}

/**
 * Everything the reference_markets upsert compares (line, prices, time): equal strings, equal
 * rows. The prices in their order, as the jsonb comparison of arrays is ordered too.
 */
function referenceContent(row: ReferenceMarketRow): string {
  return `${row.line}${SEPARATOR}${row.updatedAt.getTime()}${SEPARATOR}${JSON.stringify(row.prices)}`;
}

/**
 * One row's place in the memory: what the table held of it after this instance's last confirmed
 * write (undefined: nothing known), and the batch that last named it, at which index (a key named
 * twice in one batch is found by this, without building a key string per row).
 */
interface RowEntry {
  content: number | string | undefined;
  batch: number;
  index: number;
}

type EventRows = Map<KeyPart, Map<KeyPart, Map<KeyPart, RowEntry>>>;

/** The entry of `row` in `rows`, made (knowing nothing) when absent. */
function entryOf<T>(rows: EventRows, path: KeyPath<T>, row: T): RowEntry {
  const first = path[0](row);
  let second = rows.get(first);
  if (!second) rows.set(first, (second = new Map()));
  const secondKey = path[1](row);
  let third = second.get(secondKey);
  if (!third) second.set(secondKey, (third = new Map()));
  const thirdKey = path[2](row);
  let entry = third.get(thirdKey);
  if (!entry) third.set(thirdKey, (entry = { content: undefined, batch: 0, index: 0 }));
  return entry;
}

/** The rows of one table a writer last confirmed, per event, with what it compares of each. */
export class RowMemory<T extends { eventId: string }> {
  private readonly events = new Map<string, { seenMs: number; rows: EventRows }>();
  /** The write epoch of the last write this memory holds the outcome of; null: it holds nothing. */
  private epoch: bigint | null = null;
  /** When the memory started from a write that sent every row. */
  private startedMs = 0;
  /** Numbers the calls of toSend, so that a key named twice in one batch is seen as such. */
  private batch = 0;

  constructor(
    /** The row's key within its event, part by part. */
    private readonly keyPath: KeyPath<T>,
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
   * The memory of `eventId`. An event new to it starts unseen: one that toSend named but no
   * confirm then mentioned or wrote leaves at the next confirm.
   */
  private eventOf(eventId: string): { seenMs: number; rows: EventRows } {
    let event = this.events.get(eventId);
    if (!event) this.events.set(eventId, (event = { seenMs: Number.NEGATIVE_INFINITY, rows: new Map() }));
    return event;
  }

  /**
   * The points to send: those whose price differs from the remembered one or that no price is
   * remembered for. A key given twice in one batch is sent every time, as the database decides
   * between them (the latest `at` wins), and is not remembered. It makes room for every key it is
   * given (an entry that remembers nothing until confirm) and marks it with the batch.
   */
  toSend<R extends T>(points: readonly R[]): { send: R[]; repeated: Set<string> } {
    // A poll's points come grouped by event: one event lookup per run of points, no key string
    // per point (building 28,000 of them was most of this method's time).
    const batch = ++this.batch;
    const sending = new Uint8Array(points.length);
    const repeated = new Set<string>();
    let eventId: string | null = null;
    let rows: EventRows | null = null;
    for (let index = 0; index < points.length; index += 1) {
      const point = points[index]!;
      if (point.eventId !== eventId || rows === null) rows = this.eventOf((eventId = point.eventId)).rows;
      const entry = entryOf(rows, this.keyPath, point);
      if (entry.batch === batch) {
        sending[entry.index] = 1;
        sending[index] = 1;
        repeated.add(fullKey(this.keyPath, point.eventId, point));
      } else {
        entry.batch = batch;
        entry.index = index;
        if (entry.content !== this.contentOf(point)) sending[index] = 1;
      }
    }
    return { send: points.filter((_point, index) => sending[index] === 1), repeated };
  }

  /**
   * After the write numbered `epoch` committed: the points it sent now hold in odds_latest,
   * except `unconfirmed` (a newer price the database kept, or a key given twice), which are
   * forgotten. An event is seen when mentioned, or when it is first written; events not seen
   * for PRICE_MEMORY_IDLE_MS are dropped.
   */
  confirm(sent: readonly T[], unconfirmed: ReadonlySet<string>, epoch: bigint, nowMs: number, mentionedEventIds: Iterable<string>): void {
    if (this.epoch === null) this.startedMs = nowMs;
    for (const eventId of mentionedEventIds) this.eventOf(eventId).seenMs = nowMs;
    for (const point of sent) {
      const event = this.eventOf(point.eventId);
      if (event.seenMs === Number.NEGATIVE_INFINITY) event.seenMs = nowMs;
      const entry = entryOf(event.rows, this.keyPath, point);
      entry.content = unconfirmed.size > 0 && unconfirmed.has(fullKey(this.keyPath, point.eventId, point)) ? undefined : this.contentOf(point);
    }
    for (const [eventId, entry] of this.events) if (nowMs - entry.seenMs > PRICE_MEMORY_IDLE_MS) this.events.delete(eventId);
    this.epoch = epoch;
  }

  /** How many rows are remembered (metrics, tests). */
  size(): number {
    let total = 0;
    for (const { rows } of this.events.values()) {
      for (const second of rows.values()) for (const third of second.values()) for (const entry of third.values()) if (entry.content !== undefined) total += 1;
    }
    return total;
  }
}

/** odds_latest: a price is sent when it differs from the one confirmed. */
export class PriceMemory extends RowMemory<PricePoint> {
  constructor() {
    super(PRICE_KEY, (point) => point.price);
  }

  /** The full key of a price, as `toSend` and `confirm` use it in `repeated` and `unconfirmed`. */
  static keyOf(point: Pick<PricePoint, 'eventId' | 'bookmaker' | 'market' | 'outcome'>): string {
    return fullKey(PRICE_KEY, point.eventId, point);
  }
}

/**
 * reference_markets: a reference's market is sent when its line, prices or last_update differ
 * from the ones confirmed (each of them is a reason for the upsert to write).
 */
export class ReferenceMemory extends RowMemory<ReferenceMarketRow> {
  constructor() {
    super(REFERENCE_KEY, referenceContent);
  }

  /** The full key of a reference market, as `confirm` takes it in `unconfirmed`. */
  static keyOf(row: Pick<ReferenceMarketRow, 'eventId' | 'generation' | 'market' | 'bookmaker'>): string {
    return fullKey(REFERENCE_KEY, row.eventId, row);
  }
}
