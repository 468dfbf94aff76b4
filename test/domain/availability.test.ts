/**
 * Availability rules (docs/API.md, "Availability"): what one poll shows of a pick's own offer
 * (sightOffer) and what the pick's availability becomes (nextAvailability), and the track
 * record's per-pick figures. Every expected number is written out from the fixture prices: the
 * reference prices are built from chosen fair probabilities so that the power devig returns them
 * exactly (price = 1 / p^(1/k) with sum p = 1), and a soft book pays the default 5.3 % tax.
 */
import { describe, expect, it } from 'vitest';
import { availabilityAtPublication, nextAvailability, pickAvailabilityRecord, statusAt, type Availability } from '../../src/domain/availability.js';
import type { OddsBookmaker, OddsEvent, OddsMarket } from '../../src/domain/odds-feed.js';
import { sightOffer, type OfferKey } from '../../src/domain/value-detection.js';

const NOW = new Date('2026-11-24T12:00:00.000Z');
const FRESH = new Date(NOW.getTime() - 30_000);
const MINUTE = 60_000;
const at = (minutes: number) => new Date(NOW.getTime() + minutes * MINUTE);
const HOME = 'Arsenal';
const AWAY = 'Chelsea';
const DRAW = 'Draw';
/** Prices whose power devig is exactly `p` (k = 1.05). */
const priceOf = (p: number) => 1 / p ** (1 / 1.05);
/** Post-tax edge at the default tax: price x 0.947 / fair - 1. */
const edge = (price: number, fair: number, tax = 0.053) => (price * (1 - tax)) / fair - 1;

type Outcomes = [name: string, price: number, point?: number][];
const market = (key: OddsMarket['key'], line: number | null, outcomes: Outcomes): OddsMarket => ({
  key,
  line,
  lastUpdate: null,
  outcomes: outcomes.map(([name, price, point]) => (point === undefined ? { name, price } : { name, price, point })),
});
const h2h = (...outcomes: Outcomes) => market('h2h', null, outcomes);
/** Spreads at the home handicap `home`; the away team's point is its opposite. */
const spreads = (home: number, homePrice: number, awayPrice: number) => market('spreads', home, [[HOME, homePrice, home], [AWAY, awayPrice, 0 - home || 0]]);
const totals = (point: number, over: number, under: number) => market('totals', point, [['Over', over, point], ['Under', under, point]]);
const book = (key: string, markets: OddsMarket[], lastUpdate: Date = FRESH): OddsBookmaker => ({ key, title: key, lastUpdate, markets });

/** Pinnacle: home 0.5, away 0.25, draw 0.25 (the away win fair at 4.0); each side of its lines 0.5 (fair 2.0). */
const PINNACLE_MARKETS = [
  h2h([HOME, priceOf(0.5)], [AWAY, priceOf(0.25)], [DRAW, priceOf(0.25)]),
  spreads(-0.5, priceOf(0.5), priceOf(0.5)),
  totals(2.5, priceOf(0.5), priceOf(0.5)),
];
const pinnacle = (markets: OddsMarket[] = PINNACLE_MARKETS, lastUpdate: Date = FRESH) => book('pinnacle', markets, lastUpdate);

function event(bookmakers: OddsBookmaker[]): OddsEvent {
  return { id: 'm1', sportKey: 'soccer_epl', sportTitle: 'EPL', commenceTime: at(180), homeTeam: HOME, awayTeam: AWAY, bookmakers };
}

const AWAY_WIN: OfferKey = { bookmaker: 'tipico', market: 'h2h', selection: AWAY, line: null };
/** Tipico's h2h with the away win at `away`; home 1.85 and draw 3.75 keep its margin positive. */
const tipico = (away: number) => book('tipico', [h2h([HOME, 1.85], [AWAY, away], [DRAW, 3.75])]);

