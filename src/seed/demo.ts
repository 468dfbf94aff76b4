/**
 * The embedded first-start demo (docs/VALUE_ENGINE.md, "Demo seed"): 90 days of settled engine
 * picks across every sport, today's picks (published as an operator does), a few held for
 * review, and one key per tier.
 *
 * Each pick is drawn the way the engine finds one: a fixture with a sharp reference market and
 * soft books, one of which offers a price 2 to 8 % above the reference's no-vig price; the
 * engine's own detection (detectValue) turns that into the pick, its provenance, confidence,
 * warnings and analysis, and the publish and settle paths store it, so the demo obeys the same
 * rules as real data. The price beats the reference's closing line by a few percent on average
 * (CLV), and the result is drawn from the fair probabilities, so ROI and win rate vary around
 * what the edges promise. Deterministic (seeded PRNG) so screenshots and docs stay stable.
 */
import { closingLineOf, type ClosingLine } from '../domain/closing-line.js';
import type { Clock } from '../domain/clock.js';
import { devig } from '../domain/devig.js';
import { readMarkets } from '../domain/engine-rules.js';
import { DRAW_SELECTION, MARKETS, OVER, UNDER, type Market } from '../domain/market.js';
import { roundTo } from '../domain/numbers.js';
import { parseOddsEvents, type OddsEvent, type OddsOutcome } from '../domain/odds-feed.js';
import type { PickResult } from '../domain/pick.js';
import { asStored } from '../domain/pick-shape.js';
import { lineResult, pickResult } from '../domain/settlement.js';
import { SPORT_SLUGS, type SportSlug } from '../domain/sports.js';
import { DEFAULT_DETECTION_OPTIONS, detectValue, type DetectionOptions, type ValueCandidate } from '../domain/value-detection.js';
import { ApiKeyEntity } from '../persistence/entities/api-key.js';
import { PickEntity } from '../persistence/entities/pick.js';
import type { Orm } from '../persistence/orm.js';
import type { Services } from '../services/index.js';
import type { EnginePickExtras, PublishPickInput, SettlePickInput } from '../services/picks.js';
import { closingLineRecord, enginePick } from '../services/value-engine/engine.js';

interface DemoSport {
  /** A v4 sport key whose first segment is the sport's slug. */
  sportKey: string;
  league: string;
  teams: string[];
  /** Relative share of the picks: soccer leads, as it does in betting. */
  weight: number;
  /** The draw's probability range in a three-way h2h market; null for a two-way one. */
  draw: [number, number] | null;
  /** The reference's lines (spreads: the home team's handicap), quarter lines among them; absent without lines. */
  lines?: { spreads: number[]; totals: number[] };
  /** Share of the sport's picks on spreads and totals (the rest h2h); 0.55 when absent. */
  lineShare?: number;
  /** How far from the line a final margin or total may land (goals, points, runs). */
  reach: number;
  /** How often a final lands on one given whole number near the line: a push, or a quarter line's half result. */
  landing: number;
  /** Final scores: the loser's (or each side's when level) range and the winner's margin; `winner` fixes it (sets, maps, fights). */
  score: { loser: [number, number]; margin: [number, number]; winner?: number };
  /** From kickoff to the final score record. */
  minutes: number;
}

