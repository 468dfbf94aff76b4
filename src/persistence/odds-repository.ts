/**
 * The value engine's tables (docs/VALUE_ENGINE.md): odds_events (the feed's events as last seen,
 * the final score), reference_markets (each reference's latest pre-kickoff prices per market),
 * odds_latest and odds_history (line movement). Every write is one statement per poll whatever the batch size: the rows travel
 * as one JSON parameter read with jsonb_to_recordset, so names with commas or quotes need no
 * escaping and 12,000 prices cost one round trip.
 */
import type { PricePoint, ReferenceMarketRow } from '../domain/price-memory.js';
import type { Em } from './orm.js';
import { dateOf, executeBound, numberOf } from './sql.js';

export interface OddsEventRow {
  id: string;
  sportKey: string;
  sport: string;
  league: string;
  homeTeam: string;
  awayTeam: string;
  commenceTime: Date;
}

export type { PricePoint, ReferenceMarketRow };

export interface OddsPointRecord {
  bookmaker: string;
  market: string;
  outcome: string;
  price: number;
  at: Date;
}

type Row = Record<string, unknown>;

/** What the engine needs to know of a stored event before it handles the feed's new record of it. */
export interface StoredOddsEvent {
  id: string;
  sport: string;
  homeTeam: string;
  awayTeam: string;
  commenceTime: Date;
  generation: number;
  completed: boolean;
}

/** The stored events among `ids` (absent ids are new events). */
export async function readOddsEvents(em: Em, ids: readonly string[]): Promise<Map<string, StoredOddsEvent>> {
  if (ids.length === 0) return new Map();
  const rows = await executeBound<Row>(
    em,
    `select id, sport, home_team, away_team, commence_time, generation, completed
       from odds_events where id in (select jsonb_array_elements_text($1::jsonb))`,
    [JSON.stringify(ids)],
  );
  return new Map(
    rows.map((row) => [
      String(row.id),
      {
        id: String(row.id),
        sport: String(row.sport),
        homeTeam: String(row.home_team),
        awayTeam: String(row.away_team),
        commenceTime: dateOf(row.commence_time),
        generation: numberOf(row.generation),
        completed: row.completed === true,
      },
    ]),
  );
}

/**
 * Inserts new events and refreshes known ones (teams, league, kickoff) in one statement. A
 * completed event whose kickoff changes starts its next generation: the old final and overdue
 * mark belong to the old fixture and are cleared (generationOf); its closing lines are kept
 * under the old generation (reference_markets).
 */
export async function upsertOddsEvents(em: Em, events: readonly OddsEventRow[], now: Date): Promise<void> {
  if (events.length === 0) return;
  await executeBound(
    em,
    `insert into odds_events (id, sport_key, sport, league, home_team, away_team, commence_time, created_at, updated_at)
     select v.id, v.sport_key, v.sport, v.league, v.home_team, v.away_team, v.commence_time, $1::timestamptz, $1::timestamptz
       from jsonb_to_recordset($2::jsonb) as v (id text, sport_key text, sport text, league text, home_team text, away_team text, commence_time timestamptz)
     on conflict (id) do update set
       sport_key = excluded.sport_key, sport = excluded.sport, league = excluded.league,
       home_team = excluded.home_team, away_team = excluded.away_team,
       commence_time = excluded.commence_time, updated_at = excluded.updated_at,
       generation = case when ${NEW_FIXTURE} then odds_events.generation + 1 else odds_events.generation end,
       completed = case when ${NEW_FIXTURE} then false else odds_events.completed end,
       home_score = case when ${NEW_FIXTURE} then null else odds_events.home_score end,
       away_score = case when ${NEW_FIXTURE} then null else odds_events.away_score end,
       final_record = case when ${NEW_FIXTURE} then null else odds_events.final_record end,
       overdue_logged_at = case when ${NEW_FIXTURE} then null else odds_events.overdue_logged_at end
     where (odds_events.sport_key, odds_events.sport, odds_events.league, odds_events.home_team, odds_events.away_team, odds_events.commence_time)
        is distinct from (excluded.sport_key, excluded.sport, excluded.league, excluded.home_team, excluded.away_team, excluded.commence_time)`,
    [
      now.toISOString(),
      JSON.stringify(
        events.map((event) => ({
          id: event.id,
          sport_key: event.sportKey,
          sport: event.sport,
          league: event.league,
          home_team: event.homeTeam,
          away_team: event.awayTeam,
          commence_time: event.commenceTime.toISOString(),
        })),
      ),
    ],
  );
}

