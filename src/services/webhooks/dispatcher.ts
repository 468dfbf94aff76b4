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
 */
import { randomUUID } from 'node:crypto';
import type { Clock } from '../../domain/clock.js';
import { decryptSecret, type SecretKeyring } from '../../domain/secrets.js';
import {
  afterFailedAttempt,
  WEBHOOK_RESPONSE_BODY_LIMIT,
  webhookBody,
  webhookHeaders,
  type WebhookEventType,
} from '../../domain/webhook.js';
import type { PickSnapshot } from '../../domain/pick-view.js';
import type { Orm } from '../../persistence/orm.js';
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
  log?: { warn(details: object, message: string): void };
}

export const LEASE_MS = 30_000;
export const CONCURRENCY = 128;
export const PER_SUBSCRIPTION_CONCURRENCY = 16;
/** Due rows looked at per claim (ranked per subscription before taking). */
const CLAIM_WINDOW = 2_000;

interface ClaimedDelivery {
  id: string;
  subscription_id: string;
  attempt_count: number;
  event_id: string;
  event_type: WebhookEventType;
  event_created_at: Date | string;
  payload: { pick: PickSnapshot } | string;
  url: string;
  secret_ciphertext: string;
}

export class WebhookDispatcher {
  private readonly inFlight = new Map<string, number>();
  private readonly running = new Set<Promise<void>>();
  private active = 0;
  private timer: NodeJS.Timeout | null = null;
  private claiming: Promise<number> | null = null;
  private stopped = true;
  private readonly pollIntervalMs: number;
  private readonly leaseMs: number;
  private readonly concurrency: number;
  private readonly perSubscription: number;

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
    if (free <= 0) return 0;
    const claimed = await this.claim(free);
    for (const delivery of claimed) {
      this.active += 1;
      this.inFlight.set(delivery.subscription_id, (this.inFlight.get(delivery.subscription_id) ?? 0) + 1);
      const attempt = this.attempt(delivery)
        .catch((error: Error) => this.options.log?.warn({ err: error.message, delivery: delivery.id }, 'webhook attempt failed to complete; the lease will expire and it will be retried'))
        .finally(() => {
          this.active -= 1;
          const left = (this.inFlight.get(delivery.subscription_id) ?? 1) - 1;
          if (left > 0) this.inFlight.set(delivery.subscription_id, left);
          else this.inFlight.delete(delivery.subscription_id);
          this.running.delete(attempt);
          // A slot is free: more may be due.
          this.kick();
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
    const busy = JSON.stringify(Object.fromEntries(this.inFlight));
    return this.orm.em.fork().execute<ClaimedDelivery[]>(
      `with candidates as (
         select d.id, d.subscription_id,
                row_number() over (partition by d.subscription_id order by d.next_attempt_at, d.id) as rank
           from webhook_deliveries d
           join webhook_subscriptions s on s.id = d.subscription_id and s.status = 'active'
          where d.status = 'pending' and d.next_attempt_at <= ?
            and (d.locked_until is null or d.locked_until <= ?)
          order by d.next_attempt_at, d.id
          limit ${CLAIM_WINDOW}
       ),
       busy as (select key::uuid as subscription_id, value::int as in_flight from jsonb_each_text(?::jsonb)),
       chosen as (
         select c.id from candidates c left join busy b on b.subscription_id = c.subscription_id
          where c.rank <= ? - coalesce(b.in_flight, 0)
          order by c.rank, c.id
          limit ?
       ),
       locked as (
         select d.id from webhook_deliveries d
          where d.id in (select id from chosen) and d.status = 'pending' and (d.locked_until is null or d.locked_until <= ?)
          for update skip locked
       ),
       leased as (
         update webhook_deliveries d set locked_until = ?, lease_token = ?, updated_at = ?
           from locked where d.id = locked.id
         returning d.id, d.subscription_id, d.attempt_count, d.event_id
       )
       select l.id, l.subscription_id, l.attempt_count, l.event_id, e.type as event_type, e.created_at as event_created_at,
              e.payload, s.url, s.secret_ciphertext, ? as lease_token
         from leased l
         join outbox_events e on e.id = l.event_id
         join webhook_subscriptions s on s.id = l.subscription_id`,
      [now, now, busy, this.perSubscription, limit, now, new Date(now.getTime() + this.leaseMs), leaseToken, now, leaseToken],
    );
  }

  private async attempt(delivery: ClaimedDelivery & { lease_token?: string }): Promise<void> {
    const payload = typeof delivery.payload === 'string' ? (JSON.parse(delivery.payload) as { pick: PickSnapshot }) : delivery.payload;
    const body = webhookBody({
      id: delivery.event_id,
      type: delivery.event_type,
      createdAt: new Date(delivery.event_created_at).toISOString(),
      pick: payload.pick,
    });
    const attemptedAt = this.clock.now();
    const secret = decryptSecret(delivery.secret_ciphertext, this.keyring, delivery.subscription_id);
    const headers = webhookHeaders({
      deliveryId: delivery.id,
      eventType: delivery.event_type,
      secret,
      body,
      timestampSeconds: Math.floor(attemptedAt.getTime() / 1000),
    });
    const outcome = await this.sender.send({ url: delivery.url, headers, body });
    await this.complete(delivery, delivery.lease_token!, attemptedAt, outcome);
  }

  private async complete(delivery: ClaimedDelivery, leaseToken: string, attemptedAt: Date, outcome: SendOutcome): Promise<void> {
    const attemptNumber = delivery.attempt_count + 1;
    const finishedAt = this.clock.now();
    const responseBody = outcome.responseBody === null ? null : outcome.responseBody.slice(0, WEBHOOK_RESPONSE_BODY_LIMIT);
    const lastError = outcome.ok ? null : (outcome.errorKind === 'http_status' ? `HTTP ${outcome.statusCode}` : `${outcome.errorKind}: ${outcome.errorMessage ?? ''}`).slice(0, 500);
    await this.orm.em.fork().transactional(async (em) => {
      // The log records every attempt, even one whose lease was lost meanwhile.
      await em.execute(
        `insert into webhook_delivery_attempts (id, delivery_id, attempt_number, attempted_at, duration_ms, status_code, error_kind, response_body)
         select ?, ?, ?, ?, ?, ?, ?, ? where exists (select 1 from webhook_deliveries where id = ?)`,
        [newId(), delivery.id, attemptNumber, attemptedAt, Math.round(outcome.durationMs), outcome.statusCode, outcome.errorKind, responseBody, delivery.id],
      );
      if (outcome.ok) {
        await em.execute(
          `update webhook_deliveries set status = 'succeeded', attempt_count = ?, next_attempt_at = null, locked_until = null, lease_token = null,
                  last_status_code = ?, last_error = null, updated_at = ?
            where id = ? and lease_token = ?`,
          [attemptNumber, outcome.statusCode, finishedAt, delivery.id, leaseToken],
        );
        return;
      }
      const next = afterFailedAttempt(attemptNumber, this.options.retryScheduleMs, finishedAt);
      if (next.kind === 'retry') {
        await em.execute(
          `update webhook_deliveries set attempt_count = ?, next_attempt_at = ?, locked_until = null, lease_token = null,
                  last_status_code = ?, last_error = ?, updated_at = ?
            where id = ? and lease_token = ?`,
          [attemptNumber, next.at, outcome.statusCode, lastError, finishedAt, delivery.id, leaseToken],
        );
        return;
      }
      const failed = await em.execute<{ id: string }[]>(
        `update webhook_deliveries set status = 'failed', attempt_count = ?, next_attempt_at = null, locked_until = null, lease_token = null,
                last_status_code = ?, last_error = ?, updated_at = ?
          where id = ? and lease_token = ? returning id`,
        [attemptNumber, outcome.statusCode, lastError, finishedAt, delivery.id, leaseToken],
      );
      if (failed.length === 0) return;
      // The last retry failed: the subscription is exhausted and its pending deliveries cancelled.
      await em.execute(`update webhook_subscriptions set status = 'exhausted', updated_at = ? where id = ? and status = 'active'`, [
        finishedAt,
        delivery.subscription_id,
      ]);
      await em.execute(
        `update webhook_deliveries set status = 'cancelled', next_attempt_at = null, locked_until = null, lease_token = null, updated_at = ?
          where subscription_id = ? and status = 'pending'`,
        [finishedAt, delivery.subscription_id],
      );
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
