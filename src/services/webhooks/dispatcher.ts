/**
 * The webhook dispatcher: claims due deliveries and sends them, one attempt at a time.
 *
 * - Claiming is one statement: due rows (pending, next_attempt_at reached, not leased or the
 *   lease expired) are locked with FOR UPDATE SKIP LOCKED and leased (locked_until, a lease
 *   token). Two dispatchers never hold the same delivery, and an attempt orphaned by a
 *   crashed dispatcher is taken over when its lease ends (LEASE_MS, well under 60 s).
 * - Completion is conditional on the lease token: a dispatcher that lost its lease records
 *   its attempt in the log but does not change the delivery's state.
 * - At-least-once: a crash before completion leaves the delivery pending; the next attempt
 *   carries the same X-Service-Delivery / webhook-id, so receivers can de-duplicate.
 * - Isolation: at most PER_SUBSCRIPTION_CONCURRENCY attempts per subscription in flight on a
 *   dispatcher and a global pool of CONCURRENCY; the claim ranks due rows per subscription
 *   and takes them round-robin, so one slow or failing receiver occupies a few slots at most.
 * - Throughput: a slot is freed when its HTTP attempt ends (the lease still guards the row),
 *   and results are written in batches (one transaction per COMPLETION_BATCH results or
 *   COMPLETION_FLUSH_MS), so the database cost per delivery is a fraction of a round trip.
 * - One result never fails the others: receiver text is sanitised before it is stored, and a
 *   batch that fails anyway is written row by row, a failing row in a minimal form
 *   (src/persistence/webhook-attempts.ts); every write failure is logged at error level.
 */
import type { ServiceLog } from '../log.js';
import type { ServiceMetrics } from '../metrics/metrics.js';
import { randomUUID } from 'node:crypto';
import type { Clock } from '../../domain/clock.js';
import { decryptSecret, type SecretKeyring } from '../../domain/secrets.js';
import {
  afterFailedAttempt,
  storableText,
  storedResponseBody,
  WEBHOOK_ERROR_TEXT_LIMIT,
  webhookBody,
  webhookHeaders,
  type WebhookEventType,
} from '../../domain/webhook.js';
import type { Orm } from '../../persistence/orm.js';
import { claimDueDeliveries, type ClaimedDelivery } from '../../persistence/webhook-repository.js';
import { recordAttemptResults, type AttemptResult, type AttemptWriteFailure } from '../../persistence/webhook-attempts.js';
import { newId } from '../ids.js';
import type { SendOutcome } from './http-sender.js';

export interface DeliverySender {
  send(input: { url: string; headers: Record<string, string>; body: string }): Promise<SendOutcome>;
}

export interface DispatcherOptions {
  retryScheduleMs: readonly number[];
  /** Idle polling interval; local commits kick the dispatcher at once. */
  pollIntervalMs?: number;
  leaseMs?: number;
  concurrency?: number;
  perSubscriptionConcurrency?: number;
  /** How long a result waits for others to share its write (default COMPLETION_FLUSH_MS). */
  completionFlushMs?: number;
  log?: ServiceLog;
  metrics?: ServiceMetrics;
}

export const LEASE_MS = 30_000;
export const CONCURRENCY = 128;
export const PER_SUBSCRIPTION_CONCURRENCY = 16;
/** Due rows looked at per claim (ranked per subscription before taking). */
const CLAIM_WINDOW = 2_000;
/** While attempts are in flight, claim again only when this many slots are free (bigger, rarer claims). */
const CLAIM_MIN_FREE = 16;
const COMPLETION_BATCH = 64;
const COMPLETION_FLUSH_MS = 5;

interface Completion {
  delivery: ClaimedDelivery;
  attemptedAt: Date;
  finishedAt: Date;
  outcome: SendOutcome;
  done: () => void;
}

export class WebhookDispatcher {
  private readonly inFlight = new Map<string, number>();
  private readonly running = new Set<Promise<void>>();
  private active = 0;
  private timer: NodeJS.Timeout | null = null;
  private claiming: Promise<number> | null = null;
  private completions: Completion[] = [];
  private flushTimer: NodeJS.Timeout | null = null;
  private flushing: Promise<void> = Promise.resolve();
  private stopped = true;
  private readonly pollIntervalMs: number;
  private readonly leaseMs: number;
  private readonly concurrency: number;
  private readonly perSubscription: number;
  private readonly completionFlushMs: number;

