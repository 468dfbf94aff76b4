/**
 * Webhook subscriptions of an API key (spec 4.4, DESIGN 3): create, list, get, update
 * (url, events, reactivation), delete, rotate the secret, and the deliveries log. Secrets are
 * generated here, returned once, and stored encrypted. Another key's subscription is
 * not_found, never forbidden: its existence is not revealed.
 */
import { MINIMUM_TIER } from '../../domain/access.js';
import { TIERS, tierAtLeast } from '../../domain/api-key.js';
import type { Clock } from '../../domain/clock.js';
import { CursorKind, decodeKeysetCursor, encodeKeysetCursor } from '../../domain/cursor.js';
import { DuplicateUrlError, InvalidParameterError, NotFoundError, SubscriptionLimitError } from '../../domain/errors.js';
import { decryptSecret, encryptSecret, needsReencryption, type SecretKeyring } from '../../domain/secrets.js';
import { generateWebhookSecret } from '../../domain/signature.js';
import { checkText } from '../../domain/text.js';
import { MAX_SUBSCRIPTIONS_PER_KEY, parseEventTypes, type WebhookEventType, type WebhookSubscriptionStatus } from '../../domain/webhook.js';
import { isUniqueViolation } from '../../persistence/availability.js';
import type { Em, Orm } from '../../persistence/orm.js';
import { newId } from '../ids.js';
import { isUuid } from '../picks.js';
import type { PickEventMessage } from '../events/outbox-relay.js';
import type { WebhookUrlGuard } from './url-guard.js';

/** Tiers whose keys may receive webhooks (spec section 4). */
const WEBHOOK_TIERS = TIERS.filter((tier) => tierAtLeast(tier, MINIMUM_TIER.webhooks));

export interface WebhookSubscription {
  id: string;
  apiKeyId: string;
  url: string;
  events: WebhookEventType[];
  status: WebhookSubscriptionStatus;
  createdAt: Date;
  updatedAt: Date;
}

export interface SubscriptionWithSecret {
  subscription: WebhookSubscription;
  /** Plaintext: returned on creation and rotation only. */
  secret: string;
}

export interface DeliveryAttempt {
  attemptNumber: number;
  attemptedAt: Date;
  durationMs: number;
  statusCode: number | null;
  errorKind: string | null;
  responseBody: string | null;
}

export interface WebhookDelivery {
  id: string;
  subscriptionId: string;
  eventId: string;
  eventType: WebhookEventType;
  status: 'pending' | 'succeeded' | 'failed' | 'cancelled';
  attemptCount: number;
  nextAttemptAt: Date | null;
  lastStatusCode: number | null;
  lastError: string | null;
  createdAt: Date;
  attempts: DeliveryAttempt[];
}

export interface DeliveryPage {
  nodes: WebhookDelivery[];
  endCursor: string | null;
}

export interface SubscriptionChanges {
  url?: string | null;
  events?: unknown;
  status?: WebhookSubscriptionStatus | null;
}

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
    events: typeof row.events === 'string' ? (JSON.parse(row.events) as WebhookEventType[]) : row.events,
    status: row.status,
    createdAt: new Date(row.created_at),
    updatedAt: new Date(row.updated_at),
  };
}

/** A malformed key id is not found, like a malformed subscription id: it never reaches the database. */
function requireKeyId(apiKeyId: string): string {
  if (!isUuid(apiKeyId)) throw new NotFoundError('No such API key.');
  return apiKeyId;
}

export class WebhookService {
  constructor(
    private readonly orm: Orm,
    private readonly clock: Clock,
    private readonly guard: WebhookUrlGuard,
    private readonly keyring: SecretKeyring,
  ) {}

  async create(apiKeyId: string, input: { url: unknown; events: unknown }): Promise<SubscriptionWithSecret> {
    requireKeyId(apiKeyId);
    const events = parseEventTypes(input.events);
    // The URL parser would silently drop a tab or newline: refuse controls first (src/domain/text.ts).
    if (typeof input.url === 'string') checkText('url', input.url, 'line');
    const url = (await this.guard.check(input.url)).url.href;
    const secret = generateWebhookSecret();
    const id = newId();
    const now = this.clock.now();
    try {
      const subscription = await this.orm.em.fork().transactional(async (em) => {
        // One creation at a time per key, so the count check holds under concurrency.
        const key = await em.execute('select id from api_keys where id = ? for update', [apiKeyId]);
        if (key.length === 0) throw new NotFoundError('No such API key.');
        const existing = await em.execute<{ id: string; url: string }[]>('select id, url from webhook_subscriptions where api_key_id = ?', [apiKeyId]);
        const duplicate = existing.find((row) => row.url === url);
        if (duplicate) throw new DuplicateUrlError(duplicate.id);
        if (existing.length >= MAX_SUBSCRIPTIONS_PER_KEY) throw new SubscriptionLimitError(MAX_SUBSCRIPTIONS_PER_KEY);
        const rows = await em.execute<SubscriptionRow[]>(
          `insert into webhook_subscriptions (id, api_key_id, url, events, secret_ciphertext, status, created_at, updated_at)
           values (?, ?, ?, ?::jsonb, ?, 'active', ?, ?) returning ${COLUMNS}`,
          [id, apiKeyId, url, JSON.stringify(events), encryptSecret(secret, this.keyring, id), now, now],
        );
        return toSubscription(rows[0]!);
      });
      return { subscription, secret };
    } catch (error) {
      if (isUniqueViolation(error)) throw new DuplicateUrlError((await this.findByUrl(apiKeyId, url))?.id ?? 'unknown');
      throw error;
    }
  }

