/**
 * A month of real fixtures served by a local feed on 127.0.0.1 that speaks The Odds API v4 and
 * charges credits as v4 documents them: an odds request markets x regions, a scores request 2
 * with `daysFrom` (1 without), the events list nothing; every answer carries `x-requests-used`,
 * `x-requests-remaining` and `x-requests-last`. A key out of credits answers 401 with v4's
 * `OUT_OF_USAGE_CREDITS`. What it serves follows the service's (manual) clock: upcoming events with
 * their prices, finals 115 minutes after kickoff.
 *
 * The fixtures are the Premier League's 2024/25 kickoffs and prices (football-data.co.uk CSV):
 * each sport key gets another month of the season, moved by whole weeks into the simulated
 * month, so every sport keeps a real league's weekly rhythm.
 */
import { readFileSync } from 'node:fs';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { Clock } from '../../src/domain/clock.js';
import type { PlanSettings } from '../../src/domain/feed-credits.js';

export interface Fixture {
  id: string;
  sportKey: string;
  kickoff: number;
  home: string;
  away: string;
  homeGoals: number;
  awayGoals: number;
  /** Pinnacle's opening and closing 1X2, a soft book's and the market's best price. */
  pinnacle: [number, number, number];
  pinnacleClose: [number, number, number];
  soft: [number, number, number];
  best: [number, number, number];
}

const MINUTE = 60_000;
const HOUR = 60 * MINUTE;
const DAY = 24 * HOUR;

/** The month simulated: December 2024. */
export const MONTH_START = Date.UTC(2024, 11, 1);
export const MONTH_END = Date.UTC(2025, 0, 1);
/** Four leagues: the season's December itself, and its January, October and April moved by whole weeks into December. */
export const MONTH_SPORTS = [
  { sportKey: 'soccer_epl', shiftWeeks: 0 },
  { sportKey: 'soccer_spain_la_liga', shiftWeeks: -5 },
  { sportKey: 'soccer_germany_bundesliga', shiftWeeks: 8 },
  { sportKey: 'soccer_italy_serie_a', shiftWeeks: -18 },
] as const;

/** The defaults of the service's variables as the planner takes them: h2h, spreads and totals in one region (3 credits a poll). */
export function defaultPlanSettings(sportKeys: readonly string[]): PlanSettings {
  return { sportKeys, oddsPollMs: MINUTE, scoresPollMs: 5 * MINUTE, closingWindowMs: 2 * MINUTE, horizonMs: 72 * HOUR, oddsCredits: 3, scoresCredits: 2 };
}

/** Odds polls counted by the time from each to its sport's next kickoff. */
export function pollsByTimeToKickoff(polls: readonly { sportKey: string; at: number }[], fixtures: readonly Fixture[]): Record<string, number> {
  const buckets: [label: string, upToMs: number][] = [
    ['under 10 min', 10 * MINUTE],
    ['10 min - 1 h', HOUR],
    ['1 - 6 h', 6 * HOUR],
    ['6 - 24 h', DAY],
    ['1 - 3 days', 3 * DAY],
  ];
  const counts = Object.fromEntries(buckets.map(([label]) => [label, 0]));
  for (const poll of polls) {
    const next = fixtures.find((f) => f.sportKey === poll.sportKey && f.kickoff > poll.at);
    const bucket = next && buckets.find(([, upTo]) => next.kickoff - poll.at <= upTo);
    if (bucket) counts[bucket[0]]!++;
  }
  return counts;
}

function parseCsv(text: string): Record<string, string>[] {
  const lines = text.replace(/^\uFEFF/, '').trim().split(/\r?\n/);
  const header = lines[0]!.split(',');
  return lines.slice(1).map((line) => Object.fromEntries(line.split(',').map((cell, i) => [header[i]!, cell])));
}

/** The season's kickoffs (UK time read as UTC: the month simulated is December, when they agree). */
function seasonRows(): Record<string, string>[] {
  return parseCsv(readFileSync(new URL('../fixtures/real-season/E0-2024-25.csv', import.meta.url), 'utf8'));
}

function kickoffOf(row: Record<string, string>): number {
  const [day, month, year] = row.Date!.split('/').map(Number) as [number, number, number];
  const [hour, minute] = row.Time!.split(':').map(Number) as [number, number];
  return Date.UTC(year, month - 1, day, hour, minute);
}

const prices = (row: Record<string, string>, h: string, d: string, a: string): [number, number, number] => [Number(row[h]), Number(row[d]), Number(row[a])];

/**
 * The fixtures of the month starting at `monthStart` for each sport key: the key's source month
 * of the season moved by `shiftWeeks` weeks, those landing inside the simulated month kept.
 */
export function monthFixtures(monthStart: number, monthEnd: number, sports: readonly { sportKey: string; shiftWeeks: number }[]): Fixture[] {
  const rows = seasonRows();
  const fixtures: Fixture[] = [];
  for (const { sportKey, shiftWeeks } of sports) {
    for (const row of rows) {
      const kickoff = kickoffOf(row) + shiftWeeks * 7 * DAY;
      if (kickoff < monthStart || kickoff >= monthEnd) continue;
      fixtures.push({
        id: `${sportKey}-${row.Date!.replaceAll('/', '')}-${row.HomeTeam!.replace(/\W/g, '')}`,
        sportKey,
        kickoff,
        home: row.HomeTeam!,
        away: row.AwayTeam!,
        homeGoals: Number(row.FTHG),
        awayGoals: Number(row.FTAG),
        pinnacle: prices(row, 'PSH', 'PSD', 'PSA'),
        pinnacleClose: prices(row, 'PSCH', 'PSCD', 'PSCA'),
        soft: prices(row, 'WHH', 'WHD', 'WHA'),
        best: prices(row, 'MaxH', 'MaxD', 'MaxA'),
      });
    }
  }
  return fixtures.sort((a, b) => a.kickoff - b.kickoff);
}

