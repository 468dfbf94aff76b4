/**
 * Several sharp references (docs/VALUE_ENGINE.md, "References"). Expectations are worked by hand
 * with the multiplicative devig, whose fair probability is (1 / price) / Σ(1 / price):
 *   A = [2.00, 2.00] -> 0.5, 0.5 (margin 0)
 *   B = [1.80, 2.20] -> 0.5556 / 1.0101 = 0.55, 0.45 (margin 1.01 %)
 *   C = [1.50, 3.00] -> 0.6667, 0.3333 (margin 0)
 */
import { describe, expect, it } from 'vitest';
import { closingLineOf } from '../../src/domain/closing-line.js';
import type { OddsBookmaker, OddsEvent, OddsMarket } from '../../src/domain/odds-feed.js';
import { consensusByMethod, referenceConsensus, weightedMean } from '../../src/domain/reference-consensus.js';
import { analysisText, detectValue, type DetectionOutcome, type DetectionOptions } from '../../src/domain/value-detection.js';

const NOW = new Date('2026-11-24T10:00:00Z');
const KICKOFF = new Date('2026-11-24T15:00:00Z');
const secondsAgo = (seconds: number, from = NOW) => new Date(from.getTime() - seconds * 1000);
const two = (home: number, away: number) => [
  { name: 'Arsenal', price: home },
  { name: 'Chelsea', price: away },
];
const quote = (bookmaker: string, weight: number, home: number, away: number) => ({ bookmaker, weight, outcomes: two(home, away), updatedAt: NOW });

function h2h(key: string, home: number, away: number, age = 30): OddsBookmaker {
  return { key, title: key.toUpperCase(), lastUpdate: secondsAgo(age), markets: [{ key: 'h2h', line: null, lastUpdate: secondsAgo(age), outcomes: two(home, away) }] };
}
function spread(key: string, homeLine: number, home: number, away: number, age = 30): OddsBookmaker {
  const market: OddsMarket = {
    key: 'spreads',
    line: homeLine,
    lastUpdate: secondsAgo(age),
    outcomes: [
      { name: 'Arsenal', price: home, point: homeLine },
      { name: 'Chelsea', price: away, point: -homeLine },
    ],
  };
  return { key, title: key.toUpperCase(), lastUpdate: secondsAgo(age), markets: [market] };
}
function event(bookmakers: OddsBookmaker[]): OddsEvent {
  return { id: 'evt-r', sportKey: 'soccer_epl', sportTitle: 'EPL', commenceTime: KICKOFF, homeTeam: 'Arsenal', awayTeam: 'Chelsea', bookmakers };
}
const OPTIONS: Partial<DetectionOptions> = {
  devigMethod: 'multiplicative',
  references: [
    { key: 'a', weight: 1 },
    { key: 'b', weight: 0.5 },
  ],
  // No tax anywhere: a reference's price, were it an offer, would beat the soft book's.
  taxRates: { soft: 0, a: 0, b: 0, c: 0 },
  maxReferenceSpread: 0.06,
};
function candidate(outcome: DetectionOutcome, selection: string, line: number | null = null) {
  const found = outcome.candidates.find((c) => c.selection === selection && c.line === line);
  if (!found) throw new Error(`no candidate for ${selection}: ${JSON.stringify(outcome.rejected)}`);
  return found;
}

