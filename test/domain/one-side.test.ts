/**
 * One side per market: the engine publishes at most one selection per event generation, market
 * and market line; a candidate on another side is held with opposite_side. The rule's cases by
 * hand, then a property over random price sequences run through the engine's pure rules (the
 * backtest's in-memory engine: detection, slots, promotions), checked on the picks it made.
 */
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { backtestConfig } from '../../src/cli/backtest.js';
import { runBacktest, type BacktestPoll } from '../../src/domain/backtest.js';
import { engineSelectionKey, marketLineOf, planEngineCandidates, type KnownEnginePick } from '../../src/domain/engine-rules.js';
import type { OddsBookmaker, OddsEvent, OddsMarket } from '../../src/domain/odds-feed.js';

const EVENT = { id: 'e1', generation: 0, homeTeam: 'Arsenal' };

function candidate(market: string, selection: string, line: number | null, edge: number, held = false) {
  return { market, selection, line, edgePostTaxFraction: edge, held };
}

function known(picks: (KnownEnginePick & { id: string })[]): Map<string, KnownEnginePick & { id: string }> {
  return new Map(picks.map((pick) => [engineSelectionKey(EVENT.id, EVENT.generation, pick.market, pick.selection, pick.line), pick]));
}

const published = (market: string, selection: string, line: number | null, id = 'p1') => ({ id, market, selection, line, status: 'published', everVisible: true });

describe('marketLineOf', () => {
  it('puts both sides of a spread in the home side’s market, a total at its point, h2h at none', () => {
    expect(marketLineOf('spreads', 'Arsenal', -1.5, 'Arsenal')).toBe(-1.5);
    expect(marketLineOf('spreads', 'Chelsea', 1.5, 'Arsenal')).toBe(-1.5);
    // A pick'em line: 0 on both sides (never -0, which would key apart).
    expect(Object.is(marketLineOf('spreads', 'Chelsea', 0, 'Arsenal'), 0)).toBe(true);
    expect(marketLineOf('totals', 'Under', 2.5, 'Arsenal')).toBe(2.5);
    expect(marketLineOf('h2h', 'Draw', null, 'Arsenal')).toBeNull();
  });
});

