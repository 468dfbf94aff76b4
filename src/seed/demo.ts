/**
 * The embedded first-start demo: 90 days of realistic history across every sport, most of
 * it settled (every result kind), today's picks, a few held for review, analyses for most
 * picks and one key per tier. Everything goes through the services, so the demo obeys the
 * same rules as real data. Deterministic (seeded PRNG) so screenshots and docs stay stable.
 */
import type { Clock } from '../domain/clock.js';
import type { PickResult } from '../domain/pick.js';
import { SPORT_SLUGS, type SportSlug } from '../domain/sports.js';
import { PickEntity } from '../persistence/entities/pick.js';
import { ApiKeyEntity } from '../persistence/entities/api-key.js';
import type { Orm } from '../persistence/orm.js';
import type { Services } from '../services/index.js';

const LEAGUES: Record<SportSlug, { league: string; teams: string[]; draws: boolean }> = {
  soccer: { league: 'Premier League', teams: ['Arsenal', 'Chelsea', 'Liverpool', 'Manchester City', 'Tottenham', 'Newcastle', 'Aston Villa', 'Brighton'], draws: true },
  basketball: { league: 'NBA', teams: ['Boston Celtics', 'Denver Nuggets', 'Milwaukee Bucks', 'Phoenix Suns', 'Miami Heat', 'Golden State Warriors'], draws: false },
  americanfootball: { league: 'NFL', teams: ['Kansas City Chiefs', 'Buffalo Bills', 'San Francisco 49ers', 'Philadelphia Eagles', 'Dallas Cowboys', 'Detroit Lions'], draws: false },
  icehockey: { league: 'NHL', teams: ['Edmonton Oilers', 'Florida Panthers', 'New York Rangers', 'Colorado Avalanche', 'Vegas Golden Knights', 'Boston Bruins'], draws: false },
  baseball: { league: 'MLB', teams: ['Los Angeles Dodgers', 'New York Yankees', 'Atlanta Braves', 'Houston Astros', 'Texas Rangers', 'Baltimore Orioles'], draws: false },
  tennis: { league: 'ATP Tour', teams: ['Jannik Sinner', 'Carlos Alcaraz', 'Novak Djokovic', 'Alexander Zverev', 'Daniil Medvedev', 'Taylor Fritz'], draws: false },
  esports: { league: 'LoL World Championship', teams: ['T1', 'Gen.G', 'G2 Esports', 'Bilibili Gaming', 'Fnatic', 'Team Liquid'], draws: false },
  mma: { league: 'UFC', teams: ['Islam Makhachev', 'Alex Pereira', 'Ilia Topuria', 'Tom Aspinall', 'Dricus du Plessis', 'Belal Muhammad'], draws: false },
  boxing: { league: 'WBC Heavyweight', teams: ['Oleksandr Usyk', 'Tyson Fury', 'Anthony Joshua', 'Daniel Dubois', 'Zhilei Zhang', 'Joseph Parker'], draws: true },
  rugbyunion: { league: 'Six Nations', teams: ['Ireland', 'France', 'England', 'Scotland', 'Wales', 'Italy'], draws: true },
  cricket: { league: 'Indian Premier League', teams: ['Mumbai Indians', 'Chennai Super Kings', 'Kolkata Knight Riders', 'Rajasthan Royals', 'Gujarat Titans', 'Delhi Capitals'], draws: false },
};

const BOOKMAKERS = [
  { name: 'Bet365', slug: 'bet365' },
  { name: 'Unibet', slug: 'unibet' },
  { name: 'Betsson', slug: 'betsson' },
  { name: 'William Hill', slug: 'williamhill' },
];


