/**
 * Picks: every query of the picks table. Writes go through the PickEntity (the unit of work
 * flushes them with the outbox event); lists and the public feed are read-only, so they skip
 * entity hydration and change tracking (which cost more CPU than the query itself) and map
 * each row to a plain PickRecord. The column list is explicit so the query fetches only what
 * the record needs. The list and "today" pages leave the database as one JSON value (see
 * pickPageSql): the drivers' per-field work, not the query, was most of their cost.
 */
import { LockMode } from '@mikro-orm/core';
import type { AvailabilityChange, AvailabilityFields } from '../domain/availability.js';
import type { StoredReferenceMarket } from '../domain/closing-line.js';
import { decodePickCursor } from '../domain/cursor.js';
import { engineEventKey, engineSelectionKey, type KnownEnginePick } from '../domain/engine-rules.js';
import { PICK_FIELD_NAMES, PICK_FIELDS, withNulls, type PickRecord, type PickValues, type Storage } from '../domain/pick-shape.js';
import { VISIBLE_STATUSES } from '../domain/pick.js';
import type { Market } from '../domain/market.js';
import { addDays, startOfUtcDay } from '../domain/time.js';
import { PickEntity } from './entities/pick.js';
import { columnNameOf, dateOf, executeBound, jsonOf, numberOf, statusIn } from './sql.js';
import type { Em } from './orm.js';

/** The columns of a pick record (the shape's fields), in the order of a page's arrays (pickPageSql). */
const PICK_COLUMN_NAMES = PICK_FIELD_NAMES.map(columnNameOf);

export const PICK_COLUMNS = PICK_COLUMN_NAMES.join(', ');

type Row = Record<string, unknown>;

/** How a raw column value becomes the record's: numeric columns arrive as strings from node-postgres. */
const readerOf = (storage: Storage): ((value: unknown) => unknown) =>
  storage.kind === 'datetime' ? dateOf : storage.kind === 'decimal' || storage.kind === 'smallint' || storage.kind === 'integer' ? numberOf : storage.kind === 'codes' ? jsonOf : String;

const ROW_READERS = PICK_FIELD_NAMES.map((name, index) => {
  const read = readerOf(PICK_FIELDS[name].storage);
  return { name, column: PICK_COLUMN_NAMES[index]!, read: (value: unknown) => (value == null ? null : read(value)) };
});

export function pickRecordFromRow(row: Row): PickRecord {
  const pick: Record<string, unknown> = {};
  for (const { name, column, read } of ROW_READERS) pick[name] = read(row[column]);
  return pick as PickRecord;
}

/**
 * A page of picks as one JSON array of arrays, timestamps as epoch milliseconds: node-postgres
 * and PGlite then decode one field with JSON.parse instead of one per column and row (PGlite copies
 * each out of its result buffer; both parse each timestamp's text into a Date). Floored, the
 * milliseconds are those of the Date the timestamptz text would give (both drop the microseconds).
 * Numerics are JSON numbers, parsed to the same double as Number() of their text.
 */
const epochMs = (column: string): string => `floor(extract(epoch from ${column}) * 1000)`;
const IS_TIMESTAMP = PICK_FIELD_NAMES.map((name) => PICK_FIELDS[name].storage.kind === 'datetime');
const PICK_ARRAY_FIELDS = PICK_COLUMN_NAMES.map((column, index) => (IS_TIMESTAMP[index] ? epochMs(column) : column)).join(', ');

/** One element of a pickPageSql page, in PICK_FIELD_NAMES order. */
type PickArray = unknown[];

function pickRecordFromArray(array: PickArray): PickRecord {
  const pick: Record<string, unknown> = {};
  for (let index = 0; index < PICK_FIELD_NAMES.length; index++) {
    const value = array[index];
    pick[PICK_FIELD_NAMES[index]!] = IS_TIMESTAMP[index] && value !== null ? new Date(value as number) : value;
  }
  return pick as PickRecord;
}

/**
 * The picks matching `conditions` in `order` (columns of picks, unqualified), at most `limit`
 * (the last parameter), as one row with one JSON column `page`: read it with readPicks.
 */
