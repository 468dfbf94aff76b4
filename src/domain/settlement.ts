/** Profit of a settled pick at a flat 1-unit stake (DESIGN section 3, "Track record"). */
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
