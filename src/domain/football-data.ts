/**
 * football-data.co.uk's public CSV (one row per match: teams, final goals, and each book's 1X2,
 * over/under 2.5 and Asian handicap prices, opening and closing) turned into the v4 odds and
 * scores responses the live engine reads, on a timeline around each kickoff (docs/VALUE_ENGINE.md,
 * "Backtest"). The responses then go through the live feed's parser, so a backtest refuses
 * exactly what a live poll would. Pure: text in, snapshots out.
 */
import type { BacktestPoll } from './backtest.js';
import { parseOddsEvents, parseScoreEvents, type FeedSkip } from './odds-feed.js';

/** A poll's v4 response, as the feed would have answered at `at`. */
export interface FeedSnapshot {
  at: Date;
  kind: 'odds' | 'scores';
  body: unknown[];
}

export interface CsvTimeline {
  /** Opening prices: polled this long before kickoff, their last_update this long before the poll. */
  openingBeforeKickoffMs: number;
  openingQuoteAgeMs: number;
  /** Closing prices, the same way. */
  closingBeforeKickoffMs: number;
  closingQuoteAgeMs: number;
  /** The final score: polled this long after kickoff, its last_update this long after kickoff. */
  finalAfterKickoffMs: number;
  finalUpdatedAfterKickoffMs: number;
}

const MINUTE = 60_000;
const HOUR = 60 * MINUTE;

/** Opening prices an hour before kickoff, closing prices a minute before, the final score after the match. */
export const DEFAULT_CSV_TIMELINE: Readonly<CsvTimeline> = Object.freeze({
  openingBeforeKickoffMs: HOUR,
  openingQuoteAgeMs: 0,
  closingBeforeKickoffMs: MINUTE,
  closingQuoteAgeMs: 0,
  finalAfterKickoffMs: 2.5 * HOUR,
  finalUpdatedAfterKickoffMs: 2 * HOUR,
});

type Phase = 'opening' | 'closing';

/**
 * A book's columns: per phase, the prefixes of its 1X2 prices (`<prefix>H`, `D`, `A`) and of its
 * over/under 2.5 and Asian handicap prices (`<prefix>>2.5`, `<prefix>AHH`, ...), in order of
 * preference: a book renamed between layouts has both (BetVictor's `BV`, older files' `VC`), and
 * a row is read at the first prefix whose cells it fills. [] where the format has none.
 */
export interface CsvBook {
  key: string;
  title: string;
  h2h: Record<Phase, readonly string[]>;
  lines: Record<Phase, readonly string[]>;
}

/** A book whose over/under and handicap columns share its 1X2 prefix (`BFE>2.5`, `BFECAHH`, ...). */
const book = (key: string, title: string, prefixes: readonly string[]): CsvBook => {
  const phases = { opening: prefixes, closing: prefixes.map((prefix) => `${prefix}C`) };
  return { key, title, h2h: phases, lines: phases };
};

/**
 * The books of the format, in the order a snapshot lists them (the feed order that breaks ties
 * between equal prices). Keys are The Odds API's. `betfair_ex_eu` is the Betfair Exchange's back
 * prices (no lay prices in the files): a reference devigs them, an offer pays them net of the
 * exchange's commission. `market_max` and `market_avg` are the market's best and average prices
 * across books: nobody can bet at them, so they are read only when asked for (--books). Blank
 * cells are a book that did not quote the match; a market is read only when all its cells are there.
 */
export const CSV_BOOKS: readonly CsvBook[] = Object.freeze([
  { key: 'pinnacle', title: 'Pinnacle', h2h: { opening: ['PS'], closing: ['PSC'] }, lines: { opening: ['P'], closing: ['PC'] } },
  book('bet365', 'Bet365', ['B365']),
  book('bwin', 'Bwin', ['BW']),
  book('interwetten', 'Interwetten', ['IW']),
  book('williamhill', 'William Hill', ['WH']),
  book('betvictor', 'BetVictor', ['BV', 'VC']),
  book('betfair_ex_eu', 'Betfair Exchange', ['BFE']),
  book('betfair_sb_uk', 'Betfair Sportsbook', ['BF']),
  book('onexbet', '1xBet', ['1XB']),
  book('betfred', 'Betfred', ['BFD']),
  book('betmgm', 'BetMGM', ['BMGM']),
  book('coral', 'Coral', ['CL']),
  book('ladbrokes', 'Ladbrokes', ['LB']),
  book('market_max', 'Market best price', ['Max']),
  book('market_avg', 'Market average', ['Avg']),
]);

