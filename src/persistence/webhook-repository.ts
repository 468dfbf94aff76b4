/**
 * Webhook subscriptions and deliveries: every query of webhook_subscriptions and
 * webhook_deliveries except the writing of attempt results (webhook-attempts.ts).
 */
import type { Tier } from '../domain/api-key.js';
import type { WebhookEventType, WebhookSubscriptionStatus } from '../domain/webhook.js';
import type { DeliveryAttempt, WebhookDelivery, WebhookSubscription } from '../domain/webhook-records.js';
import { outboxRecordFromRow, type OutboxEventRecord, type OutboxRow } from './outbox-repository.js';
import type { Em } from './orm.js';
import { jsonOf } from './sql.js';

interface SubscriptionRow {
  id: string;
  api_key_id: string;
  url: string;
  events: WebhookEventType[] | string;
  status: WebhookSubscriptionStatus;
  created_at: Date | string;
  updated_at: Date | string;
}

const COLUMNS = 'id, api_key_id, url, events, status, created_at, updated_at';

function toSubscription(row: SubscriptionRow): WebhookSubscription {
  return {
    id: row.id,
    apiKeyId: row.api_key_id,
    url: row.url,
    events: jsonOf<WebhookEventType[]>(row.events),
    status: row.status,
    createdAt: new Date(row.created_at),
    updatedAt: new Date(row.updated_at),
  };
}

/** The URLs (with ids) of a key's subscriptions. */
export function listSubscriptionUrls(em: Em, apiKeyId: string): Promise<{ id: string; url: string }[]> {
  return em.execute<{ id: string; url: string }[]>('select id, url from webhook_subscriptions where api_key_id = ?', [apiKeyId]);
}

export async function insertSubscription(
  em: Em,
  subscription: { id: string; apiKeyId: string; url: string; events: WebhookEventType[]; secretCiphertext: string; at: Date },
): Promise<WebhookSubscription> {
  const rows = await em.execute<SubscriptionRow[]>(
    `insert into webhook_subscriptions (id, api_key_id, url, events, secret_ciphertext, status, created_at, updated_at)
     values (?, ?, ?, ?::jsonb, ?, 'active', ?, ?) returning ${COLUMNS}`,
    [
      subscription.id,
      subscription.apiKeyId,
      subscription.url,
      JSON.stringify(subscription.events),
      subscription.secretCiphertext,
      subscription.at,
      subscription.at,
    ],
  );
  return toSubscription(rows[0]!);
}

/** A key's subscriptions, oldest first. */
export async function listSubscriptions(em: Em, apiKeyId: string): Promise<WebhookSubscription[]> {
  const rows = await em.execute<SubscriptionRow[]>(`select ${COLUMNS} from webhook_subscriptions where api_key_id = ? order by created_at, id`, [apiKeyId]);
  return rows.map(toSubscription);
}

/** The key's subscription (row-locked with forUpdate), or null. */
export async function findSubscription(em: Em, apiKeyId: string, id: string, forUpdate = false): Promise<WebhookSubscription | null> {
  const rows = await em.execute<SubscriptionRow[]>(
    `select ${COLUMNS} from webhook_subscriptions where id = ? and api_key_id = ?${forUpdate ? ' for update' : ''}`,
    [id, apiKeyId],
  );
  return rows[0] ? toSubscription(rows[0]) : null;
}

/** The id of the key's subscription to `url`, other than `exceptId`, or null. */
export async function findSubscriptionIdByUrl(em: Em, apiKeyId: string, url: string, exceptId?: string): Promise<string | null> {
  const rows =
    exceptId === undefined
      ? await em.execute<{ id: string }[]>('select id from webhook_subscriptions where api_key_id = ? and url = ?', [apiKeyId, url])
      : await em.execute<{ id: string }[]>('select id from webhook_subscriptions where api_key_id = ? and url = ? and id <> ?', [apiKeyId, url, exceptId]);
  return rows[0]?.id ?? null;
}

export async function updateSubscription(
  em: Em,
  id: string,
  values: { url: string; events: WebhookEventType[]; status: WebhookSubscriptionStatus; at: Date },
): Promise<WebhookSubscription> {
  const rows = await em.execute<SubscriptionRow[]>(
    `update webhook_subscriptions
        set url = ?, events = ?::jsonb, status = ?, updated_at = ?
      where id = ? returning ${COLUMNS}`,
    [values.url, JSON.stringify(values.events), values.status, values.at, id],
  );
  return toSubscription(rows[0]!);
}

