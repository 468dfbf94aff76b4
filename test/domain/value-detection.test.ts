import { readFileSync } from 'node:fs';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { parseOddsEvents, type OddsBookmaker, type OddsEvent } from '../../src/domain/odds-feed.js';
import {
  type ConfidenceInputs,
  DEFAULT_DETECTION_OPTIONS,
  type DetectionOutcome,
  type ValueCandidate,
  analysisText,
  confidenceScore,
  detectValue,
  referenceObservations,
} from '../../src/domain/value-detection.js';
import { devig } from '../../src/domain/devig.js';

const NOW = new Date('2026-11-24T10:00:00Z');
const HOUR = 3_600_000;
const secondsAgo = (seconds: number) => new Date(NOW.getTime() - seconds * 1000);

/**
 * A market the power method devigs to known probabilities: with price_i = 1 / p_i^(1/k) the
 * implied probabilities are pi_i = p_i^(1/k), so pi_i^k = p_i sums to 1 and the power devig
 * must return exactly p (k is unique). Fair odds are then 1 / p_i, known by construction.
 */
function powerMarketPrices(fair: number[], k: number): number[] {
  return fair.map((p) => 1 / p ** (1 / k));
}

function book(
  key: string,
  outcomes: Record<string, number>,
  updatedSecondsAgo = 30,
  options: { title?: string; marketUpdatedSecondsAgo?: number | null } = {},
): OddsBookmaker {
  const marketAge = options.marketUpdatedSecondsAgo === undefined ? updatedSecondsAgo : options.marketUpdatedSecondsAgo;
  return {
    key,
    title: options.title ?? key.charAt(0).toUpperCase() + key.slice(1),
    lastUpdate: secondsAgo(updatedSecondsAgo),
    markets: [
      {
        key: 'h2h',
        line: null,
        lastUpdate: marketAge === null ? null : secondsAgo(marketAge),
        outcomes: Object.entries(outcomes).map(([name, price]) => ({ name, price })),
      },
    ],
  };
}

function event(bookmakers: OddsBookmaker[], kickoffInHours = 24, home = 'Arsenal', away = 'Chelsea'): OddsEvent {
  return {
    id: 'evt-1',
    sportKey: 'soccer_epl',
    sportTitle: 'EPL',
    commenceTime: new Date(NOW.getTime() + kickoffInHours * HOUR),
    homeTeam: home,
    awayTeam: away,
    bookmakers,
  };
}

// Two-way reference: Arsenal 0.64, Chelsea 0.36 fair, power exponent 1.1 (margin about 6 %).
const [ARSENAL_REF, CHELSEA_REF] = powerMarketPrices([0.64, 0.36], 1.1) as [number, number];
const pinnacle = (age = 30, options: Parameters<typeof book>[3] = {}) =>
  book('pinnacle', { Arsenal: ARSENAL_REF, Chelsea: CHELSEA_REF }, age, options);

function candidateFor(outcome: DetectionOutcome, selection: string): ValueCandidate {
  const found = outcome.candidates.find((c) => c.selection === selection);
  if (!found) throw new Error(`no candidate for ${selection}: ${JSON.stringify(outcome.rejected)}`);
  return found;
}

function reasonFor(outcome: DetectionOutcome, selection: string): string | undefined {
  return outcome.rejected.find((r) => r.selection === selection)?.reason;
}

