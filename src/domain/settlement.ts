/**
 * Settlement rules (docs/VALUE_ENGINE.md, "Settlement"): the profit of a settled pick at a flat
 * 1-unit stake, when a score record may settle an event at all, and the result it gives a pick.
 */
import { DRAW_SELECTION, OVER, UNDER, type Market } from './market.js';
import type { PickResult } from './pick.js';
import type { SportSlug } from './sports.js';

export function settlementProfit(result: PickResult, odds: number): number {
  switch (result) {
    case 'won':
      return odds - 1;
    case 'half_won':
      // Half the stake wins at the odds, the other half is returned.
      return (odds - 1) / 2;
    case 'void':
      return 0;
    case 'half_lost':
      // Half the stake is lost, the other half is returned.
      return -0.5;
    case 'lost':
      return -1;
    default: {
      const unknown: never = result;
      throw new RangeError(`Unknown pick result ${String(unknown)}`);
    }
  }
}

export interface FinalScore {
  homeTeam: string;
  awayTeam: string;
  homeScore: number;
  awayScore: number;
}

/**
 * The result of an h2h pick from a final score (docs/VALUE_ENGINE.md, "Settlement"): the
 * selection's side won -> won, otherwise lost; a level score wins a "Draw" selection, and voids
 * the pick when the reference market had two outcomes (a two-way market has no draw to lose
 * to). Null when the selection names neither team nor the draw (never for an engine pick).
 */
export function h2hResult(selection: string, referenceOutcomes: number, score: FinalScore): PickResult | null {
  const level = score.homeScore === score.awayScore;
  if (selection === DRAW_SELECTION) return level ? 'won' : 'lost';
  if (selection !== score.homeTeam && selection !== score.awayTeam) return null;
  if (level) return referenceOutcomes === 2 ? 'void' : 'lost';
  const homeWon = score.homeScore > score.awayScore;
  return (selection === score.homeTeam) === homeWon ? 'won' : 'lost';
}

/** A line (a spread's handicap, a total's point) is a multiple of a quarter: x.0, x.25, x.5 or x.75. */
export function isLegalLine(point: number): boolean {
  return Number.isFinite(point) && Number.isInteger(point * 4);
}

type WholeResult = 'won' | 'void' | 'lost';

/** A bet on one half or whole line: above the line wins, on it is void (a push), below loses. */
function resultOfMargin(margin: number): WholeResult {
  return margin > 0 ? 'won' : margin < 0 ? 'lost' : 'void';
}

/**
 * The result of a bet on a line, given its margin at a point (`marginAt`, above 0 wins): a half or
 * whole line settles alone (won, void on a whole line, lost); a quarter line is two half stakes on
 * its neighbouring half and whole lines (2.25 = 2.0 + 2.5; -0.75 = -0.5 + -1.0), so won,
 * half_won, half_lost or lost. Null for a line that is not a multiple of a quarter, or halves
 * no integer score can give (one won and one lost).
 */
export function lineResult(point: number, marginAt: (point: number) => number): PickResult | null {
  if (!isLegalLine(point)) return null;
  if (Number.isInteger(point * 2)) return resultOfMargin(marginAt(point));
  const lower = resultOfMargin(marginAt(point - 0.25));
  const upper = resultOfMargin(marginAt(point + 0.25));
  if (lower === upper) return lower;
  if (lower === 'void' || upper === 'void') return lower === 'won' || upper === 'won' ? 'half_won' : 'half_lost';
  return null;
}

/**
 * The result of a spread (Asian handicap) pick from a final score: the selected team's score
 * plus the point against the other team's. Null when the selection names neither team.
 */
export function spreadResult(selection: string, point: number, score: FinalScore): PickResult | null {
  if (selection !== score.homeTeam && selection !== score.awayTeam) return null;
  const [own, other] = selection === score.homeTeam ? [score.homeScore, score.awayScore] : [score.awayScore, score.homeScore];
  return lineResult(point, (line) => own + line - other);
}

/** The result of a totals pick (`Over` or `Under` the point) from a final score; null for another selection. */
export function totalResult(selection: string, point: number, score: FinalScore): PickResult | null {
  const total = score.homeScore + score.awayScore;
  if (selection === OVER) return lineResult(point, (line) => total - line);
  if (selection === UNDER) return lineResult(point, (line) => line - total);
  return null;
}

/**
 * The result of a pick of any market from a final score: h2hResult, spreadResult or totalResult
 * by its market. Null when the pick cannot be settled from it (a selection or line that does
 * not fit the market).
 */
export function pickResult(
  pick: { market: Market; selection: string; line: number | null; referenceOutcomes: number },
  score: FinalScore,
): PickResult | null {
  switch (pick.market) {
    case 'h2h':
      return pick.line === null ? h2hResult(pick.selection, pick.referenceOutcomes, score) : null;
    case 'spreads':
      return pick.line === null ? null : spreadResult(pick.selection, pick.line, score);
    case 'totals':
      return pick.line === null ? null : totalResult(pick.selection, pick.line, score);
  }
}

