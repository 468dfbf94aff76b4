/**
 * The odds feed (docs/VALUE_ENGINE.md, "The odds feed (The Odds API v4)"): untrusted JSON of
 * The Odds API v4 `/odds` and `/scores` endpoints -> typed, validated records. Nothing here
 * throws on bad input: a body that is not an array is refused whole (`error`), a malformed event
 * is skipped with a reason, and inside a good event a malformed bookmaker or market is
 * dropped with a reason while the others are kept. Pushed events (`ingestOdds`, `ingestScores`,
 * camelCase) go through the same rules via validateOddsEvent / validateScoreEvent.
 */
import { DRAW_SELECTION, lineProblem, MARKETS, OVER, UNDER, type Market } from './market.js';
import { MAX_DECIMAL_ODDS } from './odds.js';
import { MAX_TEAM_NAME_LENGTH } from './pick.js';
import { isSportSlug, type SportSlug } from './sports.js';
import { textViolation, type TextRule } from './text.js';
import { parseIsoTimestamp } from './time.js';

export interface OddsOutcome {
  name: string;
  price: number;
  /** spreads: this team's handicap; totals: the total. Absent for h2h. */
  point?: number;
  /**
   * h2h of an exchange: its lay price of this outcome, from the bookmaker's `h2h_lay` market
   * (`price` is the back price). Absent where the bookmaker quoted no lay for it.
   */
  lay?: number;
}

export interface OddsMarket {
  key: Market;
  /**
   * Which market of its key this is: null for h2h; the home team's handicap for spreads (the
   * away team's is its opposite); the point for totals. Books are compared only at equal lines.
   */
  line: number | null;
  /** The market's own `last_update`; null when the feed leaves it out (older v4 responses). */
  lastUpdate: Date | null;
  outcomes: OddsOutcome[];
}

export interface OddsBookmaker {
  key: string;
  title: string;
  lastUpdate: Date;
  /** At most one market per key (h2h, spreads, totals): a bookmaker without a usable one is left out of the event. */
  markets: OddsMarket[];
}

export interface OddsEvent {
  id: string;
  sportKey: string;
  sportTitle: string;
  commenceTime: Date;
  homeTeam: string;
  awayTeam: string;
  bookmakers: OddsBookmaker[];
}

export interface TeamScore {
  name: string;
  score: number;
}

export interface ScoreEvent {
  id: string;
  sportKey: string;
  commenceTime: Date;
  completed: boolean;
  homeTeam: string;
  awayTeam: string;
  /** null before the game starts (the feed sends null). */
  scores: TeamScore[] | null;
  lastUpdate: Date | null;
}

/** One event skipped, or one bookmaker or market dropped from a kept event (the reason says which). */
/** One entry of v4's events list. */
export interface ScheduledFeedEvent {
  id: string;
  sportKey: string;
  commenceTime: Date;
  homeTeam: string;
  awayTeam: string;
}

export interface FeedSkip {
  eventId: string | null;
  reason: string;
  /**
   * Logged on its own, once per event and reason (a refused final): the poll's summary of
   * skipped entries leaves it out, so a state that lasts many polls is one log line.
   */
  loggedOnce?: true;
}

export interface ParsedFeed<T> {
  events: T[];
  skipped: FeedSkip[];
  /** Set when the whole body is refused; `events` is then empty. */
  error?: string;
}

export type FieldNaming = 'feed' | 'input';

/** Ids and keys; names have their own, smaller bounds below. */
export const MAX_FEED_STRING_LENGTH = 200;
/** The service stores a bookmaker name in at most 80 and a league in at most 120 characters. */
export const MAX_BOOKMAKER_TITLE_LENGTH = 80;
export const MAX_SPORT_TITLE_LENGTH = 120;
/** Far above any real feed (a v4 response lists a few dozen bookmakers per event). */
export const MAX_BOOKMAKERS_PER_EVENT = 100;
export const MAX_MARKETS_PER_BOOKMAKER = 50;
/** Scores beyond this are a broken feed, not a game. */
export const MAX_SCORE = 999_999;

