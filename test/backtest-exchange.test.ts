/**
 * The backtest on this season's layout: the Premier League 2024/25 (football-data.co.uk,
 * test/fixtures/real-season/E0-2024-25.csv: a byte-order mark, Pinnacle and Betfair Exchange
 * back prices on every row, soft books Bet365, Bwin, Betfair's sportsbook, William Hill, 1xBet,
 * 1X2, over/under 2.5 and Asian handicap before and at the close). Every expectation (the picks
 * with the exchange alone as the reference, with Pinnacle alone and the exchange an offer paid net
 * of its commission, with the consensus of both and its disagreement refusal, and the
 * `--calibration` table) is computed here from the file by test/helpers/independent-backtest.ts,
 * which shares no code with src/. Small hand-made files check the layout's columns, blanks and
 * the refusal of a book the files do not carry.
 *
 * Settings: DEVIG_METHOD power, PICK_MIN_EDGE 0.02, PICK_REVIEW_EDGE 0.25, PICK_ODDS_RANGE
 * 1.2-15, REFERENCE_MAX_SPREAD 0.03 (the defaults, spelled out), every market (h2h, totals,
 * spreads), tax 0 on every book that is not an exchange (as the real-season test does: the
 * comparison is about prices, not a jurisdiction's tax), and Betfair Exchange's default 5 %
 * commission on net winnings when it is an offer.
 */
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { backtest, main, parseBacktestArgs } from '../src/cli/backtest.js';
import { footballDataSnapshots, DEFAULT_CSV_OPTIONS } from '../src/domain/football-data.js';
import { matchScores, referenceCalibration } from '../src/domain/reference-calibration.js';
import {
  expectedCalibration,
  expectedLayoutPicks,
  layoutMatches,
  parseCsv,
  type ExpectedLayoutPick,
  type LayoutRules,
} from './helpers/independent-backtest.js';

const FILE = new URL('./fixtures/real-season/E0-2024-25.csv', import.meta.url).pathname;
const OLD_FILE = new URL('./fixtures/real-season/E0-2018-19.csv', import.meta.url).pathname;
const TEXT = readFileSync(FILE, 'utf8');
const MATCHES = layoutMatches(parseCsv(TEXT));
const SOFT_TAX = { pinnacle: 0, bet365: 0, bwin: 0, williamhill: 0, betfair_sb_uk: 0, onexbet: 0 };
const RULES = { minEdge: 0.02, reviewEdge: 0.25, oddsMin: 1.2, oddsMax: 15, maxSpread: 0.03, taxOf: (book: string) => SOFT_TAX[book as keyof typeof SOFT_TAX] ?? Number.NaN };
const FLAGS = [
  '--devig',
  'power',
  '--min-edge',
  String(RULES.minEdge),
  '--review-edge',
  String(RULES.reviewEdge),
  '--odds-range',
  `${RULES.oddsMin}-${RULES.oddsMax}`,
  '--set',
  `REFERENCE_MAX_SPREAD=${RULES.maxSpread}`,
  '--tax-rates',
  JSON.stringify(SOFT_TAX),
];

const capture = (argv: string[]) => {
  const out: string[] = [];
  const err: string[] = [];
  const code = main(argv, { out: (text) => out.push(text), err: (text) => err.push(text) });
  return { code, out: out.join(''), err: err.join('') };
};

type Comparable = Omit<ExpectedLayoutPick, 'edge' | 'publishedPhase' | 'promoted' | 'bestPlausible'>;
const keyOf = (pick: Comparable) => `${pick.home}|${pick.away}|${pick.market}|${pick.selection}|${pick.line}`;
const sorted = (picks: Comparable[]) => [...picks].sort((a, b) => (keyOf(a) < keyOf(b) ? -1 : 1));

