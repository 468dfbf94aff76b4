/**
 * The credit budget end to end (docs/VALUE_ENGINE.md, "Feed credits"): the real service polls a
 * local v4 feed that charges credits by the documented formula, for a whole month of real
 * fixtures on the service's clock. The expectations come from the feed's own record of what it
 * was asked and charged, and from the fixtures, never from the planner.
 */
import { afterAll, describe, expect, it } from 'vitest';
import { ManualClock } from '../../src/domain/clock.js';
import { loadConfig } from '../../src/config.js';
import { ConfigError } from '../../src/config/kinds.js';
import { FeedCreditBudget } from '../../src/services/value-engine/credit-budget.js';
import { createTestApp, type TestApp, LEDGER_SIGNING_KEY } from '../helpers/app.js';
import { MONTH_END, MONTH_SPORTS, MONTH_START, monthFixtures, pollsByTimeToKickoff, startCreditFeed, type CreditFeed, type Fixture } from '../helpers/credit-feed.js';

const MINUTE = 60_000;
const HOUR = 60 * MINUTE;
const DAY = 24 * HOUR;
/**
 * Two of the four leagues of the docs' month (a month of real polls through the whole service
 * takes half a minute per thousand polls; the four-league month is the planner's alone).
 */
const SPORTS = MONTH_SPORTS.filter((s) => s.sportKey === 'soccer_epl' || s.sportKey === 'soccer_italy_serie_a');
const CLOSING_WINDOW_MS = 120_000;
const HORIZON_MS = 72 * HOUR;
const BUDGET = 5_000;
/** The soonest the poller's timer turns again. */
const NEXT_TURN_MIN_MS = 250;

const fixtures = monthFixtures(MONTH_START, MONTH_END, SPORTS);

function engineEnv(feed: CreditFeed, budget: number): Record<string, string> {
  return {
    ODDS_FEED_URL: feed.url,
    ODDS_FEED_API_KEY: 'credit-feed-key-0123456789',
    ODDS_FEED_SPORTS: SPORTS.map((s) => s.sportKey).join(','),
    ODDS_FEED_REGIONS: 'eu',
    ODDS_FEED_MARKETS: 'h2h,spreads,totals',
    ODDS_FEED_MONTHLY_CREDITS: String(budget),
    REFERENCE_BOOKMAKERS: 'pinnacle',
    BOOKMAKER_TAX_RATES: '{"williamhill":0,"bestodds":0}',
    PICK_MIN_EDGE: '0.01',
  };
}

interface LogLine {
  level: string;
  fields: Record<string, unknown>;
  msg: string;
}

async function startApp(feed: CreditFeed, clock: ManualClock, budget: number, logs: LogLine[]): Promise<TestApp> {
  const record = (level: string) => (fields: unknown, msg?: string) => void logs.push({ level, fields: fields as Record<string, unknown>, msg: msg ?? '' });
  return createTestApp({
    clock,
    env: engineEnv(feed, budget),
    runtime: { startPoller: false, feedRetryMinTimeoutMs: 5, feedTimeoutMs: 10_000, log: { info: record('info'), warn: record('warn'), error: record('error'), debug: () => {} } as never },
  });
}

/** Runs the poller's turns from `from` to `until`, moving the clock to each next planned poll or events read. */
async function runUntil(app: TestApp, clock: ManualClock, until: number): Promise<void> {
  const poller = app.runtime.poller!;
  const budget = app.runtime.services.feedBudget!;
  while (clock.now().getTime() < until) {
    await poller.runDue();
    const { plan } = await budget.plan();
    const now = clock.now().getTime();
    // The service's timer wakes for the next planned poll, at least 250 ms on: a poll the new plan
    // finds due already (the polls just made left the week's share more credits, so a sport's next
    // routine poll moved to now) is made at that turn. (Its turns between planned polls, every
    // half period, change nothing the clock does not: they are skipped.)
    const firstPoll = plan.polls[0]?.at;
    const candidates = [firstPoll === undefined ? undefined : Math.max(firstPoll, now + NEXT_TURN_MIN_MS), budget.nextScheduleReadAt(), plan.windowEndsAt, until].filter(
      (t): t is number => t !== undefined && t !== null && t > now,
    );
    clock.set(new Date(Math.min(...candidates)));
  }
}

