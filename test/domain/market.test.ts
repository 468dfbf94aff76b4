/**
 * The markets' rules for a new pick (docs/API.md, "Pick"): which selections and lines each
 * market takes, and in which sports spreads and totals exist.
 */
import { describe, expect, it } from 'vitest';
import { InvalidParameterError } from '../../src/domain/errors.js';
import { validateLine, validateMarket, validateSelection } from '../../src/domain/market.js';

function refusal(run: () => unknown): { parameter: unknown; message: string } | null {
  try {
    run();
    return null;
  } catch (error) {
    if (!(error instanceof InvalidParameterError)) throw error;
    return { parameter: error.extras.parameter, message: error.message };
  }
}

describe('markets', () => {
  it('knows h2h, spreads and totals, nothing else', () => {
    expect(['h2h', 'spreads', 'totals'].map(validateMarket)).toEqual(['h2h', 'spreads', 'totals']);
    for (const unknown of ['H2H', 'moneyline', 'spread', '']) {
      expect(refusal(() => validateMarket(unknown))).toEqual({ parameter: 'market', message: 'market must be one of: h2h, spreads, totals' });
    }
  });

  it.each([
    ['h2h', 'Draw', true],
    ['h2h', 'Over', false],
    ['spreads', 'Arsenal', true],
    ['spreads', 'Draw', false],
    ['totals', 'Over', true],
    ['totals', 'Under', true],
    ['totals', 'over', false],
    ['totals', 'Arsenal', false],
  ] as const)('%s accepts the selection %s: %s', (market, selection, accepted) => {
    const result = refusal(() => validateSelection(market, selection, 'Arsenal', 'Chelsea'));
    expect(result === null).toBe(accepted);
    if (!accepted) expect(result!.parameter).toBe('selection');
  });

  it.each([
    ['h2h', null, 'soccer', null],
    ['spreads', -0.75, 'soccer', -0.75],
    ['spreads', 0, 'soccer', 0],
    ['spreads', 1.25, 'icehockey', 1.25],
    ['totals', 2.5, 'soccer', 2.5],
    ['totals', 221.5, 'basketball', 221.5],
  ] as const)('%s with line %s in %s is %s', (market, line, sport, expected) => {
    expect(validateLine(market, line, sport)).toBe(expected);
  });

  it.each([
    ['h2h', 0.5, 'soccer', 'line'], // h2h has no line
    ['spreads', null, 'soccer', 'line'], // a line is required
    ['spreads', 0.3, 'soccer', 'line'], // not a multiple of 0.25
    ['spreads', 150, 'soccer', 'line'],
    ['totals', 0, 'soccer', 'line'],
    ['totals', -2.5, 'soccer', 'line'],
    ['totals', Number.NaN, 'soccer', 'line'],
    ['totals', 2.5, 'tennis', 'market'], // no lines in tennis
  ] as const)('refuses %s with line %s in %s, naming %s', (market, line, sport, parameter) => {
    expect(refusal(() => validateLine(market, line, sport))?.parameter).toBe(parameter);
  });
});
