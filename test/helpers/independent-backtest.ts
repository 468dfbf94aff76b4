/**
 * An independent reading of a football-data.co.uk file in the current layout (byte-order mark,
 * Pinnacle and Betfair Exchange beside the soft books, 1X2, over/under 2.5 and Asian handicap
 * prices before and at the close) and what the backtest should make of it
 * (test/backtest-exchange.test.ts): the picks of the engine's rules on the backtest's timeline
 * and the calibration table of `--calibration`. Written from docs/VALUE_ENGINE.md ("Backtest",
 * "Devigging", "Detection", "References", "Exchanges", "One side per market", "Closing line and
 * CLV", "Settlement", "Choosing a reference"), never from the engine's code: nothing here imports
 * src/. Used by tests only.
 */
import { parseCsv } from './independent-value.js';

export { parseCsv };

export const DRAW = 'Draw';

/** The books of the layout, in the order the backtest's snapshots list them (ties between equal net prices go to the first). */
export const LAYOUT_BOOKS = [
  { key: 'pinnacle', h2h: ['PS', 'PSC'], lines: ['P', 'PC'] },
  { key: 'bet365', h2h: ['B365', 'B365C'], lines: ['B365', 'B365C'] },
  { key: 'bwin', h2h: ['BW', 'BWC'], lines: ['BW', 'BWC'] },
  { key: 'williamhill', h2h: ['WH', 'WHC'], lines: ['WH', 'WHC'] },
  { key: 'betfair_ex_eu', h2h: ['BFE', 'BFEC'], lines: ['BFE', 'BFEC'] },
  { key: 'betfair_sb_uk', h2h: ['BF', 'BFC'], lines: ['BF', 'BFC'] },
  { key: 'onexbet', h2h: ['1XB', '1XBC'], lines: ['1XB', '1XBC'] },
] as const;

/** Betfair Exchange's base commission on net winnings, which an exchange offer pays. */
export const EXCHANGE_COMMISSION: Readonly<Record<string, number>> = { betfair_ex_eu: 0.05 };

type Phase = 0 | 1; // 0: before the close (polled an hour before kickoff), 1: the close (a minute before)

/** One market as a book quotes it: outcome names in feed order, prices, the selections' own points. */
export interface Quote {
  names: string[];
  prices: number[];
  points: (number | null)[];
}

export interface LayoutMatch {
  /** 1-based data row. */
  row: number;
  home: string;
  away: string;
  homeGoals: number;
  awayGoals: number;
  /** Per phase, per book key: h2h (home, away, Draw), totals at 2.5 (Over, Under), spreads at the phase's home handicap (home, away). */
  quotes: [Map<string, Partial<Record<'h2h' | 'totals' | 'spreads', Quote>>>, Map<string, Partial<Record<'h2h' | 'totals' | 'spreads', Quote>>>];
  /** The home side's handicap of each phase (AHh, AHCh). */
  handicap: [number | null, number | null];
}

function cellPrice(row: Record<string, string>, column: string): number | undefined {
  const text = row[column];
  if (text === undefined || text === '') return undefined;
  const value = Number(text);
  if (!Number.isFinite(value) || value <= 1) throw new Error(`not a decimal price in ${column}: ${text}`);
  return value;
}

/** A quote when every one of its cells is filled; a blank cell means the book did not quote the market. */
function quoteOf(row: Record<string, string>, columns: string[], names: string[], points: (number | null)[]): Quote | undefined {
  const prices = columns.map((column) => cellPrice(row, column));
  if (prices.some((price) => price === undefined)) return undefined;
  return { names, prices: prices as number[], points };
}

