/** The odds feed parser (docs/VALUE_ENGINE.md, "The odds feed (The Odds API v4)"). */
import { readFileSync } from 'node:fs';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import {
  MAX_BOOKMAKERS_PER_EVENT,
  parseOddsEvents,
  parseScoreEvents,
  sportSlugOfKey,
  validateOddsEvent,
  validateScoreEvent,
  type OddsEvent,
} from '../../src/domain/odds-feed.js';
import { SPORT_SLUGS } from '../../src/domain/sports.js';

function fixture(name: string): unknown[] {
  return JSON.parse(readFileSync(new URL(`../fixtures/odds-feed/${name}`, import.meta.url), 'utf8')) as unknown[];
}

type Json = Record<string, unknown>;

/** A fresh copy of the first EPL event (Arsenal v Chelsea, four bookmakers). */
function soccerEvent(): Json {
  return structuredClone(fixture('odds-soccer-epl.json')[0]) as Json;
}

function scoreEvent(): Json {
  return structuredClone(fixture('scores-soccer-epl.json')[0]) as Json;
}

/** Sets (or with `undefined` deletes) the value at a path such as ['bookmakers', 0, 'key']. */
function withValue<T extends Json>(event: T, path: (string | number)[], value: unknown): T {
  let node = event as Record<string | number, unknown>;
  for (const step of path.slice(0, -1)) node = node[step] as Record<string | number, unknown>;
  const last = path[path.length - 1]!;
  if (value === undefined) delete node[last];
  else node[last] = value;
  return event;
}

const ID = 'e912304de2b2ce35b473ce2ecd3d1502';
const LONG = 'x'.repeat(201);
const LONG_NAME = 'x'.repeat(121);

describe('parseOddsEvents: the fixtures in the v4 format', () => {
  it('reads the soccer events: 3-way h2h, spreads and totals with their points, every bookmaker', () => {
    const result = parseOddsEvents(fixture('odds-soccer-epl.json'));
    expect(result.error).toBeUndefined();
    expect(result.skipped).toEqual([]);
    expect(result.events).toHaveLength(3);
    const [first] = result.events as [OddsEvent];
    expect(first).toEqual({
      id: ID,
      sportKey: 'soccer_epl',
      sportTitle: 'EPL',
      commenceTime: new Date('2026-11-28T15:00:00Z'),
      homeTeam: 'Arsenal',
      awayTeam: 'Chelsea',
      bookmakers: [
        {
          key: 'pinnacle',
          title: 'Pinnacle',
          lastUpdate: new Date('2026-11-24T03:05:12Z'),
          markets: [
            {
              key: 'h2h',
              line: null,
              lastUpdate: new Date('2026-11-24T03:05:12Z'),
              outcomes: [
                { name: 'Arsenal', price: 1.95 },
                { name: 'Chelsea', price: 4.1 },
                { name: 'Draw', price: 3.75 },
              ],
            },
          ],
        },
        {
          key: 'betfair_ex_eu',
          title: 'Betfair',
          lastUpdate: new Date('2026-11-24T03:05:40Z'),
          markets: [
            {
              key: 'h2h',
              line: null,
              lastUpdate: new Date('2026-11-24T03:05:40Z'),
              outcomes: [
                { name: 'Arsenal', price: 1.98, lay: 2 },
                { name: 'Chelsea', price: 4.3, lay: 4.5 },
                { name: 'Draw', price: 3.85, lay: 3.95 },
              ],
            },
          ],
        },
        {
          key: 'tipico_de',
          title: 'Tipico',
          lastUpdate: new Date('2026-11-24T03:04:58Z'),
          markets: [
            {
              key: 'h2h',
              line: null,
              lastUpdate: new Date('2026-11-24T03:04:58Z'),
              outcomes: [
                { name: 'Arsenal', price: 1.9 },
                { name: 'Chelsea', price: 4.2 },
                { name: 'Draw', price: 3.6 },
              ],
            },
          ],
        },
        {
          key: 'unibet_eu',
          title: 'Unibet',
          lastUpdate: new Date('2026-11-24T03:03:21Z'),
          // No market last_update in the feed (older v4 responses): null, not the bookmaker's.
          markets: [
            {
              key: 'h2h',
              line: null,
              lastUpdate: null,
              outcomes: [
                { name: 'Arsenal', price: 1.93 },
                { name: 'Chelsea', price: 4 },
                { name: 'Draw', price: 3.7 },
              ],
            },
            {
              key: 'totals',
              line: 2.5,
              lastUpdate: new Date('2026-11-24T03:03:21Z'),
              outcomes: [
                { name: 'Over', price: 1.87, point: 2.5 },
                { name: 'Under', price: 1.95, point: 2.5 },
              ],
            },
          ],
        },
      ],
    });
    // A spread's line is the home team's handicap; an event without bookmakers is kept.
    expect(result.events[1]!.bookmakers.map((b) => b.key)).toEqual(['pinnacle', 'unibet_eu']);
    expect(result.events[1]!.bookmakers[0]!.markets[1]).toEqual({
      key: 'spreads',
      line: -0.25,
      lastUpdate: new Date('2026-11-24T03:05:12Z'),
      outcomes: [
        { name: 'Brighton and Hove Albion', price: 1.92, point: -0.25 },
        { name: 'Manchester United', price: 1.98, point: 0.25 },
      ],
    });
    expect(result.events[2]!.bookmakers).toEqual([]);
  });

  it('reads 2-way markets (tennis, basketball)', () => {
    const result = parseOddsEvents(fixture('odds-two-way.json'));
    expect(result.skipped).toEqual([]);
    expect(result.events.map((e) => [e.sportKey, e.homeTeam, e.bookmakers.length])).toEqual([
      ['tennis_atp_finals', 'Jannik Sinner', 2],
      ['basketball_nba', 'Boston Celtics', 2],
    ]);
    expect(result.events[0]!.bookmakers[0]!.markets[0]!.outcomes).toEqual([
      { name: 'Carlos Alcaraz', price: 2.12 },
      { name: 'Jannik Sinner', price: 1.78 },
    ]);
  });
});