/** The SQL form of generationOf's "new fixture" test, inside upsertOddsEvents' conflict clause. */
const NEW_FIXTURE = '(odds_events.completed and odds_events.commence_time <> excluded.commence_time)';

/**
 * The next write epoch of odds_latest and reference_markets (src/domain/price-memory.ts), taken
 * in the writer's transaction before it reads or writes the tables: the row stays locked until
 * commit, so the writers after it wait and then see its write, and a rollback gives the number
 * back.
 */
export async function claimPriceWriteEpoch(em: Em): Promise<bigint> {
  const rows = await executeBound<{ epoch: string | number }>(em, `update odds_latest_epoch set epoch = epoch + 1 returning epoch::text as epoch`, []);
  return BigInt(rows[0]!.epoch);
}

/** What recordPriceChanges did: the history rows written, and the prices it cannot vouch for. */
export interface PriceChangesRecorded {
  written: number;
  /**
   * Prices given that odds_latest may not hold now: a newer price the table kept (its `at` after
   * the given one), or one a concurrent writer changed first.
   */
  unconfirmed: Pick<PricePoint, 'eventId' | 'bookmaker' | 'market' | 'outcome'>[];
}

/**
 * Stores the prices that changed: odds_latest keeps the last price per (event, bookmaker, market,
 * outcome); a price seen for the first time, or differing from the last one, also becomes an
 * odds_history row.
 */
export async function recordPriceChanges(em: Em, points: readonly PricePoint[]): Promise<PriceChangesRecorded> {
  if (points.length === 0) return { written: 0, unconfirmed: [] };
  // Unchanged prices are dropped before the upsert; its own guard still decides between
  // concurrent writers.
  const rows = await executeBound<{ written: string | number; unconfirmed: string }>(
    em,
    `with incoming as (
       select distinct on (event_id, bookmaker, market, outcome) event_id, bookmaker, market, outcome, price, at
         from jsonb_to_recordset($1::jsonb) as v (event_id text, bookmaker text, market text, outcome text, price numeric(10,4), at timestamptz)
        order by event_id, bookmaker, market, outcome, at desc
     ), compared as (
       select i.*, l.price as latest_price, l.at as latest_at from incoming i
         left join odds_latest l on l.event_id = i.event_id and l.bookmaker = i.bookmaker and l.market = i.market and l.outcome = i.outcome
     ), moved as (
       select event_id, bookmaker, market, outcome, price, at from compared
        where latest_price is null or (latest_price <> price and latest_at <= at)
     ), changed as (
       insert into odds_latest as l (event_id, bookmaker, market, outcome, price, at)
       select event_id, bookmaker, market, outcome, price, at from moved
       on conflict (event_id, bookmaker, market, outcome) do update set price = excluded.price, at = excluded.at
       where l.price <> excluded.price and l.at <= excluded.at
       returning l.event_id, l.bookmaker, l.market, l.outcome, l.price, l.at
     ), written as (
       insert into odds_history (event_id, bookmaker, market, outcome, price, at)
       select event_id, bookmaker, market, outcome, price, at from changed
       returning 1
     ), unconfirmed as (
       select event_id, bookmaker, market, outcome from compared where latest_price <> price and latest_at > at
       union all
       select m.event_id, m.bookmaker, m.market, m.outcome from moved m
        where not exists (select 1 from changed c where c.event_id = m.event_id and c.bookmaker = m.bookmaker and c.market = m.market and c.outcome = m.outcome)
     )
     select (select count(*) from written) as written,
            coalesce((select jsonb_agg(jsonb_build_array(event_id, bookmaker, market, outcome)) from unconfirmed), '[]'::jsonb)::text as unconfirmed`,
    [
      JSON.stringify(
        points.map((point) => ({
          event_id: point.eventId,
          bookmaker: point.bookmaker,
          market: point.market,
          outcome: point.outcome,
          price: point.price,
          at: point.at.toISOString(),
        })),
      ),
    ],
  );
  const unconfirmed = (JSON.parse(rows[0]?.unconfirmed ?? '[]') as [string, string, string, string][]).map(([eventId, bookmaker, market, outcome]) => ({ eventId, bookmaker, market, outcome }));
  return { written: numberOf(rows[0]?.written ?? 0), unconfirmed };
}

/**
 * Keeps each reference's latest prices per event generation, market and bookmaker, with the line
 * they were quoted at, only from markets updated before kickoff and never replacing a newer
 * observation: at kickoff these make the closing line (src/domain/closing-line.ts). A line that
 * moved replaces the old one, so that reference gives a pick on the old line no close.
 */
