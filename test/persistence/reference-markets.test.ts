/**
 * recordReferenceMarkets' SQL keeps the reference markets the closing line is made from; the
 * backtest keeps them in memory with replacesKeptReference (src/domain/engine-rules.ts). The two
 * must keep the same market after any sequence of observations: before and after kickoff, older
 * and newer, changed and unchanged, on the engine in use (PGlite by default, PostgreSQL with
 * DATABASE_URL).
 */
import fc from 'fast-check';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { replacesKeptReference, type KeptReferenceMarket } from '../../src/domain/engine-rules.js';
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
        const em = orm.em.fork();
        await upsertOddsEvents(em, [{ id: eventId, sportKey: 'soccer_epl', sport: 'soccer', league: 'EPL', homeTeam: 'Arsenal', awayTeam: 'Chelsea', commenceTime: KICKOFF }], KICKOFF);
        let kept: KeptReferenceMarket | undefined;
        for (const step of observations) {
          const observed: KeptReferenceMarket = {
            line: step.line,
            prices: [
              { name: 'Arsenal', price: step.home },
              { name: 'Chelsea', price: 3.5 },
            ],
            updatedAt: new Date(KICKOFF.getTime() + step.offsetSeconds * 1000),
          };
          await recordReferenceMarkets(em, [{ eventId, generation: 0, bookmaker: 'pinnacle', market: 'h2h', ...observed }]);
          if (replacesKeptReference(kept, observed, KICKOFF)) kept = observed;
          const rows = await em.execute<{ line: string | number | null; prices: unknown; updated_at: Date | string }[]>(
            'select line, prices, updated_at from reference_markets where event_id = ?',
            [eventId],
          );
          const stored = rows[0]
            ? {
                line: rows[0].line === null ? null : Number(rows[0].line),
                prices: typeof rows[0].prices === 'string' ? JSON.parse(rows[0].prices) : rows[0].prices,
                updatedAt: new Date(rows[0].updated_at),
              }
            : undefined;
          expect(stored).toEqual(kept);
        }
      }),
      { numRuns: 60 },
    );
  });
});