const SPORTS: Record<SportSlug, DemoSport> = {
  soccer: {
    sportKey: 'soccer_epl',
    league: 'Premier League',
    teams: ['Arsenal', 'Chelsea', 'Liverpool', 'Manchester City', 'Tottenham', 'Newcastle', 'Aston Villa', 'Brighton'],
    weight: 30,
    draw: [0.22, 0.3],
    // Asian handicaps and totals, quarter lines as common as the others.
    lines: { spreads: [-1.25, -1, -0.75, -0.5, -0.25, 0, 0.25, 0.5, 0.75], totals: [2, 2.25, 2.5, 2.75, 3, 3.25] },
    lineShare: 0.65,
    reach: 3,
    landing: 0.27,
    score: { loser: [0, 2], margin: [1, 3] },
    minutes: 112,
  },
  basketball: {
    sportKey: 'basketball_nba',
    league: 'NBA',
    teams: ['Boston Celtics', 'Denver Nuggets', 'Milwaukee Bucks', 'Phoenix Suns', 'Miami Heat', 'Golden State Warriors'],
    weight: 12,
    draw: null,
    lines: { spreads: [-8.5, -5.5, -3, -1.5, 2.5, 4, 6.5], totals: [212.5, 216, 219.5, 224, 228.5] },
    reach: 16,
    landing: 0.03,
    score: { loser: [96, 116], margin: [1, 18] },
    minutes: 150,
  },
  americanfootball: {
    sportKey: 'americanfootball_nfl',
    league: 'NFL',
    teams: ['Kansas City Chiefs', 'Buffalo Bills', 'San Francisco 49ers', 'Philadelphia Eagles', 'Dallas Cowboys', 'Detroit Lions'],
    weight: 8,
    draw: null,
    lines: { spreads: [-7, -3.5, -3, -2.5, 1.5, 3, 6.5], totals: [41.5, 44, 47.5, 51] },
    reach: 14,
    landing: 0.06,
    score: { loser: [10, 27], margin: [1, 17] },
    minutes: 195,
  },
  icehockey: {
    sportKey: 'icehockey_nhl',
    league: 'NHL',
    teams: ['Edmonton Oilers', 'Florida Panthers', 'New York Rangers', 'Colorado Avalanche', 'Vegas Golden Knights', 'Boston Bruins'],
    weight: 8,
    draw: null,
    lines: { spreads: [-1.5, 1.5], totals: [5.5, 6, 6.5] },
    reach: 3,
    landing: 0.14,
    score: { loser: [0, 3], margin: [1, 3] },
    minutes: 155,
  },
  baseball: {
    sportKey: 'baseball_mlb',
    league: 'MLB',
    teams: ['Los Angeles Dodgers', 'New York Yankees', 'Atlanta Braves', 'Houston Astros', 'Texas Rangers', 'Baltimore Orioles'],
    weight: 7,
    draw: null,
    lines: { spreads: [-1.5, 1.5], totals: [7.5, 8, 8.5, 9] },
    reach: 4,
    landing: 0.1,
    score: { loser: [1, 5], margin: [1, 5] },
    minutes: 180,
  },
  tennis: {
    sportKey: 'tennis_atp_finals',
    league: 'ATP Tour',
    teams: ['Jannik Sinner', 'Carlos Alcaraz', 'Novak Djokovic', 'Alexander Zverev', 'Daniil Medvedev', 'Taylor Fritz'],
    weight: 10,
    draw: null,
    reach: 0,
    landing: 0,
    score: { loser: [0, 1], margin: [1, 2], winner: 2 },
    minutes: 120,
  },
  esports: {
    sportKey: 'esports_lol_worlds',
    league: 'LoL World Championship',
    teams: ['T1', 'Gen.G', 'G2 Esports', 'Bilibili Gaming', 'Fnatic', 'Team Liquid'],
    weight: 5,
    draw: null,
    reach: 0,
    landing: 0,
    score: { loser: [0, 2], margin: [1, 3], winner: 3 },
    minutes: 150,
  },
  mma: {
    sportKey: 'mma_mixed_martial_arts',
    league: 'UFC',
    teams: ['Islam Makhachev', 'Alex Pereira', 'Ilia Topuria', 'Tom Aspinall', 'Dricus du Plessis', 'Belal Muhammad'],
    weight: 5,
    draw: null,
    reach: 0,
    landing: 0,
    score: { loser: [0, 0], margin: [1, 1], winner: 1 },
    minutes: 45,
  },
  boxing: {
    sportKey: 'boxing_boxing',
    league: 'WBC Heavyweight',
    teams: ['Oleksandr Usyk', 'Tyson Fury', 'Anthony Joshua', 'Daniel Dubois', 'Zhilei Zhang', 'Joseph Parker'],
    weight: 3,
    draw: [0.03, 0.06],
    reach: 0,
    landing: 0,
    score: { loser: [0, 0], margin: [1, 1], winner: 1 },
    minutes: 60,
  },
  rugbyunion: {
    sportKey: 'rugbyunion_six_nations',
    league: 'Six Nations',
    teams: ['Ireland', 'France', 'England', 'Scotland', 'Wales', 'Italy'],
    weight: 6,
    draw: [0.03, 0.05],
    lines: { spreads: [-12.5, -7, -3.5, 2.5, 6.5], totals: [41.5, 45, 48.5] },
    reach: 15,
    landing: 0.04,
    score: { loser: [10, 27], margin: [1, 20] },
    minutes: 100,
  },
  cricket: {
    sportKey: 'cricket_ipl',
    league: 'Indian Premier League',
    teams: ['Mumbai Indians', 'Chennai Super Kings', 'Kolkata Knight Riders', 'Rajasthan Royals', 'Gujarat Titans', 'Delhi Capitals'],
    weight: 6,
    draw: null,
    reach: 0,
    landing: 0,
    score: { loser: [140, 190], margin: [1, 40] },
    minutes: 200,
  },
};