/** The books read when none are named: every real bookmaker of the format. */
export const DEFAULT_CSV_BOOKS: readonly string[] = Object.freeze(CSV_BOOKS.filter((book) => !book.key.startsWith('market_')).map((book) => book.key));

/** football-data.co.uk's division codes and their v4 sport keys; another code becomes soccer_<code>. */
const DIVISION_SPORT_KEYS: Readonly<Record<string, string>> = Object.freeze({
  E0: 'soccer_epl',
  E1: 'soccer_efl_champ',
  SP1: 'soccer_spain_la_liga',
  D1: 'soccer_germany_bundesliga',
  I1: 'soccer_italy_serie_a',
  F1: 'soccer_france_ligue_one',
  N1: 'soccer_netherlands_eredivisie',
  P1: 'soccer_portugal_primeira_liga',
});

export interface CsvOptions {
  books: readonly string[];
  timeline: CsvTimeline;
  /** The kickoff of a row: by default its Date and Time as UK local time, 15:00 when Time is absent. */
  kickoffOf: (date: string, time: string | null) => Date;
}

/** The UTC instant of a wall-clock time in Europe/London (the file's `Time`). */
export function ukLocalKickoff(date: string, time: string | null): Date {
  const [hours, minutes] = (time ?? '15:00').split(':').map(Number) as [number, number];
  const [year, month, day] = date.split('-').map(Number) as [number, number, number];
  const guess = Date.UTC(year, month - 1, day, hours, minutes);
  const parts = new Intl.DateTimeFormat('en-GB', { timeZone: 'Europe/London', hourCycle: 'h23', year: 'numeric', month: '2-digit', day: '2-digit', hour: '2-digit', minute: '2-digit' }).formatToParts(new Date(guess));
  const part = (type: string) => Number(parts.find((p) => p.type === type)!.value);
  const wall = Date.UTC(part('year'), part('month') - 1, part('day'), part('hour'), part('minute'));
  return new Date(guess - (wall - guess));
}

export const DEFAULT_CSV_OPTIONS: Readonly<CsvOptions> = Object.freeze({ books: DEFAULT_CSV_BOOKS, timeline: DEFAULT_CSV_TIMELINE, kickoffOf: ukLocalKickoff });

/** `10/08/2018`, `10-08-18`: day first; two-digit years are 20xx. */
function isoDate(raw: string): string | null {
  const match = /^(\d{1,2})[/-](\d{1,2})[/-](\d{2}|\d{4})$/.exec(raw.trim());
  if (!match) return null;
  const [, day, month, year] = match as unknown as [string, string, string, string];
  const iso = `${year.length === 2 ? `20${year}` : year}-${month.padStart(2, '0')}-${day.padStart(2, '0')}`;
  const parsed = new Date(`${iso}T00:00:00Z`);
  return Number.isNaN(parsed.getTime()) || parsed.toISOString().slice(0, 10) !== iso ? null : iso;
}

/**
 * `Time` as HH:MM. Copies of the files saved through a spreadsheet carry it as a number: `20`
 * (20:00), `17.3` (17:30), `20.15` (20:15); those read the same way. undefined: not a time.
 */
export function clockTime(raw: string): string | undefined {
  const match = /^(\d{1,2})(?:([:.])(\d{1,2}))?$/.exec(raw.trim());
  if (!match) return undefined;
  const hours = Number(match[1]);
  const digits = match[3] ?? '0';
  // A decimal "17.3" lost the trailing zero of 17:30; a colon keeps its minutes as written.
  const minutes = match[2] === '.' && digits.length === 1 ? Number(digits) * 10 : match[2] === ':' && digits.length === 1 ? Number.NaN : Number(digits);
  if (!(hours <= 23 && minutes <= 59)) return undefined;
  return `${String(hours).padStart(2, '0')}:${String(minutes).padStart(2, '0')}`;
}

const slug = (text: string) => text.toLowerCase().replace(/[^a-z0-9]+/g, '-').replace(/^-|-$/g, '');