describe('referenceConsensus', () => {
  it('is the weighted mean of each reference devigged on its own (two references, equal and unequal weights)', () => {
    const equal = referenceConsensus([quote('a', 1, 2.0, 2.0), quote('b', 1, 1.8, 2.2)], 'multiplicative');
    if (!('quotes' in equal)) throw new Error('refused');
    expect(equal.names).toEqual(['Arsenal', 'Chelsea']);
    expect(equal.quotes[1]!.probabilities[0]).toBeCloseTo(0.55, 12);
    expect(equal.probabilities[0]).toBeCloseTo(0.525, 12);
    expect(equal.probabilities[1]).toBeCloseTo(0.475, 12);
    // (1 x 0.5 + 0.5 x 0.55) / 1.5 = 0.516667
    const weighted = referenceConsensus([quote('a', 1, 2.0, 2.0), quote('b', 0.5, 1.8, 2.2)], 'multiplicative');
    if (!('quotes' in weighted)) throw new Error('refused');
    expect(weighted.probabilities[0]).toBeCloseTo(0.775 / 1.5, 12);
    expect(weighted.probabilities[0]! + weighted.probabilities[1]!).toBeCloseTo(1, 15);
  });

  it('gives the consensus by every method too, each the weighted mean of the references it accepts', () => {
    const result = referenceConsensus([quote('a', 1, 2.0, 2.0), { ...quote('b', 1, 2.2, 1.8), outcomes: [...two(1.8, 2.2)].reverse() }], 'multiplicative');
    if (!('quotes' in result)) throw new Error('refused');
    const methods = consensusByMethod(result);
    expect(methods.multiplicative).toEqual(result.probabilities);
    // Additive on B: 1 / 1.8 - 0.0101 / 2 = 0.550505 for Arsenal, whatever order B lists it in; A gives 0.5.
    expect(methods.additive![0]).toBeCloseTo((0.5 + (1 / 1.8 - (1 / 1.8 + 1 / 2.2 - 1) / 2)) / 2, 12);
    expect(methods.power![0]! + methods.power![1]!).toBeCloseTo(1, 12);
  });

  it('takes three references, aligning outcomes listed in another order', () => {
    const c = { bookmaker: 'c', weight: 1, outcomes: [...two(1.5, 3.0)].reverse(), updatedAt: NOW };
    const result = referenceConsensus([quote('a', 1, 2.0, 2.0), quote('b', 1, 1.8, 2.2), c], 'multiplicative');
    if (!('quotes' in result)) throw new Error('refused');
    // (0.5 + 0.55 + 2/3) / 3 = 0.572222
    expect(result.probabilities[0]).toBeCloseTo((0.5 + 0.55 + 2 / 3) / 3, 12);
    expect(result.quotes.map((q) => q.bookmaker)).toEqual(['a', 'b', 'c']);
  });

  it('leaves out a reference the devig refuses or that prices other outcomes, and says why', () => {
    const threeWay = { bookmaker: 'c', weight: 1, outcomes: [...two(2.1, 3.6), { name: 'Draw', price: 3.5 }], updatedAt: NOW };
    const result = referenceConsensus([quote('x', 1, 1.2, 1.3), quote('a', 1, 2.0, 2.0), threeWay], 'multiplicative');
    if (!('quotes' in result)) throw new Error('refused');
    expect(result.quotes.map((q) => q.bookmaker)).toEqual(['a']);
    expect(result.refused.map((r) => [r.bookmaker, r.reason])).toEqual([
      ['x', 'overround_out_of_range'],
      ['c', 'outcomes_differ'],
    ]);
    expect(referenceConsensus([quote('x', 1, 1.2, 1.3)], 'multiplicative')).toEqual({ refused: [expect.objectContaining({ bookmaker: 'x' })] });
  });

  it('renormalises so the market sums to 1', () => {
    expect(weightedMean([{ weight: 1, probabilities: [0.6, 0.5] }])).toEqual([0.6 / 1.1, 0.5 / 1.1]);
  });
});

