/**
 * The value engine end to end (docs/VALUE_ENGINE.md): the real app polls a local v4 feed on
 * 127.0.0.1 (test/helpers/odds-feed-server.ts), creates, holds, closes and settles picks, and
 * the operators' GraphQL sees them. Polls are driven by hand (pollNow) on a manual clock, so
 * every expectation follows from the fixture's numbers.
 */
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { ManualClock } from '../../src/domain/clock.js';
import { ADMIN_TOKEN, type TestApp } from '../helpers/app.js';
import { CREATE_KEY, PICK_FIELDS, SETTLE } from '../helpers/fixtures.js';
import {
  powerPrices,
  startEngineApp,
  startOddsFeedServer,
  type LogEntry,
  v4Bookmaker,
  v4OddsEvent,
  v4ScoreEvent,
  type OddsFeedServer,
} from '../helpers/odds-feed-server.js';

const NOW = new Date('2026-11-24T12:00:00Z');
const KICKOFF = new Date('2026-11-24T15:00:00Z');
const FEED_KEY = 'feed-key-do-not-log-0123';
const FRESH = new Date(NOW.getTime() - 30_000);
// Reference fair probabilities by construction: power devig of these prices gives exactly them.
const FAIR = { Arsenal: 0.5, Chelsea: 0.25, Draw: 0.25 };
const PINNACLE = powerPrices(FAIR, 1.05);

function match(id: string, books: Record<string, unknown>[], overrides: Partial<Parameters<typeof v4OddsEvent>[0]> = {}) {
  return v4OddsEvent({ id, commenceTime: KICKOFF, homeTeam: `Arsenal ${id}`, awayTeam: `Chelsea ${id}`, bookmakers: books, ...overrides });
}

/** Pinnacle plus soft books for a match whose teams are suffixed with the event id. */
function books(id: string, soft: Record<string, Record<string, number>>, at: Date = FRESH, referenceAt: Date = FRESH) {
  const rename = (prices: Record<string, number>) =>
    Object.fromEntries(Object.entries(prices).map(([name, price]) => [name === 'Draw' ? name : `${name} ${id}`, price]));
  return [
    v4Bookmaker('pinnacle', 'Pinnacle', rename(PINNACLE), referenceAt),
    ...Object.entries(soft).map(([key, prices]) => v4Bookmaker(key, key === 'betfair_ex_eu' ? 'Betfair' : key[0]!.toUpperCase() + key.slice(1), rename(prices), at)),
  ];
}

const PICKS = `query { picks(first: 50) { nodes { ${PICK_FIELDS} } } }`;
const PICK_WITH_PROVENANCE = `query($id: ID!) { pick(id: $id) { id status closingOdds analysis { analysis } provenance {
  eventId detectedAt referenceBookmaker referencePrices { name price } referenceUpdatedAt devigMethod
  fairProbabilities { multiplicative additive power shin oddsRatio } offeredPrices { bookmaker price updatedAt } engineVersion } } }`;
const REVIEW_QUEUE = `query($first: Int, $after: String) { reviewQueue(first: $first, after: $after) {
  nodes { id status selection odds provenance { eventId } } pageInfo { hasNextPage endCursor } } }`;

interface PickNode {
  id: string;
  homeTeam: string;
  selection: string;
  odds: number;
  referenceFairOdds: number;
  edgePct: number;
  edgePctPostTax: number;
  kellyFraction: number;
  taxRate: number;
  status: string;
  bookmaker: { name: string; slug: string };
  kickoffAt: string;
  closingOdds: number | null;
  result: string | null;
  settledAt: string | null;
  league: string;
  sport: string;
  confidence: number;
}