interface MonthFigures {
  budget: number;
  creditsUsed: number;
  oddsPolls: number;
  scoresPolls: number;
  eventsReads: number;
  picks: number;
  closingPollsCaught: number;
  closingLines: number;
  settled: number;
  oddsPollsByTimeToKickoff: Record<string, number>;
}

interface MonthRun {
  feed: CreditFeed;
  app: TestApp;
  logs: LogLine[];
  picks: { id: string; eventId: string; kickoff: number; status: string; closingOdds: number | null }[];
  figures: MonthFigures;
}

async function simulateMonth(budget: number): Promise<MonthRun> {
  const clock = new ManualClock(new Date(MONTH_START));
  // The key's plan holds more than the budget: the budget, not the feed, must hold the spend.
  const feed = await startCreditFeed(clock, fixtures, budget * 2);
  const logs: LogLine[] = [];
  const app = await startApp(feed, clock, budget, logs);
  await runUntil(app, clock, MONTH_END);
  const rows = await app.runtime.orm.em.fork().execute<{ id: string; event_id: string; kickoff_at: Date | string; status: string; closing_odds: string | null }[]>(
    `select id, event_id, kickoff_at, status, closing_odds from picks where event_id is not null`,
  );
  const picks = rows.map((r) => ({ id: r.id, eventId: r.event_id, kickoff: new Date(r.kickoff_at).getTime(), status: r.status, closingOdds: r.closing_odds === null ? null : Number(r.closing_odds) }));
  const odds = feed.requests.filter((r) => r.kind === 'odds' && r.status === 200);
  const byFixture = new Map(fixtures.map((f) => [f.id, f]));
  const caught = picks.filter((p) => {
    const sportKey = byFixture.get(p.eventId)!.sportKey;
    return odds.some((r) => r.sportKey === sportKey && r.at >= p.kickoff - CLOSING_WINDOW_MS && r.at < p.kickoff);
  });
  const buckets = pollsByTimeToKickoff(odds, fixtures);
  return {
    feed,
    app,
    logs,
    picks,
    figures: {
      budget,
      creditsUsed: feed.used,
      oddsPolls: odds.length,
      scoresPolls: feed.requests.filter((r) => r.kind === 'scores' && r.status === 200).length,
      eventsReads: feed.requests.filter((r) => r.kind === 'events').length,
      picks: picks.length,
      closingPollsCaught: caught.length,
      closingLines: picks.filter((p) => p.closingOdds !== null).length,
      settled: picks.filter((p) => p.status === 'settled').length,
      oddsPollsByTimeToKickoff: buckets,
    },
  };
}

const runs: MonthRun[] = [];
afterAll(async () => {
  for (const run of runs) {
    await run.app.close();
    await run.feed.close();
  }
});