describe('parseOddsEvents: the body', () => {
  it.each([
    [{}, 'an object'],
    [null, 'null'],
    ['[]', 'a string'],
    [42, 'a number'],
    [undefined, 'undefined'],
    [{ data: [] }, 'an object'],
  ])('refuses %j whole', (body, kind) => {
    expect(parseOddsEvents(body)).toEqual({
      events: [],
      skipped: [],
      error: `the response body must be a JSON array of events, not ${kind}`,
    });
  });

  it('reads an empty array as no events', () => {
    expect(parseOddsEvents([])).toEqual({ events: [], skipped: [] });
  });

  it('skips 10,000 garbage events one by one and keeps the good one among them', () => {
    const garbage: unknown[] = Array.from({ length: 10_000 }, (_, i) => (i % 3 === 0 ? null : i % 3 === 1 ? 'x' : { id: `g${i}` }));
    garbage.splice(5_000, 0, soccerEvent());
    const result = parseOddsEvents(garbage);
    expect(result.error).toBeUndefined();
    expect(result.events.map((e) => e.id)).toEqual([ID]);
    expect(result.skipped).toHaveLength(10_000);
    expect(result.skipped[0]).toEqual({ eventId: null, reason: 'event must be an object, not null' });
    expect(result.skipped[1]).toEqual({ eventId: null, reason: 'event must be an object, not a string' });
    expect(result.skipped[2]).toEqual({ eventId: 'g2', reason: 'sport_key is missing' });
  });

  it('keeps the first of two events with one id and skips the repeat', () => {
    const second = withValue(soccerEvent(), ['home_team'], 'Fulham');
    const result = parseOddsEvents([soccerEvent(), second]);
    expect(result.events.map((e) => e.homeTeam)).toEqual(['Arsenal']);
    expect(result.skipped).toEqual([{ eventId: ID, reason: 'id repeats an event listed earlier in this response' }]);
  });
});

/** [what, path, value, reason]: the whole event is skipped with this reason. */
const EVENT_CASES: [string, (string | number)[], unknown, string][] = [
  ['id missing', ['id'], undefined, 'id is missing'],
  ['id null', ['id'], null, 'id must be a string, not null'],
  ['id a number', ['id'], 123, 'id must be a string, not a number'],
  ['id empty', ['id'], '', 'id must not be empty'],
  ['id too long', ['id'], LONG, 'id must be at most 200 characters'],
  ['id with a newline', ['id'], 'a\nb', 'id must be a single line without tabs (found U+000A at position 1)'],
  ['id with NUL', ['id'], 'a\u0000b', 'id must not contain control characters (found U+0000 at position 1)'],
  ['sport_key missing', ['sport_key'], undefined, 'sport_key is missing'],
  ['sport_key upper case', ['sport_key'], 'Soccer_EPL', 'sport_key must be lowercase words joined by "_" (such as soccer_epl)'],
  ['sport_key an array', ['sport_key'], ['soccer_epl'], 'sport_key must be a string, not an array'],
  ['sport_title missing', ['sport_title'], undefined, 'sport_title is missing'],
  ['sport_title blank', ['sport_title'], '   ', 'sport_title must not be empty'],
  ['sport_title too long', ['sport_title'], LONG_NAME, 'sport_title must be at most 120 characters'],
  ['sport_title with RTL override', ['sport_title'], 'EPL\u202E', 'sport_title must not contain invisible or text-direction characters (found U+202E at position 3)'],
  ['commence_time missing', ['commence_time'], undefined, 'commence_time is missing'],
  ['commence_time null', ['commence_time'], null, 'commence_time must be an ISO 8601 time string, not null'],
  ['commence_time unix seconds', ['commence_time'], 1795791600, 'commence_time must be an ISO 8601 time, not a number (ask the feed for dateFormat=iso)'],
  ['commence_time garbage', ['commence_time'], 'tomorrow', 'commence_time must be a valid ISO 8601 time with a zone (such as 2026-11-24T19:30:00Z)'],
  ['commence_time without a zone', ['commence_time'], '2026-11-28T15:00:00', 'commence_time must be a valid ISO 8601 time with a zone (such as 2026-11-24T19:30:00Z)'],
  ['commence_time on 30 February', ['commence_time'], '2026-02-30T15:00:00Z', 'commence_time must be a valid ISO 8601 time with a zone (such as 2026-11-24T19:30:00Z)'],
  ['home_team missing', ['home_team'], undefined, 'home_team is missing'],
  ['home_team null (an outright)', ['home_team'], null, 'home_team must be a string, not null'],
  ['home_team empty', ['home_team'], '', 'home_team must not be empty'],
  ['home_team too long', ['home_team'], LONG_NAME, 'home_team must be at most 120 characters'],
  ['home_team hostile megabyte', ['home_team'], 'x'.repeat(1_000_000), 'home_team must be at most 120 characters'],
  ['home_team with a tab', ['home_team'], 'Arse\tnal', 'home_team must be a single line without tabs (found U+0009 at position 4)'],
  ['home_team with a zero-width space', ['home_team'], 'Arse\u200Bnal', 'home_team must not contain invisible or text-direction characters (found U+200B at position 4)'],
  ['away_team missing', ['away_team'], undefined, 'away_team is missing'],
  ['away_team a boolean', ['away_team'], true, 'away_team must be a string, not a boolean'],
  ['away_team with DEL', ['away_team'], 'Chel\u007Fsea', 'away_team must not contain control characters (found U+007F at position 4)'],
  ['away_team the home team', ['away_team'], 'Arsenal', 'away_team must differ from the home team'],
  ['bookmakers missing', ['bookmakers'], undefined, 'bookmakers is missing'],
  ['bookmakers null', ['bookmakers'], null, 'bookmakers must be an array, not null'],
  ['bookmakers an object', ['bookmakers'], {}, 'bookmakers must be an array, not an object'],
  ['bookmakers too many', ['bookmakers'], Array.from({ length: MAX_BOOKMAKERS_PER_EVENT + 1 }, () => null), 'bookmakers must have at most 100 entries (has 101)'],
];

