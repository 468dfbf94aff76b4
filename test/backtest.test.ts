/**
 * The backtest's own parts on hand-made files whose expectations are worked out here with plain
 * arithmetic (proportional devig: each price's 1/odds over their sum): reading the CSV format and
 * its wrong forms, the timeline, one pick per slot, a held pick taking a later plausible offer,
 * the close and the settlement, the command's flags and the saved-v4 directory. The whole-season
 * comparison with the live engine is in test/integration/real-season.test.ts.
 */
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { backtestConfig, main, parseBacktestArgs, snapshotName, UsageError } from '../src/cli/backtest.js';
import { backtestReport, runBacktest } from '../src/domain/backtest.js';
import { clockTime, DEFAULT_CSV_OPTIONS, footballDataSnapshots, pollsOfSnapshots, ukLocalKickoff } from '../src/domain/football-data.js';

const HEADER = 'Div,Date,Time,HomeTeam,AwayTeam,FTHG,FTAG,PSH,PSD,PSA,B365H,B365D,B365A,PSCH,PSCD,PSCA,B365CH,B365CD,B365CA';
/**
 * Match 1: Bet365's home price beats Pinnacle's fair one. Match 2: Bet365's away price is too good
 * (held), then plausible at the close. Every Bet365 market sums above 1 (no arbitrage, which the
 * engine refuses as a negative margin).
 */
const ROWS = [
  'E0,12/01/2019,15:00,Arsenal,Chelsea,2,1,2.0,3.5,4.5,2.2,3.3,3.6,1.9,3.6,5.0,1.95,3.5,4.6',
  'E0,12/01/2019,17.3,Everton,Fulham,0,1,1.8,3.8,5.0,1.55,3.3,9.0,1.85,3.7,4.5,1.8,3.5,4.8',
];
const CSV = `${HEADER}\n${ROWS.join('\n')}\n`;
const SETTINGS = { DEVIG_METHOD: 'multiplicative', BOOKMAKER_TAX_RATES: '{"bet365":0}', PICK_MIN_EDGE: '0.02', PICK_REVIEW_EDGE: '0.25' };
const options = backtestConfig({}, SETTINGS);
const fair = (prices: number[], index: number) => {
  const implied = prices.map((price) => 1 / price);
  return implied.reduce((a, b) => a + b, 0) / implied[index]!;
};
const round4 = (value: number) => Math.round(value * 1e4) / 1e4;

