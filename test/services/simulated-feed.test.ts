import { describe, expect, it } from 'vitest';
import { DRAW_SELECTION } from '../../src/domain/market.js';
import { type OddsEvent, type ScoreEvent, parseOddsEvents, parseScoreEvents, sportSlugOfKey } from '../../src/domain/odds-feed.js';
import { DEFAULT_DETECTION_OPTIONS, detectValue } from '../../src/domain/value-detection.js';
import {
  DEFAULT_SIMULATED_SEED,
  SIMULATED_EXCHANGE,
  SIMULATED_SHARP_BOOKMAKER,
  SIMULATED_SOFT_BOOKMAKERS,
  SIMULATED_SPORT_KEYS,
  SimulatedFeed,
} from '../../src/services/value-engine/simulated-feed.js';

const SECOND = 1000;
const MINUTE = 60 * SECOND;
const HOUR = 60 * MINUTE;
// Deliberately not on a whole second or minute: the feed must not rely on a tidy start.
const STARTED_AT = new Date('2026-11-24T05:00:07.250Z');
const at = (ms: number) => new Date(STARTED_AT.getTime() + ms);
const feedOf = (seed = DEFAULT_SIMULATED_SEED) => new SimulatedFeed({ seed, startedAt: STARTED_AT });

/** What an HTTP client would get: the body through JSON, then the project's parser. */
function oddsAt(feed: SimulatedFeed, sportKey: string, now: Date): OddsEvent[] {
  const parsed = parseOddsEvents(JSON.parse(JSON.stringify(feed.odds(sportKey, now))));
  expect(parsed.error).toBeUndefined();
  expect(parsed.skipped).toEqual([]);
  return parsed.events;
}

function scoresAt(feed: SimulatedFeed, sportKey: string, now: Date): ScoreEvent[] {
  const parsed = parseScoreEvents(JSON.parse(JSON.stringify(feed.scores(sportKey, now))));
  expect(parsed.error).toBeUndefined();
  expect(parsed.skipped).toEqual([]);
  return parsed.events;
}

const normalised = (prices: number[]) => {
  const implied = prices.map((price) => 1 / price);
  const total = implied.reduce((a, b) => a + b, 0);
  return implied.map((p) => p / total);
};
const pricesOf = (event: OddsEvent, key: string) => event.bookmakers.find((b) => b.key === key)!.markets[0]!.outcomes.map((o) => o.price);
const median = (values: number[]) => [...values].sort((a, b) => a - b)[Math.floor(values.length / 2)]!;

