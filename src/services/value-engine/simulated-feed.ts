/**
 * The simulated odds feed of the embedded demo (docs/VALUE_ENGINE.md, "Simulated demo feed"):
 * the bodies The Odds API v4 would send for /odds and /scores, generated from a seed and the
 * time asked about. Pure in spirit: no I/O, no timers, no Math.random. Every number is a hash
 * of (seed, sport, fixture index, what, time bucket), so a body depends only on its arguments,
 * and calls may come in any order.
 *
 * Each fixture has a score model per sport (goals, points or sets) whose two quantities, its
 * strength and its total, walk a minute at a time; every market's fair probabilities, and the
 * final score, come from that one model, so prices, lines and finals agree with each other and
 * with how the engine settles them.
 */
import { devig } from '../../domain/devig.js';
import { DRAW_SELECTION, OVER, UNDER } from '../../domain/market.js';
import { DEFAULT_TAX_RATE } from '../../domain/odds.js';
import { lineResult } from '../../domain/settlement.js';

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

/** How a sport's finals come about, and so how its markets are priced. */
type SportKind = 'soccer' | 'basketball' | 'icehockey' | 'tennis';

/**
 * One of the two quantities a fixture's prices follow: where it opens (from uniform draws
 * `u(0)`, `u(1)`), its per-minute step (standard deviation), its per-minute drift toward the
 * fixture's steam side, and its bounds.
 */
interface Walk {
  open: (u: (i: number) => number) => number;
  step: number;
  steer: number;
  min: number;
  max: number;
}

interface SimulatedSport {
  title: string;
  kind: SportKind;
  threeWay: boolean;
  teams: string[];
  /**
   * Strength: the logit of the home side's share of the expected goals (soccer, ice hockey),
   * the home side's expected margin in points (basketball), the logit of the home player's
   * match probability (tennis).
   */
  strength: Walk;
  /** Total: expected goals (ice hockey: in regulation) or points; absent in tennis. */
  total?: Walk;
  /**
   * Spreads and totals, absent in a sport without them. `offLine`: how far the off-line book
   * deals each line from the sharp's (0: the sharp's own line).
   */
  lines?: { offLine: { spreads: number; totals: number } };
}

const logit = (p: number): number => Math.log(p / (1 - p));
const sigmoid = (x: number): number => 1 / (1 + Math.exp(-x));

const SPORTS: Record<string, SimulatedSport> = {
  soccer_epl: {
    title: 'EPL',
    kind: 'soccer',
    threeWay: true,
    teams: ['Arsenal', 'Chelsea', 'Liverpool', 'Manchester City', 'Manchester United', 'Tottenham Hotspur', 'Newcastle United', 'Aston Villa', 'Brighton and Hove Albion', 'West Ham United'],
    // The home side's share of 2.3-3.0 expected goals: 32-74 % at the open.
    strength: { open: (u) => logit(0.32 + 0.42 * u(0)), step: 0.015, steer: 0.008, min: logit(0.25), max: logit(0.78) },
    total: { open: (u) => 2.3 + 0.7 * u(0), step: 0.005, steer: 0.003, min: 2.1, max: 3.2 },
    // Asian lines: the off-line book deals a quarter away.
    lines: { offLine: { spreads: 0.25, totals: 0.25 } },
  },
  basketball_nba: {
    title: 'NBA',
    kind: 'basketball',
    threeWay: false,
    teams: ['Boston Celtics', 'Denver Nuggets', 'Milwaukee Bucks', 'Phoenix Suns', 'Miami Heat', 'Golden State Warriors', 'Los Angeles Lakers', 'Dallas Mavericks'],
    // The favourite by 1 to 14.9 points (about 6 in the median fixture), at home in 60 % of fixtures.
    strength: { open: (u) => (u(1) < 0.6 ? 1 : -1) * (1 + 13.9 * u(0) ** 1.5), step: 0.1, steer: 0.04, min: -16, max: 16 },
    total: { open: (u) => 207 + 36.99 * u(0), step: 0.12, steer: 0.05, min: 200, max: 250 },
    // No quarter lines in basketball: the off-line book deals a point away.
    lines: { offLine: { spreads: 1, totals: 1 } },
  },
  tennis_atp_finals: {
    title: 'ATP Finals',
    kind: 'tennis',
    threeWay: false,
    teams: ['Jannik Sinner', 'Carlos Alcaraz', 'Novak Djokovic', 'Alexander Zverev', 'Daniil Medvedev', 'Taylor Fritz', 'Casper Ruud', 'Andrey Rublev'],
    strength: { open: (u) => logit(0.25 + 0.5 * u(0)), step: 0.02, steer: 0.01, min: logit(0.2), max: logit(0.8) },
  },
  icehockey_nhl: {
    title: 'NHL',
    kind: 'icehockey',
    threeWay: false,
    teams: ['Edmonton Oilers', 'Florida Panthers', 'New York Rangers', 'Colorado Avalanche', 'Vegas Golden Knights', 'Boston Bruins', 'Dallas Stars', 'Toronto Maple Leafs'],
    // The favourite's share of the goals is 53-58 % at the open (at home in 60 %), never
    // beyond 58.5 %: its -1.5 then stays a plus-money price, as puck lines are.
    strength: { open: (u) => (u(1) < 0.6 ? 1 : -1) * logit(0.53 + 0.05 * u(0)), step: 0.015, steer: 0.006, min: logit(0.415), max: logit(0.585) },
    total: { open: (u) => 5.2 + u(0), step: 0.005, steer: 0.003, min: 5, max: 6.4 },
    // The puck line is always -1.5 / +1.5; only the total is dealt half a goal away.
    lines: { offLine: { spreads: 0, totals: 0.5 } },
  },
};