describe('parseOddsEvents: a malformed event is skipped with a precise reason, the others kept', () => {
  it.each(EVENT_CASES)('%s', (_what, path, value, reason) => {
    const bad = withValue(soccerEvent(), path, value);
    const good = fixture('odds-two-way.json')[0];
    const result = parseOddsEvents([bad, good]);
    const eventId = path[0] === 'id' ? null : ID;
    expect(result.skipped).toEqual([{ eventId, reason }]);
    expect(result.events.map((e) => e.sportKey)).toEqual(['tennis_atp_finals']);
  });

  it('trims names and times may carry an offset or fractions', () => {
    const event = withValue(withValue(soccerEvent(), ['home_team'], '  Arsenal '), ['commence_time'], '2026-11-28T16:00:00.123+01:00');
    const result = parseOddsEvents([event]);
    expect(result.skipped).toEqual([]);
    expect(result.events[0]!.homeTeam).toBe('Arsenal');
    expect(result.events[0]!.commenceTime).toEqual(new Date('2026-11-28T15:00:00.123Z'));
  });

  it('ignores fields it does not know (link, sid, bet_limit)', () => {
    const event = withValue(soccerEvent(), ['bookmakers', 0, 'link'], 'https://example.invalid/x');
    withValue(event, ['bookmakers', 0, 'markets', 0, 'outcomes', 0, 'bet_limit'], 500);
    expect(parseOddsEvents([event]).skipped).toEqual([]);
  });
});

const B0 = 'bookmakers[0]';
/** [what, path, value, reason]: bookmaker 0 (pinnacle) is dropped with this reason, the others kept. */
const BOOKMAKER_CASES: [string, (string | number)[], unknown, string][] = [
  ['not an object', ['bookmakers', 0], 'pinnacle', `bookmaker dropped: ${B0} must be an object, not a string`],
  ['null', ['bookmakers', 0], null, `bookmaker dropped: ${B0} must be an object, not null`],
  ['key missing', ['bookmakers', 0, 'key'], undefined, `bookmaker dropped: ${B0}.key is missing`],
  ['key upper case', ['bookmakers', 0, 'key'], 'Pinnacle', `bookmaker dropped: ${B0}.key must be 1 to 40 lowercase letters, digits, "-" or "_"`],
  ['key too long', ['bookmakers', 0, 'key'], 'p'.repeat(41), `bookmaker dropped: ${B0}.key must be 1 to 40 lowercase letters, digits, "-" or "_"`],
  ['key a number', ['bookmakers', 0, 'key'], 7, `bookmaker dropped: ${B0}.key must be a string, not a number`],
  ['title missing', ['bookmakers', 0, 'title'], undefined, `bookmaker dropped: ${B0}.title is missing`],
  ['title empty', ['bookmakers', 0, 'title'], '', `bookmaker dropped: ${B0}.title must not be empty`],
  ['title too long', ['bookmakers', 0, 'title'], 'x'.repeat(81), `bookmaker dropped: ${B0}.title must be at most 80 characters`],
  ['title with a control character', ['bookmakers', 0, 'title'], 'Pinn\u0007acle', `bookmaker dropped: ${B0}.title must not contain control characters (found U+0007 at position 4)`],
  ['last_update missing', ['bookmakers', 0, 'last_update'], undefined, `bookmaker dropped: ${B0}.last_update is missing`],
  ['last_update null', ['bookmakers', 0, 'last_update'], null, `bookmaker dropped: ${B0}.last_update must be an ISO 8601 time string, not null`],
  ['last_update invalid', ['bookmakers', 0, 'last_update'], '2026-13-01T00:00:00Z', `bookmaker dropped: ${B0}.last_update must be a valid ISO 8601 time with a zone (such as 2026-11-24T19:30:00Z)`],
  ['markets missing', ['bookmakers', 0, 'markets'], undefined, `bookmaker dropped: ${B0}.markets is missing`],
  ['markets an object', ['bookmakers', 0, 'markets'], { key: 'h2h' }, `bookmaker dropped: ${B0}.markets must be an array, not an object`],
  ['markets too many', ['bookmakers', 0, 'markets'], Array.from({ length: 51 }, () => ({ key: 'totals' })), `bookmaker dropped: ${B0}.markets must have at most 50 entries (has 51)`],
];

