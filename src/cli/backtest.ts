/**
 * `npm run backtest -- --csv <file>... | --v4 <dir> [flags]`: how a configuration would have done
 * on real history (docs/VALUE_ENGINE.md, "Backtest"). Replays football-data.co.uk CSV files or a
 * directory of saved v4 odds and scores responses through the live engine's pure rules
 * (src/domain/backtest.ts) with the engine's configuration variables, flags overriding them, and
 * prints the track record with its statistics, picks per market and per book; `--json [file]`
 * writes the report as JSON (to stdout without a file). `--calibration` adds how well each book's
 * closing 1X2 prices, and the references' consensus, foretold the results by each devig method.
 * A reference or book that no match of the input quotes is a usage error naming it.
 */
import { readdirSync, readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { pathToFileURL } from 'node:url';
import { ConfigError, loadConfig } from '../config.js';
import { backtestReport, runBacktest, type BacktestReport, type BacktestRun } from '../domain/backtest.js';
import { CSV_BOOKS, DEFAULT_CSV_OPTIONS, footballDataSnapshots, pollsOfSnapshots, type FeedSnapshot } from '../domain/football-data.js';
import type { FeedSkip } from '../domain/odds-feed.js';
import { bookQuotes, closingMatches, CONSENSUS_REFERENCE, referenceCalibration, type CalibrationRow } from '../domain/reference-calibration.js';
import { significanceSentence } from '../domain/record-statistics.js';

/** Flags that set one engine variable (any other is set with --set NAME=VALUE). */
const VARIABLE_FLAGS: Readonly<Record<string, string>> = Object.freeze({
  '--min-edge': 'PICK_MIN_EDGE',
  '--review-edge': 'PICK_REVIEW_EDGE',
  '--odds-range': 'PICK_ODDS_RANGE',
  '--devig': 'DEVIG_METHOD',
  '--references': 'REFERENCE_BOOKMAKERS',
  '--markets': 'ODDS_FEED_MARKETS',
  '--tax-rates': 'BOOKMAKER_TAX_RATES',
});

export const BACKTEST_USAGE = `Usage: npm run backtest -- (--csv <file>... | --v4 <dir>) [options]
  --csv <file>...        football-data.co.uk CSV files (opening prices 1 h before kickoff, closing 1 min before, the final after)
  --v4 <dir>             saved v4 responses: <time>.odds.json and <time>.scores.json (time as 2019-05-12T13-00-00Z)
  --books <keys>         CSV books to read, comma-separated (${CSV_BOOKS.map((book) => book.key).join(', ')});
                         every real bookmaker by default (market_max and market_avg only when named)
  --min-edge <fraction>  PICK_MIN_EDGE        --review-edge <fraction>  PICK_REVIEW_EDGE
  --odds-range <a-b>     PICK_ODDS_RANGE      --devig <method>          DEVIG_METHOD
  --references <list>    REFERENCE_BOOKMAKERS --markets <list>          ODDS_FEED_MARKETS
  --tax-rates <json>     BOOKMAKER_TAX_RATES  --set NAME=VALUE          any other engine variable
  --json [file]          the report as JSON, to the file (and the text to stdout) or to stdout alone
  --calibration          also score each book's and the references' closing 1X2 prices against the
                         results by every devig method (log loss, Brier, RPS)
The engine's variables in the environment apply too; flags override them. A reference or a book
that no match of the input quotes is refused, naming the books the input carries.`;

export interface BacktestArgs {
  csv: string[];
  v4: string | null;
  books: string[] | null;
  json: { file: string | null } | null;
  calibration: boolean;
  variables: Record<string, string>;
}

export class UsageError extends Error {}

export function parseBacktestArgs(argv: readonly string[]): BacktestArgs {
  const args: BacktestArgs = { csv: [], v4: null, books: null, json: null, calibration: false, variables: {} };
  const valueAfter = (index: number, flag: string) => {
    const value = argv[index + 1];
    if (value === undefined || value.startsWith('--')) throw new UsageError(`${flag} needs a value`);
    return value;
  };
  for (let index = 0; index < argv.length; index += 1) {
    const flag = argv[index]!;
    if (flag === '--csv') {
      while (argv[index + 1] !== undefined && !argv[index + 1]!.startsWith('--')) args.csv.push(argv[++index]!);
      if (args.csv.length === 0) throw new UsageError('--csv needs at least one file');
    } else if (flag === '--v4') {
      args.v4 = valueAfter(index++, flag);
    } else if (flag === '--books') {
      args.books = valueAfter(index++, flag).split(',').map((key) => key.trim()).filter((key) => key !== '');
      const unknown = args.books.filter((key) => !CSV_BOOKS.some((book) => book.key === key));
      if (unknown.length > 0) throw new UsageError(`--books: unknown book ${unknown.join(', ')} (known: ${CSV_BOOKS.map((book) => book.key).join(', ')})`);
    } else if (flag === '--json') {
      const next = argv[index + 1];
      args.json = { file: next !== undefined && !next.startsWith('--') ? argv[++index]! : null };
    } else if (flag === '--calibration') {
      args.calibration = true;
    } else if (flag === '--set') {
      const assignment = valueAfter(index++, flag);
      const equals = assignment.indexOf('=');
      if (equals <= 0) throw new UsageError(`--set needs NAME=VALUE, got "${assignment}"`);
      args.variables[assignment.slice(0, equals)] = assignment.slice(equals + 1);
    } else if (VARIABLE_FLAGS[flag]) {
      args.variables[VARIABLE_FLAGS[flag]] = valueAfter(index++, flag);
    } else {
      throw new UsageError(`unknown argument "${flag}"`);
    }
  }
  if ((args.csv.length > 0) === (args.v4 !== null)) throw new UsageError('give either --csv files or one --v4 directory');
  if (args.books !== null && args.v4 !== null) throw new UsageError('--books applies to --csv files only');
  return args;
}

/** `2019-05-12T13-00-00Z.odds.json` (or with colons, or milliseconds): the poll time and kind. */
export function snapshotName(name: string): { at: Date; kind: FeedSnapshot['kind'] } | null {
  const match = /^(\d{4}-\d{2}-\d{2}T\d{2}[-:]\d{2}[-:]\d{2}(?:\.\d{1,3})?Z)\.(odds|scores)\.json$/.exec(name);
  if (!match) return null;
  const at = new Date(match[1]!.replace(/T(\d{2})-(\d{2})-(\d{2})/, 'T$1:$2:$3'));
  return Number.isNaN(at.getTime()) ? null : { at, kind: match[2] as FeedSnapshot['kind'] };
}

/** The saved responses of a directory; files that are not snapshots or not JSON arrays are skipped with the reason. */
export function readSnapshotDirectory(directory: string): { snapshots: FeedSnapshot[]; skipped: FeedSkip[] } {
  const snapshots: FeedSnapshot[] = [];
  const skipped: FeedSkip[] = [];
  for (const name of readdirSync(directory).sort()) {
    const parsed = snapshotName(name);
    if (!parsed) {
      skipped.push({ eventId: null, reason: `${name}: not named <time>.odds.json or <time>.scores.json; ignored` });
      continue;
    }
    let body: unknown;
    try {
      body = JSON.parse(readFileSync(path.join(directory, name), 'utf8'));
    } catch (error) {
      skipped.push({ eventId: null, reason: `${name}: not JSON (${(error as Error).message}); ignored` });
      continue;
    }
    if (!Array.isArray(body)) {
      skipped.push({ eventId: null, reason: `${name}: a v4 response is a JSON array; ignored` });
      continue;
    }
    snapshots.push({ ...parsed, body });
  }
  return { snapshots: snapshots.sort((a, b) => a.at.getTime() - b.at.getTime()), skipped };
}

/** The engine's configuration from the environment and the flags; the feed and the databases play no part. */
export function backtestConfig(env: NodeJS.ProcessEnv, variables: Record<string, string>) {
  const { ODDS_FEED_URL: _feed, DATABASE_URL: _database, REDIS_URL: _redis, ...rest } = env;
  const config = loadConfig({ ...rest, DEMO_FEED: 'false', DEMO_SEED: 'false', ...variables }, { requireAdminToken: false });
  return {
    detection: config.valueEngine.detection,
    settlement: config.valueEngine.settlement,
    markets: config.valueEngine.markets,
    stakeAdvice: config.stakeAdvice,
  };
}

/** A configured reference and how many matches (events, with --v4) of the input it quoted. */
export interface ReferenceQuotes {
  bookmaker: string;
  weight: number;
  matches: number;
}

export interface BacktestOutcome {
  run: BacktestRun;
  report: BacktestReport;
  matches: number | null;
  skipped: FeedSkip[];
  elapsedMs: number;
  /** Per configured reference, the matches it quoted, out of `events`. */
  references?: { events: number; quoted: ReferenceQuotes[] };
  /** With --calibration. */
  calibration?: CalibrationRow[];
}

/**
 * A reference or a book the input never quotes would make an empty report that says nothing of
 * why: refused, naming it and the books the input does carry.
 */
function checkQuoted(args: BacktestArgs, references: readonly string[], read: ReadonlyMap<string, number>, carried: readonly string[]) {
  const named: [string, readonly string[]][] = [
    ['--books', args.books ?? []],
    [args.variables.REFERENCE_BOOKMAKERS !== undefined ? '--references' : 'REFERENCE_BOOKMAKERS', references],
  ];
  for (const [source, keys] of named) {
    for (const key of keys) {
      if ((read.get(key) ?? 0) > 0) continue;
      const input = args.v4 !== null ? 'the saved responses' : 'the given files';
      if (carried.includes(key)) throw new UsageError(`${source}: ${key} is in ${input} but not among the books read (--books ${args.books?.join(',')}): add it to --books`);
      throw new UsageError(`${source}: ${key} quotes no match of ${input}, which carry ${carried.length === 0 ? 'no bookmaker' : carried.join(', ')}`);
    }
  }
}

export function backtest(args: BacktestArgs, env: NodeJS.ProcessEnv = process.env): BacktestOutcome {
  const started = performance.now();
  const options = backtestConfig(env, args.variables);
  const skipped: FeedSkip[] = [];
  let snapshots: FeedSnapshot[] = [];
  let matches: number | null = null;
  const carried = new Set<string>();
  if (args.v4 !== null) {
    const read = readSnapshotDirectory(args.v4);
    snapshots = read.snapshots;
    skipped.push(...read.skipped);
  } else {
    matches = 0;
    for (const file of args.csv) {
      const csv = footballDataSnapshots(readFileSync(file, 'utf8'), { ...DEFAULT_CSV_OPTIONS, books: args.books ?? DEFAULT_CSV_OPTIONS.books });
      snapshots.push(...csv.snapshots);
      for (const key of Object.keys(csv.carried)) carried.add(key);
      skipped.push(...csv.skipped.map((skip) => ({ ...skip, reason: `${path.basename(file)}: ${skip.reason}` })));
      matches += csv.matches;
    }
  }
  const { polls, skipped: refused } = pollsOfSnapshots(snapshots);
  const quotes = bookQuotes(polls);
  const { references, maxExchangeSpread } = options.detection;
  const carriedBooks = args.v4 !== null ? [...quotes.quoted.keys()] : CSV_BOOKS.map((book) => book.key).filter((key) => carried.has(key));
  checkQuoted(args, references.map((reference) => reference.key), quotes.quoted, carriedBooks);
  const run = runBacktest(polls, options);
  skipped.push(...refused, ...run.skipped);
  const calibration = args.calibration
    ? referenceCalibration(closingMatches(polls, options.settlement), [...quotes.quoted.keys()], references, maxExchangeSpread)
    : undefined;
  return {
    run,
    report: backtestReport(run),
    matches,
    skipped,
    references: { events: quotes.events, quoted: references.map(({ key, weight }) => ({ bookmaker: key, weight, matches: quotes.quoted.get(key) ?? 0 })) },
    ...(calibration ? { calibration } : {}),
    elapsedMs: performance.now() - started,
  };
}

const percent = (value: number | null) => (value === null ? 'n/a' : `${value.toFixed(2)} %`);
const number = (value: number | null, digits = 2) => (value === null ? 'n/a' : value.toFixed(digits));
/** An amount in units of stake, in the record page's words: "+3.50 units", "1.00 unit" (docs/API.md, "Units"). */
export function unitsText(units: number, { signed = false } = {}): string {
  const text = units.toFixed(2);
  const shown = text.replace(/^-(0\.00)$/, '$1');
  return `${signed && units > 0 && shown !== '0.00' ? '+' : ''}${shown} ${Math.abs(units) === 1 ? 'unit' : 'units'}`;
}

function table(header: string[], rows: (string | number)[][]): string {
  const cells = [header, ...rows.map((row) => row.map(String))];
  const widths = header.map((_, column) => Math.max(...cells.map((row) => row[column]!.length)));
  return cells.map((row) => row.map((cell, column) => (column === 0 ? cell.padEnd(widths[column]!) : cell.padStart(widths[column]!))).join('  ')).join('\n');
}

function referencesLine(references: NonNullable<BacktestOutcome['references']>, unit: string): string {
  const each = references.quoted.map((reference) => `${reference.bookmaker}${references.quoted.length > 1 ? ` (weight ${reference.weight})` : ''} quoted ${reference.matches} of ${references.events} ${unit}`);
  return `References: ${each.join('; ')}`;
}

/** The table by RPS, best first, and the best of the rows over the most matches (rows over fewer are scored on other matches). */
function calibrationLines(rows: readonly CalibrationRow[]): string[] {
  const heading = 'Reference calibration (closing 1X2 fair probabilities against the results; lower is better; by RPS):';
  if (rows.length === 0) return [heading, 'no match has both a closing 1X2 market and a result'];
  const sorted = [...rows].sort((a, b) => a.rps - b.rps || a.logLoss - b.logLoss);
  const most = Math.max(...rows.map((row) => row.matches));
  const best = sorted.find((row) => row.matches === most)!;
  return [
    heading,
    table(
      ['reference', 'method', 'matches', 'log loss', 'Brier', 'RPS'],
      sorted.map((row) => [row.reference, row.method, row.matches, row.logLoss.toFixed(6), row.brier.toFixed(6), row.rps.toFixed(6)]),
    ),
    `Best over the most matches (${most}): ${best.reference === CONSENSUS_REFERENCE ? 'the consensus of the references' : best.reference} by ${best.method} (RPS ${best.rps.toFixed(6)}).`,
  ];
}

export function formatBacktest(outcome: BacktestOutcome): string {
  const { report } = outcome;
  const overall = report.trackRecord.overall;
  const lines = [
    `Backtest: ${outcome.matches === null ? `${outcome.run.events} events` : `${outcome.matches} matches`}, ${outcome.run.polls} polls, settled ${report.window ? `${report.window.from.slice(0, 10)} .. ${report.window.to.slice(0, 10)}` : 'none'}`,
    `Picks: ${report.picks} (${overall.totalSettled} settled, ${report.held} held for review, ${report.unsettled} unsettled); ${outcome.skipped.length} feed notes`,
    ...(outcome.references ? [referencesLine(outcome.references, outcome.matches === null ? 'events' : 'matches')] : []),
    '',
    `ROI ${percent(overall.roiPct)} over ${overall.totalSettled} settled picks (95 % interval ${overall.roiCi95 ? `${percent(overall.roiCi95[0])} to ${percent(overall.roiCi95[1])}` : 'n/a'}), win rate ${percent(overall.winRate)}, average odds ${number(overall.avgOdds)}`,
    `t = ${number(overall.tScore)}, p = ${number(overall.pValue, 4)} (one-sided). ${significanceSentence(overall.pValue)}`,
    `CLV: mean ${percent(overall.clvAvgPct)} over ${overall.clvCount} picks, positive on ${percent(overall.clvPositivePct)}; mean edge ${percent(overall.edgeAvgPct)}`,
    `Profit ${unitsText(report.trackRecord.series.at(-1)?.cumulativePnlUnits ?? 0, { signed: true })} at 1 unit a pick; largest drawdown ${unitsText(overall.maxDrawdownUnits)} (fall from a running peak)`,
    `Longest losing run ${overall.longestLosingStreak} ${overall.longestLosingStreak === 1 ? 'pick' : 'picks'}; Brier score ${number(overall.brierScore, 4)}`,
    '',
    'Calibration (won and lost picks by fair probability at publication):',
    table(
      ['probability', 'picks', 'expected %', 'actual %'],
      report.trackRecord.calibration.filter((row) => row.picks > 0).map((row) => [`${row.low.toFixed(1)}-${row.high.toFixed(1)}`, row.picks, number(row.expectedWinRate), number(row.actualWinRate)]),
    ),
    '',
    'Per market:',
    table(['market', 'picks', 'held', 'settled', 'ROI %', 'CLV %'], report.perMarket.map((row) => [row.market, row.picks, row.held, row.settled, number(row.roiPct), number(row.clvAvgPct)])),
    '',
    'Per book:',
    table(['book', 'picks', 'held', 'settled', 'ROI %', 'CLV %'], report.perBook.map((row) => [row.bookmaker, row.picks, row.held, row.settled, number(row.roiPct), number(row.clvAvgPct)])),
    '',
    ...(outcome.calibration ? [...calibrationLines(outcome.calibration), ''] : []),
    `Replayed in ${Math.round(outcome.elapsedMs)} ms.`,
  ];
  return `${lines.join('\n')}\n`;
}

/** The command: exit 0 with a report, 2 for a usage or configuration error. */
export function main(argv: readonly string[], io: { out: (text: string) => void; err: (text: string) => void } = { out: (t) => process.stdout.write(t), err: (t) => process.stderr.write(t) }): number {
  let args: BacktestArgs;
  try {
    args = parseBacktestArgs(argv);
    const outcome = backtest(args);
    const extra = { references: outcome.references?.quoted, ...(outcome.calibration ? { calibration: outcome.calibration } : {}) };
    const json = `${JSON.stringify({ ...outcome.report, ...extra, matches: outcome.matches, notes: outcome.skipped.length, elapsedMs: Math.round(outcome.elapsedMs) }, null, 2)}\n`;
    if (args.json && args.json.file === null) io.out(json);
    else io.out(formatBacktest(outcome));
    if (args.json?.file) writeFileSync(args.json.file, json);
    return 0;
  } catch (error) {
    if (error instanceof UsageError) {
      io.err(`${error.message}\n\n${BACKTEST_USAGE}\n`);
      return 2;
    }
    if (error instanceof ConfigError || (error as NodeJS.ErrnoException).code === 'ENOENT' || (error as NodeJS.ErrnoException).code === 'ENOTDIR') {
      io.err(`${(error as Error).message}\n`);
      return 2;
    }
    throw error;
  }
}

if (process.argv[1] && import.meta.url === pathToFileURL(process.argv[1]).href) process.exitCode = main(process.argv.slice(2));