  constructor(
    private readonly orm: Orm,
    private readonly clock: Clock,
    private readonly sender: DeliverySender,
    private readonly keyring: SecretKeyring,
    private readonly options: DispatcherOptions,
  ) {
    this.pollIntervalMs = options.pollIntervalMs ?? 250;
    this.leaseMs = options.leaseMs ?? LEASE_MS;
    this.concurrency = options.concurrency ?? CONCURRENCY;
    this.perSubscription = options.perSubscriptionConcurrency ?? PER_SUBSCRIPTION_CONCURRENCY;
    this.completionFlushMs = options.completionFlushMs ?? COMPLETION_FLUSH_MS;
  }

  start(): void {
    this.stopped = false;
    this.schedule(0);
  }

  /** Claims soon: called after the relay committed new deliveries on this instance. */
  kick(): void {
    if (!this.stopped) this.schedule(0);
  }

  /** Stops claiming and waits for attempts in flight to complete (SIGTERM: nothing left leased). */
  async stop(): Promise<void> {
    this.stopped = true;
    if (this.timer) clearTimeout(this.timer);
    this.timer = null;
    await this.claiming?.catch(() => 0);
    await Promise.allSettled([...this.running]);
  }

  get attemptsInFlight(): number {
    return this.active;
  }

  /** Claims what is due now and starts the attempts; returns how many were claimed. */
  async dispatchOnce(): Promise<number> {
    const free = this.concurrency - this.active;
    if (free <= 0 || (this.active > 0 && free < Math.min(CLAIM_MIN_FREE, this.concurrency))) return 0;
    const claimed = await this.claim(free);
    for (const delivery of claimed) {
      this.active += 1;
      this.inFlight.set(delivery.subscriptionId, (this.inFlight.get(delivery.subscriptionId) ?? 0) + 1);
      let released = false;
      const release = () => {
        if (released) return;
        released = true;
        this.active -= 1;
        const left = (this.inFlight.get(delivery.subscriptionId) ?? 1) - 1;
        if (left > 0) this.inFlight.set(delivery.subscriptionId, left);
        else this.inFlight.delete(delivery.subscriptionId);
        // A slot is free: more may be due.
        this.kick();
      };
      const attempt = this.attempt(delivery, release)
        .catch((error: Error) => this.options.log?.warn({ err: error.message, delivery: delivery.id }, 'webhook attempt failed to complete; the lease will expire and it will be retried'))
        .finally(() => {
          release();
          this.running.delete(attempt);
        });
      this.running.add(attempt);
    }
    return claimed.length;
  }

  /** Waits until every attempt started so far has completed (tests). */
  async idle(): Promise<void> {
    while (this.running.size > 0 || this.claiming) {
      await Promise.allSettled([...this.running, this.claiming]);
    }
  }

  private async claim(limit: number): Promise<ClaimedDelivery[]> {
    const now = this.clock.now();
    const leaseToken = randomUUID();
    return claimDueDeliveries(this.orm.em.fork(), {
      now,
      leaseUntil: new Date(now.getTime() + this.leaseMs),
      leaseToken,
      limit,
      window: CLAIM_WINDOW,
      perSubscription: this.perSubscription,
      busy: this.inFlight,
    });
  }

  private async attempt(delivery: ClaimedDelivery, release: () => void): Promise<void> {
    const body = webhookBody(delivery.event);
    const attemptedAt = this.clock.now();
    if (delivery.attemptCount === 0) this.options.metrics?.webhookDeliveryLag.observe(Math.max(0, attemptedAt.getTime() - Date.parse(delivery.event.createdAt)) / 1000);
    const secret = decryptSecret(delivery.secretCiphertext, this.keyring, delivery.subscriptionId);
    const previous = delivery.previousSecretCiphertext;
    const headers = webhookHeaders({
      deliveryId: delivery.id,
      eventType: delivery.event.type,
      secret,
      previousSecret: previous === null ? null : decryptSecret(previous, this.keyring, delivery.subscriptionId),
      body,
      timestampSeconds: Math.floor(attemptedAt.getTime() / 1000),
    });
    const outcome = await this.sender.send({ url: delivery.url, headers, body });
    release();
    await this.complete(delivery, attemptedAt, outcome);
  }

  /** Queues the result; resolves once it is written (batched with others) or its write failed and was reported. */
  private complete(delivery: ClaimedDelivery, attemptedAt: Date, outcome: SendOutcome): Promise<void> {
    return new Promise<void>((done) => {
      this.completions.push({ delivery, attemptedAt, finishedAt: this.clock.now(), outcome, done });
      if (this.completions.length >= COMPLETION_BATCH) this.scheduleFlush(0);
      else this.scheduleFlush(this.completionFlushMs);
    });
  }

