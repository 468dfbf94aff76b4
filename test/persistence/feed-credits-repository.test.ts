/**
 * The month's credits from the feed's x-requests-* headers (feed_credit_months): what each answer
 * adds, with answers out of order (the sports are polled at once), the feed's period starting
 * again, and answers without headers. Real database: PGlite, or PostgreSQL with DATABASE_URL.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { chargeCredits, liftCredits, readCreditMonth, stopCredits, type CreditCharge } from '../../src/persistence/feed-credits-repository.js';
import { initORM, migrate, type Orm } from '../../src/persistence/orm.js';
import { createTestDatabase, type TestDatabase } from '../helpers/database.js';

let database: TestDatabase;
let orm: Orm;

beforeAll(async () => {
  database = await createTestDatabase();
  orm = await initORM(database.target);
  await migrate(orm);
});
afterAll(async () => {
  await orm?.close(true);
  await database?.drop();
});

const AT = new Date('2026-11-10T12:00:00Z');
let month = 0;
/** Each test its own month. */
const nextMonth = () => `2030-${String(++month).padStart(2, '0')}`;
const charge = (m: string, fields: Partial<CreditCharge>) =>
  chargeCredits(orm.em.fork(), { month: m, credits: 3, fromReserve: 0, feedUsed: null, feedRemaining: null, at: AT, ...fields });

describe('feed credits by month', () => {
  it("counts the feed's increase between answers: what every client of the key spent", async () => {
    const m = nextMonth();
    // The month's first answer: no earlier count, the formula's 3.
    expect((await charge(m, { feedUsed: 1_000, feedRemaining: 99_000 })).usedCredits).toBe(3);
    // Another tool spent 20 meanwhile: 1,023 - 1,000.
    const row = await charge(m, { feedUsed: 1_023, feedRemaining: 98_977 });
    expect(row).toMatchObject({ usedCredits: 26, countedCredits: 6, feedUsed: 1_023, feedRemaining: 98_977 });
    expect(row.feedReportedAt).toEqual(AT);
  });

  it('ignores an older answer arriving after a newer one', async () => {
    const m = nextMonth();
    await charge(m, { feedUsed: 500, feedRemaining: 500 });
    await charge(m, { feedUsed: 506, feedRemaining: 494 });
    // Sent before the 506 one, answered after it.
    const late = await charge(m, { feedUsed: 503, feedRemaining: 497 });
    expect(late).toMatchObject({ usedCredits: 9, feedUsed: 506, feedRemaining: 494 });
    // The next one counts from 506, not from 503.
    expect((await charge(m, { feedUsed: 509, feedRemaining: 491 })).usedCredits).toBe(12);
    // Small counts too: 4 then a late 1 is not the feed's period starting again.
    const small = nextMonth();
    await charge(small, { feedUsed: 1, feedRemaining: 999 });
    await charge(small, { feedUsed: 4, feedRemaining: 996 });
    expect(await charge(small, { feedUsed: 1, feedRemaining: 999 })).toMatchObject({ usedCredits: 6, feedUsed: 4, feedRemaining: 996 });
  });

  it("takes a count fallen below half for the feed's period starting again", async () => {
    const m = nextMonth();
    await charge(m, { feedUsed: 19_990, feedRemaining: 10 });
    const reset = await charge(m, { feedUsed: 3, feedRemaining: 19_997 });
    expect(reset).toMatchObject({ usedCredits: 6, feedUsed: 3, feedRemaining: 19_997 });
    expect((await charge(m, { feedUsed: 6, feedRemaining: 19_994 })).usedCredits).toBe(9);
  });

  it('counts the formula without headers, nothing for a free or uncharged answer, and the reserve apart', async () => {
    const m = nextMonth();
    await charge(m, {});
    await charge(m, { credits: 0 });
    const row = await charge(m, { credits: 3, fromReserve: 3 });
    expect(row).toMatchObject({ usedCredits: 6, countedCredits: 6, reserveSpent: 3, feedUsed: null, feedRemaining: null, feedReportedAt: null });
  });

  it('stops once per budget, and lifts', async () => {
    const m = nextMonth();
    const em = orm.em.fork();
    expect(await stopCredits(em, m, 'feed_reports_no_credits', 20_000, AT)).toBe(true);
    expect(await stopCredits(em, m, 'feed_reports_no_credits', 20_000, AT)).toBe(false);
    // Another budget: stopped anew for it.
    expect(await stopCredits(em, m, 'feed_reports_no_credits', 30_000, AT)).toBe(true);
    expect(await readCreditMonth(em, m)).toMatchObject({ stoppedReason: 'feed_reports_no_credits', stoppedBudget: 30_000 });
    expect(await liftCredits(em, m)).toBe(true);
    expect(await liftCredits(em, m)).toBe(false);
    expect(await readCreditMonth(em, m)).toMatchObject({ stoppedReason: null, stoppedBudget: null, usedCredits: 0 });
  });
});
