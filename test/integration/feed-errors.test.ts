/**
 * Feed errors (docs/VALUE_ENGINE.md, "How a poll runs"): the real app polls a small v4 feed on
 * 127.0.0.1 that answers each request as the test says (status, body, quota headers, or not yet).
 * A 401, 403 or 422 is asked once per poll and logged with its status, the feed's message (key
 * redacted) and the quota headers; a 5xx or 429 is retried; one sport's failing or slow answers
 * never hold up another sport's poll, and the answers are ingested one at a time. Every wait is
 * for an event (a request, an answer, a log line), never for a fixed time.
 */
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterEach, describe, expect, it } from 'vitest';
import { ManualClock } from '../../src/domain/clock.js';
import type { OddsEvent } from '../../src/domain/odds-feed.js';
import type { FeedResponse, FeedSource } from '../../src/services/value-engine/feed-source.js';
import { createTestApp, type TestApp } from '../helpers/app.js';
import { powerPrices, v4Bookmaker, v4OddsEvent } from '../helpers/odds-feed-server.js';

const NOW = new Date('2026-11-24T12:00:00Z');
const KICKOFF = new Date('2026-11-24T15:00:00Z');
const FRESH = new Date(NOW.getTime() - 30_000);
/** The feed's API key: no log line may show it, nor any piece of it. */
const FEED_KEY = 'k3yZ7f1e0c9d8b2a4411zz';
const KEY_PIECE = 'k3yZ';
const PINNACLE = powerPrices({ Arsenal: 0.5, Chelsea: 0.25, Draw: 0.25 }, 1.05);

/** One EPL match where Tipico's Chelsea 4.6 is a value pick (fair 4.0), as in value-engine.test.ts. */
function goodOdds(id: string): Record<string, unknown>[] {
  const rename = (prices: Record<string, number>) =>
    Object.fromEntries(Object.entries(prices).map(([name, price]) => [name === 'Draw' ? name : `${name} ${id}`, price]));
  return [
    v4OddsEvent({
      id,
      commenceTime: KICKOFF,
      homeTeam: `Arsenal ${id}`,
      awayTeam: `Chelsea ${id}`,
      bookmakers: [
        v4Bookmaker('pinnacle', 'Pinnacle', rename(PINNACLE), FRESH),
        v4Bookmaker('tipico', 'Tipico', rename({ Arsenal: 1.9, Chelsea: 4.6, Draw: 3.8 }), FRESH),
      ],
    }),
  ];
}

// ---------------------------------------------------------------------------------------------
// Waiting for events: every change (a request, an answer, an abort, a log line) wakes the waiters.

let waiters: (() => void)[] = [];
function changed(): void {
  const woken = waiters;
  waiters = [];
  for (const wake of woken) wake();
}
/** Resolves once `check()` holds after some change; fails the test if none comes in time. */
async function until(check: () => boolean, what: string, timeoutMs = 15_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!check()) {
    const left = deadline - Date.now();
    if (left <= 0) throw new Error(`timed out waiting for ${what}`);
    await new Promise<void>((resolve, reject) => {
      const timer = setTimeout(() => reject(new Error(`timed out waiting for ${what}`)), left);
      waiters.push(() => {
        clearTimeout(timer);
        resolve();
      });
    });
  }
}

function deferred<T = void>(): { promise: Promise<T>; resolve: (value: T) => void } {
  let resolve!: (value: T) => void;
  const promise = new Promise<T>((r) => (resolve = r));
  return { promise, resolve };
}

// ---------------------------------------------------------------------------------------------
// A v4 feed whose every answer the test chooses.

interface Answer {
  status: number;
  body?: unknown;
  headers?: Record<string, string>;
}
/** Answers the n-th request (from 1) of one endpoint; may wait before answering. */
type Handler = (n: number) => Answer | Promise<Answer>;

interface FeedRequest {
  /** `odds:soccer_epl`, `scores:basketball_nba` */
  endpoint: string;
  query: URLSearchParams;
  answered: boolean;
  /** The client gave up (closed the connection) before the answer. */
  aborted: boolean;
}