describe('football-data CSV', () => {
  it('reads Time as HH:MM, and the forms a spreadsheet leaves (20, 17.3, 20.15)', () => {
    expect(['15:00', '9:05', '17.3', '20.15', '20', '12.30', '00:00'].map(clockTime)).toEqual(['15:00', '09:05', '17:30', '20:15', '20:00', '12:30', '00:00']);
    expect(['25', '7:5', '17.75', 'abc', '24:00', '-1'].map(clockTime)).toEqual([undefined, undefined, undefined, undefined, undefined, undefined]);
  });

  it('kickoffs are UK local time: GMT in January, BST in April', () => {
    expect(ukLocalKickoff('2019-01-12', '15:00').toISOString()).toBe('2019-01-12T15:00:00.000Z');
    expect(ukLocalKickoff('2019-04-13', '15:00').toISOString()).toBe('2019-04-13T14:00:00.000Z');
    expect(ukLocalKickoff('2019-04-13', null).toISOString()).toBe('2019-04-13T14:00:00.000Z');
  });

  it('puts the opening prices an hour before kickoff, the closing a minute before, the final two and a half hours after', () => {
    const { snapshots, matches, skipped } = footballDataSnapshots(CSV);
    expect(skipped).toEqual([]);
    expect(matches).toBe(2);
    expect(snapshots.map((snapshot) => `${snapshot.at.toISOString()} ${snapshot.kind} ${snapshot.body.length}`)).toEqual([
      '2019-01-12T14:00:00.000Z odds 1',
      '2019-01-12T14:59:00.000Z odds 1',
      '2019-01-12T16:30:00.000Z odds 1',
      '2019-01-12T17:29:00.000Z odds 1',
      '2019-01-12T17:30:00.000Z scores 1',
      '2019-01-12T20:00:00.000Z scores 1',
    ]);
    const opening = snapshots[0]!.body[0] as { bookmakers: { key: string; last_update: string; markets: { outcomes: unknown[] }[] }[] };
    expect(opening.bookmakers.map((book) => book.key)).toEqual(['pinnacle', 'bet365']);
    expect(opening.bookmakers[0]!.last_update).toBe('2019-01-12T14:00:00.000Z');
    expect(opening.bookmakers[0]!.markets[0]!.outcomes).toEqual([
      { name: 'Arsenal', price: 2 },
      { name: 'Chelsea', price: 4.5 },
      { name: 'Draw', price: 3.5 },
    ]);
  });

  it('skips rows it cannot place, with the reason, and keeps the others', () => {
    const bad = [
      'E0,13/01/2019,15:00,Arsenal,,1,1,2,3,4,2,3,4,2,3,4,2,3,4',
      'E0,31/02/2019,15:00,Arsenal,Chelsea,1,1,2,3,4,2,3,4,2,3,4,2,3,4',
      'E0,13/01/2019,25:00,Arsenal,Chelsea,1,1,2,3,4,2,3,4,2,3,4,2,3,4',
      'E0,13/01/2019,15:00,Spurs,Spurs,1,1,2,3,4,2,3,4,2,3,4,2,3,4',
      ROWS[0]!,
      'E0,14/01/2019,15:00,Leeds,Wolves,,,2,3.4,4,2.2,3.3,3.9,2,3.4,4,2,3.4,4',
    ];
    const { matches, skipped, snapshots } = footballDataSnapshots(`${HEADER}\n${ROWS[0]}\n${bad.join('\n')}\n`);
    expect(matches).toBe(2);
    expect(skipped.map((skip) => skip.reason)).toEqual([
      'row 3: needs two different teams (HomeTeam, AwayTeam)',
      'row 4: Date "31/02/2019" is not a day-first date',
      'row 5: Time "25:00" is not a time of day (HH:MM)',
      'row 6: needs two different teams (HomeTeam, AwayTeam)',
      'row 7: the same match appears twice; the first row is kept',
      'row 8: no full-time goals (FTHG, FTAG): its picks stay unsettled',
    ]);
    expect(snapshots.filter((snapshot) => snapshot.kind === 'scores')).toHaveLength(1);
  });

  it('refuses a file it cannot read as the format, without a crash', () => {
    expect(footballDataSnapshots('').skipped).toEqual([{ eventId: null, reason: 'the file is empty' }]);
    expect(footballDataSnapshots('Div,Date,Home,Away\nE0,12/01/2019,A,B\n').skipped).toEqual([{ eventId: null, reason: 'the header has no HomeTeam column' }]);
    expect(footballDataSnapshots(`${HEADER}\n"E0",12/01/2019\n`).skipped[0]!.reason).toBe('quoted CSV cells are not part of the format');
  });

  it('absurd prices go to the live feed parser, which refuses them: no pick comes from them', () => {
    const absurd = `${HEADER}\nE0,12/01/2019,15:00,Arsenal,Chelsea,2,1,2.0,3.5,4.5,0,abc,-2,1.9,3.6,5.0,1e9,3.5,4.6\n`;
    const { polls, skipped } = pollsOfSnapshots(footballDataSnapshots(absurd).snapshots);
    expect(skipped.length).toBeGreaterThanOrEqual(2);
    expect(skipped.every((skip) => skip.reason.includes('price'))).toBe(true);
    expect(runBacktest(polls, options).picks).toEqual([]);
  });
});

