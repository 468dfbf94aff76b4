/**
 * The embedded demo's simulated feed (DEMO_FEED) drives the real engine: engine picks reach an
 * SSE client, some are held for review, and matches settle after kickoff. The simulated feed
 * reads the app's clock, so a manual clock replays half an hour of feed in a few polls; its
 * schedule is fixed, so a restart plays the same fixtures.
 */
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ManualClock } from '../../src/domain/clock.js';
import { SIMULATED_SOFT_BOOKMAKERS } from '../../src/services/value-engine/simulated-feed.js';
import { SimulatedFeedSource } from '../../src/services/value-engine/feed-source.js';
import { createTestApp, type TestApp } from '../helpers/app.js';
import { CREATE_KEY } from '../helpers/fixtures.js';
import { connectSse, type SseConnection } from '../helpers/sse.js';

const MINUTE = 60_000;

describe('the simulated demo feed', () => {
  let t: TestApp;
  let clock: ManualClock;
  let stream: SseConnection;

  beforeAll(async () => {
    clock = new ManualClock('2026-11-24T18:00:00Z');
    t = await createTestApp({ clock, env: { DEMO_FEED: 'true' }, runtime: { startPoller: false } });
    await t.app.listen({ port: 0, host: '127.0.0.1' });
    const key = (await t.graphql<{ createApiKey: { key: string } }>(CREATE_KEY, { input: { tier: 'ENTERPRISE' } })).data!.createApiKey.key;
    stream = await connectSse((t.app.server.address() as AddressInfo).port, '/api/v1/picks/stream', { authorization: `Bearer ${key}` });
  });
  afterAll(async () => {
    stream?.close();
    await t?.close();
  });

  it('publishes engine picks of every market on the stream within two minutes of feed time, holds some for review, and settles matches after kickoff', async () => {
    expect(t.runtime.poller).not.toBeNull();
    // Minute 0, 1, 2: engine picks of h2h, spreads and totals reach the stream.
    for (let minute = 0; minute <= 2; minute++) {
      expect(await t.runtime.poller!.pollNow(['odds'])).toBe(true);
      if (minute < 2) clock.advance(MINUTE);
    }
    for (const market of ['h2h', 'spreads', 'totals']) await stream.waitFor(new RegExp(`event: pick\\.published\\ndata: [^\\n]*"market":"${market}"`), 10_000);
    const frame = await stream.waitFor(/event: pick\.published\ndata: .*\n/, 10_000);
    const soft = SIMULATED_SOFT_BOOKMAKERS.map((book) => book.key);
    const published = frame.split('\n').filter((line) => line.startsWith('data: ')).map((line) => JSON.parse(line.slice(6)));
    expect(published.length).toBeGreaterThan(0);
    for (const { id } of published) {
      const pick = await t.graphql<{ pick: { bookmaker: { slug: string }; provenance: { referenceBookmaker: string } } }>(
        `query($id: ID!) { pick(id: $id) { bookmaker { slug } provenance { referenceBookmaker } } }`,
        { id },
      );
      expect(soft).toContain(pick.data!.pick.bookmaker.slug);
      expect(pick.data!.pick.provenance.referenceBookmaker).toBe('pinnacle');
    }
    // The demo's h2h picks are consensus picks: Pinnacle devigged and Betfair Exchange's back/lay midpoint.
    const h2h = published.filter((pick: { market: string }) => pick.market === 'h2h');
    for (const { id } of h2h) {
      const pick = await t.graphql<{ pick: { warnings: string[]; provenance: { references: { bookmaker: string; pricing: string }[] } } }>(
        `query($id: ID!) { pick(id: $id) { warnings provenance { references { bookmaker pricing } } } }`,
        { id },
      );
      expect(pick.data!.pick.provenance.references).toEqual([
        { bookmaker: 'pinnacle', pricing: 'DEVIG' },
        { bookmaker: 'betfair_ex_eu', pricing: 'MIDPOINT' },
      ]);
      expect(pick.data!.pick.warnings).not.toContain('SINGLE_SHARP_REFERENCE');
    }

    // Half an hour of feed, a poll a minute: held picks and settlements appear.
    for (let minute = 0; minute < 40; minute++) {
      clock.advance(MINUTE);
      expect(await t.runtime.poller!.pollNow(['odds', 'scores'])).toBe(true);
    }
    const held = await t.graphql<{ reviewQueue: { nodes: unknown[] } }>(`query { reviewQueue(first: 200) { nodes { id } } }`);
    const all = await t.runtime.orm.em.fork().execute<{ status: string; n: string }[]>(
      `select status, count(*) as n from picks where event_id is not null group by status`,
    );
    const counts = Object.fromEntries(all.map((row) => [row.status, Number(row.n)]));
    expect((counts.admin_review ?? 0) + (counts.published ?? 0) + (counts.settled ?? 0)).toBeGreaterThan(5);
    expect(counts.admin_review ?? 0).toBeGreaterThan(0);
    expect(held.data!.reviewQueue.nodes.length).toBeLessThanOrEqual(counts.admin_review ?? 0);
    // Settled through the settlePick path: each settlement wrote its pick.settled event.
    expect(counts.settled ?? 0).toBeGreaterThan(0);
    const settledEvents = await t.runtime.orm.em.fork().execute<{ n: string }[]>(`select count(*) as n from outbox_events where type = 'pick.settled'`);
    expect(Number(settledEvents[0]!.n)).toBe(counts.settled);

    // A slow soft book catches up with the sharp price within minutes: picks sent as available
    // reach the stream again as pick.availability frames, moved, a few minutes after publication.
    await stream.waitFor(/event: pick\.availability\ndata: [^\n]*"availability":\{"status":"moved"/, 10_000);
    const changes = stream
      .raw()
      .split('\n\n')
      .filter((frame) => frame.includes('event: pick.availability\n'))
      .map((frame) => JSON.parse(frame.split('\n').find((line) => line.startsWith('data: '))!.slice(6)) as { published_at: string; availability: { status: string; since: string } });
    const moved = changes.filter((pick) => pick.availability.status === 'moved');
    expect(moved.length).toBeGreaterThan(0);
    const minutesToMove = moved.map((pick) => (Date.parse(pick.availability.since) - Date.parse(pick.published_at)) / MINUTE);
    expect(Math.min(...minutesToMove)).toBeLessThanOrEqual(5);
  });

  it('plays the same fixtures after a restart: an event seen before keeps its id, teams, kickoff, prices and final', async () => {
    const play = async (startedAt: string) => {
      const clock = new ManualClock(startedAt);
      const source = new SimulatedFeedSource(clock, ['soccer_epl']);
      // Both starts are asked about the same half hour.
      clock.set(new Date('2026-11-24T18:20:00Z'));
      const odds: { id: string }[][] = [];
      for (let minute = 0; minute < 30; minute++, clock.advance(MINUTE)) odds.push((await source.odds('soccer_epl')).body as { id: string }[]);
      const ids = new Set(odds.flat().map((event) => event.id));
      clock.advance(60 * MINUTE);
      const finals = ((await source.scores('soccer_epl')).body as { id: string; completed: boolean }[]).filter((event) => ids.has(event.id));
      return { odds, finals };
    };
    const first = await play('2026-11-24T18:00:00Z');
    const restarted = await play('2026-11-24T18:10:00Z');
    expect(first.finals.length).toBeGreaterThan(3);
    expect(first.finals.every((event) => event.completed)).toBe(true);
    expect(restarted).toEqual(first);
  });
});