function pickPageSql(conditions: readonly string[], order: string): string {
  return (
    `select coalesce(json_agg(json_build_array(${PICK_ARRAY_FIELDS}) order by ${order}), '[]') as page` +
    ` from (select ${PICK_COLUMNS} from picks where ${conditions.join(' and ')} order by ${order} limit ?) as picks`
  );
}

/** A plain record of a pick entity: what services hand to GraphQL (never the entity itself). */
export function pickRecordFromEntity(entity: PickEntity): PickRecord {
  const pick: Record<string, unknown> = {};
  for (const name of PICK_FIELD_NAMES) pick[name] = entity[name] ?? null;
  return pick as PickRecord;
}

/** A pick to store: every declared field, the nullable ones optional (null when left out). */
export type NewPick = PickValues & {
  createdAt: Date;
  /** Engine picks: the feed event (and which fixture of its id) and how the pick was found. */
  eventId?: string | null;
  eventGeneration?: number;
  provenance?: Record<string, unknown> | null;
};

/** A new pick in the unit of work of `em` (flushed with the transaction). */
export function insertPick(em: Em, fields: NewPick): PickEntity {
  return em.create(PickEntity, {
    ...withNulls(fields),
    eventId: fields.eventId ?? null,
    eventGeneration: fields.eventGeneration ?? 0,
    provenance: fields.provenance ?? null,
    updatedAt: fields.createdAt,
  });
}

/** An engine pick's slot as the engine sees it before it creates or promotes one. */
export interface EngineSlot extends KnownEnginePick {
  id: string;
  /** The feed key and price of the offer the pick holds (a held pick's suspect price). */
  bookmaker: string;
  price: number;
}

/**
 * The engine picks of these events, any status, per event generation (engineEventKey), each
 * keyed by engineSelectionKey: the slots they hold and the sides they showed.
 */
export async function engineSlotsOf(em: Em, eventIds: readonly string[]): Promise<Map<string, Map<string, EngineSlot>>> {
  if (eventIds.length === 0) return new Map();
  const rows = await executeBound<Row>(
    em,
    `select id, event_id, event_generation, market, selection, line, status, published_at is not null as ever_visible, bookmaker_slug, odds
       from picks where event_id in (select jsonb_array_elements_text($1::jsonb))`,
    [JSON.stringify(eventIds)],
  );
  const byEvent = new Map<string, Map<string, EngineSlot>>();
  for (const row of rows) {
    const [eventId, generation, line] = [String(row.event_id), numberOf(row.event_generation), row.line == null ? null : numberOf(row.line)];
    const slot: EngineSlot = {
      id: String(row.id),
      market: String(row.market),
      selection: String(row.selection),
      line,
      status: String(row.status),
      everVisible: row.ever_visible === true,
      bookmaker: String(row.bookmaker_slug),
      price: numberOf(row.odds),
    };
    const eventKey = engineEventKey(eventId, generation);
    const slots = byEvent.get(eventKey) ?? new Map<string, EngineSlot>();
    byEvent.set(eventKey, slots);
    slots.set(engineSelectionKey(eventId, generation, slot.market, slot.selection, line), slot);
  }
  return byEvent;
}

/** The provenance of a pick (null for manual picks or unknown ids). */
export async function findProvenance(em: Em, id: string): Promise<Record<string, unknown> | null> {
  const rows = await em.execute<Row[]>(`select provenance from picks where id = ? and provenance is not null`, [id]);
  const provenance = rows[0]?.provenance;
  return provenance == null ? null : jsonOf<Record<string, unknown>>(provenance);
}

/**
 * A changed commence_time moves the kickoff of the open picks of the event's current
 * generation, while their kickoff is still ahead (a kickoff that has passed is history).
 * Returns the ids of the picks that moved.
 */