describe('parseOddsEvents: a malformed bookmaker is dropped, the event and the other bookmakers kept', () => {
  it.each(BOOKMAKER_CASES)('%s', (_what, path, value, reason) => {
    const result = parseOddsEvents([withValue(soccerEvent(), path, value)]);
    expect(result.skipped).toEqual([{ eventId: ID, reason }]);
    expect(result.events[0]!.bookmakers.map((b) => b.key)).toEqual(['betfair_ex_eu', 'tipico_de', 'unibet_eu']);
  });

  it('drops every copy of a bookmaker listed twice', () => {
    const event = soccerEvent();
    const bookmakers = event.bookmakers as Json[];
    bookmakers.push(structuredClone(bookmakers[2]!));
    const result = parseOddsEvents([event]);
    expect(result.skipped).toEqual([{ eventId: ID, reason: 'bookmaker dropped: bookmakers lists "tipico_de" 2 times' }]);
    expect(result.events[0]!.bookmakers.map((b) => b.key)).toEqual(['pinnacle', 'betfair_ex_eu', 'unibet_eu']);
  });

  it('drops a bookmaker with two h2h markets (they contradict each other)', () => {
    const event = soccerEvent();
    const markets = (event.bookmakers as Json[])[0]!.markets as Json[];
    markets.push(structuredClone(markets[0]!));
    const result = parseOddsEvents([event]);
    expect(result.skipped).toEqual([{ eventId: ID, reason: `bookmaker dropped: ${B0}.markets lists 2 h2h markets; a bookmaker has at most one` }]);
    expect(result.events[0]!.bookmakers).toHaveLength(3);
  });
});

const M0 = `${B0}.markets[0]`;
const O0 = `${M0}.outcomes[0]`;
const PRICE_RANGE = 'must be decimal odds greater than 1 and at most 1000';
/** [what, path, value, reason]: pinnacle's h2h market is dropped (and pinnacle with it: it has no other). */
const MARKET_CASES: [string, (string | number)[], unknown, string][] = [
  ['market not an object', ['bookmakers', 0, 'markets', 0], 'h2h', `${M0} must be an object, not a string`],
  ['market key missing', ['bookmakers', 0, 'markets', 0, 'key'], undefined, `${M0}.key is missing`],
  ['market key a number', ['bookmakers', 0, 'markets', 0, 'key'], 1, `${M0}.key must be a string, not a number`],
  ['market last_update invalid', ['bookmakers', 0, 'markets', 0, 'last_update'], '2026-11-24 03:05:12', `${M0}.last_update must be a valid ISO 8601 time with a zone (such as 2026-11-24T19:30:00Z)`],
  ['market last_update a number', ['bookmakers', 0, 'markets', 0, 'last_update'], 1795791600, `${M0}.last_update must be an ISO 8601 time, not a number (ask the feed for dateFormat=iso)`],
  ['outcomes missing', ['bookmakers', 0, 'markets', 0, 'outcomes'], undefined, `${M0}.outcomes is missing`],
  ['outcomes null', ['bookmakers', 0, 'markets', 0, 'outcomes'], null, `${M0}.outcomes must be an array, not null`],
  ['outcomes empty', ['bookmakers', 0, 'markets', 0, 'outcomes'], [], `${M0}.outcomes must list 2 or 3 outcomes (has 0)`],
  ['outcomes one', ['bookmakers', 0, 'markets', 0, 'outcomes'], [{ name: 'Arsenal', price: 1.5 }], `${M0}.outcomes must list 2 or 3 outcomes (has 1)`],
  ['outcomes four', ['bookmakers', 0, 'markets', 0, 'outcomes', 3], { name: 'Draw', price: 3 }, `${M0}.outcomes must have at most 3 entries (has 4)`],
  ['outcome not an object', ['bookmakers', 0, 'markets', 0, 'outcomes', 0], 1.95, `${O0} must be an object, not a number`],
  ['outcome name missing', ['bookmakers', 0, 'markets', 0, 'outcomes', 0, 'name'], undefined, `${O0}.name is missing`],
  ['outcome name empty', ['bookmakers', 0, 'markets', 0, 'outcomes', 0, 'name'], '', `${O0}.name must not be empty`],
  ['outcome name too long', ['bookmakers', 0, 'markets', 0, 'outcomes', 0, 'name'], LONG_NAME, `${O0}.name must be at most 120 characters`],
  ['outcome name with a control character', ['bookmakers', 0, 'markets', 0, 'outcomes', 0, 'name'], 'Arsenal\u0085', `${O0}.name must not contain control characters (found U+0085 at position 7)`],
  ['outcome name not a side', ['bookmakers', 0, 'markets', 0, 'outcomes', 0, 'name'], 'Over', `${O0}.name must be the home team, the away team or "Draw"`],
  ['outcome name duplicated', ['bookmakers', 0, 'markets', 0, 'outcomes', 1, 'name'], 'Arsenal', `${M0}.outcomes[1].name repeats the outcome "Arsenal"`],
  ['a side missing', ['bookmakers', 0, 'markets', 0, 'outcomes'], [{ name: 'Arsenal', price: 1.95 }, { name: 'Draw', price: 3.75 }], `${M0}.outcomes must price both the home and the away team`],
  ['a hole in the outcomes', ['bookmakers', 0, 'markets', 0, 'outcomes', 1], undefined, `${M0}.outcomes[1] must be an object, not undefined`],
  ['price missing', ['bookmakers', 0, 'markets', 0, 'outcomes', 0, 'price'], undefined, `${O0}.price is missing`],
  ['price null', ['bookmakers', 0, 'markets', 0, 'outcomes', 0, 'price'], null, `${O0}.price must be a number, not null`],
  ['price NaN', ['bookmakers', 0, 'markets', 0, 'outcomes', 0, 'price'], Number.NaN, `${O0}.price ${PRICE_RANGE} (got NaN)`],
  ['price Infinity', ['bookmakers', 0, 'markets', 0, 'outcomes', 0, 'price'], Number.POSITIVE_INFINITY, `${O0}.price ${PRICE_RANGE} (got Infinity)`],
  ['price 0', ['bookmakers', 0, 'markets', 0, 'outcomes', 0, 'price'], 0, `${O0}.price ${PRICE_RANGE} (got 0)`],
  ['price 1', ['bookmakers', 0, 'markets', 0, 'outcomes', 0, 'price'], 1, `${O0}.price ${PRICE_RANGE} (got 1)`],
  ['price negative', ['bookmakers', 0, 'markets', 0, 'outcomes', 0, 'price'], -1.95, `${O0}.price ${PRICE_RANGE} (got -1.95)`],
  ['price American odds', ['bookmakers', 0, 'markets', 0, 'outcomes', 0, 'price'], 1001, `${O0}.price ${PRICE_RANGE} (got 1001)`],
  ['price "1.95"', ['bookmakers', 0, 'markets', 0, 'outcomes', 0, 'price'], '1.95', `${O0}.price must be a number, not a string`],
  ['price "NaN"', ['bookmakers', 0, 'markets', 0, 'outcomes', 0, 'price'], 'NaN', `${O0}.price must be a number, not a string`],
  ['price "Infinity"', ['bookmakers', 0, 'markets', 0, 'outcomes', 0, 'price'], 'Infinity', `${O0}.price must be a number, not a string`],
  ['price "0"', ['bookmakers', 0, 'markets', 0, 'outcomes', 0, 'price'], '0', `${O0}.price must be a number, not a string`],
  ['price "1"', ['bookmakers', 0, 'markets', 0, 'outcomes', 0, 'price'], '1', `${O0}.price must be a number, not a string`],
  ['price "-2"', ['bookmakers', 0, 'markets', 0, 'outcomes', 0, 'price'], '-2', `${O0}.price must be a number, not a string`],
];

