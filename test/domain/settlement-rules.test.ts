import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { DRAW_SELECTION } from '../../src/domain/market.js';
import {
  DEFAULT_MATCH_MIN_MINUTES,
  type FinalScore,
  type NamedScore,
  type ScoreRecordFacts,
  type StoredEventFacts,
  finalScoreFor,
  h2hResult,
  judgeFinal,
} from '../../src/domain/settlement.js';
import { SPORT_SLUGS } from '../../src/domain/sports.js';

const MINUTE = 60_000;
const KICKOFF = new Date('2026-11-24T15:00:00Z');
const at = (minutesAfterKickoff: number) => new Date(KICKOFF.getTime() + minutesAfterKickoff * MINUTE);

const teams = { homeTeam: 'Arsenal', awayTeam: 'Chelsea' };

const EVENT: StoredEventFacts = { homeTeam: 'Arsenal', awayTeam: 'Chelsea', commenceTime: KICKOFF };

/** A completed record that judgeFinal accepts at `at(120)` with minMinutes 105: each test breaks one fact. */
function record(overrides: Partial<ScoreRecordFacts> = {}): ScoreRecordFacts {
  return {
    homeTeam: 'Arsenal',
    awayTeam: 'Chelsea',
    commenceTime: new Date(KICKOFF.getTime()),
    lastUpdate: at(115),
    scores: [
      { name: 'Arsenal', score: 2 },
      { name: 'Chelsea', score: 1 },
    ],
    ...overrides,
  };
}

const ARSENAL_2_CHELSEA_1: FinalScore = { homeTeam: 'Arsenal', awayTeam: 'Chelsea', homeScore: 2, awayScore: 1 };

describe('finalScoreFor', () => {
  it('reads the scores by team name, in the orientation of the teams it is given', () => {
    const scores: NamedScore[] = [
      { name: 'Arsenal', score: 2 },
      { name: 'Chelsea', score: 1 },
    ];
    expect(finalScoreFor(teams, scores)).toEqual(ARSENAL_2_CHELSEA_1);
    expect(finalScoreFor({ homeTeam: 'Chelsea', awayTeam: 'Arsenal' }, scores)).toEqual({
      homeTeam: 'Chelsea',
      awayTeam: 'Arsenal',
      homeScore: 1,
      awayScore: 2,
    });
  });

  it('gives the same final for a record listing the teams in either order', () => {
    const reversed: NamedScore[] = [
      { name: 'Chelsea', score: 1 },
      { name: 'Arsenal', score: 2 },
    ];
    expect(finalScoreFor(teams, reversed)).toEqual(ARSENAL_2_CHELSEA_1);
  });

  it('is null when a name is not one of the two teams', () => {
    expect(finalScoreFor(teams, [{ name: 'Arsenal', score: 2 }, { name: 'Chelsea FC', score: 1 }])).toBeNull();
    expect(finalScoreFor(teams, [{ name: 'Spurs', score: 2 }, { name: 'Chelsea', score: 1 }])).toBeNull();
  });

  it('is null when a team is missing or there are not exactly two scores', () => {
    expect(finalScoreFor(teams, [])).toBeNull();
    expect(finalScoreFor(teams, [{ name: 'Arsenal', score: 2 }])).toBeNull();
    expect(
      finalScoreFor(teams, [
        { name: 'Arsenal', score: 2 },
        { name: 'Chelsea', score: 1 },
        { name: 'Spurs', score: 0 },
      ]),
    ).toBeNull();
  });

  it('is null when both scores name the same team', () => {
    expect(finalScoreFor(teams, [{ name: 'Arsenal', score: 2 }, { name: 'Arsenal', score: 1 }])).toBeNull();
    expect(finalScoreFor(teams, [{ name: 'Chelsea', score: 0 }, { name: 'Chelsea', score: 0 }])).toBeNull();
  });

  it('is null when the two teams have the same name (one score would count for both)', () => {
    expect(finalScoreFor({ homeTeam: 'Arsenal', awayTeam: 'Arsenal' }, [{ name: 'Arsenal', score: 2 }, { name: 'Chelsea', score: 1 }])).toBeNull();
  });

  it('for any two distinct teams, is the same whichever order the scores come in, and h2hResult agrees with an independent rule', () => {
    const name = fc.string({ minLength: 1, maxLength: 12 }).filter((s) => s !== DRAW_SELECTION);
    const goals = fc.integer({ min: 0, max: 20 });
    fc.assert(
      fc.property(
        fc.uniqueArray(name, { minLength: 2, maxLength: 2 }),
        goals,
        goals,
        fc.constantFrom(2, 3),
        fc.boolean(),
        ([home, away], homeGoals, awayGoals, outcomes, pickHome) => {
          const pair = { homeTeam: home!, awayTeam: away! };
          const homeEntry = { name: home!, score: homeGoals };
          const awayEntry = { name: away!, score: awayGoals };
          const inOrder = finalScoreFor(pair, [homeEntry, awayEntry]);
          const reversed = finalScoreFor(pair, [awayEntry, homeEntry]);
          expect(inOrder).toEqual({ homeTeam: home, awayTeam: away, homeScore: homeGoals, awayScore: awayGoals });
          expect(reversed).toEqual(inOrder);

          const selection = pickHome ? home! : away!;
          const own = pickHome ? homeGoals : awayGoals;
          const other = pickHome ? awayGoals : homeGoals;
          const expected = own > other ? 'won' : own < other ? 'lost' : outcomes === 3 ? 'lost' : 'void';
          expect(h2hResult(selection, outcomes, inOrder!)).toBe(expected);
          expect(h2hResult(selection, outcomes, reversed!)).toBe(expected);
        },
      ),
      { numRuns: 500 },
    );
  });
});

