/**
 * The track record reads whole UTC days from track_record_days and track_record_day_stats (kept
 * in the settlement transaction) and the two partial edge days from the picks: the answer must
 * equal the aggregation of every settled pick of the window, for any window, including the
 * statistics that depend on the order of the picks (drawdown, losing streak).
 */
import fc from 'fast-check';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { recordStatistics, summarizePicks } from '../../src/domain/record-statistics.js';
import { aggregateTrackRecord, NO_AVAILABILITY, trackRecordReport, trackRecordWindow } from '../../src/domain/track-record.js';
import {
  REBUILD_TRACK_RECORD_DAYS_SQL,
  rebuildDaySummaries,
  settledRecordPicks,
  toBucket,
  trackRecordSql,
  type BucketRow,
} from '../../src/persistence/track-record-repository.js';
import { createTestApp, ManualClock, type TestApp } from '../helpers/app.js';
import { pickInput } from '../helpers/fixtures.js';

const NOW = new Date('2026-11-22T15:30:00.000Z');
const RESULTS = ['won', 'lost', 'void', 'half_won', 'half_lost'] as const;
const SPORTS = ['soccer', 'tennis', 'basketball'];
const MARKETS = ['h2h', 'totals'];

describe('track record from day sums', () => {
  let t: TestApp;
  const clock = new ManualClock(NOW);
  beforeAll(async () => {
    t = await createTestApp({ clock, runtime: { startDispatcher: false } });
    // 60 picks settled over the last ~40 days at varied times of day, several per bucket.
    for (let i = 0; i < 60; i += 1) {
      const settledAt = new Date(NOW.getTime() - (i * 16 + 3) * 3_600_000 - i * 60_000);
      const publishedAt = new Date(settledAt.getTime() - 30 * 3_600_000);
      const team = `Team ${i}`;
      // Every other soccer and basketball pick is a total (tennis has no lines).
      const market = SPORTS[i % 3] !== 'tennis' && i % 2 === 1 ? 'totals' : 'h2h';
      const pick = await t.runtime.services.picks.publish({
        ...pickInput({
          sport: SPORTS[i % 3],
          league: 'League',
          homeTeam: team,
          odds: 1.8 + (i % 7) / 10,
          ...(market === 'totals' ? { market, selection: 'Over', line: 2.5 } : { selection: team }),
        }),
        kickoffAt: new Date(settledAt.getTime() - 3 * 3_600_000).toISOString(),
        publishedAt: publishedAt.toISOString(),
      } as never);
      await t.runtime.services.picks.settle({
        id: pick.id,
        result: RESULTS[i % 5]!,
        closingOdds: 1.9 + (i % 5) / 10,
        settledAt: settledAt.toISOString(),
      } as never);
    }
    // A busy day settled out of order: each settlement recomputes the day in settled_at order.
    const busyDay = Date.UTC(2026, 10, 12);
    for (let i = 0; i < 24; i += 1) {
      const settledAt = new Date(busyDay + ((i * 7) % 24) * 3_600_000 + 17 * 60_000);
      const pick = await t.runtime.services.picks.publish({
        ...pickInput({ sport: SPORTS[i % 3], league: 'League', homeTeam: `Busy ${i}`, selection: `Busy ${i}`, odds: 1.7 + (i % 9) / 10 }),
        kickoffAt: new Date(settledAt.getTime() - 3 * 3_600_000).toISOString(),
        publishedAt: new Date(settledAt.getTime() - 30 * 3_600_000).toISOString(),
      } as never);
      await t.runtime.services.picks.settle({ id: pick.id, result: ['lost', 'won', 'lost', 'half_lost', 'void', 'lost'][i % 6]! as never, closingOdds: 2, settledAt: settledAt.toISOString() } as never);
    }
  });
  afterAll(async () => {
    await t?.close();
  });

  async function rawOnly(daysBack: number, sport: string | null, market: string | null) {
    const window = trackRecordWindow(clock.now(), daysBack);
    const { sql, params } = trackRecordSql(window, { sport, market });
    const em = t.runtime.orm.em.fork();
    const rows = await em.execute<BucketRow[]>(sql, params);
    const picks = await settledRecordPicks(em, window, { sport, market });
    // Manual picks have no provenance, so no reference priced any of them.
    return trackRecordReport(aggregateTrackRecord(rows.map(toBucket), window), recordStatistics(summarizePicks(picks)), [], NO_AVAILABILITY);
  }

  it('equals the aggregation of every settled pick, for any window length, sport, market and time of day', async () => {
    await fc.assert(
      fc.asyncProperty(
        fc.integer({ min: 1, max: 60 }),
        fc.constantFrom(null, ...SPORTS),
        fc.constantFrom(null, ...MARKETS),
        fc.integer({ min: 0, max: 86_399 }),
        async (daysBack, sport, market, secondOfDay) => {
          clock.set(new Date(Date.UTC(2026, 10, 22) + secondOfDay * 1000));
          const served = await t.runtime.services.trackRecord.get({ daysBack, sport, market });
          expect(served).toEqual(await rawOnly(daysBack, sport, market));
        },
      ),
      { numRuns: 150 },
    );
    clock.set(NOW);
    const all = await t.runtime.services.trackRecord.get({ daysBack: 60 });
    expect(all.overall.totalSettled).toBe(84);
    // 20 soccer + 20 basketball picks, every other one a total: 20 totals, 40 h2h (and the busy day's 24 h2h).
    expect(all.perMarket.map((row) => [row.market, row.totalSettled])).toEqual([
      ['h2h', 64],
      ['totals', 20],
    ]);
    expect((await t.runtime.services.trackRecord.get({ daysBack: 60, market: 'totals' })).overall.totalSettled).toBe(20);
  });

  it('the backfill rebuilds exactly the sums kept at settlement', async () => {
    const em = t.runtime.orm.em.fork();
    const before = await em.execute('select * from track_record_days order by day, sport, market, result');
    await em.execute('delete from track_record_days');
    await em.execute(REBUILD_TRACK_RECORD_DAYS_SQL);
    expect(await em.execute('select * from track_record_days order by day, sport, market, result')).toEqual(before);
    expect(before.length).toBeGreaterThan(10);
  });

  it('the rebuild of the record summaries finds what the settlements kept', async () => {
    const em = t.runtime.orm.em.fork();
    const before = await em.execute('select day, sport, market, summary from track_record_day_stats order by day, sport, market');
    await em.transactional((tx) => rebuildDaySummaries(tx));
    expect(await em.execute('select day, sport, market, summary from track_record_day_stats order by day, sport, market')).toEqual(before);
    expect(before.length).toBeGreaterThan(40);
  });
});
