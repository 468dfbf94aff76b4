/**
 * CLV_PCT_SQL is the SQL twin of clvPct (src/domain/track-record.ts): the database computes
 * the same closing-line value as the domain for any pair of odds, on the engine in use
 * (PGlite by default, PostgreSQL with DATABASE_URL).
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { clvPct } from '../../src/domain/track-record.js';
import { initORM, type Orm } from '../../src/persistence/orm.js';
import { CLV_PCT_SQL } from '../../src/persistence/track-record-repository.js';
import { createTestDatabase, type TestDatabase } from '../helpers/database.js';

let database: TestDatabase;
let orm: Orm;

beforeAll(async () => {
  database = await createTestDatabase();
  orm = await initORM(database.target);
}, 120_000);
afterAll(async () => {
  await orm?.close(true);
  await database?.drop();
});

/** The fragment over one row with the picks' column names and types. */
async function sqlClv(odds: number, closingOdds: number | null, stale = false): Promise<number | null> {
  const [row] = await orm.em
    .fork()
    .execute<{ clv: string | number | null }[]>(
      `select (${CLV_PCT_SQL})::float8 as clv from (select ?::numeric(10,4) as odds, ?::numeric(10,4) as closing_odds, ?::jsonb as warnings) as picks`,
      [odds, closingOdds, JSON.stringify(stale ? ['single_sharp_reference', 'stale_close'] : ['single_sharp_reference'])],
    );
  return row?.clv == null ? null : Number(row.clv);
}

describe('CLV_PCT_SQL', () => {
  it.each([
    [2.1, 2.0],
    [1.85, 1.95],
    [3.4, 3.4],
    [1.01, 7.5],
    [12.25, 1.333],
  ])('equals clvPct for odds %d closing at %d', async (odds, closingOdds) => {
    expect(await sqlClv(odds, closingOdds)).toBeCloseTo(clvPct(odds, closingOdds), 9);
  });

  it('is null without closing odds, or with a stale close (the sums skip both)', async () => {
    expect(await sqlClv(2.1, null)).toBeNull();
    expect(await sqlClv(2.1, 2.0, true)).toBeNull();
  });
});
