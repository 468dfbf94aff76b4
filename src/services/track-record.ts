import type { Clock } from '../domain/clock.js';
import { InvalidParameterError } from '../domain/errors.js';
import { isSportSlug, SPORT_SLUGS } from '../domain/sports.js';
import {
  aggregateTrackRecord,
  trackRecordWindow,
  validateDaysBack,
  type TrackRecord,
  type TrackRecordBucket,
} from '../domain/track-record.js';
import type { PickResult } from '../domain/pick.js';
import type { Orm } from '../persistence/orm.js';

export const DAYS_BACK_DEFAULT = 30;

export interface BucketRow {
  date: string;
  sport: string;
  result: PickResult;
  count: number | string;
  sum_odds: number | string;
  sum_edge_pct: number | string;
  count_with_closing: number | string;
  sum_clv_pct: number | string;
}

/** `and sport = ?` with its parameter appended, or nothing for every sport. */
function sportFilter(sport: string | null, params: unknown[]): string {
  if (sport === null) return '';
  params.push(sport);
  return 'and sport = ?';
}

/**
 * Settled picks grouped by UTC day, sport and result; served by the partial settled_at index.
 * Used for the partial days at the edges of a window (whole days come from track_record_days).
 */
export function trackRecordSql(
  window: { from: Date; to: Date },
  sport: string | null,
  options: { toExclusive?: boolean } = {},
): { sql: string; params: unknown[] } {
  const params: unknown[] = [window.from, window.to];
  const sportCondition = sportFilter(sport, params);
  return {
    sql: `select to_char(settled_at at time zone 'UTC', 'YYYY-MM-DD') as date, sport, result,
              count(*) as count,
              sum(odds)::float8 as sum_odds,
              sum(edge_pct)::float8 as sum_edge_pct,
              count(closing_odds) as count_with_closing,
              coalesce(sum(100 * (odds / closing_odds - 1)), 0)::float8 as sum_clv_pct
         from picks
        where status = 'settled' and settled_at >= ? and settled_at ${options.toExclusive ? '<' : '<='} ? ${sportCondition}
        group by 1, 2, 3`,
    params,
  };
}

/** The same buckets for whole UTC days [fromDay, toDay), from the sums kept at settlement. */
export function trackRecordDaysSql(fromDay: string, toDay: string, sport: string | null): { sql: string; params: unknown[] } {
  const params: unknown[] = [fromDay, toDay];
  const sportCondition = sportFilter(sport, params);
  return {
    sql: `select to_char(day, 'YYYY-MM-DD') as date, sport, result, count, sum_odds::float8 as sum_odds,
                 sum_edge_pct::float8 as sum_edge_pct, count_with_closing, sum_clv_pct::float8 as sum_clv_pct
            from track_record_days
           where day >= ?::date and day < ?::date ${sportCondition}`,
    params,
  };
}

/** Adds one settled pick to its day's sums; runs in the settlement transaction (settlement is final). */
export const ADD_SETTLED_PICK_SQL = `
  insert into track_record_days (day, sport, result, count, sum_odds, sum_edge_pct, count_with_closing, sum_clv_pct)
  select (settled_at at time zone 'UTC')::date, sport, result, 1, odds, edge_pct, case when closing_odds is null then 0 else 1 end,
         coalesce(100 * (odds / closing_odds - 1), 0)
    from picks where id = ? and status = 'settled'
  on conflict (day, sport, result) do update set
    count = track_record_days.count + excluded.count,
    sum_odds = track_record_days.sum_odds + excluded.sum_odds,
    sum_edge_pct = track_record_days.sum_edge_pct + excluded.sum_edge_pct,
    count_with_closing = track_record_days.count_with_closing + excluded.count_with_closing,
    sum_clv_pct = track_record_days.sum_clv_pct + excluded.sum_clv_pct`;

/** A row of either query as the domain's bucket (the driver returns sums as strings or numbers). */
export function toBucket(row: BucketRow): TrackRecordBucket {
  return {
    date: row.date,
    sport: row.sport,
    result: row.result,
    count: Number(row.count),
    sumOdds: Number(row.sum_odds),
    sumEdgePct: Number(row.sum_edge_pct),
    countWithClosing: Number(row.count_with_closing),
    sumClvPct: Number(row.sum_clv_pct),
  };
}

const DAY_MS = 86_400_000;
const utcDay = (at: Date) => at.toISOString().slice(0, 10);

export class TrackRecordService {
  constructor(
    private readonly orm: Orm,
    private readonly clock: Clock,
  ) {}

  /** Flat 1-unit stakes over picks settled in the last daysBack days; the database groups, the domain sums. */
  async get(query: { sport?: string | null; daysBack?: number | null }): Promise<TrackRecord> {
    const daysBack = query.daysBack ?? DAYS_BACK_DEFAULT;
    validateDaysBack(daysBack);
    if (query.sport != null && !isSportSlug(query.sport)) {
      throw new InvalidParameterError('sport', `sport must be one of: ${SPORT_SLUGS.join(', ')}`);
    }
    const window = trackRecordWindow(this.clock.now(), daysBack);
    const sport = query.sport ?? null;
    const em = this.orm.em.fork();
    // Whole UTC days inside the window come pre-summed; only the two partial edge days are
    // aggregated from the picks themselves.
    const fromMs = window.from.getTime();
    const firstWholeDay = new Date(Math.ceil(fromMs / DAY_MS) * DAY_MS);
    const lastDayStart = new Date(Math.floor(window.to.getTime() / DAY_MS) * DAY_MS);
    let rows: BucketRow[];
    if (firstWholeDay.getTime() >= lastDayStart.getTime()) {
      const { sql, params } = trackRecordSql(window, sport);
      rows = await em.execute<BucketRow[]>(sql, params);
    } else {
      const head = trackRecordSql({ from: window.from, to: firstWholeDay }, sport, { toExclusive: true });
      const days = trackRecordDaysSql(utcDay(firstWholeDay), utcDay(lastDayStart), sport);
      const tail = trackRecordSql({ from: lastDayStart, to: window.to }, sport);
      rows = [
        ...(await em.execute<BucketRow[]>(head.sql, head.params)),
        ...(await em.execute<BucketRow[]>(days.sql, days.params)),
        ...(await em.execute<BucketRow[]>(tail.sql, tail.params)),
      ];
    }
    return aggregateTrackRecord(rows.map(toBucket), window);
  }
}