export async function recordReferenceMarkets(em: Em, rows: readonly ReferenceMarketRow[]): Promise<ReferenceMarketsRecorded> {
  if (rows.length === 0) return { unconfirmed: [] };
  const sent = JSON.stringify(
    rows.map((row) => ({
      event_id: row.eventId,
      generation: row.generation,
      market: row.market,
      bookmaker: row.bookmaker,
      line: row.line,
      prices: row.prices,
      updated_at: row.updatedAt.toISOString(),
    })),
  );
  // A row changes when the reference's prices or line changed, or its last_update moved on: the
  // close is dated by the reference's own last last_update before kickoff, so its age at kickoff
  // (and whether it is stale) is exact. An observation that repeats the kept one, time included,
  // writes nothing. (Throttling the time's refresh to once a minute overstated the age by up to
  // a minute and could call a fresh close stale.)
  const [counted] = await executeBound<{ written: string | number }>(
    em,
    `with written as (
       insert into reference_markets as r (event_id, generation, market, bookmaker, line, prices, updated_at)
       select v.event_id, v.generation, v.market, v.bookmaker, v.line, v.prices, v.updated_at
         from jsonb_to_recordset($1::jsonb) as v (${SENT_REFERENCE_COLUMNS})
         join odds_events e on e.id = v.event_id and e.generation = v.generation
        where v.updated_at < e.commence_time
       on conflict (event_id, generation, market, bookmaker) do update
          set line = excluded.line, prices = excluded.prices, updated_at = excluded.updated_at
        where r.updated_at <= excluded.updated_at
          and (r.line is distinct from excluded.line or r.prices is distinct from excluded.prices
               or r.updated_at < excluded.updated_at)
       returning 1
     ) select count(*) as written from written`,
    [sent],
  );
  // Every row written: the table holds each as sent (the usual poll, its memory sending only what
  // moved). Otherwise some were left as they were (identical already, or refused: a newer
  // observation kept, kickoff passed, another generation), and the table itself says which it
  // does not hold as sent, for the engine's memory to forget.
  if (numberOf(counted?.written ?? 0) === rows.length) return { unconfirmed: [] };
  const notHeld = await executeBound<{ event_id: string; generation: string | number; market: string; bookmaker: string }>(
    em,
    `select v.event_id, v.generation, v.market, v.bookmaker
       from jsonb_to_recordset($1::jsonb) as v (${SENT_REFERENCE_COLUMNS})
      where not exists (select 1 from reference_markets r
                         where r.event_id = v.event_id and r.generation = v.generation and r.market = v.market and r.bookmaker = v.bookmaker
                           and r.line is not distinct from v.line and r.prices = v.prices and r.updated_at = v.updated_at)`,
    [sent],
  );
  return { unconfirmed: notHeld.map((row) => ({ eventId: row.event_id, generation: numberOf(row.generation), market: row.market, bookmaker: row.bookmaker })) };
}

/** The columns of recordReferenceMarkets' parameter, as the statements read it. */
const SENT_REFERENCE_COLUMNS = 'event_id text, generation integer, market text, bookmaker text, line numeric(6,2), prices jsonb, updated_at timestamptz';

/** What recordReferenceMarkets did not store as sent (the engine's memory forgets these). */
export interface ReferenceMarketsRecorded {
  unconfirmed: { eventId: string; generation: number; market: string; bookmaker: string }[];
}

/** A final accepted for one generation of an event, with the score record it came from. */
export interface FinalScoreRow {
  eventId: string;
  generation: number;
  /** In the stored event's own orientation (settlement reads the record by team name). */
  homeScore: number;
  awayScore: number;
  /** The score record as received: it goes into the provenance of every pick it settles. */
  record: Record<string, unknown>;
}

/** Marks events completed with their final score (idempotent; a changed record replaces the stored one). */
export async function recordFinalScores(em: Em, rows: readonly FinalScoreRow[], now: Date): Promise<void> {
  if (rows.length === 0) return;
  await executeBound(
    em,
    `update odds_events e set completed = true, home_score = v.home_score, away_score = v.away_score, final_record = v.record, updated_at = $1::timestamptz
       from jsonb_to_recordset($2::jsonb) as v (event_id text, generation integer, home_score integer, away_score integer, record jsonb)
      where e.id = v.event_id and e.generation = v.generation
        and (e.completed, e.home_score, e.away_score, e.final_record) is distinct from (true, v.home_score, v.away_score, v.record)`,
    [
      now.toISOString(),
      JSON.stringify(rows.map((row) => ({ event_id: row.eventId, generation: row.generation, home_score: row.homeScore, away_score: row.awayScore, record: row.record }))),
    ],
  );
}