export async function moveKickoffs(
  em: Em,
  events: readonly { eventId: string; generation: number; commenceTime: Date }[],
  now: Date,
): Promise<string[]> {
  if (events.length === 0) return [];
  const rows = await executeBound<Row>(
    em,
    `update picks p set kickoff_at = v.commence_time, updated_at = $1::timestamptz
       from jsonb_to_recordset($2::jsonb) as v (event_id text, generation integer, commence_time timestamptz)
      where p.event_id = v.event_id and p.event_generation = v.generation and p.status in ('published', 'admin_review')
        and p.kickoff_at <> v.commence_time and p.kickoff_at > $1::timestamptz
      returning p.id`,
    [now.toISOString(), JSON.stringify(events.map((e) => ({ event_id: e.eventId, generation: e.generation, commence_time: e.commenceTime.toISOString() })))],
  );
  return rows.map((row) => String(row.id));
}

/** An engine pick whose kickoff has come and that has no closing line yet, with its references' last markets. */
export interface ClosablePick {
  id: string;
  selection: string;
  line: number | null;
  kickoffAt: Date;
  /** Every stored reference market of the pick's event, generation and market (the close picks the configured ones). */
  references: StoredReferenceMarket[];
}

/** The engine picks (published or held) past kickoff without a closing line, with their event's stored reference markets. */
export async function closablePicks(em: Em, now: Date): Promise<ClosablePick[]> {
  const rows = await executeBound<Row>(
    em,
    `select p.id, p.selection, p.line, p.kickoff_at,
            json_agg(json_build_object('bookmaker', r.bookmaker, 'prices', r.prices, 'updatedAt', floor(extract(epoch from r.updated_at) * 1000))) as refs
       from picks p join reference_markets r on r.event_id = p.event_id and r.generation = p.event_generation and r.market = p.market
      where p.status in ('published', 'admin_review') and p.closing_odds is null and p.kickoff_at <= $1::timestamptz
      group by p.id, p.selection, p.line, p.kickoff_at`,
    [now.toISOString()],
  );
  return rows.map((row) => ({
    id: String(row.id),
    selection: String(row.selection),
    line: row.line == null ? null : numberOf(row.line),
    kickoffAt: dateOf(row.kickoff_at),
    references: jsonOf<(Omit<StoredReferenceMarket, 'updatedAt'> & { updatedAt: number })[]>(row.refs).map((ref) => ({
      ...ref,
      updatedAt: new Date(ref.updatedAt),
    })),
  }));
}

/** A closing line to store: the selection's no-vig close, whether it is stale, and the record of what it was made of. */
export interface ClosingLineWrite {
  id: string;
  closingOdds: number;
  stale: boolean;
  /** Stored as provenance.closingLine. */
  record: Record<string, unknown>;
}

/**
 * Stores closing lines, once each (a pick that already has one is left as it is: another
 * instance got there first); a stale one adds the stale_close warning. Returns how many.
 */
export async function recordClosingLines(em: Em, closes: readonly ClosingLineWrite[], now: Date): Promise<number> {
  if (closes.length === 0) return 0;
  const rows = await executeBound<Row>(
    em,
    `update picks p
        set closing_odds = c.closing_odds, updated_at = $1::timestamptz,
            warnings = case when c.stale and not p.warnings @> '["stale_close"]'::jsonb then p.warnings || '["stale_close"]'::jsonb else p.warnings end,
            provenance = coalesce(p.provenance, '{}'::jsonb) || jsonb_build_object('closingLine', c.record)
       from jsonb_to_recordset($2::jsonb) as c (id uuid, closing_odds numeric(10,4), stale boolean, record jsonb)
      where p.id = c.id and p.closing_odds is null
      returning p.id`,
    [now.toISOString(), JSON.stringify(closes.map((close) => ({ id: close.id, closing_odds: close.closingOdds, stale: close.stale, record: close.record })))],
  );
  return rows.length;
}

export interface SettleablePick {
  id: string;
  eventId: string;
  market: Market;
  selection: string;
  line: number | null;
  homeTeam: string;
  awayTeam: string;
  referenceOutcomes: number;
  /** The score record stored as the event's final (finalScoreFor reads it by team name). */
  finalRecord: { scores?: { name: string; score: number }[] } & Record<string, unknown>;
}

