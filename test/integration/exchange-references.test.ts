/**
 * Exchanges as sharp references through the live engine, served by a local v4 feed on 127.0.0.1
 * (docs/VALUE_ENGINE.md, "Exchanges"): Betfair Exchange's h2h (back) and h2h_lay (lay) prices,
 * priced by their midpoint; each wrong form a logged skip and no pick; the closing line from the
 * midpoint; provenance with both prices and the pricing used. Expected values by hand.
 */
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { ManualClock } from '../../src/domain/clock.js';
import type { TestApp } from '../helpers/app.js';
import { startEngineApp, startOddsFeedServer, v4Bookmaker, v4OddsEvent, type LogEntry, type OddsFeedServer } from '../helpers/odds-feed-server.js';

const NOW = new Date('2026-11-24T12:00:00Z');
const KICKOFF = new Date('2026-11-24T15:00:00Z');
const FRESH = new Date(NOW.getTime() - 30_000);
const BACK = { Arsenal: 2.0, Draw: 3.6, Chelsea: 4.2 };
const LAY = { Arsenal: 2.04, Draw: 3.7, Chelsea: 4.3 };
// (1/back + 1/lay) / 2, normalised: Chelsea (1/4.2 + 1/4.3) / 2 / 1.0044487520547714 = 0.23428441554002633.
const CHELSEA_FAIR_ODDS = 1 / 0.23428441554002633;

function exchange(back: Record<string, number>, lay: Record<string, number> | null, at: Date = FRESH): Record<string, unknown> {
  const bookmaker = v4Bookmaker('betfair_ex_eu', 'Betfair', back, at) as { markets: unknown[] };
  if (lay) bookmaker.markets.push({ key: 'h2h_lay', last_update: at.toISOString(), outcomes: Object.entries(lay).map(([name, price]) => ({ name, price })) });
  return bookmaker;
}

function match(id: string, bookmakers: Record<string, unknown>[], homeTeam = 'Arsenal'): Record<string, unknown> {
  return v4OddsEvent({ id, commenceTime: KICKOFF, homeTeam, awayTeam: 'Chelsea', bookmakers });
}

// Tipico offers Chelsea at 4.8: 4.8 x 0.947 / 4.26831 - 1 = 6.5 % post-tax.
const tipico = (at: Date = FRESH) => v4Bookmaker('tipico', 'Tipico', { Arsenal: 1.9, Draw: 3.4, Chelsea: 4.8 }, at);

const PICKS = `query { picks(first: 2) { nodes { id homeTeam selection odds referenceFairOdds closingOdds warnings
  provenance { references { bookmaker pricing prices { name price lay } fairProbabilities { name probability } } } } } }`;

interface PickNode {
  id: string;
  homeTeam: string;
  selection: string;
  odds: number;
  referenceFairOdds: number;
  closingOdds: number | null;
  warnings: string[];
  provenance: { references: { bookmaker: string; pricing: string; prices: { name: string; price: number; lay: number | null }[]; fairProbabilities: { name: string; probability: number }[] }[] };
}

