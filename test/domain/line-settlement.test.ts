/**
 * Spreads (Asian handicap) and totals settled from a final score, quarter lines as two half
 * stakes. The table is written by hand from the rules (docs/API.md will carry it with the
 * markets): each row's result was worked out on paper, not by the code under test.
 */
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { isLegalLine, lineResult, pickResult, settlementProfit, spreadResult, totalResult, type FinalScore } from '../../src/domain/settlement.js';

const score = (homeScore: number, awayScore: number): FinalScore => ({ homeTeam: 'Arsenal', awayTeam: 'Chelsea', homeScore, awayScore });

describe('totals', () => {
  // Final 2-1: three goals.
  it.each([
    ['Over', 2.5, 'won'],
    ['Under', 2.5, 'lost'],
    ['Over', 3, 'void'],
    ['Under', 3, 'void'],
    ['Over', 2.25, 'won'], // 2.0 won + 2.5 won
    ['Over', 2.75, 'half_won'], // 2.5 won + 3.0 void
    ['Under', 2.75, 'half_lost'], // 2.5 lost + 3.0 void
    ['Over', 3.25, 'half_lost'], // 3.0 void + 3.5 lost
    ['Under', 3.25, 'half_won'], // 3.0 void + 3.5 won
    ['Over', 3.5, 'lost'],
    ['Under', 3.75, 'won'], // 3.5 won + 4.0 won
    ['Draw', 2.5, null], // not a totals selection
  ] as const)('2-1: %s %d is %s', (selection, point, expected) => {
    expect(totalResult(selection, point, score(2, 1))).toBe(expected);
  });
});

describe('spreads (Asian handicap)', () => {
  it.each([
    // Arsenal 2-1 Chelsea.
    ['Arsenal', -0.5, 2, 1, 'won'],
    ['Arsenal', -1, 2, 1, 'void'],
    ['Arsenal', -0.75, 2, 1, 'half_won'], // -0.5 won + -1.0 void
    ['Arsenal', -1.25, 2, 1, 'half_lost'], // -1.0 void + -1.5 lost
    ['Arsenal', -1.5, 2, 1, 'lost'],
    ['Chelsea', 0.75, 2, 1, 'half_lost'], // +0.5 lost + +1.0 void
    ['Chelsea', 1.25, 2, 1, 'half_won'], // +1.0 void + +1.5 won
    ['Chelsea', 1.5, 2, 1, 'won'],
    ['Chelsea', 0, 2, 1, 'lost'],
    // 1-1: level.
    ['Arsenal', 0, 1, 1, 'void'],
    ['Arsenal', -0.25, 1, 1, 'half_lost'], // 0 void + -0.5 lost
    ['Chelsea', 0.25, 1, 1, 'half_won'], // 0 void + +0.5 won
    ['Chelsea', -0.5, 1, 1, 'lost'],
    // A selection naming neither team.
    ['Liverpool', -0.5, 2, 1, null],
  ] as const)('%s %d at %d-%d is %s', (selection, point, home, away, expected) => {
    expect(spreadResult(selection, point, score(home, away))).toBe(expected);
  });
});

describe('lines', () => {
  it.each([2.1, 2.3, -0.6, Number.NaN, Number.POSITIVE_INFINITY])('refuses a line that is not a multiple of 0.25 (%d)', (point) => {
    expect(isLegalLine(point)).toBe(false);
    expect(totalResult('Over', point, score(2, 1))).toBeNull();
  });

  const goals = fc.integer({ min: 0, max: 12 });
  const quarterLine = fc.integer({ min: -40, max: 40 }).map((quarters) => quarters / 4);
  const odds = fc.double({ min: 1.01, max: 50, noNaN: true });

  it('a quarter line pays the mean of its two halves', () => {
    fc.assert(
      fc.property(goals, goals, quarterLine.filter((point) => !Number.isInteger(point * 2)), odds, (home, away, point, price) => {
        const final = score(home, away);
        const whole = settlementProfit(spreadResult('Arsenal', point, final)!, price);
        const halves = [point - 0.25, point + 0.25].map((half) => settlementProfit(spreadResult('Arsenal', half, final)!, price));
        expect(whole).toBeCloseTo((halves[0]! + halves[1]!) / 2, 12);
      }),
    );
  });

  it('a whole-line push returns the stake: profit 0', () => {
    fc.assert(
      fc.property(goals, goals, odds, (home, away, price) => {
        const total = home + away;
        expect(settlementProfit(totalResult('Over', total, score(home, away))!, price)).toBe(0);
        expect(settlementProfit(spreadResult('Chelsea', home - away, score(home, away))!, price)).toBe(0);
      }),
    );
  });

  it('never gives won and lost halves from integer scores', () => {
    fc.assert(
      fc.property(goals, goals, quarterLine, (home, away, point) => {
        expect(lineResult(point, (line) => home + line - away)).not.toBeNull();
      }),
    );
  });
});

describe('pickResult: the rule of the pick\'s market', () => {
  const score = { homeTeam: 'Arsenal', awayTeam: 'Chelsea', homeScore: 2, awayScore: 1 };
  it('settles each market by its own rule', () => {
    expect(pickResult({ market: 'h2h', selection: 'Arsenal', line: null, referenceOutcomes: 3 }, score)).toBe('won');
    expect(pickResult({ market: 'spreads', selection: 'Chelsea', line: 0.75, referenceOutcomes: 2 }, score)).toBe('half_lost');
    expect(pickResult({ market: 'totals', selection: 'Over', line: 2.75, referenceOutcomes: 2 }, score)).toBe('half_won');
  });
  it('refuses a line that does not fit the market', () => {
    expect(pickResult({ market: 'h2h', selection: 'Arsenal', line: 0.5, referenceOutcomes: 3 }, score)).toBeNull();
    expect(pickResult({ market: 'spreads', selection: 'Chelsea', line: null, referenceOutcomes: 2 }, score)).toBeNull();
    expect(pickResult({ market: 'totals', selection: 'Over', line: null, referenceOutcomes: 2 }, score)).toBeNull();
    expect(pickResult({ market: 'totals', selection: 'Arsenal', line: 2.5, referenceOutcomes: 2 }, score)).toBeNull();
  });
});