  private scheduleFlush(delayMs: number): void {
    if (this.flushTimer) {
      if (delayMs > 0) return;
      clearTimeout(this.flushTimer);
    }
    this.flushTimer = setTimeout(() => {
      this.flushTimer = null;
      // One flush at a time, in order.
      this.flushing = this.flushing.then(() => this.flush());
    }, delayMs);
  }

  private async flush(): Promise<void> {
    const batch = this.completions.splice(0, COMPLETION_BATCH);
    if (this.completions.length > 0) this.scheduleFlush(0);
    if (batch.length === 0) return;
    try {
      // A result that could not be written is reported (error level) and left to its lease: the
      // delivery is sent again when the lease ends, so the attempt itself is over either way.
      const results = this.resultsOf(batch);
      this.countResults(batch, results);
      await recordAttemptResults(this.orm, results, (failure) => this.reportWriteFailure(failure));
    } catch (error) {
      // Only a throwing log gets here; the flush chain must go on regardless.
      this.options.log?.error({ err: (error as Error).message, deliveries: batch.map((item) => item.delivery.id) }, 'webhook results: write failed');
    }
    for (const item of batch) item.done();
  }

  private countResults(batch: readonly Completion[], results: readonly AttemptResult[]): void {
    const deliveries = this.options.metrics?.webhookDeliveries;
    if (!deliveries) return;
    results.forEach((result, index) => {
      const outcome = result.next === null ? 'delivered' : result.next.kind === 'exhausted' ? 'exhausted' : 'failed';
      deliveries.inc({ event: batch[index]!.delivery.event.type, result: outcome });
    });
  }

  /** A result not written as it was is an error: an attempt's outcome was lost or reduced. */
  private reportWriteFailure(failure: AttemptWriteFailure): void {
    const log = this.options.log;
    if (!log) return;
    const err = failure.error.message;
    if (failure.stage === 'batch') {
      log.error({ err, deliveries: failure.deliveryIds }, 'webhook results: batch write failed; writing its results one by one');
    } else if (failure.stage === 'row') {
      log.error({ err, delivery: failure.deliveryId }, 'webhook result could not be written; recorded without receiver text (no response body, error text from the status alone)');
    } else {
      log.error({ err, deliveries: failure.deliveryIds }, 'webhook results could not be written at all; these deliveries are sent again when their lease ends');
    }
  }

  /** The batch's results as the log stores them: receiver text made storable (sanitised) first. */
  private resultsOf(batch: readonly Completion[]): AttemptResult[] {
    return batch.map(({ delivery, attemptedAt, finishedAt, outcome }) => {
      const attemptNumber = delivery.attemptCount + 1;
      const lastError = outcome.ok
        ? null
        : storableText(outcome.errorKind === 'http_status' ? `HTTP ${outcome.statusCode}` : `${outcome.errorKind}: ${outcome.errorMessage ?? ''}`, WEBHOOK_ERROR_TEXT_LIMIT);
      return {
        attemptId: newId(),
        deliveryId: delivery.id,
        leaseToken: delivery.leaseToken,
        subscriptionId: delivery.subscriptionId,
        attemptNumber,
        attemptedAt,
        finishedAt,
        durationMs: outcome.durationMs,
        statusCode: outcome.statusCode,
        errorKind: outcome.errorKind,
        responseBody: outcome.responseBody === null ? null : storedResponseBody(outcome.responseBody),
        lastError,
        // A replayed delivery runs the schedule from its start; its log numbers keep counting.
        next: outcome.ok ? null : afterFailedAttempt(attemptNumber - delivery.attemptBase, this.options.retryScheduleMs, finishedAt),
      };
    });
  }

  private schedule(delayMs: number): void {
    if (this.stopped) return;
    if (this.timer) {
      if (delayMs > 0) return;
      clearTimeout(this.timer);
    }
    this.timer = setTimeout(() => {
      this.timer = null;
      void this.tick();
    }, delayMs);
    this.timer.unref();
  }

  private async tick(): Promise<void> {
    if (this.claiming) {
      // A claim is under way: look again right after it.
      await this.claiming.catch(() => 0);
      this.schedule(0);
      return;
    }
    let claimed = 0;
    this.claiming = this.dispatchOnce();
    try {
      claimed = await this.claiming;
    } catch (error) {
      this.options.log?.warn({ err: (error as Error).message }, 'webhook dispatcher: claim failed, will retry');
    } finally {
      this.claiming = null;
    }
    // A full claim may leave more due rows; otherwise wait for a kick or the next poll.
    this.schedule(claimed > 0 && this.active < this.concurrency ? 0 : this.pollIntervalMs);
  }
}
