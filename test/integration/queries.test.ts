import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ManualClock } from '../../src/domain/clock.js';
import { createTestApp, type TestApp } from '../helpers/app.js';
import { CREATE_KEY, HOLD, pickInput, PUBLISH, SETTLE, UPSERT_ANALYSIS } from '../helpers/fixtures.js';

let t: TestApp;
const clock = new ManualClock('2026-11-22T12:00:00Z');
const keys: Record<string, string> = {};
const ids: Record<string, string> = {};

const LIST = `query($first: Int, $after: String, $sport: String, $league: String, $since: DateTime) {
  picks(first: $first, after: $after, sport: $sport, league: $league, since: $since) {
    count nodes { id sport league kickoffAt status } pageInfo { hasNextPage endCursor } edges { cursor node { id } }
  }
}`;

async function publish(overrides: Record<string, unknown>): Promise<string> {
  const res = await t.graphql<{ publishPick: { id: string } }>(PUBLISH, { input: pickInput(overrides) });
  expect(res.errors).toBeUndefined();
  return res.data!.publishPick.id;
}

beforeAll(async () => {
  t = await createTestApp({ clock });
  for (const tier of ['STARTER', 'GROWTH', 'ENTERPRISE']) {
    const res = await t.graphql<{ createApiKey: { key: string } }>(CREATE_KEY, { input: { tier } });
    keys[tier.toLowerCase()] = res.data!.createApiKey.key;
  }
  // Twelve visible picks on distinct kickoffs, two sharing one kickoff (id breaks the tie).
  for (let i = 0; i < 10; i += 1) {
    const kickoffAt = new Date(Date.UTC(2026, 11, 1 + i, 15)).toISOString();
    ids[`p${i}`] = await publish({ kickoffAt, sport: i % 2 === 0 ? 'soccer' : 'tennis', league: i % 2 === 0 ? 'Premier League' : 'ATP Tour', homeTeam: `Home ${i}`, awayTeam: `Away ${i}`, selection: `Home ${i}` });
  }
  ids.tieA = await publish({ kickoffAt: '2026-12-20T15:00:00Z', homeTeam: 'Tie A', awayTeam: 'X', selection: 'X' });
  ids.tieB = await publish({ kickoffAt: '2026-12-20T15:00:00Z', homeTeam: 'Tie B', awayTeam: 'X', selection: 'X' });
  ids.held = await publish({ kickoffAt: '2026-12-25T15:00:00Z', status: 'ADMIN_REVIEW' });
  ids.heldLater = await publish({ kickoffAt: '2026-12-26T15:00:00Z' });
  await t.graphql(HOLD, { id: ids.heldLater });
  await t.graphql(UPSERT_ANALYSIS, { input: { matchId: ids.p0, analysis: 'Arsenal press high.' } });
  await t.graphql(UPSERT_ANALYSIS, { input: { matchId: ids.held, analysis: 'Hidden.' } });
});
afterAll(async () => {
  await t?.close();
});

