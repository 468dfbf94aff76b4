/**
 * The odds feed's monthly credit budget (docs/VALUE_ENGINE.md, "Feed credits"): the month's
 * credits in PostgreSQL (every instance shares them; only the feed lease's holder spends), the
 * schedule read from the free events list, and the plan (src/domain/feed-credits.ts) that says
 * when each sport is polled next. The poller asks it what is due, and tells it each answer.
 */
import type { Clock } from '../../domain/clock.js';
import {
  creditMonthOf,
  oddsRequestCredits,
  planPolls,
  remainingCredits,
  reserveLeft,
  SCORES_REQUEST_CREDITS,
  type CreditBudgetState,
  type FeedPlan,
  type PlannedPoll,
  type PlanSettings,
  type ScheduledEvent,
  type SportPollHistory,
} from '../../domain/feed-credits.js';
import type { ScheduledFeedEvent } from '../../domain/odds-feed.js';
import { chargeCredits, liftCredits, listOpenPickEvents, readCreditMonth, stopCredits, type CreditMonthRow } from '../../persistence/feed-credits-repository.js';
import type { Orm } from '../../persistence/orm.js';
import type { ServiceLog } from '../log.js';
import type { ServiceMetrics } from '../metrics/metrics.js';

/** Why polls stopped for the month. */
export type CreditStopReason = 'feed_reports_no_credits';

const MAX_INT = 2 ** 31 - 1;
/** The free events list is read again this often per sport (kickoffs move, fixtures are added). */
export const SCHEDULE_REFRESH_MS = 60 * 60_000;

export interface FeedBudgetSettings {
  monthlyCredits: number;
  reserveCredits: number;
  closingWindowMs: number;
  sportKeys: readonly string[];
  oddsPollMs: number;
  scoresPollMs: number;
  horizonMs: number;
  markets: number;
  regions: number;
}

/** The budget as the banner, `feedBudget` (GraphQL) and the metrics show it. */
export interface FeedBudgetView {
  month: string;
  monthEndsAt: Date;
  monthlyCredits: number;
  reserveCredits: number;
  reserveLeft: number;
  usedCredits: number;
  remainingCredits: number;
  /** `feed`: the feed's x-requests-* headers this month; `counted`: the requests' cost by v4's formula. */
  source: 'feed' | 'counted';
  projectedMonthCredits: number;
  oddsCreditsPerPoll: number;
  stopped: { reason: CreditStopReason; at: Date } | null;
  nextPolls: { sportKey: string; odds: Date | null; oddsPurpose: PlannedPoll['purpose'] | null; scores: Date | null }[];
  /** When the schedule was last read (null before the first read). */
  scheduleReadAt: Date | null;
  /** Whether this instance polls the feed (holds its lease): its plan is the deployment's. */
  planning: boolean;
}

export class FeedCreditBudget {
  /** Each sport's kickoffs: when last read (null: never), and when to read again. */
  private readonly schedules = new Map<string, { events: ScheduledFeedEvent[]; readAt: number | null; dueAt: number }>();
  private readonly unfundedLogged = new Set<string>();
  private readonly history = new Map<string, SportPollHistory>();
  private lastView: FeedBudgetView | null = null;
  private lastPlan: FeedPlan | null = null;
  readonly planSettings: PlanSettings;

  constructor(
    private readonly orm: Orm,
    private readonly clock: Clock,
    readonly settings: FeedBudgetSettings,
    private readonly options: { log?: ServiceLog; metrics?: ServiceMetrics } = {},
  ) {
    this.planSettings = {
      sportKeys: settings.sportKeys,
      oddsPollMs: settings.oddsPollMs,
      scoresPollMs: settings.scoresPollMs,
      closingWindowMs: settings.closingWindowMs,
      horizonMs: settings.horizonMs,
      oddsCredits: oddsRequestCredits(settings.markets, settings.regions),
      scoresCredits: SCORES_REQUEST_CREDITS,
    };
  }