/** The engine's picks of the command's replay (the environment left out), in the expectation's shape. */
function enginePicks(references: string, reviewEdge: number): Comparable[] {
  const outcome = backtest(parseBacktestArgs(['--csv', FILE, '--references', references, ...FLAGS, '--review-edge', String(reviewEdge)]), {});
  return sorted(
    outcome.run.picks.map((pick) => ({
      home: pick.homeTeam,
      away: pick.awayTeam,
      market: pick.market as Comparable['market'],
      selection: pick.selection,
      line: pick.line,
      bookmaker: pick.bookmaker,
      odds: pick.odds,
      referenceFairOdds: pick.referenceFairOdds,
      status: pick.status as Comparable['status'],
      holdReasons: pick.holdReasons,
      closingOdds: pick.closingOdds,
      result: pick.result,
    })),
  );
}

function expectedPicks(references: string[], reviewEdge = RULES.reviewEdge): { picks: Comparable[]; raw: ExpectedLayoutPick[] } {
  const rules: LayoutRules = { ...RULES, reviewEdge, references };
  const raw = expectedLayoutPicks(MATCHES, rules);
  return { raw, picks: sorted(raw.map(({ edge: _edge, publishedPhase: _phase, promoted: _promoted, bestPlausible: _plausible, ...pick }) => pick)) };
}

/** What a run exercised, printed beside the counts (a rule nothing exercised is no evidence). */
function summary(raw: ExpectedLayoutPick[]) {
  const count = (predicate: (pick: ExpectedLayoutPick) => boolean) => raw.filter(predicate).length;
  return {
    picks: raw.length,
    published: count((pick) => pick.status === 'settled'),
    tooGood: count((pick) => pick.holdReasons.includes('too_good')),
    oppositeSide: count((pick) => pick.holdReasons.includes('opposite_side')),
    publishedAtClose: count((pick) => pick.publishedPhase === 1),
    promoted: count((pick) => pick.promoted),
    bestPlausible: count((pick) => pick.bestPlausible),
    byMarket: Object.fromEntries(['h2h', 'totals', 'spreads'].map((market) => [market, count((pick) => pick.market === market)])),
    halfResults: count((pick) => pick.result === 'half_won' || pick.result === 'half_lost' || pick.result === 'void'),
  };
}