/** Published engine picks whose event (same generation) has a final score (the scores poll settles them). */
export async function settleablePicks(em: Em, limit: number): Promise<SettleablePick[]> {
  const rows = await em.execute<Row[]>(
    `select p.id, p.event_id, p.market, p.selection, p.line, p.home_team, p.away_team,
            jsonb_array_length(coalesce(p.provenance -> 'referencePrices', '[]'::jsonb)) as reference_outcomes, e.final_record
       from picks p join odds_events e on e.id = p.event_id and e.generation = p.event_generation
      where p.status = 'published' and e.completed and e.final_record is not null
      order by p.kickoff_at, p.id
      limit ?`,
    [limit],
  );
  return rows.map((row) => ({
    id: String(row.id),
    eventId: String(row.event_id),
    market: String(row.market) as Market,
    selection: String(row.selection),
    line: row.line == null ? null : numberOf(row.line),
    homeTeam: String(row.home_team),
    awayTeam: String(row.away_team),
    referenceOutcomes: numberOf(row.reference_outcomes),
    finalRecord: jsonOf(row.final_record),
  }));
}

/** The review queue: held picks whose kickoff is ahead, oldest first, keyset on (created_at, id). */
export function reviewQueueSql(now: Date, after: { at: Date; id: string } | null, limit: number): SqlQuery {
  const conditions = [`status = 'admin_review'`, 'kickoff_at > ?'];
  const params: unknown[] = [now];
  if (after) {
    conditions.push('(created_at, id) > (?, ?)');
    params.push(after.at, after.id);
  }
  params.push(limit);
  return { sql: `select ${PICK_COLUMNS}, created_at from picks where ${conditions.join(' and ')} order by created_at, id limit ?`, params };
}

/** Rows of reviewQueueSql with their creation time (the queue's cursor). */
export async function readReviewQueue(em: Em, query: SqlQuery): Promise<{ pick: PickRecord; createdAt: Date }[]> {
  return (await em.execute<Row[]>(query.sql, query.params)).map((row) => ({ pick: pickRecordFromRow(row), createdAt: dateOf(row.created_at) }));
}

/** The pick with a row lock: concurrent transitions of one pick serialise. */
export function findPickForUpdate(em: Em, id: string): Promise<PickEntity | null> {
  return em.findOne(PickEntity, { id }, { lockMode: LockMode.PESSIMISTIC_WRITE });
}

/** Picks by id, row-locked, in publication order (then creation, then id). */
export async function findPicksForUpdate(em: Em, ids: readonly string[]): Promise<PickEntity[]> {
  // Most polls move no kickoff: no query for no ids.
  if (ids.length === 0) return [];
  return em.find(PickEntity, { id: { $in: [...ids] } }, { lockMode: LockMode.PESSIMISTIC_WRITE, orderBy: { publishedAt: 'asc', createdAt: 'asc', id: 'asc' } });
}

export function findPick(em: Em, id: string): Promise<PickEntity | null> {
  return em.findOne(PickEntity, { id });
}

export interface SqlQuery {
  sql: string;
  params: unknown[];
}

/** Filters of the visible-picks list; `since` is already parsed, `after` is the opaque cursor. */
export interface VisiblePicksFilter {
  sport?: string | null;
  league?: string | null;
  market?: string | null;
  since?: Date | null;
  after?: string | null;
}

const VISIBLE_SQL = statusIn(VISIBLE_STATUSES);

/** The list query; served by the partial (kickoff_at desc, id desc) indexes. Exported for the EXPLAIN test. */
export function listPicksSql(filter: VisiblePicksFilter, limit: number): SqlQuery {
  const conditions = [VISIBLE_SQL];
  const params: unknown[] = [];
  if (filter.sport != null) {
    conditions.push('sport = ?');
    params.push(filter.sport);
  }
  if (filter.league != null) {
    conditions.push('league = ?');
    params.push(filter.league);
  }
  if (filter.market != null) {
    conditions.push('market = ?');
    params.push(filter.market);
  }
  if (filter.since != null) {
    conditions.push('kickoff_at > ?');
    params.push(filter.since);
  }
  if (filter.after != null) {
    const cursor = decodePickCursor(filter.after);
    conditions.push('(kickoff_at, id) < (?, ?)');
    params.push(cursor.kickoffAt, cursor.id);
  }
  params.push(limit);
  return { sql: pickPageSql(conditions, 'kickoff_at desc, id desc'), params };
}

