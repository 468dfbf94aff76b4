/**
 * The odds feed's credits (docs/VALUE_ENGINE.md, "Feed credits"): what a request costs, and the
 * plan of polls that follows the kickoffs within a monthly budget. Pure: the plan is a function of
 * the schedule, the budget's state, the settings and the time, so it is tested on its properties.
 *
 * The plan covers a window (a week, or less at the month's end) and is made again at every turn of
 * the poller, so only its first poll per sport matters; a credit left unspent in one window is
 * there for the next. What the window may spend is paced by time: its share of the month's
 * remaining general credits (the budget less the reserve kept for closing lines).
 */

/** The Odds API v4: an odds request costs markets x regions credits. */
export function oddsRequestCredits(markets: number, regions: number): number {
  return markets * regions;
}
/** A scores request with `daysFrom` (the engine sends daysFrom=3) costs 2; the events list is free. */
export const SCORES_REQUEST_CREDITS = 2;

const MINUTE = 60_000;
const HOUR = 60 * MINUTE;
const DAY = 24 * HOUR;
/** How far ahead one plan looks: a week holds every weekday of a league's rhythm. */
export const PLAN_WINDOW_MS = 7 * DAY;
/** The longest wait between two odds polls of a sport with a kickoff in the horizon. */
export const MAX_ODDS_INTERVAL_MS = DAY;
/**
 * The routine interval is scale x (time to the nearest kickoff) / this, within [ODDS_POLL_SECONDS,
 * a day]: at scale 1 a match a day away is polled hourly, one two hours away every five minutes.
 */
const KICKOFF_DIVISOR = 24;
/**
 * The scales tried, most frequent first: 0 polls every ODDS_POLL_SECONDS, 24 (the largest that
 * keeps a later poll from overtaking an earlier one's successor) polls once per remaining time.
 */
export const SCALES: readonly number[] = [0, ...Array.from({ length: 49 }, (_, i) => 0.05 * Math.pow(24 / 0.05, i / 48))];
/** Scores are asked every SCORES_POLL_SECONDS for this long after a kickoff with an open pick ... */
export const SCORES_WATCH_MS = 3 * HOUR;
/** ... then hourly until the final, and no longer than v4's daysFrom=3 reaches back. */
export const SCORES_LATE_INTERVAL_MS = HOUR;
export const SCORES_GIVE_UP_MS = 3 * DAY;
/** The days of the longest month: the minimum budget is checked against it. */
export const LONGEST_MONTH_DAYS = 31;

export interface ScheduledEvent {
  eventId: string;
  sportKey: string;
  /** Kickoff, epoch ms. */
  commenceAt: number;
  /** An engine pick of this event is still open (published or held for review): its closing line is owed. */
  hasOpenPick: boolean;
  /** A published pick of it waits for its final (scores polls); default: hasOpenPick. A held pick is an operator's to settle. */
  awaitsFinal?: boolean;
}

export interface CreditBudgetState {
  monthlyCredits: number;
  /** Credits kept for closing polls this month. */
  reserveCredits: number;
  /** Credits used this month (the feed's own count when it reports one). */
  usedCredits: number;
  /** Credits of closing polls paid from the reserve this month. */
  reserveSpent: number;
  /** What the feed says is left on the key, when it said so this month: a hard ceiling. */
  feedRemaining: number | null;
  /** The month's end (the next month's first instant, UTC), epoch ms. */
  monthEndsAt: number;
}

export interface PlanSettings {
  sportKeys: readonly string[];
  oddsPollMs: number;
  scoresPollMs: number;
  closingWindowMs: number;
  horizonMs: number;
  oddsCredits: number;
  scoresCredits: number;
}

export interface SportPollHistory {
  lastOddsPollAt: number | null;
  lastScoresPollAt: number | null;
}

export type PollPurpose = 'closing' | 'routine' | 'scores';

export interface PlannedPoll {
  sportKey: string;
  kind: 'odds' | 'scores';
  at: number;
  purpose: PollPurpose;
  credits: number;
  paidFrom: 'reserve' | 'general';
}

export interface PlanInput {
  now: number;
  schedule: readonly ScheduledEvent[];
  budget: CreditBudgetState;
  settings: PlanSettings;
  /** By sport key; a sport missing has never been polled. */
  history?: ReadonlyMap<string, SportPollHistory>;
}