describe('SimulatedFeed bodies', () => {
  it('serves sport keys of the service sports, and refuses unknown ones', () => {
    for (const key of SIMULATED_SPORT_KEYS) expect(sportSlugOfKey(key)).not.toBeNull();
    expect(SIMULATED_SPORT_KEYS.length).toBeGreaterThanOrEqual(3);
    expect(() => new SimulatedFeed({ startedAt: STARTED_AT, sportKeys: ['golf_masters'] })).toThrow(/golf_masters/);
    const soccerOnly = new SimulatedFeed({ startedAt: STARTED_AT, sportKeys: ['soccer_epl'] });
    expect(soccerOnly.odds('basketball_nba', STARTED_AT)).toEqual([]);
    expect(soccerOnly.odds('soccer_epl', STARTED_AT).length).toBeGreaterThan(0);
  });

  it('parses as v4 odds with no skipped entries: a sharp and 5 soft books, fresh, upcoming, 3-way soccer only', () => {
    const feed = feedOf();
    for (const offset of [0, 7.5 * MINUTE, 45 * MINUTE + 13 * SECOND, 26 * HOUR]) {
      const now = at(offset);
      for (const sportKey of SIMULATED_SPORT_KEYS) {
        const events = oddsAt(feed, sportKey, now);
        expect(events.length).toBeGreaterThanOrEqual(2);
        for (const event of events) {
          expect(event.sportKey).toBe(sportKey);
          expect(event.id).toMatch(/^[0-9a-f]{32}$/);
          expect(event.commenceTime.getTime()).toBeGreaterThan(now.getTime());
          expect(event.commenceTime.getTime()).toBeLessThanOrEqual(now.getTime() + 31 * MINUTE);
          expect(event.bookmakers.map((b) => b.key)).toEqual([SIMULATED_SHARP_BOOKMAKER.key, SIMULATED_EXCHANGE.key, ...SIMULATED_SOFT_BOOKMAKERS.map((b) => b.key)]);
          for (const bookmaker of event.bookmakers) {
            const market = bookmaker.markets[0]!;
            for (const updated of [bookmaker.lastUpdate, market.lastUpdate!]) {
              expect(updated.getTime()).toBeLessThanOrEqual(now.getTime());
              expect(now.getTime() - updated.getTime()).toBeLessThan(MINUTE);
            }
            const names = market.outcomes.map((o) => o.name);
            const expected = sportKey.startsWith('soccer_') ? [event.homeTeam, event.awayTeam, DRAW_SELECTION] : [event.homeTeam, event.awayTeam];
            expect(names).toEqual(expected);
          }
          // The sharp margin is 2-3 % (prices rounded to 3 decimals).
          const sharpOverround = pricesOf(event, 'pinnacle').reduce((sum, price) => sum + 1 / price, 0) - 1;
          expect(sharpOverround).toBeGreaterThan(0.019);
          expect(sharpOverround).toBeLessThan(0.031);
        }
      }
    }
  });

  it('quotes spreads and totals in the sports with lines (quarter lines in soccer), one book a notch off the sharp line', () => {
    const feed = feedOf();
    const lines: number[] = [];
    // How far the off-line book deals each line: a quarter in soccer, a point in basketball,
    // half a goal on ice hockey totals; the puck line is -1.5 / +1.5 at every book.
    const offBy: Record<string, { spreads: number; totals: number }> = {
      soccer_epl: { spreads: 0.25, totals: 0.25 },
      basketball_nba: { spreads: 1, totals: 1 },
      icehockey_nhl: { spreads: 0, totals: 0.5 },
    };
    for (const sportKey of SIMULATED_SPORT_KEYS) {
      for (const offset of [0, 33 * MINUTE, 5 * HOUR]) {
        for (const event of oddsAt(feed, sportKey, at(offset))) {
          for (const bookmaker of event.bookmakers) {
            const keys = bookmaker.markets.map((m) => m.key);
            // The exchange quotes h2h (back and lay) only, as exchanges are served.
            expect(keys).toEqual(sportSlugOfKey(sportKey) === 'tennis' || bookmaker.key === SIMULATED_EXCHANGE.key ? ['h2h'] : ['h2h', 'spreads', 'totals']);
          }
          const sharp = event.bookmakers[0]!;
          for (const market of sharp.markets.filter((m) => m.key !== 'h2h')) {
            if (sportKey === 'soccer_epl') lines.push(market.line!);
            const offLine = event.bookmakers.find((b) => b.key === 'onexbet')!.markets.find((m) => m.key === market.key)!;
            expect(offLine.line).toBe(market.line! + offBy[sportKey]![market.key as 'spreads' | 'totals']);
            for (const soft of event.bookmakers.slice(1).filter((b) => b.key !== 'onexbet' && b.key !== SIMULATED_EXCHANGE.key)) {
              expect(soft.markets.find((m) => m.key === market.key)!.line).toBe(market.line);
            }
          }
        }
      }
    }
    expect(lines.some((line) => Math.abs(line % 0.5) === 0.25)).toBe(true);
  });

  it('parses as v4 scores with no skipped entries: upcoming events have null scores', () => {
    const feed = feedOf();
    for (const sportKey of SIMULATED_SPORT_KEYS) {
      const now = at(2 * HOUR);
      const events = scoresAt(feed, sportKey, now);
      expect(events.some((e) => e.completed)).toBe(true);
      expect(events.some((e) => e.commenceTime > now)).toBe(true);
      for (const event of events) {
        if (event.commenceTime > now) {
          expect(event).toMatchObject({ completed: false, scores: null, lastUpdate: null });
        } else {
          expect(event.scores).toHaveLength(2);
          expect(event.lastUpdate!.getTime()).toBeLessThanOrEqual(now.getTime());
        }
      }
      // The raw body carries scores as strings, as v4 does.
      for (const raw of feed.scores(sportKey, now) as { scores: { score: unknown }[] | null }[]) {
        for (const score of raw.scores ?? []) expect(score.score).toMatch(/^\d+$/);
      }
    }
  });

  it('is deterministic for a seed and a time, whatever the order of calls', () => {
    const times = [at(0), at(90 * SECOND), at(17 * MINUTE), at(3 * HOUR)];
    const forward = feedOf(7);
    const bodies = times.map((now) => SIMULATED_SPORT_KEYS.map((key) => [forward.odds(key, now), forward.scores(key, now)]));
    const backward = feedOf(7);
    const reversed = [...times].reverse().map((now) => SIMULATED_SPORT_KEYS.map((key) => [backward.odds(key, now), backward.scores(key, now)]));
    expect(reversed.reverse()).toEqual(bodies);
    expect(forward.odds('soccer_epl', times[1]!)).toEqual(forward.odds('soccer_epl', times[1]!));
    expect(feedOf(8).odds('soccer_epl', times[1]!)).not.toEqual(bodies[1]![0]![0]);
  });

  it('lists a new fixture every few minutes, each kicking off 5 to 30 minutes after it appears', () => {
    const feed = feedOf();
    for (const sportKey of SIMULATED_SPORT_KEYS) {
      const firstSeen = new Map<string, { seen: number; kickoff: number }>();
      for (let t = 0; t <= 60 * MINUTE; t += MINUTE) {
        for (const event of oddsAt(feed, sportKey, at(t))) {
          if (!firstSeen.has(event.id)) firstSeen.set(event.id, { seen: t, kickoff: event.commenceTime.getTime() - STARTED_AT.getTime() });
        }
      }
      const newcomers = [...firstSeen.values()].filter((e) => e.seen > 0);
      expect(newcomers.length).toBeGreaterThanOrEqual(10);
      for (const { seen, kickoff } of newcomers) {
        // First seen at the first 60 s poll after it appeared; kickoff is rounded up to a minute.
        expect(kickoff - seen).toBeGreaterThan(5 * MINUTE - MINUTE);
        expect(kickoff - seen).toBeLessThanOrEqual(30 * MINUTE + MINUTE);
      }
    }
  });
});