describe('parseOddsEvents: a malformed h2h market is dropped with a precise reason', () => {
  it.each(MARKET_CASES)('%s', (_what, path, value, reason) => {
    const result = parseOddsEvents([withValue(soccerEvent(), path, value)]);
    expect(result.skipped).toEqual([{ eventId: ID, reason: `market dropped: ${reason}` }]);
    expect(result.events[0]!.bookmakers.map((b) => b.key)).toEqual(['betfair_ex_eu', 'tipico_de', 'unibet_eu']);
  });

  it('ignores markets of other keys without a reason, whatever their outcomes look like', () => {
    const event = soccerEvent();
    const markets = (event.bookmakers as Json[])[1]!.markets as Json[];
    markets.push(
      { key: 'alternate_spreads', outcomes: [{ name: 'Arsenal', price: 'x', point: 'y' }] },
      { key: 'outrights', outcomes: null },
      { key: 'h2h_lay_extra', outcomes: [] },
    );
    const result = parseOddsEvents([event]);
    expect(result.skipped).toEqual([]);
    expect(result.events[0]!.bookmakers[1]!.markets.map((m) => m.key)).toEqual(['h2h']);
  });

  it('keeps the market when its last_update is null', () => {
    const result = parseOddsEvents([withValue(soccerEvent(), ['bookmakers', 0, 'markets', 0, 'last_update'], null)]);
    expect(result.skipped).toEqual([]);
    expect(result.events[0]!.bookmakers[0]!.markets[0]!.lastUpdate).toBeNull();
  });
});

describe('validateOddsEvent: one pushed event (camelCase), the same rules', () => {
  /** The fixture without its exchange's h2h_lay market: a parsed record carries lay prices on the outcomes, which an input names as a market. */
  function backOnly(): Json {
    const event = soccerEvent();
    for (const bookmaker of event.bookmakers as Json[]) bookmaker.markets = (bookmaker.markets as Json[]).filter((market) => market.key !== 'h2h_lay');
    return event;
  }

  function pushed(): Json {
    const parsed = parseOddsEvents([backOnly()]).events[0]!;
    return structuredClone(parsed) as unknown as Json;
  }

  it('accepts a camelCase event with Date or ISO string times and returns the same record', () => {
    const input = pushed();
    expect(validateOddsEvent(input)).toEqual({ event: parseOddsEvents([backOnly()]).events[0], skipped: [] });
    withValue(input, ['commenceTime'], '2026-11-28T15:00:00Z');
    expect(validateOddsEvent(input).event!.commenceTime).toEqual(new Date('2026-11-28T15:00:00Z'));
  });

  it('names the camelCase fields in its reasons', () => {
    expect(validateOddsEvent(withValue(pushed(), ['commenceTime'], 'soon'))).toEqual({
      event: null,
      skipped: [{ eventId: ID, reason: 'commenceTime must be a valid ISO 8601 time with a zone (such as 2026-11-24T19:30:00Z)' }],
    });
    expect(validateOddsEvent(withValue(pushed(), ['bookmakers', 0, 'markets', 0, 'outcomes', 0, 'price'], 1)).skipped).toEqual([
      { eventId: ID, reason: `market dropped: ${O0}.price ${PRICE_RANGE} (got 1)` },
    ]);
    expect(validateOddsEvent(withValue(pushed(), ['bookmakers', 0, 'lastUpdate'], new Date(Number.NaN))).skipped).toEqual([
      { eventId: ID, reason: `bookmaker dropped: ${B0}.lastUpdate must be a valid ISO 8601 time with a zone (such as 2026-11-24T19:30:00Z)` },
    ]);
  });

  it('reads the feed naming when asked', () => {
    expect(validateOddsEvent(soccerEvent(), 'feed').event!.id).toBe(ID);
    expect(validateOddsEvent(soccerEvent()).skipped).toEqual([{ eventId: ID, reason: 'sportKey is missing' }]);
  });

  it('never reads inherited properties', () => {
    const input = Object.create(pushed()) as Json;
    expect(validateOddsEvent(input)).toEqual({ event: null, skipped: [{ eventId: null, reason: 'id is missing' }] });
  });
});