export interface FeedPlan {
  /** Every poll planned in the window, by time. */
  polls: PlannedPoll[];
  /** The first planned odds and scores poll of each configured sport (null: none in the window). */
  next: Map<string, { odds: PlannedPoll | null; scores: PlannedPoll | null }>;
  /** The routine scale chosen (SCALES); null when no routine poll fits. */
  scale: number | null;
  windowEndsAt: number;
  /** Credits of the polls planned in the window. */
  plannedCredits: number;
  /** Used + the window's plan extrapolated to the month's end, at most the budget. */
  projectedMonthCredits: number;
  /** Open-pick events whose closing poll the budget cannot pay. */
  closingUnfunded: string[];
}

/** What is left this month: the budget less what was used, and never more than the feed says. */
export function remainingCredits(budget: CreditBudgetState): number {
  const left = Math.max(0, budget.monthlyCredits - budget.usedCredits);
  return budget.feedRemaining === null ? left : Math.max(0, Math.min(left, budget.feedRemaining));
}

/** The reserve still kept: never more than what is left. */
export function reserveLeft(budget: CreditBudgetState): number {
  return Math.min(remainingCredits(budget), Math.max(0, budget.reserveCredits - budget.reserveSpent));
}

/**
 * The smallest budget the service starts with: each sport polled for odds once a day and one
 * closing poll a day, in the longest month. Returns the arithmetic as text for the refusal.
 */
export function minimumMonthlyCredits(sports: number, oddsCredits: number): { credits: number; arithmetic: string } {
  const credits = sports * LONGEST_MONTH_DAYS * 2 * oddsCredits;
  return {
    credits,
    arithmetic: `${sports} sport${sports === 1 ? '' : 's'} x ${LONGEST_MONTH_DAYS} days x 2 odds polls a day (one routine, one closing) x ${oddsCredits} credit${oddsCredits === 1 ? '' : 's'} a poll = ${credits}`,
  };
}

/** A pool of credits drawn from in order; false when it cannot pay. */
class Purse {
  constructor(public reserve: number, public general: number) {}
  pay(credits: number, order: readonly ('reserve' | 'general')[]): 'reserve' | 'general' | null {
    for (const pool of order) {
      if (this[pool] >= credits) {
        this[pool] -= credits;
        return pool;
      }
    }
    return null;
  }
}

/**
 * The closing polls of one sport: for each open-pick event ahead, one odds poll in the
 * CLOSING_POLL_WINDOW_SECONDS before its kickoff, at the window's middle (room for a retry) or
 * now when that is past. One poll covers every kickoff whose window it falls in. An event whose
 * window already holds a poll needs none.
 */
function closingPolls(sportKey: string, events: readonly ScheduledEvent[], now: number, windowEnd: number, settings: PlanSettings, lastOddsPollAt: number | null): { at: number; eventIds: string[] }[] {
  const window = settings.closingWindowMs;
  const ahead = events
    .filter((e) => e.sportKey === sportKey && e.hasOpenPick && e.commenceAt > now && e.commenceAt - window < windowEnd)
    .filter((e) => !(lastOddsPollAt !== null && lastOddsPollAt >= e.commenceAt - window && lastOddsPollAt < e.commenceAt))
    .sort((a, b) => a.commenceAt - b.commenceAt);
  const polls: { at: number; eventIds: string[] }[] = [];
  for (const event of ahead) {
    const last = polls.at(-1);
    if (last && last.at >= event.commenceAt - window && last.at < event.commenceAt) {
      last.eventIds.push(event.eventId);
      continue;
    }
    // Never past the window's end (the month's, at most): a later one is the next month's to pay.
    polls.push({ at: Math.min(windowEnd - 1, Math.max(now, event.commenceAt - Math.floor(window / 2))), eventIds: [event.eventId] });
  }
  return polls;
}

/**
 * The scores polls of one sport: while an event with an open pick has started and waits for its
 * final (assumed within SCORES_WATCH_MS for the plan), every SCORES_POLL_SECONDS, then hourly
 * up to SCORES_GIVE_UP_MS. The first comes at the first kickoff: it also closes the picks.
 */
