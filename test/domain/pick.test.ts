import { describe, expect, it } from 'vitest';
import { InvalidParameterError, InvalidTransitionError } from '../../src/domain/errors.js';
import {
  assertTransition,
  canTransition,
  describePick,
  PICK_RESULTS,
  PICK_STATUSES,
  type PickStatus,
  validateConfidence,
  validateTeamName,
  VISIBLE_STATUSES,
} from '../../src/domain/pick.js';

function expectInvalidParameter(fn: () => unknown, parameter: string): void {
  try {
    fn();
  } catch (error) {
    expect(error).toBeInstanceOf(InvalidParameterError);
    expect((error as InvalidParameterError).extras).toEqual({ parameter });
    return;
  }
  expect.fail(`expected InvalidParameterError for ${parameter}`);
}

describe('statuses and results', () => {
  it('have the documented values', () => {
    expect(PICK_STATUSES).toEqual(['published', 'settled', 'admin_review', 'discarded']);
    expect(PICK_RESULTS).toEqual(['won', 'lost', 'void', 'half_won', 'half_lost']);
    expect(VISIBLE_STATUSES).toEqual(['published', 'settled']);
  });
});

describe('assertTransition', () => {
  // discarded, like settled, is final; only a held pick can be discarded.
  const allowed = new Set(['published->settled', 'published->admin_review', 'admin_review->published', 'admin_review->discarded']);
  const pairs = PICK_STATUSES.flatMap((from) => PICK_STATUSES.map((to) => [from, to] as [PickStatus, PickStatus]));

  it.each(pairs)('%s -> %s', (from, to) => {
    const ok = allowed.has(`${from}->${to}`);
    expect(canTransition(from, to)).toBe(ok);
    if (ok) {
      expect(() => assertTransition(from, to)).not.toThrow();
    } else {
      try {
        assertTransition(from, to);
        expect.fail('expected InvalidTransitionError');
      } catch (error) {
        expect(error).toBeInstanceOf(InvalidTransitionError);
        const e = error as InvalidTransitionError;
        expect(e.code).toBe('invalid_transition');
        expect(e.extras).toEqual({ from, to });
      }
    }
  });

  it('allows exactly four transitions', () => {
    expect(pairs.filter(([from, to]) => canTransition(from, to))).toHaveLength(4);
  });

  it('treats unknown statuses as invalid rather than crashing', () => {
    expect(() => assertTransition('draft' as PickStatus, 'published')).toThrow(InvalidTransitionError);
  });
});

describe('validateConfidence', () => {
  it.each([0, 1, 50, 99, 100])('accepts %d', (value) => {
    expect(() => validateConfidence(value)).not.toThrow();
  });

  it.each([-1, 101, 50.5, 0.1, Number.NaN, Number.POSITIVE_INFINITY, 1e9])('rejects %d', (value) => {
    expectInvalidParameter(() => validateConfidence(value), 'confidence');
  });
});

describe('validateTeamName', () => {
  it('trims and returns the name', () => {
    expect(validateTeamName('homeTeam', '  Arsenal ')).toBe('Arsenal');
    expect(validateTeamName('homeTeam', 'Borussia Mönchengladbach')).toBe('Borussia Mönchengladbach');
  });

  it('accepts exactly 120 characters, counting code points', () => {
    expect(validateTeamName('awayTeam', 'a'.repeat(120))).toHaveLength(120);
    // 120 astral characters are 240 UTF-16 units but 120 characters.
    expect(validateTeamName('awayTeam', '⚽'.repeat(60) + '𝔸'.repeat(60))).toBe('⚽'.repeat(60) + '𝔸'.repeat(60));
  });

  it.each([
    ['', 'empty'],
    ['   ', 'blank'],
    ['\t\n', 'whitespace only'],
    ['a'.repeat(121), 'too long'],
    ['𝔸'.repeat(121), 'too long in code points'],
    ['Arse\u0000nal', 'NUL'],
    ['Line\nBreak', 'newline inside'],
  ])('rejects %j (%s)', (value) => {
    expectInvalidParameter(() => validateTeamName('homeTeam', value), 'homeTeam');
  });

  it('trims before measuring', () => {
    expect(validateTeamName('homeTeam', `  ${'b'.repeat(120)}  `)).toBe('b'.repeat(120));
  });

  it('rejects non-strings', () => {
    expectInvalidParameter(() => validateTeamName('awayTeam', undefined as unknown as string), 'awayTeam');
  });
});

describe('describePick', () => {
  it.each([
    [{ market: 'h2h', selection: 'Arsenal', odds: 2.1, sport: 'soccer' }, 'Arsenal to win @ 2.10'],
    [{ market: 'h2h', selection: 'Draw', odds: 3.4, sport: 'soccer' }, 'Draw @ 3.40'],
    [{ market: 'h2h', selection: 'draw', odds: 3.4, sport: 'soccer' }, 'draw @ 3.40'],
    [{ market: 'h2h', selection: 'Real Madrid', odds: 1.005, sport: 'soccer' }, 'Real Madrid to win @ 1.01'],
    [{ market: 'h2h', selection: 'Novak Djokovic', odds: 12, sport: 'tennis' }, 'Novak Djokovic to win @ 12.00'],
    [{ market: 'h2h', selection: ' Arsenal ', odds: 2.125, sport: 'soccer' }, 'Arsenal to win @ 2.13'],
    [{ market: 'spreads', selection: 'Arsenal', odds: 1.95, line: -0.75, sport: 'soccer' }, 'Arsenal -0.75 @ 1.95'],
    [{ market: 'spreads', selection: 'Chelsea', odds: 1.9, line: 0.25, sport: 'soccer' }, 'Chelsea +0.25 @ 1.90'],
    [{ market: 'spreads', selection: 'Chelsea', odds: 2.05, line: 0, sport: 'soccer' }, 'Chelsea 0 @ 2.05'],
    [{ market: 'spreads', selection: 'Celtics', odds: 1.91, line: -6.5, sport: 'basketball' }, 'Celtics -6.5 @ 1.91'],
    [{ market: 'totals', selection: 'Over', odds: 2.1, line: 2.5, sport: 'soccer' }, 'Over 2.5 goals @ 2.10'],
    [{ market: 'totals', selection: 'Under', odds: 1.87, line: 221.5, sport: 'basketball' }, 'Under 221.5 points @ 1.87'],
    [{ market: 'totals', selection: 'Over', odds: 1.95, line: 8.75, sport: 'baseball' }, 'Over 8.75 runs @ 1.95'],
  ] as const)('%j -> %s', (input, expected) => {
    expect(describePick(input)).toBe(expected);
  });
});
