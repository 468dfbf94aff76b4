/**
 * The credit plan over a month of real fixtures, planner alone (src/domain/feed-credits.ts): the
 * figures of docs/VALUE_ENGINE.md, "Feed credits", for three budgets. Every match is taken to
 * carry an open pick from six hours before its kickoff to its final two hours after (the worst
 * case for closing polls and scores); the plan is made again every hour and its polls followed,
 * each charged as v4 does. The service's own month on a local feed is
 * test/integration/feed-credits.test.ts. `npm run bench:credits` writes the figures to
 * bench/credit-month-results.json.
 */
import { writeFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { creditMonthOf, planPolls, type ScheduledEvent, type SportPollHistory } from '../../src/domain/feed-credits.js';
import { defaultPlanSettings, MONTH_END, MONTH_SPORTS, MONTH_START, monthFixtures, pollsByTimeToKickoff } from '../helpers/credit-feed.js';

const HOUR = 3_600_000;
const DAY = 24 * HOUR;
const fixtures = monthFixtures(MONTH_START, MONTH_END, MONTH_SPORTS);
const SETTINGS = defaultPlanSettings(MONTH_SPORTS.map((s) => s.sportKey));

function simulate(monthlyCredits: number) {
  const reserveCredits = Math.floor(monthlyCredits / 10);
  let used = 0;
  let reserveSpent = 0;
  const history = new Map<string, SportPollHistory>();
  const odds: { sportKey: string; at: number }[] = [];
  let scoresPolls = 0;
  let now = MONTH_START;
  while (now < MONTH_END) {
    const schedule: ScheduledEvent[] = fixtures
      .filter((f) => f.kickoff + 2 * HOUR > now && f.kickoff - now <= 14 * DAY)
      .map((f) => ({ eventId: f.id, sportKey: f.sportKey, commenceAt: f.kickoff, hasOpenPick: f.kickoff - now <= 6 * HOUR }));
    const plan = planPolls({
      now,
      schedule,
      budget: { monthlyCredits, reserveCredits, usedCredits: used, reserveSpent, feedRemaining: null, monthEndsAt: creditMonthOf(now).endsAt },
      settings: SETTINGS,
      history,
    });
    const until = Math.min(now + HOUR, MONTH_END);
    for (const poll of plan.polls.filter((p) => p.at < until)) {
      used += poll.credits;
      if (poll.paidFrom === 'reserve') reserveSpent += poll.credits;
      const known = history.get(poll.sportKey) ?? { lastOddsPollAt: null, lastScoresPollAt: null };
      if (poll.kind === 'odds') {
        odds.push({ sportKey: poll.sportKey, at: poll.at });
        history.set(poll.sportKey, { ...known, lastOddsPollAt: poll.at });
      } else {
        scoresPolls++;
        history.set(poll.sportKey, { ...known, lastScoresPollAt: poll.at });
      }
    }
    now = until;
  }
  const caught = fixtures.filter((f) => odds.some((o) => o.sportKey === f.sportKey && o.at >= f.kickoff - SETTINGS.closingWindowMs && o.at < f.kickoff)).length;
  const buckets = pollsByTimeToKickoff(odds, fixtures);
  return { budget: monthlyCredits, creditsUsed: used, reserveSpent, oddsPolls: odds.length, scoresPolls, kickoffs: fixtures.length, closingPollsCaught: caught, oddsPollsByTimeToKickoff: buckets };
}

describe('a month of real fixtures under three budgets', () => {
  it('stays within each budget, catches every kickoff\'s closing poll, and spends more with more', () => {
    expect(fixtures.length).toBeGreaterThan(150);
    const results = [20_000, 100_000, 500_000].map(simulate);
    for (const result of results) {
      expect(result.creditsUsed).toBeLessThanOrEqual(result.budget);
      expect(result.reserveSpent).toBeLessThanOrEqual(result.budget / 10);
      expect(result.closingPollsCaught).toBe(fixtures.length);
      // Polls are densest right before kickoffs: more polls in the last hour than in the 6 - 24 h band per hour.
      expect(result.oddsPollsByTimeToKickoff['10 min - 1 h']! + result.oddsPollsByTimeToKickoff['under 10 min']!).toBeGreaterThan(result.oddsPollsByTimeToKickoff['6 - 24 h']! / 18);
    }
    for (let i = 1; i < results.length; i++) expect(results[i]!.creditsUsed).toBeGreaterThan(results[i - 1]!.creditsUsed);
    // A budget is spent, not hoarded: at least 80 % of the two smaller ones is used.
    expect(results[0]!.creditsUsed).toBeGreaterThan(0.8 * 20_000);
    expect(results[1]!.creditsUsed).toBeGreaterThan(0.8 * 100_000);
    if (process.env.CREDIT_MONTH_RESULTS) {
      writeFileSync(new URL('../../bench/credit-month-results.json', import.meta.url), `${JSON.stringify({ month: '2024-12', sports: MONTH_SPORTS, settings: SETTINGS, results }, null, 2)}\n`);
    }
  }, 300_000);
});