/** Deletes the subscription; its deliveries and their attempts go with it (on delete cascade). */
export async function deleteSubscription(em: Em, id: string): Promise<void> {
  await em.execute('delete from webhook_subscriptions where id = ?', [id]);
}

/**
 * A new secret; the one it replaces keeps signing (beside it) until `previousExpiresAt`. Both
 * ciphertexts are bound to the subscription id, so the current one moves over unchanged.
 */
export async function rotateSubscriptionSecret(
  em: Em,
  id: string,
  values: { secretCiphertext: string; previousExpiresAt: Date; at: Date },
): Promise<WebhookSubscription> {
  const rows = await em.execute<SubscriptionRow[]>(
    `update webhook_subscriptions
        set previous_secret_ciphertext = secret_ciphertext, previous_secret_expires_at = ?, secret_ciphertext = ?, updated_at = ?
      where id = ? returning ${COLUMNS}`,
    [values.previousExpiresAt, values.secretCiphertext, values.at, id],
  );
  return toSubscription(rows[0]!);
}

/** What an attempt of the subscription needs now: its url and secrets (the previous one only while it still signs). */
export async function findSubscriptionTarget(
  em: Em,
  id: string,
  now: Date,
): Promise<{ url: string; secretCiphertext: string; previousSecretCiphertext: string | null } | null> {
  const rows = await em.execute<{ url: string; secret_ciphertext: string; previous_secret_ciphertext: string | null }[]>(
    `select url, secret_ciphertext,
            case when previous_secret_expires_at > ? then previous_secret_ciphertext end as previous_secret_ciphertext
       from webhook_subscriptions where id = ?`,
    [now, id],
  );
  const row = rows[0];
  return row ? { url: row.url, secretCiphertext: row.secret_ciphertext, previousSecretCiphertext: row.previous_secret_ciphertext } : null;
}

/** Every subscription's encrypted secrets (key rotation). */
export function listSubscriptionSecrets(em: Em): Promise<{ id: string; secret_ciphertext: string; previous_secret_ciphertext: string | null }[]> {
  return em.execute<{ id: string; secret_ciphertext: string; previous_secret_ciphertext: string | null }[]>(
    'select id, secret_ciphertext, previous_secret_ciphertext from webhook_subscriptions',
  );
}

/** Swaps the ciphertext only if it is still `previous` (a concurrent rotation wins). */
export async function reencryptSubscriptionSecret(em: Em, id: string, previous: string, next: string): Promise<void> {
  await em.execute('update webhook_subscriptions set secret_ciphertext = ? where id = ? and secret_ciphertext = ?', [next, id, previous]);
}

/** The same for the secret a rotation replaced. */
export async function reencryptPreviousSubscriptionSecret(em: Em, id: string, previous: string, next: string): Promise<void> {
  await em.execute('update webhook_subscriptions set previous_secret_ciphertext = ? where id = ? and previous_secret_ciphertext = ?', [next, id, previous]);
}

/** The API key of a subscription that belongs to one of the account's keys, or null. */
export async function findSubscriptionKeyOfAccount(em: Em, accountId: string, id: string): Promise<string | null> {
  const rows = await em.execute<{ api_key_id: string }[]>(
    `select s.api_key_id from webhook_subscriptions s join api_keys k on k.id = s.api_key_id
      where s.id = ? and k.account_id = ?`,
    [id, accountId],
  );
  return rows[0]?.api_key_id ?? null;
}

/**
 * Replay: the subscription's failed and cancelled deliveries created at or after `since` become
 * pending again, due at `now`, with the retry schedule counted afresh from their current attempt
 * count (attempt_base); their log keeps every earlier attempt. Returns how many.
 */
export async function requeueFinishedDeliveries(em: Em, subscriptionId: string, since: Date, now: Date): Promise<number> {
  const rows = await em.execute<{ id: string }[]>(
    `update webhook_deliveries
        set status = 'pending', attempt_base = attempt_count, next_attempt_at = ?, locked_until = null, lease_token = null, updated_at = ?
      where subscription_id = ? and status in ('failed', 'cancelled') and created_at >= ?
      returning id`,
    [now, now, subscriptionId, since],
  );
  return rows.length;
}

