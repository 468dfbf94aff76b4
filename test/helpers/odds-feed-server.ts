/**
 * A local odds feed on 127.0.0.1 speaking The Odds API v4: `/v4/sports/{key}/odds` and
 * `/v4/sports/{key}/scores` answer what the test put there (JSON bodies in v4's snake_case),
 * or a fault the test asked for (status, broken body, silence, 429 with Retry-After). Every
 * request is recorded, so a test can check the query the engine sent.
 */
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { Clock } from '../../src/domain/clock.js';
import { createTestApp, type TestApp } from './app.js';

export type FeedFault =
  | { kind: 'status'; status: number }
  | { kind: 'raw'; body: string }
  | { kind: 'hang' }
  | { kind: 'rate_limited'; retryAfterSeconds: number };

export interface RecordedRequest {
  path: string;
  query: URLSearchParams;
}

export interface OddsFeedServer {
  url: string;
  requests: RecordedRequest[];
  /** The body for GET /v4/sports/{key}/{odds|scores}. */
  set(kind: 'odds' | 'scores', sportKey: string, body: unknown): void;
  /** The next `times` answers of that endpoint are this fault instead of the body. */
  fail(kind: 'odds' | 'scores', sportKey: string, fault: FeedFault, times?: number): void;
  /** Extra headers on every 2xx answer (x-requests-remaining ...). */
  headers: Record<string, string>;
  /** Resolves when the feed has received `count` requests in all. */
  waitForRequests(count: number, timeoutMs?: number): Promise<void>;
  close(): Promise<void>;
}