describe('judgeFinal', () => {
  const NOW = at(120);
  const MIN = 105;

  it('accepts a consistent completed record', () => {
    expect(judgeFinal(record(), EVENT, NOW, MIN)).toEqual({ final: ARSENAL_2_CHELSEA_1 });
  });

  it.each([
    ['a different name for the home team', { homeTeam: 'Arsenal FC' }],
    ['a different name for the away team', { awayTeam: 'Chelsea FC' }],
    ['one of the teams twice', { awayTeam: 'Arsenal' }],
    ['a third team', { homeTeam: 'Spurs' }],
  ])("refuses a record with %s as 'teams_mismatch'", (_label, overrides) => {
    expect(judgeFinal(record(overrides), EVENT, NOW, MIN)).toEqual({ refusal: 'teams_mismatch' });
  });

  it("refuses 'Norwich City' vs 'Norwich' as 'teams_mismatch', even with scores naming the event's teams", () => {
    const event: StoredEventFacts = { homeTeam: 'Norwich', awayTeam: 'Ipswich Town', commenceTime: KICKOFF };
    const facts = record({
      homeTeam: 'Norwich City',
      awayTeam: 'Ipswich Town',
      scores: [
        { name: 'Norwich', score: 1 },
        { name: 'Ipswich Town', score: 1 },
      ],
    });
    expect(judgeFinal(facts, event, NOW, MIN)).toEqual({ refusal: 'teams_mismatch' });
  });

  it('accepts a record naming the two teams the other way round, giving the final in the event orientation', () => {
    const swapped = record({
      homeTeam: 'Chelsea',
      awayTeam: 'Arsenal',
      scores: [
        { name: 'Chelsea', score: 1 },
        { name: 'Arsenal', score: 2 },
      ],
    });
    const judged = judgeFinal(swapped, EVENT, NOW, MIN);
    expect(judged).toEqual({ final: ARSENAL_2_CHELSEA_1 });
    // The event's home team is Arsenal: homeScore is Arsenal's, not the record's home (Chelsea) score.
    expect('final' in judged && judged.final.homeScore).toBe(2);
  });

  it.each([
    ['no scores', { scores: null }],
    ['an empty score list', { scores: [] }],
    ['a score for one team only', { scores: [{ name: 'Arsenal', score: 2 }] }],
    ['a score naming another team', { scores: [{ name: 'Arsenal', score: 2 }, { name: 'Spurs', score: 1 }] }],
    ['both scores for the same team', { scores: [{ name: 'Arsenal', score: 2 }, { name: 'Arsenal', score: 1 }] }],
  ])("refuses a record with %s as 'scores_incomplete'", (_label, overrides) => {
    expect(judgeFinal(record(overrides as Partial<ScoreRecordFacts>), EVENT, NOW, MIN)).toEqual({ refusal: 'scores_incomplete' });
  });

  it.each([
    ['a minute later', 1],
    ['a second earlier', -1 / 60],
    ['a day later', 24 * 60],
  ])("refuses a record whose commenceTime is %s than the event's as 'kickoff_mismatch'", (_label, minutes) => {
    expect(judgeFinal(record({ commenceTime: at(minutes), lastUpdate: at(119) }), EVENT, at(24 * 60 + 200), MIN)).toEqual({
      refusal: 'kickoff_mismatch',
    });
  });

  it("refuses 'before_min_duration' strictly before kickoff + minMinutes and accepts at exactly that instant", () => {
    const facts = record({ lastUpdate: at(1) });
    expect(judgeFinal(facts, EVENT, new Date(at(MIN).getTime() - 1), MIN)).toEqual({ refusal: 'before_min_duration' });
    expect(judgeFinal(facts, EVENT, at(30), MIN)).toEqual({ refusal: 'before_min_duration' });
    expect(judgeFinal(facts, EVENT, at(MIN), MIN)).toEqual({ final: ARSENAL_2_CHELSEA_1 });
  });

  it('with minMinutes 0 accepts a record at kickoff', () => {
    expect(judgeFinal(record({ lastUpdate: null }), EVENT, KICKOFF, 0)).toEqual({ final: ARSENAL_2_CHELSEA_1 });
    expect(judgeFinal(record({ lastUpdate: null }), EVENT, new Date(KICKOFF.getTime() - 1), 0)).toEqual({ refusal: 'before_min_duration' });
  });

  it("refuses a record last updated at or before kickoff as 'updated_before_kickoff'", () => {
    expect(judgeFinal(record({ lastUpdate: new Date(KICKOFF.getTime()) }), EVENT, NOW, MIN)).toEqual({ refusal: 'updated_before_kickoff' });
    expect(judgeFinal(record({ lastUpdate: at(-60) }), EVENT, NOW, MIN)).toEqual({ refusal: 'updated_before_kickoff' });
  });

  it('accepts a record whose lastUpdate is null or just after kickoff', () => {
    expect(judgeFinal(record({ lastUpdate: null }), EVENT, NOW, MIN)).toEqual({ final: ARSENAL_2_CHELSEA_1 });
    expect(judgeFinal(record({ lastUpdate: new Date(KICKOFF.getTime() + 1) }), EVENT, NOW, MIN)).toEqual({ final: ARSENAL_2_CHELSEA_1 });
  });
});

describe('DEFAULT_MATCH_MIN_MINUTES', () => {
  it('gives every sport slug a positive whole number of minutes', () => {
    expect(Object.keys(DEFAULT_MATCH_MIN_MINUTES).sort()).toEqual([...SPORT_SLUGS].sort());
    for (const sport of SPORT_SLUGS) {
      const minutes = DEFAULT_MATCH_MIN_MINUTES[sport];
      expect(Number.isInteger(minutes), sport).toBe(true);
      expect(minutes, sport).toBeGreaterThan(0);
    }
  });

  it('has the documented floors', () => {
    expect(DEFAULT_MATCH_MIN_MINUTES).toMatchObject({
      soccer: 105,
      basketball: 120,
      americanfootball: 180,
      icehockey: 120,
      baseball: 150,
      tennis: 45,
      esports: 20,
    });
  });
});
