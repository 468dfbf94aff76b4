/**
 * Durable monthly usage (docs/RATE_LIMITING.md, "Durability: monthly usage in PostgreSQL": "Monthly usage is durable ... persisted to
 * Postgres"). The limiters keep the live count (Redis or memory) and write ABSOLUTE counts
 * here; PostgreSQL keeps the latest state it has seen (isLaterUsage). Absolute values make a
 * flush idempotent: a retried flush, or several instances flushing the same key-month, can
 * never add a request twice. The limiters re-seed a key-month from here when their own copy is gone.
 */
import { systemClock, type Clock } from '../../domain/clock.js';
import { isUuid } from '../../domain/uuid.js';
import type { Orm } from '../../persistence/orm.js';
import { isLaterUsage, type MonthlyUsage } from '../../domain/rate-limit.js';
import { loadMonthlyUsage, upsertMonthlyUsage } from '../../persistence/usage-repository.js';

export type { MonthlyUsage };

/** Absolute numbers, never deltas: `count` requests counted in the month, `refunded` taken back from it. */
export interface MonthlyUsageRow extends MonthlyUsage {
  apiKeyId: string;
  /** 'YYYY-MM' (UTC). */
  month: string;
}

/** What the limiters need from durable storage; tests may substitute it. */
export interface MonthlyUsageStore {
  /** The key's usage in the month so far (zeros when none was recorded). */
  load(apiKeyId: string, month: string): Promise<MonthlyUsage>;
  /**
   * Records absolute counts; a row that admitted (count + refunded) and refunded no more than
   * the stored one changes nothing.
   */
  flush(rows: readonly MonthlyUsageRow[]): Promise<void>;
}


export class UsageStore implements MonthlyUsageStore {
  constructor(
    private readonly orm: Orm,
    private readonly clock: Clock = systemClock,
  ) {}

  load(apiKeyId: string, month: string): Promise<MonthlyUsage> {
    return loadMonthlyUsage(this.orm.em.fork(), apiKeyId, month);
  }

  async flush(rows: readonly MonthlyUsageRow[]): Promise<void> {
    const merged = mergeRows(rows);
    if (merged.length === 0) return;
    await upsertMonthlyUsage(this.orm.em.fork(), merged, this.clock.now());
  }
}

const MONTH = /^\d{4}-(0[1-9]|1[0-2])$/;

/**
 * One row per key-month, its latest state: PostgreSQL refuses an upsert that touches the same
 * row twice in one statement.
 */
function mergeRows(rows: readonly MonthlyUsageRow[]): MonthlyUsageRow[] {
  const byKeyMonth = new Map<string, MonthlyUsageRow>();
  for (const row of rows) {
    if (!isUuid(row.apiKeyId)) throw new RangeError(`monthly usage: api key id must be a UUID, got ${row.apiKeyId}`);
    if (!MONTH.test(row.month)) throw new RangeError(`monthly usage: month must be YYYY-MM, got ${row.month}`);
    for (const field of ['count', 'refunded'] as const) {
      if (!Number.isSafeInteger(row[field]) || row[field] < 0) {
        throw new RangeError(`monthly usage: ${field} must be a non-negative integer, got ${row[field]}`);
      }
    }
    const id = `${row.apiKeyId.toLowerCase()}|${row.month}`;
    const existing = byKeyMonth.get(id);
    if (!existing || isLaterUsage(row, existing)) byKeyMonth.set(id, row);
  }
  return [...byKeyMonth.values()];
}