describe('detectValue with several references', () => {
  it('prices against the weighted consensus, never offers a reference, and records every reference used', () => {
    // Consensus Chelsea = (1 x 0.5 + 0.5 x 0.45) / 1.5 = 0.483333: fair 2.0690. B's 2.20 beats it but is a reference.
    const result = detectValue(event([h2h('a', 2.0, 2.0), h2h('b', 1.8, 2.2), h2h('soft', 1.7, 2.15)]), OPTIONS, NOW);
    const pick = candidate(result, 'Chelsea');
    expect(pick.fairProbability).toBeCloseTo(0.725 / 1.5, 12);
    expect(pick.bookmakerKey).toBe('soft');
    expect(pick.warnings).toEqual([]);
    expect(pick.confidenceInputs.references).toBe(2);
    expect(pick.provenance.referenceBookmaker).toBe('a');
    expect(pick.provenance.references.map((r) => [r.bookmaker, r.weight])).toEqual([
      ['a', 1],
      ['b', 0.5],
    ]);
    expect(pick.provenance.references[1]!.fairProbabilities.Chelsea).toBeCloseTo(0.45, 12);
    expect(pick.provenance.references[1]!.prices).toEqual(two(1.8, 2.2));
    expect(result.candidates.every((c) => c.bookmakerKey === 'soft')).toBe(true);
  });

  it('names every reference, its weight and its margin in the analysis', () => {
    const feedEvent = event([h2h('a', 2.0, 2.0), h2h('b', 1.8, 2.2), h2h('soft', 1.7, 2.15)]);
    const text = analysisText(candidate(detectValue(feedEvent, OPTIONS, NOW), 'Chelsea'), feedEvent);
    // Margins: A 0 %, B 1 / 1.8 + 1 / 2.2 - 1 = 1.0 %; fair 1.5 / 0.725 = 2.069 (48.3 %).
    expect(text).toContain('A and B, the references (weights 1 and 0.5), price Chelsea at a no-vig 2.069 (48.3 %)');
    expect(text).toContain('their margins (0.0 % and 1.0 %)');
  });

  it('uses the fresh reference alone when the other is stale, and warns single_sharp_reference', () => {
    const result = detectValue(event([h2h('a', 2.0, 2.0), h2h('b', 1.8, 2.2, 301), h2h('soft', 1.7, 2.15)]), OPTIONS, NOW);
    const pick = candidate(result, 'Chelsea');
    expect(pick.fairProbability).toBeCloseTo(0.5, 12);
    expect(pick.warnings).toEqual(['single_sharp_reference']);
    expect(pick.provenance.references.map((r) => r.bookmaker)).toEqual(['a']);
    // Both stale: no price at all.
    const stale = detectValue(event([h2h('a', 2.0, 2.0, 400), h2h('b', 1.8, 2.2, 301), h2h('soft', 1.7, 2.15)]), OPTIONS, NOW);
    expect(stale.rejected.map((r) => r.reason)).toEqual(['reference_stale', 'reference_stale']);
  });

  it('prices each point from the references that quote it: one missing the point leaves the other alone there', () => {
    const result = detectValue(
      event([spread('a', -0.5, 2.0, 2.0), spread('b', -0.5, 1.8, 2.2), spread('b2', -0.75, 2.3, 1.7), spread('soft', -0.5, 1.7, 2.15)]),
      { ...OPTIONS, references: [{ key: 'a', weight: 1 }, { key: 'b', weight: 0.5 }] },
      NOW,
    );
    expect(candidate(result, 'Chelsea', 0.5).fairProbability).toBeCloseTo(0.725 / 1.5, 12);
    // A book B quotes a different point: at -0.75 neither reference quotes, so there is no reference.
    expect(result.rejected.filter((r) => r.line === 0.75 || r.line === -0.75).map((r) => r.reason)).toEqual(['no_reference', 'no_reference']);
    const onlyA = detectValue(event([spread('a', -0.5, 2.0, 2.0), spread('b', -0.75, 1.8, 2.2), spread('soft', -0.5, 1.7, 2.15)]), OPTIONS, NOW);
    const pick = candidate(onlyA, 'Chelsea', 0.5);
    expect(pick.fairProbability).toBeCloseTo(0.5, 12);
    expect(pick.warnings).toEqual(['single_sharp_reference']);
  });

  it('makes no pick when the references disagree by more than REFERENCE_MAX_SPREAD, with the numbers', () => {
    // A says 0.5, C says 0.3333 for Chelsea: 0.1667 apart.
    const books = [h2h('a', 2.0, 2.0), h2h('c', 1.5, 3.0), h2h('soft', 1.4, 3.2)];
    const refs = { ...OPTIONS, references: [{ key: 'a', weight: 1 }, { key: 'c', weight: 1 }] };
    const refused = detectValue(event(books), { ...refs, maxReferenceSpread: 0.16 }, NOW);
    expect(refused.candidates).toEqual([]);
    const chelsea = refused.rejected.find((r) => r.selection === 'Chelsea')!;
    expect(chelsea.reason).toBe('references_disagree');
    expect(chelsea.referenceProbabilities!.map((r) => r.bookmaker)).toEqual(['a', 'c']);
    expect(chelsea.referenceProbabilities![0]!.probability).toBeCloseTo(0.5, 12);
    expect(chelsea.referenceProbabilities![1]!.probability).toBeCloseTo(1 / 3, 12);
    // Just above the spread: the consensus prices it (fair p = 0.41667, 3.20 is value).
    const allowed = detectValue(event(books), { ...refs, maxReferenceSpread: 0.17 }, NOW);
    expect(candidate(allowed, 'Chelsea').fairProbability).toBeCloseTo((0.5 + 1 / 3) / 2, 12);
  });

  it('warns wide_reference_market when a reference margin is above REFERENCE_MAX_MARGIN', () => {
    // B2 = [1.70, 2.05]: 1 / 1.7 + 1 / 2.05 - 1 = 7.60 %.
    const books = [h2h('a', 2.0, 2.0), h2h('b', 1.7, 2.05), h2h('soft', 1.7, 2.3)];
    expect(candidate(detectValue(event(books), { ...OPTIONS, maxReferenceMargin: 0.08 }, NOW), 'Chelsea').warnings).toEqual([]);
    expect(candidate(detectValue(event(books), { ...OPTIONS, maxReferenceMargin: 0.07 }, NOW), 'Chelsea').warnings).toEqual(['wide_reference_market']);
    const alone = detectValue(event([h2h('b', 1.7, 2.05), h2h('soft', 1.7, 2.4)]), { ...OPTIONS, maxReferenceMargin: 0.07 }, NOW);
    expect(candidate(alone, 'Chelsea').warnings).toEqual(['single_sharp_reference', 'wide_reference_market']);
  });

  it('skips, with a reason, a reference whose market has other outcomes than the first', () => {
    const threeWay: OddsBookmaker = { ...h2h('b', 2.1, 3.6), markets: [{ key: 'h2h', line: null, lastUpdate: secondsAgo(30), outcomes: [...two(2.1, 3.6), { name: 'Draw', price: 3.5 }] }] };
    const result = detectValue(event([h2h('a', 2.0, 2.0), threeWay, h2h('soft', 1.7, 2.15)]), OPTIONS, NOW);
    expect(result.skippedBooks).toContainEqual(expect.objectContaining({ bookmaker: 'b', reason: 'reference_outcomes_differ' }));
    expect(candidate(result, 'Chelsea').warnings).toEqual(['single_sharp_reference']);
  });
});

