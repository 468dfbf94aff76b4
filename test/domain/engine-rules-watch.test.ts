/** watchReferences: which configured references quoted none of an hour's polled events. */
import { describe, expect, it } from 'vitest';
import { watchReferences, type ReferenceWatch } from '../../src/domain/engine-rules.js';
import type { OddsEvent } from '../../src/domain/odds-feed.js';

const event = (...keys: string[]): OddsEvent => ({
  id: keys.join('+') || 'none',
  sportKey: 'soccer_epl',
  sportTitle: 'EPL',
  commenceTime: new Date('2026-11-24T15:00:00Z'),
  homeTeam: 'A',
  awayTeam: 'B',
  bookmakers: keys.map((key) => ({ key, title: key, lastUpdate: new Date(0), markets: [] })),
});
const HOUR = 3_600_000;

describe('watchReferences', () => {
  it('names, once the hour is over, each reference that quoted none of its events, and starts a new hour', () => {
    let watch: ReferenceWatch | null = null;
    const step = (ms: number, events: OddsEvent[]) => {
      const result = watchReferences(watch, events, ['pinnacle', 'betfair_ex_eu', 'smarkets'], ms);
      watch = result.watch;
      return result.quiet;
    };
    expect(step(0, [event('pinnacle', 'tipico')])).toEqual([]);
    expect(step(HOUR / 2, [event('smarkets')])).toEqual([]);
    expect(step(HOUR - 1, [event('tipico')])).toEqual([]);
    // The hour is over: betfair_ex_eu quoted nothing in it.
    expect(step(HOUR, [event('betfair_ex_eu')])).toEqual(['betfair_ex_eu']);
    // The new hour counts from that poll, whose events it holds.
    expect(step(2 * HOUR, [])).toEqual(['pinnacle', 'smarkets']);
    // An hour without any polled event names nobody.
    expect(step(3 * HOUR, [])).toEqual([]);
    expect(step(4 * HOUR, [])).toEqual([]);
  });
});
