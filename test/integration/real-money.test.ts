/**
 * The value engine on a bad feed day (docs/VALUE_ENGINE.md, "Settlement" and "Detection"): each
 * case is a v4 answer real feeds send, served by a local feed on 127.0.0.1 to the real app, on
 * PGlite (and on PostgreSQL when DATABASE_URL is set). Every expectation follows from the
 * fixture's numbers; polls are driven by hand on a manual clock.
 */
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { ManualClock } from '../../src/domain/clock.js';
import type { TestApp } from '../helpers/app.js';
import { PICK_FIELDS } from '../helpers/fixtures.js';
import { powerPrices, startEngineApp, startOddsFeedServer, v4Bookmaker, v4OddsEvent, v4ScoreEvent, type LogEntry, type OddsFeedServer } from '../helpers/odds-feed-server.js';

const NOW = new Date('2026-11-24T12:00:00Z');
const KICKOFF = new Date('2026-11-24T15:00:00Z');
const FRESH = new Date(NOW.getTime() - 30_000);
const MINUTE = 60_000;
const HOUR = 60 * MINUTE;
// Fair probabilities by construction (power devig of PINNACLE gives exactly these).
const FAIR = { Norwich: 0.25, Chelsea: 0.5, Draw: 0.25 };
const PINNACLE = powerPrices(FAIR, 1.05);
// Norwich fair 4.0: 4.6 at Tipico (tax 0) is a 15 % edge; the book's own margin is positive.
const SOFT = { Norwich: 4.6, Chelsea: 1.8, Draw: 3.7 };

interface PickNode {
  id: string;
  homeTeam: string;
  awayTeam: string;
  selection: string;
  odds: number;
  status: string;
  result: string | null;
  closingOdds: number | null;
  bookmaker: { slug: string };
  kickoffAt: string;
}

const PICKS = `query { picks(first: 50) { nodes { ${PICK_FIELDS} } } }`;
const PROVENANCE = `query($id: ID!) { pick(id: $id) { id status odds stakePct kellyFraction warnings bookmaker { slug } provenance {
  excludedOffers { bookmaker price reason }
  closingLine { referencePrices { name price } fairOdds at ageSecondsAtKickoff stale }
  settlement { eventId homeTeam awayTeam commenceTime scores { name score } lastUpdate receivedAt } } } }`;

/** Prices keyed by the default home team, renamed for another home team. */
function homeAs(home: string, prices: Record<string, number>): Record<string, number> {
  return Object.fromEntries(Object.entries(prices).map(([name, price]) => [name === 'Norwich' ? home : name, price]));
}

function event(id: string, books: Record<string, unknown>[], options: { home?: string; away?: string; commenceTime?: Date; sportKey?: string } = {}) {
  return v4OddsEvent({
    id,
    sportKey: options.sportKey,
    sportTitle: options.sportKey?.startsWith('icehockey') ? 'NHL' : 'EPL',
    commenceTime: options.commenceTime ?? KICKOFF,
    homeTeam: options.home ?? 'Norwich',
    awayTeam: options.away ?? 'Chelsea',
    bookmakers: books,
  });
}

