/**
 * An independent reading of a football-data.co.uk season file and the picks the value engine
 * should make from it (test/integration/real-season.test.ts). Written from the rules in the
 * test's brief and docs/VALUE_ENGINE.md, never from the engine's code: nothing here imports
 * src/domain (devig, value detection, odds, settlement, numbers). Used by tests only.
 */

/** One line per match; the file has no quoted cells (checked), so a split on commas is the whole parser. */
export function parseCsv(text: string): Record<string, string>[] {
  if (text.includes('"')) throw new Error('quoted CSV cells are not supported by this reader');
  const lines = text.split(/\r?\n/).filter((line) => line.length > 0);
  const header = lines[0]!.replace(/^\uFEFF/, '').split(',');
  return lines.slice(1).map((line, index) => {
    const cells = line.split(',');
    if (cells.length !== header.length) throw new Error(`CSV line ${index + 2} has ${cells.length} cells, the header ${header.length}`);
    return Object.fromEntries(header.map((name, i) => [name, cells[i]!.trim()]));
  });
}

/** The soft books, in feed order (ties between equal prices go to the first listed). */
export const SOFT_BOOKS = [
  { key: 'bet365', title: 'Bet365', prefix: 'B365' },
  { key: 'bwin', title: 'Bwin', prefix: 'BW' },
  { key: 'interwetten', title: 'Interwetten', prefix: 'IW' },
  { key: 'williamhill', title: 'William Hill', prefix: 'WH' },
  { key: 'betvictor', title: 'BetVictor', prefix: 'VC' },
] as const;

export const DRAW = 'Draw';
const SIDES = ['H', 'D', 'A'] as const;
type Side = (typeof SIDES)[number];
/** Prices by side; a side the book did not price is absent. */
export type SidePrices = Partial<Record<Side, number>>;

export interface SeasonMatch {
  /** 1-based data row of the CSV. */
  row: number;
  eventId: string;
  /** YYYY-MM-DD from the day-first Date column. */
  date: string;
  /** Synthetic kickoff: the match date at 15:00Z. */
  kickoff: Date;
  home: string;
  away: string;
  homeGoals: number;
  awayGoals: number;
  /** Pinnacle before the close (PSH/PSD/PSA) and at the close (PSCH/PSCD/PSCA). */
  pinnacle: SidePrices;
  pinnacleClose: SidePrices;
  /** Soft books with at least 2 prices, in SOFT_BOOKS order. */
  soft: { key: string; title: string; prices: SidePrices }[];
}

function price(cell: string | undefined): number | undefined {
  if (cell === undefined || cell === '') return undefined;
  const value = Number(cell);
  if (!Number.isFinite(value) || value <= 1) throw new Error(`not a decimal price: ${cell}`);
  return value;
}

function sidePrices(row: Record<string, string>, columns: Record<Side, string>): SidePrices {
  const out: SidePrices = {};
  for (const side of SIDES) {
    const value = price(row[columns[side]]);
    if (value !== undefined) out[side] = value;
  }
  return out;
}

function dayFirstDate(text: string): string {
  const match = /^(\d{1,2})[/-](\d{1,2})[/-](\d{2}|\d{4})$/.exec(text);
  if (!match) throw new Error(`not a day-first date: ${text}`);
  const year = match[3]!.length === 2 ? `20${match[3]}` : match[3]!;
  return `${year}-${match[2]!.padStart(2, '0')}-${match[1]!.padStart(2, '0')}`;
}

function goals(cell: string | undefined): number {
  if (!cell || !/^\d+$/.test(cell)) throw new Error(`not a goal count: ${cell}`);
  return Number(cell);
}