interface Feed {
  url: string;
  requests: FeedRequest[];
  count(endpoint: string): number;
  /** How `odds:<sport>` or `scores:<sport>` answers (default: 200 and `[]`). */
  on(endpoint: string, handler: Handler): void;
  close(): Promise<void>;
}

async function startFeed(): Promise<Feed> {
  const handlers = new Map<string, Handler>();
  const requests: FeedRequest[] = [];
  const server: Server = createServer((req, res) => {
    const url = new URL(req.url ?? '/', 'http://127.0.0.1');
    const match = /^\/v4\/sports\/([^/]+)\/(odds|scores)$/.exec(url.pathname);
    const endpoint = match ? `${match[2]}:${decodeURIComponent(match[1]!)}` : url.pathname;
    const record: FeedRequest = { endpoint, query: url.searchParams, answered: false, aborted: false };
    requests.push(record);
    const n = requests.filter((r) => r.endpoint === endpoint).length;
    res.on('close', () => {
      if (!res.writableFinished) {
        record.aborted = true;
        changed();
      }
    });
    changed();
    void (async () => {
      const handler: Handler = handlers.get(endpoint) ?? (() => ({ status: 200, body: [] }));
      const answer = await handler(n);
      if (res.destroyed) return;
      const body = typeof answer.body === 'string' ? answer.body : JSON.stringify(answer.body ?? []);
      res.writeHead(answer.status, { 'content-type': 'application/json', ...answer.headers }).end(body, () => {
        record.answered = true;
        changed();
      });
    })();
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}`,
    requests,
    count: (endpoint) => requests.filter((r) => r.endpoint === endpoint).length,
    on: (endpoint, handler) => void handlers.set(endpoint, handler),
    async close() {
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}

// ---------------------------------------------------------------------------------------------

interface LogEntry {
  level: string;
  fields: Record<string, unknown>;
  msg: string;
}

describe('odds feed errors', () => {
  let feed: Feed | null = null;
  let t: TestApp | null = null;
  let logs: LogEntry[] = [];

  afterEach(async () => {
    await t?.close();
    await feed?.close();
    t = null;
    feed = null;
  });

  async function start(options: { sports: string; feedSource?: FeedSource; timers?: boolean }): Promise<TestApp> {
    feed ??= await startFeed();
    logs = [];
    const record = (level: string) => (fields: unknown, msg?: string) => {
      logs.push({ level, fields: fields as Record<string, unknown>, msg: msg ?? '' });
      changed();
    };
    t = await createTestApp({
      clock: new ManualClock(NOW),
      env: {
        ODDS_FEED_URL: feed.url,
        ODDS_FEED_API_KEY: FEED_KEY,
        ODDS_FEED_SPORTS: options.sports,
        ODDS_POLL_SECONDS: '1',
        SCORES_POLL_SECONDS: '1',
      },
      runtime: {
        startPoller: options.timers ?? false,
        feedRetryMinTimeoutMs: 5,
        // Far above any wait here: a held answer ends by the test's release or by stop(), never by a timeout.
        feedTimeoutMs: 60_000,
        feedSource: options.feedSource,
        log: { info: record('info'), warn: record('warn'), error: record('error') } as never,
      },
    });
    return t;
  }

  const pollOdds = async () => expect(await t!.runtime.poller!.pollNow(['odds'])).toBe(true);
  const visibleHomeTeams = async () =>
    (await t!.graphql<{ picks: { nodes: { homeTeam: string }[] } }>(`query { picks(first: 50) { nodes { homeTeam } } }`)).data!.picks.nodes.map((p) => p.homeTeam);
  const warnings = (sportKey: string) => logs.filter((entry) => entry.level === 'warn' && entry.fields.sportKey === sportKey);
  const processed = (sportKey: string) => logs.some((entry) => entry.msg === 'value engine: poll processed' && entry.fields.sportKey === sportKey);
  /** No error-level line, and the key (or a piece of it) in no line at all. */
  const expectCleanLogs = () => {
    expect(logs.filter((entry) => entry.level === 'error')).toEqual([]);
    for (const entry of logs) expect(JSON.stringify(entry)).not.toContain(KEY_PIECE);
  };

  // The feed repeats the key in its message, the last time across the 200th character (from
  // the 195th): cutting the message before redacting it would leave a piece of the key.
  const keyedMessage = (start: string) => {
    const head = `${start} (apiKey=${FEED_KEY}); the key ${FEED_KEY} `;
    return `${head}${'.'.repeat(194 - head.length - 1)} ${FEED_KEY} ${'-'.repeat(100)}`;
  };

  interface RefusalCase {
    status: number;
    message: string;
    headers: Record<string, string>;
    quota: { requestsRemaining?: number; requestsUsed?: number };
    quotaExhausted: true | undefined;
  }
  it.each<RefusalCase>([
    { status: 401, message: 'API key is not valid', headers: {}, quota: {}, quotaExhausted: undefined },
    {
      status: 401,
      message: 'Usage quota has been reached',
      headers: { 'x-requests-remaining': '0', 'x-requests-used': '500' },
      quota: { requestsRemaining: 0, requestsUsed: 500 },
      quotaExhausted: true,
    },
    {
      status: 403,
      message: 'Access to this sport is not included in your plan',
      headers: { 'x-requests-remaining': '312', 'x-requests-used': '188' },
      quota: { requestsRemaining: 312, requestsUsed: 188 },
      quotaExhausted: undefined,
    },
    {
      status: 422,
      message: 'Invalid markets parameter',
      headers: { 'x-requests-remaining': '312', 'x-requests-used': '188' },
      quota: { requestsRemaining: 312, requestsUsed: 188 },
      quotaExhausted: undefined,
    },
  ])('asks once per poll on a $status ($message), warns with status, message and quota, never the key', async ({ status, message, headers, quota, quotaExhausted }) => {
    await start({ sports: 'soccer_epl' });
    feed!.on('odds:soccer_epl', () => ({ status, body: { message: keyedMessage(message) }, headers }));

    await pollOdds();
    expect(feed!.count('odds:soccer_epl')).toBe(1);
    await pollOdds();
    expect(feed!.count('odds:soccer_epl')).toBe(2);
    // The key went to the feed (so it could be echoed), and it was the one in the message.
    expect(feed!.requests[0]!.query.get('apiKey')).toBe(FEED_KEY);

    // One warning per poll, nothing about retries.
    const warned = warnings('soccer_epl');
    expect(warned).toHaveLength(2);
    for (const entry of warned) {
      expect(entry.msg).toMatch(/not retried/);
      expect(entry.fields).toMatchObject({ kind: 'odds', status, ...quota });
      expect(entry.fields.quotaExhausted).toBe(quotaExhausted);
      if (!('requestsRemaining' in quota)) expect(entry.fields).not.toHaveProperty('requestsRemaining');
      const feedMessage = entry.fields.feedMessage as string;
      expect(feedMessage.startsWith(`${message} (apiKey=[redacted]); the key [redacted] `)).toBe(true);
      expect(Array.from(feedMessage).length).toBeLessThanOrEqual(200);
      expect(String(entry.fields.err)).toContain(`HTTP ${status}`);
    }
    expectCleanLogs();
  });

  it('retries a 500 with backoff, every attempt warned with its status and message; a later success makes the pick', async () => {
    await start({ sports: 'soccer_epl' });
    // Attempts 1-4 (first poll) and 5 fail; 6 answers.
    feed!.on('odds:soccer_epl', (n) => (n <= 5 ? { status: 500, body: { message: 'Internal error, retry later' } } : { status: 200, body: goodOdds('r1') }));

    await pollOdds();
    // The first try and 3 retries.
    expect(feed!.count('odds:soccer_epl')).toBe(4);
    const attempts = warnings('soccer_epl').filter((entry) => entry.msg === 'value engine: feed request failed');
    expect(attempts.map((entry) => entry.fields.attempt)).toEqual([1, 2, 3, 4]);
    for (const entry of attempts) expect(entry.fields).toMatchObject({ status: 500, feedMessage: 'Internal error, retry later' });
    expect(warnings('soccer_epl').filter((entry) => /after retries/.test(entry.msg))).toHaveLength(1);
    expect(await visibleHomeTeams()).toEqual([]);

    await pollOdds();
    expect(feed!.count('odds:soccer_epl')).toBe(6);
    expect(await visibleHomeTeams()).toEqual(['Arsenal r1']);
    expectCleanLogs();
  });

  it('retries a 429 after its Retry-After and warns with the quota it was sent', async () => {
    await start({ sports: 'soccer_epl' });
    feed!.on('odds:soccer_epl', (n) =>
      n === 1
        ? { status: 429, body: { message: 'Too many requests' }, headers: { 'retry-after': '0', 'x-requests-remaining': '80', 'x-requests-used': '20' } }
        : { status: 200, body: goodOdds('q1') },
    );
    await pollOdds();
    expect(feed!.count('odds:soccer_epl')).toBe(2);
    expect(warnings('soccer_epl')).toHaveLength(1);
    expect(warnings('soccer_epl')[0]!.fields).toMatchObject({ status: 429, feedMessage: 'Too many requests', requestsRemaining: 80, requestsUsed: 20, attempt: 1 });
    expect(await visibleHomeTeams()).toEqual(['Arsenal q1']);
    expectCleanLogs();
  });

  it("ingests a good sport while another sport's retries are still under way (pollNow)", async () => {
    // The failing sport comes first in ODDS_FEED_SPORTS: polled one after the other, it would hold the good one up.
    await start({ sports: 'basketball_nba,soccer_epl' });
    const release = deferred();
    feed!.on('odds:basketball_nba', async (n) => {
      // The first retry is held until the test releases it.
      if (n === 2) await release.promise;
      return { status: 500, body: { message: 'Internal error' } };
    });
    feed!.on('odds:soccer_epl', () => ({ status: 200, body: goodOdds('g1') }));

    const polled = t!.runtime.poller!.pollNow(['odds']);
    await until(() => feed!.count('odds:basketball_nba') === 2, "the failing sport's first retry");
    await until(() => processed('soccer_epl'), 'the good sport to be ingested');
    // The failing sport is still in its first retry: held, unanswered, no final warning yet.
    expect(feed!.count('odds:basketball_nba')).toBe(2);
    expect(feed!.requests.filter((r) => r.endpoint === 'odds:basketball_nba').map((r) => r.answered)).toEqual([true, false]);
    expect(warnings('basketball_nba').some((entry) => /after retries/.test(entry.msg))).toBe(false);
    expect(await visibleHomeTeams()).toEqual(['Arsenal g1']);

    release.resolve();
    expect(await polled).toBe(true);
    expect(feed!.count('odds:basketball_nba')).toBe(4);
    expect(feed!.count('odds:soccer_epl')).toBe(1);
    expect(warnings('basketball_nba').filter((entry) => /after retries/.test(entry.msg))).toHaveLength(1);
    expectCleanLogs();
  });

  it("polls a good sport again on the timers while another sport's request is still unanswered; stop aborts it", async () => {
    // The answers are set before the app starts: its timers poll at once, possibly before
    // start() returns, and a first request answered by the default handler would end the turn.
    feed = await startFeed();
    const never = deferred();
    feed.on('odds:basketball_nba', async () => {
      await never.promise;
      return { status: 200, body: [] };
    });
    feed.on('odds:soccer_epl', () => ({ status: 200, body: goodOdds('t1') }));
    await start({ sports: 'basketball_nba,soccer_epl', timers: true });

    // Two odds polls of the good sport (a period apart) while the other's first request hangs.
    await until(() => feed!.count('odds:soccer_epl') >= 2 && feed!.requests.filter((r) => r.endpoint === 'odds:soccer_epl').every((r) => r.answered), 'a second poll of the good sport');
    expect(feed!.count('odds:basketball_nba')).toBe(1);
    expect(feed!.requests.find((r) => r.endpoint === 'odds:basketball_nba')!.answered).toBe(false);
    await until(() => processed('soccer_epl'), 'the good sport to be ingested');
    expect(await visibleHomeTeams()).toEqual(['Arsenal t1']);

    await t!.runtime.poller!.stop();
    await until(() => feed!.requests.find((r) => r.endpoint === 'odds:basketball_nba')!.aborted, 'the hanging request to be aborted');
    // Stopping is not a feed failure.
    expect(warnings('basketball_nba')).toEqual([]);
    expectCleanLogs();
  });

  it('stop() aborts every request in flight and pollNow() then resolves', async () => {
    await start({ sports: 'soccer_epl,basketball_nba' });
    const never = deferred();
    for (const sport of ['soccer_epl', 'basketball_nba']) {
      feed!.on(`odds:${sport}`, async () => {
        await never.promise;
        return { status: 200, body: [] };
      });
    }
    const polled = t!.runtime.poller!.pollNow(['odds']);
    await until(() => feed!.requests.length === 2, 'both sports to be requested at once');
    await t!.runtime.poller!.stop();
    await until(() => feed!.requests.every((r) => r.aborted), 'both requests to be aborted');
    expect(await polled).toBe(true);
    expect(feed!.requests).toHaveLength(2);
    expect(logs.filter((entry) => entry.level !== 'info')).toEqual([]);
  });

  it('ingests the answers one at a time, in the order they arrive', async () => {
    // A feed whose answers the test hands out: here the second sport answers first.
    const pending = new Map<string, { resolve: (response: FeedResponse) => void }>();
    const source: FeedSource = {
      description: 'the test feed',
      odds(sportKey) {
        const answer = deferred<FeedResponse>();
        pending.set(sportKey, answer);
        changed();
        return answer.promise;
      },
      async scores() {
        return { body: [], requestsRemaining: null, requestsUsed: null };
      },
    };
    const app = await start({ sports: 'soccer_epl,basketball_nba', feedSource: source });
    const engine = app.runtime.services.valueEngine;
    const ingestOdds = engine.ingestOdds.bind(engine);
    const started: string[] = [];
    let active = 0;
    let mostAtOnce = 0;
    const firstMayEnd = deferred();
    engine.ingestOdds = async (events: readonly OddsEvent[], skipped) => {
      started.push(events[0]?.sportKey ?? '?');
      active += 1;
      mostAtOnce = Math.max(mostAtOnce, active);
      changed();
      try {
        if (started.length === 1) await firstMayEnd.promise;
        return await ingestOdds(events, skipped);
      } finally {
        active -= 1;
      }
    };

    // Should an expectation fail early, the held ingestion still ends, so the app can close.
    try {
      const polled = app.runtime.poller!.pollNow(['odds']);
      await until(() => pending.size === 2, 'both sports to be requested');
      pending.get('basketball_nba')!.resolve({
        body: [v4OddsEvent({ id: 'b1', sportKey: 'basketball_nba', sportTitle: 'NBA', commenceTime: KICKOFF, homeTeam: 'Lakers', awayTeam: 'Celtics', bookmakers: [] })],
        requestsRemaining: null,
        requestsUsed: null,
      });
      await until(() => started.length === 1, 'the first answer to be ingested');
      pending.get('soccer_epl')!.resolve({ body: goodOdds('o1'), requestsRemaining: null, requestsUsed: null });
      // Let everything the second answer sets off run: its ingestion must still wait for the first.
      for (let turn = 0; turn < 5; turn++) await new Promise((resolve) => setImmediate(resolve));
      expect(started).toEqual(['basketball_nba']);

      firstMayEnd.resolve();
      expect(await polled).toBe(true);
      expect(started).toEqual(['basketball_nba', 'soccer_epl']);
      expect(mostAtOnce).toBe(1);
      expect(await visibleHomeTeams()).toEqual(['Arsenal o1']);
    } finally {
      firstMayEnd.resolve();
    }
    expectCleanLogs();
  });
});