describe('sightOffer', () => {
  it('prices the offer against the reference consensus with the book tax', () => {
    const sighting = sightOffer(event([pinnacle(), tipico(4.4)]), AWAY_WIN, {}, NOW);
    expect(sighting.kind).toBe('quoted');
    expect(sighting).toMatchObject({ price: 4.4 });
    // 4.4 x 0.947 / 4 - 1 = 4.17 %.
    expect((sighting as { edgePostTax: number }).edgePostTax).toBeCloseTo(edge(4.4, 4), 12);
  });

  it('reads the selection by name, whatever the order of the book and the reference', () => {
    // The away win where the reference has the home win (fair 2.0): first in the book, or last in both.
    const bookReordered = event([pinnacle(), book('tipico', [h2h([AWAY, 4.4], [DRAW, 3.75], [HOME, 1.85])])]);
    const bothReordered = event([
      pinnacle([h2h([DRAW, priceOf(0.25)], [AWAY, priceOf(0.25)], [HOME, priceOf(0.5)])]),
      book('tipico', [h2h([DRAW, 3.75], [HOME, 1.85], [AWAY, 4.4])]),
    ]);
    for (const reordered of [bookReordered, bothReordered]) {
      const sighting = sightOffer(reordered, AWAY_WIN, {}, NOW) as { kind: string; price: number; edgePostTax: number };
      expect(sighting.kind).toBe('quoted');
      expect(sighting.price).toBe(4.4);
      expect(sighting.edgePostTax).toBeCloseTo(edge(4.4, 4), 12);
    }
  });

  it('takes the tax of the book: BOOKMAKER_TAX_RATES, or an exchange commission on net winnings at that price', () => {
    const untaxed = sightOffer(event([pinnacle(), tipico(4.4)]), AWAY_WIN, { taxRates: { tipico: 0 } }, NOW) as { edgePostTax: number };
    expect(untaxed.edgePostTax).toBeCloseTo(4.4 / 4 - 1, 12);
    // Betfair's 5 % on net winnings: 4.4 pays 1 + 3.4 x 0.95 = 4.23 per unit, 4.23 / 4 - 1 = 5.75 %.
    const exchange = book('betfair_ex_eu', [h2h([HOME, 1.9], [AWAY, 4.4], [DRAW, 3.8])]);
    const sighting = sightOffer(event([pinnacle(), exchange]), { ...AWAY_WIN, bookmaker: 'betfair_ex_eu' }, {}, NOW) as { edgePostTax: number };
    expect(sighting.edgePostTax).toBeCloseTo(4.23 / 4 - 1, 12);
  });

  it('is gone when the book, its market or the selection is missing', () => {
    expect(sightOffer(event([pinnacle()]), AWAY_WIN, {}, NOW)).toEqual({ kind: 'gone' });
    expect(sightOffer(event([pinnacle(), book('tipico', [totals(2.5, 2, 1.8)])]), AWAY_WIN, {}, NOW)).toEqual({ kind: 'gone' });
    expect(sightOffer(event([pinnacle(), book('tipico', [h2h([HOME, 1.85], [DRAW, 3.75])])]), AWAY_WIN, {}, NOW)).toEqual({ kind: 'gone' });
  });

  it("reads a spread at the pick's own point, in the market of the home handicap", () => {
    const awayPlusHalf: OfferKey = { bookmaker: 'tipico', market: 'spreads', selection: AWAY, line: 0.5 };
    const homeMinusHalf: OfferKey = { bookmaker: 'tipico', market: 'spreads', selection: HOME, line: -0.5 };
    const quoted = event([pinnacle(), book('tipico', [spreads(-0.5, 1.8, 2.2)])]);
    expect(sightOffer(quoted, awayPlusHalf, {}, NOW)).toMatchObject({ kind: 'quoted', price: 2.2 });
    expect((sightOffer(quoted, awayPlusHalf, {}, NOW) as { edgePostTax: number }).edgePostTax).toBeCloseTo(edge(2.2, 2), 12);
    expect(sightOffer(quoted, homeMinusHalf, {}, NOW)).toMatchObject({ kind: 'quoted', price: 1.8 });
    // Another line only, or the mirrored line (Chelsea at -0.5): gone.
    expect(sightOffer(event([pinnacle(), book('tipico', [spreads(-1.5, 2.6, 1.5)])]), awayPlusHalf, {}, NOW)).toEqual({ kind: 'gone' });
    expect(sightOffer(event([pinnacle(), book('tipico', [spreads(0.5, 1.5, 2.6)])]), awayPlusHalf, {}, NOW)).toEqual({ kind: 'gone' });
  });

  it("reads a total at the pick's own point", () => {
    const over: OfferKey = { bookmaker: 'tipico', market: 'totals', selection: 'Over', line: 2.5 };
    const sighting = sightOffer(event([pinnacle(), book('tipico', [totals(2.5, 2.2, 1.8)])]), over, {}, NOW) as { kind: string; edgePostTax: number };
    expect(sighting.kind).toBe('quoted');
    expect(sighting.edgePostTax).toBeCloseTo(edge(2.2, 2), 12);
    expect(sightOffer(event([pinnacle(), book('tipico', [totals(3, 2.2, 1.8)])]), over, {}, NOW)).toEqual({ kind: 'gone' });
  });

  it('is unpriced (the quote without a fair price) when no fresh reference quotes the market, or the book market is left out', () => {
    const unpriced = { kind: 'unpriced' };
    expect(sightOffer(event([tipico(4.4)]), AWAY_WIN, {}, NOW)).toEqual(unpriced);
    // 301 s old, past REFERENCE_MAX_AGE_SECONDS' 300.
    expect(sightOffer(event([pinnacle(PINNACLE_MARKETS, new Date(NOW.getTime() - 301_000)), tipico(4.4)]), AWAY_WIN, {}, NOW)).toEqual(unpriced);
    // The reference quotes the spread at -0.5 only; the book quotes -1.5, where the pick is.
    const atMinusOneHalf: OfferKey = { bookmaker: 'tipico', market: 'spreads', selection: AWAY, line: 1.5 };
    expect(sightOffer(event([pinnacle(), book('tipico', [spreads(-1.5, 2.6, 1.5)])]), atMinusOneHalf, {}, NOW)).toEqual(unpriced);
    // A negative margin (1/1.85 + 1/5.2 + 1/3.75 = 0.9995) and a price above 3 x the reference's are no market to judge by.
    expect(sightOffer(event([pinnacle(), tipico(5.2)]), AWAY_WIN, {}, NOW)).toEqual(unpriced);
    const beyond = 3 * priceOf(0.25) + 0.01;
    expect(sightOffer(event([pinnacle(), book('tipico', [h2h([HOME, 1.5], [AWAY, beyond], [DRAW, 3])])]), AWAY_WIN, {}, NOW)).toEqual(unpriced);
  });
});

