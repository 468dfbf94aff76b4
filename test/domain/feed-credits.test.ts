import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import {
  minimumMonthlyCredits,
  oddsRequestCredits,
  PLAN_WINDOW_MS,
  planPolls,
  remainingCredits,
  reserveLeft,
  type CreditBudgetState,
  type PlanInput,
  type PlanSettings,
  type ScheduledEvent,
  type SportPollHistory,
} from '../../src/domain/feed-credits.js';
import { defaultPlanSettings } from '../helpers/credit-feed.js';

const MINUTE = 60_000;
const HOUR = 60 * MINUTE;
const DAY = 24 * HOUR;
const NOW = Date.UTC(2026, 10, 10, 12, 0, 0);

const settingsArb: fc.Arbitrary<PlanSettings> = fc.record({
  sportKeys: fc.constantFrom(['soccer_epl'], ['soccer_epl', 'basketball_nba'], ['soccer_epl', 'basketball_nba', 'icehockey_nhl', 'tennis_atp_finals']),
  oddsPollMs: fc.integer({ min: 10, max: 600 }).map((s) => s * 1000),
  scoresPollMs: fc.integer({ min: 30, max: 3600 }).map((s) => s * 1000),
  closingWindowMs: fc.integer({ min: 30, max: 900 }).map((s) => s * 1000),
  horizonMs: fc.integer({ min: 1, max: 240 }).map((h) => h * HOUR),
  oddsCredits: fc.integer({ min: 1, max: 15 }),
  scoresCredits: fc.constant(2),
});

function scheduleArb(sportKeys: readonly string[]): fc.Arbitrary<ScheduledEvent[]> {
  return fc.array(
    fc.record({
      eventId: fc.uuid(),
      sportKey: fc.constantFrom(...sportKeys),
      // From three days ago (started, maybe still waiting for a final) to ten days ahead, on the minute.
      commenceAt: fc.integer({ min: -3 * 24 * 60, max: 10 * 24 * 60 }).map((m) => NOW + m * MINUTE),
      hasOpenPick: fc.boolean(),
      // A held pick has no final to wait for; absent: as hasOpenPick.
      awaitsFinal: fc.option(fc.boolean(), { nil: undefined }),
    }),
    { maxLength: 40 },
  );
}

const budgetArb: fc.Arbitrary<CreditBudgetState> = fc
  .record({
    monthlyCredits: fc.integer({ min: 100, max: 1_000_000 }),
    reserveShare: fc.double({ min: 0, max: 0.5, noNaN: true }),
    usedShare: fc.double({ min: 0, max: 1.1, noNaN: true }),
    reserveSpentShare: fc.double({ min: 0, max: 1.2, noNaN: true }),
    feedRemaining: fc.option(fc.integer({ min: 0, max: 1_000_000 }), { nil: null }),
    monthLeftMs: fc.integer({ min: 1, max: 31 * 24 * 60 }).map((m) => m * MINUTE),
  })
  .map(({ monthlyCredits, reserveShare, usedShare, reserveSpentShare, feedRemaining, monthLeftMs }) => {
    const reserveCredits = Math.floor(monthlyCredits * reserveShare);
    return {
      monthlyCredits,
      reserveCredits,
      usedCredits: Math.floor(monthlyCredits * usedShare),
      reserveSpent: Math.floor(reserveCredits * reserveSpentShare),
      feedRemaining,
      monthEndsAt: NOW + monthLeftMs,
    };
  });

const historyArb = (sportKeys: readonly string[]) =>
  fc
    .array(fc.option(fc.integer({ min: 0, max: 2 * 24 * 60 }).map((m) => NOW - m * MINUTE), { nil: null }), { minLength: 2 * sportKeys.length, maxLength: 2 * sportKeys.length })
    .map((times) => new Map<string, SportPollHistory>(sportKeys.map((key, i) => [key, { lastOddsPollAt: times[2 * i]!, lastScoresPollAt: times[2 * i + 1]! }])));

const inputArb: fc.Arbitrary<PlanInput> = settingsArb.chain((settings) =>
  fc.record({
    now: fc.constant(NOW),
    schedule: scheduleArb(settings.sportKeys),
    budget: budgetArb,
    settings: fc.constant(settings),
    history: historyArb(settings.sportKeys),
  }),
);

/** The open-pick kickoffs a closing poll is owed to: ahead, in the plan's window, not already polled in their closing window. */
function owedClosings(input: PlanInput, windowEndsAt: number): ScheduledEvent[] {
  const w = input.settings.closingWindowMs;
  return input.schedule.filter((e) => {
    if (!e.hasOpenPick || e.commenceAt <= input.now || e.commenceAt - w >= windowEndsAt) return false;
    const last = input.history?.get(e.sportKey)?.lastOddsPollAt ?? null;
    return !(last !== null && last >= e.commenceAt - w && last < e.commenceAt);
  });
}

