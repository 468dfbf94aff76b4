/**
 * The simulated odds feed of the embedded demo (docs/VALUE_ENGINE.md, "Simulated demo feed"):
 * the bodies The Odds API v4 would send for /odds and /scores, generated from a seed and the
 * time asked about. Pure in spirit: no I/O, no timers, no Math.random. Every number is a hash
 * of (seed, sport, fixture index, what, time bucket), so a body depends only on its arguments,
 * and calls may come in any order.
 */
import { devig } from '../../domain/devig.js';
import { DRAW_SELECTION, OVER, UNDER } from '../../domain/market.js';
import { DEFAULT_TAX_RATE } from '../../domain/odds.js';

export interface SimulatedFeedOptions {
  seed?: number;
  sportKeys?: string[];
  /**
   * Where the schedule starts: fixtures are counted, and prices move in minute buckets, from
   * here, and nothing kicks off at or before it. The demo's feed source passes the fixed
   * SIMULATED_SCHEDULE_ORIGIN_MS, so its fixtures do not depend on when the process started.
   */
  startedAt: Date;
}

interface SimulatedSport {
  title: string;
  threeWay: boolean;
  teams: string[];
  /**
   * The sharp book's main lines, one of each list per fixture (quarter lines included); absent
   * for a sport without spreads and totals. `spreads` is the home team's handicap.
   */
  lines?: { spreads: number[]; totals: number[] };
}

const SPORTS: Record<string, SimulatedSport> = {
  soccer_epl: {
    title: 'EPL',
    threeWay: true,
    teams: ['Arsenal', 'Chelsea', 'Liverpool', 'Manchester City', 'Manchester United', 'Tottenham Hotspur', 'Newcastle United', 'Aston Villa', 'Brighton and Hove Albion', 'West Ham United'],
    lines: { spreads: [-1, -0.75, -0.5, -0.25, 0, 0.25, 0.5], totals: [2.25, 2.5, 2.5, 2.75, 3] },
  },
  basketball_nba: {
    title: 'NBA',
    threeWay: false,
    teams: ['Boston Celtics', 'Denver Nuggets', 'Milwaukee Bucks', 'Phoenix Suns', 'Miami Heat', 'Golden State Warriors', 'Los Angeles Lakers', 'Dallas Mavericks'],
    lines: { spreads: [-7.5, -4.5, -2.5, 1.5, 3.5, 6], totals: [208.5, 214.5, 219, 223.5] },
  },
  tennis_atp_finals: {
    title: 'ATP Finals',
    threeWay: false,
    teams: ['Jannik Sinner', 'Carlos Alcaraz', 'Novak Djokovic', 'Alexander Zverev', 'Daniil Medvedev', 'Taylor Fritz', 'Casper Ruud', 'Andrey Rublev'],
  },
  icehockey_nhl: {
    title: 'NHL',
    threeWay: false,
    teams: ['Edmonton Oilers', 'Florida Panthers', 'New York Rangers', 'Colorado Avalanche', 'Vegas Golden Knights', 'Boston Bruins', 'Dallas Stars', 'Toronto Maple Leafs'],
    lines: { spreads: [-1.5, 1.5], totals: [5.5, 6, 6.5] },
  },
};

export const SIMULATED_SPORT_KEYS: readonly string[] = Object.freeze(Object.keys(SPORTS));

/** The sharp reference: the engine's default `referenceBookmaker`. */
export const SIMULATED_SHARP_BOOKMAKER = Object.freeze({ key: 'pinnacle', title: 'Pinnacle' });

/** Soft books: wider margins, and they price from the sharp line `lagMinutes` ago. */
export const SIMULATED_SOFT_BOOKMAKERS: readonly { key: string; title: string; margin: number; lagMinutes: number }[] =
  Object.freeze([
    { key: 'williamhill', title: 'William Hill', margin: 0.06, lagMinutes: 1 },
    { key: 'unibet_eu', title: 'Unibet', margin: 0.05, lagMinutes: 2 },
    { key: 'betsson', title: 'Betsson', margin: 0.045, lagMinutes: 1 },
    { key: 'marathonbet', title: 'Marathon Bet', margin: 0.04, lagMinutes: 3 },
    { key: 'onexbet', title: '1xBet', margin: 0.08, lagMinutes: 2 },
  ]);

