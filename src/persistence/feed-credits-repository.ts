/**
 * Feed credits by UTC month (feed_credit_months): what the odds feed cost, shared by every
 * instance of a deployment (docs/VALUE_ENGINE.md, "Feed credits").
 */
import type { Em } from './orm.js';

export interface CreditMonthRow {
  month: string;
  usedCredits: number;
  countedCredits: number;
  reserveSpent: number;
  feedUsed: number | null;
  feedRemaining: number | null;
  feedReportedAt: Date | null;
  stoppedReason: string | null;
  stoppedAt: Date | null;
  stoppedBudget: number | null;
}

interface RawRow {
  month: string;
  used_credits: string | number;
  counted_credits: string | number;
  reserve_spent: string | number;
  feed_used: string | number | null;
  feed_remaining: string | number | null;
  feed_reported_at: Date | string | null;
  stopped_reason: string | null;
  stopped_at: Date | string | null;
  stopped_budget: string | number | null;
}

const orNull = <T, R>(value: T | null, map: (value: T) => R): R | null => (value === null ? null : map(value));

function toRow(raw: RawRow): CreditMonthRow {
  return {
    month: raw.month,
    usedCredits: Number(raw.used_credits),
    countedCredits: Number(raw.counted_credits),
    reserveSpent: Number(raw.reserve_spent),
    feedUsed: orNull(raw.feed_used, Number),
    feedRemaining: orNull(raw.feed_remaining, Number),
    feedReportedAt: orNull(raw.feed_reported_at, (at) => new Date(at)),
    stoppedReason: raw.stopped_reason,
    stoppedAt: orNull(raw.stopped_at, (at) => new Date(at)),
    stoppedBudget: orNull(raw.stopped_budget, Number),
  };
}

export async function readCreditMonth(em: Em, month: string): Promise<CreditMonthRow | null> {
  const rows = await em.execute<RawRow[]>('select * from feed_credit_months where month = ?', [month]);
  return rows[0] ? toRow(rows[0]) : null;
}

export interface CreditCharge {
  month: string;
  /** What the request costs by v4's formula (0 for an answer the feed does not charge). */
  credits: number;
  /** The part of `credits` a closing poll took from the reserve. */
  fromReserve: number;
  /** The answer's x-requests-used / x-requests-remaining, when sent. */
  feedUsed: number | null;
  feedRemaining: number | null;
  at: Date;
}

/**
 * Charges one feed answer. The month's used credits grow by the feed's own count since the last
 * answer that carried one (what every client of the key spent meanwhile), or by the formula's
 * credits when there is no earlier count this month or the feed's count fell below half and by
 * over 100 (its period started again); an older answer arriving late changes nothing.
 */
export async function chargeCredits(em: Em, charge: CreditCharge): Promise<CreditMonthRow> {
  const reported = charge.feedUsed !== null || charge.feedRemaining !== null;
  const rows = await em.execute<RawRow[]>(
    `insert into feed_credit_months (month, used_credits, counted_credits, reserve_spent, feed_used, feed_remaining, feed_reported_at, updated_at)
     values (?, ?, ?, ?, ?, ?, ?, ?)
     on conflict (month) do update set
       -- The feed's used count only grows within its period. A lower one is an older answer
       -- arriving after a newer one (the sports are polled at once: a few requests' credits
       -- lower), or the feed's period starting again (below half of the count before and over
       -- 100 credits lower): counted by the formula.
       used_credits = feed_credit_months.used_credits + case
         when excluded.feed_used is null or feed_credit_months.feed_used is null then excluded.counted_credits
         when excluded.feed_used >= feed_credit_months.feed_used then excluded.feed_used - feed_credit_months.feed_used
         when excluded.feed_used * 2 < feed_credit_months.feed_used and feed_credit_months.feed_used - excluded.feed_used > 100 then excluded.counted_credits
         else 0 end,
       counted_credits = feed_credit_months.counted_credits + excluded.counted_credits,
       reserve_spent = feed_credit_months.reserve_spent + excluded.reserve_spent,
       feed_used = case
         when excluded.feed_used is null then feed_credit_months.feed_used
         when feed_credit_months.feed_used is null or excluded.feed_used >= feed_credit_months.feed_used or excluded.feed_used * 2 < feed_credit_months.feed_used and feed_credit_months.feed_used - excluded.feed_used > 100
           then excluded.feed_used
         else feed_credit_months.feed_used end,
       -- The remaining count of the newest answer (an older one arriving late is ignored).
       feed_remaining = case
         when excluded.feed_remaining is null then feed_credit_months.feed_remaining
         when excluded.feed_used is null or feed_credit_months.feed_used is null
           or excluded.feed_used >= feed_credit_months.feed_used or excluded.feed_used * 2 < feed_credit_months.feed_used and feed_credit_months.feed_used - excluded.feed_used > 100
           then excluded.feed_remaining
         else feed_credit_months.feed_remaining end,
       feed_reported_at = coalesce(excluded.feed_reported_at, feed_credit_months.feed_reported_at),
       updated_at = excluded.updated_at
     returning *`,
    [charge.month, charge.credits, charge.credits, charge.fromReserve, charge.feedUsed, charge.feedRemaining, reported ? charge.at : null, charge.at],
  );
  return toRow(rows[0]!);
}

/** Stops the month's polls for `budget`; true when this call stopped them (not already stopped for it). */
export async function stopCredits(em: Em, month: string, reason: string, budget: number, at: Date): Promise<boolean> {
  const rows = await em.execute<{ month: string }[]>(
    `insert into feed_credit_months (month, stopped_reason, stopped_at, stopped_budget, updated_at) values (?, ?, ?, ?, ?)
     on conflict (month) do update set stopped_reason = excluded.stopped_reason, stopped_at = excluded.stopped_at, stopped_budget = excluded.stopped_budget, updated_at = excluded.updated_at
     where feed_credit_months.stopped_reason is null or feed_credit_months.stopped_budget is distinct from excluded.stopped_budget
     returning month`,
    [month, reason, at, budget, at],
  );
  return rows.length === 1;
}

/** Lifts the month's stop (the feed reports credits again); true when there was one. */
export async function liftCredits(em: Em, month: string): Promise<boolean> {
  const rows = await em.execute<{ month: string }[]>(
    `update feed_credit_months set stopped_reason = null, stopped_at = null, stopped_budget = null where month = ? and stopped_reason is not null returning month`,
    [month],
  );
  return rows.length === 1;
}

export interface OpenPickEvent {
  eventId: string;
  sportKey: string;
  commenceAt: Date;
  /** A published pick of it waits for its final (not only picks held for review). */
  published: boolean;
}

/** The feed events with an open engine pick (published or held for review), of these sport keys. */
export async function listOpenPickEvents(em: Em, sportKeys: readonly string[]): Promise<OpenPickEvent[]> {
  if (sportKeys.length === 0) return [];
  const rows = await em.execute<{ id: string; sport_key: string; commence_time: Date | string; published: boolean }[]>(
    `select e.id, e.sport_key, e.commence_time,
            exists (select 1 from picks p where p.event_id = e.id and p.status = 'published') as published
     from odds_events e
     where e.sport_key in (${sportKeys.map(() => '?').join(', ')})
       and exists (select 1 from picks p where p.event_id = e.id and p.status in ('published', 'admin_review'))`,
    [...sportKeys],
  );
  return rows.map((row) => ({ eventId: row.id, sportKey: row.sport_key, commenceAt: new Date(row.commence_time), published: row.published === true }));
}
