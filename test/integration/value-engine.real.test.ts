/**
 * The value engine across instances on one PostgreSQL (a `.real.test.ts` suite: CI's
 * real-services phase). One poller per deployment, no duplicate pick whatever runs at once or
 * restarts, and another instance takes over polling when the poller dies.
 */
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { claimPriceWriteEpoch, recordPriceChanges } from '../../src/persistence/odds-repository.js';
import { createTestApp, type TestApp } from '../helpers/app.js';
import { ingestInputOf, powerPrices, startOddsFeedServer, v4Bookmaker, v4OddsEvent, type OddsFeedServer } from '../helpers/odds-feed-server.js';

const PICKS = `query { picks(first: 50) { nodes { id homeTeam selection } } }`;
const INGEST = `mutation($events: [OddsEventInput!]!) { ingestOdds(events: $events) { events picksCreated skipped { eventId reason } } }`;

function kickoff(): Date {
  return new Date(Date.now() + 3 * 3_600_000);
}

/** A feed event whose Chelsea price at Tipico beats the fair 4.0 by 8.9 % after tax. */
function valueEvent(id: string, at = new Date()) {
  return v4OddsEvent({
    id,
    commenceTime: kickoff(),
    homeTeam: `Arsenal ${id}`,
    awayTeam: `Chelsea ${id}`,
    bookmakers: [
      v4Bookmaker('pinnacle', 'Pinnacle', powerPrices({ [`Arsenal ${id}`]: 0.5, [`Chelsea ${id}`]: 0.25, Draw: 0.25 }, 1.05), at),
      v4Bookmaker('tipico', 'Tipico', { [`Arsenal ${id}`]: 1.9, [`Chelsea ${id}`]: 4.6, Draw: 3.8 }, at),
    ],
  });
}

/** The same event as an ingestOdds input (camelCase). */
function valueInput(id: string) {
  return ingestInputOf(valueEvent(id));
}

async function until(condition: () => Promise<boolean> | boolean, what: string, timeoutMs = 20_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!(await condition())) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
}