describe('planEngineCandidates', () => {
  it('creates and publishes a first side; nothing for a slot already taken', () => {
    expect(planEngineCandidates(EVENT, [candidate('h2h', 'Arsenal', null, 0.05)], new Map())).toEqual([{ action: 'create', holdReasons: [] }]);
    expect(planEngineCandidates(EVENT, [candidate('h2h', 'Arsenal', null, 0.05)], known([published('h2h', 'Arsenal', null)]))).toEqual([
      { action: 'none', reason: 'slot_taken' },
    ]);
  });

  it('holds every other side of a market a pick was shown on: the draw and the away team in h2h, the other side of a spread and a total at that line', () => {
    const shown = known([published('h2h', 'Arsenal', null, 'a'), published('spreads', 'Arsenal', -1.5, 'b'), published('totals', 'Over', 2.5, 'c')]);
    const plans = planEngineCandidates(
      EVENT,
      [
        candidate('h2h', 'Draw', null, 0.04),
        candidate('h2h', 'Chelsea', null, 0.04),
        candidate('spreads', 'Chelsea', 1.5, 0.04),
        candidate('totals', 'Under', 2.5, 0.04),
        // Other lines are other markets.
        candidate('spreads', 'Chelsea', 0.5, 0.04),
        candidate('totals', 'Under', 3.5, 0.04),
      ],
      shown,
    );
    const held = { action: 'create', holdReasons: ['opposite_side'] };
    expect(plans).toEqual([held, held, held, held, { action: 'create', holdReasons: [] }, { action: 'create', holdReasons: [] }]);
  });

  it('a too-good candidate on the other side is held for both reasons', () => {
    expect(planEngineCandidates(EVENT, [candidate('h2h', 'Chelsea', null, 0.4, true)], known([published('h2h', 'Arsenal', null)]))).toEqual([
      { action: 'create', holdReasons: ['too_good', 'opposite_side'] },
    ]);
  });

  it('within one poll the best post-tax edge is published and the others held; equal edges go to detection order', () => {
    expect(planEngineCandidates(EVENT, [candidate('h2h', 'Arsenal', null, 0.03), candidate('h2h', 'Chelsea', null, 0.06)], new Map())).toEqual([
      { action: 'create', holdReasons: ['opposite_side'] },
      { action: 'create', holdReasons: [] },
    ]);
    expect(planEngineCandidates(EVENT, [candidate('totals', 'Over', 2.5, 0.05), candidate('totals', 'Under', 2.5, 0.05)], new Map())).toEqual([
      { action: 'create', holdReasons: [] },
      { action: 'create', holdReasons: ['opposite_side'] },
    ]);
    // A too-good candidate claims nothing: the plausible other side is published.
    expect(planEngineCandidates(EVENT, [candidate('h2h', 'Arsenal', null, 0.5, true), candidate('h2h', 'Chelsea', null, 0.05)], new Map())).toEqual([
      { action: 'create', holdReasons: ['too_good'] },
      { action: 'create', holdReasons: [] },
    ]);
  });

  it('a held pick nobody saw is promoted only while no other side was shown; a held or discarded other side blocks nothing', () => {
    const heldArsenal = { id: 'h', market: 'h2h', selection: 'Arsenal', line: null, status: 'admin_review', everVisible: false };
    expect(planEngineCandidates(EVENT, [candidate('h2h', 'Arsenal', null, 0.05)], known([heldArsenal]))).toEqual([{ action: 'promote', held: heldArsenal }]);
    expect(planEngineCandidates(EVENT, [candidate('h2h', 'Arsenal', null, 0.05)], known([heldArsenal, published('h2h', 'Chelsea', null)]))).toEqual([
      { action: 'none', reason: 'opposite_side' },
    ]);
    const discarded = { id: 'd', market: 'h2h', selection: 'Chelsea', line: null, status: 'discarded', everVisible: false };
    expect(planEngineCandidates(EVENT, [candidate('h2h', 'Draw', null, 0.05)], known([heldArsenal, discarded]))).toEqual([{ action: 'create', holdReasons: [] }]);
    // A pick shown once and held by an operator since still counts as shown.
    const withdrawn = { id: 'w', market: 'h2h', selection: 'Chelsea', line: null, status: 'admin_review', everVisible: true };
    expect(planEngineCandidates(EVENT, [candidate('h2h', 'Draw', null, 0.05)], known([withdrawn]))).toEqual([{ action: 'create', holdReasons: ['opposite_side'] }]);
  });
});

// ---- The property: random prices through the engine's pure rules.

const START = Date.parse('2026-11-24T12:00:00Z');
const KICKOFF = new Date(START + 3 * 3_600_000);
const HOME = 'Arsenal';
const AWAY = 'Chelsea';
const options = backtestConfig({}, { DEVIG_METHOD: 'multiplicative', BOOKMAKER_TAX_RATES: '{"tipico":0,"unibet":0,"bwin":0}' });
const SOFT_BOOKS = ['tipico', 'unibet', 'bwin'];

/** A market's outcomes priced from probabilities and a margin factor per outcome (a factor above 1 is a longer price). */
function priced(probabilities: number[], margin: number, factors: number[]): number[] {
  return probabilities.map((p, i) => Math.round((factors[i]! / (p * margin)) * 100) / 100);
}