describe('picks connection', () => {
  it('lists visible picks by kickoff desc then id desc, never admin_review', async () => {
    const res = await t.graphql<{ picks: any }>(LIST, { first: 200 }, `Bearer ${keys.starter}`);
    expect(res.errors).toBeUndefined();
    const nodes = res.data!.picks.nodes as { id: string; kickoffAt: string; status: string }[];
    expect(nodes).toHaveLength(12);
    expect(nodes.map((n) => n.id)).not.toContain(ids.held);
    expect(nodes.map((n) => n.id)).not.toContain(ids.heldLater);
    const [tieFirst, tieSecond] = [ids.tieA!, ids.tieB!].sort().reverse();
    expect(nodes.slice(0, 2).map((n) => n.id)).toEqual([tieFirst, tieSecond]);
    for (let i = 1; i < nodes.length; i += 1) {
      const prev = nodes[i - 1]!;
      const cur = nodes[i]!;
      expect(prev.kickoffAt > cur.kickoffAt || (prev.kickoffAt === cur.kickoffAt && prev.id > cur.id)).toBe(true);
    }
    expect(res.data!.picks.count).toBe(12);
    expect(res.data!.picks.pageInfo).toEqual({ hasNextPage: false, endCursor: null });
  });

  it('walks every page with the cursor, without gaps or repeats, and ends with a null cursor', async () => {
    const seen: string[] = [];
    const sizes: number[] = [];
    const more: boolean[] = [];
    let after: string | null = null;
    do {
      const res: any = await t.graphql(LIST, { first: 5, after }, `Bearer ${keys.starter}`);
      expect(res.errors).toBeUndefined();
      const page = res.data.picks;
      seen.push(...page.nodes.map((n: { id: string }) => n.id));
      sizes.push(page.count);
      more.push(page.pageInfo.hasNextPage);
      expect(page.nodes.length).toBe(page.count);
      // Every edge has its own cursor; the page's endCursor is the last edge's while more follow, null on the last page.
      expect(page.edges.every((edge: { cursor: unknown }) => typeof edge.cursor === 'string' && edge.cursor.length > 0)).toBe(true);
      expect(page.pageInfo.endCursor).toBe(page.pageInfo.hasNextPage ? page.edges.at(-1).cursor : null);
      after = page.pageInfo.endCursor;
    } while (after);
    expect(sizes).toEqual([5, 5, 2]);
    expect(more).toEqual([true, true, false]);
    expect(seen).toHaveLength(12);
    expect(new Set(seen).size).toBe(12);
  });

  it('is stable under concurrent inserts: a pick inserted ahead of the cursor does not shift the next page', async () => {
    const first: any = await t.graphql(LIST, { first: 4 }, `Bearer ${keys.starter}`);
    const insertedId = await publish({ kickoffAt: '2027-01-15T15:00:00Z', homeTeam: 'New', awayTeam: 'Team', selection: 'New' });
    const second: any = await t.graphql(LIST, { first: 4, after: first.data.picks.pageInfo.endCursor }, `Bearer ${keys.starter}`);
    const firstIds = first.data.picks.nodes.map((n: { id: string }) => n.id);
    const secondIds = second.data.picks.nodes.map((n: { id: string }) => n.id);
    expect(secondIds).not.toContain(insertedId);
    expect(secondIds.filter((id: string) => firstIds.includes(id))).toEqual([]);
    await t.graphql(HOLD, { id: insertedId });
  });

  it('filters by sport, league (exact) and since (strictly after)', async () => {
    const soccer: any = await t.graphql(LIST, { sport: 'soccer', first: 50 }, `Bearer ${keys.starter}`);
    expect(soccer.data.picks.nodes.every((n: { sport: string }) => n.sport === 'soccer')).toBe(true);
    expect(soccer.data.picks.count).toBe(7);
    const atp: any = await t.graphql(LIST, { league: 'ATP Tour' }, `Bearer ${keys.starter}`);
    expect(atp.data.picks.count).toBe(5);
    const atpLower: any = await t.graphql(LIST, { league: 'atp tour' }, `Bearer ${keys.starter}`);
    expect(atpLower.data.picks.count).toBe(0);
    const since: any = await t.graphql(LIST, { since: '2026-12-08T15:00:00Z' }, `Bearer ${keys.starter}`);
    expect(since.data.picks.nodes.map((n: { kickoffAt: string }) => n.kickoffAt)).toEqual([
      '2026-12-20T15:00:00.000Z',
      '2026-12-20T15:00:00.000Z',
      '2026-12-10T15:00:00.000Z',
      '2026-12-09T15:00:00.000Z',
    ]);
  });

  it.each([
    [{ first: 0 }, 'first'],
    [{ first: 201 }, 'first'],
    [{ first: -5 }, 'first'],
    [{ since: 'last week' }, 'since'],
    [{ since: '2026-12-08' }, 'since'],
  ])('rejects %j with invalid_parameter', async (variables, parameter) => {
    const res = await t.graphql(LIST, variables, `Bearer ${keys.starter}`);
    expect(res.errors?.[0]?.extensions).toMatchObject({ code: 'invalid_parameter', parameter });
  });

  it.each(['garbage', '', 'eyJ2IjoxfQ', 'a'.repeat(500), '!!!!'])('rejects the cursor %j with invalid_cursor', async (after) => {
    const res = await t.graphql(LIST, { after }, `Bearer ${keys.starter}`);
    expect(res.errors?.[0]?.extensions?.code).toBe('invalid_cursor');
    // Named as GraphQL names them: the after argument and the endCursor field.
    expect(res.errors?.[0]?.message).toBe('after must be the endCursor of a page of this list, passed unchanged.');
    expect(res.errors?.[0]?.extensions?.parameter).toBe('after');
  });

  it('rejects a tampered cursor', async () => {
    const page: any = await t.graphql(LIST, { first: 2 }, `Bearer ${keys.starter}`);
    const cursor: string = page.data.picks.pageInfo.endCursor;
    const tampered = cursor.slice(0, 5) + (cursor[5] === 'A' ? 'B' : 'A') + cursor.slice(6);
    const res = await t.graphql(LIST, { after: tampered }, `Bearer ${keys.starter}`);
    expect(res.errors?.[0]?.extensions?.code).toBe('invalid_cursor');
  });

  it('needs a valid key', async () => {
    for (const authorization of [null, 'Bearer nope', `Basic ${keys.starter}`, `Bearer ${keys.starter}x`, `Bearer service_${'0'.repeat(64)}`]) {
      const res = await t.graphql(LIST, {}, authorization);
      expect(res.errors?.[0]?.extensions?.code).toBe('invalid_api_key');
      expect(res.data).toBeNull();
    }
  });
});