/** mulberry32: small, fast, deterministic. */
function prng(seed: number): () => number {
  let state = seed >>> 0;
  return () => {
    state = (state + 0x6d2b79f5) >>> 0;
    let t = state;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

const HOUR = 3_600_000;
const DAY = 24 * HOUR;

export interface SeedResult {
  keys: Record<string, string>;
  picks: number;
}

/** Seeds only an empty database (no picks and no keys); returns null when there was data. */
export async function seedDemo(services: Services, orm: Orm, clock: Clock): Promise<SeedResult | null> {
  const em = orm.em.fork();
  if ((await em.count(PickEntity, {})) > 0 || (await em.count(ApiKeyEntity, {})) > 0) return null;

  const random = prng(20261122);
  const pickOf = <T>(items: readonly T[]): T => items[Math.floor(random() * items.length)]!;
  const round = (value: number, step: number) => Math.round(value / step) * step;
  const now = clock.now();
  let count = 0;
  // Outcomes follow the fair probability, with a few voids and half results (Asian lines).
  const outcome = (referenceFairOdds: number): PickResult => {
    const r = random();
    if (r < 0.04) return 'void';
    if (r < 0.08) return 'half_won';
    if (r < 0.12) return 'half_lost';
    return random() < 1 / referenceFairOdds ? 'won' : 'lost';
  };

  const publishOne = async (kickoffAt: Date, options: { publishedAt?: Date; review?: boolean; sport?: SportSlug }) => {
    const sport = options.sport ?? pickOf(SPORT_SLUGS);
    const { league, teams, draws } = LEAGUES[sport];
    const homeTeam = pickOf(teams);
    let awayTeam = pickOf(teams);
    while (awayTeam === homeTeam) awayTeam = pickOf(teams);
    const drawPick = draws && random() < 0.15;
    const selection = drawPick ? 'Draw' : random() < 0.55 ? homeTeam : awayTeam;
    const referenceFairOdds = Number(round(drawPick ? 3 + random() * 1.2 : 1.5 + random() * 2.5, 0.01).toFixed(2));
    const edge = 0.03 + random() * 0.12;
    const odds = Number(round(referenceFairOdds * (1 + edge), 0.01).toFixed(2));
    const pick = await services.picks.publish({
      sport,
      league,
      homeTeam,
      awayTeam,
      kickoffAt: kickoffAt.toISOString(),
      selection,
      bookmaker: pickOf(BOOKMAKERS),
      odds,
      referenceFairOdds,
      confidence: Math.round(45 + random() * 50),
      status: options.review ? 'admin_review' : 'published',
      publishedAt: options.review ? null : (options.publishedAt ?? now).toISOString(),
    });
    count += 1;
    if (random() < 0.85) {
      await services.analyses.upsert({
        matchId: pick.id,
        analysis:
          `${homeTeam} host ${awayTeam} in the ${league}. Our model prices ${selection} at fair odds of ` +
          `${referenceFairOdds.toFixed(2)} against the sharp market, while ${pick.bookmakerName} offers ${odds.toFixed(2)}: ` +
          `an edge of ${pick.edgePct.toFixed(2)} % before tax (${(pick.edgePctPostTax * 100).toFixed(2)} % after). ` +
          `Recent form, rest days and line movement support the position; suggested Kelly fraction ${(pick.kellyFraction * 100).toFixed(1)} %.`,
      });
    }
    return pick;
  };

  // 90 days of history: one or two picks a day, settled a few hours after kickoff.
  for (let daysAgo = 90; daysAgo >= 1; daysAgo -= 1) {
    const perDay = random() < 0.4 ? 2 : 1;
    for (let i = 0; i < perDay; i += 1) {
      const kickoffAt = new Date(now.getTime() - daysAgo * DAY + Math.round(random() * 8) * HOUR - 6 * HOUR);
      const pick = await publishOne(kickoffAt, { publishedAt: new Date(kickoffAt.getTime() - (6 + Math.round(random() * 30)) * HOUR) });
      // The most recent two days stay unsettled now and then, as real books do.
      if (daysAgo <= 2 && i === 0) continue;
      await services.picks.settle({
        id: pick.id,
        result: outcome(pick.referenceFairOdds),
        closingOdds: Number(Math.max(1.01, pick.odds * (0.93 + random() * 0.1)).toFixed(2)),
        settledAt: new Date(Math.min(kickoffAt.getTime() + 3 * HOUR, now.getTime())).toISOString(),
      });
    }
  }
  // Today: fresh picks for the public endpoint, one per sport, kicking off later.
  for (const sport of SPORT_SLUGS) {
    await publishOne(new Date(now.getTime() + (2 + Math.round(random() * 30)) * HOUR), { sport });
  }
  // Held for review: invisible until approved.
  for (let i = 0; i < 3; i += 1) {
    await publishOne(new Date(now.getTime() + (4 + i) * HOUR), { review: true });
  }

  const keys: Record<string, string> = {};
  for (const tier of ['starter', 'growth', 'enterprise'] as const) {
    const created = await services.apiKeys.create({ tier, label: `Demo ${tier} key` });
    keys[tier] = created.key;
  }
  return { keys, picks: count };
}