describe('detectValue', () => {
  it('prices a pick against the power-devigged reference with the exact fair odds and edges', () => {
    const result = detectValue(
      event([pinnacle(), book('tipico', { Arsenal: 1.4, Chelsea: 3.0 })]),
      {},
      NOW,
    );
    const pick = candidateFor(result, 'Chelsea');
    // By hand: fair p = 0.36, fair odds 1 / 0.36; edges as docs/API.md "Pick" defines them, with tax 0.053.
    const fairOdds = 1 / 0.36;
    const edgePercent = (3.0 * 0.36 - 1) * 100; // 8 %
    const edgePostTax = 3.0 * (1 - 0.053) * 0.36 - 1; // 0.02276
    const b = 3.0 * (1 - 0.053) - 1;
    const kelly = (0.36 * b - 0.64) / b;
    expect(pick.fairProbability).toBeCloseTo(0.36, 9);
    expect(pick.fairOdds).toBeCloseTo(fairOdds, 9);
    expect(pick.edgePercent).toBeCloseTo(edgePercent, 7);
    expect(pick.edgePercent).toBeCloseTo(8, 7);
    expect(pick.edgePostTaxFraction).toBeCloseTo(edgePostTax, 9);
    expect(pick.edgePostTaxFraction).toBeCloseTo(0.02276, 8);
    expect(pick.kellyFraction).toBeCloseTo(kelly, 9);
    expect(pick.edgeTier).toBe('standard');
    expect(pick).toMatchObject({
      eventId: 'evt-1',
      market: 'h2h',
      bookmakerKey: 'tipico',
      bookmakerTitle: 'Tipico',
      price: 3.0,
      taxRate: 0.053,
      held: false,
    });
    // Arsenal at 1.4 is below its fair 1.5625: no pick, with the reason.
    expect(reasonFor(result, 'Arsenal')).toBe('below_min_edge');
    expect(result.candidates).toHaveLength(1);
  });

  it('gives every method the fair odds 2.0 in a symmetric market, and the exact confidence', () => {
    const result = detectValue(
      event([book('pinnacle', { Arsenal: 1.95, Chelsea: 1.95 }, 60), book('tipico', { Arsenal: 2.2, Chelsea: 1.72 })]),
      {},
      NOW,
    );
    const pick = candidateFor(result, 'Arsenal');
    expect(pick.fairOdds).toBeCloseTo(2, 10);
    expect(pick.edgePostTaxFraction).toBeCloseTo((2.2 * 0.947) / 2 - 1, 10);
    for (const p of Object.values(pick.provenance.fairProbabilities)) expect(p).toBeCloseTo(0.5, 10);
    // margin 2 / 1.95 - 1, no disagreement, reference 60 s and offer 30 s old of 300, Tipico's own
    // margin 1 / 2.2 + 1 / 1.72 - 1 = 3.6 % (usual), edge 2.2 / 2 - 1 = 10 %:
    // 100 x (1 - m / 0.25) x 1 x (1 - 0.5 x 60 / 300) x (1 - 0.5 x 30 / 300) x 1 x 1 / (1 + 0.05 / 0.2) x 0.85 (one reference).
    const margin = 2 / 1.95 - 1;
    expect(pick.confidenceInputs.margin).toBeCloseTo(margin, 12);
    expect(pick.confidenceInputs.offeredMargin).toBeCloseTo(1 / 2.2 + 1 / 1.72 - 1, 12);
    expect(pick.confidenceInputs.edge).toBeCloseTo(0.1, 12);
    expect(pick.confidence).toBe(Math.round(100 * (1 - margin / 0.25) * 0.9 * 0.95 * 0.8 * 0.85));
    expect(pick.confidence).toBe(52);
    expect(pick.warnings).toEqual(['single_sharp_reference']);
  });

  it('makes no pick below the minimum post-tax edge, and one exactly at a lower threshold', () => {
    const events = event([pinnacle(), book('tipico', { Arsenal: 1.5, Chelsea: 2.9 })]);
    const below = detectValue(events, {}, NOW);
    expect(below.candidates).toEqual([]);
    expect(reasonFor(below, 'Chelsea')).toBe('below_min_edge');
    // 2.9 x 0.947 x 0.36 - 1 = -0.011 post-tax; untaxed it is 2.9 x 0.36 - 1 = +0.044.
    const untaxed = detectValue(events, { taxRates: { tipico: 0 } }, NOW);
    expect(candidateFor(untaxed, 'Chelsea').edgePostTaxFraction).toBeCloseTo(2.9 * 0.36 - 1, 9);
    const strict = detectValue(events, { taxRates: { tipico: 0 }, minEdge: 0.05 }, NOW);
    expect(reasonFor(strict, 'Chelsea')).toBe('below_min_edge');
  });

  it('makes no pick outside the odds range; the bounds are inclusive', () => {
    const events = event([pinnacle(), book('tipico', { Arsenal: 1.4, Chelsea: 3.0 })]);
    const outside = detectValue(events, { oddsRange: { min: 1.2, max: 2.99 } }, NOW);
    expect(reasonFor(outside, 'Chelsea')).toBe('outside_odds_range');
    expect(outside.candidates).toEqual([]);
    expect(detectValue(events, { oddsRange: { min: 1.2, max: 3.0 } }, NOW).candidates).toHaveLength(1);
    expect(reasonFor(detectValue(events, { oddsRange: { min: 3.01, max: 15 } }, NOW), 'Chelsea')).toBe(
      'outside_odds_range',
    );
    expect(detectValue(events, { oddsRange: { min: 3.0, max: 15 } }, NOW).candidates).toHaveLength(1);
  });

  it('makes no pick beyond the horizon; exactly at the horizon is inside', () => {
    const books = [pinnacle(), book('tipico', { Arsenal: 1.4, Chelsea: 3.0 })];
    const far = detectValue(event(books, 72 + 1 / 3600), {}, NOW);
    expect(far.candidates).toEqual([]);
    expect(far.rejected.map((r) => r.reason)).toEqual(['beyond_horizon', 'beyond_horizon']);
    expect(detectValue(event(books, 72), {}, NOW).candidates).toHaveLength(1);
    expect(reasonFor(detectValue(event(books, 10), { horizonHours: 9 }, NOW), 'Chelsea')).toBe('beyond_horizon');
  });

  it('makes no pick at or after kickoff', () => {
    const books = [pinnacle(), book('tipico', { Arsenal: 1.4, Chelsea: 3.0 })];
    for (const hours of [0, -1 / 60, -5]) {
      const result = detectValue(event(books, hours), {}, NOW);
      expect(result.candidates).toEqual([]);
      expect(result.rejected).toEqual([
        { market: 'h2h', selection: 'Arsenal', line: null, reason: 'kickoff_past' },
        { market: 'h2h', selection: 'Chelsea', line: null, reason: 'kickoff_past' },
      ]);
    }
    expect(detectValue(event(books, 1 / 3600), {}, NOW).candidates).toHaveLength(1);
  });

  it('makes no pick from a stale reference (the market time, else the bookmaker time)', () => {
    const soft = book('tipico', { Arsenal: 1.4, Chelsea: 3.0 });
    expect(reasonFor(detectValue(event([pinnacle(301), soft]), {}, NOW), 'Chelsea')).toBe('reference_stale');
    expect(detectValue(event([pinnacle(300), soft]), {}, NOW).candidates).toHaveLength(1);
    // The market's own last_update wins over the bookmaker's...
    expect(detectValue(event([pinnacle(900, { marketUpdatedSecondsAgo: 10 }), soft]), {}, NOW).candidates).toHaveLength(1);
    expect(reasonFor(detectValue(event([pinnacle(10, { marketUpdatedSecondsAgo: 900 }), soft]), {}, NOW), 'Chelsea')).toBe(
      'reference_stale',
    );
    // ...and the bookmaker's is used when the market has none.
    expect(reasonFor(detectValue(event([pinnacle(900, { marketUpdatedSecondsAgo: null }), soft]), {}, NOW), 'Chelsea')).toBe(
      'reference_stale',
    );
    expect(detectValue(event([pinnacle(301), soft]), { referenceMaxAgeSeconds: 600 }, NOW).candidates).toHaveLength(1);
  });

  it('makes no pick from a stale offered price, and takes a fresh one that still has the edge', () => {
    const stale = book('tipico', { Arsenal: 1.4, Chelsea: 3.2 }, 301);
    const onlyStale = detectValue(event([pinnacle(), stale]), {}, NOW);
    expect(onlyStale.candidates).toEqual([]);
    expect(reasonFor(onlyStale, 'Chelsea')).toBe('offered_stale');
    expect(onlyStale.rejected.find((r) => r.selection === 'Chelsea')?.offers).toEqual([
      { bookmaker: 'tipico', price: 3.2, reason: 'offered_stale' },
    ]);
    // A stale offered market with a fresh bookmaker time is still stale (the market's time wins).
    const staleMarket = book('tipico', { Arsenal: 1.4, Chelsea: 3.2 }, 5, { marketUpdatedSecondsAgo: 400 });
    expect(reasonFor(detectValue(event([pinnacle(), staleMarket]), {}, NOW), 'Chelsea')).toBe('offered_stale');

    const fresh = book('bwin', { Arsenal: 1.5, Chelsea: 3.0 }, 20);
    const pick = candidateFor(detectValue(event([pinnacle(), stale, fresh]), {}, NOW), 'Chelsea');
    expect(pick.bookmakerKey).toBe('bwin');
    expect(pick.price).toBe(3.0);
    expect(pick.provenance.offeredPrices).toEqual([
      { bookmaker: 'tipico', price: 3.2, updatedAt: secondsAgo(301) },
      { bookmaker: 'bwin', price: 3.0, updatedAt: secondsAgo(20) },
    ]);
  });

  it('takes the best post-tax price across bookmakers, and tax can change which book is best', () => {
    const books = [
      pinnacle(),
      book('tipico', { Arsenal: 1.4, Chelsea: 3.0 }),
      book('bwin', { Arsenal: 1.4, Chelsea: 3.1 }),
      book('betfair_ex_eu', { Arsenal: 1.4, Chelsea: 3.05 }, 30, { title: 'Betfair' }),
    ];
    // The exchange's 5 % base commission is on net winnings: 1 + 2.05 x 0.95 = 2.9475 beats bwin's 3.1 x 0.947 = 2.9357.
    const byDefault = candidateFor(detectValue(event(books), {}, NOW), 'Chelsea');
    expect(byDefault).toMatchObject({ bookmakerKey: 'betfair_ex_eu', price: 3.05 });
    expect(byDefault.taxRate).toBeCloseTo((0.05 * 2.05) / 3.05, 12);
    expect(byDefault.edgePostTaxFraction).toBeCloseTo((1 + 2.05 * 0.95) * 0.36 - 1, 9);
    // Without the exchange, the best book after its tax on stakes.
    const booksOnly = candidateFor(detectValue(event(books.filter((b) => b.key !== 'betfair_ex_eu')), {}, NOW), 'Chelsea');
    expect(booksOnly).toMatchObject({ bookmakerKey: 'bwin', price: 3.1, taxRate: 0.053 });
    expect(booksOnly.edgePostTaxFraction).toBeCloseTo(3.1 * 0.947 * 0.36 - 1, 9);

    // bwin taxed at 10 % nets 2.79; the exchange at a 2 % commission nets 1 + 2.05 x 0.98 = 3.009 and beats tipico's 2.841.
    const taxed = candidateFor(
      detectValue(event(books), { taxRates: { bwin: 0.1, betfair_ex_eu: 0.02 } }, NOW),
      'Chelsea',
    );
    expect(taxed).toMatchObject({ bookmakerKey: 'betfair_ex_eu', bookmakerTitle: 'Betfair', price: 3.05 });
    expect(taxed.taxRate).toBeCloseTo((0.02 * 2.05) / 3.05, 12);
    expect(taxed.edgePostTaxFraction).toBeCloseTo((1 + 2.05 * 0.98) * 0.36 - 1, 9);
    expect(taxed.edgePercent).toBeCloseTo((3.05 * 0.36 - 1) * 100, 7);
    // Both qualify, yet the lower untaxed price nets more: 3.15 beats 3.2 x 0.947 = 3.0304.
    const both = [pinnacle(), book('tipico', { Arsenal: 1.4, Chelsea: 3.2 }), book('exchange', { Arsenal: 1.4, Chelsea: 3.15 })];
    const untaxedWins = candidateFor(detectValue(event(both), { taxRates: { exchange: 0 } }, NOW), 'Chelsea');
    expect(untaxedWins).toMatchObject({ bookmakerKey: 'exchange', price: 3.15, taxRate: 0 });
    expect(untaxedWins.edgePostTaxFraction).toBeCloseTo(3.15 * 0.36 - 1, 9);
    expect(candidateFor(detectValue(event(both), {}, NOW), 'Chelsea').bookmakerKey).toBe('tipico');
  });

  it('holds a pick for review from the review edge on, and not below it', () => {
    const books = [pinnacle(), book('tipico', { Arsenal: 1.3, Chelsea: 4.0 })];
    // Untaxed 4.0 against 1 / 0.36: 4 x 0.36 - 1 = 0.44.
    const held = candidateFor(detectValue(event(books), { taxRates: { tipico: 0 } }, NOW), 'Chelsea');
    expect(held.edgePostTaxFraction).toBeCloseTo(0.44, 9);
    expect(held.held).toBe(true);
    expect(held.edgeTier).toBe('big_edge');
    expect(candidateFor(detectValue(event(books), { taxRates: { tipico: 0 }, reviewEdge: 0.45 }, NOW), 'Chelsea').held).toBe(
      false,
    );
    expect(candidateFor(detectValue(event(books), { taxRates: { tipico: 0 }, reviewEdge: 0.44 - 1e-9 }, NOW), 'Chelsea').held).toBe(
      true,
    );
    const normal = candidateFor(detectValue(event([pinnacle(), book('tipico', { Chelsea: 3.0, Arsenal: 1.5 })]), {}, NOW), 'Chelsea');
    expect(normal.held).toBe(false);
  });

  it('reports no_reference when the reference bookmaker is missing, and uses another one when configured', () => {
    const books = [book('tipico', { Arsenal: 1.4, Chelsea: 3.0 }), book('bwin', { Arsenal: 1.6, Chelsea: 2.5 })];
    const result = detectValue(event(books), {}, NOW);
    expect(result.candidates).toEqual([]);
    expect(result.rejected).toEqual([
      { market: 'h2h', selection: 'Arsenal', line: null, reason: 'no_reference' },
      { market: 'h2h', selection: 'Chelsea', line: null, reason: 'no_reference' },
    ]);
    const sharp = book('circa', { Arsenal: ARSENAL_REF, Chelsea: CHELSEA_REF });
    const pick = candidateFor(detectValue(event([sharp, ...books]), { references: [{ key: 'circa', weight: 1 }] }, NOW), 'Chelsea');
    expect(pick.provenance.referenceBookmaker).toBe('circa');
    expect(pick.bookmakerKey).toBe('tipico');
  });

  it('reports no_offer when only the reference prices the event', () => {
    expect(detectValue(event([pinnacle()]), {}, NOW).rejected).toEqual([
      { market: 'h2h', selection: 'Arsenal', line: null, reason: 'no_offer' },
      { market: 'h2h', selection: 'Chelsea', line: null, reason: 'no_offer' },
    ]);
  });

  it('reports the devig refusal of the reference market', () => {
    const soft = book('tipico', { Arsenal: 1.6, Chelsea: 3.0 });
    // 1 / 1.5 + 1 / 1.5 = 1.333: a margin above the 25 % ceiling.
    const wide = detectValue(event([book('pinnacle', { Arsenal: 1.5, Chelsea: 1.5 }), soft]), {}, NOW);
    expect(wide.candidates).toEqual([]);
    expect(reasonFor(wide, 'Chelsea')).toBe('reference_refused:overround_out_of_range');
    // Additive refuses a long shot whose implied probability is below (S - 1) / n.
    const longShot = book('pinnacle', { Arsenal: 1.04, Chelsea: 200, Draw: 12 });
    const softLong = book('tipico', { Arsenal: 1.02, Chelsea: 400, Draw: 25 });
    const additive = detectValue(event([longShot, softLong]), { devigMethod: 'additive' }, NOW);
    expect(additive.rejected.map((r) => r.reason)).toEqual([
      'reference_refused:method_refused',
      'reference_refused:method_refused',
      'reference_refused:method_refused',
    ]);
    // Power accepts the same market; the provenance shows additive's refusal as null.
    const power = detectValue(event([longShot, softLong]), { oddsRange: { min: 1.01, max: 1000 } }, NOW);
    expect(power.rejected.every((r) => !r.reason.startsWith('reference_refused'))).toBe(true);
    const drawPick = candidateFor(power, 'Draw');
    expect(drawPick.provenance.fairProbabilities.additive).toBeNull();
    expect(drawPick.provenance.fairProbabilities.power).toBeCloseTo(drawPick.fairProbability, 15);
  });

  it('prices a three-way market with a Draw', () => {
    // Home 0.5, Draw 0.3, Away 0.2 fair, power exponent 1.08.
    const [home, draw, away] = powerMarketPrices([0.5, 0.3, 0.2], 1.08) as [number, number, number];
    const reference = book('pinnacle', { Arsenal: home, Draw: draw, Chelsea: away });
    const soft = book('tipico', { Arsenal: 1.9, Draw: 3.6, Chelsea: 4.8 });
    const result = detectValue(event([reference, soft]), {}, NOW);
    const pick = candidateFor(result, 'Draw');
    expect(pick.fairProbability).toBeCloseTo(0.3, 9);
    expect(pick.fairOdds).toBeCloseTo(1 / 0.3, 9);
    expect(pick.edgePostTaxFraction).toBeCloseTo(3.6 * 0.947 * 0.3 - 1, 9);
    expect(pick.edgePercent).toBeCloseTo((3.6 * 0.3 - 1) * 100, 7);
    expect(pick.provenance.referencePrices).toEqual([
      { name: 'Arsenal', price: home },
      { name: 'Draw', price: draw },
      { name: 'Chelsea', price: away },
    ]);
    expect(pick.provenance.fairProbabilities.power).toBeCloseTo(0.3, 9);
    expect(pick.provenance.devigMethod).toBe('power');
    expect(pick.provenance.referenceUpdatedAt).toEqual(secondsAgo(30));
    expect(reasonFor(result, 'Arsenal')).toBe('below_min_edge'); // 1.9 x 0.947 x 0.5 < 1
    expect(reasonFor(result, 'Chelsea')).toBe('below_min_edge'); // 4.8 x 0.947 x 0.2 < 1
    expect(result.candidates).toHaveLength(1);
  });

  it('accounts for every outcome of a parsed v4 fixture exactly once', () => {
    for (const file of ['odds-two-way.json', 'odds-soccer-epl.json']) {
      const parsed = parseOddsEvents(JSON.parse(readFileSync(`test/fixtures/odds-feed/${file}`, 'utf8')));
      for (const feedEvent of parsed.events) {
        const now = new Date(feedEvent.commenceTime.getTime() - 12 * HOUR);
        const result = detectValue(feedEvent, {}, now);
        // One entry per (market, line, selection): a line market's outcome at each of its points.
        const keyOf = (market: string, selection: string, line: number | null) => `${market} ${selection} ${line}`;
        const names = [...result.candidates, ...result.rejected].map((c) => keyOf(c.market, c.selection, c.line));
        expect(new Set(names).size).toBe(names.length);
        const priced = new Set(feedEvent.bookmakers.flatMap((b) => b.markets.flatMap((m) => m.outcomes.map((o) => keyOf(m.key, o.name, o.point ?? null)))));
        expect(new Set(names)).toEqual(priced);
      }
    }
  });
});