export interface CsvSnapshots {
  snapshots: FeedSnapshot[];
  matches: number;
  /**
   * Per book of the format that quotes any complete market of a kept row (opening or closing),
   * read or not (--books): how many matches it quotes, in CSV_BOOKS order.
   */
  carried: Record<string, number>;
  /** Rows left out, with the reason. Prices that are not numbers are left to the feed parser's checks. */
  skipped: FeedSkip[];
}

/**
 * The v4 responses of a season file: per match an odds snapshot at the opening and at the closing
 * time (the books' prices of that phase), and a scores snapshot after the match; matches polled at
 * the same instant share one snapshot. A row without both teams, a readable date or a reused
 * match id is skipped; a row without full-time goals gets no final (its picks stay unsettled).
 */
export function footballDataSnapshots(text: string, options: CsvOptions = DEFAULT_CSV_OPTIONS): CsvSnapshots {
  const lines = text.split(/\r?\n/).filter((line) => line.trim() !== '');
  const skipped: FeedSkip[] = [];
  if (lines.length === 0) return { snapshots: [], matches: 0, carried: {}, skipped: [{ eventId: null, reason: 'the file is empty' }] };
  if (text.includes('"')) return { snapshots: [], matches: 0, carried: {}, skipped: [{ eventId: null, reason: 'quoted CSV cells are not part of the format' }] };
  const header = lines[0]!.replace(/^\uFEFF/, '').split(',').map((name) => name.trim());
  const column = new Map(header.map((name, index) => [name, index]));
  for (const required of ['Date', 'HomeTeam', 'AwayTeam']) {
    if (!column.has(required)) return { snapshots: [], matches: 0, carried: {}, skipped: [{ eventId: null, reason: `the header has no ${required} column` }] };
  }
  const { timeline } = options;
  const quoted = new Map<string, number>();
  const snapshots = new Map<string, FeedSnapshot>();
  const add = (at: Date, kind: FeedSnapshot['kind'], item: unknown) => {
    const key = `${at.toISOString()} ${kind}`;
    const snapshot = snapshots.get(key) ?? { at, kind, body: [] };
    snapshots.set(key, snapshot);
    snapshot.body.push(item);
  };
  const seen = new Set<string>();
  let matches = 0;

  lines.slice(1).forEach((line, index) => {
    const row = line.split(',');
    const cell = (name: string) => {
      const at = column.get(name);
      return at === undefined ? '' : (row[at] ?? '').trim();
    };
    const where = `row ${index + 2}`;
    const home = cell('HomeTeam');
    const away = cell('AwayTeam');
    const date = isoDate(cell('Date'));
    if (home === '' || away === '' || home === away) return void skipped.push({ eventId: null, reason: `${where}: needs two different teams (HomeTeam, AwayTeam)` });
    if (date === null) return void skipped.push({ eventId: null, reason: `${where}: Date "${cell('Date')}" is not a day-first date` });
    const time = cell('Time') === '' ? null : clockTime(cell('Time'));
    if (time === undefined) return void skipped.push({ eventId: null, reason: `${where}: Time "${cell('Time')}" is not a time of day (HH:MM)` });
    const division = cell('Div') || 'E0';
    const id = `${slug(division)}-${date}-${slug(home)}-${slug(away)}`;
    if (seen.has(id)) return void skipped.push({ eventId: id, reason: `${where}: the same match appears twice; the first row is kept` });
    seen.add(id);
    matches += 1;
    const kickoff = options.kickoffOf(date, time);
    const sportKey = DIVISION_SPORT_KEYS[division] ?? `soccer_${slug(division).replace(/-/g, '_')}`;
    const event = { id, sport_key: sportKey, sport_title: division, commence_time: kickoff.toISOString(), home_team: home, away_team: away };
    /** A price cell as the feed would send it: a number when it reads as one, the raw text otherwise (the parser refuses it). */
    const price = (name: string): number | string | undefined => {
      const raw = cell(name);
      if (raw === '') return undefined;
      const value = Number(raw);
      return Number.isFinite(value) ? value : raw;
    };
    type Outcome = { name: string; price: number | string | undefined; point?: number };
    /** The outcomes at the first prefix whose cells the row fills; none when it fills no prefix's (the book did not quote it). */
    const quote = (prefixes: readonly string[], outcomesAt: (prefix: string) => Outcome[]): Outcome[][] => {
      for (const prefix of prefixes) {
        const outcomes = outcomesAt(prefix);
        if (outcomes.every((outcome) => outcome.price !== undefined)) return [outcomes];
      }
      return [];
    };
    const quoting = new Set<string>();

    for (const phase of ['opening', 'closing'] as const) {
      const pollAt = new Date(kickoff.getTime() - (phase === 'opening' ? timeline.openingBeforeKickoffMs : timeline.closingBeforeKickoffMs));
      const quotedAt = new Date(pollAt.getTime() - (phase === 'opening' ? timeline.openingQuoteAgeMs : timeline.closingQuoteAgeMs)).toISOString();
      const handicapCell = cell(phase === 'opening' ? 'AHh' : 'AHCh');
      const handicap = handicapCell === '' ? undefined : Number(handicapCell);
      // Every book of the format is looked at, so the command can name the books a file carries; only the read ones are polled.
      const bookmakers = CSV_BOOKS.flatMap((book) => {
        const markets: { key: string; last_update: string; outcomes: unknown[] }[] = [];
        const h2h = (prefix: string) => [
          { name: home, price: price(`${prefix}H`) },
          { name: away, price: price(`${prefix}A`) },
          { name: 'Draw', price: price(`${prefix}D`) },
        ];
        for (const outcomes of quote(book.h2h[phase], h2h)) markets.push({ key: 'h2h', last_update: quotedAt, outcomes });
        const totals = (prefix: string) => [
          { name: 'Over', price: price(`${prefix}>2.5`), point: 2.5 },
          { name: 'Under', price: price(`${prefix}<2.5`), point: 2.5 },
        ];
        for (const outcomes of quote(book.lines[phase], totals)) markets.push({ key: 'totals', last_update: quotedAt, outcomes });
        if (handicap !== undefined && Number.isFinite(handicap)) {
          const spreads = (prefix: string) => [
            { name: home, price: price(`${prefix}AHH`), point: handicap },
            { name: away, price: price(`${prefix}AHA`), point: handicap === 0 ? 0 : -handicap },
          ];
          for (const outcomes of quote(book.lines[phase], spreads)) markets.push({ key: 'spreads', last_update: quotedAt, outcomes });
        }
        if (markets.length === 0) return [];
        quoting.add(book.key);
        return options.books.includes(book.key) ? [{ key: book.key, title: book.title, last_update: quotedAt, markets }] : [];
      });
      if (bookmakers.length > 0) add(pollAt, 'odds', { ...event, bookmakers });
    }
    for (const key of quoting) quoted.set(key, (quoted.get(key) ?? 0) + 1);

    const homeGoals = cell('FTHG');
    const awayGoals = cell('FTAG');
    if (homeGoals === '' || awayGoals === '') return void skipped.push({ eventId: id, reason: `${where}: no full-time goals (FTHG, FTAG): its picks stay unsettled` });
    add(new Date(kickoff.getTime() + timeline.finalAfterKickoffMs), 'scores', {
      ...event,
      completed: true,
      scores: [
        { name: home, score: homeGoals },
        { name: away, score: awayGoals },
      ],
      last_update: new Date(kickoff.getTime() + timeline.finalUpdatedAfterKickoffMs).toISOString(),
    });
  });

  const carried = Object.fromEntries(CSV_BOOKS.flatMap((book) => (quoted.has(book.key) ? [[book.key, quoted.get(book.key)!]] : [])));
  return { snapshots: [...snapshots.values()].sort((a, b) => a.at.getTime() - b.at.getTime() || (a.kind === b.kind ? 0 : a.kind === 'odds' ? -1 : 1)), matches, carried, skipped };
}

/** Snapshots through the live feed's parser: what it refuses is skipped with its reason, as a live poll logs it. */
export function pollsOfSnapshots(snapshots: readonly FeedSnapshot[]): { polls: BacktestPoll[]; skipped: FeedSkip[] } {
  const skipped: FeedSkip[] = [];
  const polls = snapshots.map((snapshot): BacktestPoll => {
    if (snapshot.kind === 'odds') {
      const parsed = parseOddsEvents(snapshot.body);
      skipped.push(...parsed.skipped);
      return { at: snapshot.at, kind: 'odds', events: parsed.events };
    }
    const parsed = parseScoreEvents(snapshot.body);
    skipped.push(...parsed.skipped);
    return { at: snapshot.at, kind: 'scores', events: parsed.events };
  });
  return { polls, skipped };
}
