import { describe, expect, it } from 'vitest';
import { isSportSlug, SPORT_SLUGS } from '../../src/domain/sports.js';

describe('sports', () => {
  it('lists exactly the documented sport slugs, in order', () => {
    expect(SPORT_SLUGS).toEqual([
      'soccer',
      'basketball',
      'americanfootball',
      'icehockey',
      'baseball',
      'tennis',
      'esports',
      'mma',
      'boxing',
      'rugbyunion',
      'cricket',
    ]);
  });

  it.each(SPORT_SLUGS)('accepts %s', (slug) => {
    expect(isSportSlug(slug)).toBe(true);
  });

  it.each(['', 'Soccer', 'SOCCER', ' soccer', 'soccer ', 'football', 'ice-hockey', 'rugby', 'toString', '__proto__'])(
    'rejects %j',
    (value) => {
      expect(isSportSlug(value)).toBe(false);
    },
  );
});
