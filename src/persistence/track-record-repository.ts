/**
 * Track record: settled picks grouped by UTC day, sport, market and result. Whole days come
 * from track_record_days (kept in the settlement transaction), partial days from the picks.
 */
import type { PickResult } from '../domain/pick.js';
import { EVERY, parseSummary, summariesByScope, type RecordSummary, type ScopedRecordPick } from '../domain/record-statistics.js';
import { clvPct, type TrackRecordBucket } from '../domain/track-record.js';
import type { Em } from './orm.js';
import { OUTBOX_WRITE_LOCK } from './outbox-repository.js';

/**
 * Closing-line value of one pick in percent, as SQL over the picks columns `odds` and
 * `closing_odds`: the SQL twin of clvPct in src/domain/track-record.ts (keep the two equal;
 * test/persistence/track-record-repository.test.ts compares them). NULL when the pick has no
 * closing odds, or only a stale one (docs/VALUE_ENGINE.md, "Closing line and CLV").
 */
/** The closing odds that count for CLV: a stale close (the stale_close warning) is shown but not averaged. */
const CLV_CLOSING_SQL = `(case when not warnings @> '["stale_close"]'::jsonb then closing_odds end)`;
export const CLV_PCT_SQL = `100 * (odds / ${CLV_CLOSING_SQL} - 1)`;

export interface BucketRow {
  date: string;
  sport: string;
  market: string;
  result: PickResult;
  count: number | string;
  sum_odds: number | string;
  sum_edge_pct: number | string;
  count_with_closing: number | string;
  sum_clv_pct: number | string;
}

/** What a track record is scoped to: one sport, one market, both or neither (null: every one). */
export interface TrackRecordScope {
  sport: string | null;
  market: string | null;
}

/** `and sport = ? and market = ?` for the scope's set parts, their parameters appended. */
function scopeFilter(scope: TrackRecordScope, params: unknown[]): string {
  let condition = '';
  for (const column of ['sport', 'market'] as const) {
    if (scope[column] === null) continue;
    params.push(scope[column]);
    condition += ` and ${column} = ?`;
  }
  return condition;
}

/** Settled picks of the scope in [from, to] (or [from, to) with toExclusive): the condition both track-record reads of picks use (picks_settled_at_idx). */
function settledIn(window: { from: Date; to: Date }, scope: TrackRecordScope, options: { toExclusive?: boolean }): { condition: string; params: unknown[] } {
  const params: unknown[] = [window.from, window.to];
  const scopeCondition = scopeFilter(scope, params);
  return { condition: `status = 'settled' and settled_at >= ? and settled_at ${options.toExclusive ? '<' : '<='} ?${scopeCondition}`, params };
}

/**
 * Settled picks grouped by UTC day, sport, market and result; served by the partial settled_at
 * index. Used for the partial days at the edges of a window (whole days come from track_record_days).
 */
export function trackRecordSql(
  window: { from: Date; to: Date },
  scope: TrackRecordScope,
  options: { toExclusive?: boolean } = {},
): { sql: string; params: unknown[] } {
  const { condition, params } = settledIn(window, scope, options);
  return {
    sql: `select to_char(settled_at at time zone 'UTC', 'YYYY-MM-DD') as date, sport, market, result,
              count(*) as count,
              sum(odds)::float8 as sum_odds,
              sum(edge_pct)::float8 as sum_edge_pct,
              count(${CLV_CLOSING_SQL}) as count_with_closing,
              coalesce(sum(${CLV_PCT_SQL}), 0)::float8 as sum_clv_pct
         from picks
        where ${condition}
        group by 1, 2, 3, 4`,
    params,
  };
}