describe('SimulatedFeed prices', () => {
  it('soft books follow the sharp price of lagMinutes earlier, not the current one', () => {
    const feed = feedOf();
    expect(SIMULATED_SOFT_BOOKMAKERS.length).toBeGreaterThanOrEqual(4);
    const maxLag = 4;
    for (const book of SIMULATED_SOFT_BOOKMAKERS) {
      expect(book.lagMinutes).toBeGreaterThanOrEqual(1);
      expect(book.lagMinutes).toBeLessThanOrEqual(3);
      expect(book.margin).toBeGreaterThanOrEqual(0.04);
      expect(book.margin).toBeLessThanOrEqual(0.08);
    }
    // Errors per candidate lag: |soft(t) - sharp(t - lag)| over outcomes and samples.
    const errors = new Map<string, number[][]>(SIMULATED_SOFT_BOOKMAKERS.map((b) => [b.key, Array.from({ length: maxLag + 1 }, () => [])]));
    for (const sportKey of SIMULATED_SPORT_KEYS) {
      const sharpByMinute: Map<string, number[]>[] = [];
      for (let minute = 0; minute <= 60; minute++) {
        const now = at(minute * MINUTE + 30 * SECOND);
        const events = oddsAt(feed, sportKey, now);
        sharpByMinute.push(new Map(events.map((e) => [e.id, normalised(pricesOf(e, 'pinnacle'))])));
        if (minute < maxLag) continue;
        for (const event of events) {
          for (const book of SIMULATED_SOFT_BOOKMAKERS) {
            const soft = normalised(pricesOf(event, book.key));
            for (let lag = 0; lag <= maxLag; lag++) {
              const sharp = sharpByMinute[minute - lag]!.get(event.id);
              if (!sharp) continue;
              errors.get(book.key)![lag]!.push(...soft.map((p, j) => Math.abs(p - sharp[j]!)));
            }
          }
        }
      }
    }
    for (const book of SIMULATED_SOFT_BOOKMAKERS) {
      const byLag = errors.get(book.key)!.map(median);
      const bestLag = byLag.indexOf(Math.min(...byLag));
      expect({ book: book.key, bestLag }).toEqual({ book: book.key, bestLag: book.lagMinutes });
    }
  });

  it.each([DEFAULT_SIMULATED_SEED, 2, 3, 4])(
    'seed %i: detectValue finds a pick of every market within 2 minutes, a held one within 30, and rejects most outcomes',
    (seed) => {
      const feed = feedOf(seed);
      let outcomePolls = 0;
      let candidates = 0;
      const firstByMarket = new Map<string, number>();
      let firstCandidateAt: number | null = null;
      let firstHeldAt: number | null = null;
      for (let t = 0; t <= 30 * MINUTE; t += MINUTE) {
        const now = at(t);
        for (const sportKey of SIMULATED_SPORT_KEYS) {
          for (const event of oddsAt(feed, sportKey, now)) {
            const result = detectValue(event, DEFAULT_DETECTION_OPTIONS, now);
            outcomePolls += result.candidates.length + result.rejected.length;
            candidates += result.candidates.length;
            for (const candidate of result.candidates) {
              expect(candidate.bookmakerKey).not.toBe('pinnacle');
              expect(candidate.edgePostTaxFraction).toBeGreaterThanOrEqual(DEFAULT_DETECTION_OPTIONS.minEdge);
              firstCandidateAt ??= t;
              if (!firstByMarket.has(candidate.market)) firstByMarket.set(candidate.market, t);
              if (candidate.held) firstHeldAt ??= t;
            }
            // The feed stays inside the default filters: only edges decide, except the lines the
            // off-line book deals away from the reference's, which nothing prices, and heavy
            // favourites (a basketball moneyline at 1.10) priced below the odds range.
            for (const rejected of result.rejected) {
              if (rejected.reason === 'outside_odds_range') {
                expect(rejected.offers!.every((offer) => offer.price < DEFAULT_DETECTION_OPTIONS.oddsRange.min)).toBe(true);
                continue;
              }
              const offLine = event.bookmakers
                .find((b) => b.key === 'onexbet')!
                .markets.some((m) => m.key === rejected.market && m.outcomes.some((o) => o.name === rejected.selection && o.point === rejected.line));
              const reference = event.bookmakers.find((b) => b.key === 'pinnacle')!;
              const atReference = reference.markets.some((m) => m.key === rejected.market && m.outcomes.some((o) => o.name === rejected.selection && (o.point ?? null) === rejected.line));
              expect(rejected.reason).toBe(offLine && !atReference ? 'no_reference' : 'below_min_edge');
            }
          }
        }
      }
      expect(firstCandidateAt).not.toBeNull();
      expect(firstCandidateAt!).toBeLessThanOrEqual(2 * MINUTE);
      expect([...firstByMarket.keys()].sort()).toEqual(['h2h', 'spreads', 'totals']);
      for (const [, first] of firstByMarket) expect(first).toBeLessThanOrEqual(2 * MINUTE);
      expect(firstHeldAt).not.toBeNull();
      expect(candidates / outcomePolls).toBeLessThan(0.1);
    },
  );
});