export async function startOddsFeedServer(): Promise<OddsFeedServer> {
  const bodies = new Map<string, unknown>();
  const faults = new Map<string, FeedFault[]>();
  const requests: RecordedRequest[] = [];
  const waiters: { count: number; resolve: () => void }[] = [];
  const hanging = new Set<ServerResponse>();
  const headers: Record<string, string> = {};

  const server: Server = createServer((req: IncomingMessage, res: ServerResponse) => {
    const url = new URL(req.url ?? '/', 'http://127.0.0.1');
    requests.push({ path: url.pathname, query: url.searchParams });
    for (const waiter of [...waiters]) {
      if (requests.length >= waiter.count) {
        waiters.splice(waiters.indexOf(waiter), 1);
        waiter.resolve();
      }
    }
    const match = /^\/v4\/sports\/([^/]+)\/(odds|scores)$/.exec(url.pathname);
    if (!match) {
      res.writeHead(404, { 'content-type': 'application/json' }).end('{"message":"Unknown sport"}');
      return;
    }
    const key = `${match[2]}:${decodeURIComponent(match[1]!)}`;
    const fault = faults.get(key)?.shift();
    if (fault?.kind === 'hang') {
      hanging.add(res);
      res.on('close', () => hanging.delete(res));
      return;
    }
    if (fault?.kind === 'status') {
      res.writeHead(fault.status, { 'content-type': 'application/json' }).end('{"message":"feed trouble"}');
      return;
    }
    if (fault?.kind === 'rate_limited') {
      res.writeHead(429, { 'content-type': 'application/json', 'retry-after': String(fault.retryAfterSeconds) }).end('{"message":"Too many requests"}');
      return;
    }
    const body = fault?.kind === 'raw' ? fault.body : JSON.stringify(bodies.get(key) ?? []);
    res.writeHead(200, { 'content-type': 'application/json', ...headers }).end(body);
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;

  return {
    url: `http://127.0.0.1:${port}`,
    requests,
    headers,
    set(kind, sportKey, body) {
      bodies.set(`${kind}:${sportKey}`, body);
    },
    fail(kind, sportKey, fault, times = 1) {
      const key = `${kind}:${sportKey}`;
      faults.set(key, [...(faults.get(key) ?? []), ...Array.from({ length: times }, () => fault)]);
    },
    waitForRequests(count, timeoutMs = 20_000) {
      if (requests.length >= count) return Promise.resolve();
      return new Promise((resolve, reject) => {
        const timer = setTimeout(() => reject(new Error(`the feed saw ${requests.length} of ${count} requests`)), timeoutMs);
        waiters.push({ count, resolve: () => (clearTimeout(timer), resolve()) });
      });
    },
    async close() {
      for (const res of hanging) res.destroy();
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}

/** v4 bookmaker JSON with one h2h market. */
export function v4Bookmaker(key: string, title: string, prices: Record<string, number>, lastUpdate: Date): Record<string, unknown> {
  return {
    key,
    title,
    last_update: lastUpdate.toISOString(),
    markets: [{ key: 'h2h', last_update: lastUpdate.toISOString(), outcomes: Object.entries(prices).map(([name, price]) => ({ name, price })) }],
  };
}

/** A v4 /odds event. */
export function v4OddsEvent(fields: {
  id: string;
  sportKey?: string;
  sportTitle?: string;
  commenceTime: Date;
  homeTeam: string;
  awayTeam: string;
  bookmakers: Record<string, unknown>[];
}): Record<string, unknown> {
  return {
    id: fields.id,
    sport_key: fields.sportKey ?? 'soccer_epl',
    sport_title: fields.sportTitle ?? 'EPL',
    commence_time: fields.commenceTime.toISOString(),
    home_team: fields.homeTeam,
    away_team: fields.awayTeam,
    bookmakers: fields.bookmakers,
  };
}

/** A v4 /odds event as an ingestOdds input (camelCase, the markets' own last_update kept). */
export function ingestInputOf(v4Event: Record<string, unknown>) {
  const event = v4Event as Record<string, any>;
  return {
    id: event.id,
    sportKey: event.sport_key,
    sportTitle: event.sport_title,
    commenceTime: event.commence_time,
    homeTeam: event.home_team,
    awayTeam: event.away_team,
    bookmakers: event.bookmakers.map((b: Record<string, any>) => ({
      key: b.key,
      title: b.title,
      lastUpdate: b.last_update,
      markets: b.markets.map((m: Record<string, any>) => ({ key: m.key, lastUpdate: m.last_update, outcomes: m.outcomes })),
    })),
  };
}

/**
 * A v4 /scores event; `scores` null before the start, in home, away order. `lastUpdate` defaults
 * to two hours after kickoff (a finished soccer match); null sends null.
 */
export function v4ScoreEvent(fields: {
  id: string;
  sportKey?: string;
  commenceTime: Date;
  completed: boolean;
  homeTeam: string;
  awayTeam: string;
  scores: [number, number] | null;
  lastUpdate?: Date | null;
}): Record<string, unknown> {
  const lastUpdate = fields.lastUpdate === undefined ? new Date(fields.commenceTime.getTime() + 2 * 3_600_000) : fields.lastUpdate;
  return {
    id: fields.id,
    sport_key: fields.sportKey ?? 'soccer_epl',
    sport_title: 'EPL',
    commence_time: fields.commenceTime.toISOString(),
    completed: fields.completed,
    home_team: fields.homeTeam,
    away_team: fields.awayTeam,
    scores: fields.scores && [
      { name: fields.homeTeam, score: String(fields.scores[0]) },
      { name: fields.awayTeam, score: String(fields.scores[1]) },
    ],
    last_update: lastUpdate?.toISOString() ?? null,
  };
}

/**
 * Prices whose power devig gives exactly `fair` (p = pi^k): pi = p^(1/k). With k > 1 the book
 * carries a margin; the fair probabilities are then known by construction.
 */
export function powerPrices(fair: Record<string, number>, k: number): Record<string, number> {
  return Object.fromEntries(Object.entries(fair).map(([name, p]) => [name, 1 / p ** (1 / k)]));
}

/** One line the app logged, as the engine tests read them. */
export interface LogEntry {
  level: string;
  fields: Record<string, unknown>;
  msg: string;
}

/**
 * The real app reading `feed` (its poller driven by hand with pollNow, no timer) on `clock`, for
 * these v4 sport keys (their odds and scores emptied first), with every log line of the app
 * recorded. `env` adds to or overrides the feed's variables.
 */
export async function startEngineApp(
  feed: OddsFeedServer,
  clock: Clock,
  sportKeys: readonly string[],
  env: Record<string, string> = {},
): Promise<{ app: TestApp; logs: LogEntry[] }> {
  for (const sport of sportKeys) {
    feed.set('odds', sport, []);
    feed.set('scores', sport, []);
  }
  const logs: LogEntry[] = [];
  const record = (level: string) => (fields: unknown, msg?: string) => void logs.push({ level, fields: fields as Record<string, unknown>, msg: msg ?? '' });
  const app = await createTestApp({
    clock,
    env: { ODDS_FEED_URL: feed.url, ODDS_FEED_API_KEY: 'feed-key-0123456789', ODDS_FEED_SPORTS: sportKeys.join(','), ...env },
    runtime: { startPoller: false, feedRetryMinTimeoutMs: 5, feedTimeoutMs: 1_000, log: { info: record('info'), warn: record('warn'), error: record('error') } as never },
  });
  return { app, logs };
}

/** What a real-data replay's engine logged: feed skips it expects (counted) and anything else warned or errored. */
export interface ReplayLog {
  /** Warnings and errors other than the expected skips: a replay expects none. */
  problems: string[];
  /** Feed entries skipped for the expected reason, summed over the polls. */
  skipped: number;
}

/**
 * The real app polling a local feed by hand for a real-data replay (no poller timer, quick
 * retries, a generous timeout): `expectedSkip` matches the reasons of the feed skips the data is
 * known to cause (the best-price "book" is often an arbitrage, refused for a negative margin);
 * `onInfo` sees every info line.
 */
export async function startReplayApp(
  feed: OddsFeedServer,
  clock: Clock,
  env: Record<string, string>,
  options: { expectedSkip: RegExp; onInfo?: (fields: Record<string, unknown>, msg: string) => void },
): Promise<{ app: TestApp; log: ReplayLog }> {
  const log: ReplayLog = { problems: [], skipped: 0 };
  const problem = (fields: unknown, msg?: string) => void log.problems.push(`${msg} ${JSON.stringify(fields)}`);
  const app = await createTestApp({
    clock,
    env: { ODDS_FEED_URL: feed.url, ODDS_FEED_API_KEY: 'replay-feed-key-0123', ...env },
    runtime: {
      startPoller: false,
      feedRetryMinTimeoutMs: 5,
      feedTimeoutMs: 10_000,
      log: {
        info: (fields: Record<string, unknown>, msg?: string) => options.onInfo?.(fields, msg ?? ''),
        warn: (fields: { skipped?: number; examples?: { reason: string }[] }, msg?: string) => {
          if (msg === 'value engine: feed entries skipped' && fields.examples!.every((e) => options.expectedSkip.test(e.reason))) log.skipped += fields.skipped!;
          else problem(fields, msg);
        },
        error: problem,
      } as never,
    },
  });
  return { app, log };
}
