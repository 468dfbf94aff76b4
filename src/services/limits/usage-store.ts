/**
 * Durable monthly usage (docs/RATE_LIMITING.md, "Durability: monthly usage in PostgreSQL": "Monthly usage is durable ... persisted to
 * Postgres"). The limiters keep the live count (Redis or memory) and write ABSOLUTE counts
 * here; PostgreSQL keeps the greatest value it has seen. Absolute values make a flush
 * idempotent: a retried flush, or several instances flushing the same key-month, can never
 * add a request twice. The limiters re-seed a key-month from here when their own copy is gone.
 */
import { systemClock, type Clock } from '../../domain/clock.js';
import { isUuid } from '../../domain/uuid.js';
import type { Orm } from '../../persistence/orm.js';
import { loadMonthlyCount, upsertMonthlyCounts } from '../../persistence/usage-repository.js';

export interface MonthlyUsageRow {
  apiKeyId: string;
  /** 'YYYY-MM' (UTC). */
  month: string;
  /** Absolute number of requests counted in that month, never a delta. */
  count: number;
}

/** What the limiters need from durable storage; tests may substitute it. */
export interface MonthlyUsageStore {
  /** Requests counted for the key in the month so far (0 when none were recorded). */
  load(apiKeyId: string, month: string): Promise<number>;
  /** Records absolute counts; a count lower than the stored one changes nothing. */
  flush(rows: readonly MonthlyUsageRow[]): Promise<void>;
}

export class UsageStore implements MonthlyUsageStore {
  constructor(
    private readonly orm: Orm,
    private readonly clock: Clock = systemClock,
  ) {}

  load(apiKeyId: string, month: string): Promise<number> {
    return loadMonthlyCount(this.orm.em.fork(), apiKeyId, month);
  }

  async flush(rows: readonly MonthlyUsageRow[]): Promise<void> {
    const merged = mergeRows(rows);
    if (merged.length === 0) return;
    await upsertMonthlyCounts(this.orm.em.fork(), merged, this.clock.now());
  }
}

const MONTH = /^\d{4}-(0[1-9]|1[0-2])$/;

/**
 * One row per key-month with the greatest count: PostgreSQL refuses an upsert that touches
 * the same row twice in one statement.
 */
function mergeRows(rows: readonly MonthlyUsageRow[]): MonthlyUsageRow[] {
  const byKeyMonth = new Map<string, MonthlyUsageRow>();
  for (const row of rows) {
    if (!isUuid(row.apiKeyId)) throw new RangeError(`monthly usage: api key id must be a UUID, got ${row.apiKeyId}`);
    if (!MONTH.test(row.month)) throw new RangeError(`monthly usage: month must be YYYY-MM, got ${row.month}`);
    if (!Number.isSafeInteger(row.count) || row.count < 0) {
      throw new RangeError(`monthly usage: count must be a non-negative integer, got ${row.count}`);
    }
    const id = `${row.apiKeyId.toLowerCase()}|${row.month}`;
    const existing = byKeyMonth.get(id);
    if (!existing || existing.count < row.count) byKeyMonth.set(id, row);
  }
  return [...byKeyMonth.values()];
}
