/**
 * Today's picks: many aliased `todayPicks` in one anonymous GraphQL request, with any limits,
 * share one database query per sport (the request reads each sport's top once); the public REST
 * endpoint answers repeats from its own cache; a pick that becomes visible or hidden shows at
 * once, and the day rolls over at midnight UTC. Queries are counted at the ORM's driver hook
 * (onQuery), which sees every statement the service sends.
 */
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { ManualClock } from '../../src/domain/clock.js';
import { createTestApp, type TestApp } from '../helpers/app.js';
import { HOLD, pickInput, PUBLISH } from '../helpers/fixtures.js';

let t: TestApp;
const clock = new ManualClock('2026-11-22T12:00:00Z');
/** Statements that read today's picks (todayPicksSql), as sent to the database. */
let todayQueries = 0;

async function publish(overrides: Record<string, unknown> = {}): Promise<string> {
  const res = await t.graphql<{ publishPick: { id: string } }>(PUBLISH, { input: pickInput(overrides) });
  expect(res.errors).toBeUndefined();
  return res.data!.publishPick.id;
}

/** POST /graphql without credentials. */
async function anonymous(query: string) {
  const res = await t.app.inject({ method: 'POST', url: '/graphql', headers: { 'content-type': 'application/json' }, payload: { query } });
  expect(res.statusCode, res.body).toBe(200);
  const body = res.json();
  expect(body.errors).toBeUndefined();
  return body.data as Record<string, { id: string }[]>;
}

const fifteenAliases = (limit: (i: number) => number) =>
  `{ ${Array.from({ length: 15 }, (_, i) => `t${i}: todayPicks(limit: ${limit(i)}) { id }`).join(' ')} }`;

beforeAll(async () => {
  t = await createTestApp({ clock });
  const onQuery = t.runtime.orm.config.get('onQuery');
  t.runtime.orm.config.set('onQuery', (sql: string, params: readonly unknown[]) => {
    if (sql.includes('order by edge_pct_post_tax desc')) todayQueries += 1;
    return onQuery(sql, params);
  });
  await publish({ odds: 2.5, referenceFairOdds: 2.1 });
  await publish({ odds: 2.2, referenceFairOdds: 2.0, sport: 'tennis', league: 'ATP Tour', homeTeam: 'Jannik Sinner', awayTeam: 'Carlos Alcaraz', selection: 'Jannik Sinner' });
});
afterAll(async () => {
  await t?.close();
});
beforeEach(() => {
  todayQueries = 0;
});

describe("today's picks cache", () => {
  it('answers 15 aliased todayPicks in one anonymous request with one database query', async () => {
    const data = await anonymous(fifteenAliases(() => 20));
    expect(Object.keys(data)).toHaveLength(15);
    expect(data.t0).toHaveLength(2);
    expect(todayQueries).toBe(1);
  });

  it('serves every limit of one request from the same query; the next request reads again (/graphql is not cached)', async () => {
    const data = await anonymous(fifteenAliases((i) => i + 1));
    expect(data.t0).toHaveLength(1);
    expect(data.t14).toHaveLength(2);
    expect(todayQueries).toBe(1);
    await anonymous('{ todayPicks(limit: 50) { id } }');
    expect(todayQueries).toBe(2);
  });

  it("answers the public REST endpoint's repeats from its cache", async () => {
    for (let i = 0; i < 3; i++) {
      const res = await t.app.inject({ method: 'GET', url: '/api/public/picks/today?limit=5' });
      expect(res.json().count).toBe(2);
    }
    expect(todayQueries).toBe(1);
  });

  it('keeps sports apart', async () => {
    const data = await anonymous('{ all: todayPicks { id } tennis: todayPicks(sport: "tennis") { id } again: todayPicks(sport: "tennis", limit: 1) { id } }');
    expect(data.all).toHaveLength(2);
    expect(data.tennis).toHaveLength(1);
    expect(todayQueries).toBe(2);
  });

  it('shows a newly published pick right away, and hides a held one', async () => {
    const before = (await anonymous('{ todayPicks { id } }')).todayPicks!.map((pick) => pick.id);
    const id = await publish({ odds: 3, referenceFairOdds: 2, homeTeam: 'Liverpool', selection: 'Liverpool' });
    const after = (await anonymous('{ todayPicks { id } }')).todayPicks!.map((pick) => pick.id);
    expect(after).toEqual([id, ...before]);
    expect((await t.graphql(HOLD, { id })).errors).toBeUndefined();
    expect((await anonymous('{ todayPicks { id } }')).todayPicks!.map((pick) => pick.id)).toEqual(before);
  });

  it('rolls over at midnight UTC', async () => {
    await anonymous('{ todayPicks { id } }');
    clock.set('2026-11-23T00:00:01Z');
    try {
      expect((await anonymous('{ todayPicks { id } }')).todayPicks).toEqual([]);
    } finally {
      clock.set('2026-11-22T12:00:00Z');
    }
    expect(todayQueries).toBe(2);
  });
});