describe('confidenceScore', () => {
  const maxAge = DEFAULT_DETECTION_OPTIONS.referenceMaxAgeSeconds;
  const score = (inputs: ConfidenceInputs) => confidenceScore(inputs, maxAge);
  /** A clean pick: no reference margin or disagreement, fresh prices, a usual book margin and edge. */
  const clean: ConfidenceInputs = { margin: 0, references: 2, methodDisagreement: 0, referenceAgeSeconds: 0, offeredAgeSeconds: 0, offeredMargin: 0.05, edge: 0.04 };
  const inputs = fc.record({
    margin: fc.double({ min: 0, max: 0.3, noNaN: true }),
    references: fc.integer({ min: 1, max: 4 }),
    methodDisagreement: fc.double({ min: 0, max: 0.2, noNaN: true }),
    referenceAgeSeconds: fc.double({ min: 0, max: 300, noNaN: true }),
    offeredAgeSeconds: fc.double({ min: 0, max: 300, noNaN: true }),
    offeredMargin: fc.option(fc.double({ min: -0.05, max: 0.3, noNaN: true }), { nil: null }),
    edge: fc.double({ min: 0, max: 5, noNaN: true }),
  });

  it('has exact values at the corners and in between', () => {
    expect(score(clean)).toBe(100);
    expect(score({ ...clean, margin: 0.25 })).toBe(0);
    expect(score({ ...clean, methodDisagreement: 0.1 })).toBe(0);
    expect(score({ ...clean, referenceAgeSeconds: 300 })).toBe(50);
    expect(score({ ...clean, offeredAgeSeconds: 300 })).toBe(50);
    // 100 x (1 - 0.025 / 0.25) x (1 - 0.02 / 0.1) x (1 - 0.5 x 150 / 300) = 100 x 0.9 x 0.8 x 0.75 = 54
    expect(score({ ...clean, margin: 0.025, methodDisagreement: 0.02, referenceAgeSeconds: 150 })).toBe(54);
    // Book margin: 1 on [0.02, 0.12]; 0.01 below is 1 - 0.01 / 0.04 = 0.75; 0.065 above is 1 - 0.065 / 0.13 = 0.5.
    expect(score({ ...clean, offeredMargin: 0.02 })).toBe(100);
    expect(score({ ...clean, offeredMargin: 0.12 })).toBe(100);
    expect(score({ ...clean, offeredMargin: 0.01 })).toBe(75);
    expect(score({ ...clean, offeredMargin: 0.185 })).toBe(50);
    expect(score({ ...clean, offeredMargin: -0.02 })).toBe(0);
    expect(score({ ...clean, offeredMargin: null })).toBe(100);
    // Edge: 1 up to 5 %, then 1 / (1 + (edge - 0.05) / 0.2): 25 % -> 0.5, 45 % -> 1/3.
    expect(score({ ...clean, edge: 0.05 })).toBe(100);
    expect(score({ ...clean, edge: 0.25 })).toBe(50);
    expect(score({ ...clean, edge: 0.45 })).toBe(33);
    // One reference alone: x 0.85.
    expect(score({ ...clean, references: 1 })).toBe(85);
    expect(score({ ...clean, references: 3 })).toBe(100);
    expect(score({ margin: 0.5, references: 1, methodDisagreement: 1, referenceAgeSeconds: 10_000, offeredAgeSeconds: 10_000, offeredMargin: 1, edge: 100 })).toBe(0);
  });

  it('is an integer from 0 to 100', () => {
    fc.assert(fc.property(inputs, (i) => {
      const value = score(i);
      return Number.isInteger(value) && value >= 0 && value <= 100;
    }));
  });

  // One property per input: raising it, the others fixed, never raises the score.
  const monotone = (field: 'margin' | 'methodDisagreement' | 'referenceAgeSeconds' | 'offeredAgeSeconds' | 'edge', bound: number) =>
    fc.assert(
      fc.property(inputs, fc.double({ min: 0, max: bound, noNaN: true }), (i, extra) => score(i) >= score({ ...i, [field]: i[field] + extra })),
    );
  it('falls as the reference margin grows', () => {
    monotone('margin', 0.3);
    expect(score({ ...clean, margin: 0.02 })).toBeGreaterThan(score({ ...clean, margin: 0.08 }));
  });
  it('falls when only one reference supports the price', () => {
    fc.assert(fc.property(inputs, (i) => score({ ...i, references: 1 }) <= score({ ...i, references: 2 })));
    // Strictly wherever the factor's 15 % is more than the rounding can hide: from an unrounded
    // score of 7.5 the difference is at least 1.125 before rounding, so at least 1 after it (below
    // that, 4.4 and 3.74 both round to 4: a counterexample fast-check found).
    fc.assert(fc.property(inputs, (i) => score({ ...i, references: 2 }) < 8 || score({ ...i, references: 1 }) < score({ ...i, references: 2 })));
    expect(score({ ...clean, margin: 0.2385 })).toBe(5); // 100 x (1 - 0.2385 / 0.25) = 4.6 with two references
    expect(score({ ...clean, margin: 0.2385, references: 1 })).toBe(4);
  });
  it('falls as the devig methods disagree more', () => {
    monotone('methodDisagreement', 0.2);
    expect(score({ ...clean, methodDisagreement: 0.01 })).toBeGreaterThan(score({ ...clean, methodDisagreement: 0.05 }));
  });
  it('falls as the reference price ages', () => {
    monotone('referenceAgeSeconds', 300);
    expect(score({ ...clean, referenceAgeSeconds: 10 })).toBeGreaterThan(score({ ...clean, referenceAgeSeconds: 250 }));
  });
  it('falls as the offered price ages', () => {
    monotone('offeredAgeSeconds', 300);
    expect(score({ ...clean, offeredAgeSeconds: 10 })).toBeGreaterThan(score({ ...clean, offeredAgeSeconds: 250 }));
  });
  it("falls as the offering book's margin leaves [0.02, 0.12], either way", () => {
    fc.assert(
      fc.property(inputs, fc.double({ min: 0.02, max: 0.12, noNaN: true }), fc.double({ min: 0, max: 0.3, noNaN: true }), (i, inside, away) => {
        const at = (m: number) => score({ ...i, offeredMargin: m });
        return at(inside) >= at(0.02 - away) && at(inside) >= at(0.12 + away) && at(0.02 - away) >= at(0.02 - away - 0.01) && at(0.12 + away) >= at(0.12 + away + 0.01);
      }),
    );
    expect(score({ ...clean, offeredMargin: 0.05 })).toBeGreaterThan(score({ ...clean, offeredMargin: 0.005 }));
    expect(score({ ...clean, offeredMargin: 0.05 })).toBeGreaterThan(score({ ...clean, offeredMargin: 0.16 }));
  });
  it('falls as the edge grows past what markets usually allow: at 50 % at most half of the same pick at 5 %', () => {
    monotone('edge', 5);
    fc.assert(
      fc.property(inputs, (i) => score({ ...i, edge: 0.5 }) <= score({ ...i, edge: 0.05 }) / 2 + 0.5),
    );
    expect(score({ ...clean, edge: 0.5 })).toBeLessThanOrEqual(score({ ...clean, edge: 0.05 }) / 2);
    // The engine's old score gave a 376 % "edge" and a 5 % one the same 85.
    expect(score({ ...clean, margin: 0.03, edge: 3.76 })).toBeLessThan(score({ ...clean, margin: 0.03, edge: 0.05 }) / 10);
  });

  it('falls in detectValue as the reference ages and as its margin grows', () => {
    const soft = book('tipico', { Arsenal: 1.4, Chelsea: 3.4 });
    fc.assert(
      fc.property(fc.integer({ min: 0, max: 300 }), fc.integer({ min: 0, max: 300 }), (s1, s2) => {
        const [young, old] = s1 <= s2 ? [s1, s2] : [s2, s1];
        const at = (seconds: number) =>
          candidateFor(detectValue(event([pinnacle(seconds), soft]), {}, NOW), 'Chelsea').confidence;
        return at(young) >= at(old);
      }),
      { numRuns: 30 },
    );
    const withK = (k: number) => {
      const [a, c] = powerMarketPrices([0.64, 0.36], k) as [number, number];
      return candidateFor(detectValue(event([book('pinnacle', { Arsenal: a, Chelsea: c }), soft]), {}, NOW), 'Chelsea');
    };
    // Same fair prices, a wider reference margin (larger k): lower confidence.
    expect(withK(1.02).confidenceInputs.margin).toBeLessThan(withK(1.15).confidenceInputs.margin);
    expect(withK(1.02).confidence).toBeGreaterThan(withK(1.15).confidence);
  });
});

