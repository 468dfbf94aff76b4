/**
 * The stake advice a deployment configures (STAKE_KELLY_MULTIPLIER, STAKE_MAX_PCT) is stored with
 * each pick and shown alike on GraphQL, REST and the public endpoint. Expectations are computed
 * here from the formula in docs/API.md ("Stake advice"), not by the service.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ManualClock } from '../../src/domain/clock.js';
import { createTestApp, type TestApp } from '../helpers/app.js';
import { CREATE_KEY, pickInput, PUBLISH } from '../helpers/fixtures.js';

let t: TestApp;
let key = '';

/** Full Kelly with p = 1 / fair and b = odds x (1 - tax) - 1. */
const fullKelly = (odds: number, fair: number, tax: number) => {
  const b = odds * (1 - tax) - 1;
  return Math.max(0, (b / fair - (1 - 1 / fair)) / b);
};
const advised = (kelly: number) => Math.min(3, Math.round(100 * 0.5 * kelly * 100) / 100);

beforeAll(async () => {
  t = await createTestApp({ clock: new ManualClock('2026-11-22T12:00:00Z'), env: { STAKE_KELLY_MULTIPLIER: '0.5', STAKE_MAX_PCT: '3' } });
  key = (await t.graphql<{ createApiKey: { key: string } }>(CREATE_KEY, { input: { tier: 'STARTER' } })).data!.createApiKey.key;
});
afterAll(async () => {
  await t?.close();
});

describe('stake advice', () => {
  it.each([
    // odds, fair, tax on stakes
    [2.1, 2.0, 0], // half of 4.55 % = 2.27 %
    [2.2, 2.0, 0], // half of 8.33 % = 4.17 %: capped at 3
    [2.0, 2.0, 0.053], // no edge after tax: 0
  ])('odds %d against fair %d, tax %d: half of full Kelly, at most 3 %%', async (odds, fair, taxRate) => {
    const expected = advised(fullKelly(odds, fair, taxRate));
    const published = await t.graphql<{ publishPick: { id: string; stakePct: number } }>(PUBLISH, {
      input: pickInput({ odds, referenceFairOdds: fair, bookmaker: { name: 'Bet365', slug: 'bet365', taxRate } }),
    });
    expect(published.errors).toBeUndefined();
    const { id, stakePct } = published.data!.publishPick;
    expect(stakePct).toBe(expected);

    const rest = await t.app.inject({ method: 'GET', url: '/api/v1/picks?limit=200', headers: { authorization: `Bearer ${key}` } });
    expect(rest.json().data.find((pick: { id: string }) => pick.id === id).stake_pct).toBe(expected);
    const publicPicks = await t.app.inject({ method: 'GET', url: '/api/public/picks/today?limit=50' });
    expect(publicPicks.json().picks.find((pick: { id: string }) => pick.id === id).stakePct).toBe(expected);
  });
});
