/** Profit of a settled pick at a flat 1-unit stake (DESIGN section 3, "Track record"). */
import { DRAW_SELECTION } from './market.js';
import type { PickResult } from './pick.js';

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