describe('analysisText', () => {
  it('says, from the numbers, who priced what, the edges, Kelly and how the methods agree', () => {
    const feedEvent = event([pinnacle(), book('tipico', { Arsenal: 1.4, Chelsea: 3.0 })]);
    const pick = candidateFor(detectValue(feedEvent, {}, NOW), 'Chelsea');
    const text = analysisText(pick, feedEvent);
    expect(text).toContain('Arsenal v Chelsea (EPL)');
    expect(text).toContain('Pinnacle, the reference, prices Chelsea at a no-vig 2.778 (36.0 %)');
    expect(text).toContain('power method');
    expect(text).toContain('Tipico offers 3.00: an edge of 8.0 % before tax and 2.3 % after its 5.3 % tax.');
    const b = 3.0 * 0.947 - 1;
    const kelly = (0.36 * b - 0.64) / b;
    // The default advice: a quarter of full Kelly in percent, at most 2.
    expect(text).toContain(`Full Kelly would stake ${(kelly * 100).toFixed(1)} % of the bankroll; the advised stake is ${Math.min(2, kelly * 25).toFixed(2)} %.`);
    expect(text).toMatch(/The 5 devig methods that accept this market put Chelsea between \d+\.\d % and \d+\.\d %/);
    expect(text).toContain(`Confidence ${pick.confidence} of 100.`);
    expect(text).not.toContain('held for review');
    expect(analysisText(pick, feedEvent)).toBe(text);
  });

  it('names a draw, a method that refuses and a held pick', () => {
    const reference = book('pinnacle', { Arsenal: 1.04, Draw: 12, Chelsea: 200 });
    const soft = book('tipico', { Arsenal: 1.02, Draw: 30, Chelsea: 150 });
    const feedEvent = event([reference, soft]);
    const pick = candidateFor(detectValue(feedEvent, { taxRates: { tipico: 0 }, oddsRange: { min: 1.01, max: 1000 } }, NOW),
      'Draw',
    );
    expect(pick.held).toBe(true);
    const text = analysisText(pick, feedEvent);
    expect(text).toContain('prices a draw at a no-vig');
    expect(text).toContain('The 4 devig methods that accept this market');
    expect(text).toContain('additive refuses it.');
    expect(text).toContain('held for review');
  });
});