export function seasonMatches(rows: Record<string, string>[], idPrefix: string): SeasonMatch[] {
  return rows.map((row, index) => {
    const date = dayFirstDate(row.Date!);
    const soft = SOFT_BOOKS.map((book) => ({
      key: book.key,
      title: book.title,
      prices: sidePrices(row, { H: `${book.prefix}H`, D: `${book.prefix}D`, A: `${book.prefix}A` }),
    })).filter((book) => Object.keys(book.prices).length >= 2);
    return {
      row: index + 1,
      eventId: `${idPrefix}-${index + 1}`,
      date,
      kickoff: new Date(`${date}T15:00:00Z`),
      home: row.HomeTeam!,
      away: row.AwayTeam!,
      homeGoals: goals(row.FTHG),
      awayGoals: goals(row.FTAG),
      pinnacle: sidePrices(row, { H: 'PSH', D: 'PSD', A: 'PSA' }),
      pinnacleClose: sidePrices(row, { H: 'PSCH', D: 'PSCD', A: 'PSCA' }),
      soft,
    };
  });
}

/** The outcome name the feed (and the engine's `selection`) uses for a side. */
export function outcomeName(match: Pick<SeasonMatch, 'home' | 'away'>, side: Side): string {
  return side === 'H' ? match.home : side === 'A' ? match.away : DRAW;
}

/**
 * Power devig: p_i = (1 / price_i)^k with k found by bisection so that sum p_i = 1 (to 1e-12).
 * sum (1/price)^k falls monotonically in k (every 1/price < 1); at k = 0 it is n > 1.
 */
export function powerDevig(prices: readonly number[]): number[] {
  const implied = prices.map((p) => 1 / p);
  const sumAt = (k: number) => implied.reduce((sum, pi) => sum + pi ** k, 0);
  let lo = 0;
  let hi = 1;
  while (sumAt(hi) > 1) hi *= 2;
  let k = hi;
  for (let step = 0; step < 500; step += 1) {
    k = (lo + hi) / 2;
    const sum = sumAt(k);
    if (Math.abs(sum - 1) <= 1e-12 || k === lo || k === hi) break;
    if (sum > 1) lo = k;
    else hi = k;
  }
  return implied.map((pi) => pi ** k);
}

export const round4 = (value: number): number => Math.round(value * 1e4) / 1e4;

export type Result = 'WON' | 'LOST';

export interface ExpectedPick {
  eventId: string;
  home: string;
  away: string;
  kickoff: Date;
  selection: string;
  bookmaker: string;
  odds: number;
  /** Unrounded post-tax edge (tax 0): odds x p - 1. */
  edge: number;
  referenceFairOdds: number;
  closingOdds: number;
  result: Result;
  /** Flat 1 unit. */
  profit: number;
  clvPct: number;
  /** The best qualifying price was too good (held) but a plausible one existed. */
  bestPlausible: boolean;
}

export interface ExpectedHeld {
  eventId: string;
  selection: string;
  bookmaker: string;
  odds: number;
  edge: number;
  /** too_good: every qualifying price at or above the review edge; opposite_side: another side of the match was published. */
  reason: 'too_good' | 'opposite_side';
}

export interface SanityHit {
  eventId: string;
  bookmaker: string;
  rule: 'over_3x_reference' | 'booksum_below_1';
}

export interface SeasonRules {
  minEdge: number;
  reviewEdge: number;
  oddsMin: number;
  oddsMax: number;
}

export interface SeasonExpectation {
  picks: ExpectedPick[];
  held: ExpectedHeld[];
  sanityHits: SanityHit[];
  /** Selections where the rule "best plausible price" made a visible pick instead of a held one. */
  bestPlausibleCount: number;
}

function resultOf(match: SeasonMatch, side: Side): Result {
  const diff = match.homeGoals - match.awayGoals;
  if (diff === 0) return side === 'D' ? 'WON' : 'LOST';
  if (side === 'D') return 'LOST';
  return (diff > 0) === (side === 'H') ? 'WON' : 'LOST';
}