describe('a month of polls within a credit budget', () => {
  it('spends within 5,000 credits, catches every pick\'s closing line and polls no sport without a match ahead', async () => {
    const run = await simulateMonth(BUDGET);
    runs.push(run);
    const { feed, figures, picks } = run;
    expect(figures.creditsUsed).toBeGreaterThan(0);
    expect(figures.creditsUsed).toBeLessThanOrEqual(BUDGET);
    // The service's count is the feed's: x-requests-used, not a guess.
    const month = await run.app.runtime.services.feedBudget!.plan(MONTH_END - 1);
    expect(month.view.usedCredits).toBe(feed.used);
    expect(month.view.source).toBe('feed');

    // Every odds request was charged by v4's formula: 3 markets x 1 region.
    for (const request of feed.requests) expect(request.credits).toBe(request.status !== 200 ? 0 : request.kind === 'odds' ? 3 : request.kind === 'scores' ? 2 : 0);

    // Picks were made, and every one had an odds poll in the two minutes before its kickoff.
    expect(picks.length).toBeGreaterThan(5);
    expect(figures.closingPollsCaught).toBe(picks.length);
    // ... so its closing line; and every published pick its final from the scores polls (a pick
    // held for review, its edge too good to be true, waits for an operator whatever the feed says).
    expect(picks.filter((p) => p.closingOdds === null)).toEqual([]);
    expect(picks.filter((p) => p.status === 'settled').length).toBeGreaterThan(0);
    expect(picks.filter((p) => p.status === 'published')).toEqual([]);

    // No odds poll of a sport with no kickoff in the next 72 hours.
    for (const request of feed.requests.filter((r) => r.kind === 'odds')) {
      const ahead = fixtures.some((f: Fixture) => f.sportKey === request.sportKey && f.kickoff > request.at && f.kickoff - request.at <= HORIZON_MS);
      expect(ahead, `odds poll of ${request.sportKey} at ${new Date(request.at).toISOString()}`).toBe(true);
    }
    // Scores only while a started event with a published pick waits for its final.
    const picked = new Map(picks.filter((p) => p.status !== 'admin_review').map((p) => [p.eventId, p]));
    for (const request of feed.requests.filter((r) => r.kind === 'scores')) {
      const waiting = fixtures.some((f) => f.sportKey === request.sportKey && picked.has(f.id) && f.kickoff <= request.at && request.at - f.kickoff <= 3 * DAY);
      expect(waiting, `scores poll of ${request.sportKey} at ${new Date(request.at).toISOString()}`).toBe(true);
    }
    // Polls follow the kickoffs: more of them in the last hour before a kickoff than in any hour a day or more ahead.
    const perHour = (from: number, to: number) =>
      feed.requests.filter((r) => r.kind === 'odds' && fixtures.some((f) => f.sportKey === r.sportKey && f.kickoff > r.at && f.kickoff - r.at > from && f.kickoff - r.at <= to)).length;
    expect(perHour(0, HOUR)).toBeGreaterThan(perHour(DAY, 2 * DAY) / 24);
    expect(run.logs.filter((l) => l.level === 'error')).toEqual([]);

  }, 600_000);
});

describe('a closing poll that fails', () => {
  it('is made again in its window: a failed poll does not count as made', async () => {
    const clock = new ManualClock(new Date(MONTH_START));
    const feed = await startCreditFeed(clock, fixtures, 100_000);
    const logs: LogLine[] = [];
    const app = await startApp(feed, clock, BUDGET, logs);
    runs.push({ feed, app, logs, picks: [], figures: undefined as never });
    // The first kickoff with an open pick, and the poller up to just before its closing window.
    await runUntil(app, clock, MONTH_START + 6 * HOUR);
    const rows = await app.runtime.orm.em.fork().execute<{ event_id: string; kickoff_at: Date | string }[]>(
      `select event_id, kickoff_at from picks where event_id is not null and status in ('published', 'admin_review') order by kickoff_at limit 1`,
    );
    expect(rows).toHaveLength(1);
    const kickoff = new Date(rows[0]!.kickoff_at).getTime();
    const sportKey = fixtures.find((f) => f.id === rows[0]!.event_id)!.sportKey;
    await runUntil(app, clock, kickoff - CLOSING_WINDOW_MS - 1);
    // Every attempt of the next odds poll fails (the first and its three retries).
    feed.failOdds(4);
    await runUntil(app, clock, kickoff);
    const inWindow = feed.requests.filter((r) => r.kind === 'odds' && r.sportKey === sportKey && r.at >= kickoff - CLOSING_WINDOW_MS && r.at < kickoff);
    expect(inWindow.filter((r) => r.status === 503)).toHaveLength(4);
    expect(inWindow.filter((r) => r.status === 200).length).toBeGreaterThan(0);
  }, 120_000);
});

