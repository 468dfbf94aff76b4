/**
 * Warnings on engine picks (docs/API.md, "Warnings"; docs/VALUE_ENGINE.md, "References") from a
 * local v4 feed on 127.0.0.1, with two references (REFERENCE_BOOKMAKERS=pinnacle,circasports)
 * and every surface a customer reads: GraphQL, REST, the SSE stream, webhook bodies and the
 * public endpoint.
 *   - "both": Pinnacle and Circa price the match (power margins of about 4 %): no warning;
 *   - "alone": only Pinnacle, with a margin of about 10 %: single_sharp_reference and
 *     wide_reference_market;
 *   - five minutes before kickoff Pinnacle pulls both markets and Circa moves "both": the close
 *     of "both" is Circa's alone (Pinnacle's last price is three hours old at kickoff, so it is
 *     left out), and "alone" closes on Pinnacle's three-hour-old price: stale_close.
 * Fair probabilities are known by construction (powerPrices: the power devig of those prices
 * gives them exactly), so every expected price below is written out by hand.
 */
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ManualClock } from '../../src/domain/clock.js';
import { type TestApp } from '../helpers/app.js';
import { CREATE_KEY } from '../helpers/fixtures.js';
import { startHttpsReceiver, type HttpsReceiver } from '../helpers/https-receiver.js';
import { powerPrices, startEngineApp, startOddsFeedServer, v4Bookmaker, v4OddsEvent, v4ScoreEvent, type LogEntry, type OddsFeedServer } from '../helpers/odds-feed-server.js';
import { connectSse, type SseConnection } from '../helpers/sse.js';

const NOW = new Date('2026-11-24T12:00:00Z');
const KICKOFF = new Date('2026-11-24T15:00:00Z');
const FRESH = new Date(NOW.getTime() - 30_000);
const teams = (id: string) => ({ home: `Home ${id}`, away: `Away ${id}` });
/** Prices of one match with fair probabilities home / away / draw, team names suffixed with the event id. */
const prices = (id: string, fair: [number, number, number], k: number) =>
  powerPrices({ [teams(id).home]: fair[0], [teams(id).away]: fair[1], Draw: fair[2] }, k);
const soft = (id: string, away: number) => ({ [teams(id).home]: 1.8, [teams(id).away]: away, Draw: 3.6 });
const match = (id: string, books: Record<string, unknown>[]) =>
  v4OddsEvent({ id, commenceTime: KICKOFF, homeTeam: teams(id).home, awayTeam: teams(id).away, bookmakers: books });

const CREATE_HOOK = `mutation($input: CreateWebhookSubscriptionInput!) { createWebhookSubscription(input: $input) { secret subscription { id } } }`;
const PICKS = `query { picks(first: 10) { nodes { id homeTeam selection odds referenceFairOdds closingOdds warnings status result
  provenance { references { bookmaker weight } closingLine { fairOdds stale references { bookmaker } } } } } }`;

interface PickNode {
  id: string;
  homeTeam: string;
  selection: string;
  odds: number;
  referenceFairOdds: number;
  closingOdds: number | null;
  warnings: string[];
  status: string;
  result: string | null;
  provenance: { references: { bookmaker: string; weight: number }[]; closingLine: { fairOdds: number; stale: boolean; references: { bookmaker: string }[] } | null };
}