const SECOND = 1000;
const MINUTE = 60 * SECOND;
/** Prices move once per minute bucket (counted from the schedule's start). */
const BUCKET = MINUTE;
/** A new fixture per sport this often; it kicks off 5-30 minutes after it appears. */
const FIXTURE_EVERY = 3 * MINUTE;
const LEAD_MIN = 5 * MINUTE;
const LEAD_MAX = 30 * MINUTE;
/** A match lasts 10-20 minutes of demo time. */
const MATCH_MIN = 10 * MINUTE;
/** MATCH_MIN_MINUTES that fits these short matches (the demo's default for every sport). */
export const SIMULATED_MATCH_MIN_MINUTES = MATCH_MIN / MINUTE;
const MATCH_MAX = 20 * MINUTE;
const SCORES_DAYS = 3 * 24 * 60 * MINUTE;
/** Per-minute standard deviation of the home side's log-odds strength. */
const DRIFT = 0.04;
/** Share of outcome-minutes in which one soft book mis-prices; a share of those are gross. */
const MISPRICE_RATE = 0.04;
const GROSS_SHARE = 0.15;

export const DEFAULT_SIMULATED_SEED = 1;
/**
 * The schedule origin of the demo's feed: fixed, so a restarted demo plays the same fixtures
 * (ids, teams, kickoffs, prices, finals) at the same times, and the events whose picks were
 * published before a restart get their finals after it.
 */
export const SIMULATED_SCHEDULE_ORIGIN_MS = 0;

/**
 * A book that mis-prices an outcome still keeps a margin on its whole market, as real books do
 * (a market summing below 1 is refused by the engine as a broken feed): the outcomes it prices
 * normally are shortened until the implied probabilities sum to at least 1 + margin.
 */
function keepMargin(prices: number[], mispriced: ReadonlySet<number>, margin: number): void {
  if (mispriced.size === 0 || mispriced.size === prices.length) return;
  const implied = (list: number[]) => list.reduce((sum, price) => sum + 1 / price, 0);
  const wanted = 1 + margin - [...mispriced].reduce((sum, j) => sum + 1 / prices[j]!, 0);
  const others = implied(prices.filter((_, j) => !mispriced.has(j)));
  if (others >= wanted) return;
  const scale = wanted / others;
  prices.forEach((price, j) => {
    if (!mispriced.has(j)) prices[j] = Math.max(1.01, Math.floor((100 * price) / scale) / 100);
  });
}

/** 32-bit hash of integers (murmur3-style mixing): the generator's only source of chance. */
function hash(...parts: number[]): number {
  let h = 0x9e3779b9;
  for (const part of parts) {
    h = Math.imul(h ^ (part | 0), 0x5bd1e995);
    h ^= h >>> 15;
  }
  h = Math.imul(h ^ (h >>> 16), 0x85ebca6b);
  h = Math.imul(h ^ (h >>> 13), 0xc2b2ae35);
  return (h ^ (h >>> 16)) >>> 0;
}

const unit = (...parts: number[]): number => hash(...parts) / 4294967296;
const between = (min: number, max: number, ...parts: number[]): number => min + (max - min) * unit(...parts);
/** Roughly standard normal (sum of three uniforms), enough for a price walk. */
const gauss = (...parts: number[]): number => (unit(...parts, 1) + unit(...parts, 2) + unit(...parts, 3) - 1.5) * 2;

function stringHash(text: string): number {
  let h = 0x811c9dc5;
  for (let i = 0; i < text.length; i++) h = Math.imul(h ^ text.charCodeAt(i), 0x01000193);
  return h >>> 0;
}

/** Salts: which quantity a hash is for. */
const Salt = { Phase: 1, Lead: 2, Match: 3, Teams: 4, Strength: 5, Draw: 6, Margin: 7, Step: 8, Misprice: 9, Result: 10, Score: 11, Goal: 12, Id: 13, Line: 14 } as const;

/** The soft book that quotes each line a quarter away from the sharp one (never compared with it). */
const OFF_LINE_BOOK = 'onexbet';

const iso = (ms: number): string => new Date(Math.floor(ms / SECOND) * SECOND).toISOString().replace('.000Z', 'Z');
const sigmoid = (x: number): number => 1 / (1 + Math.exp(-x));

/** One line market of a fixture: its two outcomes (and their points) and how its probability walks. */
interface LineMarket {
  key: 'spreads' | 'totals';
  /** Which market (1 spreads, 2 totals): salts its walk and mis-prices apart from h2h's. */
  index: number;
  names: [string, string];
  points: [number, number];
}

interface Fixture {
  sportKey: string;
  sport: SimulatedSport;
  /** hash parts that name this fixture: seed, sport, index. */
  key: [number, number, number];
  id: string;
  homeTeam: string;
  awayTeam: string;
  appearsAt: number;
  kickoff: number;
  endsAt: number;
  /** Outcome names in feed order: home, away, then Draw in three-way sports. */
  outcomes: string[];
}