/** The sharp reference the engine prices against by default. */
const REFERENCE_BOOK = { key: 'pinnacle', title: 'Pinnacle' };

/**
 * The soft books of the history. Taken as tax-free (tax rate 0): the track record counts profit
 * at the book's price, so with a tax the record's ROI would promise more than the post-tax edge
 * that made the pick, and a 2 % edge before a 5.3 % tax would be no edge at all.
 */
const SOFT_BOOKS = [
  { key: 'bet365', title: 'Bet365' },
  { key: 'bwin', title: 'Bwin' },
  { key: 'interwetten', title: 'Interwetten' },
  { key: 'betvictor', title: 'BetVictor' },
];
const SOFT_TAX_RATE = 0;

/**
 * The edges of published demo picks (post-tax = pre-tax at these books), drawn as
 * min + (max - min) x u^2: more small edges than large, as an engine with a threshold finds them.
 */
export const DEMO_EDGE_RANGE = Object.freeze({ min: 0.02, max: 0.08 });
/** CLV = this share of the pick's edge plus noise: the market takes back part of an edge by kickoff, not all. */
const CLV_SHARE_OF_EDGE = 0.75;
const CLV_NOISE = 0.03;
/** Held picks: their post-tax edge is the review edge plus this much (too good to be true). */
const HELD_EXTRA_EDGE = Object.freeze({ min: 0.02, max: 0.12 });

export const DEFAULT_DEMO_SEED = 20261122;
const HISTORY_DAYS = 90;
/** How many picks a day of history has (about 2.6 on average). */
const PICKS_PER_DAY = [
  { picks: 1, share: 0.1 },
  { picks: 2, share: 0.35 },
  { picks: 3, share: 0.4 },
  { picks: 4, share: 0.15 },
];
const HELD_PICKS = 3;

const SECOND = 1000;
const MINUTE = 60 * SECOND;
const HOUR = 60 * MINUTE;
const DAY = 24 * HOUR;

/** Kickoffs fall on a quarter hour, as real schedules do. */
const onQuarterHour = (ms: number): number => Math.floor(ms / (15 * MINUTE)) * 15 * MINUTE;

