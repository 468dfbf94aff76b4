import { describe, expect, it } from 'vitest';
import { h2hResult } from '../../src/domain/settlement.js';

const score = (homeScore: number, awayScore: number) => ({ homeTeam: 'Arsenal', awayTeam: 'Chelsea', homeScore, awayScore });

describe('h2hResult (automatic settlement of an h2h pick)', () => {
  it("wins the selection's side and loses the other", () => {
    expect(h2hResult('Arsenal', 3, score(2, 1))).toBe('won');
    expect(h2hResult('Chelsea', 3, score(2, 1))).toBe('lost');
    expect(h2hResult('Chelsea', 2, score(0, 3))).toBe('won');
    expect(h2hResult('Arsenal', 2, score(0, 3))).toBe('lost');
  });

  it('a level score wins the draw, loses a side in a three-way market and voids a side in a two-way one', () => {
    expect(h2hResult('Draw', 3, score(1, 1))).toBe('won');
    expect(h2hResult('Draw', 3, score(2, 1))).toBe('lost');
    expect(h2hResult('Arsenal', 3, score(1, 1))).toBe('lost');
    expect(h2hResult('Chelsea', 2, score(0, 0))).toBe('void');
  });

  it('gives no result for a selection that names neither team nor the draw', () => {
    expect(h2hResult('Spurs', 3, score(1, 0))).toBeNull();
  });
});