/** One team's score, as a score record names it. */
export interface NamedScore {
  name: string;
  score: number;
}

/**
 * The final in the orientation of `teams` (a pick's or a stored event's), read by team name:
 * null unless the scores name exactly those two teams, in either order. Never by position: a
 * record listing the teams the other way round must settle the same way.
 */
export function finalScoreFor(teams: { homeTeam: string; awayTeam: string }, scores: readonly NamedScore[]): FinalScore | null {
  if (scores.length !== 2) return null;
  const home = scores.find((score) => score.name === teams.homeTeam);
  const away = scores.find((score) => score.name === teams.awayTeam);
  if (!home || !away || home === away) return null;
  return { homeTeam: teams.homeTeam, awayTeam: teams.awayTeam, homeScore: home.score, awayScore: away.score };
}

/**
 * The shortest time, in minutes after kickoff, in which a match of each sport can have ended
 * (MATCH_MIN_MINUTES): a "completed" record earlier than this is not believed. Floors, not
 * typical lengths: 90 minutes and a half-time in soccer, four 12-minute quarters and breaks in
 * basketball, a fight that ends in its first round in mma and boxing.
 */
export const DEFAULT_MATCH_MIN_MINUTES: Readonly<Record<SportSlug, number>> = Object.freeze({
  soccer: 105,
  basketball: 120,
  americanfootball: 180,
  icehockey: 120,
  baseball: 150,
  tennis: 45,
  esports: 20,
  mma: 15,
  boxing: 15,
  rugbyunion: 95,
  cricket: 150,
});

/** When the engine believes a final and a closing line (MATCH_MIN_MINUTES, CLOSING_LINE_MAX_AGE_SECONDS). */
export interface SettlementOptions {
  /** Minutes after kickoff before a completed record is believed, by sport slug; 0 turns the check off. */
  matchMinMinutes: Readonly<Record<SportSlug, number>>;
  /** An older last reference price at kickoff makes a stale closing line. */
  closingLineMaxAgeSeconds: number;
}

export const DEFAULT_SETTLEMENT_OPTIONS: Readonly<SettlementOptions> = Object.freeze({
  matchMinMinutes: DEFAULT_MATCH_MIN_MINUTES,
  closingLineMaxAgeSeconds: 3600,
});

/** Why a completed score record is not used (yet): logged once per event and reason. */
export type FinalRefusal =
  | 'teams_mismatch'
  | 'scores_incomplete'
  | 'kickoff_mismatch'
  | 'before_min_duration'
  | 'updated_before_kickoff';

export const FINAL_REFUSAL_TEXT: Readonly<Record<FinalRefusal, string>> = Object.freeze({
  teams_mismatch: "the score record does not name exactly the event's two teams; refused for this event",
  scores_incomplete: 'completed without a score for each of the two teams; not settled',
  kickoff_mismatch: "the score record's commence_time differs from the event's kickoff; waiting until the odds feed confirms the kickoff",
  before_min_duration: 'completed earlier than MATCH_MIN_MINUTES after kickoff allows; ignored until then',
  updated_before_kickoff: "the score record's last_update is not after kickoff; ignored until a later record",
});

export interface ScoreRecordFacts {
  homeTeam: string;
  awayTeam: string;
  commenceTime: Date;
  lastUpdate: Date | null;
  scores: readonly NamedScore[] | null;
}

export interface StoredEventFacts {
  homeTeam: string;
  awayTeam: string;
  commenceTime: Date;
}

/**
 * Whether a completed score record may stand as the event's final: the final in the event's own
 * orientation, or the reason it may not (yet). `minMinutes` 0 turns the duration check off.
 * Every refusal is re-examined at the next poll: a later record can be used.
 */
export function judgeFinal(
  record: ScoreRecordFacts,
  event: StoredEventFacts,
  now: Date,
  minMinutes: number,
): { final: FinalScore } | { refusal: FinalRefusal } {
  const sameTeams =
    (record.homeTeam === event.homeTeam && record.awayTeam === event.awayTeam) ||
    (record.homeTeam === event.awayTeam && record.awayTeam === event.homeTeam);
  if (!sameTeams) return { refusal: 'teams_mismatch' };
  const final = finalScoreFor(event, record.scores ?? []);
  if (!final) return { refusal: 'scores_incomplete' };
  const kickoff = event.commenceTime.getTime();
  if (record.commenceTime.getTime() !== kickoff) return { refusal: 'kickoff_mismatch' };
  if (now.getTime() < kickoff + minMinutes * 60_000) return { refusal: 'before_min_duration' };
  if (record.lastUpdate !== null && record.lastUpdate.getTime() <= kickoff) return { refusal: 'updated_before_kickoff' };
  return { final };
}