describe('football-data.co.uk files in the current layout', () => {
  it('reads the byte-order mark and the new book columns; BetVictor as BV, else the older VC; blank cells are no quote', () => {
    const header = '\uFEFFDiv,Date,Time,HomeTeam,AwayTeam,FTHG,FTAG,AHh,BFEH,BFED,BFEA,BFE>2.5,BFE<2.5,BFEAHH,BFEAHA,BFECH,BFECD,BFECA,BFH,BFD,BFA,1XBH,1XBD,1XBA,BFDH,BFDD,BFDA,BMGMH,BMGMD,BMGMA,BVH,BVD,BVA,VCH,VCD,VCA,CLH,CLD,CLA,LBH,LBD,LBA';
    const rows = [
      'E0,16/08/2024,20:00,Man United,Fulham,1,0,-0.75,1.6,4.3,6.2,1.9,2.02,1.95,1.97,1.55,4.4,6.6,1.57,4.2,5.8,1.6,4.33,6.1,1.55,4.2,5.75,1.53,4.2,5.75,1.57,4.2,5.5,1.5,4,6,1.53,4.2,5.5,1.55,4.2,5.5',
      'E0,17/08/2024,12:30,Ipswich,Liverpool,0,2,,,,,,,,,,,,6.2,4.6,1.5,,,,6,4.4,1.5,,,,,,,6,4.4,1.53,,,,,,',
    ];
    const { snapshots, matches, carried, skipped } = footballDataSnapshots(`${header}\n${rows.join('\n')}\n`);
    expect(skipped).toEqual([]);
    expect(matches).toBe(2);
    expect(carried).toEqual({ betvictor: 2, betfair_ex_eu: 1, betfair_sb_uk: 2, onexbet: 1, betfred: 2, betmgm: 1, coral: 1, ladbrokes: 1 });
    type Book = { key: string; title: string; markets: { key: string; outcomes: { name: string; price: number; point?: number }[] }[] };
    const opening = (home: string) => (snapshots.find((snapshot) => snapshot.kind === 'odds' && (snapshot.body[0] as { home_team: string }).home_team === home)!.body[0] as { bookmakers: Book[] }).bookmakers;
    const united = opening('Man United');
    expect(united.map((book) => book.key)).toEqual(['betvictor', 'betfair_ex_eu', 'betfair_sb_uk', 'onexbet', 'betfred', 'betmgm', 'coral', 'ladbrokes']);
    const h2h = (book: Book) => book.markets.find((market) => market.key === 'h2h')!.outcomes.map((o) => o.price);
    // BV first: 1.57 / 5.5 / 4.2 (home, away, draw), not VC's 1.5 / 6 / 4.
    expect(h2h(united[0]!)).toEqual([1.57, 5.5, 4.2]);
    expect(h2h(united.find((book) => book.key === 'betfred')!)).toEqual([1.55, 5.75, 4.2]);
    expect(h2h(united.find((book) => book.key === 'betfair_sb_uk')!)).toEqual([1.57, 5.8, 4.2]);
    const exchange = united.find((book) => book.key === 'betfair_ex_eu')!;
    expect(exchange.title).toBe('Betfair Exchange');
    expect(exchange.markets.map((market) => [market.key, market.outcomes])).toEqual([
      ['h2h', [{ name: 'Man United', price: 1.6 }, { name: 'Fulham', price: 6.2 }, { name: 'Draw', price: 4.3 }]],
      ['totals', [{ name: 'Over', price: 1.9, point: 2.5 }, { name: 'Under', price: 2.02, point: 2.5 }]],
      ['spreads', [{ name: 'Man United', price: 1.95, point: -0.75 }, { name: 'Fulham', price: 1.97, point: 0.75 }]],
    ]);
    // The second row: BV blank, so VC; the exchange, 1xBet, BetMGM, Coral and Ladbrokes blank, so absent.
    const ipswich = opening('Ipswich');
    expect(ipswich.map((book) => book.key)).toEqual(['betvictor', 'betfair_sb_uk', 'betfred']);
    expect(h2h(ipswich[0]!)).toEqual([6, 1.53, 4.4]);
  });

  it('market_max and market_avg stay unread unless named; every other book of the layout is read by default', () => {
    expect(DEFAULT_CSV_OPTIONS.books).toEqual(['pinnacle', 'bet365', 'bwin', 'interwetten', 'williamhill', 'betvictor', 'betfair_ex_eu', 'betfair_sb_uk', 'onexbet', 'betfred', 'betmgm', 'coral', 'ladbrokes']);
  });

  describe('a book the files do not quote', () => {
    let directory: string;
    beforeAll(() => {
      directory = mkdtempSync(path.join(tmpdir(), 'backtest-layout-'));
      // Pinnacle quotes the first match only (blank after, as in this season's files); the exchange both.
      writeFileSync(
        path.join(directory, 'partial.csv'),
        '\uFEFFDiv,Date,Time,HomeTeam,AwayTeam,FTHG,FTAG,PSH,PSD,PSA,BFEH,BFED,BFEA,B365H,B365D,B365A\n' +
          'SP1,10/01/2026,18:00,Sevilla,Celta,1,1,2.1,3.4,3.7,2.12,3.45,3.75,2.2,3.3,3.5\n' +
          'SP1,13/01/2026,20:00,Getafe,Girona,0,0,,,,2.3,3.1,3.6,2.25,3.1,3.5\n',
      );
    });
    afterAll(() => rmSync(directory, { recursive: true, force: true }));

    it('--references naming a book no row quotes exits 2, naming it and the books the files carry', () => {
      const result = capture(['--csv', OLD_FILE, '--references', 'betfair_ex_eu']);
      expect(result.code).toBe(2);
      expect(result.err).toContain('--references: betfair_ex_eu quotes no match of the given files, which carry pinnacle, bet365, bwin, interwetten, williamhill, betvictor');
      expect(result.out).toBe('');
      const weighted = capture(['--csv', OLD_FILE, '--references', 'pinnacle:2,smarkets']);
      expect(weighted.code).toBe(2);
      expect(weighted.err).toContain('--references: smarkets quotes no match');
    });

    it('--books naming a book no row quotes exits 2; a reference left out of --books is named too', () => {
      const betfred = capture(['--csv', FILE, '--books', 'pinnacle,betfred']);
      expect(betfred.code).toBe(2);
      expect(betfred.err).toContain('--books: betfred quotes no match of the given files, which carry pinnacle, bet365, bwin, williamhill, betfair_ex_eu, betfair_sb_uk, onexbet, market_max, market_avg');
      const unread = capture(['--csv', FILE, '--books', 'bet365']);
      expect(unread.code).toBe(2);
      expect(unread.err).toContain('REFERENCE_BOOKMAKERS: pinnacle is in the given files but not among the books read (--books bet365): add it to --books');
    });

    it('a reference some rows quote is fine; the report lists the matches each reference quoted', () => {
      const result = capture(['--csv', path.join(directory, 'partial.csv'), '--references', 'pinnacle,betfair_ex_eu', '--json']);
      expect(result.err).toBe('');
      expect(result.code).toBe(0);
      expect(JSON.parse(result.out).references).toEqual([
        { bookmaker: 'pinnacle', weight: 1, matches: 1 },
        { bookmaker: 'betfair_ex_eu', weight: 1, matches: 2 },
      ]);
      const text = capture(['--csv', path.join(directory, 'partial.csv'), '--references', 'pinnacle,betfair_ex_eu']);
      expect(text.out).toContain('References: pinnacle (weight 1) quoted 1 of 2 matches; betfair_ex_eu (weight 1) quoted 2 of 2 matches\n');
    });
  });
});