/** A page of a subscription's deliveries, newest first, after the keyset `after`; `limit` rows at most. */
export async function listDeliveries(
  em: Em,
  subscriptionId: string,
  after: { at: Date; id: string } | null,
  limit: number,
): Promise<Omit<WebhookDelivery, 'attempts'>[]> {
  const rows = await em.execute<
    {
      id: string;
      subscription_id: string;
      event_id: string;
      event_type: WebhookEventType;
      status: WebhookDelivery['status'];
      attempt_count: number;
      next_attempt_at: Date | string | null;
      last_status_code: number | null;
      last_error: string | null;
      created_at: Date | string;
    }[]
  >(
    `select d.id, d.subscription_id, d.event_id, e.type as event_type, d.status, d.attempt_count, d.next_attempt_at,
            d.last_status_code, d.last_error, d.created_at
       from webhook_deliveries d join outbox_events e on e.id = d.event_id
      where d.subscription_id = ? ${after ? 'and (d.created_at, d.id) < (?, ?)' : ''}
      order by d.created_at desc, d.id desc
      limit ?`,
    after ? [subscriptionId, after.at, after.id, limit] : [subscriptionId, limit],
  );
  return rows.map((row) => ({
    id: row.id,
    subscriptionId: row.subscription_id,
    eventId: row.event_id,
    eventType: row.event_type,
    status: row.status,
    attemptCount: row.attempt_count,
    // A finished delivery has no next attempt, whatever the column still holds.
    nextAttemptAt: row.status === 'pending' && row.next_attempt_at ? new Date(row.next_attempt_at) : null,
    lastStatusCode: row.last_status_code,
    lastError: row.last_error,
    createdAt: new Date(row.created_at),
  }));
}

/** The attempts of the given deliveries, oldest attempt first, by delivery id. */
export async function listAttempts(em: Em, deliveryIds: readonly string[]): Promise<Map<string, DeliveryAttempt[]>> {
  const byDelivery = new Map<string, DeliveryAttempt[]>(deliveryIds.map((id) => [id, []]));
  if (deliveryIds.length === 0) return byDelivery;
  const rows = await em.execute<
    {
      delivery_id: string;
      attempt_number: number;
      attempted_at: Date | string;
      duration_ms: number;
      status_code: number | null;
      error_kind: string | null;
      response_body: string | null;
    }[]
  >(
    `select delivery_id, attempt_number, attempted_at, duration_ms, status_code, error_kind, response_body
       from webhook_delivery_attempts where delivery_id in (${deliveryIds.map(() => '?').join(', ')})
      order by attempt_number`,
    [...deliveryIds],
  );
  for (const row of rows) {
    byDelivery.get(row.delivery_id)?.push({
      attemptNumber: row.attempt_number,
      attemptedAt: new Date(row.attempted_at),
      durationMs: row.duration_ms,
      statusCode: row.status_code,
      errorKind: row.error_kind,
      responseBody: row.response_body,
    });
  }
  return byDelivery;
}

/**
 * One pending delivery per event and matching active subscription, due at `now`: subscriptions
 * created before the event, of keys not revoked and of one of `tiers`. Idempotent (on conflict
 * do nothing); returns how many were added.
 */
export async function insertDeliveriesForEvents(em: Em, eventIds: readonly string[], tiers: readonly Tier[], now: Date): Promise<number> {
  if (eventIds.length === 0) return 0;
  const rows = await em.execute<{ id: string }[]>(
    `insert into webhook_deliveries (id, subscription_id, event_id, status, attempt_count, next_attempt_at, created_at, updated_at)
     select gen_random_uuid(), s.id, e.id, 'pending', 0, ?, ?, ?
       from outbox_events e
       join webhook_subscriptions s on s.status = 'active' and s.events @> jsonb_build_array(e.type) and s.created_at <= e.created_at
       join api_keys k on k.id = s.api_key_id and k.revoked_at is null and k.tier in (${tiers.map(() => '?').join(', ')})
      where e.id in (${eventIds.map(() => '?').join(', ')})
     on conflict (event_id, subscription_id) do nothing
     returning id`,
    [now, now, now, ...tiers, ...eventIds],
  );
  return rows.length;
}