function scoresPollTimes(sportKey: string, events: readonly ScheduledEvent[], now: number, windowEnd: number, settings: PlanSettings, lastScoresPollAt: number | null): number[] {
  const picked = events.filter((e) => e.sportKey === sportKey && (e.awaitsFinal ?? e.hasOpenPick) && e.commenceAt + SCORES_GIVE_UP_MS > now && e.commenceAt < windowEnd);
  if (picked.length === 0) return [];
  const intervalAt = (t: number): number | null => {
    let interval: number | null = null;
    for (const e of picked) {
      if (t < e.commenceAt || t >= e.commenceAt + SCORES_GIVE_UP_MS) continue;
      const own = t < e.commenceAt + SCORES_WATCH_MS ? settings.scoresPollMs : Math.max(settings.scoresPollMs, SCORES_LATE_INTERVAL_MS);
      interval = interval === null ? own : Math.min(interval, own);
    }
    return interval;
  };
  const nextStartAfter = (t: number): number | null => {
    let next: number | null = null;
    for (const e of picked) if (e.commenceAt > t && (next === null || e.commenceAt < next)) next = e.commenceAt;
    return next;
  };
  const times: number[] = [];
  let t = now;
  if (lastScoresPollAt !== null) {
    const interval = intervalAt(lastScoresPollAt);
    if (interval !== null) t = Math.max(now, lastScoresPollAt + interval);
  }
  while (t < windowEnd) {
    const interval = intervalAt(t);
    if (interval === null) {
      const next = nextStartAfter(t);
      if (next === null) break;
      t = next;
      continue;
    }
    times.push(t);
    t += interval;
  }
  return times;
}

/**
 * The routine odds polls of one sport at a scale: the closer the nearest kickoff, the more often.
 * Nothing while no kickoff is within the horizon (the next poll is when one enters it).
 */
export function routinePollTimes(kickoffs: readonly number[], from: number, windowEnd: number, scale: number, settings: PlanSettings, limit = Infinity): number[] {
  const times: number[] = [];
  let index = 0;
  let t = from;
  while (t < windowEnd && times.length < limit) {
    while (index < kickoffs.length && kickoffs[index]! <= t) index++;
    if (index >= kickoffs.length) break;
    const kickoff = kickoffs[index]!;
    if (kickoff - t > settings.horizonMs) {
      t = kickoff - settings.horizonMs;
      continue;
    }
    times.push(t);
    t += routineIntervalMs(kickoff - t, scale, settings.oddsPollMs);
  }
  return times;
}

/** The wait after a routine poll made `untilKickoffMs` before the nearest kickoff. */
export function routineIntervalMs(untilKickoffMs: number, scale: number, oddsPollMs: number): number {
  // Whole milliseconds: a plan's times are clock readings.
  return Math.min(MAX_ODDS_INTERVAL_MS, Math.max(oddsPollMs, Math.ceil((scale * untilKickoffMs) / KICKOFF_DIVISOR)));
}

