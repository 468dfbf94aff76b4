/** Durable monthly usage (monthly_usage): absolute counts, PostgreSQL keeps the greatest seen. */
import type { Em } from './orm.js';

/** Requests counted for the key in the month ('YYYY-MM'), 0 when none were recorded. */
export async function loadMonthlyCount(em: Em, apiKeyId: string, month: string): Promise<number> {
  const rows = await em.execute<{ request_count: string | number }[]>(
    'select request_count from monthly_usage where api_key_id = ? and month = ?',
    [apiKeyId, month],
  );
  // bigint arrives as a string from node-postgres; a month's count fits a double exactly.
  return rows[0] ? Number(rows[0].request_count) : 0;
}

function arrayLiteral(items: string[]): string {
  return `{${items.join(',')}}`;
}

/**
 * Records absolute counts in ONE statement whatever the batch size: the rows travel as three
 * array parameters (the caller validated them - UUID ids, YYYY-MM months, one row per
 * key-month - so the array literals cannot be malformed). The join skips ids without an
 * api_keys row instead of failing the batch on the foreign key (a poisoned batch would block
 * every later flush). The update's WHERE keeps greatest(stored, new) and skips rewriting rows
 * that did not grow.
 */
export async function upsertMonthlyCounts(
  em: Em,
  rows: readonly { apiKeyId: string; month: string; count: number }[],
  at: Date,
): Promise<void> {
  if (rows.length === 0) return;
  await em.execute(
    `insert into monthly_usage (api_key_id, month, request_count, updated_at)
     select v.api_key_id, v.month, v.request_count, ?::timestamptz
     from unnest(?::uuid[], ?::text[], ?::bigint[]) as v (api_key_id, month, request_count)
     join api_keys k on k.id = v.api_key_id
     on conflict (api_key_id, month) do update
       set request_count = excluded.request_count, updated_at = excluded.updated_at
       where monthly_usage.request_count < excluded.request_count`,
    [
      at.toISOString(),
      arrayLiteral(rows.map((row) => row.apiKeyId)),
      arrayLiteral(rows.map((row) => row.month)),
      arrayLiteral(rows.map((row) => String(row.count))),
    ],
  );
}