describe('parseScoreEvents', () => {
  it('reads the fixture: completed with scores, in play, not started', () => {
    const result = parseScoreEvents(fixture('scores-soccer-epl.json'));
    expect(result.skipped).toEqual([]);
    expect(result.events).toEqual([
      {
        id: ID,
        sportKey: 'soccer_epl',
        commenceTime: new Date('2026-11-21T15:00:00Z'),
        completed: true,
        homeTeam: 'Arsenal',
        awayTeam: 'Chelsea',
        scores: [
          { name: 'Arsenal', score: 2 },
          { name: 'Chelsea', score: 1 },
        ],
        lastUpdate: new Date('2026-11-21T17:02:41Z'),
      },
      expect.objectContaining({ completed: false, scores: [{ name: 'Brighton and Hove Albion', score: 0 }, { name: 'Manchester United', score: 0 }] }),
      expect.objectContaining({ completed: false, scores: null, lastUpdate: null }),
    ]);
  });

  it.each([{}, null, 'x'])('refuses the body %j whole', (body) => {
    expect(parseScoreEvents(body).error).toMatch(/^the response body must be a JSON array of events/);
  });

  const S1 = 'scores[1]';
  it.each<[string, (string | number)[], unknown, string]>([
    ['id missing', ['id'], undefined, 'id is missing'],
    ['commence_time invalid', ['commence_time'], '2026-11-21', 'commence_time must be a valid ISO 8601 time with a zone (such as 2026-11-24T19:30:00Z)'],
    ['completed missing', ['completed'], undefined, 'completed is missing'],
    ['completed a string', ['completed'], 'true', 'completed must be true or false, not a string'],
    ['home_team missing', ['home_team'], undefined, 'home_team is missing'],
    ['scores an object', ['scores'], { Arsenal: '2' }, 'scores must be an array, not an object'],
    ['scores three entries', ['scores', 2], { name: 'Arsenal', score: '1' }, 'scores must have at most 2 entries (has 3)'],
    ['score entry null', ['scores', 1], null, `${S1} must be an object, not null`],
    ['score name another team', ['scores', 1, 'name'], 'Fulham', `${S1}.name must be the home or the away team`],
    ['score name repeated', ['scores', 1, 'name'], 'Arsenal', `${S1}.name repeats the team "Arsenal"`],
    ['score name with a control character', ['scores', 1, 'name'], 'Chelsea\u0000', `${S1}.name must not contain control characters (found U+0000 at position 7)`],
    ['score missing', ['scores', 1, 'score'], undefined, `${S1}.score is missing`],
    ['score null', ['scores', 1, 'score'], null, `${S1}.score must be a string of digits, not null`],
    ['score "1.5"', ['scores', 1, 'score'], '1.5', `${S1}.score must be a whole number of at most 6 digits (got "1.5")`],
    ['score "-1"', ['scores', 1, 'score'], '-1', `${S1}.score must be a whole number of at most 6 digits (got "-1")`],
    ['score ""', ['scores', 1, 'score'], '', `${S1}.score must be a whole number of at most 6 digits (got "")`],
    ['score " 1"', ['scores', 1, 'score'], ' 1', `${S1}.score must be a whole number of at most 6 digits (got " 1")`],
    ['score cricket style', ['scores', 1, 'score'], '245/8', `${S1}.score must be a whole number of at most 6 digits (got "245/8")`],
    ['score 7 digits', ['scores', 1, 'score'], '1234567', `${S1}.score must be a whole number of at most 6 digits (got "1234567")`],
    ['score number NaN', ['scores', 1, 'score'], Number.NaN, `${S1}.score must be a whole number from 0 to 999999 (got NaN)`],
    ['score number negative', ['scores', 1, 'score'], -1, `${S1}.score must be a whole number from 0 to 999999 (got -1)`],
    ['score number fraction', ['scores', 1, 'score'], 1.5, `${S1}.score must be a whole number from 0 to 999999 (got 1.5)`],
    ['last_update invalid', ['last_update'], 'yesterday', 'last_update must be a valid ISO 8601 time with a zone (such as 2026-11-24T19:30:00Z)'],
  ])('skips the event: %s', (_what, path, value, reason) => {
    const good = fixture('scores-soccer-epl.json')[2];
    const result = parseScoreEvents([withValue(scoreEvent(), path, value), good]);
    expect(result.skipped).toEqual([{ eventId: path[0] === 'id' ? null : ID, reason }]);
    expect(result.events).toHaveLength(1);
  });

  it('reads absent scores and last_update as null, and integer scores from a pushed input', () => {
    const event = withValue(withValue(scoreEvent(), ['scores'], undefined), ['last_update'], undefined);
    expect(parseScoreEvents([event]).events[0]).toMatchObject({ scores: null, lastUpdate: null });
    const input = {
      id: 'x1',
      sportKey: 'tennis_atp_finals',
      commenceTime: '2026-11-24T13:00:00Z',
      completed: true,
      homeTeam: 'Jannik Sinner',
      awayTeam: 'Carlos Alcaraz',
      scores: [
        { name: 'Jannik Sinner', score: 2 },
        { name: 'Carlos Alcaraz', score: '1' },
      ],
      lastUpdate: null,
    };
    expect(validateScoreEvent(input)).toEqual({
      event: {
        id: 'x1',
        sportKey: 'tennis_atp_finals',
        commenceTime: new Date('2026-11-24T13:00:00Z'),
        completed: true,
        homeTeam: 'Jannik Sinner',
        awayTeam: 'Carlos Alcaraz',
        scores: [
          { name: 'Jannik Sinner', score: 2 },
          { name: 'Carlos Alcaraz', score: 1 },
        ],
        lastUpdate: null,
      },
      skipped: [],
    });
  });
});