/** The same buckets for whole UTC days [fromDay, toDay), from the sums kept at settlement. */
export function trackRecordDaysSql(fromDay: string, toDay: string, scope: TrackRecordScope): { sql: string; params: unknown[] } {
  const params: unknown[] = [fromDay, toDay];
  const scopeCondition = scopeFilter(scope, params);
  return {
    sql: `select to_char(day, 'YYYY-MM-DD') as date, sport, market, result, count, sum_odds::float8 as sum_odds,
                 sum_edge_pct::float8 as sum_edge_pct, count_with_closing, sum_clv_pct::float8 as sum_clv_pct
            from track_record_days
           where day >= ?::date and day < ?::date${scopeCondition}`,
    params,
  };
}

/** Adds one settled pick to its day's sums; runs in the settlement transaction (settlement is final). */
export const ADD_SETTLED_PICK_SQL = `
  insert into track_record_days (day, sport, market, result, count, sum_odds, sum_edge_pct, count_with_closing, sum_clv_pct)
  select (settled_at at time zone 'UTC')::date, sport, market, result, 1, odds, edge_pct, case when ${CLV_CLOSING_SQL} is null then 0 else 1 end,
         coalesce(${CLV_PCT_SQL}, 0)
    from picks where id = ? and status = 'settled'
  on conflict (day, sport, market, result) do update set
    count = track_record_days.count + excluded.count,
    sum_odds = track_record_days.sum_odds + excluded.sum_odds,
    sum_edge_pct = track_record_days.sum_edge_pct + excluded.sum_edge_pct,
    count_with_closing = track_record_days.count_with_closing + excluded.count_with_closing,
    sum_clv_pct = track_record_days.sum_clv_pct + excluded.sum_clv_pct`;

/** Rebuilds every day sum from the settled picks (data inserted with SQL: benchmarks, tests). */
export const REBUILD_TRACK_RECORD_DAYS_SQL = `
  insert into track_record_days (day, sport, market, result, count, sum_odds, sum_edge_pct, count_with_closing, sum_clv_pct)
  select (settled_at at time zone 'UTC')::date, sport, market, result, count(*), sum(odds), sum(edge_pct), count(${CLV_CLOSING_SQL}),
         coalesce(sum(${CLV_PCT_SQL}), 0)
    from picks where status = 'settled'
   group by 1, 2, 3, 4
  on conflict (day, sport, market, result) do update set
    count = excluded.count, sum_odds = excluded.sum_odds, sum_edge_pct = excluded.sum_edge_pct,
    count_with_closing = excluded.count_with_closing, sum_clv_pct = excluded.sum_clv_pct`;

/**
 * Adds a settled pick (already flushed in `em`'s transaction, after the outbox's write lock) to
 * its day's sums and recomputes that day's record summaries.
 */
export async function addSettledPickToDays(em: Em, pick: { id: string; settledAt: Date }): Promise<void> {
  await em.execute(ADD_SETTLED_PICK_SQL, [pick.id]);
  await refreshDaySummaries(em, pick.settledAt.toISOString().slice(0, 10));
}

/** A row of either query as the domain's bucket (the driver returns sums as strings or numbers). */
export function toBucket(row: BucketRow): TrackRecordBucket {
  return {
    date: row.date,
    sport: row.sport,
    market: row.market,
    result: row.result,
    count: Number(row.count),
    sumOdds: Number(row.sum_odds),
    sumEdgePct: Number(row.sum_edge_pct),
    countWithClosing: Number(row.count_with_closing),
    sumClvPct: Number(row.sum_clv_pct),
  };
}

/** Buckets of settled picks in [from, to] (or [from, to) with toExclusive), straight from the picks. */
export async function settledBuckets(
  em: Em,
  window: { from: Date; to: Date },
  scope: TrackRecordScope,
  options: { toExclusive?: boolean } = {},
): Promise<TrackRecordBucket[]> {
  const { sql, params } = trackRecordSql(window, scope, options);
  return (await em.execute<BucketRow[]>(sql, params)).map(toBucket);
}