describe('the engine on a bad feed day', () => {
  let feed: OddsFeedServer;
  let t: TestApp;
  let clock: ManualClock;
  let logs: LogEntry[];

  beforeAll(async () => {
    feed = await startOddsFeedServer();
  });
  afterAll(async () => {
    await feed.close();
  });

  async function start(env: Record<string, string> = {}) {
    clock = new ManualClock(NOW);
    ({ app: t, logs } = await startEngineApp(feed, clock, ['soccer_epl', 'icehockey_nhl'], { BOOKMAKER_TAX_RATES: '{"tipico":0,"bwin":0,"unibet":0}', ...env }));
  }
  beforeEach(async () => start());
  afterEach(async () => {
    // No case of a bad feed day is an error: every one is a logged skip or warning.
    expect(logs.filter((entry) => entry.level === 'error')).toEqual([]);
    await t.close();
  });

  const poll = async (kinds: ('odds' | 'scores')[]) => expect(await t.runtime.poller!.pollNow(kinds)).toBe(true);
  const picks = async () => (await t.graphql<{ picks: { nodes: PickNode[] } }>(PICKS)).data!.picks.nodes;
  const provenance = async (id: string) => (await t.graphql<{ pick: Record<string, any> }>(PROVENANCE, { id })).data!.pick;
  const reviewQueue = async () => (await t.graphql<{ reviewQueue: { nodes: { id: string; odds: number }[] } }>(`query { reviewQueue { nodes { id odds } } }`)).data!.reviewQueue.nodes;
  const warnings = (pattern: RegExp) => logs.filter((entry) => entry.level === 'warn' && pattern.test(entry.msg));

  /** One Norwich pick on event `id` (Tipico 4.6 against a fair 4.0), polled now. */
  async function norwichPick(id: string, commenceTime = KICKOFF): Promise<PickNode> {
    feed.set('odds', 'soccer_epl', [event(id, [v4Bookmaker('pinnacle', 'Pinnacle', PINNACLE, FRESH), v4Bookmaker('tipico', 'Tipico', SOFT, FRESH)], { commenceTime })]);
    await poll(['odds']);
    const pick = (await picks()).find((p) => p.selection === 'Norwich' && p.kickoffAt === commenceTime.toISOString());
    expect(pick).toMatchObject({ status: 'PUBLISHED', odds: 4.6 });
    return pick!;
  }

  describe('settlement', () => {
    it('reads the final by team name: a record listing the teams the other way round settles right, and keeps the record in provenance', async () => {
      const pick = await norwichPick('swap');
      clock.set(new Date(KICKOFF.getTime() + 2 * HOUR));
      // Norwich (home) lost 0-2; the record names Chelsea first.
      const lastUpdate = new Date(KICKOFF.getTime() + 110 * MINUTE);
      feed.set('scores', 'soccer_epl', [v4ScoreEvent({ id: 'swap', commenceTime: KICKOFF, completed: true, homeTeam: 'Chelsea', awayTeam: 'Norwich', scores: [2, 0], lastUpdate })]);
      await poll(['scores']);
      const [settled] = await picks();
      expect(settled).toMatchObject({ id: pick.id, status: 'SETTLED', result: 'LOST' });
      expect((await provenance(pick.id)).provenance.settlement).toEqual({
        eventId: 'swap',
        homeTeam: 'Chelsea',
        awayTeam: 'Norwich',
        commenceTime: KICKOFF.toISOString(),
        scores: [{ name: 'Chelsea', score: 2 }, { name: 'Norwich', score: 0 }],
        lastUpdate: lastUpdate.toISOString(),
        receivedAt: clock.now().toISOString(),
      });
    });

    it("refuses a record whose names are not exactly the event's two teams, logged once, and settles from a later right one", async () => {
      const pick = await norwichPick('names');
      clock.set(new Date(KICKOFF.getTime() + 2 * HOUR));
      feed.set('scores', 'soccer_epl', [v4ScoreEvent({ id: 'names', commenceTime: KICKOFF, completed: true, homeTeam: 'Norwich City', awayTeam: 'Chelsea', scores: [3, 0] })]);
      await poll(['scores']);
      await poll(['scores']);
      expect((await picks())[0]).toMatchObject({ id: pick.id, status: 'PUBLISHED', result: null });
      const refused = warnings(/completed score record was not used/);
      expect(refused).toHaveLength(1);
      expect(refused[0]!.fields).toMatchObject({ eventId: 'names', reason: 'teams_mismatch' });
      feed.set('scores', 'soccer_epl', [v4ScoreEvent({ id: 'names', commenceTime: KICKOFF, completed: true, homeTeam: 'Norwich', awayTeam: 'Chelsea', scores: [3, 0] })]);
      await poll(['scores']);
      expect((await picks())[0]).toMatchObject({ status: 'SETTLED', result: 'WON' });
    });

    it('never settles before the match can have ended: a 0-0 "completed" before kickoff, or one last updated at kickoff, is ignored and logged once', async () => {
      const pick = await norwichPick('early');
      // Before kickoff, a completed 0-0: today it settled the pick LOST while the match was played.
      feed.set('scores', 'soccer_epl', [v4ScoreEvent({ id: 'early', commenceTime: KICKOFF, completed: true, homeTeam: 'Norwich', awayTeam: 'Chelsea', scores: [0, 0], lastUpdate: NOW })]);
      for (let i = 0; i < 5; i += 1) await poll(['scores']);
      // 104 minutes after kickoff: still before soccer's 105.
      clock.set(new Date(KICKOFF.getTime() + 104 * MINUTE));
      await poll(['scores']);
      expect((await picks())[0]).toMatchObject({ id: pick.id, status: 'PUBLISHED' });
      expect(warnings(/not used/).map((entry) => entry.fields.reason)).toEqual(['before_min_duration']);
      // Six polls, one state: one line about the event in the whole log, not one per poll.
      expect(logs.filter((entry) => JSON.stringify(entry).includes('"early"'))).toHaveLength(1);
      // Late enough, but the record itself was last updated at kickoff: not a final of this match.
      clock.set(new Date(KICKOFF.getTime() + 106 * MINUTE));
      feed.set('scores', 'soccer_epl', [v4ScoreEvent({ id: 'early', commenceTime: KICKOFF, completed: true, homeTeam: 'Norwich', awayTeam: 'Chelsea', scores: [0, 0], lastUpdate: KICKOFF })]);
      await poll(['scores']);
      await poll(['scores']);
      expect((await picks())[0]!.status).toBe('PUBLISHED');
      expect(warnings(/not used/).map((entry) => entry.fields.reason)).toEqual(['before_min_duration', 'updated_before_kickoff']);
      // The real final.
      feed.set('scores', 'soccer_epl', [v4ScoreEvent({ id: 'early', commenceTime: KICKOFF, completed: true, homeTeam: 'Norwich', awayTeam: 'Chelsea', scores: [2, 1], lastUpdate: new Date(KICKOFF.getTime() + 105 * MINUTE) })]);
      await poll(['scores']);
      expect((await picks())[0]).toMatchObject({ status: 'SETTLED', result: 'WON' });
    });

    it('MATCH_MIN_MINUTES 0 turns the duration check off; a later completed:false withdraws a final before settlement', async () => {
      await t.close();
      await start({ MATCH_MIN_MINUTES: '{"soccer":0}' });
      // A held pick (never settled automatically) keeps the final stored but unused.
      feed.set('odds', 'soccer_epl', [event('held', [v4Bookmaker('pinnacle', 'Pinnacle', PINNACLE, FRESH), v4Bookmaker('tipico', 'Tipico', { Norwich: 6.0, Chelsea: 1.6, Draw: 3.7 }, FRESH)])]);
      await poll(['odds']);
      expect(await reviewQueue()).toHaveLength(1);
      clock.set(new Date(KICKOFF.getTime() + MINUTE));
      const final = { id: 'held', commenceTime: KICKOFF, homeTeam: 'Norwich', awayTeam: 'Chelsea', scores: [1, 0] as [number, number], lastUpdate: new Date(KICKOFF.getTime() + 30_000) };
      feed.set('scores', 'soccer_epl', [v4ScoreEvent({ ...final, completed: true })]);
      await poll(['scores']);
      const stored = async () =>
        (await t.runtime.orm.em.fork().execute<{ completed: boolean; final_record: unknown }[]>(`select completed, final_record from odds_events where id = 'held'`))[0]!;
      expect((await stored()).completed).toBe(true);
      feed.set('scores', 'soccer_epl', [v4ScoreEvent({ ...final, completed: false })]);
      await poll(['scores']);
      expect(await stored()).toEqual({ completed: false, final_record: null });
      expect(logs.some((entry) => /withdrew a final before settlement/.test(entry.msg) && entry.fields.eventId === 'held')).toBe(true);
    });

    it('a reused event id with a new kickoff is a new fixture: the old final never settles it, and it gets picks of its own', async () => {
      const first = await norwichPick('reused');
      clock.set(new Date(KICKOFF.getTime() + 2 * HOUR));
      const oldFinal = v4ScoreEvent({ id: 'reused', commenceTime: KICKOFF, completed: true, homeTeam: 'Norwich', awayTeam: 'Chelsea', scores: [1, 0] });
      feed.set('scores', 'soccer_epl', [oldFinal]);
      await poll(['scores']);
      expect((await picks()).find((p) => p.id === first.id)).toMatchObject({ status: 'SETTLED', result: 'WON' });

      // A week later the feed reuses the id for the return fixture.
      const nextKickoff = new Date(KICKOFF.getTime() + 7 * 24 * HOUR);
      clock.set(new Date(nextKickoff.getTime() - 3 * HOUR));
      const fresh = new Date(clock.now().getTime() - 30_000);
      feed.set('odds', 'soccer_epl', [event('reused', [v4Bookmaker('pinnacle', 'Pinnacle', PINNACLE, fresh), v4Bookmaker('tipico', 'Tipico', SOFT, fresh)], { commenceTime: nextKickoff })]);
      await poll(['odds']);
      const second = (await picks()).find((p) => p.id !== first.id);
      expect(second).toMatchObject({ selection: 'Norwich', status: 'PUBLISHED', kickoffAt: nextKickoff.toISOString() });
      // The scores feed still lists the old final: it must not settle the new pick.
      await poll(['scores']);
      clock.set(new Date(nextKickoff.getTime() + 2 * HOUR));
      await poll(['scores']);
      expect((await picks()).find((p) => p.id === second!.id)).toMatchObject({ status: 'PUBLISHED', result: null });
      // The new fixture's own final settles it: Norwich lost this one.
      feed.set('scores', 'soccer_epl', [v4ScoreEvent({ id: 'reused', commenceTime: nextKickoff, completed: true, homeTeam: 'Norwich', awayTeam: 'Chelsea', scores: [0, 3] })]);
      await poll(['scores']);
      const all = await picks();
      expect(all.find((p) => p.id === second!.id)).toMatchObject({ status: 'SETTLED', result: 'LOST' });
      expect(all.find((p) => p.id === first.id)).toMatchObject({ status: 'SETTLED', result: 'WON' });
    });
  });

  describe('detection', () => {
    it('skips a 3-way soft market against a 2-way reference (NHL regulation prices) with a logged reason', async () => {
      const nhl = { sportKey: 'icehockey_nhl', home: 'Bruins', away: 'Rangers' };
      feed.set('odds', 'icehockey_nhl', [
        event('nhl', [
          v4Bookmaker('pinnacle', 'Pinnacle', powerPrices({ Bruins: 0.55, Rangers: 0.45 }, 1.03), FRESH),
          // Regulation-time 3-way: both teams priced far longer than the moneyline, because a draw is possible.
          v4Bookmaker('tipico', 'Tipico', { Bruins: 2.25, Rangers: 2.7, Draw: 4.3 }, FRESH),
        ], nhl),
      ]);
      await poll(['odds']);
      expect(await picks()).toEqual([]);
      expect(await reviewQueue()).toEqual([]);
      const skipped = warnings(/feed entries skipped/).flatMap((entry) => entry.fields.examples as { reason: string }[]);
      expect(skipped.some((skip) => /tipico's h2h market not used .*outcome_not_in_reference/.test(skip.reason))).toBe(true);
    });

    it('does not use a soft market with a price above 3 x the reference or a negative margin', async () => {
      feed.set('odds', 'soccer_epl', [
        // A Draw at 1000: the implied probabilities sum to 0.76 and the Norwich "edge" is false.
        event('absurd', [v4Bookmaker('pinnacle', 'Pinnacle', PINNACLE, FRESH), v4Bookmaker('tipico', 'Tipico', { Norwich: 4.5, Chelsea: 2.05, Draw: 1000 }, FRESH)]),
        // No absurd price, but 1 / 4.6 + 1 / 2.2 + 1 / 4.2 = 0.91.
        event('negative', [v4Bookmaker('pinnacle', 'Pinnacle', PINNACLE, FRESH), v4Bookmaker('tipico', 'Tipico', { Norwich: 4.6, Chelsea: 2.2, Draw: 4.2 }, FRESH)]),
      ]);
      await poll(['odds']);
      expect(await picks()).toEqual([]);
      const reasons = warnings(/feed entries skipped/).flatMap((entry) => (entry.fields.examples as { reason: string }[]).map((skip) => skip.reason));
      expect(reasons.some((reason) => /price_beyond_reference_multiple/.test(reason))).toBe(true);
      expect(reasons.some((reason) => /negative_margin/.test(reason))).toBe(true);
    });

    it('publishes the best plausible price, recording the too-good one; a held pick nobody saw takes a plausible offer that appears later', async () => {
      // Norwich fair 4.0: 14.0 at bwin is a 250 % edge (held), 4.6 at tipico a plausible 15 %.
      feed.set('odds', 'soccer_epl', [
        event('both', [
          v4Bookmaker('pinnacle', 'Pinnacle', PINNACLE, FRESH),
          v4Bookmaker('bwin', 'Bwin', { Norwich: 10.0, Chelsea: 1.4, Draw: 3.5 }, FRESH),
          v4Bookmaker('tipico', 'Tipico', SOFT, FRESH),
        ]),
        event('later', [v4Bookmaker('pinnacle', 'Pinnacle', PINNACLE, FRESH), v4Bookmaker('bwin', 'Bwin', { Norwich: 10.0, Chelsea: 1.4, Draw: 3.5 }, FRESH)]),
      ]);
      await poll(['odds']);
      const [published] = await picks();
      expect(published).toMatchObject({ homeTeam: 'Norwich', odds: 4.6, bookmaker: { slug: 'tipico' }, status: 'PUBLISHED' });
      expect((await provenance(published!.id)).provenance.excludedOffers).toEqual([{ bookmaker: 'bwin', price: 10.0, reason: 'too_good' }]);
      const [held] = await reviewQueue();
      expect(held).toMatchObject({ odds: 10.0 });
      // Held at 10.0 (untaxed here): full Kelly (0.25 x 9 - 0.75) / 9 = 16.7 %, so the stake advice is the 2 % cap.
      expect(await provenance(held!.id)).toMatchObject({ stakePct: 2 });

      // A plausible offer appears for the held pick's selection; the suspect one is gone.
      clock.advance(MINUTE);
      const fresh = new Date(clock.now().getTime() - 30_000);
      feed.set('odds', 'soccer_epl', [event('later', [v4Bookmaker('pinnacle', 'Pinnacle', PINNACLE, fresh), v4Bookmaker('unibet', 'Unibet', { Norwich: 4.4, Chelsea: 1.85, Draw: 3.6 }, fresh)])]);
      await poll(['odds']);
      expect(await reviewQueue()).toEqual([]);
      const promoted = await provenance(held!.id);
      expect(promoted).toMatchObject({ status: 'PUBLISHED', odds: 4.4, bookmaker: { slug: 'unibet' } });
      // Everything the price decides follows the new offer: at 4.4 full Kelly is
      // (0.25 x 3.4 - 0.75) / 3.4 = 2.94 %, the advice a quarter of it, 0.74 %.
      expect(promoted.kellyFraction).toBeCloseTo(0.1 / 3.4, 4);
      expect(promoted.stakePct).toBe(0.74);
      expect(promoted.warnings).toEqual(['SINGLE_SHARP_REFERENCE']);
      expect(promoted.provenance.excludedOffers).toEqual([{ bookmaker: 'bwin', price: 10.0, reason: 'too_good' }]);
      // One pick.published for it, through the outbox like an approval.
      const events = await t.runtime.orm.em.fork().execute<{ n: number | string }[]>(`select count(*) as n from outbox_events where pick_id = ? and type = 'pick.published'`, [held!.id]);
      expect(Number(events[0]!.n)).toBe(1);
      expect((await picks()).map((p) => p.id).sort()).toEqual([published!.id, held!.id].sort());
    });

    it('treats a last_update further ahead than FEED_CLOCK_SKEW_SECONDS as stale, and accepts one within it', async () => {
      const ahead = (seconds: number) => new Date(NOW.getTime() + seconds * 1000);
      feed.set('odds', 'soccer_epl', [
        event('skewed', [v4Bookmaker('pinnacle', 'Pinnacle', PINNACLE, ahead(300)), v4Bookmaker('tipico', 'Tipico', SOFT, FRESH)]),
        event('within', [v4Bookmaker('pinnacle', 'Pinnacle', homeAs('Leeds', PINNACLE), ahead(60)), v4Bookmaker('tipico', 'Tipico', homeAs('Leeds', SOFT), FRESH)], { home: 'Leeds' }),
      ]);
      await poll(['odds']);
      expect((await picks()).map((p) => p.homeTeam)).toEqual(['Leeds']);
    });
  });

  describe('the closing line', () => {
    it('records what it was made of, marks a close older than CLOSING_LINE_MAX_AGE_SECONDS stale, and leaves a stale close out of the CLV average', async () => {
      await t.close();
      await start({ CLOSING_LINE_MAX_AGE_SECONDS: '3600' });
      feed.set('odds', 'soccer_epl', [
        event('fresh-close', [v4Bookmaker('pinnacle', 'Pinnacle', PINNACLE, FRESH), v4Bookmaker('tipico', 'Tipico', SOFT, FRESH)]),
        event('stale-close', [v4Bookmaker('pinnacle', 'Pinnacle', homeAs('Leeds', PINNACLE), FRESH), v4Bookmaker('tipico', 'Tipico', homeAs('Leeds', SOFT), FRESH)], { home: 'Leeds' }),
      ]);
      await poll(['odds']);
      // 10 minutes before kickoff, only fresh-close's reference is still quoted: Norwich's fair moves to 1 / 0.2 = 5.0.
      clock.set(new Date(KICKOFF.getTime() - 10 * MINUTE));
      const late = new Date(KICKOFF.getTime() - 11 * MINUTE);
      const moved = powerPrices({ Norwich: 0.2, Chelsea: 0.55, Draw: 0.25 }, 1.05);
      feed.set('odds', 'soccer_epl', [event('fresh-close', [v4Bookmaker('pinnacle', 'Pinnacle', moved, late)])]);
      await poll(['odds']);
      clock.set(new Date(KICKOFF.getTime() + 1_000));
      feed.set('odds', 'soccer_epl', []);
      await poll(['odds']);
      const byHome = new Map((await picks()).map((p) => [p.homeTeam, p]));
      const fresh = await provenance(byHome.get('Norwich')!.id);
      expect(byHome.get('Norwich')!.closingOdds).toBe(5);
      expect(fresh.provenance.closingLine).toEqual({
        referencePrices: Object.entries(moved).map(([name, price]) => ({ name, price })),
        fairOdds: 5,
        at: late.toISOString(),
        ageSecondsAtKickoff: 660,
        stale: false,
      });
      // Leeds' reference was last seen at 11:59:30, over 3 hours before kickoff: stale, but stored and shown.
      const stale = await provenance(byHome.get('Leeds')!.id);
      expect(byHome.get('Leeds')!.closingOdds).toBe(4);
      expect(stale.provenance.closingLine).toMatchObject({ fairOdds: 4, stale: true, ageSecondsAtKickoff: (KICKOFF.getTime() - FRESH.getTime()) / 1000 });

      // Both settle; only the fresh close counts for CLV: 100 x (4.6 / 5 - 1) = -8.
      clock.set(new Date(KICKOFF.getTime() + 2 * HOUR));
      feed.set('scores', 'soccer_epl', [
        v4ScoreEvent({ id: 'fresh-close', commenceTime: KICKOFF, completed: true, homeTeam: 'Norwich', awayTeam: 'Chelsea', scores: [1, 0] }),
        v4ScoreEvent({ id: 'stale-close', commenceTime: KICKOFF, completed: true, homeTeam: 'Leeds', awayTeam: 'Chelsea', scores: [1, 0] }),
      ]);
      await poll(['scores']);
      const record = await t.graphql<{ trackRecord: { overall: { totalSettled: number; clvAvgPct: number; clvCount: number } } }>(
        `query { trackRecord(daysBack: 30) { overall { totalSettled clvAvgPct clvCount } } }`,
      );
      // Two settled, one of them in the CLV mean: the stale close is left out, and the count says so.
      expect(record.data!.trackRecord.overall).toEqual({ totalSettled: 2, clvAvgPct: -8, clvCount: 1 });
    });

    it("dates the close at the reference's own last last_update before kickoff, even when its prices did not change", async () => {
      feed.set('odds', 'soccer_epl', [event('requoted', [v4Bookmaker('pinnacle', 'Pinnacle', PINNACLE, FRESH), v4Bookmaker('tipico', 'Tipico', SOFT, FRESH)])]);
      await poll(['odds']);
      // Two minutes before kickoff the reference quotes the same prices, stamped 20 s and then 50 s
      // after a first re-quote: each newer last_update is the reference's latest word.
      const requoted = (secondsBeforeKickoff: number) => new Date(KICKOFF.getTime() - secondsBeforeKickoff * 1000);
      for (const seconds of [150, 130, 100]) {
        clock.set(requoted(seconds - 5));
        feed.set('odds', 'soccer_epl', [event('requoted', [v4Bookmaker('pinnacle', 'Pinnacle', PINNACLE, requoted(seconds))])]);
        await poll(['odds']);
      }
      clock.set(new Date(KICKOFF.getTime() + 1_000));
      feed.set('odds', 'soccer_epl', []);
      await poll(['odds']);
      const pick = (await picks()).find((p) => p.homeTeam === 'Norwich')!;
      expect((await provenance(pick.id)).provenance.closingLine).toMatchObject({ at: requoted(100).toISOString(), ageSecondsAtKickoff: 100, stale: false });
    });
  });
});