describe('sportSlugOfKey', () => {
  it.each([
    ['soccer_epl', 'soccer'],
    ['soccer_germany_bundesliga', 'soccer'],
    ['basketball_nba', 'basketball'],
    ['tennis_atp_finals', 'tennis'],
    ['americanfootball_nfl', 'americanfootball'],
    ['icehockey_nhl', 'icehockey'],
    ['baseball_mlb', 'baseball'],
    ['mma_mixed_martial_arts', 'mma'],
    ['boxing_boxing', 'boxing'],
    ['rugbyunion_six_nations', 'rugbyunion'],
    ['cricket_test_match', 'cricket'],
    ['esports_lol', 'esports'],
    ['soccer', 'soccer'],
  ])('%s -> %s', (key, slug) => {
    expect(sportSlugOfKey(key)).toBe(slug);
  });

  it.each(['aussierules_afl', 'rugbyleague_nrl', 'golf_masters_tournament_winner', 'lacrosse_pll', 'politics_us_presidential_election_winner', 'handball_germany_bundesliga', '', 'Soccer_EPL', 'soccer-epl', '_soccer', 'soccer_', 'toString', '__proto__', 'constructor_x'])(
    '%j -> null',
    (key) => {
      expect(sportSlugOfKey(key)).toBeNull();
    },
  );

  it('maps every service slug onto itself', () => {
    for (const slug of SPORT_SLUGS) expect(sportSlugOfKey(`${slug}_league`)).toBe(slug);
  });
});

describe('properties', () => {
  function checkInvariants(event: OddsEvent): void {
    expect(typeof event.id).toBe('string');
    expect(event.id.length).toBeGreaterThan(0);
    expect(event.id.length).toBeLessThanOrEqual(200);
    expect(Number.isNaN(event.commenceTime.getTime())).toBe(false);
    expect(event.homeTeam).not.toBe(event.awayTeam);
    const keys = new Set(event.bookmakers.map((b) => b.key));
    expect(keys.size).toBe(event.bookmakers.length);
    for (const bookmaker of event.bookmakers) {
      expect(bookmaker.key).toMatch(/^[a-z0-9][a-z0-9_-]{0,39}$/);
      expect(Number.isNaN(bookmaker.lastUpdate.getTime())).toBe(false);
      expect(bookmaker.markets.length).toBeGreaterThan(0);
      expect(new Set(bookmaker.markets.map((m) => m.key)).size).toBe(bookmaker.markets.length);
      for (const market of bookmaker.markets) {
        expect(['h2h', 'spreads', 'totals']).toContain(market.key);
        const names = market.outcomes.map((o) => o.name);
        expect(new Set(names).size).toBe(names.length);
        expect(names).toEqual(expect.arrayContaining(market.key === 'totals' ? ['Over', 'Under'] : [event.homeTeam, event.awayTeam]));
        if (market.key === 'h2h') expect(market.line).toBeNull();
        else {
          const points = market.outcomes.map((o) => o.point!);
          expect(points.every((point) => Number.isInteger(point * 4))).toBe(true);
          expect(market.key === 'spreads' ? points[0]! + points[1]! : points[0]! - points[1]!).toBe(0);
        }
        for (const outcome of market.outcomes) {
          expect(Number.isFinite(outcome.price) && outcome.price > 1).toBe(true);
          // eslint-disable-next-line no-control-regex
          expect(outcome.name).not.toMatch(/[\u0000-\u001f\u007f-\u009f]/);
        }
      }
    }
  }

  it('parseOddsEvents(anything) never throws', () => {
    fc.assert(
      fc.property(fc.anything(), (body) => {
        const result = parseOddsEvents(body);
        expect(Array.isArray(body) || result.error !== undefined).toBe(true);
        result.events.forEach(checkInvariants);
        const scores = parseScoreEvents(body);
        expect(Array.isArray(body) || scores.error !== undefined).toBe(true);
      }),
      { numRuns: 300 },
    );
  });

  it('mutated fixture events never throw and every kept event satisfies the invariants', () => {
    const base = soccerEvent();
    const paths: (string | number)[][] = [
      ...EVENT_CASES.map((c) => c[1]),
      ...BOOKMAKER_CASES.map((c) => c[1]),
      ...MARKET_CASES.map((c) => c[1]),
    ];
    fc.assert(
      fc.property(
        fc.array(fc.tuple(fc.constantFrom(...paths), fc.oneof(fc.anything(), fc.double(), fc.string(), fc.constant(null))), { maxLength: 4 }),
        (mutations) => {
          const event = structuredClone(base);
          for (const [path, value] of mutations) {
            try {
              withValue(event, path, value);
            } catch {
              // The path no longer exists after an earlier mutation: keep what we have.
            }
          }
          const result = parseOddsEvents([event]);
          expect(result.events.length + result.skipped.length).toBeGreaterThan(0);
          result.events.forEach(checkInvariants);
          for (const skip of result.skipped) expect(skip.reason.length).toBeLessThan(400);
        },
      ),
      { numRuns: 300 },
    );
  });
});

