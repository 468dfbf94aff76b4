/**
 * Keeps the log tables from growing without end. Every hour, on every instance (idempotent;
 * batches take their rows with SKIP LOCKED, so instances never wait for each other):
 * - webhook deliveries that finished (succeeded, failed or cancelled) more than
 *   LOG_RETENTION_DAYS ago, with their attempts (on delete cascade). Pending deliveries are
 *   never touched, however old;
 * - outbox events older than LOG_RETENTION_DAYS that are relayed, that no remaining delivery
 *   refers to, and that are not among the newest REPLAY_MAX_EVENTS (the stream replay window
 *   is 24 h or 1,000 events, whichever reaches further back);
 * - odds history rows older than ODDS_HISTORY_DAYS, and feed events that kicked off before then
 *   and have no open pick.
 */
import type { ServiceLog } from './log.js';
import type { Clock } from '../domain/clock.js';
import type { Orm } from '../persistence/orm.js';
import { deletePrunableEvents } from '../persistence/outbox-repository.js';
import { deleteFinishedDeliveries } from '../persistence/webhook-repository.js';
import { deleteOldOdds } from '../persistence/odds-repository.js';
import { deleteExpiredStreamTokens } from '../persistence/stream-tokens-repository.js';
import { DEFAULT_ODDS_HISTORY_DAYS } from '../domain/bounds.js';
import { REPLAY_MAX_EVENTS } from './events/pick-feed.js';

export const LOG_RETENTION_DAYS = 30;
const DAY_MS = 24 * 60 * 60 * 1000;
export const RETENTION_INTERVAL_MS = 60 * 60 * 1000;
const BATCH = 1_000;

export interface PruneResult {
  deliveries: number;
  events: number;
  /** Stream tokens expired more than a day ago (past the hourly mint window, useless to anyone). */
  streamTokens: number;
  /** Odds history rows and finished feed events past ODDS_HISTORY_DAYS. */
  odds: number;
}

export class RetentionJob {
  private timer: NodeJS.Timeout | null = null;
  private running: Promise<unknown> | null = null;

  constructor(
    private readonly orm: Orm,
    private readonly clock: Clock,
    private readonly options: { intervalMs?: number; log?: ServiceLog; oddsHistoryDays?: number } = {},
  ) {}

  start(): void {
    this.timer = setInterval(() => {
      if (this.running) return;
      this.running = this.prune()
        .catch((error: unknown) => this.options.log?.warn({ err: (error as Error).message }, 'log retention failed; trying again next time'))
        .finally(() => {
          this.running = null;
        });
    }, this.options.intervalMs ?? RETENTION_INTERVAL_MS);
    this.timer.unref();
  }

  async stop(): Promise<void> {
    if (this.timer) clearInterval(this.timer);
    await this.running;
  }

  /** Deletes everything past retention, one batch at a time. */
  async prune(): Promise<PruneResult> {
    const cutoff = new Date(this.clock.now().getTime() - LOG_RETENTION_DAYS * DAY_MS);
    // Deliveries first: the events they referred to become prunable in the same run.
    const deliveries = await this.deleteInBatches((batch) => deleteFinishedDeliveries(this.orm.em.fork(), cutoff, batch));
    const events = await this.deleteInBatches((batch) => deletePrunableEvents(this.orm.em.fork(), cutoff, REPLAY_MAX_EVENTS, batch));
    const oddsCutoff = new Date(this.clock.now().getTime() - (this.options.oddsHistoryDays ?? DEFAULT_ODDS_HISTORY_DAYS) * DAY_MS);
    const odds = await this.deleteInBatches((batch) => deleteOldOdds(this.orm.em.fork(), oddsCutoff, batch));
    const streamTokens = await deleteExpiredStreamTokens(this.orm.em.fork(), new Date(this.clock.now().getTime() - DAY_MS));
    return { deliveries, events, streamTokens, odds };
  }

  /** Runs one batch delete (returning how many rows went) until a batch comes back short. */
  private async deleteInBatches(deleteBatch: (batch: number) => Promise<number>): Promise<number> {
    let total = 0;
    for (;;) {
      const deleted = await deleteBatch(BATCH);
      total += deleted;
      if (deleted < BATCH) return total;
    }
  }
}