describe('value engine on one PostgreSQL, several instances', () => {
  let feed: OddsFeedServer;
  const apps: TestApp[] = [];
  const env = () => ({ ODDS_FEED_URL: feed.url, ODDS_FEED_API_KEY: 'feed-key', ODDS_FEED_SPORTS: 'soccer_epl', ODDS_POLL_SECONDS: '1', SCORES_POLL_SECONDS: '1' });

  beforeAll(async () => {
    feed = await startOddsFeedServer();
  });
  afterAll(async () => {
    await feed.close();
  });
  afterEach(async () => {
    // Second instances first: the first one drops the scratch database.
    for (const app of apps.splice(0).reverse()) await app.close();
  });

  const visible = async (app: TestApp) => (await app.graphql<{ picks: { nodes: { homeTeam: string }[] } }>(PICKS)).data!.picks.nodes;

  it('never creates a pick twice: concurrent pushes on two instances, repeated polls, and a restart', async () => {
    const a = await createTestApp({ env: env(), runtime: { startPoller: false } });
    apps.push(a);
    const b = await createTestApp({ env: env(), sameDatabaseAs: a, runtime: { startPoller: false } });
    apps.push(b);
    // The same 20 events pushed to both instances at once, three times each: the unique index decides.
    const events = Array.from({ length: 20 }, (_, i) => valueInput(`dup-${i}`));
    const results = await Promise.all(
      [a, b, a, b, a, b].map((app) => app.graphql<{ ingestOdds: { picksCreated: number } }>(INGEST, { events })),
    );
    expect(results.reduce((sum, r) => sum + r.data!.ingestOdds.picksCreated, 0)).toBe(20);
    expect(await visible(a)).toHaveLength(20);

    // Polls of the same events by whichever instance holds the lease add nothing.
    feed.set('odds', 'soccer_epl', Array.from({ length: 20 }, (_, i) => valueEvent(`dup-${i}`)));
    const polled = await Promise.all([a.runtime.poller!.pollNow(['odds']), b.runtime.poller!.pollNow(['odds'])]);
    expect(polled.filter(Boolean)).toHaveLength(1);
    expect(await visible(b)).toHaveLength(20);

    // A restarted instance (a new runtime on the same database) neither.
    await b.close();
    apps.pop();
    const c = await createTestApp({ env: env(), sameDatabaseAs: a, runtime: { startPoller: false } });
    apps.push(c);
    const again = await c.graphql<{ ingestOdds: { picksCreated: number } }>(INGEST, { events });
    expect(again.data!.ingestOdds.picksCreated).toBe(0);
    expect(await visible(c)).toHaveLength(20);
  });

  it('keeps odds_latest and the history right when another instance wrote prices in between (the memory of prices is forgotten)', async () => {
    const a = await createTestApp({ env: env(), runtime: { startPoller: false } });
    apps.push(a);
    const b = await createTestApp({ env: env(), sameDatabaseAs: a, runtime: { startPoller: false } });
    apps.push(b);
    const HISTORY = `query { oddsHistory(eventId: "mem1") { bookmaker outcome price at } }`;
    const start = Date.now() - 60_000;
    // The same event, Tipico's Chelsea price as given, at a later last_update each time.
    const withChelsea = (price: number, step: number) => {
      const input = valueInput('mem1');
      const at = new Date(start + step * 1_000).toISOString();
      for (const bookmaker of input.bookmakers) {
        bookmaker.lastUpdate = at;
        for (const market of bookmaker.markets) {
          market.lastUpdate = at;
          if (bookmaker.key === 'tipico') for (const outcome of market.outcomes) if (outcome.name === 'Chelsea mem1') outcome.price = price;
        }
      }
      return [input];
    };
    const chelseaAtTipico = async (app: TestApp) =>
      (await app.graphql<{ oddsHistory: { bookmaker: string; outcome: string; price: number }[] }>(HISTORY)).data!.oddsHistory
        .filter((point) => point.bookmaker === 'tipico' && point.outcome === 'Chelsea mem1')
        .map((point) => point.price);
    expect((await a.graphql(INGEST, { events: withChelsea(4.6, 1) })).errors).toBeUndefined();
    // B moves the price; A, which remembers 4.6 as the last it wrote, then sees 4.6 again.
    expect((await b.graphql(INGEST, { events: withChelsea(4.9, 2) })).errors).toBeUndefined();
    expect((await a.graphql(INGEST, { events: withChelsea(4.6, 3) })).errors).toBeUndefined();
    expect(await chelseaAtTipico(a)).toEqual([4.6, 4.9, 4.6]);
    // And A's next unchanged poll writes nothing more: its memory is back.
    expect((await a.graphql(INGEST, { events: withChelsea(4.6, 4) })).errors).toBeUndefined();
    expect(await chelseaAtTipico(a)).toEqual([4.6, 4.9, 4.6]);
  });

  it('keeps the memory honest when another instance\'s write commits after this one began: writers of odds_latest wait for each other', async () => {
    const a = await createTestApp({ env: env(), runtime: { startPoller: false } });
    apps.push(a);
    const b = await createTestApp({ env: env(), sameDatabaseAs: a, runtime: { startPoller: false } });
    apps.push(b);
    const start = Date.now() - 60_000;
    const at = (step: number) => new Date(start + step * 1_000);
    const withChelsea = (price: number, step: number) => {
      const input = valueInput('mem2');
      for (const bookmaker of input.bookmakers) {
        bookmaker.lastUpdate = at(step).toISOString();
        for (const market of bookmaker.markets) {
          market.lastUpdate = at(step).toISOString();
          if (bookmaker.key === 'tipico') for (const outcome of market.outcomes) if (outcome.name === 'Chelsea mem2') outcome.price = price;
        }
      }
      return [input];
    };
    const chelseaAtTipico = async () =>
      (await a.graphql<{ oddsHistory: { bookmaker: string; outcome: string; price: number }[] }>(`query { oddsHistory(eventId: "mem2") { bookmaker outcome price } }`)).data!.oddsHistory
        .filter((point) => point.bookmaker === 'tipico' && point.outcome === 'Chelsea mem2')
        .map((point) => point.price);
    expect((await a.graphql(INGEST, { events: withChelsea(2.0, 1) })).errors).toBeUndefined();
    // B's write has taken its epoch and not committed yet when A's next (unchanged) poll begins.
    const em = b.runtime.orm.em.fork();
    await em.begin();
    await claimPriceWriteEpoch(em);
    let settled = false;
    const aPoll = a.graphql(INGEST, { events: withChelsea(2.0, 2) }).finally(() => (settled = true));
    const waitingForTheEpoch = async () => {
      const rows = await b.runtime.orm.em.fork().execute<{ n: string | number }[]>(
        `select count(*) as n from pg_stat_activity where datname = current_database() and wait_event_type = 'Lock' and query ilike '%odds_latest_epoch%'`,
      );
      return Number(rows[0]!.n) > 0;
    };
    await until(async () => settled || (await waitingForTheEpoch()), 'A to wait for the epoch (or to finish)');
    await recordPriceChanges(em, [{ eventId: 'mem2', bookmaker: 'tipico', market: 'h2h', outcome: 'Chelsea mem2', price: 2.5, at: at(3) }]);
    await em.commit();
    expect((await aPoll).errors).toBeUndefined();
    // A's poll came after B's commit, saw 2.5 (newer than its 2.0) and does not trust its memory of 2.0.
    expect((await a.graphql(INGEST, { events: withChelsea(2.0, 4) })).errors).toBeUndefined();
    expect(await chelseaAtTipico()).toEqual([2.0, 2.5, 2.0]);
  });

  it('polls from one instance at a time, and another takes over when the poller dies', async () => {
    feed.set('odds', 'soccer_epl', [valueEvent('t1')]);
    const a = await createTestApp({ env: env() });
    apps.push(a);
    const b = await createTestApp({ env: env(), sameDatabaseAs: a });
    apps.push(b);
    await until(() => a.runtime.poller!.isPolling() || b.runtime.poller!.isPolling(), 'one instance to take the feed lease');
    await until(async () => (await visible(a)).length === 1, 'the first pick');
    // Never both at once.
    for (let i = 0; i < 20; i++) {
      expect(a.runtime.poller!.isPolling() && b.runtime.poller!.isPolling()).toBe(false);
      await new Promise((resolve) => setTimeout(resolve, 100));
    }
    const [leader, follower] = a.runtime.poller!.isPolling() ? [a, b] : [b, a];
    // The leader dies without handing over (as a crash would): its lease runs out and the follower polls.
    await leader.runtime.poller!.stop({ release: false });
    feed.set('odds', 'soccer_epl', [valueEvent('t1'), valueEvent('t2')]);
    await until(() => follower.runtime.poller!.isPolling(), 'the follower to take the lease', 10_000);
    await until(async () => (await visible(follower)).length === 2, 'the pick found by the new poller', 10_000);
  });
});