describe('closingLineOf', () => {
  const refs = [
    { key: 'a', weight: 1 },
    { key: 'b', weight: 0.5 },
  ];
  const stored = (bookmaker: string, home: number, away: number, secondsBeforeKickoff: number, point?: number) => ({
    bookmaker,
    prices: point === undefined ? two(home, away) : [{ name: 'Arsenal', price: home, point }, { name: 'Chelsea', price: away, point: -point }],
    updatedAt: secondsAgo(secondsBeforeKickoff, KICKOFF),
  });
  const pick = { selection: 'Chelsea', line: null, kickoffAt: KICKOFF };

  it('is the weighted consensus of the references fresh at kickoff', () => {
    const close = closingLineOf(pick, [stored('a', 2.0, 2.0, 60), stored('b', 1.8, 2.2, 30)], refs, 'multiplicative', 600)!;
    expect(close.fairOdds).toBeCloseTo(1.5 / 0.725, 12);
    expect(close.stale).toBe(false);
    expect(close.ageSecondsAtKickoff).toBe(60);
    expect(close.references.map((r) => r.bookmaker)).toEqual(['a', 'b']);
  });

  it('leaves a stale reference out while a fresh one exists; all stale makes a stale close of them all', () => {
    const oneStale = closingLineOf(pick, [stored('a', 2.0, 2.0, 60), stored('b', 1.8, 2.2, 900)], refs, 'multiplicative', 600)!;
    expect(oneStale.fairOdds).toBeCloseTo(2, 12);
    expect(oneStale.stale).toBe(false);
    const allStale = closingLineOf(pick, [stored('a', 2.0, 2.0, 700), stored('b', 1.8, 2.2, 900)], refs, 'multiplicative', 600)!;
    expect(allStale.fairOdds).toBeCloseTo(1.5 / 0.725, 12);
    expect(allStale.stale).toBe(true);
    expect(allStale.ageSecondsAtKickoff).toBe(900);
  });

  it("uses only references that quoted the pick's own point, and configured ones", () => {
    const line = { selection: 'Chelsea', line: 0.5, kickoffAt: KICKOFF };
    const close = closingLineOf(line, [stored('a', 2.0, 2.0, 60, -0.5), stored('b', 1.8, 2.2, 30, -0.75), stored('z', 1.5, 3.0, 10, -0.5)], refs, 'multiplicative', 600)!;
    expect(close.fairOdds).toBeCloseTo(2, 12);
    expect(close.references.map((r) => r.bookmaker)).toEqual(['a']);
    expect(closingLineOf(line, [stored('b', 1.8, 2.2, 30, -0.75)], refs, 'multiplicative', 600)).toBeNull();
    expect(closingLineOf(pick, [], refs, 'multiplicative', 600)).toBeNull();
    // A price stamped at or after kickoff is not a close.
    expect(closingLineOf(pick, [stored('a', 2.0, 2.0, 0)], refs, 'multiplicative', 600)).toBeNull();
  });
});