/** Buckets of whole UTC days [fromDay, toDay) (YYYY-MM-DD), from the day sums. */
export async function daySumBuckets(em: Em, fromDay: string, toDay: string, scope: TrackRecordScope): Promise<TrackRecordBucket[]> {
  const { sql, params } = trackRecordDaysSql(fromDay, toDay, scope);
  return (await em.execute<BucketRow[]>(sql, params)).map(toBucket);
}

interface RecordPickRow {
  sport: string;
  market: string;
  result: PickResult;
  odds: number;
  clv_closing_odds: number | null;
  reference_fair_odds: number;
}

/** Settled picks in [from, to] (or [from, to) with toExclusive), one row each, in settled_at then id order (picks_settled_at_idx). */
export function settledRecordPicksSql(
  window: { from: Date; to: Date },
  scope: TrackRecordScope,
  options: { toExclusive?: boolean } = {},
): { sql: string; params: unknown[] } {
  const { condition, params } = settledIn(window, scope, options);
  return {
    sql: `select sport, market, result, odds::float8 as odds, ${CLV_CLOSING_SQL}::float8 as clv_closing_odds,
                 reference_fair_odds::float8 as reference_fair_odds
            from picks
           where ${condition}
           order by settled_at, id`,
    params,
  };
}

/** Settled picks in [from, to] (or [from, to) with toExclusive) as the record statistics see them, in settled_at then id order. */
export async function settledRecordPicks(
  em: Em,
  window: { from: Date; to: Date },
  scope: TrackRecordScope,
  options: { toExclusive?: boolean } = {},
): Promise<ScopedRecordPick[]> {
  const { sql, params } = settledRecordPicksSql(window, scope, options);
  const rows = await em.execute<RecordPickRow[]>(sql, params);
  return rows.map((row) => ({
    sport: row.sport,
    market: row.market,
    result: row.result,
    odds: row.odds,
    clvPct: row.clv_closing_odds === null ? null : clvPct(row.odds, row.clv_closing_odds),
    fairProbability: 1 / row.reference_fair_odds,
  }));
}

const DAY_MS = 86_400_000;

/**
 * Recomputes one UTC day's record summaries (every scope) from its settled picks, in the caller's
 * transaction. It takes the outbox's write lock (the settlement already holds it for its pick
 * event), so recomputations run one at a time and each reads after the previous one committed:
 * the day's rows always describe every pick settled that day, in settled_at order, whatever the
 * order of the commits.
 */
export async function refreshDaySummaries(em: Em, day: string): Promise<void> {
  await em.execute('select pg_advisory_xact_lock(?)', [OUTBOX_WRITE_LOCK]);
  const from = new Date(`${day}T00:00:00.000Z`);
  const picks = await settledRecordPicks(em, { from, to: new Date(from.getTime() + DAY_MS) }, { sport: null, market: null }, { toExclusive: true });
  await em.execute('delete from track_record_day_stats where day = ?::date', [day]);
  const rows = summariesByScope(picks);
  if (rows.length === 0) return;
  await em.execute(
    `insert into track_record_day_stats (day, sport, market, summary)
     select ?::date, row.sport, row.market, row.summary
       from jsonb_to_recordset(?::jsonb) as row(sport text, market text, summary jsonb)`,
    [day, JSON.stringify(rows)],
  );
}

/**
 * Days with settled picks and no summaries: a database migrated from before the summaries, or
 * picks inserted with SQL by a benchmark (track_record_days rebuilt first).
 */
export async function daysWithoutSummaries(em: Em): Promise<string[]> {
  const days = await em.execute<{ day: string }[]>(
    `select distinct to_char(day, 'YYYY-MM-DD') as day from track_record_days
      where not exists (select 1 from track_record_day_stats stats where stats.day = track_record_days.day and stats.sport = ? and stats.market = ?)
      order by 1`,
    [EVERY, EVERY],
  );
  return days.map((row) => row.day);
}