export function layoutMatches(rows: Record<string, string>[]): LayoutMatch[] {
  return rows.map((row, index) => {
    const home = row.HomeTeam!;
    const away = row.AwayTeam!;
    const handicap: [number | null, number | null] = [row.AHh ? Number(row.AHh) : null, row.AHCh ? Number(row.AHCh) : null];
    const quotes = ([0, 1] as const).map((phase) => {
      const books = new Map<string, Partial<Record<'h2h' | 'totals' | 'spreads', Quote>>>();
      for (const book of LAYOUT_BOOKS) {
        const h = book.h2h[phase];
        const l = book.lines[phase];
        const markets: Partial<Record<'h2h' | 'totals' | 'spreads', Quote>> = {};
        const h2h = quoteOf(row, [`${h}H`, `${h}A`, `${h}D`], [home, away, DRAW], [null, null, null]);
        if (h2h) markets.h2h = h2h;
        const totals = quoteOf(row, [`${l}>2.5`, `${l}<2.5`], ['Over', 'Under'], [2.5, 2.5]);
        if (totals) markets.totals = totals;
        const line = handicap[phase];
        if (line !== null) {
          const spreads = quoteOf(row, [`${l}AHH`, `${l}AHA`], [home, away], [line, line === 0 ? 0 : -line]);
          if (spreads) markets.spreads = spreads;
        }
        if (Object.keys(markets).length > 0) books.set(book.key, markets);
      }
      return books;
    }) as LayoutMatch['quotes'];
    return { row: index + 1, home, away, homeGoals: Number(row.FTHG), awayGoals: Number(row.FTAG), quotes, handicap };
  });
}

// ---- Devigging (docs/VALUE_ENGINE.md, "Devigging"), written afresh ----

export const METHODS = ['multiplicative', 'additive', 'power', 'shin', 'odds_ratio'] as const;
export type Method = (typeof METHODS)[number];

/** Finds x in [lo, hi] where f (decreasing) crosses 0, to the last representable step. */
function root(f: (x: number) => number, lo: number, hi: number): number {
  let a = lo;
  let b = hi;
  for (let step = 0; step < 300; step += 1) {
    const mid = (a + b) / 2;
    if (mid === a || mid === b) break;
    if (f(mid) > 0) a = mid;
    else b = mid;
  }
  return (a + b) / 2;
}

/**
 * Fair probabilities of one market by one method, or null when the method refuses it: a booksum
 * outside [1 - 1e-9, 1.25], or a probability outside (0, 1).
 */
export function devigBy(method: Method, prices: readonly number[]): number[] | null {
  const q = prices.map((price) => 1 / price);
  const booksum = q.reduce((a, b) => a + b, 0);
  if (booksum < 1 - 1e-9 || booksum > 1.25) return null;
  const n = q.length;
  let p: number[];
  switch (method) {
    case 'multiplicative':
      p = q.map((qi) => qi / booksum);
      break;
    case 'additive':
      p = q.map((qi) => qi - (booksum - 1) / n);
      break;
    case 'power': {
      // sum q^k falls in k; at k = 1 it is the booksum (>= 1), and it falls below 1 for k large enough.
      let hi = 2;
      while (q.reduce((s, qi) => s + qi ** hi, 0) > 1) hi *= 2;
      const k = root((x) => q.reduce((s, qi) => s + qi ** x, 0) - 1, booksum >= 1 ? 1 : 0, hi);
      p = q.map((qi) => qi ** k);
      break;
    }
    case 'shin': {
      // Shin: p_i = (sqrt(z^2 + 4 (1 - z) q_i^2 / S) - z) / (2 (1 - z)); the sum falls in z on [0, 1).
      const at = (z: number) => q.map((qi) => (Math.sqrt(z * z + 4 * (1 - z) * (qi * qi) / booksum) - z) / (2 * (1 - z)));
      const z = booksum >= 1 ? root((x) => at(x).reduce((a, b) => a + b, 0) - 1, 0, 0.999) : root((x) => at(x).reduce((a, b) => a + b, 0) - 1, -1, 0);
      p = at(z);
      break;
    }
    case 'odds_ratio': {
      // p_i = q_i / (c + q_i - c q_i); the sum falls in c.
      const at = (c: number) => q.map((qi) => qi / (c + qi - c * qi));
      let hi = 2;
      while (at(hi).reduce((a, b) => a + b, 0) > 1) hi *= 2;
      const c = root((x) => at(x).reduce((a, b) => a + b, 0) - 1, booksum >= 1 ? 1 : 0, hi);
      p = at(c);
      break;
    }
  }
  if (p.some((pi) => !(pi > 0 && pi < 1))) return null;
  return p;
}

// ---- The picks (docs/VALUE_ENGINE.md, "Detection", "References", "Exchanges", "One side per market") ----

export interface LayoutRules {
  /** The references, in order, each of weight 1. */
  references: string[];
  minEdge: number;
  reviewEdge: number;
  oddsMin: number;
  oddsMax: number;
  /** REFERENCE_MAX_SPREAD. */
  maxSpread: number;
  /** Tax on stakes of a book that is not an exchange (the test sets 0 for every one). */
  taxOf: (book: string) => number;
}