describe('pick by id', () => {
  it('hides admin_review picks from keys but not from the admin', async () => {
    const query = 'query($id: ID!) { pick(id: $id) { id status } }';
    expect((await t.graphql<{ pick: unknown }>(query, { id: ids.held }, `Bearer ${keys.enterprise}`)).data!.pick).toBeNull();
    expect((await t.graphql<{ pick: { status: string } }>(query, { id: ids.held })).data!.pick.status).toBe('ADMIN_REVIEW');
    expect((await t.graphql<{ pick: { id: string } }>(query, { id: ids.p1 }, `Bearer ${keys.starter}`)).data!.pick.id).toBe(ids.p1);
    expect((await t.graphql<{ pick: unknown }>(query, { id: 'nope' }, `Bearer ${keys.starter}`)).data!.pick).toBeNull();
  });
});

describe('match analyses', () => {
  const query = 'query($id: ID!) { matchAnalysis(matchId: $id) { matchId analysis } }';
  it('needs growth', async () => {
    const res = await t.graphql(query, { id: ids.p0 }, `Bearer ${keys.starter}`);
    expect(res.errors?.[0]?.extensions).toMatchObject({ code: 'tier_upgrade_required', minimum_tier: 'growth' });
  });
  it('returns the analysis of a visible pick and null for hidden or missing ones', async () => {
    const visible = await t.graphql<{ matchAnalysis: unknown }>(query, { id: ids.p0 }, `Bearer ${keys.growth}`);
    expect(visible.data!.matchAnalysis).toEqual({ matchId: ids.p0, analysis: 'Arsenal press high.' });
    expect((await t.graphql<{ matchAnalysis: unknown }>(query, { id: ids.held }, `Bearer ${keys.enterprise}`)).data!.matchAnalysis).toBeNull();
    expect((await t.graphql<{ matchAnalysis: unknown }>(query, { id: ids.p1 }, `Bearer ${keys.growth}`)).data!.matchAnalysis).toBeNull();
  });
});