describe('the calibration table', () => {
  it('scores a forecast by log loss, Brier and RPS (home, draw, away)', () => {
    // p = 0.5 / 0.3 / 0.2, a draw: -ln 0.3; 0.5^2 + 0.7^2 + 0.2^2; ((0.5 - 0)^2 + (0.8 - 1)^2) / 2.
    const scores = matchScores([0.5, 0.3, 0.2], 1);
    expect(scores.logLoss).toBeCloseTo(1.2039728, 7);
    expect(scores.brier).toBeCloseTo(0.78, 12);
    expect(scores.rps).toBeCloseTo(0.145, 12);
  });

  it('prices an exchange with lay prices by its midpoint under every method', () => {
    // docs/VALUE_ENGINE.md, "Exchanges": back 2.00 / 3.60 / 4.20, lay 2.04 / 3.70 / 4.30 give 0.49291 / 0.27281 / 0.23428.
    const outcomes = [
      { name: 'Arsenal', price: 2.0, lay: 2.04 },
      { name: 'Draw', price: 3.6, lay: 3.7 },
      { name: 'Chelsea', price: 4.2, lay: 4.3 },
    ];
    const rows = referenceCalibration([{ eventId: 'a', result: 0, closing: new Map([['betfair_ex_eu', outcomes]]) }], ['betfair_ex_eu'], [{ key: 'betfair_ex_eu', weight: 1 }], 0.05);
    expect(rows.map((row) => row.method)).toEqual(['multiplicative', 'additive', 'power', 'shin', 'odds_ratio', 'multiplicative', 'additive', 'power', 'shin', 'odds_ratio']);
    for (const row of rows) expect(row.logLoss).toBeCloseTo(-Math.log(0.49291), 4);
  });

  it("a book's closing columns, else its columns before the close; a match the method refuses is left out of that row only", () => {
    const directory = mkdtempSync(path.join(tmpdir(), 'backtest-calibration-'));
    try {
      const file = path.join(directory, 'season.csv');
      // Bwin has no closing prices in the first row; in the second its closing margin is above 25 %, which every method refuses.
      writeFileSync(
        file,
        'Div,Date,Time,HomeTeam,AwayTeam,FTHG,FTAG,PSH,PSD,PSA,BWH,BWD,BWA,PSCH,PSCD,PSCA,BWCH,BWCD,BWCA\n' +
          'E0,12/01/2019,15:00,Arsenal,Chelsea,2,1,2.0,3.5,4.5,1.9,3.4,4.2,1.9,3.6,5.0,,,\n' +
          'E0,13/01/2019,15:00,Everton,Fulham,0,0,1.8,3.8,5.0,1.7,3.6,4.8,1.85,3.7,4.5,1.5,2.8,3.5\n',
      );
      const result = capture(['--csv', file, '--calibration', '--json']);
      expect(result.err).toBe('');
      const rows = JSON.parse(result.out).calibration as { reference: string; method: string; matches: number; logLoss: number; brier: number; rps: number }[];
      const multiplicative = (prices: number[]) => prices.map((price) => 1 / price / prices.reduce((sum, x) => sum + 1 / x, 0));
      const bwin = rows.find((row) => row.reference === 'bwin' && row.method === 'multiplicative')!;
      // Only the first match, at Bwin's prices before the close (home 1.9, draw 3.4, away 4.2), a home win.
      const p = multiplicative([1.9, 3.4, 4.2]);
      expect(bwin.matches).toBe(1);
      expect(bwin.logLoss).toBeCloseTo(-Math.log(p[0]!), 6);
      expect(bwin.rps).toBeCloseTo(((p[0]! - 1) ** 2 + (p[0]! + p[1]! - 1) ** 2) / 2, 6);
      // Pinnacle's closing prices: a home win, then a draw.
      const pinnacle = rows.find((row) => row.reference === 'pinnacle' && row.method === 'multiplicative')!;
      const first = multiplicative([1.9, 3.6, 5.0]);
      const second = multiplicative([1.85, 3.7, 4.5]);
      expect(pinnacle.matches).toBe(2);
      expect(pinnacle.logLoss).toBeCloseTo((-Math.log(first[0]!) - Math.log(second[1]!)) / 2, 6);
      expect(pinnacle.brier).toBeCloseTo(((first[0]! - 1) ** 2 + first[1]! ** 2 + first[2]! ** 2 + second[0]! ** 2 + (second[1]! - 1) ** 2 + second[2]! ** 2) / 2, 6);
      expect(rows.find((row) => row.reference === 'consensus' && row.method === 'multiplicative')).toEqual({ ...pinnacle, reference: 'consensus' });
    } finally {
      rmSync(directory, { recursive: true, force: true });
    }
  });
});