/** The picks (visible and held) the brief's rules give for the season, with tax 0 on every soft book. */
export function expectedSeason(matches: readonly SeasonMatch[], rules: SeasonRules): SeasonExpectation {
  const out: SeasonExpectation = { picks: [], held: [], sanityHits: [], bestPlausibleCount: 0 };
  for (const match of matches) {
    const ref = match.pinnacle;
    if (ref.H === undefined || ref.D === undefined || ref.A === undefined) continue;
    const fair = powerDevig([ref.H, ref.D, ref.A]);
    const probability: Record<Side, number> = { H: fair[0]!, D: fair[1]!, A: fair[2]! };
    const close = match.pinnacleClose;
    const closeFair =
      close.H !== undefined && close.D !== undefined && close.A !== undefined ? powerDevig([close.H, close.D, close.A]) : null;

    // Sanity: a book that prices any outcome above 3 x Pinnacle's, or lists all three below a booksum of 1, is ignored whole.
    const books = match.soft.filter((book) => {
      const sides = Object.keys(book.prices) as Side[];
      if (sides.some((side) => book.prices[side]! > 3 * ref[side]!)) {
        out.sanityHits.push({ eventId: match.eventId, bookmaker: book.key, rule: 'over_3x_reference' });
        return false;
      }
      if (sides.length === 3 && sides.reduce((sum, side) => sum + 1 / book.prices[side]!, 0) < 1 - 1e-9) {
        out.sanityHits.push({ eventId: match.eventId, bookmaker: book.key, rule: 'booksum_below_1' });
        return false;
      }
      return true;
    });

    // One side per match: of the sides that would be published, the best edge is (the first in
    // H, D, A order on a tie); the others are held for review as opposite sides.
    const publishable: ExpectedPick[] = [];
    for (const side of SIDES) {
      const p = probability[side];
      const qualifying = books
        .filter((book) => book.prices[side] !== undefined)
        .map((book) => ({ bookmaker: book.key, odds: book.prices[side]!, edge: book.prices[side]! * p - 1 }))
        .filter((offer) => offer.odds >= rules.oddsMin && offer.odds <= rules.oddsMax && offer.edge >= rules.minEdge);
      if (qualifying.length === 0) continue;
      // Highest price first; a stable sort keeps the feed order among equal prices.
      const ranked = [...qualifying].sort((a, b) => b.odds - a.odds);
      const best = ranked[0]!;
      const plausible = ranked.find((offer) => offer.edge < rules.reviewEdge);
      const selection = outcomeName(match, side);
      if (!plausible) {
        out.held.push({ eventId: match.eventId, selection, bookmaker: best.bookmaker, odds: best.odds, edge: best.edge, reason: 'too_good' });
        continue;
      }
      const bestPlausible = plausible !== best;
      // Without a closing market the latest fair price before kickoff is the one from before the close.
      const closingOdds = round4(1 / (closeFair ?? fair)[SIDES.indexOf(side)]!);
      const result = resultOf(match, side);
      publishable.push({
        eventId: match.eventId,
        home: match.home,
        away: match.away,
        kickoff: match.kickoff,
        selection,
        bookmaker: plausible.bookmaker,
        odds: plausible.odds,
        edge: plausible.edge,
        referenceFairOdds: round4(1 / p),
        closingOdds,
        result,
        profit: result === 'WON' ? plausible.odds - 1 : -1,
        clvPct: 100 * (plausible.odds / closingOdds - 1),
        bestPlausible,
      });
    }
    const best = publishable.reduce<ExpectedPick | null>((kept, pick) => (kept === null || pick.edge > kept.edge ? pick : kept), null);
    for (const pick of publishable) {
      if (pick === best) {
        out.picks.push(pick);
        if (pick.bestPlausible) out.bestPlausibleCount += 1;
      }
      else out.held.push({ eventId: pick.eventId, selection: pick.selection, bookmaker: pick.bookmaker, odds: pick.odds, edge: pick.edge, reason: 'opposite_side' });
    }
  }
  return out;
}

/** The track record figures of a set of settled picks at flat 1-unit stakes (none void). */
export function trackRecordOf(picks: readonly ExpectedPick[]): { totalSettled: number; roiPct: number; winRate: number; clvAvgPct: number } {
  const n = picks.length;
  const sum = (f: (pick: ExpectedPick) => number) => picks.reduce((total, pick) => total + f(pick), 0);
  return {
    totalSettled: n,
    roiPct: n === 0 ? 0 : (100 * sum((pick) => pick.profit)) / n,
    winRate: n === 0 ? 0 : (100 * picks.filter((pick) => pick.result === 'WON').length) / n,
    clvAvgPct: n === 0 ? 0 : sum((pick) => pick.clvPct) / n,
  };
}