/** The public "today" query; served by the partial published_at indexes. */
export function todayPicksSql(query: { sport?: string | null }, now: Date, limit: number): SqlQuery {
  const dayStart = startOfUtcDay(now);
  const conditions = [VISIBLE_SQL, 'published_at >= ?', 'published_at < ?'];
  const params: unknown[] = [dayStart, addDays(dayStart, 1)];
  if (query.sport != null) {
    conditions.push('sport = ?');
    params.push(query.sport);
  }
  params.push(limit);
  return { sql: pickPageSql(conditions, 'edge_pct_post_tax desc, published_at desc, id desc'), params };
}

/** Runs a page query built above (listPicksSql, todayPicksSql) and maps its picks to records. */
export async function readPicks(em: Em, query: SqlQuery): Promise<PickRecord[]> {
  const rows = await em.execute<{ page: unknown }[]>(query.sql, query.params);
  return jsonOf<PickArray[]>(rows[0]?.page).map(pickRecordFromArray);
}

/**
 * Serialises, until `em`'s transaction ends, the engine's writes of these event generations: the
 * one-side rule's check and the insert it guards run as one step whatever else publishes
 * (another poll, an operator's ingestOdds, another instance). Locked in a fixed order, so two
 * writers of several events cannot wait on each other.
 */
export async function lockEngineEvents(em: Em, events: readonly { eventId: string; generation: number }[]): Promise<void> {
  const keys = [...new Map(events.map((event) => [engineEventKey(event.eventId, event.generation), event])).entries()].sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0));
  if (keys.length === 0) return;
  // One statement, the locks taken in the sorted order (the ordinality), as every writer takes them.
  await executeBound(
    em,
    `select count(pg_advisory_xact_lock(hashtext(k.event_id), k.generation))
       from (select event_id, generation from unnest($1::text[], $2::int[]) with ordinality as u (event_id, generation, n) order by n offset 0) as k`,
    [keys.map(([, event]) => event.eventId), keys.map(([, event]) => event.generation)],
  );
}

/** A side an engine pick of an event generation has shown. */
export interface ShownSide {
  id: string;
  market: string;
  selection: string;
  line: number | null;
}

/** The sides each event generation's engine picks have shown (published once, whatever their status now), by engineEventKey. */
export async function shownEngineSides(em: Em, events: readonly { eventId: string; generation: number }[]): Promise<Map<string, ShownSide[]>> {
  const shown = new Map<string, ShownSide[]>(events.map((event) => [engineEventKey(event.eventId, event.generation), []]));
  if (events.length === 0) return shown;
  const rows = await executeBound<Row>(
    em,
    `select p.event_id, p.event_generation, p.id, p.market, p.selection, p.line
       from picks p join unnest($1::text[], $2::int[]) as k (event_id, generation) on p.event_id = k.event_id and p.event_generation = k.generation
      where p.published_at is not null`,
    [events.map((event) => event.eventId), events.map((event) => event.generation)],
  );
  for (const row of rows) {
    shown.get(engineEventKey(String(row.event_id), Number(row.event_generation)))?.push({ id: String(row.id), market: String(row.market), selection: String(row.selection), line: row.line == null ? null : numberOf(row.line) });
  }
  return shown;
}

/** A published engine pick an odds poll checks: the pick, and the feed event (and generation) it belongs to. */
export interface TrackedPick {
  pick: PickRecord;
  eventId: string;
  eventGeneration: number;
}

/**
 * The picks an odds poll checks the availability of (docs/API.md, "Availability"), row-locked:
 * published engine picks before kickoff of the polled events, and, when the poll covered whole
 * sport keys, of those keys' other events (which left the feed). The lock re-reads the
 * conditions (PostgreSQL rechecks a row updated meanwhile), so a pick held, settled or past
 * kickoff by then is not among them. Locked in id order, as every batch lock.
 */