type MarketKey = 'h2h' | 'totals' | 'spreads';

export interface ExpectedLayoutPick {
  home: string;
  away: string;
  market: MarketKey;
  selection: string;
  line: number | null;
  bookmaker: string;
  odds: number;
  /** 1 / consensus probability at the poll that made (or published) it, to 4 decimals. */
  referenceFairOdds: number;
  /** Unrounded post-tax edge at that poll. */
  edge: number;
  status: 'settled' | 'admin_review';
  holdReasons: ('too_good' | 'opposite_side')[];
  /** Published at the close (1) or before it (0); null for a held pick. */
  publishedPhase: Phase | null;
  /** Held before the close, published at it. */
  promoted: boolean;
  /** Published at a lower price than the best qualifying one, which was too good. */
  bestPlausible: boolean;
  /** The close's fair odds (every pick closes at kickoff, a held one too), to 4 decimals; null without a reference quoting its selection at its point. */
  closingOdds: number | null;
  result: 'won' | 'half_won' | 'void' | 'half_lost' | 'lost' | null;
}

interface Candidate {
  market: MarketKey;
  selection: string;
  line: number | null;
  /** The market line: the home side's handicap in spreads, 2.5 in totals, null in h2h. */
  marketLine: number | null;
  bookmaker: string;
  odds: number;
  fairOdds: number;
  edge: number;
  held: boolean;
  bestPlausible: boolean;
}

/** Net payout per unit staked of a winning bet: an exchange pays its winnings net of its commission. */
function netPrice(book: string, price: number, rules: LayoutRules): number {
  const commission = EXCHANGE_COMMISSION[book];
  return commission !== undefined ? 1 + (price - 1) * (1 - commission) : price * (1 - rules.taxOf(book));
}

/** The consensus of the references quoting a market: per reference its power-devigged probabilities (refused ones left out), their mean renormalised. */
function consensusOf(quotes: Quote[], method: Method = 'power'): { names: string[]; own: number[][]; p: number[]; primary: Quote } | null {
  const used: { quote: Quote; p: number[] }[] = [];
  for (const quote of quotes) {
    const p = devigBy(method, quote.prices);
    if (p) used.push({ quote, p });
  }
  if (used.length === 0) return null;
  const names = used[0]!.quote.names;
  const own = used.map(({ quote, p }) => names.map((name) => p[quote.names.indexOf(name)]!));
  const mean = names.map((_, i) => own.reduce((s, probabilities) => s + probabilities[i]!, 0) / own.length);
  const total = mean.reduce((a, b) => a + b, 0);
  return { names, own, p: mean.map((x) => x / total), primary: used[0]!.quote };
}

/** The candidates of one match at one poll, in detection order (markets h2h, totals, spreads; outcomes in feed order). */
function candidatesAt(match: LayoutMatch, phase: Phase, rules: LayoutRules): Candidate[] {
  const books = match.quotes[phase];
  const out: Candidate[] = [];
  for (const market of ['h2h', 'totals', 'spreads'] as const) {
    const refQuotes = rules.references.flatMap((key) => {
      const quote = books.get(key)?.[market];
      return quote ? [quote] : [];
    });
    if (refQuotes.length === 0) continue;
    const consensus = consensusOf(refQuotes);
    if (!consensus) continue;
    // Offers: every book that is not a configured reference, unless its market fails the sanity rules against the first used reference.
    const offers: { book: string; quote: Quote }[] = [];
    for (const book of LAYOUT_BOOKS) {
      if (rules.references.includes(book.key)) continue;
      const quote = books.get(book.key)?.[market];
      if (!quote) continue;
      const beyond = quote.names.some((name, i) => quote.prices[i]! > 3 * consensus.primary.prices[consensus.primary.names.indexOf(name)]!);
      const negative = quote.prices.reduce((s, price) => s + 1 / price, 0) < 1 - 1e-9;
      if (!beyond && !negative) offers.push({ book: book.key, quote });
    }
    consensus.names.forEach((selection, i) => {
      const priced = offers.map(({ book, quote }) => ({ book, price: quote.prices[quote.names.indexOf(selection)]!, point: quote.points[quote.names.indexOf(selection)]! }));
      if (priced.length === 0) return;
      const own = consensus.own.map((probabilities) => probabilities[i]!);
      if (Math.max(...own) - Math.min(...own) > rules.maxSpread) return;
      const p = consensus.p[i]!;
      const ranked = priced
        .map((offer) => ({ ...offer, net: netPrice(offer.book, offer.price, rules), edge: netPrice(offer.book, offer.price, rules) * p - 1 }))
        .sort((a, b) => b.net - a.net);
      const qualifying = ranked.filter((offer) => offer.price >= rules.oddsMin && offer.price <= rules.oddsMax && offer.edge >= rules.minEdge);
      if (qualifying.length === 0) return;
      const plausible = qualifying.find((offer) => offer.edge < rules.reviewEdge);
      const best = plausible ?? qualifying[0]!;
      out.push({
        market,
        selection,
        line: market === 'h2h' ? null : best.point,
        marketLine: market === 'h2h' ? null : market === 'totals' ? 2.5 : match.handicap[phase],
        bookmaker: best.book,
        odds: best.price,
        fairOdds: 1 / p,
        edge: best.edge,
        held: plausible === undefined,
        bestPlausible: plausible !== undefined && plausible !== qualifying[0],
      });
    });
  }
  return out;
}