  now(): number {
    return this.clock.now().getTime();
  }

  /** The sports whose schedule is due to be read again. */
  schedulesDue(now: number): string[] {
    return this.settings.sportKeys.filter((sportKey) => {
      const known = this.schedules.get(sportKey);
      return !known || now >= known.dueAt;
    });
  }

  /** When the next events list is due to be read (tests and tools drive the clock to it). */
  nextScheduleReadAt(): number | null {
    const dues = [...this.schedules.values()].map((s) => s.dueAt);
    return dues.length === 0 ? null : Math.min(...dues);
  }

  /** When the plan's next poll is due (the poller's timer wakes for it); null without a plan or a poll. */
  nextPlannedAt(include: (sportKey: string) => boolean = () => true): number | null {
    const first = this.lastPlan?.polls.find((poll) => include(poll.sportKey))?.at ?? null;
    const read = this.nextScheduleReadAt();
    return first === null ? read : read === null ? first : Math.min(first, read);
  }

  /** A sport's events list as read (its kickoffs replace the ones before). */
  setSchedule(sportKey: string, events: readonly ScheduledFeedEvent[], at: number): void {
    this.schedules.set(sportKey, { events: events.filter((e) => e.sportKey === sportKey), readAt: at, dueAt: at + SCHEDULE_REFRESH_MS });
  }

  /** A failed read is tried again at `retryAt` (not in an hour); the kickoffs known are kept. */
  scheduleReadFailed(sportKey: string, retryAt: number): void {
    const known = this.schedules.get(sportKey);
    if (known) known.dueAt = retryAt;
    else this.schedules.set(sportKey, { events: [], readAt: null, dueAt: retryAt });
  }

  /** Marks a poll as made (at its start: a slow one is not planned again meanwhile); returns the history before it. */
  polled(kind: 'odds' | 'scores', sportKey: string, at: number): SportPollHistory {
    const history = this.history.get(sportKey) ?? { lastOddsPollAt: null, lastScoresPollAt: null };
    this.history.set(sportKey, kind === 'odds' ? { ...history, lastOddsPollAt: at } : { ...history, lastScoresPollAt: at });
    return history;
  }

  /** A poll that failed was not made: the plan owes it again (a closing poll retries in its window). */
  unpolled(kind: 'odds' | 'scores', sportKey: string, before: SportPollHistory): void {
    const history = this.history.get(sportKey) ?? { lastOddsPollAt: null, lastScoresPollAt: null };
    this.history.set(sportKey, kind === 'odds' ? { ...history, lastOddsPollAt: before.lastOddsPollAt } : { ...history, lastScoresPollAt: before.lastScoresPollAt });
  }

  /** This instance no longer polls (the lease went elsewhere): its plan, figures and gauges go. */
  forgetPlan(): void {
    if (this.lastView === null && this.lastPlan === null) return;
    this.lastView = null;
    this.lastPlan = null;
    this.options.metrics?.forgetFeedBudget();
  }

  /** The last view made (banner, `feedBudget` between plans); null before the first. */
  latest(): FeedBudgetView | null {
    return this.lastView;
  }

  /**
   * The budget as `feedBudget` shows it on this instance: the polling instance's plan, or (on an
   * instance that does not poll) the month's figures with no next polls, `planning` false.
   */
  async currentView(): Promise<FeedBudgetView> {
    const { view } = await this.plan();
    return this.lastView ? view : { ...view, planning: false, nextPolls: [] };
  }

  /** The last plan made, whole (tests and tools). */
  latestPlan(): FeedPlan | null {
    return this.lastPlan;
  }