/** A delivery leased to this dispatcher, with what its attempt needs. */
export interface ClaimedDelivery {
  id: string;
  leaseToken: string;
  subscriptionId: string;
  attemptCount: number;
  /** The attempt count the retry schedule counts from (a replay sets it). */
  attemptBase: number;
  event: OutboxEventRecord;
  url: string;
  secretCiphertext: string;
  /** The secret a rotation replaced, while it still signs; null otherwise. */
  previousSecretCiphertext: string | null;
}

interface ClaimedRow {
  id: string;
  lease_token: string;
  subscription_id: string;
  attempt_count: number;
  event_id: string;
  event_type: OutboxRow['type'];
  event_seq: string | number;
  event_created_at: Date | string;
  payload: OutboxRow['payload'];
  url: string;
  secret_ciphertext: string;
  previous_secret_ciphertext: string | null;
  attempt_base: number;
}

/**
 * Claims due deliveries in one statement: pending rows whose next attempt is due and whose
 * lease is free or expired, looked at `window` at a time, ranked per subscription and taken
 * round-robin (at most `perSubscription` minus what `busy` says is in flight per subscription),
 * locked with FOR UPDATE SKIP LOCKED and leased until `leaseUntil` with `leaseToken`.
 */
export async function claimDueDeliveries(
  em: Em,
  claim: {
    now: Date;
    leaseUntil: Date;
    leaseToken: string;
    limit: number;
    window: number;
    perSubscription: number;
    busy: ReadonlyMap<string, number>;
  },
): Promise<ClaimedDelivery[]> {
  const { now } = claim;
  const rows = await em.execute<ClaimedRow[]>(
    `with due as (
       select d.id, d.subscription_id, d.next_attempt_at
         from webhook_deliveries d
         join webhook_subscriptions s on s.id = d.subscription_id and s.status = 'active'
        where d.status = 'pending' and d.next_attempt_at <= ?
          and (d.locked_until is null or d.locked_until <= ?)
        order by d.next_attempt_at, d.id
        limit ${Math.trunc(claim.window)}
     ),
     candidates as (
       -- Ranked after the limit: a backlog does not make every claim rank all of it.
       select id, subscription_id, row_number() over (partition by subscription_id order by next_attempt_at, id) as rank from due
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
       returning d.id, d.subscription_id, d.attempt_count, d.attempt_base, d.event_id
     )
     select l.id, l.subscription_id, l.attempt_count, l.attempt_base, l.event_id, e.seq as event_seq, e.type as event_type, e.created_at as event_created_at,
            e.payload, s.url, s.secret_ciphertext, ? as lease_token,
            case when s.previous_secret_expires_at > ? then s.previous_secret_ciphertext end as previous_secret_ciphertext
       from leased l
       join outbox_events e on e.id = l.event_id
       join webhook_subscriptions s on s.id = l.subscription_id`,
    [
      now,
      now,
      JSON.stringify(Object.fromEntries(claim.busy)),
      claim.perSubscription,
      claim.limit,
      now,
      claim.leaseUntil,
      claim.leaseToken,
      now,
      claim.leaseToken,
      now,
    ],
  );
  return rows.map((row) => ({
    id: row.id,
    leaseToken: row.lease_token,
    subscriptionId: row.subscription_id,
    attemptCount: row.attempt_count,
    attemptBase: row.attempt_base,
    event: outboxRecordFromRow({ id: row.event_id, seq: row.event_seq, type: row.event_type, payload: row.payload, created_at: row.event_created_at }),
    url: row.url,
    secretCiphertext: row.secret_ciphertext,
    previousSecretCiphertext: row.previous_secret_ciphertext,
  }));
}

/** Deletes one batch of deliveries finished before `cutoff` (their attempts cascade); returns how many went. Pending ones are never touched. */
export async function deleteFinishedDeliveries(em: Em, cutoff: Date, batch: number): Promise<number> {
  const deleted = await em.execute<{ id: string }[]>(
    `delete from webhook_deliveries where id in (
       select id from webhook_deliveries
        where status <> 'pending' and updated_at < ?
        order by updated_at limit ? for update skip locked)
     returning id`,
    [cutoff, batch],
  );
  return deleted.length;
}