/** The plan of polls from `now` to the window's end (module comment). */
export function planPolls(input: PlanInput): FeedPlan {
  const { now, schedule, budget, settings } = input;
  const monthEnd = Math.max(budget.monthEndsAt, now + 1);
  const windowEnd = Math.min(monthEnd, now + PLAN_WINDOW_MS);
  const reserve = reserveLeft(budget);
  const general = remainingCredits(budget) - reserve;
  const purse = new Purse(reserve, general);
  // The window's share of the general credits: paced by time, so the month's later weeks keep theirs.
  const share = (windowEnd - now) / (monthEnd - now);
  const polls: PlannedPoll[] = [];
  const closingUnfunded: string[] = [];
  const history = (sportKey: string): SportPollHistory => input.history?.get(sportKey) ?? { lastOddsPollAt: null, lastScoresPollAt: null };

  // 1. Closing polls, in time order across sports: the reserve first, then the general credits.
  const closings = settings.sportKeys
    .flatMap((sportKey) => closingPolls(sportKey, schedule, now, windowEnd, settings, history(sportKey).lastOddsPollAt).map((poll) => ({ sportKey, ...poll })))
    .sort((a, b) => a.at - b.at);
  for (const closing of closings) {
    const paidFrom = purse.pay(settings.oddsCredits, ['reserve', 'general']);
    if (paidFrom === null) closingUnfunded.push(...closing.eventIds);
    else polls.push({ sportKey: closing.sportKey, kind: 'odds', at: closing.at, purpose: 'closing', credits: settings.oddsCredits, paidFrom });
  }

  // 2. Scores polls while a pick waits for its final: general credits only (the reserve is for the closings of picks yet to come).
  const scoresTimes = settings.sportKeys
    .flatMap((sportKey) => scoresPollTimes(sportKey, schedule, now, windowEnd, settings, history(sportKey).lastScoresPollAt).map((at) => ({ sportKey, at })))
    .sort((a, b) => a.at - b.at);
  for (const { sportKey, at } of scoresTimes) {
    const paidFrom = purse.pay(settings.scoresCredits, ['general']);
    if (paidFrom === null) break;
    polls.push({ sportKey, kind: 'scores', at, purpose: 'scores', credits: settings.scoresCredits, paidFrom });
  }

  // 3. Routine odds polls: the most frequent scale the window's share of the general credits pays.
  // Less what the closing and scores polls already took from the general credits.
  const routineCredits = Math.max(0, Math.min(purse.general, Math.floor(general * share) - (general - purse.general)));
  const routineStarts = settings.sportKeys.map((sportKey) => {
    const kickoffs = schedule
      .filter((e) => e.sportKey === sportKey && e.commenceAt > now)
      .map((e) => e.commenceAt)
      .sort((a, b) => a - b);
    const last = history(sportKey).lastOddsPollAt;
    const from = (scale: number) => {
      if (last === null) return now;
      const nearest = kickoffs.find((k) => k > last);
      return nearest === undefined ? now : Math.max(now, last + routineIntervalMs(nearest - last, scale, settings.oddsPollMs));
    };
    return { sportKey, kickoffs, from };
  });
  const maxPolls = Math.floor(routineCredits / settings.oddsCredits);
  const routineAt = (scale: number, limit: number) =>
    routineStarts.map(({ sportKey, kickoffs, from }) => ({ sportKey, times: routinePollTimes(kickoffs, from(scale), windowEnd, scale, settings, limit) }));
  const count = (plans: { times: number[] }[]) => plans.reduce((sum, p) => sum + p.times.length, 0);
  let scale: number | null = null;
  let routine: { sportKey: string; times: number[] }[] = [];
  if (maxPolls > 0) {
    // Polls fall as the scale grows: the first scale whose polls the credits pay is the most frequent affordable.
    let low = 0;
    let high = SCALES.length - 1;
    let found = -1;
    while (low <= high) {
      const middle = (low + high) >> 1;
      if (count(routineAt(SCALES[middle]!, maxPolls + 1)) <= maxPolls) {
        found = middle;
        high = middle - 1;
      } else low = middle + 1;
    }
    if (found >= 0) {
      scale = SCALES[found]!;
      routine = routineAt(scale, Infinity);
    } else {
      // Even the sparsest plan is too dear: its earliest polls, as many as are paid.
      scale = SCALES.at(-1)!;
      const times = routineAt(scale, Infinity)
        .flatMap(({ sportKey, times }) => times.map((at) => ({ sportKey, at })))
        .sort((a, b) => a.at - b.at)
        .slice(0, maxPolls);
      routine = settings.sportKeys.map((sportKey) => ({ sportKey, times: times.filter((t) => t.sportKey === sportKey).map((t) => t.at) }));
    }
  }
  for (const { sportKey, times } of routine) {
    for (const at of times) polls.push({ sportKey, kind: 'odds', at, purpose: 'routine', credits: settings.oddsCredits, paidFrom: 'general' });
  }

  polls.sort((a, b) => a.at - b.at || (a.kind === b.kind ? 0 : a.kind === 'odds' ? -1 : 1));
  const next = new Map<string, { odds: PlannedPoll | null; scores: PlannedPoll | null }>();
  for (const sportKey of settings.sportKeys) {
    next.set(sportKey, {
      odds: polls.find((p) => p.sportKey === sportKey && p.kind === 'odds') ?? null,
      scores: polls.find((p) => p.sportKey === sportKey && p.kind === 'scores') ?? null,
    });
  }
  const plannedCredits = polls.reduce((sum, p) => sum + p.credits, 0);
  const extrapolated = plannedCredits * ((monthEnd - now) / Math.max(1, windowEnd - now));
  return {
    polls,
    next,
    scale,
    windowEndsAt: windowEnd,
    plannedCredits,
    projectedMonthCredits: Math.min(budget.monthlyCredits, Math.round(budget.usedCredits + extrapolated)),
    closingUnfunded,
  };
}

/** The UTC calendar month of `at` as `YYYY-MM`, and its end. */
export function creditMonthOf(at: number): { month: string; endsAt: number } {
  const date = new Date(at);
  const endsAt = Date.UTC(date.getUTCFullYear(), date.getUTCMonth() + 1, 1);
  return { month: `${date.getUTCFullYear()}-${String(date.getUTCMonth() + 1).padStart(2, '0')}`, endsAt };
}