/** mulberry32: small, fast, deterministic. */
function prng(seed: number): () => number {
  let state = seed >>> 0;
  return () => {
    state = (state + 0x6d2b79f5) >>> 0;
    let t = state;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

/** The draws a demo pick needs, all from one seeded stream. */
class Chance {
  private readonly next: () => number;

  constructor(seed: number) {
    this.next = prng(seed);
  }

  unit(): number {
    return this.next();
  }

  between(min: number, max: number): number {
    return min + (max - min) * this.next();
  }

  /** An integer in [min, max]. */
  int(min: number, max: number): number {
    return min + Math.floor(this.next() * (max - min + 1));
  }

  pick<T>(items: readonly T[]): T {
    return items[Math.floor(this.next() * items.length)]!;
  }

  weighted<T>(items: readonly T[], weightOf: (item: T) => number): T {
    let roll = this.next() * items.reduce((sum, item) => sum + weightOf(item), 0);
    for (const item of items) {
      roll -= weightOf(item);
      if (roll < 0) return item;
    }
    return items.at(-1)!;
  }

  /** Standard normal (Box-Muller). */
  gauss(): number {
    return Math.sqrt(-2 * Math.log(1 - this.next())) * Math.cos(2 * Math.PI * this.next());
  }

  hex(length: number): string {
    let text = '';
    while (text.length < length) text += Math.floor(this.next() * 16).toString(16);
    return text;
  }
}

/** A demo pick: what the publish path gets, and how it settles (null: still open). */
export interface DemoPick {
  input: PublishPickInput;
  /** What the engine adds (event, provenance, analysis); null for a pick published as an operator does. */
  extras: EnginePickExtras | null;
  /** An operator pick's match analysis (an engine pick's is in `extras`). */
  analysis: string | null;
  settlement: Omit<SettlePickInput, 'id'> | null;
}

export interface DemoSeedOptions {
  /** Another seed draws another history (the demo uses DEFAULT_DEMO_SEED). */
  seed?: number;
  /** PICK_REVIEW_EDGE: held picks are drawn at or above it; the engine's default when absent. */
  reviewEdge?: number;
}

export interface SeedResult {
  keys: Record<string, string>;
  picks: number;
}

/** Seeds only an empty database (no picks and no keys); returns null when there was data. */
export async function seedDemo(services: Services, orm: Orm, clock: Clock, options: DemoSeedOptions = {}): Promise<SeedResult | null> {
  const em = orm.em.fork();
  if ((await em.count(PickEntity, {})) > 0 || (await em.count(ApiKeyEntity, {})) > 0) return null;

  const picks = drawDemoPicks(clock.now(), options);
  for (const { input, extras, analysis, settlement } of picks) {
    if (!extras) {
      const published = await services.picks.publish(input);
      if (analysis !== null) await services.analyses.upsert({ matchId: published.id, analysis });
      continue;
    }
    const [published] = await services.picks.publishFromEngine([{ input, extras }]);
    if (!published || published instanceof Error) throw published ?? new Error(`the demo pick of event ${extras.eventId} was not created`);
    if (settlement) await services.picks.settle({ id: published.id, ...settlement });
  }

  const keys: Record<string, string> = {};
  for (const tier of ['starter', 'growth', 'enterprise'] as const) {
    const created = await services.apiKeys.create({ tier, label: `Demo ${tier} key` });
    keys[tier] = created.key;
  }
  return { keys, picks: picks.length };
}

/**
 * The demo's picks, oldest first: one to four a day for 90 days, settled a few minutes after
 * their match ended; one per sport published now for later today; a few held for review.
 * Pure: the same `now` and options give the same picks.
 */
export function drawDemoPicks(now: Date, options: DemoSeedOptions = {}): DemoPick[] {
  const chance = new Chance(options.seed ?? DEFAULT_DEMO_SEED);
  const reviewEdge = options.reviewEdge ?? DEFAULT_DETECTION_OPTIONS.reviewEdge;
  const detection: DetectionOptions = {
    ...DEFAULT_DETECTION_OPTIONS,
    reviewEdge,
    taxRates: Object.fromEntries(SOFT_BOOKS.map((book) => [book.key, SOFT_TAX_RATE])),
  };
  // A configured review edge below 8 % caps the published edges: the engine would hold the others.
  const published = { min: DEMO_EDGE_RANGE.min, max: Math.min(DEMO_EDGE_RANGE.max, reviewEdge - 0.001) };
  const drawEdge = () => published.min + (published.max - published.min) * chance.unit() ** 2;
  const nowMs = now.getTime();
  const picks: DemoPick[] = [];
  const sports = SPORT_SLUGS.map((slug) => ({ slug, ...SPORTS[slug] }));

  for (let daysAgo = HISTORY_DAYS; daysAgo >= 1; daysAgo -= 1) {
    const perDay = chance.weighted(PICKS_PER_DAY, (entry) => entry.share).picks;
    for (let i = 0; i < perDay; i += 1) {
      const sport = chance.weighted(sports, (s) => s.weight).slug;
      const kickoffMs = onQuarterHour(nowMs - daysAgo * DAY + chance.int(-6, 2) * HOUR);
      // Found 3 to 30 hours ahead: never on today's UTC date, which belongs to today's picks.
      const detectedMs = kickoffMs - chance.int(3, 30) * HOUR - chance.int(0, 59) * MINUTE;
      const edge = drawEdge();
      const pick = drawPick(chance, detection, sport, new Date(kickoffMs), new Date(detectedMs), { edge, range: published, held: false });
      const settlement = settle(chance, detection, sport, pick, new Date(kickoffMs), edge, nowMs);
      picks.push({ input: pick.input, extras: pick.extras, analysis: null, settlement });
    }
  }
  // Today: fresh picks for the public endpoint, one per sport, kicking off later. Published as
  // an operator publishes a pick: no feed will ever report their events, so as engine picks
  // they would stay open after kickoff; as operator picks they wait for the operator's settlement.
  for (const sport of SPORT_SLUGS) {
    const kickoff = new Date(onQuarterHour(nowMs + chance.int(2, 32) * HOUR));
    const { input, extras } = drawPick(chance, detection, sport, kickoff, now, { edge: drawEdge(), range: published, held: false });
    picks.push({ input, extras: null, analysis: extras.analysis, settlement: null });
  }
  // Held for review: an edge too good to be true, invisible until approved.
  for (let i = 0; i < HELD_PICKS; i += 1) {
    const sport = chance.weighted(sports, (s) => s.weight).slug;
    const edge = reviewEdge + chance.between(HELD_EXTRA_EDGE.min, HELD_EXTRA_EDGE.max);
    const kickoff = new Date(onQuarterHour(nowMs + (4 + i) * HOUR));
    const range = { min: reviewEdge, max: Number.POSITIVE_INFINITY };
    const { input, extras } = drawPick(chance, detection, sport, kickoff, now, { edge, range, held: true });
    picks.push({ input, extras, analysis: null, settlement: null });
  }
  return picks;
}

/** What a drawn pick carries beyond the publish input: the candidate detection found, and the market it priced. */
interface DrawnPick {
  input: PublishPickInput;
  extras: EnginePickExtras;
  candidate: ValueCandidate;
  market: DrawnMarket;
}

interface DrawnMarket {
  key: Market;
  /** Outcomes in feed order, with their points on a line market. */
  outcomes: { name: string; point?: number }[];
  /** The fair probabilities the reference's prices come from, in outcome order. */
  fair: number[];
  /** The outcome picked. */
  selection: number;
}

/**
 * One fixture with a reference market and soft books, one of which offers `edge` over the
 * reference's no-vig price for one outcome; the engine's detection makes the pick of it.
 */
function drawPick(
  chance: Chance,
  detection: DetectionOptions,
  sport: SportSlug,
  kickoff: Date,
  detectedAt: Date,
  wanted: { edge: number; range: { min: number; max: number }; held: boolean },
): DrawnPick {
  const profile = SPORTS[sport];
  const homeTeam = chance.pick(profile.teams);
  let awayTeam = chance.pick(profile.teams);
  while (awayTeam === homeTeam) awayTeam = chance.pick(profile.teams);
  const market = drawMarket(chance, profile, homeTeam, awayTeam);
  const eventId = chance.hex(32);

  const referenceMargin = chance.between(0.02, 0.03);
  const referencePrices = sharpPrices(market.fair, referenceMargin);
  // The engine's fair price is the reference's devigged one, not the probabilities drawn above.
  const fairProbability = devig(referencePrices, detection.devigMethod).probabilities[market.selection]!;
  const [offering, ...others] = shuffled(chance, SOFT_BOOKS);
  const price = offeredPrice(1 / fairProbability, wanted.edge, wanted.range);
  const stamp = (ageSeconds: number) => new Date(detectedAt.getTime() - ageSeconds * SECOND).toISOString();
  const v4Market = (prices: number[], lastUpdate: string) => ({
    key: market.key,
    last_update: lastUpdate,
    outcomes: market.outcomes.map((outcome, j) => ({ ...outcome, price: prices[j]! })),
  });
  const book = (bookmaker: { key: string; title: string }, prices: number[]) => {
    const lastUpdate = stamp(chance.int(5, 50));
    return { key: bookmaker.key, title: bookmaker.title, last_update: lastUpdate, markets: [v4Market(prices, lastUpdate)] };
  };
  const body = {
    id: eventId,
    sport_key: profile.sportKey,
    sport_title: profile.league,
    commence_time: kickoff.toISOString(),
    home_team: homeTeam,
    away_team: awayTeam,
    bookmakers: [
      book(REFERENCE_BOOK, referencePrices),
      book(offering!, softPrices(market.fair, chance.between(0.04, 0.06), { index: market.selection, price })),
      ...others.slice(0, chance.int(1, others.length)).map((other) => book(other, softPrices(market.fair, chance.between(0.04, 0.08)))),
    ],
  };
  const parsed = parseOddsEvents([body]);
  if (parsed.error !== undefined || parsed.events.length !== 1) throw new Error(`the demo event ${eventId} does not parse: ${parsed.error ?? JSON.stringify(parsed.skipped)}`);
  const event = readMarkets(parsed.events[0]!, sport, MARKETS);
  const selection = market.outcomes[market.selection]!;
  const candidate = detectValueFor(event, detection, detectedAt, market.key, selection.name, selection.point ?? null);
  if (candidate.bookmakerKey !== offering!.key || candidate.held !== wanted.held) {
    throw new Error(`the demo event ${eventId}: detection chose ${candidate.bookmakerKey} (held ${candidate.held}), not ${offering!.key} (held ${wanted.held})`);
  }
  const published = enginePick({ ...event, sport, generation: 0 }, candidate, detectedAt, undefined);
  if (!wanted.held) published.input.publishedAt = detectedAt.toISOString();
  // No odds poll ever watched a seeded pick after publication: its availability stays unknown,
  // and the record's availability figures count only picks the engine really watched.
  published.extras.watched = false;
  return { ...published, candidate, market };
}

/** The detected candidate of one selection; a demo fixture detection makes no pick of is a bug here. */
function detectValueFor(event: OddsEvent, detection: DetectionOptions, now: Date, market: Market, selection: string, line: number | null): ValueCandidate {
  const outcome = detectValue(event, detection, now);
  const candidate = outcome.candidates.find((c) => c.market === market && c.selection === selection && c.line === line);
  if (!candidate) {
    const rejected = outcome.rejected.find((r) => r.market === market && r.selection === selection);
    throw new Error(`the demo event ${event.id}: no pick of ${market} ${selection} (${rejected?.reason ?? 'not listed'})`);
  }
  return candidate;
}

function shuffled<T>(chance: Chance, items: readonly T[]): T[] {
  const copy = [...items];
  for (let i = copy.length - 1; i > 0; i -= 1) {
    const j = Math.floor(chance.unit() * (i + 1));
    [copy[i], copy[j]] = [copy[j]!, copy[i]!];
  }
  return copy;
}

/** The market of a pick: h2h in every sport, spreads and totals too where the sport has lines; and the outcome picked. */
function drawMarket(chance: Chance, profile: DemoSport, homeTeam: string, awayTeam: string): DrawnMarket {
  const roll = chance.unit();
  const lineShare = profile.lineShare ?? 0.55;
  const key: Market = !profile.lines || roll >= lineShare ? 'h2h' : roll < lineShare * 0.55 ? 'spreads' : 'totals';
  if (key === 'h2h') {
    const home = chance.between(0.25, 0.75);
    if (!profile.draw) return { key, outcomes: [{ name: homeTeam }, { name: awayTeam }], fair: [home, 1 - home], selection: chance.unit() < 0.5 ? 0 : 1 };
    const draw = chance.between(...profile.draw);
    const side = chance.unit();
    return {
      key,
      outcomes: [{ name: homeTeam }, { name: awayTeam }, { name: DRAW_SELECTION }],
      fair: [(1 - draw) * home, (1 - draw) * (1 - home), draw],
      // A draw is picked now and then where it is likely enough to be priced loosely.
      selection: draw > 0.15 && side < 0.15 ? 2 : side < 0.6 ? 0 : 1,
    };
  }
  const first = chance.between(0.4, 0.6);
  const selection = chance.unit() < 0.5 ? 0 : 1;
  if (key === 'spreads') {
    const handicap = chance.pick(profile.lines!.spreads);
    return { key, outcomes: [{ name: homeTeam, point: handicap }, { name: awayTeam, point: 0 - handicap }], fair: [first, 1 - first], selection };
  }
  const total = chance.pick(profile.lines!.totals);
  return { key, outcomes: [{ name: OVER, point: total }, { name: UNDER, point: total }], fair: [first, 1 - first], selection };
}

/**
 * A sharp book's prices (three decimals) for fair probabilities q with margin m: implied
 * probabilities q^(1/k) summing to 1 + m, so the power devig gives q back (to rounding).
 */
function sharpPrices(fair: readonly number[], margin: number): number[] {
  const booksum = (k: number) => fair.reduce((sum, q) => sum + q ** (1 / k), 0);
  let low = 1;
  let high = 3;
  for (let i = 0; i < 60; i += 1) {
    const k = (low + high) / 2;
    if (booksum(k) < 1 + margin) low = k;
    else high = k;
  }
  return fair.map((q) => Math.round(1000 / q ** (1 / low)) / 1000);
}

/**
 * A soft book's prices (two decimals, rounded down in its favour) with margin m; `offer` prices
 * one outcome generously, and the book still keeps its margin on the whole market by
 * shortening the others, as the engine expects of a real book.
 */
function softPrices(fair: readonly number[], margin: number, offer?: { index: number; price: number }): number[] {
  const prices = fair.map((q) => Math.max(1.01, Math.floor(100 / (q * (1 + margin))) / 100));
  if (!offer) return prices;
  prices[offer.index] = offer.price;
  const othersWanted = 1 + margin - 1 / offer.price;
  const others = prices.reduce((sum, price, j) => (j === offer.index ? sum : sum + 1 / price), 0);
  if (others >= othersWanted) return prices;
  const scale = othersWanted / others;
  return prices.map((price, j) => (j === offer.index ? price : Math.max(1.01, Math.floor((100 * price) / scale) / 100)));
}

/**
 * The offered price (two decimals) closest to (1 + edge) x fair whose edge, both as detection
 * computes it and as stored (4-decimal prices), lies in `range`.
 */
function offeredPrice(fairOdds: number, edge: number, range: { min: number; max: number }): number {
  const storedFair = asStored('referenceFairOdds', fairOdds);
  const edges = (price: number) => [(price * (1 - SOFT_TAX_RATE)) / fairOdds - 1, roundTo((price * (1 - SOFT_TAX_RATE)) / storedFair - 1, 4)];
  let price = Math.round(100 * fairOdds * (1 + edge)) / 100;
  for (let step = 0; step < 100 && edges(price).some((e) => e < range.min); step += 1) price = Math.round(100 * price + 1) / 100;
  for (let step = 0; step < 100 && edges(price).some((e) => e > range.max); step += 1) price = Math.round(100 * price - 1) / 100;
  return price;
}

/**
 * How a history pick settles: the reference's close (CLV = 0.75 x edge + N(0, 3 %)), recorded in
 * provenance as the engine records it; the result drawn from the fair probabilities, with a final
 * score that gives it by the settlement rules; settled a few minutes after the match ended.
 */
function settle(chance: Chance, detection: DetectionOptions, sport: SportSlug, pick: DrawnPick, kickoff: Date, edge: number, nowMs: number): Omit<SettlePickInput, 'id'> {
  const { candidate, market } = pick;
  const close = closingLine(chance, detection, pick, kickoff, CLV_SHARE_OF_EDGE * edge + CLV_NOISE * chance.gauss());
  pick.extras.provenance.closingLine = closingLineRecord(close);

  const profile = SPORTS[sport];
  const finalScore = drawFinal(chance, profile, pick);
  const shape = { market: market.key, selection: candidate.selection, line: candidate.line, referenceOutcomes: market.outcomes.length };
  const result = pickResult(shape, { homeTeam: pick.input.homeTeam, awayTeam: pick.input.awayTeam, ...finalScore });
  if (result === null) throw new Error(`the demo final of event ${pick.extras.eventId} does not settle its pick`);
  const endedAt = new Date(kickoff.getTime() + profile.minutes * MINUTE);
  const settledAt = new Date(Math.min(endedAt.getTime() + chance.int(1, 6) * MINUTE, nowMs));
  const scores = [
    { name: pick.input.homeTeam, score: finalScore.homeScore },
    { name: pick.input.awayTeam, score: finalScore.awayScore },
  ];
  return {
    result,
    closingOdds: roundTo(close.fairOdds, 4),
    settledAt: settledAt.toISOString(),
    settledFrom: {
      eventId: pick.extras.eventId,
      homeTeam: pick.input.homeTeam,
      awayTeam: pick.input.awayTeam,
      commenceTime: kickoff.toISOString(),
      scores,
      lastUpdate: endedAt.toISOString(),
      receivedAt: settledAt.toISOString(),
    },
    finalScore: { home: finalScore.homeScore, away: finalScore.awayScore },
  };
}

/**
 * The reference's last market before kickoff, priced so the pick's close is odds / (1 + clv):
 * the selection's probability moves there and the other outcomes share the rest as before.
 */
function closingLine(chance: Chance, detection: DetectionOptions, pick: DrawnPick, kickoff: Date, clv: number): ClosingLine {
  const { market, candidate } = pick;
  const selected = Math.min(0.97, (1 + clv) / candidate.price);
  const before = candidate.provenance.references[0]!.fairProbabilities;
  const rest = market.outcomes.reduce((sum, outcome, j) => (j === market.selection ? sum : sum + before[outcome.name]!), 0);
  const fair = market.outcomes.map((outcome, j) => (j === market.selection ? selected : (before[outcome.name]! * (1 - selected)) / rest));
  const prices: OddsOutcome[] = sharpPrices(fair, chance.between(0.02, 0.03)).map((price, j) => ({ ...market.outcomes[j]!, price }));
  const at = new Date(kickoff.getTime() - chance.int(5, 90) * SECOND);
  const close = closingLineOf(
    { selection: candidate.selection, line: candidate.line, kickoffAt: kickoff },
    [{ bookmaker: REFERENCE_BOOK.key, prices, updatedAt: at }],
    detection.references,
    detection.devigMethod,
    3600,
  );
  if (!close) throw new Error(`the demo event ${pick.extras.eventId} has no closing line`);
  return close;
}

/**
 * A final score drawn from the fair probabilities: in h2h, which side wins (or a draw) by the
 * reference's no-vig probabilities; on a line, the pick's result by the distribution that makes
 * the fair price a fair bet (a push or a quarter line's half result when the final lands on the
 * whole number next to the line), then a score that gives that result.
 */
function drawFinal(chance: Chance, profile: DemoSport, pick: DrawnPick): { homeScore: number; awayScore: number } {
  const { market, candidate } = pick;
  const fair = candidate.provenance.references[0]!.fairProbabilities;
  if (market.key === 'h2h') {
    const roll = chance.unit();
    const home = fair[market.outcomes[0]!.name]!;
    const away = fair[market.outcomes[1]!.name]!;
    const winner = roll < home ? 'home' : roll < home + away || !profile.draw ? 'away' : 'draw';
    return h2hScore(chance, profile, winner);
  }
  const point = candidate.line!;
  // The selection's margin at a point for a final "value" (the selected team's lead, or the total).
  const marginAt = (value: number) => (line: number) => (market.key === 'spreads' ? value + line : candidate.selection === OVER ? value - line : line - value);
  const centre = market.key === 'spreads' ? -point : point;
  const values: number[] = [];
  for (let value = Math.ceil(centre - profile.reach); value <= Math.floor(centre + profile.reach); value += 1) {
    // Spreads: a level score only where the sport can end level; totals: never below zero.
    if (market.key === 'spreads' ? value !== 0 || profile.draw : value >= 0) values.push(value);
  }
  const byResult = new Map<PickResult, number[]>();
  for (const value of values) {
    const result = lineResult(point, marginAt(value));
    if (result !== null) byResult.set(result, [...(byResult.get(result) ?? []), value]);
  }
  const result = lineOutcome(chance, candidate.fairProbability, profile.landing, byResult);
  const value = chance.pick(byResult.get(result)!);
  if (market.key === 'totals') return splitTotal(chance, profile, value);
  // `value` is the selected team's lead over the other.
  const low = chance.int(...profile.score.loser);
  const [own, other] = value >= 0 ? [low + value, low] : [low, low - value];
  return candidate.selection === pick.input.homeTeam ? { homeScore: own, awayScore: other } : { homeScore: other, awayScore: own };
}

/**
 * The result of a line pick with fair probability p: on a half line won with p; on a whole line
 * void with the landing share and won with (1 - landing) p; on a quarter line the half result
 * with the landing share and won so that the fair price breaks even.
 */
function lineOutcome(chance: Chance, p: number, landing: number, possible: ReadonlyMap<PickResult, number[]>): PickResult {
  const odds = 1 / p;
  let won = p;
  let special: PickResult | null = null;
  if (possible.has('void')) {
    special = 'void';
    won = (1 - landing) * p;
  } else if (possible.has('half_lost')) {
    special = 'half_lost';
    won = (1 - landing / 2) * p;
  } else if (possible.has('half_won')) {
    special = 'half_won';
    won = p * (1 - (landing * (odds + 1)) / 2);
  }
  const roll = chance.unit();
  if (roll < won) return 'won';
  if (special !== null && roll < won + landing) return special;
  return 'lost';
}

function h2hScore(chance: Chance, profile: DemoSport, winner: 'home' | 'away' | 'draw'): { homeScore: number; awayScore: number } {
  const { loser, margin, winner: fixedWinner } = profile.score;
  if (winner === 'draw') {
    const level = chance.int(...loser);
    return { homeScore: level, awayScore: level };
  }
  const low = chance.int(...loser);
  const high = fixedWinner ?? low + chance.int(...margin);
  return winner === 'home' ? { homeScore: high, awayScore: low } : { homeScore: low, awayScore: high };
}

/** A total split between the sides; never level in a sport that cannot end level. */
function splitTotal(chance: Chance, profile: DemoSport, total: number): { homeScore: number; awayScore: number } {
  let homeScore = Math.round(total * chance.between(0.35, 0.65));
  let awayScore = total - homeScore;
  if (!profile.draw && homeScore === awayScore) {
    homeScore += 1;
    awayScore -= 1;
  }
  return { homeScore, awayScore };
}
