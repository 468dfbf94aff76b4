/**
 * recordReferenceMarkets' SQL keeps the reference markets the closing line is made from; the
 * backtest keeps them in memory with replacesKeptReference (src/domain/engine-rules.ts). The two
 * must keep the same market after any sequence of observations: before and after kickoff, older
 * and newer, changed and unchanged, on the engine in use (PGlite by default, PostgreSQL with
 * DATABASE_URL). The engine sends only what its memory (ReferenceMemory) has not seen stored:
 * the statement must name exactly the observations the table does not hold as sent, and a twin
 * event written through the memory must end with the same market as one sent everything.
 */
import fc from 'fast-check';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { replacesKeptReference, type KeptReferenceMarket } from '../../src/domain/engine-rules.js';
import { ReferenceMemory } from '../../src/domain/price-memory.js';
import type { Em } from '../../src/persistence/orm.js';
import { recordReferenceMarkets, upsertOddsEvents } from '../../src/persistence/odds-repository.js';
import { initORM, migrate, type Orm } from '../../src/persistence/orm.js';
import { createTestDatabase, type TestDatabase } from '../helpers/database.js';

let database: TestDatabase;
let orm: Orm;
const KICKOFF = new Date('2026-12-01T15:00:00.000Z');

beforeAll(async () => {
  database = await createTestDatabase();
  orm = await initORM(database.target);
  await migrate(orm);
}, 120_000);
afterAll(async () => {
  await orm?.close(true);
  await database?.drop();
});

const observation = fc.record({
  // Seconds around kickoff: from two hours before to ten minutes after.
  offsetSeconds: fc.integer({ min: -7200, max: 600 }),
  home: fc.constantFrom(1.9, 2.0, 2.1),
  line: fc.constantFrom(null, 2.5),
});

describe('the reference market kept for the close', () => {
  it('the SQL and the domain rule keep the same market, observation after observation', async () => {
    let run = 0;
    await fc.assert(
      fc.asyncProperty(fc.array(observation, { minLength: 1, maxLength: 8 }), async (observations) => {
        run += 1;
        const eventId = `twin-${run}`;
        const rememberedId = `twin-remembered-${run}`;
        const em = orm.em.fork();
        const memory = new ReferenceMemory();
        for (const id of [eventId, rememberedId]) {
          await upsertOddsEvents(em, [{ id, sportKey: 'soccer_epl', sport: 'soccer', league: 'EPL', homeTeam: 'Arsenal', awayTeam: 'Chelsea', commenceTime: KICKOFF }], KICKOFF);
        }
        let kept: KeptReferenceMarket | undefined;
        for (const [index, step] of observations.entries()) {
          const observed: KeptReferenceMarket = {
            line: step.line,
            prices: [
              { name: 'Arsenal', price: step.home },
              { name: 'Chelsea', price: 3.5 },
            ],
            updatedAt: new Date(KICKOFF.getTime() + step.offsetSeconds * 1000),
          };
          const { unconfirmed } = await recordReferenceMarkets(em, [{ eventId, generation: 0, bookmaker: 'pinnacle', market: 'h2h', ...observed }]);
          if (replacesKeptReference(kept, observed, KICKOFF)) kept = observed;
          const stored = await storedMarket(em, eventId);
          expect(stored).toEqual(kept);
          // Named back exactly when the table does not hold the observation as sent.
          expect(unconfirmed).toEqual(stored !== undefined && JSON.stringify(stored) === JSON.stringify(observed) ? [] : [{ eventId, generation: 0, market: 'h2h', bookmaker: 'pinnacle' }]);

          // The engine's way: one write epoch after another, only what the memory has not seen stored.
          // Each observation twice, as a market that did not move between two polls: the second
          // time the memory skips it whenever the table holds it.
          const row = { eventId: rememberedId, generation: 0, bookmaker: 'pinnacle', market: 'h2h', ...observed };
          for (const poll of [1, 2]) {
            const { send } = memory.toSend([row]);
            const recorded = await recordReferenceMarkets(em, send);
            memory.confirm(send, new Set(recorded.unconfirmed.map((key) => ReferenceMemory.keyOf(key))), BigInt(2 * index + poll), 0, [rememberedId]);
            expect(await storedMarket(em, rememberedId)).toEqual(kept);
          }
        }
      }),
      { numRuns: 60 },
    );
  });

  it('names back exactly the markets of a batch it does not store: another generation, an unknown event, after kickoff, older than the kept one', async () => {
    const em = orm.em.fork();
    await upsertOddsEvents(em, [{ id: 'mixed', sportKey: 'soccer_epl', sport: 'soccer', league: 'EPL', homeTeam: 'Arsenal', awayTeam: 'Chelsea', commenceTime: KICKOFF }], KICKOFF);
    const prices = [
      { name: 'Arsenal', price: 2.0 },
      { name: 'Chelsea', price: 3.5 },
    ];
    const before = (minutes: number) => new Date(KICKOFF.getTime() - minutes * 60_000);
    const market = (fields: { eventId?: string; generation?: number; bookmaker: string; updatedAt: Date }) => ({ eventId: 'mixed', generation: 0, market: 'h2h', line: null, prices, ...fields });
    // Kept first: Betfair's newer observation.
    expect((await recordReferenceMarkets(em, [market({ bookmaker: 'betfair_ex_eu', updatedAt: before(5) })])).unconfirmed).toEqual([]);
    const batch = [
      market({ bookmaker: 'pinnacle', updatedAt: before(10) }),
      market({ bookmaker: 'pinnacle', generation: 1, updatedAt: before(10) }),
      market({ eventId: 'nobody', bookmaker: 'pinnacle', updatedAt: before(10) }),
      market({ bookmaker: 'matchbook', updatedAt: KICKOFF }),
      market({ bookmaker: 'betfair_ex_eu', updatedAt: before(20) }),
    ];
    const { unconfirmed } = await recordReferenceMarkets(em, batch);
    const key = (row: { eventId: string; generation: number; market: string; bookmaker: string }) => `${row.eventId}/${row.generation}/${row.market}/${row.bookmaker}`;
    expect(unconfirmed.map(key).sort()).toEqual(batch.slice(1).map(key).sort());
    // What the table holds: the one accepted market and the kept newer one.
    const rows = await em.execute<{ event_id: string; generation: number; bookmaker: string }[]>(`select event_id, generation, bookmaker from reference_markets where event_id in ('mixed', 'nobody') order by bookmaker`);
    expect(rows.map((row) => `${row.event_id}/${row.generation}/${row.bookmaker}`)).toEqual(['mixed/0/betfair_ex_eu', 'mixed/0/pinnacle']);
  });
});
async function storedMarket(em: Em, eventId: string): Promise<KeptReferenceMarket | undefined> {
  const rows = await em.execute<{ line: string | number | null; prices: unknown; updated_at: Date | string }[]>('select line, prices, updated_at from reference_markets where event_id = ?', [eventId]);
  return rows[0]
    ? {
        line: rows[0].line === null ? null : Number(rows[0].line),
        prices: typeof rows[0].prices === 'string' ? JSON.parse(rows[0].prices) : rows[0].prices,
        updatedAt: new Date(rows[0].updated_at),
      }
    : undefined;
}