describe('polls stop when the feed has no credits left', () => {
  it('stops at 401 OUT_OF_USAGE_CREDITS, logs it once, tells /readyz and feedBudget, and a 429 for frequency stops nothing', async () => {
    const start = Date.UTC(2024, 11, 14, 10, 0);
    const clock = new ManualClock(new Date(start));
    const feed = await startCreditFeed(clock, fixtures, 10_000);
    const logs: LogLine[] = [];
    const app = await startApp(feed, clock, 20_000, logs);
    runs.push({ feed, app, logs, picks: [], figures: undefined as never });
    feed.limitFrequency(1);
    await app.runtime.poller!.runDue();
    // The rate-limited request was retried and answered; no stop.
    expect(feed.requests.filter((r) => r.status === 429)).toHaveLength(1);
    expect(logs.filter((l) => /no credits left/.test(l.msg))).toEqual([]);
    // Another tool on the same key spends all but one credit: the next odds poll is refused.
    feed.used = feed.quota - 1;
    for (let turn = 0; turn < 40 && feed.requests.every((r) => r.status !== 401); turn++) {
      clock.advance(MINUTE);
      await app.runtime.poller!.runDue();
    }
    expect(feed.requests.some((r) => r.status === 401)).toBe(true);
    const stops = logs.filter((l) => /no credits left; polls stop/.test(l.msg));
    expect(stops).toHaveLength(1);
    const requestsAtStop = feed.requests.length;
    for (let turn = 0; turn < 10; turn++) {
      clock.advance(10 * MINUTE);
      await app.runtime.poller!.runDue();
    }
    expect(logs.filter((l) => /no credits left; polls stop/.test(l.msg))).toHaveLength(1);
    const ready = (await app.app.inject({ method: 'GET', url: '/readyz' })).json();
    expect(ready.feed.credits_stopped).toBe('feed_reports_no_credits');
    const { data, errors } = await app.graphql('{ feedBudget { monthlyCredits usedCredits remainingCredits source stopped { reason } nextPolls { sportKey odds } } }');
    expect(errors).toBeUndefined();
    const view = (data as { feedBudget: { nextPolls: { odds: string | null }[] } }).feedBudget;
    expect(view).toMatchObject({ monthlyCredits: 20_000, usedCredits: feed.used, remainingCredits: 0, source: 'FEED', stopped: { reason: 'feed_reports_no_credits' } });
    expect(view.nextPolls.every((p) => p.odds === null)).toBe(true);
    // While stopped, only the free events list is read (hourly).
    expect(feed.requests.slice(requestsAtStop).filter((r) => r.kind !== 'events')).toEqual([]);
    const metrics = await app.runtime.metrics.registry.metrics();
    expect(metrics).toMatch(/^picks_feed_polls_stopped 1$/m);
    expect(metrics).toMatch(/^picks_feed_budget_credits\{figure="monthly"\} 20000$/m);
    expect(metrics).toMatch(new RegExp(`^picks_feed_budget_credits\\{figure="used"\\} ${feed.used}$`, 'm'));

    // The feed's own period renews mid-month: the next events list says so, and polls resume.
    feed.used = 0;
    clock.advance(HOUR);
    await app.runtime.poller!.runDue();
    expect(logs.filter((l) => /polls resume/.test(l.msg))).toHaveLength(1);
    clock.advance(MINUTE);
    await app.runtime.poller!.runDue();
    expect(feed.requests.slice(requestsAtStop).filter((r) => r.kind === 'odds' && r.status === 200).length).toBeGreaterThan(0);
    expect(await app.runtime.metrics.registry.metrics()).toMatch(/^picks_feed_polls_stopped 0$/m);
  }, 120_000);

  it('a new budget lifts a stop (the operator bought credits); the stale "0 left" goes with it', async () => {
    const clock = new ManualClock(new Date(Date.UTC(2024, 11, 14, 10, 0)));
    const feed = await startCreditFeed(clock, fixtures, 10_000);
    const logs: LogLine[] = [];
    const first = await startApp(feed, clock, 20_000, logs);
    await first.runtime.poller!.runDue();
    feed.used = feed.quota - 1;
    for (let turn = 0; turn < 40 && feed.requests.every((r) => r.status !== 401); turn++) {
      clock.advance(MINUTE);
      await first.runtime.poller!.runDue();
    }
    expect((await first.runtime.services.feedBudget!.plan()).view.stopped).not.toBeNull();
    runs.push({ feed, app: first, logs, picks: [], figures: undefined as never });
    // Credits bought: the operator raises the budget (a restart reads it; the same database and month).
    const raised = new FeedCreditBudget(first.runtime.orm, clock, { ...first.runtime.services.feedBudget!.settings, monthlyCredits: 30_000 });
    const { view } = await raised.plan();
    expect(view.stopped).toBeNull();
    // The feed's "1 left" before the stop no longer caps what is left.
    expect(view.remainingCredits).toBe(30_000 - view.usedCredits);
    expect(view.remainingCredits).toBeGreaterThan(20_000);
  }, 120_000);
});