export interface FeedRequest {
  at: number;
  kind: 'odds' | 'scores' | 'events';
  sportKey: string;
  credits: number;
  status: number;
}

export interface CreditFeed {
  url: string;
  requests: FeedRequest[];
  /** Credits the key has used this period. */
  used: number;
  /** The key's credits for the period (the plan bought from the feed). */
  quota: number;
  /** The next `times` odds and scores answers are 429 EXCEEDED_FREQ_LIMIT (credits left, nothing charged). */
  limitFrequency(times: number): void;
  /** The next `times` odds answers are this 5xx (nothing charged). */
  failOdds(times: number, status?: number): void;
  close(): Promise<void>;
}

/** Pinnacle's prices drift from opening to closing over the last two days. */
function pinnacleAt(fixture: Fixture, now: number): [number, number, number] {
  const share = Math.min(1, Math.max(0, 1 - (fixture.kickoff - now) / (2 * DAY)));
  return fixture.pinnacle.map((open, i) => Math.round((open + (fixture.pinnacleClose[i]! - open) * share) * 1000) / 1000) as [number, number, number];
}

function h2h(key: string, title: string, [home, draw, away]: [number, number, number], fixture: Fixture, at: string) {
  return {
    key,
    title,
    last_update: at,
    markets: [{ key: 'h2h', last_update: at, outcomes: [{ name: fixture.home, price: home }, { name: fixture.away, price: away }, { name: 'Draw', price: draw }] }],
  };
}

export async function startCreditFeed(clock: Clock, fixtures: readonly Fixture[], quota: number): Promise<CreditFeed> {
  const requests: FeedRequest[] = [];
  let frequencyLimited = 0;
  let oddsFailures: { times: number; status: number } = { times: 0, status: 503 };
  const feed: CreditFeed = {
    url: '',
    requests,
    used: 0,
    quota,
    limitFrequency(times) {
      frequencyLimited += times;
    },
    failOdds(times, status = 503) {
      oddsFailures = { times, status };
    },
    close: async () => {
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
  const server: Server = createServer((req, res) => {
    const url = new URL(req.url ?? '/', 'http://127.0.0.1');
    const match = /^\/v4\/sports\/([a-z0-9_]+)\/(odds|scores|events)$/.exec(url.pathname);
    if (!match) return void res.writeHead(404, { 'content-type': 'application/json' }).end('{"message":"Unknown sport","error_code":"UNKNOWN_SPORT"}');
    const sportKey = match[1]!;
    const kind = match[2] as FeedRequest['kind'];
    const now = clock.now().getTime();
    const credits =
      kind === 'odds'
        ? (url.searchParams.get('markets') ?? 'h2h').split(',').length * (url.searchParams.get('regions') ?? '').split(',').length
        : kind === 'scores'
          ? url.searchParams.has('daysFrom') ? 2 : 1
          : 0;
    const answer = (status: number, body: unknown, charged: number) => {
      feed.used += charged;
      requests.push({ at: now, kind, sportKey, credits: charged, status });
      res
        .writeHead(status, {
          'content-type': 'application/json',
          'x-requests-used': String(feed.used),
          'x-requests-remaining': String(Math.max(0, feed.quota - feed.used)),
          'x-requests-last': String(charged),
        })
        .end(JSON.stringify(body));
    };
    if (kind !== 'events' && frequencyLimited > 0) {
      frequencyLimited--;
      return answer(429, { message: 'Requests are being rate limited', error_code: 'EXCEEDED_FREQ_LIMIT' }, 0);
    }
    if (kind === 'odds' && oddsFailures.times > 0) {
      oddsFailures.times--;
      return answer(oddsFailures.status, { message: 'Internal error' }, 0);
    }
    if (feed.quota - feed.used < credits) return answer(401, { message: 'Usage quota has been reached', error_code: 'OUT_OF_USAGE_CREDITS' }, 0);
    const own = fixtures.filter((f) => f.sportKey === sportKey);
    const at = new Date(now - 10_000).toISOString();
    const core = (f: Fixture) => ({ id: f.id, sport_key: sportKey, sport_title: sportKey, commence_time: new Date(f.kickoff).toISOString(), home_team: f.home, away_team: f.away });
    if (kind === 'events') return answer(200, own.filter((f) => f.kickoff > now).map(core), 0);
    if (kind === 'odds') {
      // Upcoming events a fortnight ahead, as v4 lists them, with their prices at this time.
      const upcoming = own.filter((f) => f.kickoff > now && f.kickoff - now <= 14 * DAY);
      return answer(
        200,
        upcoming.map((f) => ({
          ...core(f),
          bookmakers: [h2h('pinnacle', 'Pinnacle', pinnacleAt(f, now), f, at), h2h('williamhill', 'William Hill', f.soft, f, at), h2h('bestodds', 'Best price', f.best, f, at)],
        })),
        credits,
      );
    }
    // Scores: the last three days' started events; final 115 minutes after kickoff.
    const started = own.filter((f) => f.kickoff <= now && now - f.kickoff <= 3 * DAY);
    return answer(
      200,
      started.map((f) => {
        const completed = now >= f.kickoff + 115 * 60_000;
        return {
          ...core(f),
          completed,
          scores: completed ? [{ name: f.home, score: String(f.homeGoals) }, { name: f.away, score: String(f.awayGoals) }] : null,
          last_update: new Date(Math.min(now, f.kickoff + 115 * 60_000)).toISOString(),
        };
      }),
      credits,
    );
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  feed.url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  return feed;
}
