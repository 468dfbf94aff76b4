/**
 * Picks of every main market published by hand (issue: spreads, totals and Asian lines): the
 * documented Pick carries `market`, `selection` and `line`, the description reads as docs/API.md
 * says, the list filters by market, and a settled quarter line counts half a stake in the track
 * record. Expectations are written from the docs, not read back from the service.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ManualClock } from '../../src/domain/clock.js';
import { createTestApp, type TestApp } from '../helpers/app.js';
import { CREATE_KEY, pickInput, PUBLISH, SETTLE } from '../helpers/fixtures.js';

let t: TestApp;
let key = '';
const clock = new ManualClock('2026-11-22T12:00:00Z');

async function publish(overrides: Record<string, unknown>) {
  return t.graphql<{ publishPick: { id: string; pick: string; market: string; selection: string } }>(PUBLISH, { input: pickInput(overrides) });
}

const list = async (query: string) =>
  t.app.inject({ method: 'GET', url: `/api/v1/picks${query}`, headers: { authorization: `Bearer ${key}` } });

beforeAll(async () => {
  t = await createTestApp({ clock });
  key = (await t.graphql<{ createApiKey: { key: string } }>(CREATE_KEY, { input: { tier: 'GROWTH' } })).data!.createApiKey.key;
});
afterAll(async () => {
  await t?.close();
});

describe('picks on lines', () => {
  it('publishes spreads and totals with their line and the documented description', async () => {
    const spread = await publish({ market: 'spreads', selection: 'Arsenal', line: -0.75, odds: 1.95, referenceFairOdds: 1.8 });
    expect(spread.errors).toBeUndefined();
    expect(spread.data!.publishPick.pick).toBe('Arsenal -0.75 @ 1.95');
    const total = await publish({ market: 'totals', selection: 'Over', line: 2.5, odds: 2.1, referenceFairOdds: 1.95 });
    expect(total.errors).toBeUndefined();
    expect(total.data!.publishPick.pick).toBe('Over 2.5 goals @ 2.10');
    const h2h = await publish({});
    expect(h2h.errors).toBeUndefined();

    const all = (await list('?limit=10')).json().data as Record<string, unknown>[];
    const byId = new Map(all.map((pick) => [pick.id, pick]));
    expect(byId.get(spread.data!.publishPick.id)).toMatchObject({ market: 'spreads', selection: 'Arsenal', line: -0.75, pick: 'Arsenal -0.75 @ 1.95' });
    expect(byId.get(total.data!.publishPick.id)).toMatchObject({ market: 'totals', selection: 'Over', line: 2.5 });
    expect(byId.get(h2h.data!.publishPick.id)).toMatchObject({ market: 'h2h', selection: 'Arsenal', line: null });

    const publicPicks = (await t.app.inject({ method: 'GET', url: '/api/public/picks/today' })).json().picks as Record<string, unknown>[];
    expect(publicPicks.find((pick) => pick.id === spread.data!.publishPick.id)).toMatchObject({ market: 'spreads', line: -0.75 });
  });

  it('filters the list by market; an unknown market is 400 invalid_parameter', async () => {
    for (const market of ['h2h', 'spreads', 'totals']) {
      const page = (await list(`?market=${market}`)).json().data as { market: string }[];
      expect(page.length).toBeGreaterThan(0);
      expect(page.every((pick) => pick.market === market)).toBe(true);
    }
    const refused = await list('?market=moneyline');
    expect(refused.statusCode).toBe(400);
    expect(refused.json()).toEqual({ error: 'invalid_parameter', message: 'market must be one of: h2h, spreads, totals', parameter: 'market' });
  });

  it.each([
    [{ market: 'totals', selection: 'Over' }, 'line'], // no line
    [{ market: 'totals', selection: 'Over', line: 2.6 }, 'line'],
    [{ market: 'totals', selection: 'Arsenal', line: 2.5 }, 'selection'],
    [{ market: 'spreads', selection: 'Draw', line: 0.5 }, 'selection'],
    [{ line: 0.5 }, 'line'], // h2h with a line
    [{ market: 'totals', selection: 'Over', line: 20.5, sport: 'tennis', league: 'ATP Tour', homeTeam: 'A', awayTeam: 'B' }, 'market'],
  ])('refuses %j naming %s', async (overrides, parameter) => {
    const res = await publish(overrides);
    expect(res.errors?.[0]?.extensions).toMatchObject({ code: 'invalid_parameter', parameter });
  });

  it('counts a settled quarter line as half a stake: half_won pays (odds - 1) / 2', async () => {
    const pick = await publish({ market: 'spreads', selection: 'Chelsea', awayTeam: 'Chelsea', line: 0.75, odds: 2.0, referenceFairOdds: 1.9, kickoffAt: '2026-11-22T13:00:00Z' });
    clock.set('2026-11-22T16:00:00Z');
    // Chelsea lost by one: +0.5 lost, +1.0 void: half_lost, -0.5 units.
    const settled = await t.graphql(SETTLE, { input: { id: pick.data!.publishPick.id, result: 'HALF_LOST', closingOdds: 1.95 } });
    expect(settled.errors).toBeUndefined();
    const record = (await t.app.inject({ method: 'GET', url: '/api/v1/track-record?days_back=1', headers: { authorization: `Bearer ${key}` } })).json();
    expect(record.overall.total_settled).toBe(1);
    // ROI = profit / stakes x 100 = -0.5 / 1 x 100.
    expect(record.overall.roi_pct).toBe(-50);
  });
});