function market(key: 'h2h' | 'spreads' | 'totals', prices: number[], at: Date): OddsMarket {
  if (key === 'h2h') return { key, line: null, lastUpdate: at, outcomes: [{ name: HOME, price: prices[0]! }, { name: 'Draw', price: prices[1]! }, { name: AWAY, price: prices[2]! }] };
  if (key === 'spreads') return { key, line: -0.5, lastUpdate: at, outcomes: [{ name: HOME, price: prices[0]!, point: -0.5 }, { name: AWAY, price: prices[1]!, point: 0.5 }] };
  return { key, line: 2.5, lastUpdate: at, outcomes: [{ name: 'Over', price: prices[0]!, point: 2.5 }, { name: 'Under', price: prices[1]!, point: 2.5 }] };
}

const probability3 = fc.tuple(fc.integer({ min: 2, max: 12 }), fc.integer({ min: 2, max: 8 }), fc.integer({ min: 2, max: 12 })).map((w) => w.map((x) => x / (w[0] + w[1] + w[2])));
const probability2 = fc.integer({ min: 25, max: 75 }).map((x) => [x / 100, 1 - x / 100]);
// Each soft book's price of each outcome, per poll: from 12 % shorter to 12 % longer than fair with a 4 % margin.
const factor = fc.integer({ min: 88, max: 112 }).map((x) => x / 100);
const pollPrices = fc.record({
  h2h: fc.array(fc.array(factor, { minLength: 3, maxLength: 3 }), { minLength: 3, maxLength: 3 }),
  spreads: fc.array(fc.array(factor, { minLength: 2, maxLength: 2 }), { minLength: 3, maxLength: 3 }),
  totals: fc.array(fc.array(factor, { minLength: 2, maxLength: 2 }), { minLength: 3, maxLength: 3 }),
});

describe('the engine never publishes two sides of one market (random price sequences)', () => {
  it('holds for every generated sequence, and the rule was exercised', () => {
    let oppositeHolds = 0;
    fc.assert(
      fc.property(probability3, probability2, probability2, fc.array(pollPrices, { minLength: 1, maxLength: 8 }), (h2h, spreads, totals, polls) => {
        const fair = { h2h, spreads, totals };
        const oddsPolls: BacktestPoll[] = polls.map((prices, index) => {
          const at = new Date(START + index * 60_000);
          const pinnacle: OddsBookmaker = {
            key: 'pinnacle',
            title: 'Pinnacle',
            lastUpdate: at,
            markets: (['h2h', 'spreads', 'totals'] as const).map((key) => market(key, priced(fair[key], 1.03, fair[key].map(() => 1)), at)),
          };
          const soft = SOFT_BOOKS.map((key, book) => ({
            key,
            title: key,
            lastUpdate: at,
            markets: (['h2h', 'spreads', 'totals'] as const).map((name) => market(name, priced(fair[name], 1.04, prices[name][book]!), at)),
          }));
          const event: OddsEvent = { id: 'ev', sportKey: 'soccer_epl', sportTitle: 'EPL', commenceTime: KICKOFF, homeTeam: HOME, awayTeam: AWAY, bookmakers: [pinnacle, ...soft] };
          return { at, kind: 'odds', events: [event] };
        });
        const { picks } = runBacktest(oddsPolls, options);
        const shownSides = new Map<string, Set<string>>();
        for (const pick of picks) {
          if (pick.holdReasons.includes('opposite_side')) {
            oppositeHolds += 1;
            expect(pick.status).toBe('admin_review');
          }
          if (pick.publishedAt === null) continue;
          const key = `${pick.market} ${marketLineOf(pick.market, pick.selection, pick.line, pick.homeTeam)}`;
          const sides = shownSides.get(key) ?? new Set<string>();
          sides.add(pick.selection);
          shownSides.set(key, sides);
        }
        for (const [key, sides] of shownSides) expect(sides.size, `${key}: ${[...sides].join(', ')}`).toBe(1);
      }),
      { numRuns: 200, seed: 36 },
    );
    // Random books beat the fair price on both sides of a market often enough to test the rule.
    expect(oppositeHolds).toBeGreaterThan(20);
  });
});