/** Every day's summaries recomputed in `em`'s transaction (after picks were inserted or changed with SQL: benchmarks, tests). */
export async function rebuildDaySummaries(em: Em): Promise<void> {
  await em.execute('delete from track_record_day_stats');
  for (const day of await daysWithoutSummaries(em)) await refreshDaySummaries(em, day);
}

/** The day sums and the record summaries rebuilt from the settled picks (picks inserted with SQL: benchmarks). */
export async function rebuildTrackRecord(em: Em): Promise<void> {
  await em.execute(REBUILD_TRACK_RECORD_DAYS_SQL);
  await rebuildDaySummaries(em);
}

/** The stored summaries of whole UTC days [fromDay, toDay) for a scope, oldest day first. */
export async function daySummaries(em: Em, fromDay: string, toDay: string, scope: TrackRecordScope): Promise<RecordSummary[]> {
  const rows = await em.execute<{ summary: unknown }[]>(
    `select summary from track_record_day_stats
      where day >= ?::date and day < ?::date and sport = ? and market = ?
      order by day`,
    [fromDay, toDay, scope.sport ?? EVERY, scope.market ?? EVERY],
  );
  return rows.map((row) => parseSummary(typeof row.summary === 'string' ? JSON.parse(row.summary) : row.summary));
}

/**
 * Per reference bookmaker, the settled engine picks of the window and scope it helped price (each
 * reference in provenance.references; a pick found before several references, its
 * referenceBookmaker), and how many settled engine picks the window holds.
 */
export async function settledReferenceCounts(
  em: Em,
  window: { from: Date; to: Date },
  scope: TrackRecordScope,
): Promise<{ counts: { bookmaker: string; picks: number }[]; enginePicks: number }> {
  const { condition, params } = settledIn(window, scope, {});
  const rows = await em.execute<{ bookmaker: string | null; picks: string | number }[]>(
    `with engine as (select id, provenance from picks where ${condition} and provenance is not null)
     select r.bookmaker, count(distinct e.id) as picks
       from engine e
       cross join lateral (
         select elem->>'bookmaker' as bookmaker from jsonb_array_elements(case when jsonb_typeof(e.provenance->'references') = 'array' then e.provenance->'references' else '[]'::jsonb end) elem
          union
         select e.provenance->>'referenceBookmaker' where e.provenance->'references' is null
       ) r
      group by rollup (r.bookmaker)`,
    params,
  );
  // The rollup's total row (bookmaker null) counts the distinct picks.
  const total = rows.find((row) => row.bookmaker === null);
  return {
    counts: rows.filter((row) => row.bookmaker !== null).map((row) => ({ bookmaker: row.bookmaker!, picks: Number(row.picks) })),
    enginePicks: total === undefined ? 0 : Number(total.picks),
  };
}

/**
 * The settled picks of the window and scope whose availability was fixed at settlement (engine
 * picks checked before kickoff): how many, how many were available 5 and 30 minutes after
 * publication, and the median minutes they stayed available (percentile_cont: the mean of the
 * two middle values for an even count).
 */
export async function settledAvailabilityCounts(
  em: Em,
  window: { from: Date; to: Date },
  scope: TrackRecordScope,
): Promise<{ tracked: number; availableAt5Min: number; availableAt30Min: number; medianMinutes: number | null }> {
  const { condition, params } = settledIn(window, scope, {});
  const [row] = await em.execute<{ tracked: string | number; at5: string | number; at30: string | number; median: string | number | null }[]>(
    `select count(*) as tracked,
            count(*) filter (where availability_at_5_min = 'available') as at5,
            count(*) filter (where availability_at_30_min = 'available') as at30,
            percentile_cont(0.5) within group (order by available_minutes)::float8 as median
       from picks where ${condition} and available_minutes is not null`,
    params,
  );
  return {
    tracked: Number(row?.tracked ?? 0),
    availableAt5Min: Number(row?.at5 ?? 0),
    availableAt30Min: Number(row?.at30 ?? 0),
    medianMinutes: row?.median == null ? null : Number(row.median),
  };
}