describe('referenceObservations (what the engine keeps for the closing line)', () => {
  const options = { references: [{ key: 'pinnacle', weight: 1 }, { key: 'circa', weight: 0.5 }], clockSkewSeconds: 60 };
  it("keeps every configured reference's markets as quoted, with each market's last_update, and no other book's", () => {
    const observed = referenceObservations(event([book('tipico', { Arsenal: 1.4, Chelsea: 3.0 }), pinnacle(45), book('circa', { Arsenal: 1.5, Chelsea: 2.6 }, 20)]), options, NOW);
    expect(observed).toEqual([
      { bookmaker: 'pinnacle', market: 'h2h', line: null, prices: [{ name: 'Arsenal', price: ARSENAL_REF }, { name: 'Chelsea', price: CHELSEA_REF }], updatedAt: secondsAgo(45) },
      { bookmaker: 'circa', market: 'h2h', line: null, prices: [{ name: 'Arsenal', price: 1.5 }, { name: 'Chelsea', price: 2.6 }], updatedAt: secondsAgo(20) },
    ]);
  });

  it('is empty without a reference', () => {
    expect(referenceObservations(event([book('tipico', { Arsenal: 1.4, Chelsea: 3.0 })]), options, NOW)).toEqual([]);
  });

  it('leaves out a market stamped further ahead of our clock than FEED_CLOCK_SKEW_SECONDS', () => {
    expect(referenceObservations(event([pinnacle(-60)]), options, NOW)).toHaveLength(1);
    expect(referenceObservations(event([pinnacle(-61)]), options, NOW)).toEqual([]);
  });
});