export const round4 = (value: number): number => Math.round(value * 1e4) / 1e4;

/** A bet on a line (above 0 wins, 0 is a push); a quarter line is half on each neighbouring half and whole line. */
function lineResult(line: number, margin: (line: number) => number): ExpectedLayoutPick['result'] {
  const whole = (m: number) => (m > 0 ? 1 : m < 0 ? -1 : 0);
  if (Number.isInteger(line * 2)) return (['lost', 'void', 'won'] as const)[whole(margin(line)) + 1]!;
  const sum = whole(margin(line - 0.25)) + whole(margin(line + 0.25));
  return (['lost', 'half_lost', 'void', 'half_won', 'won'] as const)[sum + 2]!;
}

function resultOf(match: LayoutMatch, pick: { market: MarketKey; selection: string; line: number | null }): ExpectedLayoutPick['result'] {
  const { homeGoals: h, awayGoals: a } = match;
  if (pick.market === 'h2h') {
    const winner = h > a ? match.home : h < a ? match.away : DRAW;
    return pick.selection === winner ? 'won' : 'lost';
  }
  if (pick.market === 'totals') return lineResult(pick.line!, (line) => (pick.selection === 'Over' ? h + a - line : line - (h + a)));
  const [own, other] = pick.selection === match.home ? [h, a] : [a, h];
  return lineResult(pick.line!, (line) => own + line - other);
}

/**
 * The close of a pick: each reference's last market of the pick's key before kickoff (the one at
 * the close, else the one before it; both within the hour), used when it prices the selection at
 * the pick's own point; their power consensus; null when none does.
 */
function closingOddsOf(match: LayoutMatch, pick: { market: MarketKey; selection: string; line: number | null }, rules: LayoutRules): number | null {
  const quotes = rules.references.flatMap((key) => {
    const last = match.quotes[1].get(key)?.[pick.market] ?? match.quotes[0].get(key)?.[pick.market];
    if (!last) return [];
    const index = last.names.indexOf(pick.selection);
    return index >= 0 && last.points[index] === pick.line ? [last] : [];
  });
  const consensus = quotes.length === 0 ? null : consensusOf(quotes);
  if (!consensus) return null;
  return round4(1 / consensus.p[consensus.names.indexOf(pick.selection)]!);
}

/**
 * The picks of the season on the backtest's timeline: at each of the two polls, each match's
 * candidates, then one side per market: in the order of their post-tax edges (best first, ties
 * in detection order), a candidate whose selection has a pick already only publishes a held,
 * never-published one when it is plausible and no other side of its market was published; any
 * other is a new pick, held as too_good when every qualifying price is too good, and as
 * opposite_side when another side of its market was published (at an earlier poll, or just now).
 */