export const H2H_MARKET = 'h2h';
const isMarketKey = (key: string): key is Market => (MARKETS as readonly string[]).includes(key);

// Same shape as the service's bookmaker slug, widened with `_` for keys such as betfair_ex_eu.
export const BOOKMAKER_KEY = /^[a-z0-9][a-z0-9_-]{0,39}$/;
// v4 sport keys: lowercase words joined by `_` (soccer_epl, tennis_atp_finals).
const SPORT_KEY = /^[a-z0-9]+(?:_[a-z0-9]+)*$/;
const SCORE_DIGITS = /^\d{1,6}$/;

type FieldName =
  | 'id'
  | 'sportKey'
  | 'sportTitle'
  | 'commenceTime'
  | 'homeTeam'
  | 'awayTeam'
  | 'bookmakers'
  | 'key'
  | 'title'
  | 'lastUpdate'
  | 'markets'
  | 'outcomes'
  | 'name'
  | 'price'
  | 'point'
  | 'completed'
  | 'scores'
  | 'score';

const FEED_NAMES: Record<FieldName, string> = {
  id: 'id',
  sportKey: 'sport_key',
  sportTitle: 'sport_title',
  commenceTime: 'commence_time',
  homeTeam: 'home_team',
  awayTeam: 'away_team',
  bookmakers: 'bookmakers',
  key: 'key',
  title: 'title',
  lastUpdate: 'last_update',
  markets: 'markets',
  outcomes: 'outcomes',
  name: 'name',
  price: 'price',
  point: 'point',
  completed: 'completed',
  scores: 'scores',
  score: 'score',
};

const INPUT_NAMES: Record<FieldName, string> = Object.fromEntries(
  Object.keys(FEED_NAMES).map((k) => [k, k]),
) as Record<FieldName, string>;

/** Thrown inside this module only, caught at the level (event, bookmaker, market) it refuses. */
class Refusal extends Error {}

type Obj = Record<string, unknown>;