export const SIMULATED_SPORT_KEYS: readonly string[] = Object.freeze(Object.keys(SPORTS));

/** The sharp reference: the engine's default `referenceBookmaker`. */
export const SIMULATED_SHARP_BOOKMAKER = Object.freeze({ key: 'pinnacle', title: 'Pinnacle' });

/**
 * The exchange beside it: back and lay prices (h2h and h2h_lay) around the current fair price,
 * `SIMULATED_EXCHANGE_SPREAD` apart, so the demo's references are a consensus of a book and an
 * exchange's midpoint (docs/VALUE_ENGINE.md, "Exchanges"). h2h only, as exchanges are served.
 */
export const SIMULATED_EXCHANGE = Object.freeze({ key: 'betfair_ex_eu', title: 'Betfair' });
/** Lay / back - 1 around the fair price: a liquid market's, well inside REFERENCE_MAX_EXCHANGE_SPREAD. */
const SIMULATED_EXCHANGE_SPREAD = 0.02;
/** The demo's REFERENCE_BOOKMAKERS: the book and the exchange. */
export const SIMULATED_REFERENCE_BOOKMAKERS = `${SIMULATED_SHARP_BOOKMAKER.key},${SIMULATED_EXCHANGE.key}`;

/** Soft books: wider margins, and they price from the sharp line `lagMinutes` ago. */
export const SIMULATED_SOFT_BOOKMAKERS: readonly { key: string; title: string; margin: number; lagMinutes: number }[] =
  Object.freeze([
    { key: 'williamhill', title: 'William Hill', margin: 0.06, lagMinutes: 1 },
    { key: 'unibet_eu', title: 'Unibet', margin: 0.05, lagMinutes: 2 },
    { key: 'betsson', title: 'Betsson', margin: 0.045, lagMinutes: 1 },
    { key: 'marathonbet', title: 'Marathon Bet', margin: 0.04, lagMinutes: 3 },
    { key: 'onexbet', title: '1xBet', margin: 0.065, lagMinutes: 2 },
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
/**
 * Share of market-minutes in which one soft book is slow to follow the sharp on the market's
 * value side (a share of those are gross errors, h2h only).
 */
const MISPRICE_RATE = 0.08;
const GROSS_SHARE = 0.15;
/** Share of soccer fixtures whose h2h value side is the Draw (else the steam side's team). */
const DRAW_VALUE_SHARE = 0.2;
/** Share of soccer fixtures dealt at 2.5 goals (the others at the quarter line nearest even). */
const SOCCER_TOTAL_AT_2_5 = 0.7;
/** Goals a side can score: soccer 0-5, ice hockey 0-7 (the Poisson is cut there). */
const MAX_GOALS: Readonly<Record<'soccer' | 'icehockey', number>> = { soccer: 5, icehockey: 7 };
/** Ice hockey: the share of one-goal leads at the end of regulation that end with an empty-net goal. */
const EMPTY_NET_SHARE = 0.22;
/** Basketball: standard deviations of the margin and the total around expectations; finals are cut at 2 of them. */
const MARGIN_SD = 11;
const TOTAL_SD = 10;
const CUT_SD = 2;

export const DEFAULT_SIMULATED_SEED = 1;
/**
 * The schedule origin of the demo's feed: fixed, so a restarted demo plays the same fixtures
 * (ids, teams, kickoffs, prices, finals) at the same times, and the events whose picks were
 * published before a restart get their finals after it.
 */
export const SIMULATED_SCHEDULE_ORIGIN_MS = 0;

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

/** Standard normal CDF (Abramowitz-Stegun 7.1.26, error under 1e-7). */
function normalCdf(x: number): number {
  const z = Math.abs(x) / Math.SQRT2;
  const t = 1 / (1 + 0.3275911 * z);
  const erf = 1 - ((((1.061405429 * t - 1.453152027) * t + 1.421413741) * t - 0.284496736) * t + 0.254829592) * t * Math.exp(-z * z);
  return x >= 0 ? (1 + erf) / 2 : (1 - erf) / 2;
}

/** Inverse standard normal CDF (Acklam's rational approximation, relative error under 1.2e-9). */
function normalQuantile(p: number): number {
  const a = [-39.69683028665376, 220.9460984245205, -275.9285104469687, 138.357751867269, -30.66479806614716, 2.506628277459239];
  const b = [-54.47609879822406, 161.5858368580409, -155.6989798598866, 66.80131188771972, -13.28068155288572];
  const c = [-0.007784894002430293, -0.3223964580411365, -2.400758277161838, -2.549732539343734, 4.374664141464968, 2.938163982698783];
  const d = [0.007784695709041462, 0.3224671290700398, 2.445134137142996, 3.754408661907416];
  const tail = (q: number) => (((((c[0]! * q + c[1]!) * q + c[2]!) * q + c[3]!) * q + c[4]!) * q + c[5]!) / ((((d[0]! * q + d[1]!) * q + d[2]!) * q + d[3]!) * q + 1);
  if (p < 0.02425) return tail(Math.sqrt(-2 * Math.log(p)));
  if (p > 1 - 0.02425) return -tail(Math.sqrt(-2 * Math.log(1 - p)));
  const q = p - 0.5;
  const r = q * q;
  return ((((((a[0]! * r + a[1]!) * r + a[2]!) * r + a[3]!) * r + a[4]!) * r + a[5]!) * q) / (((((b[0]! * r + b[1]!) * r + b[2]!) * r + b[3]!) * r + b[4]!) * r + 1);
}

/** Poisson probabilities of 0..max, cut at max and scaled back to 1. */
function poisson(mean: number, max: number): number[] {
  const pmf: number[] = [Math.exp(-mean)];
  for (let k = 1; k <= max; k++) pmf.push((pmf[k - 1]! * mean) / k);
  const sum = pmf.reduce((a, b) => a + b, 0);
  return pmf.map((p) => p / sum);
}

/** Salts: which quantity a hash is for. */
const Salt = { Phase: 1, Lead: 2, Match: 3, Teams: 4, Strength: 5, Margin: 7, Step: 8, Misprice: 9, Result: 10, Score: 11, Goal: 12, Id: 13, Line: 14, Side: 15 } as const;

/** The soft book that deals its lines away from the sharp's (never compared with it). */
const OFF_LINE_BOOK = 'onexbet';

const iso = (ms: number): string => new Date(Math.floor(ms / SECOND) * SECOND).toISOString().replace('.000Z', 'Z');
const roundDown2 = (price: number): number => Math.max(1.01, Math.floor(100 * price) / 100);

/** Where a fixture's two walks stand in a minute bucket. */
interface State {
  strength: number;
  total: number;
}

/** A possible final (home, away) and its probability; `late`: the side whose last goal comes at the end (overtime, an empty net). */
interface Final {
  home: number;
  away: number;
  p: number;
  late?: { side: 0 | 1; at: number };
}

/**
 * What a state says about the final: every possible final with its probability (goals, sets),
 * or, in basketball, a normal margin and total around their expectations.
 */
type Outlook = { kind: 'finals'; finals: Final[] } | { kind: 'normal'; margin: number; total: number };

/** One market of a fixture: h2h, or spreads or totals at the sharp's line. */
interface MarketPlan {
  key: 'h2h' | 'spreads' | 'totals';
  /** Salts the market's chances apart: 0 h2h, 1 spreads, 2 totals. */
  index: number;
  names: string[];
  /** The sharp's line: the home team's handicap (spreads), the point (totals); null for h2h. */
  line: number | null;
  /** The off-line book's line; null when it deals the sharp's. */
  offLine: number | null;
  /** The one outcome on which soft books may lag the sharp: value shows on one side only. */
  valueSide: number;
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
  /** The steam side of the strength (+1 home, -1 away) and of the total (+1 over, -1 under). */
  strengthSide: 1 | -1;
  totalSide: 1 | -1;
}

/** A drawn final, with what its running score needs: a late goal, or the sets in order (true: won by the home player). */
interface FinalScore {
  score: [number, number];
  late?: { side: 0 | 1; at: number };
  sets?: boolean[];
}

/** Fixtures (or finals) kept per feed, more than three days of every sport: each is a pure function of its key, so keeping it changes nothing. */
const MEMO_LIMIT = 8192;

/** A bounded memo: the oldest entry goes first. */
function remember<V>(memo: Map<string, V>, key: string, make: () => V): V {
  const known = memo.get(key);
  if (known !== undefined) return known;
  const value = make();
  memo.set(key, value);
  if (memo.size > MEMO_LIMIT) memo.delete(memo.keys().next().value!);
  return value;
}

export class SimulatedFeed {
  private readonly seed: number;
  private readonly start: number;
  private readonly sportKeys: ReadonlySet<string>;
  /** The scores body lists three days of fixtures at every poll: their fixtures and finals are made once. */
  private readonly fixtureMemo = new Map<string, Fixture | null>();
  private readonly finalMemo = new Map<string, FinalScore>();

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
        let scores: { name: string; score: string }[] | null = null;
        if (started) {
          const final = remember(this.finalMemo, f.id, () => this.finalScore(f));
          const progress = Math.min(1, (t - f.kickoff) / (f.endsAt - f.kickoff));
          scores = [f.homeTeam, f.awayTeam].map((name, side) => ({ name, score: String(running(final, side as 0 | 1, progress, f.key)) }));
        }
        return {
          id: f.id,
          sport_key: f.sportKey,
          sport_title: f.sport.title,
          commence_time: iso(f.kickoff),
          completed,
          home_team: f.homeTeam,
          away_team: f.awayTeam,
          scores,
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
      const fixture = remember(this.fixtureMemo, `${sportId}:${index}`, () => this.fixture(sportKey, sport, sportId, phase, index));
      if (fixture && fixture.appearsAt <= t) list.push(fixture);
    }
    return list.sort((a, b) => a.kickoff - b.kickoff || a.key[2] - b.key[2]);
  }

  /** Fixture `index` of a sport; null for one that would have kicked off before the schedule's start. */
  private fixture(sportKey: string, sport: SimulatedSport, sportId: number, phase: number, index: number): Fixture | null {
    const key: [number, number, number] = [this.seed, sportId, index];
    const appearsAt = this.start + phase + index * FIXTURE_EVERY;
    // Kickoffs fall on whole minutes, as real schedules do.
    const kickoff = Math.ceil((appearsAt + between(LEAD_MIN, LEAD_MAX, ...key, Salt.Lead)) / MINUTE) * MINUTE;
    // The schedule starts empty of history: fixtures that would have kicked off before it never existed.
    if (kickoff <= this.start) return null;
    const endsAt = kickoff + Math.round(between(MATCH_MIN, MATCH_MAX, ...key, Salt.Match) / MINUTE) * MINUTE;
    const n = sport.teams.length;
    const home = hash(...key, Salt.Teams, 0) % n;
    const away = (home + 1 + (hash(...key, Salt.Teams, 1) % (n - 1))) % n;
    const id = [0, 1, 2, 3].map((i) => hash(...key, Salt.Id, i).toString(16).padStart(8, '0')).join('');
    const homeTeam = sport.teams[home]!;
    const awayTeam = sport.teams[away]!;
    const outcomes = sport.threeWay ? [homeTeam, awayTeam, DRAW_SELECTION] : [homeTeam, awayTeam];
    const strengthSide = hash(...key, Salt.Side, 0) % 2 === 0 ? 1 : -1;
    const totalSide = hash(...key, Salt.Side, 1) % 2 === 0 ? 1 : -1;
    return { sportKey, sport, key, id, homeTeam, awayTeam, appearsAt, kickoff, endsAt, outcomes, strengthSide, totalSide };
  }

  private bucketOf(t: number): number {
    return Math.floor((t - this.start) / BUCKET);
  }

  private bucketStart(t: number): number {
    return this.start + this.bucketOf(t) * BUCKET;
  }

  /**
   * The fixture's strength and total in minute bucket `b`: each a random walk from its opening
   * since the fixture's debut, drifting toward its steam side (sharp money keeps coming on one
   * side, as before a real match), kept within the sport's bounds.
   */
  private state(f: Fixture, b: number): State {
    const walk = (spec: Walk | undefined, which: number, side: number): number => {
      if (!spec) return 0;
      let x = spec.open((i) => unit(...f.key, Salt.Strength, which, i));
      for (let k = this.bucketOf(f.appearsAt) + 1; k <= b; k++) x += spec.steer * side + spec.step * gauss(...f.key, Salt.Step, which, k);
      return Math.min(spec.max, Math.max(spec.min, x));
    };
    return { strength: walk(f.sport.strength, 0, f.strengthSide), total: walk(f.sport.total, 1, f.totalSide) };
  }

  /** What a state says about the final (see Outlook). */
  private outlook(f: Fixture, s: State): Outlook {
    switch (f.sport.kind) {
      case 'basketball':
        return { kind: 'normal', margin: s.strength, total: s.total };
      case 'tennis': {
        // Best of three sets: the set probability that gives the match probability.
        const match = sigmoid(s.strength);
        let lo = 0;
        let hi = 1;
        for (let i = 0; i < 40; i++) {
          const mid = (lo + hi) / 2;
          if (mid * mid * (3 - 2 * mid) < match) lo = mid;
          else hi = mid;
        }
        const set = (lo + hi) / 2;
        const lose = 1 - set;
        return {
          kind: 'finals',
          finals: [
            { home: 2, away: 0, p: set * set },
            { home: 2, away: 1, p: 2 * set * set * lose },
            { home: 1, away: 2, p: 2 * set * lose * lose },
            { home: 0, away: 2, p: lose * lose },
          ],
        };
      }
      default: {
        const max = MAX_GOALS[f.sport.kind];
        const share = sigmoid(s.strength);
        const home = poisson(s.total * share, max);
        const away = poisson(s.total * (1 - share), max);
        const finals: Final[] = [];
        for (let h = 0; h <= max; h++) {
          for (let a = 0; a <= max; a++) {
            const p = home[h]! * away[a]!;
            if (f.sport.threeWay) {
              finals.push({ home: h, away: a, p });
            } else if (h === a) {
              // Overtime (or a shootout) decides a tie: the winner's goal comes at the very end.
              if (h === max) continue;
              finals.push({ home: h + 1, away: a, p: p * share, late: { side: 0, at: 1 } });
              finals.push({ home: h, away: a + 1, p: p * (1 - share), late: { side: 1, at: 1 } });
            } else if (Math.abs(h - a) === 1 && Math.max(h, a) < max) {
              // A one-goal lead late on: the trailing side pulls its goalie, now and then into an empty net.
              const leader: 0 | 1 = h > a ? 0 : 1;
              finals.push({ home: h, away: a, p: p * (1 - EMPTY_NET_SHARE) });
              finals.push({ home: h + (leader === 0 ? 1 : 0), away: a + (leader === 1 ? 1 : 0), p: p * EMPTY_NET_SHARE, late: { side: leader, at: 0.97 } });
            } else {
              finals.push({ home: h, away: a, p });
            }
          }
        }
        const sum = finals.reduce((total, final) => total + final.p, 0);
        return { kind: 'finals', finals: finals.map((final) => ({ ...final, p: final.p / sum })) };
      }
    }
  }

  /** h2h fair probabilities in feed order (home, away, then Draw in three-way sports). */
  private h2hFair(f: Fixture, outlook: Outlook): number[] {
    if (outlook.kind === 'normal') {
      const home = normalCdf(outlook.margin / MARGIN_SD);
      return [home, 1 - home];
    }
    let home = 0;
    let away = 0;
    for (const final of outlook.finals) {
      if (final.home > final.away) home += final.p;
      else if (final.away > final.home) away += final.p;
    }
    // Two-way sports never end level (overtime, sets): their finals split the whole probability.
    return f.sport.threeWay ? [home, away, 1 - home - away] : [home / (home + away), away / (home + away)];
  }

  /**
   * The fair probability of a line's first outcome (the home cover, the over), as its fair
   * price means it: win / (win + lose), a half result counting half, a push nothing (so the two
   * sides of any line sum to 1), settled by the engine's own line rules.
   */
  private lineFair(outlook: Outlook, key: 'spreads' | 'totals', line: number): number {
    if (outlook.kind === 'normal') {
      // Half-point lines only: no push.
      return key === 'spreads' ? normalCdf((outlook.margin + line) / MARGIN_SD) : normalCdf((outlook.total - line) / TOTAL_SD);
    }
    let win = 0;
    let lose = 0;
    for (const final of outlook.finals) {
      const result = lineResult(line, (point) => (key === 'spreads' ? final.home + point - final.away : final.home + final.away - point));
      if (result === 'won') win += final.p;
      else if (result === 'half_won') win += final.p / 2;
      else if (result === 'lost') lose += final.p;
      else if (result === 'half_lost') lose += final.p / 2;
    }
    return win / (win + lose);
  }

  /** A market's fair probabilities (feed order) at a line (null for h2h). */
  private fair(f: Fixture, plan: MarketPlan, outlook: Outlook, line: number | null): number[] {
    if (plan.key === 'h2h' || line === null) return this.h2hFair(f, outlook);
    const first = this.lineFair(outlook, plan.key, line);
    return [first, 1 - first];
  }

  /**
   * The fixture's markets. Lines are set once, from the opening state, where the sport deals
   * them: soccer at the Asian handicap nearest even and mostly 2.5 goals; basketball at the
   * whole points of the expected margin and total plus a half (the favourite -1.5 to -14.5);
   * ice hockey at the favourite's -1.5 and the total nearest even. Each market's value side is
   * fixed too.
   */
  private markets(f: Fixture): MarketPlan[] {
    const h2hValue = f.sport.kind === 'soccer' && unit(...f.key, Salt.Side, 2) < DRAW_VALUE_SHARE ? 2 : f.strengthSide > 0 ? 0 : 1;
    const plans: MarketPlan[] = [{ key: 'h2h', index: 0, names: f.outcomes, line: null, offLine: null, valueSide: h2hValue }];
    const lines = f.sport.lines;
    if (!lines) return plans;
    const opening = this.state(f, this.bucketOf(f.appearsAt));
    const outlook = this.outlook(f, opening);
    const nearestEven = (key: 'spreads' | 'totals', candidates: number[]) =>
      candidates.reduce((best, line) => (Math.abs(this.lineFair(outlook, key, line) - 0.5) < Math.abs(this.lineFair(outlook, key, best) - 0.5) ? line : best));
    let spread: number;
    let total: number;
    switch (f.sport.kind) {
      case 'soccer':
        spread = nearestEven('spreads', Array.from({ length: 13 }, (_, i) => -1.75 + i / 4));
        total = unit(...f.key, Salt.Line, 2) < SOCCER_TOTAL_AT_2_5 ? 2.5 : nearestEven('totals', [2.25, 2.5, 2.75, 3]);
        break;
      case 'basketball': {
        const favourite = Math.floor(Math.abs(opening.strength)) + 0.5;
        spread = opening.strength >= 0 ? 0 - favourite : favourite;
        total = Math.floor(opening.total) + 0.5;
        break;
      }
      default:
        spread = opening.strength >= 0 ? -1.5 : 1.5;
        total = nearestEven('totals', [5.5, 6, 6.5]);
    }
    const offLine = (shift: number, line: number) => (shift === 0 ? null : line + shift);
    // The puck line's value side is always the favourite's -1.5: a book slow there prices it
    // longer and shades the +1.5 shorter, so neither crosses even money.
    const spreadValue = f.sport.kind === 'icehockey' ? (spread < 0 ? 0 : 1) : f.strengthSide > 0 ? 0 : 1;
    plans.push(
      { key: 'spreads', index: 1, names: [f.homeTeam, f.awayTeam], line: spread, offLine: offLine(lines.offLine.spreads, spread), valueSide: spreadValue },
      { key: 'totals', index: 2, names: [OVER, UNDER], line: total, offLine: offLine(lines.offLine.totals, total), valueSide: f.totalSide > 0 ? 0 : 1 },
    );
    return plans;
  }

  private bookmakers(f: Fixture, t: number): unknown[] {
    const sharpMargin = between(0.02, 0.03, ...f.key, Salt.Margin);
    const outlooks = new Map<number, Outlook>();
    const outlookAt = (bucket: number) => outlooks.get(bucket) ?? outlooks.set(bucket, this.outlook(f, this.state(f, bucket))).get(bucket)!;
    const plans = this.markets(f);
    const priced = plans.map((plan) => this.prices(f, plan, t, sharpMargin, outlookAt));
    const sharpUpdate = Math.max(f.appearsAt, this.bucketStart(t));
    const books = [book(SIMULATED_SHARP_BOOKMAKER, sharpUpdate, plans.map((plan, m) => market(plan, priced[m]!.sharp, plan.line)))];
    const h2h = plans.find((plan) => plan.key === 'h2h')!;
    books.push(book(SIMULATED_EXCHANGE, sharpUpdate, exchangeMarkets(h2h, this.fair(f, h2h, outlookAt(this.bucketOf(t)), null))));
    SIMULATED_SOFT_BOOKMAKERS.forEach((soft, bookIndex) => {
      // Each book refreshes at its own second of the minute; the last refresh is under a minute old.
      const offset = (10 + 8 * bookIndex) * SECOND;
      const refreshed = this.bucketStart(t) + offset <= t ? this.bucketStart(t) + offset : this.bucketStart(t) + offset - BUCKET;
      books.push(
        book(
          soft,
          Math.max(f.appearsAt, refreshed),
          plans.map((plan, m) => market(plan, priced[m]!.soft[bookIndex]!, lineOf(plan, soft.key))),
        ),
      );
    });
    return books;
  }

  /**
   * One market's prices at `t`: the sharp book's from the current fair probabilities with its
   * margin; each soft book's from those of lagMinutes ago (at its own line) with its margin.
   * In a share of minutes one soft book quoting the sharp's line is slow on the market's value
   * side: its price there gives a post-tax edge against the reference's no-vig (power) price,
   * as the engine sees it, and it shades the other outcomes so that its market keeps its margin.
   */
  private prices(
    f: Fixture,
    plan: MarketPlan,
    t: number,
    sharpMargin: number,
    outlookAt: (bucket: number) => Outlook,
  ): { sharp: number[]; soft: number[][] } {
    const b = this.bucketOf(t);
    // Pinnacle quotes three decimals, the soft books two (rounded down, in their favour).
    const sharp = this.fair(f, plan, outlookAt(b), plan.line).map((p) => Math.round(1000 / (p * (1 + sharpMargin))) / 1000);
    const fairOdds = devig(sharp, 'power').fairPrices;
    const atSharpLine = SIMULATED_SOFT_BOOKMAKERS.flatMap((soft, i) => (lineOf(plan, soft.key) === plan.line ? [i] : []));
    const salt = [...f.key, Salt.Misprice, plan.index, b];
    const slow = unit(...salt) < MISPRICE_RATE ? atSharpLine[hash(...salt, 1) % atSharpLine.length] : undefined;
    const soft = SIMULATED_SOFT_BOOKMAKERS.map((book, bookIndex) => {
      const lagged = this.fair(f, plan, outlookAt(b - book.lagMinutes), lineOf(plan, book.key));
      // A book is slow on the value side only: an outcome the sharp has moved away from since
      // never stays longer than its current fair price, so lagging alone makes no value there.
      const current = this.fair(f, plan, outlookAt(b), lineOf(plan, book.key));
      const prices = lagged.map((p, j) => {
        const price = roundDown2(1 / (p * (1 + book.margin)));
        return j === plan.valueSide ? price : Math.min(price, Math.floor(100 / current[j]!) / 100);
      });
      if (bookIndex !== slow) return prices;
      const v = plan.valueSide;
      const gross = plan.key === 'h2h' && unit(...salt, 2) < GROSS_SHARE;
      const edge = gross ? between(0.28, 0.45, ...salt, 3) : between(0.04, 0.12, ...salt, 3);
      const price = Math.floor((100 * fairOdds[v]! * (1 + edge)) / (1 - DEFAULT_TAX_RATE)) / 100;
      if (price <= prices[v]!) return prices;
      // The other outcomes share what is left of the book's margin, in proportion to their
      // (lagged) probabilities: shortened, so the market stays coherent and they carry no value.
      const left = 1 + book.margin - 1 / price;
      const others = lagged.reduce((sum, p, j) => (j === v ? sum : sum + p), 0);
      return lagged.map((p, j) => (j === v ? price : roundDown2(1 / ((p / others) * left))));
    });
    return { sharp, soft };
  }

  /** The final, drawn from the outlook at kickoff, so favourites win (and cover) as often as priced. */
  private finalScore(f: Fixture): FinalScore {
    const outlook = this.outlook(f, this.state(f, this.bucketOf(f.kickoff)));
    const u = unit(...f.key, Salt.Result);
    if (outlook.kind === 'normal') {
      // Margin and total around expectations, cut at CUT_SD standard deviations; a level
      // margin goes to overtime (the sign of the drawn margin wins it).
      const cut = (x: number) => Math.min(CUT_SD, Math.max(-CUT_SD, x));
      const drawnMargin = outlook.margin + MARGIN_SD * cut(normalQuantile(Math.min(1 - 1e-9, Math.max(1e-9, u))));
      const total = Math.round(outlook.total + TOTAL_SD * cut(normalQuantile(Math.min(1 - 1e-9, Math.max(1e-9, unit(...f.key, Salt.Score, 0))))));
      // The margin has the total's parity (home and away are whole), and is never 0.
      let margin = 2 * Math.round((drawnMargin - (total % 2)) / 2) + (total % 2);
      if (margin === 0) margin = drawnMargin >= 0 ? 2 : -2;
      return { score: [(total + margin) / 2, (total - margin) / 2] };
    }
    let acc = 0;
    const final = outlook.finals.find((candidate) => (acc += candidate.p) > u) ?? outlook.finals[outlook.finals.length - 1]!;
    const score: [number, number] = [final.home, final.away];
    if (f.sport.kind !== 'tennis') return { score, late: final.late };
    // The winner takes the last set; in a three-set match the loser's set is the first or the second.
    const homeWon = final.home > final.away;
    const sets = final.home + final.away === 2 ? [homeWon, homeWon] : unit(...f.key, Salt.Score, 1) < 0.5 ? [!homeWon, homeWon, homeWon] : [homeWon, !homeWon, homeWon];
    return { score, sets };
  }
}

/**
 * An exchange's h2h back and lay markets around fair probabilities: back rounded down and lay up
 * to the cent from SIMULATED_EXCHANGE_SPREAD / 2 either side of the fair price, so the midpoint
 * is the fair price to within the rounding.
 */
function exchangeMarkets(plan: MarketPlan, fair: readonly number[]): ((lastUpdate: string) => unknown)[] {
  const half = SIMULATED_EXCHANGE_SPREAD / 2;
  const back = fair.map((p) => roundDown2(1 / (p * (1 + half))));
  const lay = fair.map((p) => Math.ceil(100 / (p * (1 - half))) / 100);
  return [market(plan, back, null), (lastUpdate: string) => ({ ...(market(plan, lay, null)(lastUpdate) as object), key: 'h2h_lay' })];
}

/** The line a soft book deals in a market: the off-line book's own, else the sharp's. */
function lineOf(plan: MarketPlan, bookKey: string): number | null {
  return bookKey === OFF_LINE_BOOK && plan.offLine !== null ? plan.offLine : plan.line;
}

function book(bookmaker: { key: string; title: string }, updatedAt: number, markets: ((lastUpdate: string) => unknown)[]) {
  const lastUpdate = iso(updatedAt);
  return { key: bookmaker.key, title: bookmaker.title, last_update: lastUpdate, markets: markets.map((m) => m(lastUpdate)) };
}

/** A market's v4 body: h2h outcomes, or spreads (the home handicap and its opposite) and totals at `line`. */
function market(plan: MarketPlan, prices: number[], line: number | null) {
  return (lastUpdate: string) => ({
    key: plan.key,
    last_update: lastUpdate,
    outcomes: plan.names.map((name, j) => {
      if (line === null) return { name, price: prices[j]! };
      return { name, price: prices[j]!, point: plan.key === 'spreads' && j === 1 ? 0 - line : line };
    }),
  });
}

/**
 * The score of one side so far. Points grow evenly; sets end one after another, the last at
 * the final whistle; goals land at their own moments, a late one (an empty net) near the end
 * and an overtime winner only with the final.
 */
function running(final: FinalScore, side: 0 | 1, progress: number, key: readonly number[]): number {
  const total = final.score[side];
  if (progress >= 1) return total;
  if (final.sets) {
    const n = final.sets.length;
    return final.sets.filter((homeWon, i) => (homeWon === (side === 0)) && (i + 1) / n <= progress).length;
  }
  if (total > 20) return Math.floor(total * progress);
  const late = final.late?.side === side ? 1 : 0;
  let scored = late && final.late!.at <= progress ? 1 : 0;
  for (let i = 0; i < total - late; i++) if (0.95 * unit(...key, Salt.Goal, side, i) <= progress) scored++;
  return scored;
}
