/**
 * Durable monthly usage (monthly_usage): absolute counts. Admitted requests (request_count +
 * refunded_count) and refunded ones only grow, so PostgreSQL keeps the row that has seen the
 * most: any order of writes, and any repetition, ends at the latest state.
 */
import type { MonthlyUsage } from '../domain/rate-limit.js';
import type { Em } from './orm.js';

/** The key's usage in the month ('YYYY-MM'), zeros when none was recorded. */
export async function loadMonthlyUsage(em: Em, apiKeyId: string, month: string): Promise<MonthlyUsage> {
  const rows = await em.execute<{ request_count: string | number; refunded_count: string | number }[]>(
    'select request_count, refunded_count from monthly_usage where api_key_id = ? and month = ?',
    [apiKeyId, month],
  );
  // bigint arrives as a string from node-postgres; a month's count fits a double exactly.
  return rows[0] ? { count: Number(rows[0].request_count), refunded: Number(rows[0].refunded_count) } : { count: 0, refunded: 0 };
}

function arrayLiteral(items: string[]): string {
  return `{${items.join(',')}}`;
}

/**
 * Records absolute counts in ONE statement whatever the batch size: the rows travel as four
 * array parameters (the caller validated them - UUID ids, YYYY-MM months, one row per
 * key-month - so the array literals cannot be malformed). The join skips ids without an
 * api_keys row instead of failing the batch on the foreign key (a poisoned batch would block
 * every later flush). The update's WHERE keeps the row that admitted more (or, as many, refunded
 * more) and skips rewriting rows that did not move.
 */
export async function upsertMonthlyUsage(
  em: Em,
  rows: readonly ({ apiKeyId: string; month: string } & MonthlyUsage)[],
  at: Date,
): Promise<void> {
  if (rows.length === 0) return;
  await em.execute(
    `insert into monthly_usage (api_key_id, month, request_count, refunded_count, updated_at)
     select v.api_key_id, v.month, v.request_count, v.refunded_count, ?::timestamptz
     from unnest(?::uuid[], ?::text[], ?::bigint[], ?::bigint[]) as v (api_key_id, month, request_count, refunded_count)
     join api_keys k on k.id = v.api_key_id
     on conflict (api_key_id, month) do update
       set request_count = excluded.request_count, refunded_count = excluded.refunded_count, updated_at = excluded.updated_at
       where (monthly_usage.request_count + monthly_usage.refunded_count, monthly_usage.refunded_count)
           < (excluded.request_count + excluded.refunded_count, excluded.refunded_count)`,
    [
      at.toISOString(),
      arrayLiteral(rows.map((row) => row.apiKeyId)),
      arrayLiteral(rows.map((row) => row.month)),
      arrayLiteral(rows.map((row) => String(row.count))),
      arrayLiteral(rows.map((row) => String(row.refunded))),
    ],
  );
}