export class SimulatedFeed {
  private readonly seed: number;
  private readonly start: number;
  private readonly sportKeys: ReadonlySet<string>;

  constructor(options: SimulatedFeedOptions) {
    this.seed = options.seed ?? DEFAULT_SIMULATED_SEED;
    this.start = Math.floor(options.startedAt.getTime() / SECOND) * SECOND;
    const keys = options.sportKeys ?? [...SIMULATED_SPORT_KEYS];
    const unknown = keys.filter((key) => !Object.hasOwn(SPORTS, key));
    if (unknown.length > 0) throw new RangeError(`the simulated feed has no sport ${unknown.join(', ')}; use ${SIMULATED_SPORT_KEYS.join(', ')}`);
    this.sportKeys = new Set(keys);
  }

  /** The v4 /odds body (array of events) for one sport key at time `now`. */
  odds(sportKey: string, now: Date): unknown[] {
    const t = now.getTime();
    return this.fixtures(sportKey, t, t - LEAD_MAX - MINUTE)
      .filter((f) => f.kickoff > t)
      .map((f) => ({
        id: f.id,
        sport_key: f.sportKey,
        sport_title: f.sport.title,
        commence_time: iso(f.kickoff),
        home_team: f.homeTeam,
        away_team: f.awayTeam,
        bookmakers: this.bookmakers(f, t),
      }));
  }

  /** The v4 /scores body at `now` (daysFrom=3: started up to 3 days ago, plus upcoming). */
  scores(sportKey: string, now: Date): unknown[] {
    const t = now.getTime();
    return this.fixtures(sportKey, t, t - SCORES_DAYS - LEAD_MAX - MINUTE)
      .filter((f) => f.kickoff > t - SCORES_DAYS)
      .map((f) => {
        const started = t >= f.kickoff;
        const completed = t >= f.endsAt;
        const [home, away] = this.finalScore(f);
        const progress = Math.min(1, (t - f.kickoff) / (f.endsAt - f.kickoff));
        return {
          id: f.id,
          sport_key: f.sportKey,
          sport_title: f.sport.title,
          commence_time: iso(f.kickoff),
          completed,
          home_team: f.homeTeam,
          away_team: f.awayTeam,
          scores: started
            ? [
                { name: f.homeTeam, score: String(running(home, progress, ...f.key, 0)) },
                { name: f.awayTeam, score: String(running(away, progress, ...f.key, 1)) },
              ]
            : null,
          last_update: started ? iso(completed ? f.endsAt : Math.max(f.kickoff, this.bucketStart(t))) : null,
        };
      });
  }

  /** The sport's fixtures that appeared by `t` (and not long before `since`: a cheap lower bound), by kickoff. */
  private fixtures(sportKey: string, t: number, since: number): Fixture[] {
    if (!this.sportKeys.has(sportKey)) return [];
    const sport = SPORTS[sportKey]!;
    const sportId = stringHash(sportKey);
    const phase = Math.floor(between(0, FIXTURE_EVERY / SECOND, this.seed, sportId, Salt.Phase)) * SECOND;
    const first = Math.floor((since - this.start - phase) / FIXTURE_EVERY);
    const last = Math.floor((t - this.start - phase) / FIXTURE_EVERY);
    const list: Fixture[] = [];
    for (let index = first; index <= last; index++) {
      const key: [number, number, number] = [this.seed, sportId, index];
      const appearsAt = this.start + phase + index * FIXTURE_EVERY;
      // Kickoffs fall on whole minutes, as real schedules do.
      const kickoff = Math.ceil((appearsAt + between(LEAD_MIN, LEAD_MAX, ...key, Salt.Lead)) / MINUTE) * MINUTE;
      // The schedule starts empty of history: fixtures that would have kicked off before it never existed.
      if (appearsAt > t || kickoff <= this.start) continue;
      const endsAt = kickoff + Math.round(between(MATCH_MIN, MATCH_MAX, ...key, Salt.Match) / MINUTE) * MINUTE;
      const n = sport.teams.length;
      const home = hash(...key, Salt.Teams, 0) % n;
      const away = (home + 1 + (hash(...key, Salt.Teams, 1) % (n - 1))) % n;
      const id = [0, 1, 2, 3].map((i) => hash(...key, Salt.Id, i).toString(16).padStart(8, '0')).join('');
      const homeTeam = sport.teams[home]!;
      const awayTeam = sport.teams[away]!;
      const outcomes = sport.threeWay ? [homeTeam, awayTeam, DRAW_SELECTION] : [homeTeam, awayTeam];
      list.push({ sportKey, sport, key, id, homeTeam, awayTeam, appearsAt, kickoff, endsAt, outcomes });
    }
    return list.sort((a, b) => a.kickoff - b.kickoff || a.key[2] - b.key[2]);
  }