describe('SimulatedFeed scores', () => {
  it('events leave the odds at kickoff, score from kickoff, and complete 10 to 20 minutes later with a valid final score', () => {
    const feed = feedOf();
    for (const sportKey of SIMULATED_SPORT_KEYS) {
      const bodies = new Map<number, ScoreEvent[]>();
      const scoresOf = (t: number) => bodies.get(t) ?? bodies.set(t, scoresAt(feed, sportKey, at(t))).get(t)!;
      const upcoming = oddsAt(feed, sportKey, at(20 * MINUTE));
      expect(upcoming.length).toBeGreaterThan(0);
      for (const [index, event] of upcoming.entries()) {
        const kickoff = event.commenceTime.getTime() - STARTED_AT.getTime();
        const listed = (t: number) => oddsAt(feed, sportKey, at(t)).some((e) => e.id === event.id);
        const score = (t: number) => scoresOf(t).find((e) => e.id === event.id);
        expect(listed(kickoff - SECOND)).toBe(true);
        expect(listed(kickoff)).toBe(false);
        expect(score(kickoff - SECOND)).toMatchObject({ completed: false, scores: null });

        let completedAt: number | null = null;
        let previous = [0, 0];
        for (let t = kickoff; t <= kickoff + 25 * MINUTE && completedAt === null; t += 30 * SECOND) {
          const now = score(t)!;
          const goals = [event.homeTeam, event.awayTeam].map((team) => now.scores!.find((s) => s.name === team)!.score);
          expect(goals[0]!).toBeGreaterThanOrEqual(previous[0]!);
          expect(goals[1]!).toBeGreaterThanOrEqual(previous[1]!);
          previous = goals;
          if (now.completed) completedAt = t;
        }
        expect(completedAt).not.toBeNull();
        expect(completedAt! - kickoff).toBeGreaterThanOrEqual(10 * MINUTE);
        expect(completedAt! - kickoff).toBeLessThanOrEqual(20 * MINUTE);
        if (!sportKey.startsWith('soccer_')) expect(previous[0]).not.toBe(previous[1]);

        if (index > 0) continue;
        // daysFrom=3: the result stays listed for three days after kickoff, then goes.
        expect(score(kickoff + 71 * HOUR)).toMatchObject({ completed: true });
        expect(score(kickoff + 71 * HOUR)!.scores!.map((s) => s.score)).toEqual(previous);
        expect(score(kickoff + 73 * HOUR)).toBeUndefined();
      }
    }
  });

  it('soccer sometimes ends level, so a Draw pick can win; two-way sports never do', () => {
    const feed = feedOf();
    const finals = (sportKey: string) =>
      scoresAt(feed, sportKey, at(6 * HOUR))
        .filter((e) => e.completed)
        .map((e) => e.scores!.map((s) => s.score));
    const soccer = finals('soccer_epl');
    expect(soccer.length).toBeGreaterThan(50);
    expect(soccer.some(([home, away]) => home === away)).toBe(true);
    expect(soccer.some(([home, away]) => home !== away)).toBe(true);
    for (const sportKey of SIMULATED_SPORT_KEYS.filter((key) => !key.startsWith('soccer_'))) {
      for (const [home, away] of finals(sportKey)) expect(home).not.toBe(away);
    }
  });
});