describe('pick warnings with two references, on every surface', () => {
  let feed: OddsFeedServer;
  let receiver: HttpsReceiver;
  let t: TestApp;
  let logs: LogEntry[];
  let stream: SseConnection;
  let key: string;
  const clock = new ManualClock(NOW);

  beforeAll(async () => {
    feed = await startOddsFeedServer();
    receiver = await startHttpsReceiver();
    ({ app: t, logs } = await startEngineApp(feed, clock, ['soccer_epl'], {
      REFERENCE_BOOKMAKERS: 'pinnacle,circasports',
      BOOKMAKER_TAX_RATES: '{"tipico":0}',
      WEBHOOK_HOST_OVERRIDES: 'hooks.test=127.0.0.1',
    }));
    await t.app.listen({ port: 0, host: '127.0.0.1' });
    key = (await t.graphql<{ createApiKey: { key: string } }>(CREATE_KEY, { input: { tier: 'ENTERPRISE' } })).data!.createApiKey.key;
    const hook = await t.graphql(CREATE_HOOK, { input: { url: receiver.url('hooks.test', '/picks'), events: ['PICK_PUBLISHED', 'PICK_SETTLED'] } }, `Bearer ${key}`);
    expect(hook.errors).toBeUndefined();
    stream = await connectSse((t.app.server.address() as AddressInfo).port, '/api/v1/picks/stream', { authorization: `Bearer ${key}` });
  });
  afterAll(async () => {
    stream?.close();
    await t?.close();
    await receiver?.close();
    await feed?.close();
  });

  const poll = async (kinds: ('odds' | 'scores')[] = ['odds']) => expect(await t.runtime.poller!.pollNow(kinds)).toBe(true);
  const picks = async () => {
    const res = await t.graphql<{ picks: { nodes: PickNode[] } }>(PICKS);
    expect(res.errors).toBeUndefined();
    return new Map(res.data!.picks.nodes.map((pick) => [pick.homeTeam, pick]));
  };
  /** Relays the outbox and delivers every due webhook (the test drives them instead of the timers). */
  const deliver = async () => {
    await t.runtime.relay.relayOnce();
    while ((await t.runtime.dispatcher.dispatchOnce()) > 0) await t.runtime.dispatcher.idle();
    await t.runtime.dispatcher.idle();
  };
  const hookBodies = () => receiver.requests.map((request) => JSON.parse(request.body.toString('utf8')) as { type: string; data: Record<string, unknown> });

  it('detection: no warning with two agreeing references, both reference warnings with one wide one; GraphQL, REST, stream, webhook and public agree', async () => {
    feed.set('odds', 'soccer_epl', [
      // "both": fair away 0.25 (4.0) at both references; Tipico's 4.6 is a 15 % edge.
      match('both', [
        v4Bookmaker('pinnacle', 'Pinnacle', prices('both', [0.5, 0.25, 0.25], 1.04), FRESH),
        v4Bookmaker('circasports', 'Circa Sports', prices('both', [0.5, 0.25, 0.25], 1.05), FRESH),
        v4Bookmaker('tipico', 'Tipico', soft('both', 4.6), FRESH),
      ]),
      // "alone": only Pinnacle, k = 1.1: 0.5^(1/1.1) + 2 x 0.25^(1/1.1) - 1 = 10.0 % margin, above 8 %.
      match('alone', [v4Bookmaker('pinnacle', 'Pinnacle', prices('alone', [0.5, 0.25, 0.25], 1.1), FRESH), v4Bookmaker('tipico', 'Tipico', soft('alone', 4.6), FRESH)]),
    ]);
    await poll();
    const found = await picks();
    expect([...found.keys()].sort()).toEqual(['Home alone', 'Home both']);
    const both = found.get('Home both')!;
    const alone = found.get('Home alone')!;
    expect(both).toMatchObject({ selection: 'Away both', odds: 4.6, referenceFairOdds: 4, warnings: [] });
    expect(both.provenance.references).toEqual([
      { bookmaker: 'pinnacle', weight: 1 },
      { bookmaker: 'circasports', weight: 1 },
    ]);
    expect(alone).toMatchObject({ selection: 'Away alone', odds: 4.6, referenceFairOdds: 4, warnings: ['SINGLE_SHARP_REFERENCE', 'WIDE_REFERENCE_MARKET'] });
    expect(alone.provenance.references).toEqual([{ bookmaker: 'pinnacle', weight: 1 }]);
    const expected = { [both.id]: [], [alone.id]: ['single_sharp_reference', 'wide_reference_market'] };

    const rest = await t.app.inject({ method: 'GET', url: '/api/v1/picks', headers: { authorization: `Bearer ${key}` } });
    expect(Object.fromEntries(rest.json().data.map((pick: { id: string; warnings: string[] }) => [pick.id, pick.warnings]))).toEqual(expected);
    const publicToday = await t.app.inject({ method: 'GET', url: '/api/public/picks/today' });
    expect(Object.fromEntries(publicToday.json().picks.map((pick: { id: string; warnings: string[] }) => [pick.id, pick.warnings]))).toEqual(expected);

    await deliver();
    for (const [id, warnings] of Object.entries(expected)) {
      await stream.waitFor(`"id":"${id}"`, 10_000);
      const frame = stream.raw().split('\n').find((line) => line.startsWith('data: ') && line.includes(`"id":"${id}"`))!;
      expect(JSON.parse(frame.slice('data: '.length)).warnings).toEqual(warnings);
    }
    await receiver.waitForRequests(2, 10_000);
    expect(Object.fromEntries(hookBodies().map((body) => [body.data.id, body.data.warnings]))).toEqual(expected);
  });

  it('the close: a reference that pulled its market leaves the other to close; a close of old prices adds stale_close everywhere', async () => {
    // Five minutes before kickoff: Pinnacle is gone from both events; Circa moves "both" to fair away 0.3.
    clock.set(new Date(KICKOFF.getTime() - 5 * 60_000));
    const late = new Date(KICKOFF.getTime() - 6 * 60_000);
    feed.set('odds', 'soccer_epl', [
      match('both', [v4Bookmaker('circasports', 'Circa Sports', prices('both', [0.45, 0.3, 0.25], 1.04), late), v4Bookmaker('tipico', 'Tipico', soft('both', 3.1), late)]),
      match('alone', [v4Bookmaker('tipico', 'Tipico', soft('alone', 4.6), late)]),
    ]);
    await poll();
    clock.set(new Date(KICKOFF.getTime() + 1_000));
    await poll();
    const closed = await picks();
    const both = closed.get('Home both')!;
    const alone = closed.get('Home alone')!;
    // Circa alone: 1 / 0.3. Pinnacle's last "both" price is 3 h old at kickoff, older than the hour the close allows.
    expect(both.closingOdds).toBe(3.3333);
    expect(both.provenance.closingLine).toEqual({ fairOdds: 3.3333, stale: false, references: [{ bookmaker: 'circasports' }] });
    expect(both.warnings).toEqual([]);
    // "alone" has nothing fresher than Pinnacle's 3 h old price: it closes on it, stale.
    expect(alone.closingOdds).toBe(4);
    expect(alone.provenance.closingLine).toEqual({ fairOdds: 4, stale: true, references: [{ bookmaker: 'pinnacle' }] });
    expect(alone.warnings).toEqual(['SINGLE_SHARP_REFERENCE', 'WIDE_REFERENCE_MARKET', 'STALE_CLOSE']);

    clock.set(new Date(KICKOFF.getTime() + 3 * 3_600_000));
    feed.set('scores', 'soccer_epl', ['both', 'alone'].map((id) => v4ScoreEvent({ id, commenceTime: KICKOFF, completed: true, homeTeam: teams(id).home, awayTeam: teams(id).away, scores: [0, 1] })));
    await poll(['scores']);
    const settled = await picks();
    expect([...settled.values()].map((pick) => [pick.homeTeam, pick.status, pick.result]).sort()).toEqual([
      ['Home alone', 'SETTLED', 'WON'],
      ['Home both', 'SETTLED', 'WON'],
    ]);
    const rest = await t.app.inject({ method: 'GET', url: '/api/v1/picks', headers: { authorization: `Bearer ${key}` } });
    expect(Object.fromEntries(rest.json().data.map((pick: { id: string; warnings: string[] }) => [pick.id, pick.warnings]))).toEqual({
      [both.id]: [],
      [alone.id]: ['single_sharp_reference', 'wide_reference_market', 'stale_close'],
    });
    await deliver();
    await receiver.waitForRequests(4, 10_000);
    const settledBodies = hookBodies().filter((body) => body.type === 'pick.settled');
    expect(Object.fromEntries(settledBodies.map((body) => [body.data.id, body.data.warnings]))).toEqual({
      [both.id]: [],
      [alone.id]: ['single_sharp_reference', 'wide_reference_market', 'stale_close'],
    });
    // The stream carries publications only: the warnings a pick had then.
    expect(stream.raw()).not.toContain('stale_close');
    // CLV counts "both" only: the stale close is shown but not averaged (100 x (3.1 / 3.3333 - 1) = -7 %).
    const record = await t.app.inject({ method: 'GET', url: '/api/v1/track-record', headers: { authorization: `Bearer ${key}` } });
    expect(record.json().overall.clv_avg_pct).toBeCloseTo(100 * (4.6 / 3.3333 - 1), 1);
    expect(logs.filter((entry) => entry.level === 'error')).toEqual([]);
  });
});