  private bucketOf(t: number): number {
    return Math.floor((t - this.start) / BUCKET);
  }

  private bucketStart(t: number): number {
    return this.start + this.bucketOf(t) * BUCKET;
  }

  /** True probabilities (feed order) in minute bucket `b`: a random walk from the fixture's debut. */
  private fair(f: Fixture, b: number): number[] {
    const opening = between(0.3, 0.7, ...f.key, Salt.Strength);
    let x = Math.log(opening / (1 - opening));
    for (let k = this.bucketOf(f.appearsAt) + 1; k <= b; k++) x += DRIFT * gauss(...f.key, Salt.Step, k);
    const home = Math.min(0.8, Math.max(0.2, sigmoid(x)));
    if (!f.sport.threeWay) return [home, 1 - home];
    const draw = between(0.22, 0.3, ...f.key, Salt.Draw);
    return [(1 - draw) * home, (1 - draw) * (1 - home), draw];
  }

  /** The fixture's spreads and totals at the sharp book's lines; none in a sport without lines. */
  private lineMarkets(f: Fixture): LineMarket[] {
    const lines = f.sport.lines;
    if (!lines) return [];
    const pick = (list: number[], i: number) => list[hash(...f.key, Salt.Line, i) % list.length]!;
    const spread = pick(lines.spreads, 1);
    const total = pick(lines.totals, 2);
    return [
      { key: 'spreads', index: 1, names: [f.homeTeam, f.awayTeam], points: [spread, 0 - spread] },
      { key: 'totals', index: 2, names: [OVER, UNDER], points: [total, total] },
    ];
  }

  /** A line market's true probabilities (first outcome, second) in bucket `b`: a walk around even. */
  private lineFair(f: Fixture, line: LineMarket, b: number): number[] {
    const opening = between(0.4, 0.6, ...f.key, Salt.Line, line.index);
    let x = Math.log(opening / (1 - opening));
    for (let k = this.bucketOf(f.appearsAt) + 1; k <= b; k++) x += DRIFT * gauss(...f.key, Salt.Line, line.index, Salt.Step, k);
    const first = Math.min(0.75, Math.max(0.25, sigmoid(x)));
    return [first, 1 - first];
  }

  private bookmakers(f: Fixture, t: number): unknown[] {
    const b = this.bucketOf(t);
    const sharpMargin = between(0.02, 0.03, ...f.key, Salt.Margin);
    const lines = this.lineMarkets(f);
    const h2h = this.prices(f, t, sharpMargin, (bucket) => this.fair(f, bucket), []);
    const lined = lines.map((line) => this.prices(f, t, sharpMargin, (bucket) => this.lineFair(f, line, bucket), [Salt.Line, line.index]));
    const sharpUpdate = Math.max(f.appearsAt, this.bucketStart(t));
    const books = [
      book(SIMULATED_SHARP_BOOKMAKER, sharpUpdate, [
        h2hMarket(f.outcomes, h2h.sharp),
        ...lines.map((line, m) => lineMarket(line, lined[m]!.sharp, 0)),
      ]),
    ];
    SIMULATED_SOFT_BOOKMAKERS.forEach((soft, bookIndex) => {
      // Each book refreshes at its own second of the minute; the last refresh is under a minute old.
      const offset = (10 + 8 * bookIndex) * SECOND;
      const refreshed = this.bucketStart(t) + offset <= t ? this.bucketStart(t) + offset : this.bucketStart(t) + offset - BUCKET;
      // One book deals its lines a quarter off the sharp one: a different market, never compared.
      const shift = soft.key === OFF_LINE_BOOK ? 0.25 : 0;
      books.push(
        book(soft, Math.max(f.appearsAt, refreshed), [
          h2hMarket(f.outcomes, h2h.soft[bookIndex]!),
          ...lines.map((line, m) => lineMarket(line, lined[m]!.soft[bookIndex]!, shift)),
        ]),
      );
    });
    return books;
  }