describe('the replay', () => {
  const { polls } = pollsOfSnapshots(footballDataSnapshots(CSV).snapshots);
  const run = runBacktest(polls, options);

  it('one pick per selection, at the opening price against the fair price, closed and settled', () => {
    const arsenal = run.picks.find((pick) => pick.selection === 'Arsenal')!;
    expect(run.picks.filter((pick) => pick.homeTeam === 'Arsenal')).toHaveLength(1);
    expect(arsenal).toMatchObject({
      bookmaker: 'bet365',
      odds: 2.2,
      referenceFairOdds: round4(fair([2.0, 4.5, 3.5], 0)),
      closingOdds: round4(fair([1.9, 5.0, 3.6], 0)),
      status: 'settled',
      result: 'won',
      finalScore: { home: 2, away: 1 },
      publishedAt: new Date('2019-01-12T14:00:00.000Z'),
      settledAt: new Date('2019-01-12T17:30:00.000Z'),
    });
  });

  it('a price too good to be true is held; a plausible one at the close publishes the pick at that price', () => {
    // Opening: Fulham at 9.0 against fair ~5.3 (edge > 25 %): held. Closing: 4.8 against fair ~4.6: a plausible pick.
    expect(9.0 / fair([1.8, 5.0, 3.8], 1) - 1).toBeGreaterThan(0.25);
    const fulham = run.picks.find((pick) => pick.selection === 'Fulham')!;
    expect(fulham).toMatchObject({
      odds: 4.8,
      referenceFairOdds: round4(fair([1.85, 4.5, 3.7], 1)),
      status: 'settled',
      result: 'won',
      publishedAt: new Date('2019-01-12T17:29:00.000Z'),
    });
    expect(fulham.closingOdds).toBe(round4(fair([1.85, 4.5, 3.7], 1)));
    expect(run.picks).toHaveLength(2);
  });

  it('the report: the record of the two picks and the picks per market and book', () => {
    const report = backtestReport(run);
    expect(report.trackRecord.overall).toMatchObject({ totalSettled: 2, roiPct: Number(((100 * (1.2 + 3.8)) / 2).toFixed(2)), winRate: 100, longestLosingStreak: 0, maxDrawdownPct: 0 });
    expect(report.perBook).toEqual([{ bookmaker: 'bet365', picks: 2, held: 0, settled: 2, roiPct: 250, clvAvgPct: expect.any(Number) }]);
    expect(report.window).toEqual({ from: '2019-01-12T17:30:00.000Z', to: '2019-01-12T20:00:00.000Z' });
  });

  it('an empty replay reports nulls and zeros, not NaN', () => {
    const report = backtestReport(runBacktest([], options));
    expect(report.trackRecord.overall).toMatchObject({ totalSettled: 0, roiPct: 0, avgOdds: null, pValue: null });
    expect(report.window).toBeNull();
    expect(JSON.stringify(report)).not.toContain('NaN');
  });
});