describe('bad markets (docs/VALUE_ENGINE.md, "Detection")', () => {
  it('skips a soft market listing an outcome the reference lacks (a 3-way book against a 2-way reference)', () => {
    // Today's bug: an NHL regulation 3-way price compared with the 2-way moneyline looked like a 16-23 % edge.
    const threeWay = book('tipico', { Arsenal: 2.2, Chelsea: 3.6, Draw: 4.1 });
    const result = detectValue(event([pinnacle(), threeWay]), { taxRates: { tipico: 0 } }, NOW);
    expect(result.candidates).toEqual([]);
    expect(result.skippedBooks).toEqual([{ bookmaker: 'tipico', market: 'h2h', line: null, reason: 'outcome_not_in_reference', detail: expect.stringContaining('"Draw"') }]);
    // Its other outcomes are not offers either: Chelsea has no offer at all.
    expect(reasonFor(result, 'Chelsea')).toBe('no_offer');
  });

  it('compares a soft market with a subset of the reference outcomes outcome by outcome', () => {
    const reference = book('pinnacle', { Arsenal: 2.0, Draw: 3.5, Chelsea: 4.0 });
    const twoOutcomes = book('tipico', { Arsenal: 2.0, Chelsea: 4.8 });
    const result = detectValue(event([reference, twoOutcomes]), { taxRates: { tipico: 0 } }, NOW);
    expect(result.skippedBooks).toEqual([]);
    const pick = candidateFor(result, 'Chelsea');
    expect(pick.confidenceInputs.offeredMargin).toBeNull();
  });

  it('skips a soft market with a price above 3 x the reference price of that outcome, and not at exactly 3 x', () => {
    const reference = book('pinnacle', { Arsenal: 2.0, Draw: 3.5, Chelsea: 4.0 });
    const absurd = book('tipico', { Arsenal: 1.9, Draw: 10.6, Chelsea: 4.6 });
    const result = detectValue(event([reference, absurd]), { taxRates: { tipico: 0 } }, NOW);
    expect(result.candidates).toEqual([]);
    expect(result.skippedBooks[0]).toMatchObject({ bookmaker: 'tipico', reason: 'price_beyond_reference_multiple' });
    const atLimit = book('tipico', { Arsenal: 1.35, Draw: 10.5, Chelsea: 4.6 });
    expect(detectValue(event([reference, atLimit]), { taxRates: { tipico: 0 } }, NOW).skippedBooks).toEqual([]);
  });

  it('skips a full soft market whose implied probabilities sum below 1 (a negative margin)', () => {
    const reference = book('pinnacle', { Arsenal: 2.0, Draw: 3.5, Chelsea: 4.0 });
    // 1 / 2.2 + 1 / 3.9 + 1 / 4.6 = 0.929: no book pays out more than it takes.
    const negative = book('tipico', { Arsenal: 2.2, Draw: 3.9, Chelsea: 4.6 });
    const result = detectValue(event([reference, negative]), { taxRates: { tipico: 0 } }, NOW);
    expect(result.candidates).toEqual([]);
    expect(result.skippedBooks[0]).toMatchObject({ bookmaker: 'tipico', reason: 'negative_margin' });
    // A fair book (sum exactly 1) is allowed.
    const fairBook = book('tipico', { Arsenal: 2.0, Draw: 4.0, Chelsea: 4.0 });
    expect(detectValue(event([reference, fairBook]), { taxRates: { tipico: 0 } }, NOW).skippedBooks).toEqual([]);
  });

  it('makes a market stale when its last_update is further ahead than FEED_CLOCK_SKEW_SECONDS, not when within it', () => {
    const soft = book('tipico', { Arsenal: 1.4, Chelsea: 3.4 });
    expect(detectValue(event([pinnacle(-60), soft]), {}, NOW).candidates).toHaveLength(1);
    expect(reasonFor(detectValue(event([pinnacle(-61), soft]), {}, NOW), 'Chelsea')).toBe('reference_stale');
    expect(reasonFor(detectValue(event([pinnacle(), book('tipico', { Arsenal: 1.4, Chelsea: 3.4 }, -61)]), {}, NOW), 'Chelsea')).toBe('offered_stale');
    expect(reasonFor(detectValue(event([pinnacle(-3600), soft]), { clockSkewSeconds: 0 }, NOW), 'Chelsea')).toBe('reference_stale');
  });

  it('publishes the best plausible price and records the too-good one; holds only when no plausible offer exists', () => {
    const reference = book('pinnacle', { Arsenal: 1.5, Draw: 4.2, Chelsea: 3.1 });
    const fair = 1 / devig([1.5, 4.2, 3.1], 'power').probabilities[2]!;
    const suspect = book('bwin', { Arsenal: 1.45, Draw: 4.0, Chelsea: 9.0 });
    const plausible = book('tipico', { Arsenal: 1.45, Draw: 4.0, Chelsea: fair * 1.1 });
    const options = { taxRates: { bwin: 0, tipico: 0 } };
    const both = candidateFor(detectValue(event([reference, suspect, plausible]), options, NOW), 'Chelsea');
    expect(both).toMatchObject({ bookmakerKey: 'tipico', held: false });
    expect(both.price).toBeCloseTo(fair * 1.1, 9);
    expect(both.provenance.excludedOffers).toEqual([{ bookmaker: 'bwin', price: 9.0, reason: 'too_good' }]);
    const alone = candidateFor(detectValue(event([reference, suspect]), options, NOW), 'Chelsea');
    expect(alone).toMatchObject({ bookmakerKey: 'bwin', held: true, price: 9.0 });
    expect(alone.provenance.excludedOffers).toEqual([]);
  });
});
