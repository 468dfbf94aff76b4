import type { Clock } from '../domain/clock.js';
import { InvalidParameterError } from '../domain/errors.js';
import { validateMarket } from '../domain/market.js';
import { isSportSlug, SPORT_SLUGS } from '../domain/sports.js';
import { mergeAll, recordStatistics, summarizePicks, type RecordSummary } from '../domain/record-statistics.js';
import {
  aggregateTrackRecord,
  availabilityFigures,
  referenceCoverage,
  trackRecordReport,
  trackRecordWindow,
  type TrackRecordBucket,
  type TrackRecordReport,
} from '../domain/track-record.js';
import type { Orm } from '../persistence/orm.js';
import {
  daySumBuckets,
  daySummaries,
  daysWithoutSummaries,
  refreshDaySummaries,
  settledBuckets,
  settledRecordPicks,
  settledAvailabilityCounts,
  settledReferenceCounts,
  type TrackRecordScope,
} from '../persistence/track-record-repository.js';

const DAY_MS = 86_400_000;
const utcDay = (at: Date) => at.toISOString().slice(0, 10);

export class TrackRecordService {
  constructor(
    private readonly orm: Orm,
    private readonly clock: Clock,
  ) {}

  /**
   * Flat 1-unit stakes over picks settled in the last daysBack days; the database groups, the
   * domain sums. daysBack arrives valid (the GraphQL argument's bound, src/domain/bounds.ts).
   */
  async get(query: { sport?: string | null; market?: string | null; daysBack: number }): Promise<TrackRecordReport> {
    const { daysBack } = query;
    if (query.sport != null && !isSportSlug(query.sport)) {
      throw new InvalidParameterError('sport', `sport must be one of: ${SPORT_SLUGS.join(', ')}`);
    }
    const window = trackRecordWindow(this.clock.now(), daysBack);
    const scope: TrackRecordScope = { sport: query.sport ?? null, market: query.market == null ? null : validateMarket(query.market) };
    const em = this.orm.em.fork();
    // Whole UTC days inside the window come pre-summed; only the two partial edge days are
    // aggregated from the picks themselves.
    const fromMs = window.from.getTime();
    const firstWholeDay = new Date(Math.ceil(fromMs / DAY_MS) * DAY_MS);
    const lastDayStart = new Date(Math.floor(window.to.getTime() / DAY_MS) * DAY_MS);
    let buckets: TrackRecordBucket[];
    let summaries: RecordSummary[];
    if (firstWholeDay.getTime() >= lastDayStart.getTime()) {
      buckets = await settledBuckets(em, window, scope);
      summaries = [summarizePicks(await settledRecordPicks(em, window, scope))];
    } else {
      buckets = [
        ...(await settledBuckets(em, { from: window.from, to: firstWholeDay }, scope, { toExclusive: true })),
        ...(await daySumBuckets(em, utcDay(firstWholeDay), utcDay(lastDayStart), scope)),
        ...(await settledBuckets(em, { from: lastDayStart, to: window.to }, scope)),
      ];
      summaries = [
        summarizePicks(await settledRecordPicks(em, { from: window.from, to: firstWholeDay }, scope, { toExclusive: true })),
        ...(await daySummaries(em, utcDay(firstWholeDay), utcDay(lastDayStart), scope)),
        summarizePicks(await settledRecordPicks(em, { from: lastDayStart, to: window.to }, scope)),
      ];
    }
    const references = await settledReferenceCounts(em, window, scope);
    return trackRecordReport(
      aggregateTrackRecord(buckets, window),
      recordStatistics(mergeAll(summaries)),
      referenceCoverage(references.counts, references.enginePicks),
      availabilityFigures(await settledAvailabilityCounts(em, window, scope)),
    );
  }

  /** Days settled before the record summaries existed get theirs, one transaction a day; returns how many. */
  async fillMissingSummaries(): Promise<number> {
    const days = await daysWithoutSummaries(this.orm.em.fork());
    for (const day of days) await this.orm.em.fork().transactional((em) => refreshDaySummaries(em, day));
    return days.length;
  }
}