describe('npm run backtest', () => {
  let directory: string;
  beforeAll(() => {
    directory = mkdtempSync(path.join(tmpdir(), 'backtest-cli-'));
    writeFileSync(path.join(directory, 'season.csv'), CSV);
  });
  afterAll(() => rmSync(directory, { recursive: true, force: true }));

  const capture = (argv: string[], env: NodeJS.ProcessEnv = {}) => {
    const out: string[] = [];
    const err: string[] = [];
    const saved = { ...process.env };
    Object.assign(process.env, env);
    try {
      return { code: main(argv, { out: (text) => out.push(text), err: (text) => err.push(text) }), out: out.join(''), err: err.join('') };
    } finally {
      for (const key of Object.keys(env)) if (!(key in saved)) delete process.env[key];
    }
  };
  const flags = ['--devig', 'multiplicative', '--tax-rates', '{"bet365":0}'];

  it.each([
    [[], 'give either --csv files or one --v4 directory'],
    [['--csv'], '--csv needs at least one file'],
    [['--csv', 'a.csv', '--v4', 'dir'], 'give either --csv files or one --v4 directory'],
    [['--v4'], '--v4 needs a value'],
    [['--csv', 'a.csv', '--books', 'bet365,paddypower'], '--books: unknown book paddypower'],
    [['--csv', 'a.csv', '--min-edge'], '--min-edge needs a value'],
    [['--csv', 'a.csv', '--set', 'NOEQUALS'], '--set needs NAME=VALUE'],
    [['--csv', 'a.csv', '--frobnicate'], 'unknown argument "--frobnicate"'],
  ])('refuses %j with a usage message', (argv, message) => {
    expect(() => parseBacktestArgs(argv)).toThrow(UsageError);
    const result = capture(argv);
    expect(result.code).toBe(2);
    expect(result.err).toContain(message);
    expect(result.err).toContain('Usage: npm run backtest');
  });

  it('a configuration error or a missing file exits 2 with the reason', () => {
    const badEdge = capture(['--csv', path.join(directory, 'season.csv'), '--min-edge', '2']);
    expect(badEdge.code).toBe(2);
    expect(badEdge.err).toContain('PICK_MIN_EDGE');
    const missing = capture(['--csv', path.join(directory, 'nothing.csv')]);
    expect(missing.code).toBe(2);
    expect(missing.err).toContain('ENOENT');
  });

  it('prints the report; --json writes it; the environment sets the engine and flags override it', () => {
    const jsonFile = path.join(directory, 'report.json');
    // A 20 % minimum edge leaves only the held 9.0 (a 77 % edge), which the close cannot promote.
    const result = capture(['--csv', path.join(directory, 'season.csv'), ...flags, '--json', jsonFile], { PICK_MIN_EDGE: '0.2' });
    expect(result.err).toBe('');
    expect(result.code).toBe(0);
    expect(result.out).toContain('Picks: 1 (0 settled, 1 held for review, 0 unsettled)');
    expect(JSON.parse(readFileSync(jsonFile, 'utf8'))).toMatchObject({ picks: 1, held: 1 });
    const overridden = capture(['--csv', path.join(directory, 'season.csv'), ...flags, '--min-edge', '0.02', '--json'], { PICK_MIN_EDGE: '0.2' });
    expect(overridden.code).toBe(0);
    expect(JSON.parse(overridden.out)).toMatchObject({ picks: 2, matches: 2, trackRecord: { overall: { totalSettled: 2 } } });
  });

  it('--v4 replays saved responses, named by their poll time; other files are noted and ignored', () => {
    const v4 = path.join(directory, 'v4');
    rmSync(v4, { recursive: true, force: true });
    mkdirSync(v4);
    for (const snapshot of footballDataSnapshots(CSV, DEFAULT_CSV_OPTIONS).snapshots) {
      writeFileSync(path.join(v4, `${snapshot.at.toISOString().replace(/:/g, '-').replace('.000', '')}.${snapshot.kind}.json`), JSON.stringify(snapshot.body));
    }
    writeFileSync(path.join(v4, 'notes.txt'), 'hello');
    writeFileSync(path.join(v4, '2019-01-12T10-00-00Z.odds.json'), '{not json');
    writeFileSync(path.join(v4, '2019-01-12T10-30-00Z.odds.json'), '{"an":"object"}');
    const fromCsv = capture(['--csv', path.join(directory, 'season.csv'), ...flags, '--json']);
    const fromV4 = capture(['--v4', v4, ...flags, '--json']);
    expect(fromV4.code).toBe(0);
    const csvReport = JSON.parse(fromCsv.out);
    const v4Report = JSON.parse(fromV4.out);
    expect(v4Report.trackRecord).toEqual(csvReport.trackRecord);
    expect(v4Report.notes - csvReport.notes).toBe(3);
    expect(snapshotName('2019-01-12T14-00-00Z.odds.json')).toEqual({ at: new Date('2019-01-12T14:00:00Z'), kind: 'odds' });
    expect(snapshotName('2019-01-12T14:00:00.000Z.scores.json')).toEqual({ at: new Date('2019-01-12T14:00:00Z'), kind: 'scores' });
    expect(snapshotName('2019-13-12T14-00-00Z.odds.json')).toBeNull();
    expect(snapshotName('latest.odds.json')).toBeNull();
  });
});