describe('the budget is refused when it cannot work', () => {
  const base = { ADMIN_TOKEN: 'a-long-enough-admin-token', WEBHOOK_SECRET_KEY: 'q83vEjRWeJASNFZ4kBI0VniQEjRWeJASNFZ4kBI0Vng=', LEDGER_SIGNING_KEY, ODDS_FEED_URL: 'http://127.0.0.1:9', ODDS_FEED_API_KEY: 'key', ODDS_FEED_SPORTS: 'soccer_epl,basketball_nba,icehockey_nhl,tennis_atp_finals' };
  const refusal = (env: Record<string, string>) => {
    try {
      loadConfig({ ...base, ...env });
    } catch (error) {
      if (error instanceof ConfigError) return error.message;
      throw error;
    }
    return null;
  };

  it('too small to poll each sport once a day with its closing polls: one line with the arithmetic', () => {
    // 4 sports x 31 days x 2 polls x 3 credits (h2h, spreads, totals in one region) = 744.
    expect(refusal({ ODDS_FEED_MONTHLY_CREDITS: '743' })).toBe(
      'Invalid configuration: ODDS_FEED_MONTHLY_CREDITS is too small: 4 sports x 31 days x 2 odds polls a day (one routine, one closing) x 3 credits a poll = 744 credits a month at least (got 743)',
    );
    expect(refusal({ ODDS_FEED_MONTHLY_CREDITS: '744' })).toBeNull();
    // Two regions double the cost of a poll.
    expect(refusal({ ODDS_FEED_MONTHLY_CREDITS: '1000', ODDS_FEED_REGIONS: 'eu,uk' })).toMatch(/x 6 credits a poll = 1488 credits a month at least \(got 1000\)$/);
  });

  it('a reserve that leaves the routine polls less than a poll a day, a reserve or budget without its prerequisite', () => {
    expect(refusal({ ODDS_FEED_MONTHLY_CREDITS: '1000', ODDS_FEED_CREDIT_RESERVE: '700' })).toMatch(/^Invalid configuration: ODDS_FEED_CREDIT_RESERVE leaves too little .* = 372 \(got 700, at most 628\)$/);
    expect(refusal({ ODDS_FEED_CREDIT_RESERVE: '100' })).toBe('Invalid configuration: ODDS_FEED_CREDIT_RESERVE needs ODDS_FEED_MONTHLY_CREDITS');
    expect(refusal({ ODDS_FEED_URL: '', ODDS_FEED_MONTHLY_CREDITS: '100000' })).toMatch(/^Invalid configuration: ODDS_FEED_MONTHLY_CREDITS needs ODDS_FEED_URL/);
    for (const wrong of ['0', '-5', '1e5', 'lots', '12.5']) expect(refusal({ ODDS_FEED_MONTHLY_CREDITS: wrong })).toMatch(/^Invalid configuration: ODDS_FEED_MONTHLY_CREDITS must be/);
    const config = loadConfig({ ...base, ODDS_FEED_MONTHLY_CREDITS: '100000' });
    expect(config.valueEngine.credits).toEqual({ monthlyCredits: 100_000, reserveCredits: 10_000, closingWindowSeconds: 120 });
    expect(loadConfig(base).valueEngine.credits).toBeNull();
  });
});
