/**
 * The engine's memory of the reference markets it stored (src/domain/price-memory.ts,
 * ReferenceMemory): an unchanged market is not sent again, and the memory is dropped whenever
 * another writer took the write epoch in between, or after PRICE_MEMORY_REFRESH_MS. The table
 * is changed behind the engine's back, so each of these shows in what the next ingest leaves in
 * reference_markets.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ManualClock } from '../../src/domain/clock.js';
import { PRICE_MEMORY_REFRESH_MS } from '../../src/domain/price-memory.js';
import { createTestApp, type TestApp } from '../helpers/app.js';
import { ingestInputOf, powerPrices, v4Bookmaker, v4OddsEvent } from '../helpers/odds-feed-server.js';

const INGEST = `mutation($events: [OddsEventInput!]!) { ingestOdds(events: $events) { events skipped { eventId reason } } }`;
const START = new Date('2026-12-05T12:00:00.000Z');
const EVENT_ID = 'refmem1';

/** One event quoted by Pinnacle (the reference) and Tipico, every market's last_update at `at`, as an ingestOdds input. */
function ingestInput(at: Date) {
  return [
    ingestInputOf(
      v4OddsEvent({
        id: EVENT_ID,
        commenceTime: new Date(START.getTime() + 48 * 3_600_000),
        homeTeam: 'Arsenal',
        awayTeam: 'Chelsea',
        bookmakers: [
          v4Bookmaker('pinnacle', 'Pinnacle', powerPrices({ Arsenal: 0.5, Chelsea: 0.25, Draw: 0.25 }, 1.05), at),
          v4Bookmaker('tipico', 'Tipico', { Arsenal: 1.85, Chelsea: 3.7, Draw: 3.6 }, at),
        ],
      }),
    ),
  ];
}

describe('the memory of reference markets', () => {
  let t: TestApp;
  const clock = new ManualClock(START);
  const observedAt = new Date(START.getTime() - 60_000);

  beforeAll(async () => {
    t = await createTestApp({ clock, runtime: { startPoller: false } });
  }, 120_000);
  afterAll(async () => {
    await t?.close();
  });

  const ingest = async () => {
    const result = await t.graphql<{ ingestOdds: { events: number; skipped: unknown[] } }>(INGEST, { events: ingestInput(observedAt) });
    expect(result.errors).toBeUndefined();
    expect(result.data!.ingestOdds.events).toBe(1);
  };
  const stored = async () => {
    const rows = await t.runtime.orm.em.fork().execute<{ bookmaker: string; updated_at: Date | string }[]>(
      `select bookmaker, updated_at from reference_markets where event_id = ?`,
      [EVENT_ID],
    );
    return rows.map((row) => ({ bookmaker: row.bookmaker, updatedAt: new Date(row.updated_at).toISOString() }));
  };
  const deleteBehindItsBack = async (takingTheEpoch: boolean) => {
    await t.runtime.orm.em.fork().transactional(async (em) => {
      if (takingTheEpoch) await em.execute('update odds_latest_epoch set epoch = epoch + 1');
      await em.execute(`delete from reference_markets where event_id = ?`, [EVENT_ID]);
    });
  };

  it('skips an unchanged market, and sends it again after another writer took the epoch or after the refresh', async () => {
    const kept = [{ bookmaker: 'pinnacle', updatedAt: observedAt.toISOString() }];
    await ingest();
    expect(await stored()).toEqual(kept);

    // A writer that takes the epoch (as every writer of the table must): the next ingest trusts
    // nothing it remembers and stores the market again.
    await deleteBehindItsBack(true);
    await ingest();
    expect(await stored()).toEqual(kept);

    // One that does not (a hand-written statement): the unchanged market is not sent...
    await deleteBehindItsBack(false);
    await ingest();
    expect(await stored()).toEqual([]);
    // ...until the memory's refresh.
    clock.set(new Date(START.getTime() + PRICE_MEMORY_REFRESH_MS));
    await ingest();
    expect(await stored()).toEqual(kept);
  });
});