  async list(apiKeyId: string): Promise<WebhookSubscription[]> {
    requireKeyId(apiKeyId);
    const rows = await this.orm.em
      .fork()
      .execute<SubscriptionRow[]>(`select ${COLUMNS} from webhook_subscriptions where api_key_id = ? order by created_at, id`, [apiKeyId]);
    return rows.map(toSubscription);
  }

  async get(apiKeyId: string, id: string): Promise<WebhookSubscription> {
    return this.find(this.orm.em.fork(), apiKeyId, id);
  }

  async update(apiKeyId: string, id: string, changes: SubscriptionChanges): Promise<WebhookSubscription> {
    const events = changes.events == null ? null : parseEventTypes(changes.events);
    if (changes.status != null && changes.status !== 'active') {
      throw new InvalidParameterError('status', 'status can only be set to "active" (to reactivate an exhausted subscription)');
    }
    if (typeof changes.url === 'string') checkText('url', changes.url, 'line');
    const url = changes.url == null ? null : (await this.guard.check(changes.url)).url.href;
    try {
      return await this.orm.em.fork().transactional(async (em) => {
        const current = await this.find(em, apiKeyId, id, true);
        if (url !== null && url !== current.url) {
          const duplicate = await em.execute<{ id: string }[]>('select id from webhook_subscriptions where api_key_id = ? and url = ? and id <> ?', [apiKeyId, url, id]);
          if (duplicate[0]) throw new DuplicateUrlError(duplicate[0].id);
        }
        const rows = await em.execute<SubscriptionRow[]>(
          `update webhook_subscriptions
              set url = ?, events = ?::jsonb, status = ?, updated_at = ?
            where id = ? returning ${COLUMNS}`,
          [url ?? current.url, JSON.stringify(events ?? current.events), changes.status ?? current.status, this.clock.now(), id],
        );
        return toSubscription(rows[0]!);
      });
    } catch (error) {
      if (isUniqueViolation(error) && url) throw new DuplicateUrlError((await this.findByUrl(apiKeyId, url))?.id ?? 'unknown');
      throw error;
    }
  }

  /** Deletes the subscription with its deliveries and their log; pending deliveries are never sent. */
  async delete(apiKeyId: string, id: string): Promise<WebhookSubscription> {
    return this.orm.em.fork().transactional(async (em) => {
      const current = await this.find(em, apiKeyId, id, true);
      await em.execute('delete from webhook_subscriptions where id = ?', [id]);
      return current;
    });
  }

  /** A new secret, effective for every attempt from now on (retries included). */
  async rotateSecret(apiKeyId: string, id: string): Promise<SubscriptionWithSecret> {
    const secret = generateWebhookSecret();
    const subscription = await this.orm.em.fork().transactional(async (em) => {
      await this.find(em, apiKeyId, id, true);
      const rows = await em.execute<SubscriptionRow[]>(
        `update webhook_subscriptions set secret_ciphertext = ?, updated_at = ? where id = ? returning ${COLUMNS}`,
        [encryptSecret(secret, this.keyring, id), this.clock.now(), id],
      );
      return toSubscription(rows[0]!);
    });
    return { subscription, secret };
  }

