/**
 * Track record: settled picks grouped by UTC day, sport, market and result. Whole days come
 * from track_record_days (kept in the settlement transaction), partial days from the picks.
 */
import type { PickResult } from '../domain/pick.js';
import type { TrackRecordBucket } from '../domain/track-record.js';
import type { Em } from './orm.js';

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

/**
 * Settled picks grouped by UTC day, sport, market and result; served by the partial settled_at
 * index. Used for the partial days at the edges of a window (whole days come from track_record_days).
 */
export function trackRecordSql(
  window: { from: Date; to: Date },
  scope: TrackRecordScope,
  options: { toExclusive?: boolean } = {},
): { sql: string; params: unknown[] } {
  const params: unknown[] = [window.from, window.to];
  const scopeCondition = scopeFilter(scope, params);
  return {
    sql: `select to_char(settled_at at time zone 'UTC', 'YYYY-MM-DD') as date, sport, market, result,
              count(*) as count,
              sum(odds)::float8 as sum_odds,
              sum(edge_pct)::float8 as sum_edge_pct,
              count(${CLV_CLOSING_SQL}) as count_with_closing,
              coalesce(sum(${CLV_PCT_SQL}), 0)::float8 as sum_clv_pct
         from picks
        where status = 'settled' and settled_at >= ? and settled_at ${options.toExclusive ? '<' : '<='} ?${scopeCondition}
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

/** Adds a settled pick (already flushed in `em`'s transaction) to track_record_days. */
export async function addSettledPickToDays(em: Em, pickId: string): Promise<void> {
  await em.execute(ADD_SETTLED_PICK_SQL, [pickId]);
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