/**
 * A later `completed: false` withdraws a stored final of the same generation. Returns the
 * events whose final was withdrawn, with how many of their picks had already been settled.
 */
export async function withdrawFinalScores(
  em: Em,
  rows: readonly { eventId: string; generation: number }[],
  now: Date,
): Promise<{ eventId: string; settledPicks: number }[]> {
  if (rows.length === 0) return [];
  const withdrawn = await executeBound<Row>(
    em,
    `update odds_events e set completed = false, home_score = null, away_score = null, final_record = null, updated_at = $1::timestamptz
       from jsonb_to_recordset($2::jsonb) as v (event_id text, generation integer)
      where e.id = v.event_id and e.generation = v.generation and e.completed
      returning e.id, (select count(*) from picks p where p.event_id = e.id and p.event_generation = e.generation and p.status = 'settled') as settled`,
    [now.toISOString(), JSON.stringify(rows.map((row) => ({ event_id: row.eventId, generation: row.generation })))],
  );
  return withdrawn.map((row) => ({ eventId: String(row.id), settledPicks: numberOf(row.settled) }));
}

/** Line movement of one event, oldest first (admin oddsHistory). */
export async function listOddsHistory(em: Em, eventId: string, limit: number): Promise<OddsPointRecord[]> {
  const rows = await em.execute<Row[]>(
    `select bookmaker, market, outcome, price, at from odds_history where event_id = ? order by at, bookmaker, market, outcome limit ?`,
    [eventId, limit],
  );
  return rows.map((row) => ({
    bookmaker: String(row.bookmaker),
    market: String(row.market),
    outcome: String(row.outcome),
    price: numberOf(row.price),
    at: dateOf(row.at),
  }));
}

/**
 * Events whose kickoff lies `overdueMs` or more in the past, that have an open (published)
 * pick and no final score yet, and were not reported before: marks them reported and returns them.
 */
export async function takeOverdueEvents(em: Em, now: Date, overdueMs: number): Promise<{ id: string; commenceTime: Date; homeTeam: string; awayTeam: string }[]> {
  const rows = await em.execute<Row[]>(
    `update odds_events e set overdue_logged_at = ?::timestamptz
      where e.completed = false and e.overdue_logged_at is null and e.commence_time <= ?::timestamptz
        and exists (select 1 from picks p where p.event_id = e.id and p.event_generation = e.generation and p.status = 'published')
      returning e.id, e.commence_time, e.home_team, e.away_team`,
    [now.toISOString(), new Date(now.getTime() - overdueMs).toISOString()],
  );
  return rows.map((row) => ({ id: String(row.id), commenceTime: dateOf(row.commence_time), homeTeam: String(row.home_team), awayTeam: String(row.away_team) }));
}

/** Retention: history rows older than `cutoff`, and finished events (with their last prices) that kicked off before it. */
export async function deleteOldOdds(em: Em, cutoff: Date, batch: number): Promise<number> {
  const history = await em.execute<{ n: string | number }[]>(
    `with gone as (
       delete from odds_history where ctid in (select ctid from odds_history where at < ?::timestamptz limit ?) returning 1
     ) select count(*) as n from gone`,
    [cutoff.toISOString(), batch],
  );
  const events = await em.execute<{ n: string | number }[]>(
    `with old as (
       select id from odds_events where commence_time < ?::timestamptz
        and not exists (select 1 from picks p where p.event_id = odds_events.id and p.status in ('published', 'admin_review'))
        limit ?
     ), latest as (
       delete from odds_latest where event_id in (select id from old) returning 1
     ), closes as (
       delete from reference_markets where event_id in (select id from old) returning 1
     ), gone as (
       delete from odds_events where id in (select id from old) returning 1
     ), epoch as (
       -- Deleting odds_latest or reference_markets rows is a write of them: a writer remembering
       -- prices and references forgets them.
       -- (A data-modifying CTE runs whether or not the query reads it.)
       update odds_latest_epoch set epoch = epoch + 1 where exists (select 1 from latest) or exists (select 1 from closes) returning 1
     ) select (select count(*) from gone) + (select count(*) from latest) + (select count(*) from closes) as n`,
    [cutoff.toISOString(), batch],
  );
  return numberOf(history[0]?.n ?? 0) + numberOf(events[0]?.n ?? 0);
}