export async function lockTrackedPicks(
  em: Em,
  events: readonly { eventId: string; generation: number }[],
  coveredSportKeys: readonly string[],
  now: Date,
): Promise<TrackedPick[]> {
  if (events.length === 0 && coveredSportKeys.length === 0) return [];
  const rows = await executeBound<Row>(
    em,
    `select ${PICK_COLUMN_NAMES.map((column) => `p.${column}`).join(', ')}, p.event_id, p.event_generation
       from picks p
      where p.status = 'published' and p.event_id is not null and p.kickoff_at > $1::timestamptz
        and (exists (select 1 from jsonb_to_recordset($2::jsonb) as v (event_id text, generation integer) where v.event_id = p.event_id and v.generation = p.event_generation)
             or exists (select 1 from odds_events e where e.id = p.event_id and e.sport_key in (select jsonb_array_elements_text($3::jsonb))))
      order by p.id
      for update of p`,
    [now.toISOString(), JSON.stringify(events.map((e) => ({ event_id: e.eventId, generation: e.generation }))), JSON.stringify(coveredSportKeys)],
  );
  return rows.map((row) => ({ pick: pickRecordFromRow(row), eventId: String(row.event_id), eventGeneration: numberOf(row.event_generation) }));
}

/** The availability of checked picks, one statement for the batch (locked by lockTrackedPicks in the same transaction). */
export async function writeAvailability(em: Em, picks: readonly ({ id: string } & AvailabilityFields)[]): Promise<void> {
  if (picks.length === 0) return;
  await executeBound(
    em,
    `update picks p set availability_status = v.status, availability_odds_now = v.odds_now, availability_edge_pct_now = v.edge_pct_now,
            availability_checked_at = v.checked_at, availability_since = v.since, best_odds_since_published = v.best
       from jsonb_to_recordset($1::jsonb) as v (id uuid, status text, odds_now numeric, edge_pct_now numeric, checked_at timestamptz, since timestamptz, best numeric)
      where p.id = v.id`,
    [
      JSON.stringify(
        picks.map((pick) => ({
          id: pick.id,
          status: pick.availabilityStatus,
          odds_now: pick.availabilityOddsNow,
          edge_pct_now: pick.availabilityEdgePctNow,
          checked_at: pick.availabilityCheckedAt?.toISOString() ?? null,
          since: pick.availabilitySince?.toISOString() ?? null,
          best: pick.bestOddsSincePublished,
        })),
      ),
    ],
  );
}

/** Changes of availability status, kept for the record (pick_availability_changes). */
export async function recordAvailabilityChanges(
  em: Em,
  changes: readonly { pickId: string; at: Date; status: string; oddsNow: number | null; edgePctNow: number | null }[],
): Promise<void> {
  if (changes.length === 0) return;
  await em.flush();
  await executeBound(
    em,
    `insert into pick_availability_changes (pick_id, at, status, odds_now, edge_pct_now)
     select v.pick_id, v.at, v.status, v.odds_now, v.edge_pct_now
       from jsonb_to_recordset($1::jsonb) as v (pick_id uuid, at timestamptz, status text, odds_now numeric, edge_pct_now numeric)
     on conflict (pick_id, at) do update set status = excluded.status, odds_now = excluded.odds_now, edge_pct_now = excluded.edge_pct_now`,
    [JSON.stringify(changes.map((c) => ({ pick_id: c.pickId, at: c.at.toISOString(), status: c.status, odds_now: c.oddsNow, edge_pct_now: c.edgePctNow })))],
  );
}

/** A pick's changes of availability status, oldest first. */
export async function availabilityChangesOf(em: Em, pickId: string): Promise<AvailabilityChange[]> {
  const rows = await executeBound<Row>(em, 'select status, at from pick_availability_changes where pick_id = $1 order by at', [pickId]);
  return rows.map((row) => ({ status: String(row.status) as AvailabilityChange['status'], at: dateOf(row.at) }));
}
