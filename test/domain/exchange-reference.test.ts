/**
 * Exchanges as sharp references (docs/VALUE_ENGINE.md, "Exchanges"): back and lay prices read
 * from v4's h2h and h2h_lay markets, the midpoint price, each wrong form refused, the consensus
 * with a book, and an exchange offer net of its commission. Expected values by hand.
 */
import { describe, expect, it } from 'vitest';
import { EXCHANGE_COMMISSIONS, commissionAsTaxRate } from '../../src/domain/odds.js';
import { parseOddsEvents } from '../../src/domain/odds-feed.js';
import { consensusByMethod, exchangeMidpoint, referenceConsensus } from '../../src/domain/reference-consensus.js';
import { offerTaxRate } from '../../src/domain/value-detection.js';

const AT = new Date('2026-11-24T12:00:00Z');
const outcomes = (back: number[], lay?: (number | undefined)[]) =>
  ['Arsenal', 'Draw', 'Chelsea'].map((name, i) => (lay?.[i] === undefined ? { name, price: back[i]! } : { name, price: back[i]!, lay: lay[i]! }));

describe('exchangeMidpoint', () => {
  it('prices (1/back + 1/lay) / 2 per outcome, normalised', () => {
    // Back 2.0 / 3.6 / 4.2, lay 2.04 / 3.7 / 4.3: raw 0.4950980 + 0.2740240 + 0.2353267 = 1.0044488.
    const midpoint = exchangeMidpoint(outcomes([2.0, 3.6, 4.2], [2.04, 3.7, 4.3]), 0.05) as number[];
    expect(midpoint[0]).toBeCloseTo(0.4929052260783626, 12);
    expect(midpoint[1]).toBeCloseTo(0.27281035838161094, 12);
    expect(midpoint[2]).toBeCloseTo(0.23428441554002633, 12);
  });

  it('is null for back prices only (a book: devig it)', () => {
    expect(exchangeMidpoint(outcomes([2.0, 3.6, 4.2]), 0.05)).toBeNull();
  });

  it('refuses a lay missing for some outcomes, a lay below its back, and a spread wider than the bound', () => {
    expect(exchangeMidpoint(outcomes([2.0, 3.6, 4.2], [2.04, undefined, 4.3]), 0.05)).toMatchObject({ reason: 'exchange_lay_missing' });
    expect(exchangeMidpoint(outcomes([2.0, 3.6, 4.2], [1.98, 3.7, 4.3]), 0.05)).toMatchObject({ reason: 'exchange_lay_below_back' });
    // Draw: 3.8 / 3.6 - 1 = 5.6 % > 5 %.
    expect(exchangeMidpoint(outcomes([2.0, 3.6, 4.2], [2.04, 3.8, 4.3]), 0.05)).toMatchObject({ reason: 'exchange_spread_wide', detail: expect.stringContaining('5.56 %') });
    // At the bound exactly it is accepted: 2.1 / 2.0 - 1 = 5 %.
    expect(Array.isArray(exchangeMidpoint(outcomes([2.0, 3.6, 4.2], [2.1, 3.7, 4.3]), 0.05))).toBe(true);
    // A back equal to its lay is a spread of 0.
    expect(Array.isArray(exchangeMidpoint(outcomes([2.0, 3.6, 4.2], [2.0, 3.6, 4.2]), 0))).toBe(true);
  });
});

describe('referenceConsensus with an exchange', () => {
  it('weights the exchange midpoint with a devigged book; every method sees the midpoint', () => {
    const exchange = { bookmaker: 'betfair_ex_eu', weight: 1, outcomes: outcomes([2.0, 3.6, 4.2], [2.04, 3.7, 4.3]), updatedAt: AT };
    // Pinnacle at 1.95 / 3.5 / 4.1 multiplicatively devigged.
    const book = { bookmaker: 'pinnacle', weight: 1, outcomes: outcomes([1.95, 3.5, 4.1]), updatedAt: AT };
    const consensus = referenceConsensus([book, exchange], 'multiplicative', 0.05);
    if (!('quotes' in consensus)) throw new Error('refused');
    expect(consensus.quotes.map((q) => q.pricing)).toEqual(['devig', 'midpoint']);
    const implied = [1 / 1.95, 1 / 3.5, 1 / 4.1];
    const sum = implied.reduce((a, b) => a + b, 0);
    const mid = [0.4929052260783626, 0.27281035838161094, 0.23428441554002633];
    consensus.probabilities.forEach((p, i) => expect(p).toBeCloseTo((implied[i]! / sum + mid[i]!) / 2, 12));
    const methods = consensusByMethod(consensus);
    // Shin moves the book's price; the exchange's half stays its midpoint under every method.
    for (const list of Object.values(methods)) expect(list).not.toBeNull();
    const exchangeOnly = referenceConsensus([exchange], 'shin', 0.05);
    if (!('quotes' in exchangeOnly)) throw new Error('refused');
    for (const list of Object.values(consensusByMethod(exchangeOnly))) list!.forEach((p: number, i: number) => expect(p).toBeCloseTo(mid[i]!, 12));
  });

  it('leaves out a thin exchange with its reason, and prices from the others', () => {
    const thin = { bookmaker: 'betfair_ex_eu', weight: 1, outcomes: outcomes([2.0, 3.6, 4.2], [2.3, 3.7, 4.3]), updatedAt: AT };
    const book = { bookmaker: 'pinnacle', weight: 1, outcomes: outcomes([1.95, 3.5, 4.1]), updatedAt: AT };
    const consensus = referenceConsensus([thin, book], 'multiplicative', 0.05);
    if (!('quotes' in consensus)) throw new Error('refused');
    expect(consensus.quotes.map((q) => q.bookmaker)).toEqual(['pinnacle']);
    expect(consensus.refused).toEqual([{ bookmaker: 'betfair_ex_eu', reason: 'exchange_spread_wide', detail: expect.stringMatching(/^the exchange "Arsenal" backs at 2 and lays at 2.3/) }]);
    expect(referenceConsensus([thin], 'multiplicative', 0.05)).toEqual({ refused: [expect.objectContaining({ reason: 'exchange_spread_wide' })] });
  });
});