describe('value engine against a local v4 feed', () => {
  let feed: OddsFeedServer;
  let t: TestApp;
  let clock: ManualClock;
  let engineLogs: LogEntry[];

  beforeAll(async () => {
    feed = await startOddsFeedServer();
  });
  afterAll(async () => {
    await feed.close();
  });
  beforeEach(async () => {
    clock = new ManualClock(NOW);
    ({ app: t, logs: engineLogs } = await startEngineApp(feed, clock, ['soccer_epl', 'basketball_nba'], {
      ODDS_FEED_API_KEY: FEED_KEY,
      BOOKMAKER_TAX_RATES: '{"betfair_ex_eu":0.02}',
    }));
  });
  afterEach(async () => {
    await t.close();
  });

  const poll = async (kinds: ('odds' | 'scores')[] = ['odds']) => expect(await t.runtime.poller!.pollNow(kinds)).toBe(true);
  const visiblePicks = async () => (await t.graphql<{ picks: { nodes: PickNode[] } }>(PICKS)).data!.picks.nodes;

  it('publishes a pick with the exact fair odds and edges, its analysis and provenance, and sends v4 queries with the key', async () => {
    // Chelsea is fair at 1 / 0.25 = 4.0; Tipico's 4.6 is (4.6 / 4 - 1) = 15 % before tax, 4.6 x 0.947 / 4 - 1 = 8.905 % after.
    feed.set('odds', 'soccer_epl', [match('e1', books('e1', { tipico: { Arsenal: 1.9, Chelsea: 4.6, Draw: 3.8 } }))]);
    await poll();
    const picks = await visiblePicks();
    expect(picks).toHaveLength(1);
    const pick = picks[0]!;
    expect(pick).toMatchObject({
      sport: 'soccer',
      league: 'EPL',
      homeTeam: 'Arsenal e1',
      selection: 'Chelsea e1',
      odds: 4.6,
      referenceFairOdds: 4,
      taxRate: 0.053,
      status: 'PUBLISHED',
      bookmaker: { name: 'Tipico', slug: 'tipico' },
      kickoffAt: KICKOFF.toISOString(),
      closingOdds: null,
    });
    // Stored as the manual path stores them: edge to 2 decimals, post-tax edge and Kelly to 4.
    expect(pick.edgePct).toBe(15);
    expect(pick.edgePctPostTax).toBe(0.089);
    const b = 4.6 * 0.947 - 1;
    expect(pick.kellyFraction).toBeCloseTo((0.25 * b - 0.75) / b, 4);
    expect(pick.confidence).toBeGreaterThan(0);
    expect(pick.confidence).toBeLessThanOrEqual(100);

    const detail = (await t.graphql<{ pick: Record<string, any> }>(PICK_WITH_PROVENANCE, { id: pick.id })).data!.pick;
    expect(detail.analysis.analysis).toContain('Pinnacle, the reference');
    expect(detail.analysis.analysis).toContain('4.000');
    expect(detail.analysis.analysis).toContain('Tipico offers 4.60');
    expect(detail.provenance).toMatchObject({
      eventId: 'e1',
      detectedAt: NOW.toISOString(),
      referenceBookmaker: 'pinnacle',
      referenceUpdatedAt: FRESH.toISOString(),
      devigMethod: 'power',
      offeredPrices: [{ bookmaker: 'tipico', price: 4.6, updatedAt: FRESH.toISOString() }],
      engineVersion: 'value-engine/1',
    });
    expect(detail.provenance.referencePrices.map((p: { name: string }) => p.name)).toEqual(['Arsenal e1', 'Chelsea e1', 'Draw']);
    expect(detail.provenance.fairProbabilities.power).toBeCloseTo(0.25, 9);
    expect(detail.provenance.fairProbabilities.multiplicative).toBeGreaterThan(0.25);

    const request = feed.requests.find((r) => r.path === '/v4/sports/soccer_epl/odds')!;
    expect(Object.fromEntries(request.query)).toEqual({
      apiKey: FEED_KEY,
      regions: 'eu',
      markets: 'h2h,spreads,totals',
      oddsFormat: 'decimal',
      dateFormat: 'iso',
    });
  });

  it('answers provenance to the admin only: an API key gets admin_required', async () => {
    feed.set('odds', 'soccer_epl', [match('e1', books('e1', { tipico: { Arsenal: 1.9, Chelsea: 4.6, Draw: 3.8 } }))]);
    await poll();
    const [pick] = await visiblePicks();
    const key = (await t.graphql<{ createApiKey: { key: string } }>(CREATE_KEY, { input: { tier: 'ENTERPRISE' } })).data!.createApiKey.key;
    const asKey = await t.graphql(`query($id: ID!) { pick(id: $id) { id provenance { eventId } } }`, { id: pick!.id }, `Bearer ${key}`);
    expect(asKey.errors?.[0]?.extensions?.code).toBe('admin_required');
    const reviewAsKey = await t.graphql(`query { reviewQueue { nodes { id } } }`, {}, `Bearer ${key}`);
    expect(reviewAsKey.errors?.[0]?.extensions?.code).toBe('admin_required');
  });

  it('makes no pick below the minimum edge, outside the odds range or the horizon, after kickoff, or from a stale reference or offer', async () => {
    const good = { tipico: { Arsenal: 1.9, Chelsea: 4.6, Draw: 3.8 } };
    const staleAt = new Date(NOW.getTime() - 301_000);
    feed.set('odds', 'soccer_epl', [
      // Control: the same offer on a healthy event makes a pick.
      match('ok', books('ok', good)),
      // 4.25 x 0.947 / 4 - 1 = 0.62 %: below 2 %.
      match('low', books('low', { tipico: { Arsenal: 1.9, Chelsea: 4.25, Draw: 3.8 } })),
      // A huge edge (16 x 0.947 / 10 - 1 = 51 %) on a price above the 15.0 ceiling of the default range 1.2-15.
      v4OddsEvent({ id: 'long', commenceTime: KICKOFF, homeTeam: 'A long', awayTeam: 'B long', bookmakers: [
        v4Bookmaker('pinnacle', 'Pinnacle', powerPrices({ 'A long': 0.9, 'B long': 0.1 }, 1.05), FRESH),
        v4Bookmaker('tipico', 'Tipico', { 'A long': 1.05, 'B long': 16 }, FRESH),
      ] }),
      match('far', books('far', good), { commenceTime: new Date(NOW.getTime() + 73 * 3_600_000) }),
      match('past', books('past', good), { commenceTime: new Date(NOW.getTime() - 60_000) }),
      match('stale-ref', books('stale-ref', good, FRESH, staleAt)),
      match('stale-offer', books('stale-offer', good, staleAt, FRESH)),
    ]);
    await poll();
    const picks = await visiblePicks();
    expect(picks.map((p) => p.homeTeam)).toEqual(['Arsenal ok']);
    const review = (await t.graphql<{ reviewQueue: { nodes: unknown[] } }>(REVIEW_QUEUE, {})).data!.reviewQueue.nodes;
    expect(review).toEqual([]);
  });

  it('takes the best post-tax price across bookmakers, with per-bookmaker tax and a slug with an underscore', async () => {
    // Post-tax: tipico 4.7 x 0.947 = 4.4509, bwin 4.75 x 0.947 = 4.498, betfair_ex_eu (a 2 % commission on net
    // winnings) 1 + 3.6 x 0.98 = 4.528 (best), stored as the tax on stakes that pays the same: 0.02 x 3.6 / 4.6.
    feed.set('odds', 'soccer_epl', [
      match('e2', books('e2', {
        tipico: { Arsenal: 1.9, Chelsea: 4.7, Draw: 3.8 },
        bwin: { Arsenal: 1.9, Chelsea: 4.75, Draw: 3.8 },
        betfair_ex_eu: { Arsenal: 1.9, Chelsea: 4.6, Draw: 3.8 },
      })),
    ]);
    await poll();
    const [pick] = await visiblePicks();
    expect(pick).toMatchObject({ odds: 4.6, taxRate: 0.01565, bookmaker: { name: 'Betfair', slug: 'betfair_ex_eu' } });
    // 4.528 / 4 - 1 = 13.2 %; from the stored tax rate, 4.6 x (1 - 0.01565) / 4 - 1 = 13.20025 %, stored to 4 decimals.
    expect(pick!.edgePctPostTax).toBe(0.132);
  });

  it('holds a too-good pick for review; the queue lists it oldest first, approve publishes it, discard retires another for good', async () => {
    // 6.0 x 0.947 / 4 - 1 = 42 % >= the 25 % review edge.
    feed.set('odds', 'soccer_epl', [match('h1', books('h1', { tipico: { Arsenal: 1.7, Chelsea: 6.0, Draw: 3.8 } }))]);
    await poll();
    clock.advance(1_000);
    feed.set('odds', 'soccer_epl', [
      match('h1', books('h1', { tipico: { Arsenal: 1.7, Chelsea: 6.0, Draw: 3.8 } })),
      match('h2', books('h2', { tipico: { Arsenal: 1.7, Chelsea: 6.5, Draw: 3.8 } })),
    ]);
    await poll();
    expect(await visiblePicks()).toEqual([]);
    const first = (await t.graphql<{ reviewQueue: { nodes: { id: string; selection: string; provenance: { eventId: string } }[]; pageInfo: { hasNextPage: boolean; endCursor: string } } }>(REVIEW_QUEUE, { first: 1 })).data!.reviewQueue;
    expect(first.nodes.map((n) => n.provenance.eventId)).toEqual(['h1']);
    expect(first.pageInfo.hasNextPage).toBe(true);
    const second = (await t.graphql<{ reviewQueue: { nodes: { id: string; provenance: { eventId: string } }[]; pageInfo: { hasNextPage: boolean } } }>(REVIEW_QUEUE, { first: 1, after: first.pageInfo.endCursor })).data!.reviewQueue;
    expect(second.nodes.map((n) => n.provenance.eventId)).toEqual(['h2']);
    expect(second.pageInfo.hasNextPage).toBe(false);

    const approved = await t.graphql<{ approvePick: { status: string } }>(`mutation($id: ID!) { approvePick(id: $id) { status } }`, { id: first.nodes[0]!.id });
    expect(approved.data!.approvePick.status).toBe('PUBLISHED');
    const discarded = await t.graphql<{ discardPick: { status: string } }>(`mutation($id: ID!) { discardPick(id: $id) { status } }`, { id: second.nodes[0]!.id });
    expect(discarded.data!.discardPick.status).toBe('DISCARDED');
    expect((await visiblePicks()).map((p) => p.homeTeam)).toEqual(['Arsenal h1']);
    expect((await t.graphql<{ reviewQueue: { nodes: unknown[] } }>(REVIEW_QUEUE, {})).data!.reviewQueue.nodes).toEqual([]);

    // The discarded slot stays taken: the same edge on the next poll makes nothing.
    await poll();
    expect((await t.graphql<{ reviewQueue: { nodes: unknown[] } }>(REVIEW_QUEUE, {})).data!.reviewQueue.nodes).toEqual([]);
    // Hidden everywhere, and final.
    const again = await t.graphql(`mutation($id: ID!) { approvePick(id: $id) { status } }`, { id: second.nodes[0]!.id });
    expect(again.errors?.[0]?.extensions?.code).toBe('invalid_transition');
    const rest = await t.app.inject({ method: 'GET', url: '/api/public/picks/today' });
    expect(rest.json().picks.map((p: { match: { home: string } }) => p.match.home)).toEqual(['Arsenal h1']);
  });

  it('publishes one side per market: a later candidate on another side is held (opposite_side), the best side of one poll wins; an operator may approve', async () => {
    const HOLDS = `query { reviewQueue { nodes { id homeTeam selection odds provenance { holdReasons } } } }`;
    // Chelsea fair 4.0: Tipico's 4.6 is 4.6 x 0.947 / 4 - 1 = 8.9 % post-tax; published.
    feed.set('odds', 'soccer_epl', [match('o1', books('o1', { tipico: { Arsenal: 1.9, Chelsea: 4.6, Draw: 3.8 } }))]);
    await poll();
    expect((await visiblePicks()).map((p) => p.selection)).toEqual(['Chelsea o1']);
    // Arsenal fair 2.0: Unibet's 2.3 is 2.3 x 0.947 / 2 - 1 = 8.9 % post-tax on the other side of the same market.
    clock.advance(60_000);
    feed.set('odds', 'soccer_epl', [match('o1', books('o1', { tipico: { Arsenal: 1.9, Chelsea: 4.6, Draw: 3.8 }, unibet: { Arsenal: 2.3, Chelsea: 3.5, Draw: 3.4 } }))]);
    await poll();
    await poll();
    expect((await visiblePicks()).map((p) => p.selection)).toEqual(['Chelsea o1']);
    const held = (await t.graphql<{ reviewQueue: { nodes: { id: string; selection: string; odds: number; provenance: { holdReasons: string[] } }[] } }>(HOLDS)).data!.reviewQueue.nodes;
    expect(held.map(({ selection, odds, provenance }) => ({ selection, odds, holdReasons: provenance.holdReasons }))).toEqual([
      { selection: 'Arsenal o1', odds: 2.3, holdReasons: ['OPPOSITE_SIDE'] },
    ]);
    expect(engineLogs.filter((line) => /held for review \(opposite_side\)/.test(String(line.msg)))).toHaveLength(1);
    // The customer API shows one side.
    const key = (await t.graphql<{ createApiKey: { key: string } }>(CREATE_KEY, { input: { tier: 'STARTER' } })).data!.createApiKey.key;
    const rest = (await t.app.inject({ method: 'GET', url: '/api/v1/picks', headers: { authorization: `Bearer ${key}` } })).json();
    expect(rest.data.map((p: { selection: string }) => p.selection)).toEqual(['Chelsea o1']);

    // Both sides in one poll: Arsenal at 2.4 (13.6 % post-tax) beats Chelsea at 4.6 (8.9 %).
    feed.set('odds', 'soccer_epl', [match('o2', books('o2', { tipico: { Arsenal: 1.9, Chelsea: 4.6, Draw: 3.8 }, unibet: { Arsenal: 2.4, Chelsea: 3.5, Draw: 3.3 } }))]);
    await poll();
    expect((await visiblePicks()).filter((p) => p.homeTeam === 'Arsenal o2').map((p) => p.selection)).toEqual(['Arsenal o2']);
    const heldO2 = (await t.graphql<{ reviewQueue: { nodes: { id: string; homeTeam: string; selection: string; provenance: { holdReasons: string[] } }[] } }>(HOLDS)).data!.reviewQueue.nodes.filter(
      (node) => node.homeTeam === 'Arsenal o2',
    );
    expect(heldO2.map((node) => [node.selection, node.provenance.holdReasons])).toEqual([['Chelsea o2', ['OPPOSITE_SIDE']]]);

    // The operator's choice: approving publishes the other side, its reason kept.
    const approved = await t.graphql<{ approvePick: { status: string } }>(`mutation($id: ID!) { approvePick(id: $id) { status } }`, { id: held[0]!.id });
    expect(approved.data!.approvePick.status).toBe('PUBLISHED');
    const kept = await t.graphql<{ pick: { provenance: { holdReasons: string[] } } }>(`query($id: ID!) { pick(id: $id) { provenance { holdReasons } } }`, { id: held[0]!.id });
    expect(kept.data!.pick.provenance.holdReasons).toEqual(['OPPOSITE_SIDE']);
  });

  it('one side per market holds at the write too: a writer that planned before another side was published holds its pick', async () => {
    feed.set('odds', 'soccer_epl', [match('r1', books('r1', { tipico: { Arsenal: 1.9, Chelsea: 4.6, Draw: 3.8 } }))]);
    await poll();
    expect((await visiblePicks()).map((p) => p.selection)).toEqual(['Chelsea r1']);
    // A second writer (an operator's ingestOdds, another instance) read the event before that
    // publication, so its plan publishes Arsenal r1 as a first side: the write holds it instead.
    const input = { sport: 'soccer', league: 'EPL', homeTeam: 'Arsenal r1', awayTeam: 'Chelsea r1', kickoffAt: KICKOFF.toISOString(), selection: 'Arsenal r1', bookmaker: { name: 'Unibet', slug: 'unibet', taxRate: 0.053 }, odds: 2.3, referenceFairOdds: 2, confidence: 60 };
    const extras = { eventId: 'r1', eventGeneration: 0, analysis: 'Arsenal r1 at 2.3.', warnings: [], provenance: { eventId: 'r1', holdReasons: [] } };
    const [written] = await t.runtime.services.picks.publishFromEngine([{ input, extras }]);
    expect(written).toMatchObject({ selection: 'Arsenal r1', status: 'admin_review', publishedAt: null });
    const held = await t.graphql<{ pick: { provenance: { holdReasons: string[] } } }>(`query($id: ID!) { pick(id: $id) { provenance { holdReasons } } }`, { id: (written as { id: string }).id });
    expect(held.data!.pick.provenance.holdReasons).toEqual(['OPPOSITE_SIDE']);
    expect((await visiblePicks()).map((p) => p.selection)).toEqual(['Chelsea r1']);
  });

  it('refuses to approve a held pick after kickoff and to discard a pick that was visible', async () => {
    feed.set('odds', 'soccer_epl', [match('k1', books('k1', { tipico: { Arsenal: 1.7, Chelsea: 6.0, Draw: 3.8 } }))]);
    await poll();
    const [held] = (await t.graphql<{ reviewQueue: { nodes: { id: string }[] } }>(REVIEW_QUEUE, {})).data!.reviewQueue.nodes;
    clock.set(KICKOFF);
    // Past kickoff the queue no longer lists it, and approving is refused.
    expect((await t.graphql<{ reviewQueue: { nodes: unknown[] } }>(REVIEW_QUEUE, {})).data!.reviewQueue.nodes).toEqual([]);
    const late = await t.graphql(`mutation($id: ID!) { approvePick(id: $id) { status } }`, { id: held!.id });
    expect(late.errors?.[0]?.extensions?.code).toBe('invalid_transition');
    // The error names the status the pick is in, not the one it was refused.
    expect(late.errors?.[0]?.message).toBe('A pick in status admin_review cannot become published: the kickoff has passed; a pick cannot be approved after kickoff.');

    clock.set(NOW);
    feed.set('odds', 'soccer_epl', [match('v1', books('v1', { tipico: { Arsenal: 1.9, Chelsea: 4.6, Draw: 3.8 } }))]);
    await poll();
    const [visible] = await visiblePicks();
    await t.graphql(`mutation($id: ID!) { holdPick(id: $id) { status } }`, { id: visible!.id });
    const discard = await t.graphql(`mutation($id: ID!) { discardPick(id: $id) { status } }`, { id: visible!.id });
    expect(discard.errors?.[0]?.extensions?.code).toBe('invalid_transition');
    expect(discard.errors?.[0]?.message).toMatch(/^A pick in status admin_review cannot become discarded/);
  });

  it('never duplicates a pick across repeated polls, even when the price improves', async () => {
    feed.set('odds', 'soccer_epl', [match('d1', books('d1', { tipico: { Arsenal: 1.9, Chelsea: 4.6, Draw: 3.8 } }))]);
    await poll();
    await poll();
    feed.set('odds', 'soccer_epl', [match('d1', books('d1', { tipico: { Arsenal: 1.9, Chelsea: 4.9, Draw: 3.8 } }))]);
    clock.advance(10_000);
    await poll();
    const picks = await visiblePicks();
    expect(picks).toHaveLength(1);
    expect(picks[0]!.odds).toBe(4.6);
  });

  it('moves the kickoff when commence_time changes before kickoff', async () => {
    feed.set('odds', 'soccer_epl', [match('m1', books('m1', { tipico: { Arsenal: 1.9, Chelsea: 4.6, Draw: 3.8 } }))]);
    await poll();
    const later = new Date(KICKOFF.getTime() + 30 * 60_000);
    feed.set('odds', 'soccer_epl', [match('m1', books('m1', { tipico: { Arsenal: 1.9, Chelsea: 4.6, Draw: 3.8 } }), { commenceTime: later })]);
    await poll();
    const [moved] = await visiblePicks();
    expect(moved!.kickoffAt).toBe(later.toISOString());
    // The public ledger records the move, with the new kickoff as the time the pick is revealed.
    const ledger = (await t.app.inject({ method: 'GET', url: '/api/public/ledger' })).json() as { entries: { type: string; pick_id: string; reveal_after: string; pick?: unknown }[] };
    expect(ledger.entries.filter((entry) => entry.pick_id === moved!.id).map((entry) => [entry.type, entry.reveal_after])).toEqual([
      ['pick.published', KICKOFF.toISOString()],
      ['pick.rescheduled', later.toISOString()],
    ]);
    // At the first kickoff the match has not started: the pick is still secret.
    clock.set(new Date(KICKOFF.getTime() + 60_000));
    const atOldKickoff = (await t.app.inject({ method: 'GET', url: '/api/public/ledger' })).json() as { entries: { pick?: unknown }[] };
    expect(atOldKickoff.entries.every((entry) => entry.pick === undefined)).toBe(true);
    clock.set(later);
    const atNewKickoff = (await t.app.inject({ method: 'GET', url: '/api/public/ledger' })).json() as { entries: { pick?: { kickoff_at: string } }[] };
    expect(atNewKickoff.entries.map((entry) => entry.pick?.kickoff_at)).toEqual([KICKOFF.toISOString(), later.toISOString()]);
  });

  it('skips malformed bodies whole and bad events alone, processing the rest', async () => {
    feed.fail('odds', 'soccer_epl', { kind: 'raw', body: '{"message":"not an array"}' });
    feed.set('odds', 'soccer_epl', [match('g1', books('g1', { tipico: { Arsenal: 1.9, Chelsea: 4.6, Draw: 3.8 } }))]);
    await poll();
    expect(await visiblePicks()).toEqual([]);

    feed.set('odds', 'soccer_epl', [
      { id: 'bad1', sport_key: 'soccer_epl', commence_time: 'tomorrow', home_team: 'X', away_team: 'Y', bookmakers: [] },
      match('g1', books('g1', { tipico: { Arsenal: 1.9, Chelsea: 4.6, Draw: 3.8 } })),
      { ...match('g2', books('g2', { tipico: { Arsenal: 1.9, Chelsea: 4.6, Draw: 3.8 } })), sport_key: 'golf_masters' },
      'not an event',
    ]);
    await poll();
    expect((await visiblePicks()).map((p) => p.homeTeam)).toEqual(['Arsenal g1']);
    expect(engineLogs.some((entry) => entry.level === 'warn' && /refused whole/.test(entry.msg))).toBe(true);
    const skipped = engineLogs.find((entry) => /feed entries skipped/.test(entry.msg))!;
    expect(skipped.fields.skipped).toBe(3);
    expect(JSON.stringify(skipped.fields.examples)).toContain('commence_time');
    expect(JSON.stringify(skipped.fields.examples)).toContain('golf_masters');
  });

  it('survives the feed being down (5xx, timeout, 429, not JSON) and picks up when it is back', async () => {
    const soccerOdds = () => feed.requests.filter((r) => r.path === '/v4/sports/soccer_epl/odds').length;
    const before = soccerOdds();
    feed.fail('odds', 'soccer_epl', { kind: 'status', status: 503 });
    feed.fail('odds', 'soccer_epl', { kind: 'raw', body: '<html>' });
    feed.fail('odds', 'soccer_epl', { kind: 'rate_limited', retryAfterSeconds: 1 });
    feed.set('odds', 'soccer_epl', [match('r1', books('r1', { tipico: { Arsenal: 1.9, Chelsea: 4.6, Draw: 3.8 } }))]);
    await poll();
    // Three failures, then the fourth attempt (p-retry's third retry) succeeds.
    expect(soccerOdds() - before).toBe(4);
    expect(await visiblePicks()).toHaveLength(1);

    // Down for longer than the retries: nothing is published, nothing crashes; the next poll works.
    feed.fail('odds', 'soccer_epl', { kind: 'status', status: 500 }, 4);
    feed.set('odds', 'soccer_epl', [match('r2', books('r2', { tipico: { Arsenal: 1.9, Chelsea: 4.6, Draw: 3.8 } }))]);
    await poll();
    expect(await visiblePicks()).toHaveLength(1);
    await poll();
    expect(await visiblePicks()).toHaveLength(2);
    // Every failure was logged with its reason, and the feed's apiKey never reached a log line.
    const logged = JSON.stringify(engineLogs);
    expect(logged).toContain('HTTP 503');
    expect(logged).toContain('not JSON');
    expect(logged).toContain('429');
    expect(logged).toContain('failed after retries');
    expect(logged).toContain('apiKey=[redacted]');
    expect(logged).not.toContain(FEED_KEY);
  });

  it('gives up on a feed that does not answer within the timeout, and warns when the plan runs low', async () => {
    feed.fail('odds', 'soccer_epl', { kind: 'hang' }, 4);
    feed.set('odds', 'soccer_epl', [match('q0', books('q0', { tipico: { Arsenal: 1.9, Chelsea: 4.6, Draw: 3.8 } }))]);
    await poll();
    expect(await visiblePicks()).toEqual([]);
    expect(engineLogs.filter((entry) => /no complete answer .* within 1 s/.test(String(entry.fields.err)))).toHaveLength(5);

    feed.headers['x-requests-remaining'] = '40';
    feed.headers['x-requests-used'] = '460';
    feed.set('odds', 'soccer_epl', [match('q1', books('q1', { tipico: { Arsenal: 1.9, Chelsea: 4.6, Draw: 3.8 } }))]);
    try {
      await poll();
    } finally {
      delete feed.headers['x-requests-remaining'];
      delete feed.headers['x-requests-used'];
    }
    expect(engineLogs.some((entry) => /less than 10 %/.test(entry.msg) && entry.fields.requestsRemaining === 40)).toBe(true);
    expect((await visiblePicks()).map((p) => p.homeTeam)).toEqual(['Arsenal q1']);
  });

  it('stores the no-vig closing line at kickoff; settlePick without closingOdds uses it, the operator\'s value wins', async () => {
    feed.set('odds', 'soccer_epl', [
      match('c1', books('c1', { tipico: { Arsenal: 1.9, Chelsea: 4.6, Draw: 3.8 } })),
      match('c2', books('c2', { tipico: { Arsenal: 1.9, Chelsea: 4.6, Draw: 3.8 } })),
    ]);
    await poll();
    // Later, before kickoff, the reference moves: Chelsea fair 0.2 -> 5.0.
    clock.set(new Date(KICKOFF.getTime() - 60_000));
    const moved = powerPrices({ Arsenal: 0.55, Chelsea: 0.2, Draw: 0.25 }, 1.05);
    const late = new Date(KICKOFF.getTime() - 90_000);
    const rename = (id: string) => Object.fromEntries(Object.entries(moved).map(([n, p]) => [n === 'Draw' ? n : `${n} ${id}`, p]));
    feed.set('odds', 'soccer_epl', ['c1', 'c2'].map((id) => match(id, [v4Bookmaker('pinnacle', 'Pinnacle', rename(id), late)])));
    await poll();
    expect((await visiblePicks()).every((p) => p.closingOdds === null)).toBe(true);
    // At kickoff: a price stamped after kickoff is not the close; the poll stores 5.0.
    clock.set(new Date(KICKOFF.getTime() + 1_000));
    const after = powerPrices({ Arsenal: 0.7, Chelsea: 0.1, Draw: 0.2 }, 1.05);
    feed.set('odds', 'soccer_epl', [match('c1', [v4Bookmaker('pinnacle', 'Pinnacle', Object.fromEntries(Object.entries(after).map(([n, p]) => [n === 'Draw' ? n : `${n} c1`, p])), new Date(KICKOFF.getTime() + 500))])]);
    await poll();
    const picks = await visiblePicks();
    expect(picks.map((p) => p.closingOdds)).toEqual([5, 5]);

    const byTeam = new Map(picks.map((p) => [p.homeTeam, p]));
    const auto = await t.graphql<{ settlePick: PickNode }>(SETTLE, { input: { id: byTeam.get('Arsenal c1')!.id, result: 'WON' } });
    expect(auto.data!.settlePick.closingOdds).toBe(5);
    const manual = await t.graphql<{ settlePick: PickNode }>(SETTLE, { input: { id: byTeam.get('Arsenal c2')!.id, result: 'LOST', closingOdds: 4.4 } });
    expect(manual.data!.settlePick.closingOdds).toBe(4.4);
  });

  it('settles published picks from the scores feed: won, lost, draw won, two-way level void; held picks stay', async () => {
    // Two-way: Home fair 0.5 (2.0); Tipico's 2.3 is 2.3 x 0.947 / 2 - 1 = 8.9 % after tax.
    feed.set('odds', 'basketball_nba', [
      v4OddsEvent({ id: 's-void', sportKey: 'basketball_nba', sportTitle: 'NBA', commenceTime: KICKOFF, homeTeam: 'Home s-void', awayTeam: 'Away s-void', bookmakers: [
        v4Bookmaker('pinnacle', 'Pinnacle', powerPrices({ 'Home s-void': 0.5, 'Away s-void': 0.5 }, 1.05), FRESH),
        v4Bookmaker('tipico', 'Tipico', { 'Home s-void': 2.3, 'Away s-void': 1.6 }, FRESH),
      ] }),
    ]);
    feed.set('odds', 'soccer_epl', [
      match('s-won', books('s-won', { tipico: { Arsenal: 1.9, Chelsea: 4.6, Draw: 3.8 } })),
      match('s-lost', books('s-lost', { tipico: { Arsenal: 1.9, Chelsea: 4.6, Draw: 3.8 } })),
      match('s-draw', books('s-draw', { tipico: { Arsenal: 1.9, Chelsea: 3.8, Draw: 4.6 } })),
      match('s-held', books('s-held', { tipico: { Arsenal: 1.7, Chelsea: 6.0, Draw: 3.8 } })),
    ]);
    await poll();
    expect(await visiblePicks()).toHaveLength(4);
    const [held] = (await t.graphql<{ reviewQueue: { nodes: { id: string }[] } }>(`query { reviewQueue { nodes { id } } }`)).data!.reviewQueue.nodes;
    clock.set(new Date(KICKOFF.getTime() + 2 * 3_600_000));
    const score = (id: string, home: string, away: string, scores: [number, number]) =>
      v4ScoreEvent({ id, commenceTime: KICKOFF, completed: true, homeTeam: home, awayTeam: away, scores });
    feed.set('scores', 'soccer_epl', [
      score('s-won', 'Arsenal s-won', 'Chelsea s-won', [0, 2]),
      score('s-lost', 'Arsenal s-lost', 'Chelsea s-lost', [3, 1]),
      score('s-draw', 'Arsenal s-draw', 'Chelsea s-draw', [1, 1]),
      score('s-held', 'Arsenal s-held', 'Chelsea s-held', [0, 1]),
      // Not completed yet: nothing happens.
      v4ScoreEvent({ id: 'other', commenceTime: KICKOFF, completed: false, homeTeam: 'P', awayTeam: 'Q', scores: [0, 0] }),
    ]);
    feed.set('scores', 'basketball_nba', [
      v4ScoreEvent({ id: 's-void', sportKey: 'basketball_nba', commenceTime: KICKOFF, completed: true, homeTeam: 'Home s-void', awayTeam: 'Away s-void', scores: [100, 100] }),
    ]);
    await poll(['scores']);
    const results = Object.fromEntries((await visiblePicks()).map((p) => [p.homeTeam, [p.status, p.result, p.settledAt]]));
    const settledAt = clock.now().toISOString();
    expect(results).toEqual({
      'Arsenal s-won': ['SETTLED', 'WON', settledAt],
      'Arsenal s-lost': ['SETTLED', 'LOST', settledAt],
      'Arsenal s-draw': ['SETTLED', 'WON', settledAt],
      'Home s-void': ['SETTLED', 'VOID', settledAt],
    });
    // The held pick on a finished event is left alone.
    const heldNow = await t.graphql<{ pick: { status: string; result: string | null } }>(`query($id: ID!) { pick(id: $id) { status result } }`, { id: held!.id });
    expect(heldNow.data!.pick).toEqual({ status: 'ADMIN_REVIEW', result: null });

    // Idempotent: the same scores again settle nothing more.
    const again = await t.graphql<{ ingestScores: { picksSettled: number } }>(
      `mutation($events: [ScoreEventInput!]!) { ingestScores(events: $events) { picksSettled } }`,
      { events: [{ id: 's-won', sportKey: 'soccer_epl', commenceTime: KICKOFF.toISOString(), completed: true, homeTeam: 'Arsenal s-won', awayTeam: 'Chelsea s-won', scores: [{ name: 'Arsenal s-won', score: '0' }, { name: 'Chelsea s-won', score: '2' }] }] },
    );
    expect(again.data!.ingestScores.picksSettled).toBe(0);
  });

  it('ingestOdds: pushed events go through the same rules, bad ones skipped with camelCase reasons; over 500 events is invalid_parameter', async () => {
    const INGEST = `mutation($events: [OddsEventInput!]!) { ingestOdds(events: $events) { events picksCreated picksSettled skipped { eventId reason } } }`;
    const good = {
      id: 'push-1',
      sportKey: 'soccer_epl',
      sportTitle: 'EPL',
      commenceTime: KICKOFF.toISOString(),
      homeTeam: 'Arsenal p',
      awayTeam: 'Chelsea p',
      bookmakers: [
        { key: 'pinnacle', title: 'Pinnacle', lastUpdate: FRESH.toISOString(), markets: [{ key: 'h2h', lastUpdate: FRESH.toISOString(), outcomes: Object.entries(PINNACLE).map(([name, price]) => ({ name: name === 'Draw' ? name : `${name} p`, price })) }] },
        { key: 'tipico', title: 'Tipico', lastUpdate: FRESH.toISOString(), markets: [{ key: 'h2h', outcomes: [{ name: 'Arsenal p', price: 1.9 }, { name: 'Chelsea p', price: 4.6 }, { name: 'Draw', price: 3.8 }] }] },
      ],
    };
    const result = await t.graphql<{ ingestOdds: { events: number; picksCreated: number; skipped: { eventId: string | null; reason: string }[] } }>(INGEST, {
      events: [
        good,
        { ...good, id: 'push-1', homeTeam: 'Other' },
        { ...good, id: 'push-2', commenceTime: '2026-11-24T15:00:00' },
        { ...good, id: 'push-3', awayTeam: 'Arsenal p' },
        { ...good, id: 'push-4', sportKey: 'golf_masters' },
      ],
    });
    expect(result.errors).toBeUndefined();
    expect(result.data!.ingestOdds).toMatchObject({ events: 1, picksCreated: 1 });
    const reasons = Object.fromEntries(result.data!.ingestOdds.skipped.map((skip) => [skip.eventId, skip.reason]));
    expect(reasons['push-1']).toMatch(/repeats/);
    expect(reasons['push-2']).toMatch(/commenceTime/);
    expect(reasons['push-3']).toMatch(/awayTeam/);
    expect(reasons['push-4']).toMatch(/golf_masters/);

    const tooMany = await t.graphql(INGEST, { events: Array.from({ length: 501 }, (_, i) => ({ ...good, id: `bulk-${i}`, bookmakers: [] })) });
    expect(tooMany.errors?.[0]?.extensions).toMatchObject({ code: 'invalid_parameter', parameter: 'events' });

    const asKey = await t.graphql(INGEST, { events: [good] }, `Bearer ${(await t.graphql<{ createApiKey: { key: string } }>(CREATE_KEY, { input: { tier: 'ENTERPRISE' } })).data!.createApiKey.key}`);
    expect(asKey.errors?.[0]?.extensions?.code).toBe('admin_required');
  });

  it('refuses wrong forms of the operator arguments with documented codes', async () => {
    const code = async (query: string, variables: Record<string, unknown>) => (await t.graphql(query, variables)).errors?.[0]?.extensions;
    expect(await code(`query($e: String!) { oddsHistory(eventId: $e) { price } }`, { e: 'a\u0000b' })).toMatchObject({ code: 'invalid_parameter', parameter: 'eventId' });
    expect(await code(`query($a: String) { reviewQueue(after: $a) { nodes { id } } }`, { a: 'not-a-cursor' })).toMatchObject({ code: 'invalid_cursor' });
    // A cursor of the picks list is not a review queue cursor.
    feed.set('odds', 'soccer_epl', [match('x1', books('x1', { tipico: { Arsenal: 1.9, Chelsea: 4.6, Draw: 3.8 } }))]);
    await poll();
    const listed = await t.graphql<{ picks: { edges: { cursor: string }[] } }>(`query { picks(first: 1) { edges { cursor } } }`);
    expect(await code(`query($a: String) { reviewQueue(after: $a) { nodes { id } } }`, { a: listed.data!.picks.edges[0]!.cursor })).toMatchObject({ code: 'invalid_cursor' });
    expect(await code(`query { reviewQueue(first: 0) { nodes { id } } }`, {})).toMatchObject({ code: 'invalid_parameter', parameter: 'first' });
    expect(await code(`query { reviewQueue(first: 201) { nodes { id } } }`, {})).toMatchObject({ code: 'invalid_parameter', parameter: 'first' });
    expect(await code(`mutation { discardPick(id: "nope") { id } }`, {})).toMatchObject({ code: 'not_found' });
    expect(await code(`mutation { discardPick(id: "00000000-0000-4000-8000-000000000000") { id } }`, {})).toMatchObject({ code: 'not_found' });
    // An unknown event has no history: an empty list, not an error.
    expect((await t.graphql<{ oddsHistory: unknown[] }>(`query { oddsHistory(eventId: "unknown") { price } }`)).data!.oddsHistory).toEqual([]);
    const history = (await t.graphql<{ oddsHistory: { bookmaker: string; outcome: string; price: number; at: string }[] }>(`query { oddsHistory(eventId: "x1") { bookmaker outcome price at } }`)).data!.oddsHistory;
    expect(history).toHaveLength(6);
    expect(history).toContainEqual({ bookmaker: 'tipico', outcome: 'Chelsea x1', price: 4.6, at: FRESH.toISOString() });
    // A second poll with the same prices stores nothing more; a changed price stores one row.
    await poll();
    feed.set('odds', 'soccer_epl', [match('x1', books('x1', { tipico: { Arsenal: 1.9, Chelsea: 4.5, Draw: 3.8 } }, NOW))]);
    await poll();
    const after = (await t.graphql<{ oddsHistory: { bookmaker: string; outcome: string; price: number; at: string }[] }>(`query { oddsHistory(eventId: "x1") { bookmaker outcome price at } }`)).data!.oddsHistory;
    expect(after).toHaveLength(7);
    expect(after.at(-1)).toEqual({ bookmaker: 'tipico', outcome: 'Chelsea x1', price: 4.5, at: NOW.toISOString() });
  });

  it('reports an event with published picks still not completed 72 h after kickoff once, and settles nothing', async () => {
    feed.set('odds', 'soccer_epl', [match('o1', books('o1', { tipico: { Arsenal: 1.9, Chelsea: 4.6, Draw: 3.8 } }))]);
    await poll();
    const overdue = () => engineLogs.filter((entry) => entry.level === 'warn' && /72 h after kickoff/.test(entry.msg));
    clock.set(new Date(KICKOFF.getTime() + 71 * 3_600_000));
    await poll(['scores']);
    expect(overdue()).toHaveLength(0);
    clock.set(new Date(KICKOFF.getTime() + 72 * 3_600_000));
    feed.set('scores', 'soccer_epl', [v4ScoreEvent({ id: 'o1', commenceTime: KICKOFF, completed: false, homeTeam: 'Arsenal o1', awayTeam: 'Chelsea o1', scores: [1, 1] })]);
    await poll(['scores']);
    await poll(['scores']);
    expect(overdue()).toHaveLength(1);
    expect(overdue()[0]!.fields).toMatchObject({ eventId: 'o1', kickoffAt: KICKOFF.toISOString(), match: 'Arsenal o1 v Chelsea o1' });
    expect((await visiblePicks())[0]).toMatchObject({ status: 'PUBLISHED', result: null });
  });
});