describe('nextAvailability', () => {
  // As stored: 4.6 x 0.947 / 4 - 1 = 8.905 %.
  const published = availabilityAtPublication({ odds: 4.6, referenceFairOdds: 4, taxRate: 0.053 }, NOW);

  it("starts available at publication with the stored price and post-tax edge (percent, 4 decimals), dated by the publication", () => {
    expect(published).toEqual({ status: 'available', oddsNow: 4.6, edgePctNow: 8.905, checkedAt: NOW, since: NOW, bestOdds: 4.6 });
  });

  it('is available from PICK_MIN_EDGE on and moved below it; since moves only with the status', () => {
    const same = nextAvailability(published, { kind: 'quoted', price: 4.7, edgePostTax: edge(4.7, 4) }, 0.02, at(1));
    expect(same).toEqual({ next: { status: 'available', oddsNow: 4.7, edgePctNow: 11.2725, checkedAt: at(1), since: NOW, bestOdds: 4.7 }, changed: false });
    const atMin = nextAvailability(published, { kind: 'quoted', price: 4.4, edgePostTax: 0.02 }, 0.02, at(1));
    expect(atMin.next.status).toBe('available');
    const moved = nextAvailability(same.next, { kind: 'quoted', price: 4.2, edgePostTax: edge(4.2, 4) }, 0.02, at(2));
    expect(moved).toEqual({ next: { status: 'moved', oddsNow: 4.2, edgePctNow: -0.565, checkedAt: at(2), since: at(2), bestOdds: 4.7 }, changed: true });
    const stillMoved = nextAvailability(moved.next, { kind: 'quoted', price: 4.1, edgePostTax: edge(4.1, 4) }, 0.02, at(3));
    expect(stillMoved).toEqual({ next: { status: 'moved', oddsNow: 4.1, edgePctNow: -2.9325, checkedAt: at(3), since: at(2), bestOdds: 4.7 }, changed: false });
  });

  it('is gone without a price or an edge, keeping the best price; gone again keeps since', () => {
    const gone = nextAvailability(published, { kind: 'gone' }, 0.02, at(1));
    expect(gone).toEqual({ next: { status: 'gone', oddsNow: null, edgePctNow: null, checkedAt: at(1), since: at(1), bestOdds: 4.6 }, changed: true });
    expect(nextAvailability(gone.next, { kind: 'gone' }, 0.02, at(2))).toEqual({ next: { ...gone.next, checkedAt: at(2) }, changed: false });
  });

  it('changes nothing, the best price included, on a quote it cannot judge', () => {
    expect(nextAvailability(published, { kind: 'unpriced' }, 0.02, at(1))).toEqual({ next: published, changed: false });
  });

  it('counts the first check of a pick approved by an operator as a change', () => {
    const unchecked: Availability = { status: 'unknown', oddsNow: null, edgePctNow: null, checkedAt: null, since: null, bestOdds: null };
    expect(nextAvailability(unchecked, { kind: 'quoted', price: 4.4, edgePostTax: edge(4.4, 4) }, 0.02, at(1))).toEqual({
      next: { status: 'available', oddsNow: 4.4, edgePctNow: 4.17, checkedAt: at(1), since: at(1), bestOdds: 4.4 },
      changed: true,
    });
    expect(nextAvailability(unchecked, { kind: 'unpriced' }, 0.02, at(1))).toEqual({ next: unchecked, changed: false });
  });
});

describe('the record of one pick', () => {
  it('reads the status 5 and 30 minutes after publication and the minutes until it first left available', () => {
    const changes = [
      { status: 'available' as const, at: NOW },
      { status: 'moved' as const, at: at(12) },
      { status: 'available' as const, at: at(40) },
    ];
    expect(statusAt(changes, at(-1))).toBe('unknown');
    expect(statusAt(changes, at(12))).toBe('moved');
    expect(pickAvailabilityRecord(changes, NOW, at(60))).toEqual({ at5Min: 'available', at30Min: 'moved', minutesAvailable: 12 });
  });

  it('ends at kickoff: a checkpoint after it reads the status at kickoff, and the minutes are censored there', () => {
    const changes = [
      { status: 'available' as const, at: NOW },
      // After kickoff: not counted.
      { status: 'gone' as const, at: at(25) },
    ];
    expect(pickAvailabilityRecord(changes, NOW, at(20))).toEqual({ at5Min: 'available', at30Min: 'available', minutesAvailable: 20 });
  });

  it('has no record without a check', () => {
    expect(pickAvailabilityRecord([], NOW, at(60))).toBeNull();
  });
});