  /** Newest first, keyset-paginated; each with its attempts, oldest attempt first. */
  async deliveries(apiKeyId: string, id: string, page: { first: number; after?: string | null }): Promise<DeliveryPage> {
    if (!Number.isInteger(page.first) || page.first < 1 || page.first > 100) throw new InvalidParameterError('limit', 'limit must be an integer from 1 to 100');
    const em = this.orm.em.fork();
    await this.find(em, apiKeyId, id);
    const after = page.after == null ? null : decodeKeysetCursor(CursorKind.webhookDeliveries, page.after);
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
      after ? [id, after.at, after.id, page.first + 1] : [id, page.first + 1],
    );
    const pageRows = rows.slice(0, page.first);
    const attempts = pageRows.length
      ? await em.execute<
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
             from webhook_delivery_attempts where delivery_id in (${pageRows.map(() => '?').join(', ')})
            order by attempt_number`,
          pageRows.map((row) => row.id),
        )
      : [];
    const nodes = pageRows.map((row) => ({
      id: row.id,
      subscriptionId: row.subscription_id,
      eventId: row.event_id,
      eventType: row.event_type,
      status: row.status,
      attemptCount: row.attempt_count,
      nextAttemptAt: row.status === 'pending' && row.next_attempt_at ? new Date(row.next_attempt_at) : null,
      lastStatusCode: row.last_status_code,
      lastError: row.last_error,
      createdAt: new Date(row.created_at),
      attempts: attempts
        .filter((attempt) => attempt.delivery_id === row.id)
        .map((attempt) => ({
          attemptNumber: attempt.attempt_number,
          attemptedAt: new Date(attempt.attempted_at),
          durationMs: attempt.duration_ms,
          statusCode: attempt.status_code,
          errorKind: attempt.error_kind,
          responseBody: attempt.response_body,
        })),
    }));
    const last = nodes.at(-1);
    const endCursor =
      rows.length > page.first && last ? encodeKeysetCursor(CursorKind.webhookDeliveries, { at: last.createdAt, id: last.id }) : null;
    return { nodes, endCursor };
  }

  /**
   * Key rotation, step 2: re-encrypts every secret made with an earlier key under the current
   * one (WEBHOOK_SECRET_KEY), so the earlier key can be dropped. Idempotent; returns how many.
   */
  async reencryptSecrets(): Promise<number> {
    const em = this.orm.em.fork();
    const rows = await em.execute<{ id: string; secret_ciphertext: string }[]>('select id, secret_ciphertext from webhook_subscriptions');
    let changed = 0;
    for (const row of rows) {
      if (!needsReencryption(row.secret_ciphertext, this.keyring)) continue;
      const plaintext = decryptSecret(row.secret_ciphertext, this.keyring, row.id);
      await em.execute('update webhook_subscriptions set secret_ciphertext = ? where id = ? and secret_ciphertext = ?', [
        encryptSecret(plaintext, this.keyring, row.id),
        row.id,
        row.secret_ciphertext,
      ]);
      changed += 1;
    }
    return changed;
  }

  /**
   * Runs inside the outbox relay's transaction: one pending delivery per event and matching
   * active subscription, due at once. Idempotent (a re-relayed batch adds nothing). Only
   * subscriptions of keys that are not revoked and whose tier includes webhooks receive
   * events (a revoked key's webhooks stop with it; docs/DASHBOARD.md).
   */
  async fanOut(em: Em, messages: readonly PickEventMessage[]): Promise<number> {
    if (messages.length === 0) return 0;
    const now = this.clock.now();
    const rows = await em.execute<{ id: string }[]>(
      `insert into webhook_deliveries (id, subscription_id, event_id, status, attempt_count, next_attempt_at, created_at, updated_at)
       select gen_random_uuid(), s.id, e.id, 'pending', 0, ?, ?, ?
         from outbox_events e
         join webhook_subscriptions s on s.status = 'active' and s.events @> jsonb_build_array(e.type) and s.created_at <= e.created_at
         join api_keys k on k.id = s.api_key_id and k.revoked_at is null and k.tier in (${WEBHOOK_TIERS.map(() => '?').join(', ')})
        where e.id in (${messages.map(() => '?').join(', ')})
       on conflict (event_id, subscription_id) do nothing
       returning id`,
      [now, now, now, ...WEBHOOK_TIERS, ...messages.map((message) => message.id)],
    );
    return rows.length;
  }

  private async find(em: Em, apiKeyId: string, id: string, forUpdate = false): Promise<WebhookSubscription> {
    if (!isUuid(id) || !isUuid(apiKeyId)) throw new NotFoundError(`No webhook subscription with id ${id}.`);
    const rows = await em.execute<SubscriptionRow[]>(
      `select ${COLUMNS} from webhook_subscriptions where id = ? and api_key_id = ?${forUpdate ? ' for update' : ''}`,
      [id, apiKeyId],
    );
    if (!rows[0]) throw new NotFoundError(`No webhook subscription with id ${id}.`);
    return toSubscription(rows[0]);
  }

  private async findByUrl(apiKeyId: string, url: string): Promise<{ id: string } | null> {
    const rows = await this.orm.em.fork().execute<{ id: string }[]>('select id from webhook_subscriptions where api_key_id = ? and url = ?', [apiKeyId, url]);
    return rows[0] ?? null;
  }
}