describe('parseOddsEvents: spreads and totals', () => {
  const M1 = `${B0}.markets[1]`;
  const spreads = (home: unknown, away: unknown) => ({
    key: 'spreads',
    outcomes: [
      { name: 'Arsenal', price: 1.9, point: home },
      { name: 'Chelsea', price: 1.95, point: away },
    ],
  });
  const totals = (over: unknown, under: unknown) => ({
    key: 'totals',
    outcomes: [
      { name: 'Over', price: 1.9, point: over },
      { name: 'Under', price: 1.95, point: under },
    ],
  });
  /** Event 0 with one extra market on pinnacle: what the parser keeps of it, and the reasons. */
  function parsedWith(market: Json) {
    const event = soccerEvent();
    ((event.bookmakers as Json[])[0]!.markets as Json[]).push(market);
    const result = parseOddsEvents([event]);
    const pinnacle = result.events[0]!.bookmakers.find((b) => b.key === 'pinnacle')!;
    return { kept: pinnacle.markets.filter((m) => m.key !== 'h2h'), reasons: result.skipped.map((s) => s.reason) };
  }

  it('keeps legal lines, quarter lines included, with the home handicap or the total as the line', () => {
    expect(parsedWith(spreads(-0.75, 0.75)).kept).toEqual([
      {
        key: 'spreads',
        line: -0.75,
        lastUpdate: null,
        outcomes: [
          { name: 'Arsenal', price: 1.9, point: -0.75 },
          { name: 'Chelsea', price: 1.95, point: 0.75 },
        ],
      },
    ]);
    // A level handicap (Asian handicap 0, "draw no bet") has a line of 0, never -0.
    expect(Object.is(parsedWith(spreads(0, -0)).kept[0]!.line, 0)).toBe(true);
    expect(parsedWith(totals(2.25, 2.25)).kept[0]).toMatchObject({ key: 'totals', line: 2.25 });
    expect(parsedWith(totals(2.25, 2.25)).reasons).toEqual([]);
  });

  it.each([
    ['points not opposite', spreads(-0.5, 0.25), `${M1}.outcomes must give the two teams opposite points (has -0.5 and 0.25)`],
    ['points swapped onto one side', spreads(-0.5, -0.5), `${M1}.outcomes must give the two teams opposite points (has -0.5 and -0.5)`],
    ['total points differ', totals(2.5, 3), `${M1}.outcomes must give "Over" and "Under" the same point (has 2.5 and 3)`],
    ['point missing', spreads(undefined, 0.5), `${M1}.outcomes[0].point is missing (a spreads outcome has one)`],
    ['point null', totals(null, 2.5), `${M1}.outcomes[0].point is missing (a totals outcome has one)`],
    ['point a string', spreads('-0.5', 0.5), `${M1}.outcomes[0].point must be a multiple of 0.25 from -100 to 100 (got a string)`],
    ['point not a quarter', totals(2.3, 2.3), `${M1}.outcomes[0].point must be a multiple of 0.25 above 0 and at most 1000 (got 2.3)`],
    ['total not above 0', totals(0, 0), `${M1}.outcomes[0].point must be a multiple of 0.25 above 0 and at most 1000 (got 0)`],
    ['spread beyond any real line', spreads(-150, 150), `${M1}.outcomes[0].point must be a multiple of 0.25 from -100 to 100 (got -150)`],
    ['point infinite', spreads(Number.POSITIVE_INFINITY, 0.5), `${M1}.outcomes[0].point must be a multiple of 0.25 from -100 to 100 (got Infinity)`],
    ['totals named as teams', { key: 'totals', outcomes: [{ name: 'Arsenal', price: 1.9, point: 2.5 }, { name: 'Chelsea', price: 1.9, point: 2.5 }] }, `${M1}.outcomes[0].name must be "Over" or "Under"`],
    ['spreads with a draw', { key: 'spreads', outcomes: [{ name: 'Draw', price: 1.9, point: 0 }, { name: 'Chelsea', price: 1.9, point: 0 }] }, `${M1}.outcomes[0].name must be the home team or the away team`],
    ['one side only', { key: 'totals', outcomes: [{ name: 'Over', price: 1.9, point: 2.5 }] }, `${M1}.outcomes must list 2 outcomes (has 1)`],
    ['three outcomes', { key: 'totals', outcomes: [{ name: 'Over', price: 1.9, point: 2.5 }, { name: 'Under', price: 1.9, point: 2.5 }, { name: 'Over', price: 2, point: 3 }] }, `${M1}.outcomes must have at most 2 entries (has 3)`],
    ['a side twice', { key: 'totals', outcomes: [{ name: 'Over', price: 1.9, point: 2.5 }, { name: 'Over', price: 1.9, point: 2.5 }] }, `${M1}.outcomes[1].name repeats the outcome "Over"`],
    ['absurd price', { key: 'totals', outcomes: [{ name: 'Over', price: 0.9, point: 2.5 }, { name: 'Under', price: 1.9, point: 2.5 }] }, `${M1}.outcomes[0].price ${PRICE_RANGE} (got 0.9)`],
  ])('drops the market, keeps the book: %s', (_what, market, reason) => {
    const { kept, reasons } = parsedWith(market as Json);
    expect(kept).toEqual([]);
    expect(reasons).toEqual([`market dropped: ${reason}`]);
  });

  it('refuses a bookmaker listing two markets of one key (its main line is one line)', () => {
    const event = soccerEvent();
    ((event.bookmakers as Json[])[0]!.markets as Json[]).push(spreads(-0.5, 0.5), spreads(-0.75, 0.75));
    const result = parseOddsEvents([event]);
    expect(result.skipped).toEqual([{ eventId: ID, reason: `bookmaker dropped: ${B0}.markets lists 2 spreads markets; a bookmaker has at most one` }]);
  });

  it('reads the same shapes pushed in camelCase (ingestOdds)', () => {
    const input = structuredClone(parseOddsEvents([soccerEvent()]).events[0]!) as unknown as Json;
    ((input.bookmakers as Json[])[0]!.markets as Json[]).push({ key: 'totals', lastUpdate: null, outcomes: [{ name: 'Over', price: 1.9, point: 2.75 }, { name: 'Under', price: 1.95, point: 2.75 }] });
    const { event, skipped } = validateOddsEvent(input);
    expect(skipped).toEqual([]);
    expect(event!.bookmakers[0]!.markets[1]).toMatchObject({ key: 'totals', line: 2.75 });
  });
});