describe('an exchange as the sharp reference (local v4 feed)', () => {
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
  beforeEach(async () => {
    clock = new ManualClock(NOW);
    ({ app: t, logs } = await startEngineApp(feed, clock, ['soccer_epl'], { REFERENCE_BOOKMAKERS: 'betfair_ex_eu' }));
  });
  afterEach(async () => {
    await t.close();
  });

  const poll = async () => expect(await t.runtime.poller!.pollNow(['odds'])).toBe(true);
  const picks = async () => {
    const result = await t.graphql<{ picks: { nodes: PickNode[] } }>(PICKS);
    expect(result.errors).toBeUndefined();
    return result.data!.picks.nodes;
  };
  const skipReasons = () => logs.filter((entry) => /feed entries skipped/.test(entry.msg)).flatMap((entry) => (entry.fields.examples as { reason: string }[]).map((skip) => skip.reason));

  it('prices from the back/lay midpoint, records both prices and the pricing, and closes on the midpoint', async () => {
    feed.set('odds', 'soccer_epl', [match('x1', [exchange(BACK, LAY), tipico()])]);
    await poll();
    const [pick] = await picks();
    expect(pick).toMatchObject({ selection: 'Chelsea', odds: 4.8, referenceFairOdds: Number(CHELSEA_FAIR_ODDS.toFixed(4)), warnings: ['SINGLE_SHARP_REFERENCE'] });
    const [reference] = pick!.provenance.references;
    expect(reference).toMatchObject({ bookmaker: 'betfair_ex_eu', pricing: 'MIDPOINT' });
    expect(reference!.prices).toEqual([
      { name: 'Arsenal', price: 2.0, lay: 2.04 },
      { name: 'Draw', price: 3.6, lay: 3.7 },
      { name: 'Chelsea', price: 4.2, lay: 4.3 },
    ]);

    // The last pre-kickoff market moves to back 4.0 / lay 4.1 on Chelsea: the close is its midpoint.
    const closeBack = { Arsenal: 2.1, Draw: 3.6, Chelsea: 4.0 };
    const closeLay = { Arsenal: 2.12, Draw: 3.65, Chelsea: 4.1 };
    clock.set(new Date(KICKOFF.getTime() - 60_000));
    feed.set('odds', 'soccer_epl', [match('x1', [exchange(closeBack, closeLay, new Date(KICKOFF.getTime() - 90_000)), tipico(new Date(KICKOFF.getTime() - 90_000))])]);
    await poll();
    clock.set(new Date(KICKOFF.getTime() + 60_000));
    await poll();
    const raw = (Object.keys(closeBack) as (keyof typeof closeBack)[]).map((name) => (1 / closeBack[name] + 1 / closeLay[name]) / 2);
    const chelsea = raw[2]! / raw.reduce((a, b) => a + b, 0);
    const [closed] = await picks();
    expect(closed!.closingOdds).toBe(Number((1 / chelsea).toFixed(4)));
  });

  it.each([
    ['a lay below its back price', { ...LAY, Draw: 3.5 }, 'exchange_lay_below_back'],
    ['a lay missing for an outcome', { Arsenal: 2.04, Chelsea: 4.3 }, 'exchange_lay_missing'],
    ['a spread wider than REFERENCE_MAX_EXCHANGE_SPREAD (5 %)', { ...LAY, Chelsea: 4.5 }, 'exchange_spread_wide'],
  ])('%s: a logged skip of the exchange for that market, and no pick', async (_what, lay, reason) => {
    feed.set('odds', 'soccer_epl', [match('w1', [exchange(BACK, lay), tipico()])]);
    await poll();
    expect(await picks()).toEqual([]);
    expect(skipReasons()).toEqual([expect.stringMatching(new RegExp(`^bookmaker betfair_ex_eu's h2h market not used for this event \\(${reason}\\)`))]);
  });

  it('lay outcomes that differ from the back ones drop both markets with a logged reason, and make no pick', async () => {
    // A two-way back market with a three-way lay.
    feed.set('odds', 'soccer_epl', [match('w2', [exchange({ Arsenal: 1.9, Chelsea: 2.0 }, LAY), v4Bookmaker('tipico', 'Tipico', { Arsenal: 2.3, Chelsea: 1.7 }, FRESH)])]);
    await poll();
    expect(await picks()).toEqual([]);
    expect(skipReasons()).toEqual([expect.stringContaining('h2h_lay lists "Draw", which its h2h market lacks')]);
  });

  it('back prices alone are devigged like any book', async () => {
    feed.set('odds', 'soccer_epl', [match('b1', [exchange(BACK, null), tipico()])]);
    await poll();
    const [pick] = await picks();
    expect(pick!.provenance.references[0]).toMatchObject({ bookmaker: 'betfair_ex_eu', pricing: 'DEVIG' });
    expect(pick!.provenance.references[0]!.prices.every((price) => price.lay === null)).toBe(true);
  });
});