describe('an exchange as an offer', () => {
  it('pays its back price net of the commission on winnings: the equivalent tax at that price is c (price - 1) / price', () => {
    // 4.6 at 5 %: 1 + 3.6 x 0.95 = 4.42 = 4.6 x (1 - 0.05 x 3.6 / 4.6).
    const rate = offerTaxRate('betfair_ex_eu', 4.6, { taxRates: {}, defaultTaxRate: 0.053 });
    expect(rate).toBeCloseTo(0.05 * 3.6 / 4.6, 12);
    expect(4.6 * (1 - rate)).toBeCloseTo(4.42, 12);
    // Overridden by BOOKMAKER_TAX_RATES (a commission for an exchange key), and a book keeps its tax on stakes.
    expect(offerTaxRate('smarkets', 3, { taxRates: { smarkets: 0.01 }, defaultTaxRate: 0.053 })).toBeCloseTo(0.01 * 2 / 3, 12);
    expect(offerTaxRate('tipico', 3, { taxRates: {}, defaultTaxRate: 0.053 })).toBe(0.053);
    expect(offerTaxRate('tipico', 3, { taxRates: { tipico: 0.1 }, defaultTaxRate: 0.053 })).toBe(0.1);
    expect(Object.keys(EXCHANGE_COMMISSIONS).sort()).toEqual(['betfair_ex_au', 'betfair_ex_eu', 'betfair_ex_uk', 'matchbook', 'smarkets']);
    expect(commissionAsTaxRate(0.02, 2)).toBeCloseTo(0.01, 12);
  });
});

describe('v4 h2h_lay', () => {
  const event = (markets: unknown[]) => ({
    id: 'ev1',
    sport_key: 'soccer_epl',
    sport_title: 'EPL',
    commence_time: '2026-11-24T15:00:00Z',
    home_team: 'Arsenal',
    away_team: 'Chelsea',
    bookmakers: [{ key: 'betfair_ex_eu', title: 'Betfair', last_update: '2026-11-24T11:59:00Z', markets }],
  });
  const market = (key: string, prices: Record<string, number>) => ({ key, last_update: '2026-11-24T11:59:00Z', outcomes: Object.entries(prices).map(([name, price]) => ({ name, price })) });

  it('attaches each lay price to its h2h outcome', () => {
    const parsed = parseOddsEvents([event([market('h2h', { Arsenal: 2.0, Draw: 3.6, Chelsea: 4.2 }), market('h2h_lay', { Arsenal: 2.04, Draw: 3.7, Chelsea: 4.3 })])]);
    expect(parsed.events[0]!.bookmakers[0]!.markets).toEqual([
      expect.objectContaining({ key: 'h2h', outcomes: [{ name: 'Arsenal', price: 2.0, lay: 2.04 }, { name: 'Draw', price: 3.6, lay: 3.7 }, { name: 'Chelsea', price: 4.2, lay: 4.3 }] }),
    ]);
  });

  it('leaves outcomes without a lay as they are, ignores a lay without h2h, and drops both when the lay names an outcome h2h lacks', () => {
    const partial = parseOddsEvents([event([market('h2h', { Arsenal: 2.0, Draw: 3.6, Chelsea: 4.2 }), market('h2h_lay', { Arsenal: 2.04, Chelsea: 4.3 })])]);
    expect(partial.events[0]!.bookmakers[0]!.markets[0]!.outcomes[1]).toEqual({ name: 'Draw', price: 3.6 });
    const layOnly = parseOddsEvents([event([market('h2h_lay', { Arsenal: 2.04, Draw: 3.7, Chelsea: 4.3 })])]);
    expect(layOnly.events[0]!.bookmakers).toEqual([]);
    const foreign = parseOddsEvents([event([market('h2h', { Arsenal: 2.0, Chelsea: 1.9 }), market('h2h_lay', { Arsenal: 2.04, Draw: 3.7, Chelsea: 1.95 })])]);
    expect(foreign.events[0]!.bookmakers).toEqual([]);
    expect(foreign.skipped.map((skip) => skip.reason)).toEqual([expect.stringContaining('h2h_lay lists "Draw", which its h2h market lacks')]);
    // A malformed lay market is dropped like any market, and the back prices stay.
    const bad = parseOddsEvents([event([market('h2h', { Arsenal: 2.0, Draw: 3.6, Chelsea: 4.2 }), { key: 'h2h_lay', outcomes: [{ name: 'Arsenal', price: 'x' }] }])]);
    expect(bad.events[0]!.bookmakers[0]!.markets[0]!.outcomes.every((o) => o.lay === undefined)).toBe(true);
    expect(bad.skipped.length).toBe(1);
  });
});
