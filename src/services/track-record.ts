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

interface BucketRow {
  date: string;
  sport: string;
  result: PickResult;
  count: number | string;
  sum_odds: number | string;
  sum_edge_pct: number | string;
  count_with_closing: number | string;
  sum_clv_pct: number | string;
}

/** Settled picks grouped by UTC day, sport and result; served by the partial settled_at index. */
export function trackRecordSql(window: { from: Date; to: Date }, sport: string | null): { sql: string; params: unknown[] } {
  const params: unknown[] = [window.from, window.to];
  let sportCondition = '';
  if (sport !== null) {
    sportCondition = 'and sport = ?';
    params.push(sport);
  }
  return {
    sql: `select to_char(settled_at at time zone 'UTC', 'YYYY-MM-DD') as date, sport, result,
              count(*) as count,
              sum(odds)::float8 as sum_odds,
              sum(edge_pct)::float8 as sum_edge_pct,
              count(closing_odds) as count_with_closing,
              coalesce(sum(100 * (odds / closing_odds - 1)), 0)::float8 as sum_clv_pct
         from picks
        where status = 'settled' and settled_at >= ? and settled_at <= ? ${sportCondition}
        group by 1, 2, 3`,
    params,
  };
}

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
    const { sql, params } = trackRecordSql(window, query.sport ?? null);
    const rows = await this.orm.em.fork().execute<BucketRow[]>(sql, params);
    const buckets: TrackRecordBucket[] = rows.map((row) => ({
      date: row.date,
      sport: row.sport,
      result: row.result,
      count: Number(row.count),
      sumOdds: Number(row.sum_odds),
      sumEdgePct: Number(row.sum_edge_pct),
      countWithClosing: Number(row.count_with_closing),
      sumClvPct: Number(row.sum_clv_pct),
    }));
    return aggregateTrackRecord(buckets, window);
  }
}