  /**
   * Reads the month's credits and the open picks and makes the plan. With polls stopped the
   * plan is empty. Also moves the metrics.
   */
  async plan(now = this.now(), { record = false }: { record?: boolean } = {}): Promise<{ plan: FeedPlan; view: FeedBudgetView }> {
    const em = this.orm.em.fork();
    const { month, endsAt } = creditMonthOf(now);
    const [row, openPicks] = await Promise.all([readCreditMonth(em, month), listOpenPickEvents(em, this.settings.sportKeys)]);
    const state = this.stateOf(row, endsAt);
    const stopped = this.stopOf(row);
    const picked = new Map(openPicks.map((event) => [event.eventId, event]));
    const schedule: ScheduledEvent[] = [];
    for (const { events } of this.schedules.values()) {
      for (const event of events) {
        const pick = picked.get(event.id);
        schedule.push({ eventId: event.id, sportKey: event.sportKey, commenceAt: event.commenceTime.getTime(), hasOpenPick: pick !== undefined, awaitsFinal: pick?.published ?? false });
        picked.delete(event.id);
      }
    }
    // Open picks whose events the list no longer shows (started): their scores and closes still count.
    for (const event of picked.values()) schedule.push({ eventId: event.eventId, sportKey: event.sportKey, commenceAt: event.commenceAt.getTime(), hasOpenPick: true, awaitsFinal: event.published });
    const plan = stopped
      ? { polls: [], next: new Map(), scale: null, windowEndsAt: now, plannedCredits: 0, projectedMonthCredits: state.usedCredits, closingUnfunded: [] }
      : planPolls({ now, schedule, budget: state, settings: this.planSettings, history: this.history });
    const view = this.viewOf(month, state, row, plan, stopped);
    // Only the polling instance's plan is the deployment's: it alone keeps it and moves the gauges.
    if (!record) return { plan, view };
    this.lastPlan = plan;
    this.lastView = view;
    for (const eventId of plan.closingUnfunded) {
      if (this.unfundedLogged.has(eventId)) continue;
      this.unfundedLogged.add(eventId);
      this.options.log?.warn({ eventId, reserveLeft: view.reserveLeft, remainingCredits: view.remainingCredits }, 'value engine: the credits left cannot pay the closing poll of an event with an open pick');
    }
    this.options.metrics?.recordFeedBudget({
      figures: {
        monthly: view.monthlyCredits,
        reserve: view.reserveCredits,
        reserve_left: view.reserveLeft,
        used: view.usedCredits,
        remaining: view.remainingCredits,
        projected: view.projectedMonthCredits,
      },
      stopped: view.stopped !== null,
      nextPolls: view.nextPolls,
    });
    return { plan, view };
  }

  /**
   * Charges one answer of the feed: an odds or scores answer costs its credits (an error answer
   * none: the feed does not charge it, and its headers still move the count), a closing poll
   * from the reserve when the plan paid it so. An answer saying no credits are left stops polls.
   */
  async charge(
    poll: { kind: 'odds' | 'scores' | 'events'; sportKey: string; planned: PlannedPoll | null },
    answer: { ok: boolean; requestsUsed: number | null; requestsRemaining: number | null; creditsExhausted: boolean },
  ): Promise<void> {
    const at = this.clock.now();
    const credits = !answer.ok || poll.kind === 'events' ? 0 : poll.kind === 'odds' ? this.planSettings.oddsCredits : this.planSettings.scoresCredits;
    const { month } = creditMonthOf(at.getTime());
    try {
      let row: CreditMonthRow | null = null;
      if (credits > 0 || answer.requestsUsed !== null || answer.requestsRemaining !== null) {
        row = await chargeCredits(this.orm.em.fork(), {
          month,
          credits,
          fromReserve: poll.planned?.paidFrom === 'reserve' ? credits : 0,
          feedUsed: answer.requestsUsed,
          feedRemaining: answer.requestsRemaining,
          at,
        });
      }
      // Decided from the month's row, not the raw headers: an older answer arriving late moves neither.
      const remaining = row?.feedRemaining ?? null;
      if (answer.creditsExhausted || (answer.requestsRemaining === 0 && remaining === 0)) {
        await this.stop('feed_reports_no_credits', { sportKey: poll.sportKey, kind: poll.kind, requestsRemaining: answer.requestsRemaining, requestsUsed: answer.requestsUsed });
      } else if (row?.stoppedReason && remaining !== null && remaining >= this.planSettings.oddsCredits && answer.requestsRemaining === remaining) {
        // The feed's own period gave credits back (its renewal day is not the calendar month's).
        if (await liftCredits(this.orm.em.fork(), month)) {
          this.options.log?.info({ requestsRemaining: remaining }, 'value engine: the odds feed reports credits again; polls resume');
        }
      }
    } catch (error) {
      this.options.log?.error({ err: error, sportKey: poll.sportKey, kind: poll.kind }, 'value engine: could not record the feed credits of an answer');
    }
  }

