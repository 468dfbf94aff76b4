/**
 * Writing the results of webhook attempts: the attempt log rows, and the deliveries moved on
 * (succeeded, retry scheduled, or failed with the subscription exhausted).
 *
 * The dispatcher writes results in batches, one transaction each. One row must never cost the
 * others theirs: when a batch fails, its rows are written one by one, and a row that still fails
 * is written in a minimal form (no receiver text at all) so that its attempt is counted and the
 * delivery still moves toward success or exhaustion. Only when even that fails (the database is
 * gone) does the delivery stay pending; its lease then ends and it is sent again.
 */
import type { AfterFailure } from '../domain/webhook.js';
import type { Em, Orm } from './orm.js';

export interface AttemptResult {
  /** The attempt log row's id. */
  attemptId: string;
  deliveryId: string;
  /** The delivery moves on only while this lease token is still its own. */
  leaseToken: string;
  subscriptionId: string;
  attemptNumber: number;
  attemptedAt: Date;
  finishedAt: Date;
  durationMs: number;
  statusCode: number | null;
  errorKind: string | null;
  /** Already made storable by the caller (see storedResponseBody). */
  responseBody: string | null;
  lastError: string | null;
  /** null: the attempt succeeded. */
  next: AfterFailure | null;
}

/** What could not be written as given; every failure is one of these. */
export type AttemptWriteFailure =
  /** The batch transaction failed; its rows are written one by one next. */
  | { stage: 'batch'; deliveryIds: string[]; error: Error }
  /** This row failed alone; it was written without response body or receiver text. */
  | { stage: 'row'; deliveryId: string; error: Error }
  /**
   * Not even a row's minimal form could be written, so the database refuses everything: these
   * deliveries (that row and the rest of the batch) stay pending until their lease ends.
   */
  | { stage: 'unwritten'; deliveryIds: string[]; error: Error };

const tuples = (count: number, casts: readonly string[]) =>
  Array.from({ length: count }, () => `(${casts.map((cast) => `?${cast}`).join(', ')})`).join(', ');

/** One transaction for these results. */
export async function writeAttemptResults(orm: Orm, rows: readonly AttemptResult[]): Promise<void> {
  if (rows.length === 0) return;
  await orm.em.fork().transactional((em) => writeInTransaction(em as Em, rows));
}

/**
 * Writes the results, one transaction for all when possible (see the file comment), and reports
 * each failure through `onFailure`. Returns the ids of the deliveries whose result could not be
 * written at all.
 */
export async function recordAttemptResults(
  orm: Orm,
  rows: readonly AttemptResult[],
  onFailure: (failure: AttemptWriteFailure) => void,
): Promise<Set<string>> {
  try {
    await writeAttemptResults(orm, rows);
    return new Set();
  } catch (error) {
    onFailure({ stage: 'batch', deliveryIds: rows.map((row) => row.deliveryId), error: error as Error });
  }
  for (const [index, row] of rows.entries()) {
    try {
      await writeAttemptResults(orm, [row]);
      continue;
    } catch (error) {
      onFailure({ stage: 'row', deliveryId: row.deliveryId, error: error as Error });
    }
    try {
      await writeAttemptResults(orm, [minimalForm(row)]);
    } catch (error) {
      // A row without any receiver text failing too means the database itself is failing (an
      // outage): trying the rest one by one would only wait on it once per row.
      const rest = rows.slice(index).map((left) => left.deliveryId);
      onFailure({ stage: 'unwritten', deliveryIds: rest, error: error as Error });
      return new Set(rest);
    }
  }
  return new Set();
}

/** The result with nothing the receiver chose: no body, an error text built from the status and kind alone. */
function minimalForm(row: AttemptResult): AttemptResult {
  const lastError = row.next === null ? null : row.errorKind === 'http_status' ? `HTTP ${row.statusCode}` : row.errorKind;
  return { ...row, responseBody: null, lastError };
}

/** The attempt log rows, then the deliveries moved on, then the rare exhaustions one by one. */
async function writeInTransaction(em: Em, rows: readonly AttemptResult[]): Promise<void> {
  // The log records every attempt, even one whose lease was lost meanwhile.
  await em.execute(
    `insert into webhook_delivery_attempts (id, delivery_id, attempt_number, attempted_at, duration_ms, status_code, error_kind, response_body)
     select v.* from (values ${tuples(rows.length, ['::uuid', '::uuid', '::int', '::timestamptz', '::int', '::int', '::text', '::text'])})
       as v(id, delivery_id, attempt_number, attempted_at, duration_ms, status_code, error_kind, response_body)
      where exists (select 1 from webhook_deliveries d where d.id = v.delivery_id)`,
    rows.flatMap((row) => [row.attemptId, row.deliveryId, row.attemptNumber, row.attemptedAt, Math.round(row.durationMs), row.statusCode, row.errorKind, row.responseBody]),
  );
  const succeeded = rows.filter((row) => row.next === null);
  if (succeeded.length > 0) {
    await em.execute(
      `update webhook_deliveries d set status = 'succeeded', attempt_count = v.attempt_count, next_attempt_at = null, locked_until = null,
              lease_token = null, last_status_code = v.status_code, last_error = null, updated_at = v.finished_at
         from (values ${tuples(succeeded.length, ['::uuid', '::uuid', '::int', '::int', '::timestamptz'])})
           as v(id, lease_token, attempt_count, status_code, finished_at)
        where d.id = v.id and d.lease_token = v.lease_token`,
      succeeded.flatMap((row) => [row.deliveryId, row.leaseToken, row.attemptNumber, row.statusCode, row.finishedAt]),
    );
  }
  const retried = rows.filter((row) => row.next?.kind === 'retry');
  if (retried.length > 0) {
    await em.execute(
      `update webhook_deliveries d set attempt_count = v.attempt_count, next_attempt_at = v.next_attempt_at, locked_until = null,
              lease_token = null, last_status_code = v.status_code, last_error = v.last_error, updated_at = v.finished_at
         from (values ${tuples(retried.length, ['::uuid', '::uuid', '::int', '::timestamptz', '::int', '::text', '::timestamptz'])})
           as v(id, lease_token, attempt_count, next_attempt_at, status_code, last_error, finished_at)
        where d.id = v.id and d.lease_token = v.lease_token`,
      retried.flatMap((row) => [
        row.deliveryId,
        row.leaseToken,
        row.attemptNumber,
        row.next?.kind === 'retry' ? row.next.at : null,
        row.statusCode,
        row.lastError,
        row.finishedAt,
      ]),
    );
  }
  for (const row of rows.filter((candidate) => candidate.next?.kind === 'exhausted')) {
    const failed = await em.execute<{ id: string }[]>(
      `update webhook_deliveries set status = 'failed', attempt_count = ?, next_attempt_at = null, locked_until = null, lease_token = null,
              last_status_code = ?, last_error = ?, updated_at = ?
        where id = ? and lease_token = ? returning id`,
      [row.attemptNumber, row.statusCode, row.lastError, row.finishedAt, row.deliveryId, row.leaseToken],
    );
    if (failed.length === 0) continue;
    // The last retry failed: the subscription is exhausted and its pending deliveries cancelled.
    await em.execute(`update webhook_subscriptions set status = 'exhausted', updated_at = ? where id = ? and status = 'active'`, [
      row.finishedAt,
      row.subscriptionId,
    ]);
    await em.execute(
      `update webhook_deliveries set status = 'cancelled', next_attempt_at = null, locked_until = null, lease_token = null, updated_at = ?
        where subscription_id = ? and status = 'pending'`,
      [row.finishedAt, row.subscriptionId],
    );
  }
}