describe('the Premier League 2024/25 replayed with the exchange as a reference', () => {
  // Besides the default review edge of 25 % (which no edge of this season reaches), 4 % holds some
  // picks as too good, publishes lower plausible prices instead and promotes a held pick at the close.
  it.each([
    ['betfair_ex_eu', ['betfair_ex_eu'], RULES.reviewEdge],
    ['betfair_ex_eu', ['betfair_ex_eu'], 0.04],
    ['pinnacle', ['pinnacle'], RULES.reviewEdge],
    ['pinnacle,betfair_ex_eu', ['pinnacle', 'betfair_ex_eu'], RULES.reviewEdge],
    ['pinnacle,betfair_ex_eu', ['pinnacle', 'betfair_ex_eu'], 0.04],
  ])('--references %s (%j, review edge %s) makes exactly the picks computed from the file', (flag, references, reviewEdge) => {
    const expected = expectedPicks(references, reviewEdge);
    const engine = enginePicks(flag, reviewEdge);
    console.info(`--references ${flag}, review edge ${reviewEdge}:`, JSON.stringify(summary(expected.raw)));
    expect(expected.picks.length).toBeGreaterThan(50);
    expect(engine).toEqual(expected.picks);
    // A reference is never an offer; an exchange that is not one is (net of its commission).
    for (const reference of references) expect(engine.some((pick) => pick.bookmaker === reference)).toBe(false);
  });

  it('the rules the expectations implement are exercised: holds of both kinds, a publication at the close, line markets, half results, the exchange as an offer', () => {
    const exchangeOnly = summary(expectedPicks(['betfair_ex_eu']).raw);
    const strict = summary(expectedPicks(['betfair_ex_eu'], 0.04).raw);
    expect(strict.tooGood).toBeGreaterThan(0);
    expect(strict.promoted).toBeGreaterThan(0);
    expect(strict.bestPlausible).toBeGreaterThan(0);
    expect(exchangeOnly.oppositeSide).toBeGreaterThan(0);
    expect(exchangeOnly.publishedAtClose).toBeGreaterThan(0);
    expect(exchangeOnly.byMarket.spreads).toBeGreaterThan(0);
    expect(exchangeOnly.halfResults).toBeGreaterThan(0);
    expect(expectedPicks(['pinnacle']).raw.some((pick) => pick.bookmaker === 'betfair_ex_eu')).toBe(true);
    // The disagreement refusal decides picks of the consensus: without it there would be more.
    const both = expectedLayoutPicks(MATCHES, { ...RULES, references: ['pinnacle', 'betfair_ex_eu'] });
    const unrefused = expectedLayoutPicks(MATCHES, { ...RULES, maxSpread: 1, references: ['pinnacle', 'betfair_ex_eu'] });
    expect(unrefused.length).toBeGreaterThan(both.length);
  });

  it('--calibration reports each book and the consensus by every devig method, as computed from the file', () => {
    const result = capture(['--csv', FILE, '--references', 'pinnacle,betfair_ex_eu', ...FLAGS, '--calibration', '--json']);
    expect(result.err).toBe('');
    expect(result.code).toBe(0);
    const rows = JSON.parse(result.out).calibration as { reference: string; method: string; matches: number; logLoss: number; brier: number; rps: number }[];
    const books = ['pinnacle', 'bet365', 'bwin', 'williamhill', 'betfair_ex_eu', 'betfair_sb_uk', 'onexbet'];
    const expected = expectedCalibration(MATCHES, books, ['pinnacle', 'betfair_ex_eu']);
    expect(rows.map((row) => [row.reference, row.method, row.matches])).toEqual(expected.map((row) => [row.reference, row.method, row.matches]));
    rows.forEach((row, index) => {
      const mine = expected[index]!;
      for (const name of ['logLoss', 'brier', 'rps'] as const) {
        // Reported to 6 decimals.
        expect(Math.abs(row[name] - mine[name]), `${row.reference} ${row.method} ${name}`).toBeLessThanOrEqual(0.5e-6 + 1e-9);
      }
    });

    const text = capture(['--csv', FILE, '--references', 'pinnacle,betfair_ex_eu', ...FLAGS, '--calibration']).out;
    const byRps = [...expected].sort((a, b) => a.rps - b.rps);
    const lines = text.split('\n');
    const first = lines.findIndex((line) => line.startsWith('Reference calibration'));
    // The header, then the rows best first.
    expect(lines[first + 2]!.split(/\s+/).slice(0, 2)).toEqual([byRps[0]!.reference, byRps[0]!.method]);
    const most = Math.max(...expected.map((row) => row.matches));
    const best = byRps.find((row) => row.matches === most)!;
    expect(text).toContain(`Best over the most matches (${most}): ${best.reference} by ${best.method} (RPS ${best.rps.toFixed(6)}).`);
  });
});