export function expectedLayoutPicks(matches: readonly LayoutMatch[], rules: LayoutRules): ExpectedLayoutPick[] {
  const picks: ExpectedLayoutPick[] = [];
  for (const match of matches) {
    const own: (ExpectedLayoutPick & { marketLine: number | null; everPublished: boolean })[] = [];
    const marketOf = (c: { market: MarketKey; marketLine: number | null }) => `${c.market} ${c.marketLine}`;
    for (const phase of [0, 1] as const) {
      const shown = new Map<string, string>();
      for (const pick of own) if (pick.everPublished && !shown.has(marketOf(pick))) shown.set(marketOf(pick), pick.selection);
      const candidates = candidatesAt(match, phase, rules)
        .map((candidate, order) => ({ candidate, order }))
        .sort((a, b) => b.candidate.edge - a.candidate.edge || a.order - b.order);
      for (const { candidate } of candidates) {
        const side = shown.get(marketOf(candidate));
        const opposite = side !== undefined && side !== candidate.selection;
        const existing = own.find((pick) => pick.market === candidate.market && pick.selection === candidate.selection && pick.line === candidate.line);
        const fields = { bookmaker: candidate.bookmaker, odds: candidate.odds, referenceFairOdds: round4(candidate.fairOdds), edge: candidate.edge, bestPlausible: candidate.bestPlausible };
        if (existing) {
          if (!candidate.held && existing.status === 'admin_review' && !existing.everPublished && !opposite) {
            Object.assign(existing, fields, { status: 'settled', holdReasons: [], publishedPhase: phase, everPublished: true, promoted: true });
            shown.set(marketOf(candidate), candidate.selection);
          }
          continue;
        }
        const holdReasons = [...(candidate.held ? (['too_good'] as const) : []), ...(opposite ? (['opposite_side'] as const) : [])];
        const published = holdReasons.length === 0;
        own.push({
          home: match.home,
          away: match.away,
          market: candidate.market,
          selection: candidate.selection,
          line: candidate.line,
          marketLine: candidate.marketLine,
          ...fields,
          status: published ? 'settled' : 'admin_review',
          holdReasons,
          publishedPhase: published ? phase : null,
          promoted: false,
          everPublished: published,
          closingOdds: null,
          result: null,
        });
        if (published) shown.set(marketOf(candidate), candidate.selection);
      }
    }
    for (const { marketLine: _line, everPublished: _published, ...pick } of own) {
      // Every pick closes at kickoff, held or not; only a published one settles.
      pick.closingOdds = closingOddsOf(match, pick, rules);
      if (pick.status === 'settled') pick.result = resultOf(match, pick);
      picks.push(pick);
    }
  }
  return picks;
}

// ---- The calibration table (docs/VALUE_ENGINE.md, "Choosing a reference") ----

export interface ExpectedCalibrationRow {
  reference: string;
  method: Method;
  matches: number;
  logLoss: number;
  brier: number;
  rps: number;
}

/**
 * Per book of the file and for the references' consensus, per method: the mean log loss, Brier
 * score and RPS of the closing 1X2 fair probabilities (home, draw, away; a book's closing columns,
 * else its columns before the close) over the matches it prices and the method accepts.
 */
export function expectedCalibration(matches: readonly LayoutMatch[], books: readonly string[], references: readonly string[]): ExpectedCalibrationRow[] {
  const closing = (match: LayoutMatch, book: string): number[] | null => {
    const quote = match.quotes[1].get(book)?.h2h ?? match.quotes[0].get(book)?.h2h;
    // Feed order is home, away, Draw; the scores read home, draw, away.
    return quote ? [quote.prices[0]!, quote.prices[2]!, quote.prices[1]!] : null;
  };
  const rows: ExpectedCalibrationRow[] = [];
  for (const subject of ['consensus', ...books]) {
    const members = subject === 'consensus' ? references : [subject];
    for (const method of METHODS) {
      let n = 0;
      let logLoss = 0;
      let brier = 0;
      let rps = 0;
      for (const match of matches) {
        const fair = members.flatMap((book) => {
          const prices = closing(match, book);
          const p = prices && devigBy(method, prices);
          return p ? [p] : [];
        });
        if (fair.length === 0) continue;
        const mean = [0, 1, 2].map((i) => fair.reduce((s, p) => s + p[i]!, 0) / fair.length);
        const total = mean.reduce((a, b) => a + b, 0);
        const p = mean.map((x) => x / total);
        const result = match.homeGoals > match.awayGoals ? 0 : match.homeGoals === match.awayGoals ? 1 : 2;
        const y = [0, 1, 2].map((i) => (i === result ? 1 : 0));
        n += 1;
        logLoss += -Math.log(p[result]!);
        brier += p.reduce((s, pi, i) => s + (pi - y[i]!) ** 2, 0);
        rps += ((p[0]! - y[0]!) ** 2 + (p[0]! + p[1]! - y[0]! - y[1]!) ** 2) / 2;
      }
      if (n > 0) rows.push({ reference: subject, method, matches: n, logLoss: logLoss / n, brier: brier / n, rps: rps / n });
    }
  }
  return rows;
}
