/**
 * The state the operator's gauges show (picks_outbox_*, picks_webhook_subscriptions,
 * picks_ledger_entries, picks_ledger_checkpoint_*), read in one statement per scrape. Each part is an index lookup or a
 * count over a small set: the unrelayed events (a partial index), the subscriptions, the
 * ledger's head and its latest checkpoint.
 */
import type { Em } from './orm.js';
import { dateOrNullOf, executeBound, jsonOf, numberOf } from './sql.js';

export interface OperationsState {
  outboxPending: number;
  /** The oldest unrelayed event's commit time; null when none waits. */
  oldestPendingAt: Date | null;
  subscriptionsByStatus: Record<string, number>;
  ledgerHeadSeq: number;
  /** The latest signed checkpoint; null before the first. */
  ledgerCheckpoint: { treeSize: number; signedAt: Date } | null;
}

interface Row {
  outbox_pending: unknown;
  oldest_pending_at: unknown;
  subscriptions: unknown;
  ledger_head_seq: unknown;
  checkpoint_size: unknown;
  checkpoint_signed_at: unknown;
}

export async function readOperationsState(em: Em): Promise<OperationsState> {
  const [row] = await executeBound<Row>(
    em,
    `select
       (select count(*) from outbox_events where relayed_at is null) as outbox_pending,
       (select created_at from outbox_events where relayed_at is null order by seq limit 1) as oldest_pending_at,
       (select coalesce(json_object_agg(status, n), '{}'::json) from (select status, count(*) as n from webhook_subscriptions group by status) counted) as subscriptions,
       (select coalesce(max(seq), 0) from ledger_entries) as ledger_head_seq,
       (select tree_size from ledger_checkpoints order by tree_size desc limit 1) as checkpoint_size,
       (select signed_at from ledger_checkpoints order by tree_size desc limit 1) as checkpoint_signed_at`,
    [],
  );
  const subscriptions = jsonOf<Record<string, unknown>>(row!.subscriptions);
  return {
    outboxPending: numberOf(row!.outbox_pending),
    oldestPendingAt: dateOrNullOf(row!.oldest_pending_at),
    subscriptionsByStatus: Object.fromEntries(Object.entries(subscriptions).map(([status, count]) => [status, numberOf(count)])),
    ledgerHeadSeq: numberOf(row!.ledger_head_seq),
    ledgerCheckpoint: row!.checkpoint_size == null ? null : { treeSize: numberOf(row!.checkpoint_size), signedAt: dateOrNullOf(row!.checkpoint_signed_at)! },
  };
}