function isObject(value: unknown): value is Obj {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

function describeType(value: unknown): string {
  if (value === null) return 'null';
  if (value === undefined) return 'undefined';
  if (Array.isArray(value)) return 'an array';
  return typeof value === 'object' ? 'an object' : `a ${typeof value}`;
}

class Reader {
  constructor(
    readonly names: Record<FieldName, string>,
    private readonly obj: Obj,
    private readonly path: string,
  ) {}

  label(field: FieldName): string {
    return this.path + this.names[field];
  }

  /** Own properties only: a hostile `__proto__` or inherited `toString` is never read as data. */
  raw(field: FieldName): unknown {
    const name = this.names[field];
    return Object.hasOwn(this.obj, name) ? this.obj[name] : undefined;
  }

  refuse(field: FieldName, problem: string): never {
    throw new Refusal(`${this.label(field)} ${problem}`);
  }

  text(field: FieldName, rule: TextRule, maxLength: number, trim: boolean): string {
    const value = this.raw(field);
    if (value === undefined) this.refuse(field, 'is missing');
    if (typeof value !== 'string') this.refuse(field, `must be a string, not ${describeType(value)}`);
    // Checked before trimming or scanning so a hostile megabyte string costs nothing more.
    if (value.length > maxLength * 2 + 64) this.refuse(field, `must be at most ${maxLength} characters`);
    const text = trim ? value.trim() : value;
    if (text === '') this.refuse(field, 'must not be empty');
    if ([...text].length > maxLength) this.refuse(field, `must be at most ${maxLength} characters`);
    const violation = textViolation(text, rule);
    if (violation) this.refuse(field, violation);
    return text;
  }

  pattern(field: FieldName, pattern: RegExp, describe: string): string {
    const value = this.text(field, 'line', MAX_FEED_STRING_LENGTH, false);
    if (!pattern.test(value)) this.refuse(field, `must be ${describe}`);
    return value;
  }

  time(field: FieldName): Date {
    const value = this.raw(field);
    if (value === undefined) this.refuse(field, 'is missing');
    const parsed = toTime(value);
    if (!parsed) this.refuse(field, timeProblem(value));
    return parsed;
  }

  optionalTime(field: FieldName): Date | null {
    const value = this.raw(field);
    if (value === undefined || value === null) return null;
    const parsed = toTime(value);
    if (!parsed) this.refuse(field, timeProblem(value));
    return parsed;
  }

  array(field: FieldName, max: number): unknown[] {
    const value = this.raw(field);
    if (value === undefined) this.refuse(field, 'is missing');
    if (!Array.isArray(value)) this.refuse(field, `must be an array, not ${describeType(value)}`);
    if (value.length > max) this.refuse(field, `must have at most ${max} entries (has ${value.length})`);
    // Array.from turns holes of a sparse array into undefined, which every check then refuses.
    return Array.from(value);
  }
}

function toTime(value: unknown): Date | null {
  // Pushed input may arrive as a Date already (GraphQL DateTime scalar).
  if (value instanceof Date) return Number.isNaN(value.getTime()) ? null : value;
  return typeof value === 'string' ? parseIsoTimestamp(value) : null;
}

function timeProblem(value: unknown): string {
  if (typeof value === 'number') return 'must be an ISO 8601 time, not a number (ask the feed for dateFormat=iso)';
  if (typeof value !== 'string' && !(value instanceof Date)) return `must be an ISO 8601 time string, not ${describeType(value)}`;
  return 'must be a valid ISO 8601 time with a zone (such as 2026-11-24T19:30:00Z)';
}

function readId(names: Record<FieldName, string>, input: unknown): string | null {
  if (!isObject(input)) return null;
  try {
    return new Reader(names, input, '').text('id', 'line', MAX_FEED_STRING_LENGTH, false);
  } catch {
    return null;
  }
}

interface EventCore {
  id: string;
  sportKey: string;
  commenceTime: Date;
  homeTeam: string;
  awayTeam: string;
}

function readEventCore(r: Reader): EventCore {
  const id = r.text('id', 'line', MAX_FEED_STRING_LENGTH, false);
  const sportKey = r.pattern('sportKey', SPORT_KEY, 'lowercase words joined by "_" (such as soccer_epl)');
  const commenceTime = r.time('commenceTime');
  const homeTeam = r.text('homeTeam', 'name', MAX_TEAM_NAME_LENGTH, true);
  const awayTeam = r.text('awayTeam', 'name', MAX_TEAM_NAME_LENGTH, true);
  if (homeTeam === awayTeam) r.refuse('awayTeam', 'must differ from the home team');
  return { id, sportKey, commenceTime, homeTeam, awayTeam };
}

/** The outcomes each market key allows for an event, and how many a market lists. */
function outcomeRules(key: Market, homeTeam: string, awayTeam: string): { allowed: string[]; min: number; max: number; describe: string } {
  switch (key) {
    case 'h2h':
      // Two sides, plus "Draw" in three-way sports: nothing else is an h2h market of this event.
      return { allowed: [homeTeam, awayTeam, DRAW_SELECTION], min: 2, max: 3, describe: `the home team, the away team or "${DRAW_SELECTION}"` };
    case 'spreads':
      return { allowed: [homeTeam, awayTeam], min: 2, max: 2, describe: 'the home team or the away team' };
    case 'totals':
      return { allowed: [OVER, UNDER], min: 2, max: 2, describe: `"${OVER}" or "${UNDER}"` };
  }
}

/**
 * One market of a known key. Spreads and totals carry a `point` on each outcome, a multiple of
 * 0.25 (quarter lines are legal); a spread's two points are opposite and a total's two equal,
 * else the market is dropped: a book is only ever compared with the reference at the same line.
 */
function readMarket(r: Reader, key: Market, homeTeam: string, awayTeam: string): OddsMarket {
  const lastUpdate = r.optionalTime('lastUpdate');
  const rules = outcomeRules(key, homeTeam, awayTeam);
  const rawOutcomes = r.array('outcomes', rules.max);
  if (rawOutcomes.length < rules.min) {
    r.refuse('outcomes', rules.min === rules.max ? `must list ${rules.min} outcomes (has ${rawOutcomes.length})` : `must list ${rules.min} or ${rules.max} outcomes (has ${rawOutcomes.length})`);
  }
  const seen = new Set<string>();
  const outcomes = rawOutcomes.map((raw, i): OddsOutcome => {
    const path = `${r.label('outcomes')}[${i}]`;
    if (!isObject(raw)) throw new Refusal(`${path} must be an object, not ${describeType(raw)}`);
    const o: Reader = new Reader(r.names, raw, `${path}.`);
    const name = o.text('name', 'name', MAX_TEAM_NAME_LENGTH, true);
    if (!rules.allowed.includes(name)) o.refuse('name', `must be ${rules.describe}`);
    if (seen.has(name)) o.refuse('name', `repeats the outcome "${name}"`);
    seen.add(name);
    const price = o.raw('price');
    if (price === undefined) o.refuse('price', 'is missing');
    if (typeof price !== 'number') o.refuse('price', `must be a number, not ${describeType(price)}`);
    if (!Number.isFinite(price) || price <= 1 || price > MAX_DECIMAL_ODDS) {
      o.refuse('price', `must be decimal odds greater than 1 and at most ${MAX_DECIMAL_ODDS} (got ${price})`);
    }
    if (key === 'h2h') return { name, price };
    const point = o.raw('point');
    if (point === undefined || point === null) o.refuse('point', `is missing (a ${key} outcome has one)`);
    const problem = lineProblem(key, point);
    if (problem !== null) o.refuse('point', `${problem} (got ${typeof point === 'number' ? point : describeType(point)})`);
    return { name, price, point: (point as number) + 0 };
  });
  const [first, second] = rules.allowed;
  if (!seen.has(first!) || !seen.has(second!)) {
    r.refuse('outcomes', key === 'totals' ? `must price both "${OVER}" and "${UNDER}"` : 'must price both the home and the away team');
  }
  if (key === 'h2h') return { key, line: null, lastUpdate, outcomes };
  const pointOf = (name: string) => outcomes.find((o) => o.name === name)!.point!;
  if (key === 'spreads' && pointOf(homeTeam) + pointOf(awayTeam) !== 0) {
    r.refuse('outcomes', `must give the two teams opposite points (has ${pointOf(homeTeam)} and ${pointOf(awayTeam)})`);
  }
  if (key === 'totals' && pointOf(OVER) !== pointOf(UNDER)) {
    r.refuse('outcomes', `must give "${OVER}" and "${UNDER}" the same point (has ${pointOf(OVER)} and ${pointOf(UNDER)})`);
  }
  return { key, line: key === 'spreads' ? pointOf(homeTeam) : pointOf(OVER), lastUpdate, outcomes };
}

/** An exchange's lay prices of the h2h market (v4 `h2h_lay`): read beside its back prices. */
const H2H_LAY = 'h2h_lay';

/**
 * A bookmaker's h2h market with its `h2h_lay` prices attached to the outcomes they name: an
 * outcome without a lay keeps none (a reference refuses that market, docs/VALUE_ENGINE.md,
 * "Exchanges"). A lay market naming an outcome the back market lacks contradicts it: both are
 * dropped (an error thrown as a Refusal), as two markets of one key are.
 */
function withLayPrices(markets: OddsMarket[], lay: OddsMarket | undefined): OddsMarket[] {
  if (lay === undefined) return markets;
  const back = markets.find((market) => market.key === 'h2h');
  if (back === undefined) return markets;
  const foreign = lay.outcomes.find((o) => !back.outcomes.some((b) => b.name === o.name));
  if (foreign) {
    throw new Refusal(`h2h and ${H2H_LAY} dropped: ${H2H_LAY} lists "${foreign.name}", which its h2h market lacks (back and lay prices must name the same outcomes)`);
  }
  const outcomes = back.outcomes.map((o) => {
    const layPrice = lay.outcomes.find((l) => l.name === o.name)?.price;
    return layPrice === undefined ? o : { ...o, lay: layPrice };
  });
  return markets.map((market) => (market === back ? { ...back, outcomes } : market));
}

/**
 * One bookmaker: null (with the reasons in `skipped`) when it is malformed or has no usable
 * market. `h2h_lay` is read into the h2h market's outcomes (withLayPrices); markets of other
 * keys (alternate_spreads, ...) are ignored without a reason.
 */
function readBookmaker(
  names: Record<FieldName, string>,
  raw: unknown,
  path: string,
  event: EventCore,
  skipped: FeedSkip[],
): OddsBookmaker | null {
  try {
    if (!isObject(raw)) throw new Refusal(`${path} must be an object, not ${describeType(raw)}`);
    const r: Reader = new Reader(names, raw, `${path}.`);
    const key = r.pattern('key', BOOKMAKER_KEY, '1 to 40 lowercase letters, digits, "-" or "_"');
    const title = r.text('title', 'name', MAX_BOOKMAKER_TITLE_LENGTH, true);
    const lastUpdate = r.time('lastUpdate');
    const rawMarkets = r.array('markets', MAX_MARKETS_PER_BOOKMAKER);
    let markets: OddsMarket[] = [];
    let lay: OddsMarket | undefined;
    const seen = new Map<string, number>();
    rawMarkets.forEach((rawMarket, i) => {
      const marketPath = `${r.label('markets')}[${i}]`;
      try {
        if (!isObject(rawMarket)) throw new Refusal(`${marketPath} must be an object, not ${describeType(rawMarket)}`);
        const m: Reader = new Reader(names, rawMarket, `${marketPath}.`);
        const marketKey = m.text('key', 'line', MAX_FEED_STRING_LENGTH, false);
        if (!isMarketKey(marketKey) && marketKey !== H2H_LAY) return;
        seen.set(marketKey, (seen.get(marketKey) ?? 0) + 1);
        // Lay prices follow the h2h outcome rules.
        if (marketKey === H2H_LAY) lay = readMarket(m, 'h2h', event.homeTeam, event.awayTeam);
        else markets.push(readMarket(m, marketKey, event.homeTeam, event.awayTeam));
      } catch (err) {
        if (!(err instanceof Refusal)) throw err;
        skipped.push({ eventId: event.id, reason: `market dropped: ${err.message}` });
      }
    });
    // Two markets of one key from one bookmaker contradict each other (its main line is one
    // line; alternates have their own keys): trust nothing it sends.
    for (const [marketKey, count] of seen) {
      if (count > 1) r.refuse('markets', `lists ${count} ${marketKey} markets; a bookmaker has at most one`);
    }
    try {
      markets = withLayPrices(markets, lay);
    } catch (err) {
      if (!(err instanceof Refusal)) throw err;
      skipped.push({ eventId: event.id, reason: `market dropped: ${err.message}` });
      markets = markets.filter((market) => market.key !== 'h2h');
    }
    if (markets.length === 0) return null;
    return { key, title, lastUpdate, markets };
  } catch (err) {
    if (!(err instanceof Refusal)) throw err;
    skipped.push({ eventId: event.id, reason: `bookmaker dropped: ${err.message}` });
    return null;
  }
}

function validateOdds(names: Record<FieldName, string>, input: unknown, skipped: FeedSkip[]): OddsEvent | null {
  const partial: FeedSkip[] = [];
  try {
    if (!isObject(input)) throw new Refusal(`event must be an object, not ${describeType(input)}`);
    const r: Reader = new Reader(names, input, '');
    const core = readEventCore(r);
    const sportTitle = r.text('sportTitle', 'name', MAX_SPORT_TITLE_LENGTH, true);
    const rawBookmakers = r.array('bookmakers', MAX_BOOKMAKERS_PER_EVENT);
    const read = rawBookmakers.map((raw, i) => readBookmaker(names, raw, `${r.label('bookmakers')}[${i}]`, core, partial));
    const bookmakers: OddsBookmaker[] = [];
    const counts = new Map<string, number>();
    for (const b of read) if (b) counts.set(b.key, (counts.get(b.key) ?? 0) + 1);
    for (const [key, count] of counts) {
      if (count > 1) {
        partial.push({ eventId: core.id, reason: `bookmaker dropped: ${r.label('bookmakers')} lists "${key}" ${count} times` });
      }
    }
    for (const b of read) if (b && counts.get(b.key) === 1) bookmakers.push(b);
    skipped.push(...partial);
    return { ...core, sportTitle, bookmakers };
  } catch (err) {
    // Anything unexpected (an exotic object from a pushed input) skips the event, never the batch.
    const reason = err instanceof Refusal ? err.message : 'event could not be read';
    skipped.push({ eventId: readId(names, input), reason });
    return null;
  }
}

function validateScores(names: Record<FieldName, string>, input: unknown, skipped: FeedSkip[]): ScoreEvent | null {
  try {
    if (!isObject(input)) throw new Refusal(`event must be an object, not ${describeType(input)}`);
    const r: Reader = new Reader(names, input, '');
    const core = readEventCore(r);
    const completed = r.raw('completed');
    if (completed === undefined) r.refuse('completed', 'is missing');
    if (typeof completed !== 'boolean') r.refuse('completed', `must be true or false, not ${describeType(completed)}`);
    const rawScores = r.raw('scores');
    let scores: TeamScore[] | null = null;
    if (rawScores !== undefined && rawScores !== null) {
      const list = r.array('scores', 2);
      const seen = new Set<string>();
      scores = list.map((raw, i): TeamScore => {
        const path = `${r.label('scores')}[${i}]`;
        if (!isObject(raw)) throw new Refusal(`${path} must be an object, not ${describeType(raw)}`);
        const s: Reader = new Reader(names, raw, `${path}.`);
        const name = s.text('name', 'name', MAX_TEAM_NAME_LENGTH, true);
        if (name !== core.homeTeam && name !== core.awayTeam) s.refuse('name', 'must be the home or the away team');
        if (seen.has(name)) s.refuse('name', `repeats the team "${name}"`);
        seen.add(name);
        return { name, score: readScore(s) };
      });
    }
    const lastUpdate = r.optionalTime('lastUpdate');
    return { ...core, completed, scores, lastUpdate };
  } catch (err) {
    const reason = err instanceof Refusal ? err.message : 'event could not be read';
    skipped.push({ eventId: readId(names, input), reason });
    return null;
  }
}

/** An events-list entry: the event's core alone (v4's /events sends no odds and no scores). */
function validateScheduled(names: Record<FieldName, string>, input: unknown, skipped: FeedSkip[]): ScheduledFeedEvent | null {
  try {
    if (!isObject(input)) throw new Refusal(`event must be an object, not ${describeType(input)}`);
    return readEventCore(new Reader(names, input, ''));
  } catch (err) {
    const reason = err instanceof Refusal ? err.message : 'event could not be read';
    skipped.push({ eventId: readId(names, input), reason });
    return null;
  }
}

/** The feed sends scores as strings ("2"); a pushed input may send an integer. */
function readScore(s: Reader): number {
  const value = s.raw('score');
  if (value === undefined) s.refuse('score', 'is missing');
  if (typeof value === 'string') {
    if (!SCORE_DIGITS.test(value)) s.refuse('score', `must be a whole number of at most 6 digits (got ${JSON.stringify(value.slice(0, 20))})`);
    return Number(value);
  }
  if (typeof value === 'number') {
    if (!Number.isInteger(value) || value < 0 || value > MAX_SCORE) s.refuse('score', `must be a whole number from 0 to ${MAX_SCORE} (got ${value})`);
    return value;
  }
  return s.refuse('score', `must be a string of digits, not ${describeType(value)}`);
}

function parseBody<T>(
  body: unknown,
  validate: (names: Record<FieldName, string>, input: unknown, skipped: FeedSkip[]) => T | null,
  idOf: (event: T) => string,
): ParsedFeed<T> {
  if (!Array.isArray(body)) {
    return { events: [], skipped: [], error: `the response body must be a JSON array of events, not ${describeType(body)}` };
  }
  const events: T[] = [];
  const skipped: FeedSkip[] = [];
  const ids = new Set<string>();
  for (const item of body) {
    const eventSkips: FeedSkip[] = [];
    const event = validate(FEED_NAMES, item, eventSkips);
    if (event && ids.has(idOf(event))) {
      // The first one wins; its bookmaker reasons were already reported.
      skipped.push({ eventId: idOf(event), reason: 'id repeats an event listed earlier in this response' });
      continue;
    }
    skipped.push(...eventSkips);
    if (event) {
      ids.add(idOf(event));
      events.push(event);
    }
  }
  return { events, skipped };
}

/** `GET /v4/sports/{sport_key}/odds?markets=h2h&oddsFormat=decimal&dateFormat=iso`, already JSON-parsed. */
export function parseOddsEvents(body: unknown): ParsedFeed<OddsEvent> {
  return parseBody(body, validateOdds, (e) => e.id);
}

/** `GET /v4/sports/{sport_key}/events?dateFormat=iso` (free of credits), already JSON-parsed: the kickoffs a credit plan follows. */
export function parseScheduledEvents(body: unknown): ParsedFeed<ScheduledFeedEvent> {
  return parseBody(body, validateScheduled, (e) => e.id);
}

/** `GET /v4/sports/{sport_key}/scores?daysFrom=3&dateFormat=iso`, already JSON-parsed. */
export function parseScoreEvents(body: unknown): ParsedFeed<ScoreEvent> {
  return parseBody(body, validateScores, (e) => e.id);
}

export interface ValidatedEvent<T> {
  /** null when the event itself is refused (the reason is in `skipped`). */
  event: T | null;
  /** The event's own reason, or the bookmakers and markets dropped from a kept event. */
  skipped: FeedSkip[];
}

/**
 * One event of `ingestOdds` (camelCase, `naming: 'input'`) or of the feed (`naming: 'feed'`):
 * the same rules as parseOddsEvents, so polled and pushed events cannot differ.
 */
export function validateOddsEvent(input: unknown, naming: FieldNaming = 'input'): ValidatedEvent<OddsEvent> {
  const skipped: FeedSkip[] = [];
  const event = validateOdds(naming === 'feed' ? FEED_NAMES : INPUT_NAMES, input, skipped);
  return { event, skipped };
}

/** One event of `ingestScores` (camelCase by default), with the rules of parseScoreEvents. */
export function validateScoreEvent(input: unknown, naming: FieldNaming = 'input'): ValidatedEvent<ScoreEvent> {
  const skipped: FeedSkip[] = [];
  const event = validateScores(naming === 'feed' ? FEED_NAMES : INPUT_NAMES, input, skipped);
  return { event, skipped };
}

/**
 * The service's sport slug of a v4 sport key: its first segment when that is one of the 11
 * slugs (soccer_epl -> soccer, americanfootball_nfl -> americanfootball). The v4 groups with no
 * matching slug (aussierules, rugbyleague, golf, lacrosse, politics, handball, ...) give null:
 * rugby league is not rugby union, and a wrong sport on a pick is worse than a config error.
 */
export function sportSlugOfKey(sportKey: string): SportSlug | null {
  if (typeof sportKey !== 'string' || sportKey.length > MAX_FEED_STRING_LENGTH || !SPORT_KEY.test(sportKey)) return null;
  const group = sportKey.split('_')[0]!;
  return isSportSlug(group) ? group : null;
}