  /**
   * One market's prices at `t`: the sharp book's from the current true probabilities, each soft
   * book's from those of lagMinutes ago with its margin, now and then mis-priced against the
   * reference's no-vig price (as the engine sees it). `salt` keeps each market's chances apart.
   */
  private prices(f: Fixture, t: number, sharpMargin: number, fairAt: (bucket: number) => number[], salt: number[]): { sharp: number[]; soft: number[][] } {
    const b = this.bucketOf(t);
    // Pinnacle quotes three decimals, the soft books two (rounded down, in their favour).
    const sharp = fairAt(b).map((p) => Math.round(1000 / (p * (1 + sharpMargin))) / 1000);
    const fairOdds = devig(sharp, 'power').fairPrices;
    const soft = SIMULATED_SOFT_BOOKMAKERS.map((book, bookIndex) => {
      const lagged = fairAt(b - book.lagMinutes);
      const mispriced = new Set<number>();
      const prices = lagged.map((p, j) => {
        const roll = unit(...f.key, ...salt, Salt.Misprice, j, b);
        if (roll < MISPRICE_RATE && hash(...f.key, ...salt, Salt.Misprice, j, b, 1) % SIMULATED_SOFT_BOOKMAKERS.length === bookIndex) {
          const gross = unit(...f.key, ...salt, Salt.Misprice, j, b, 2) < GROSS_SHARE;
          const edge = gross ? between(0.28, 0.45, ...f.key, ...salt, Salt.Misprice, j, b, 3) : between(0.04, 0.12, ...f.key, ...salt, Salt.Misprice, j, b, 3);
          mispriced.add(j);
          return Math.floor((100 * fairOdds[j]! * (1 + edge)) / (1 - DEFAULT_TAX_RATE)) / 100;
        }
        return Math.max(1.01, Math.floor(100 / (p * (1 + book.margin))) / 100);
      });
      keepMargin(prices, mispriced, book.margin);
      return prices;
    });
    return { sharp, soft };
  }

  /** Final [home, away]: the result is drawn from the fair probabilities at kickoff. */
  private finalScore(f: Fixture): [number, number] {
    const fair = this.fair(f, this.bucketOf(f.kickoff));
    const roll = unit(...f.key, Salt.Result);
    const result = roll < fair[0]! ? 'home' : !f.sport.threeWay || roll < fair[0]! + fair[1]! ? 'away' : 'draw';
    const u = (i: number) => unit(...f.key, Salt.Score, i);
    let winner: number;
    let loser: number;
    switch (f.sportKey.split('_')[0]) {
      case 'soccer':
        if (result === 'draw') {
          const goals = Math.floor(u(0) * 3);
          return [goals, goals];
        }
        winner = 1 + Math.floor(u(0) * 3);
        loser = Math.floor(u(1) * winner);
        break;
      case 'basketball':
        loser = 90 + Math.floor(u(0) * 30);
        winner = loser + 1 + Math.floor(u(1) * 15);
        break;
      case 'tennis': // sets, best of three
        winner = 2;
        loser = Math.floor(u(0) * 2);
        break;
      default: // ice hockey: overtime decides a tie
        loser = Math.floor(u(0) * 4);
        winner = loser + 1 + Math.floor(u(1) * 2);
    }
    return result === 'home' ? [winner, loser] : [loser, winner];
  }
}

function book(bookmaker: { key: string; title: string }, updatedAt: number, markets: ((lastUpdate: string) => unknown)[]) {
  const lastUpdate = iso(updatedAt);
  return { key: bookmaker.key, title: bookmaker.title, last_update: lastUpdate, markets: markets.map((market) => market(lastUpdate)) };
}

function h2hMarket(outcomes: string[], prices: number[]) {
  return (lastUpdate: string) => ({ key: 'h2h', last_update: lastUpdate, outcomes: outcomes.map((name, j) => ({ name, price: prices[j]! })) });
}

/** A spreads or totals market; `shift` moves the line (a handicap keeps its two points opposite). */
function lineMarket(line: LineMarket, prices: number[], shift: number) {
  const points = line.key === 'spreads' ? [line.points[0] + shift, line.points[1] - shift] : [line.points[0] + shift, line.points[1] + shift];
  return (lastUpdate: string) => ({
    key: line.key,
    last_update: lastUpdate,
    outcomes: line.names.map((name, j) => ({ name, price: prices[j]!, point: points[j]! })),
  });
}

/** The score so far: each of a few goals (or sets) lands at its own moment; big scores grow evenly. */
function running(final: number, progress: number, ...key: number[]): number {
  if (progress >= 1) return final;
  if (final > 10) return Math.floor(final * progress);
  let scored = 0;
  for (let i = 0; i < final; i++) if (unit(...key, Salt.Goal, i) <= progress) scored++;
  return scored;
}