describe('the credit plan', () => {
  it('prices requests as v4 does: markets x regions for odds', () => {
    expect(oddsRequestCredits(3, 1)).toBe(3);
    expect(oddsRequestCredits(3, 2)).toBe(6);
    expect(oddsRequestCredits(1, 1)).toBe(1);
  });

  it('never plans beyond what is left, nor pays more from the reserve than it keeps', () => {
    fc.assert(
      fc.property(inputArb, (input) => {
        const plan = planPolls(input);
        const left = Math.max(0, Math.min(input.budget.monthlyCredits - input.budget.usedCredits, input.budget.feedRemaining ?? Infinity));
        expect(plan.plannedCredits).toBe(plan.polls.reduce((sum, p) => sum + p.credits, 0));
        expect(plan.plannedCredits).toBeLessThanOrEqual(left);
        const kept = Math.min(left, Math.max(0, input.budget.reserveCredits - input.budget.reserveSpent));
        const fromReserve = plan.polls.filter((p) => p.paidFrom === 'reserve').reduce((sum, p) => sum + p.credits, 0);
        expect(fromReserve).toBeLessThanOrEqual(kept);
        // Routine polls never touch the reserve.
        expect(plan.polls.filter((p) => p.purpose === 'routine' && p.paidFrom === 'reserve')).toEqual([]);
        for (const poll of plan.polls) {
          expect(poll.at).toBeGreaterThanOrEqual(input.now);
          expect(poll.at).toBeLessThan(plan.windowEndsAt);
        }
      }),
      { numRuns: 400 },
    );
  });

  it("plans the closing poll of every open pick's kickoff while the reserve allows", () => {
    fc.assert(
      fc.property(inputArb, (input) => {
        const plan = planPolls(input);
        const owed = owedClosings(input, plan.windowEndsAt);
        const kept = Math.min(remainingCredits(input.budget), Math.max(0, input.budget.reserveCredits - input.budget.reserveSpent));
        // One poll per owed kickoff at most: when the reserve pays them all, every one is planned.
        if (owed.length * input.settings.oddsCredits > kept) return;
        for (const event of owed) {
          const polled = plan.polls.some(
            (p) => p.kind === 'odds' && p.sportKey === event.sportKey && p.at >= event.commenceAt - input.settings.closingWindowMs && p.at < event.commenceAt,
          );
          expect(polled, `closing poll of ${event.eventId} at ${new Date(event.commenceAt).toISOString()}`).toBe(true);
        }
        expect(plan.closingUnfunded).toEqual([]);
      }),
      { numRuns: 400 },
    );
  });

  it('spends no less with a larger budget', () => {
    fc.assert(
      fc.property(inputArb, fc.integer({ min: 1, max: 500_000 }), (input, more) => {
        const larger = { ...input, budget: { ...input.budget, monthlyCredits: input.budget.monthlyCredits + more } };
        expect(planPolls(larger).plannedCredits).toBeGreaterThanOrEqual(planPolls(input).plannedCredits);
      }),
      { numRuns: 300 },
    );
  });

  it('plans no odds poll for a sport with no kickoff in the horizon, and no scores poll without a started pick', () => {
    fc.assert(
      fc.property(inputArb, (input) => {
        const plan = planPolls(input);
        for (const poll of plan.polls) {
          const events = input.schedule.filter((e) => e.sportKey === poll.sportKey);
          if (poll.kind === 'odds') {
            expect(events.some((e) => e.commenceAt > poll.at && e.commenceAt - poll.at <= input.settings.horizonMs)).toBe(true);
          } else {
            expect(events.some((e) => (e.awaitsFinal ?? e.hasOpenPick) && e.commenceAt <= poll.at)).toBe(true);
          }
        }
      }),
      { numRuns: 400 },
    );
  });

  it('polls more often as a kickoff nears', () => {
    const settings = defaultPlanSettings(['soccer_epl']);
    const kickoff = NOW + 3 * DAY - HOUR;
    const plan = planPolls({
      now: NOW,
      schedule: [{ eventId: 'e1', sportKey: 'soccer_epl', commenceAt: kickoff, hasOpenPick: false }],
      budget: { monthlyCredits: 5_000, reserveCredits: 500, usedCredits: 0, reserveSpent: 0, feedRemaining: null, monthEndsAt: NOW + 20 * DAY },
      settings,
    });
    expect(plan.scale).toBeGreaterThan(0);
    const times = plan.polls.map((p) => p.at);
    const gaps = times.slice(1).map((t, i) => t - times[i]!);
    for (let i = 1; i < gaps.length; i++) expect(gaps[i]!).toBeLessThanOrEqual(gaps[i - 1]!);
    expect(gaps.at(-1)).toBe(settings.oddsPollMs);
    expect(gaps[0]!).toBeGreaterThan(30 * MINUTE);
  });

  it('leaves the next week its share: a large budget is not spent in the first window', () => {
    const settings = defaultPlanSettings(['soccer_epl']);
    const budget = { monthlyCredits: 20_000, reserveCredits: 2_000, usedCredits: 0, reserveSpent: 0, feedRemaining: null, monthEndsAt: NOW + 28 * DAY };
    const schedule = Array.from({ length: 28 }, (_, day) => ({ eventId: `d${day}`, sportKey: 'soccer_epl', commenceAt: NOW + day * DAY + 6 * HOUR, hasOpenPick: false }));
    const plan = planPolls({ now: NOW, schedule, budget, settings });
    expect(plan.windowEndsAt).toBe(NOW + PLAN_WINDOW_MS);
    // A quarter of the month: at most a quarter of the general credits.
    expect(plan.plannedCredits).toBeLessThanOrEqual(Math.floor((18_000 * 7) / 28));
    expect(plan.plannedCredits).toBeGreaterThan(0);
  });

  it('states the smallest budget with its arithmetic', () => {
    expect(minimumMonthlyCredits(4, 3)).toEqual({ credits: 744, arithmetic: '4 sports x 31 days x 2 odds polls a day (one routine, one closing) x 3 credits a poll = 744' });
  });

  it('keeps no more reserve than is left', () => {
    const budget = { monthlyCredits: 1000, reserveCredits: 100, usedCredits: 950, reserveSpent: 0, feedRemaining: null, monthEndsAt: NOW + DAY };
    expect(remainingCredits(budget)).toBe(50);
    expect(reserveLeft(budget)).toBe(50);
    expect(remainingCredits({ ...budget, feedRemaining: 10 })).toBe(10);
  });
});
