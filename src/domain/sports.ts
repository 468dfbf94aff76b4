/** Sport slugs of docs/API.md ("Pick", `sport`); the public endpoint and pick input accept exactly these. */
export const SPORT_SLUGS = [
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
] as const;

export type SportSlug = (typeof SPORT_SLUGS)[number];

const SPORT_SET: ReadonlySet<string> = new Set(SPORT_SLUGS);

export function isSportSlug(v: string): v is SportSlug {
  return SPORT_SET.has(v);
}