describe('references that come and go (pinnacle and betfair_ex_eu configured)', () => {
  let feed: OddsFeedServer;
  let t: TestApp;
  let clock: ManualClock;
  let logs: LogEntry[];

  beforeAll(async () => {
    feed = await startOddsFeedServer();
    clock = new ManualClock(NOW);
    ({ app: t, logs } = await startEngineApp(feed, clock, ['soccer_epl'], { REFERENCE_BOOKMAKERS: 'pinnacle,betfair_ex_eu' }));
  });
  afterAll(async () => {
    await t.close();
    await feed.close();
  });

  const poll = async () => expect(await t.runtime.poller!.pollNow(['odds'])).toBe(true);

  it('prices an event from the references that quote it, warns single_sharp_reference with one, logs once an event none quotes, and names a reference silent for an hour', async () => {
    const pinnacle = (at: Date) => v4Bookmaker('pinnacle', 'Pinnacle', { Arsenal: 1.95, Draw: 3.5, Chelsea: 4.1 }, at);
    const soft = (at: Date) => v4Bookmaker('tipico', 'Tipico', { Arsenal: 1.8, Draw: 3.3, Chelsea: 4.9 }, at);
    const bodies = (at: Date) => [match('c1', [pinnacle(at), soft(at)]), match('c2', [soft(at)], 'Fulham')];
    feed.set('odds', 'soccer_epl', bodies(FRESH));
    await poll();
    const picks = (await t.graphql<{ picks: { nodes: { homeTeam: string; selection: string; warnings: string[] }[] } }>(`query { picks(first: 5) { nodes { homeTeam selection warnings } } }`)).data!.picks.nodes;
    expect(picks).toEqual([{ homeTeam: 'Arsenal', selection: 'Chelsea', warnings: ['SINGLE_SHARP_REFERENCE'] }]);

    // An hour of polls: Fulham v Chelsea is logged once; betfair_ex_eu quoted nothing and is named after the hour, once.
    for (let minute = 10; minute <= 70; minute += 10) {
      clock.set(new Date(NOW.getTime() + minute * 60_000));
      feed.set('odds', 'soccer_epl', bodies(new Date(clock.now().getTime() - 30_000)));
      await poll();
    }
    const unpriced = logs.filter((entry) => /no configured reference quotes this event/.test(entry.msg));
    expect(unpriced.map((entry) => entry.fields.eventId)).toEqual(['c2']);
    const silent = logs.filter((entry) => /quoted none of the events polled in the last hour/.test(entry.msg));
    expect(silent.map((entry) => [entry.level, entry.fields.reference])).toEqual([['warn', 'betfair_ex_eu']]);
  });

  it('counts in the track record, per reference, the settled engine picks it helped price (REST reference_coverage, GraphQL referenceCoverage)', async () => {
    // c3 (the same teams, another fixture): both references quote it; Chelsea at 4.9 beats their consensus too.
    const at = new Date(clock.now().getTime() - 30_000);
    feed.set('odds', 'soccer_epl', [
      match('c3', [v4Bookmaker('pinnacle', 'Pinnacle', { Arsenal: 1.95, Draw: 3.5, Chelsea: 4.1 }, at), exchange(BACK, LAY, at), v4Bookmaker('tipico', 'Tipico', { Arsenal: 1.8, Draw: 3.3, Chelsea: 4.9 }, at)]),
    ]);
    await poll();
    const nodes = (await t.graphql<{ picks: { nodes: { id: string; homeTeam: string }[] } }>(`query { picks(first: 5) { nodes { id homeTeam } } }`)).data!.picks.nodes;
    expect(nodes).toHaveLength(2);
    clock.set(new Date(KICKOFF.getTime() + 3 * 3_600_000));
    for (const node of nodes) {
      const settled = await t.graphql(`mutation($input: SettlePickInput!) { settlePick(input: $input) { id } }`, { input: { id: node.id, result: 'LOST', closingOdds: 4.2 } });
      expect(settled.errors).toBeUndefined();
    }
    const record = await t.graphql<{ trackRecord: { referenceCoverage: unknown[] } }>(`query { trackRecord(daysBack: 7) { referenceCoverage { bookmaker picks sharePct } } }`);
    // Two settled engine picks: Pinnacle priced both, the exchange one of them.
    expect(record.data!.trackRecord.referenceCoverage).toEqual([
      { bookmaker: 'pinnacle', picks: 2, sharePct: 100 },
      { bookmaker: 'betfair_ex_eu', picks: 1, sharePct: 50 },
    ]);
    const key = (await t.graphql<{ createApiKey: { key: string } }>(`mutation { createApiKey(input: { tier: GROWTH }) { key } }`)).data!.createApiKey.key;
    const rest = await t.app.inject({ method: 'GET', url: '/api/v1/track-record?days_back=7', headers: { authorization: `Bearer ${key}` } });
    expect(rest.json().reference_coverage).toEqual([
      { bookmaker: 'pinnacle', picks: 2, share_pct: 100 },
      { bookmaker: 'betfair_ex_eu', picks: 1, share_pct: 50 },
    ]);
  });
});