describe('track record', () => {
  const query = 'query($sport: String, $daysBack: Int) { trackRecord(sport: $sport, daysBack: $daysBack) { overall { roiPct winRate totalSettled clvAvgPct edgeAvgPct } perSport { sport roiPct totalSettled } series { date cumulativePnlPct } } }';

  it('needs growth and validates its arguments', async () => {
    const starter = await t.graphql(query, {}, `Bearer ${keys.starter}`);
    expect(starter.errors?.[0]?.extensions).toMatchObject({ code: 'tier_upgrade_required', minimum_tier: 'growth' });
    for (const daysBack of [0, 366, -1]) {
      const res = await t.graphql(query, { daysBack }, `Bearer ${keys.growth}`);
      expect(res.errors?.[0]?.extensions).toMatchObject({ code: 'invalid_parameter', parameter: 'daysBack' });
    }
    const sport = await t.graphql(query, { sport: 'chess' }, `Bearer ${keys.growth}`);
    expect(sport.errors?.[0]?.extensions).toMatchObject({ code: 'invalid_parameter', parameter: 'sport' });
  });

  it('aggregates settled picks in the window', async () => {
    // p8 (soccer, odds 2.2, edge 10) won; p9 (tennis) lost; p7 (tennis) void; all settled on 2026-12-20.
    clock.set('2026-12-20T20:00:00Z');
    await t.graphql(SETTLE, { input: { id: ids.p8, result: 'WON', closingOdds: 2.0, settledAt: '2026-12-20T18:00:00Z' } });
    await t.graphql(SETTLE, { input: { id: ids.p9, result: 'LOST', closingOdds: 2.2, settledAt: '2026-12-20T18:00:00Z' } });
    await t.graphql(SETTLE, { input: { id: ids.p7, result: 'VOID', closingOdds: 2.2, settledAt: '2026-12-20T18:00:00Z' } });
    const res = await t.graphql<{ trackRecord: any }>(query, { daysBack: 3 }, `Bearer ${keys.growth}`);
    expect(res.errors).toBeUndefined();
    const record = res.data!.trackRecord;
    // profit: +1.2 (won at 2.2), -1 (lost), 0 (void) over 2 non-void picks -> 10 % ROI, 50 % win rate.
    expect(record.overall).toEqual({ roiPct: 10, winRate: 50, totalSettled: 3, clvAvgPct: 3.33, edgeAvgPct: 10 });
    expect(record.perSport).toEqual([
      { sport: 'soccer', roiPct: 120, totalSettled: 1 },
      { sport: 'tennis', roiPct: -100, totalSettled: 2 },
    ]);
    expect(record.series.map((p: { date: string }) => p.date)).toEqual(['2026-12-17', '2026-12-18', '2026-12-19', '2026-12-20']);
    expect(record.series.at(-1).cumulativePnlPct).toBe(20);
    const tennis = await t.graphql<{ trackRecord: any }>(query, { daysBack: 3, sport: 'tennis' }, `Bearer ${keys.enterprise}`);
    expect(tennis.data!.trackRecord.overall).toMatchObject({ roiPct: -100, totalSettled: 2, winRate: 0 });
    clock.set('2026-11-22T12:00:00Z');
  });
});

describe('today picks (anonymous)', () => {
  it('returns picks first published today, best post-tax edge first, with limit and sport', async () => {
    const query = 'query($limit: Int, $sport: String) { todayPicks(limit: $limit, sport: $sport) { id edgePctPostTax sport } }';
    const res = await t.graphql<{ todayPicks: { edgePctPostTax: number }[] }>(query, { limit: 50 }, null);
    expect(res.errors).toBeUndefined();
    expect(res.data!.todayPicks.length).toBeGreaterThan(0);
    const edges = res.data!.todayPicks.map((p) => p.edgePctPostTax);
    expect([...edges].sort((a, b) => b - a)).toEqual(edges);
    const bad = await t.graphql(query, { limit: 51 }, null);
    expect(bad.errors?.[0]?.extensions).toMatchObject({ code: 'invalid_parameter', parameter: 'limit' });
    const badSport = await t.graphql(query, { sport: 'darts' }, null);
    expect(badSport.errors?.[0]?.extensions).toMatchObject({ code: 'invalid_parameter', parameter: 'sport' });
  });
});