  private async stop(reason: CreditStopReason, fields: Record<string, unknown>): Promise<void> {
    const at = this.clock.now();
    const stopped = await stopCredits(this.orm.em.fork(), creditMonthOf(at.getTime()).month, reason, this.settings.monthlyCredits, at);
    // Logged once: by the call that stopped them.
    if (stopped) {
      this.options.log?.warn(
        { ...fields, reason, monthlyCredits: this.settings.monthlyCredits },
        'value engine: the odds feed reports no credits left; polls stop until the next month, a change of ODDS_FEED_MONTHLY_CREDITS or the feed reporting credits again',
      );
    }
  }

  /** A stop holds for its month and its budget: a new month, or a changed budget, lifts it. */
  private stopOf(row: CreditMonthRow | null): FeedBudgetView['stopped'] {
    if (!row?.stoppedReason || !row.stoppedAt || row.stoppedBudget !== this.settings.monthlyCredits) return null;
    return { reason: row.stoppedReason as CreditStopReason, at: row.stoppedAt };
  }

  private stateOf(row: CreditMonthRow | null, monthEndsAt: number): CreditBudgetState {
    // A stop lifted by a new budget (credits bought) lifts the feed's "too little left" with it,
    // until an answer says more (or refuses again: stopped anew for the new budget).
    const liftedByBudget = row?.stoppedBudget != null && row.stoppedBudget !== this.settings.monthlyCredits && row.feedRemaining !== null && row.feedRemaining < this.planSettings.oddsCredits;
    return {
      monthlyCredits: this.settings.monthlyCredits,
      reserveCredits: this.settings.reserveCredits,
      usedCredits: row?.usedCredits ?? 0,
      reserveSpent: row?.reserveSpent ?? 0,
      feedRemaining: liftedByBudget ? null : (row?.feedRemaining ?? null),
      monthEndsAt,
    };
  }

  private viewOf(month: string, state: CreditBudgetState, row: CreditMonthRow | null, plan: FeedPlan, stopped: FeedBudgetView['stopped']): FeedBudgetView {
    const readAts = [...this.schedules.values()].map((s) => s.readAt).filter((at): at is number => at !== null);
    // GraphQL Int: a feed's 15-digit header must not break the query.
    const int = (value: number) => Math.min(value, MAX_INT);
    return {
      month,
      monthEndsAt: new Date(state.monthEndsAt),
      monthlyCredits: state.monthlyCredits,
      reserveCredits: state.reserveCredits,
      reserveLeft: int(reserveLeft(state)),
      usedCredits: int(state.usedCredits),
      remainingCredits: stopped ? 0 : int(remainingCredits(state)),
      source: row?.feedReportedAt ? 'feed' : 'counted',
      projectedMonthCredits: int(plan.projectedMonthCredits),
      oddsCreditsPerPoll: this.planSettings.oddsCredits,
      stopped,
      nextPolls: this.settings.sportKeys.map((sportKey) => {
        const next = plan.next.get(sportKey);
        return {
          sportKey,
          odds: next?.odds ? new Date(next.odds.at) : null,
          oddsPurpose: next?.odds?.purpose ?? null,
          scores: next?.scores ? new Date(next.scores.at) : null,
        };
      }),
      scheduleReadAt: readAts.length > 0 ? new Date(Math.min(...readAts)) : null,
      planning: true,
    };
  }
}
