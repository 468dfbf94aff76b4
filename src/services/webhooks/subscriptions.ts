/**
 * Webhook subscriptions of an API key (docs/API.md, "Webhooks"; docs/WEBHOOKS.md): create, list, get, update
 * (url, events, reactivation), delete, rotate the secret, and the deliveries log. Secrets are
 * generated here, returned once, and stored encrypted. Another key's subscription is
 * not_found, never forbidden: its existence is not revealed.
 */
import { MINIMUM_TIER } from '../../domain/access.js';
import { TIERS, tierAtLeast } from '../../domain/api-key.js';
import type { Clock } from '../../domain/clock.js';
import { CursorKind, decodeKeysetCursor, encodeKeysetCursor } from '../../domain/cursor.js';
import { DuplicateUrlError, InvalidParameterError, NotFoundError, SubscriptionLimitError, TierUpgradeRequiredError } from '../../domain/errors.js';
import type { Principal } from '../../domain/principal.js';
import { decryptSecret, encryptSecret, needsReencryption, type SecretKeyring } from '../../domain/secrets.js';
import { generateWebhookSecret } from '../../domain/signature.js';
import { checkText } from '../../domain/text.js';
import { parseIsoTimestamp } from '../../domain/time.js';
import {
  MAX_SUBSCRIPTIONS_PER_KEY,
  parseEventTypes,
  previousSecretExpiry,
  sampleWebhookPick,
  storableText,
  storedResponseBody,
  WEBHOOK_ERROR_TEXT_LIMIT,
  WEBHOOK_TEST_EVENT_TYPE,
  WEBHOOK_TIMEOUT_MS,
  WEBHOOK_USER_AGENT,
  webhookBody,
  webhookHeaders,
  type WebhookSubscriptionStatus,
} from '../../domain/webhook.js';
import type { WebhookDelivery, WebhookSubscription } from '../../domain/webhook-records.js';
import { WEBHOOK_REPLAY_RESULT } from '../../domain/webhook-shape.js';
import type { Static } from 'typebox';
import { lockApiKey } from '../../persistence/api-keys-repository.js';
import { isUniqueViolation } from '../../persistence/availability.js';
import type { Em, Orm } from '../../persistence/orm.js';
import {
  deleteSubscription,
  findSubscription,
  findSubscriptionIdByUrl,
  findSubscriptionKeyOfAccount,
  findSubscriptionTarget,
  insertDeliveriesForEvents,
  insertSubscription,
  listAttempts,
  listDeliveries,
  listSubscriptions,
  listSubscriptionSecrets,
  listSubscriptionUrls,
  reencryptPreviousSubscriptionSecret,
  reencryptSubscriptionSecret,
  requeueFinishedDeliveries,
  rotateSubscriptionSecret,
  updateSubscription,
} from '../../persistence/webhook-repository.js';
import { newId } from '../ids.js';
import { isUuid } from '../../domain/uuid.js';
import type { PickEventMessage } from '../events/outbox-relay.js';
import { LOG_RETENTION_DAYS } from '../retention.js';
import { WebhookSender, type SendErrorKind } from './http-sender.js';
import type { WebhookUrlGuard } from './url-guard.js';

/** Tiers whose keys may receive webhooks (docs/API.md, "Authentication and tiers"). */
const WEBHOOK_TIERS = TIERS.filter((tier) => tierAtLeast(tier, MINIMUM_TIER.webhooks));

export type { DeliveryAttempt, WebhookDelivery, WebhookSubscription } from '../../domain/webhook-records.js';

export interface SubscriptionWithSecret {
  subscription: WebhookSubscription;
  /** Plaintext: returned on creation and rotation only. */
  secret: string;
}

export interface DeliveryPage {
  nodes: WebhookDelivery[];
  endCursor: string | null;
}

/** The outcome of a test delivery (one attempt, never retried, not in the deliveries log). */
export interface WebhookTestResult {
  /** X-Service-Delivery and webhook-id of the test. */
  deliveryId: string;
  /** A test is always this type (its declaration, WEBHOOK_TEST_RESULT, documents only it). */
  eventType: typeof WEBHOOK_TEST_EVENT_TYPE;
  succeeded: boolean;
  statusCode: number | null;
  durationMs: number;
  errorKind: SendErrorKind | null;
  /** Why it failed (receiver text sanitised as in the log); null on success. */
  error: string | null;
  /** The first 4 KiB of the answer, as the log would store it. */
  responseBody: string | null;
}

/** How many deliveries a replay queued again, since when (src/domain/webhook-shape.ts). */
export type ReplayResult = Static<typeof WEBHOOK_REPLAY_RESULT>;

/** One send, one connection: the test endpoint makes a single attempt and keeps nothing open. */
export type TestSenderFactory = () => Pick<WebhookSender, 'send' | 'close'>;

export interface SubscriptionChanges {
  url?: string | null;
  events?: unknown;
  status?: WebhookSubscriptionStatus | null;
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
    private readonly testSender: TestSenderFactory = () => new WebhookSender({ guard, timeoutMs: WEBHOOK_TIMEOUT_MS, userAgent: WEBHOOK_USER_AGENT }),
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
        if (!(await lockApiKey(em, apiKeyId))) throw new NotFoundError('No such API key.');
        const existing = await listSubscriptionUrls(em, apiKeyId);
        const duplicate = existing.find((row) => row.url === url);
        if (duplicate) throw new DuplicateUrlError(duplicate.id);
        if (existing.length >= MAX_SUBSCRIPTIONS_PER_KEY) throw new SubscriptionLimitError(MAX_SUBSCRIPTIONS_PER_KEY);
        return insertSubscription(em, { id, apiKeyId, url, events, secretCiphertext: encryptSecret(secret, this.keyring, id), at: now });
      });
      return { subscription, secret };
    } catch (error) {
      if (isUniqueViolation(error)) throw new DuplicateUrlError((await this.findByUrl(apiKeyId, url))?.id ?? 'unknown');
      throw error;
    }
  }

  async list(apiKeyId: string): Promise<WebhookSubscription[]> {
    requireKeyId(apiKeyId);
    return listSubscriptions(this.orm.em.fork(), apiKeyId);
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
          const duplicate = await findSubscriptionIdByUrl(em, apiKeyId, url, id);
          if (duplicate) throw new DuplicateUrlError(duplicate);
        }
        return updateSubscription(em, id, {
          url: url ?? current.url,
          events: events ?? current.events,
          status: changes.status ?? current.status,
          at: this.clock.now(),
        });
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
      await deleteSubscription(em, id);
      return current;
    });
  }

  /**
   * A new secret, effective for every attempt from now on (retries included). The secret it
   * replaces keeps signing beside it in webhook-signature for WEBHOOK_SECRET_OVERLAP_MS (a
   * second rotation within that time drops the older one: only the last replaced secret overlaps).
   */
  async rotateSecret(apiKeyId: string, id: string): Promise<SubscriptionWithSecret> {
    const secret = generateWebhookSecret();
    const subscription = await this.orm.em.fork().transactional(async (em) => {
      await this.find(em, apiKeyId, id, true);
      const now = this.clock.now();
      return rotateSubscriptionSecret(em, id, { secretCiphertext: encryptSecret(secret, this.keyring, id), previousExpiresAt: previousSecretExpiry(now), at: now });
    });
    return { subscription, secret };
  }

  /**
   * Sends a signed sample `pick.published` (body `"test": true`, header X-Service-Test: true) to
   * the subscription's url now, whatever its status, and answers the attempt's outcome. One
   * attempt: never retried, not written to the deliveries log.
   */
  async sendTest(apiKeyId: string, id: string): Promise<WebhookTestResult> {
    const em = this.orm.em.fork();
    await this.find(em, apiKeyId, id);
    const now = this.clock.now();
    const target = await findSubscriptionTarget(em, id, now);
    if (!target) throw new NotFoundError(`No webhook subscription with id ${id}.`);
    const deliveryId = newId();
    const body = webhookBody({ id: newId(), type: WEBHOOK_TEST_EVENT_TYPE, createdAt: now.toISOString(), pick: sampleWebhookPick(newId(), now) }, { test: true });
    const headers = webhookHeaders({
      deliveryId,
      eventType: WEBHOOK_TEST_EVENT_TYPE,
      secret: decryptSecret(target.secretCiphertext, this.keyring, id),
      previousSecret: target.previousSecretCiphertext === null ? null : decryptSecret(target.previousSecretCiphertext, this.keyring, id),
      body,
      timestampSeconds: Math.floor(now.getTime() / 1000),
      test: true,
    });
    const sender = this.testSender();
    let outcome;
    try {
      outcome = await sender.send({ url: target.url, headers, body });
    } finally {
      await sender.close();
    }
    const error = outcome.ok
      ? null
      : storableText(outcome.errorKind === 'http_status' ? `HTTP ${outcome.statusCode}` : `${outcome.errorKind}: ${outcome.errorMessage ?? ''}`, WEBHOOK_ERROR_TEXT_LIMIT);
    return {
      deliveryId,
      eventType: WEBHOOK_TEST_EVENT_TYPE,
      succeeded: outcome.ok,
      statusCode: outcome.statusCode,
      durationMs: outcome.durationMs,
      errorKind: outcome.errorKind,
      error,
      responseBody: outcome.responseBody === null ? null : storedResponseBody(outcome.responseBody),
    };
  }

  /**
   * Svix's "recover": the subscription's failed and cancelled deliveries created since `since`
   * are queued again (due now, the retry schedule from its start). `since` must lie within the
   * log retention (older deliveries may already be gone); an exhausted subscription's replayed
   * deliveries wait until it is reactivated.
   */
  async replay(apiKeyId: string, id: string, rawSince: unknown): Promise<ReplayResult> {
    const since = typeof rawSince === 'string' ? parseIsoTimestamp(rawSince) : null;
    if (!since) throw new InvalidParameterError('since', 'since must be an ISO 8601 timestamp with a time zone, e.g. 2026-11-22T18:00:00Z.');
    const now = this.clock.now();
    const earliest = new Date(now.getTime() - LOG_RETENTION_DAYS * 24 * 60 * 60 * 1000);
    if (since < earliest) {
      throw new InvalidParameterError('since', `since must be within the last ${LOG_RETENTION_DAYS} days (the deliveries log retention), i.e. not before ${earliest.toISOString()}.`);
    }
    return this.orm.em.fork().transactional(async (em) => {
      await this.find(em, apiKeyId, id, true);
      return { queued: await requeueFinishedDeliveries(em, id, since, now), since };
    });
  }

  /**
   * The API key whose subscriptions a caller manages: its own key, the key an admin names, or
   * (dashboard) a key of the signed-in account, of a tier with webhooks. Another owner's key is
   * not_found.
   */
  async ownerKey(
    principal: Principal,
    apiKeyId: string | null | undefined,
    accountKey: (accountId: string, apiKeyId: string) => Promise<{ id: string; revokedAt: Date | null }>,
  ): Promise<string> {
    if (principal.kind === 'apiKey') {
      if (apiKeyId != null && apiKeyId !== principal.apiKeyId) throw new NotFoundError('No such API key.');
      return principal.apiKeyId;
    }
    if (apiKeyId == null) throw new InvalidParameterError('apiKeyId', 'Name the API key whose subscriptions you manage (apiKeyId).');
    if (principal.kind === 'account') {
      if (!WEBHOOK_TIERS.includes(principal.tier)) throw new TierUpgradeRequiredError(MINIMUM_TIER.webhooks);
      const key = await accountKey(principal.accountId, apiKeyId);
      if (key.revokedAt !== null) throw new InvalidParameterError('apiKeyId', 'This API key is revoked; its webhooks receive nothing.');
      return key.id;
    }
    return apiKeyId;
  }

  /** The key of a subscription of the signed-in account's keys (dashboard); another account's is not_found. */
  async accountSubscriptionKey(principal: Extract<Principal, { kind: 'account' }>, id: string): Promise<string> {
    if (!WEBHOOK_TIERS.includes(principal.tier)) throw new TierUpgradeRequiredError(MINIMUM_TIER.webhooks);
    const apiKeyId = isUuid(id) ? await findSubscriptionKeyOfAccount(this.orm.em.fork(), principal.accountId, id) : null;
    if (!apiKeyId) throw new NotFoundError(`No webhook subscription with id ${id}.`);
    return apiKeyId;
  }

  /** Newest first, keyset-paginated; each with its attempts, oldest attempt first. */
  async deliveries(apiKeyId: string, id: string, page: { first: number; after?: string | null }): Promise<DeliveryPage> {
    const em = this.orm.em.fork();
    await this.find(em, apiKeyId, id);
    const after = page.after == null ? null : decodeKeysetCursor(CursorKind.webhookDeliveries, page.after);
    const rows = await listDeliveries(em, id, after, page.first + 1);
    const pageRows = rows.slice(0, page.first);
    const attempts = await listAttempts(em, pageRows.map((row) => row.id));
    const nodes: WebhookDelivery[] = pageRows.map((row) => ({ ...row, attempts: attempts.get(row.id) ?? [] }));
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
    const rows = await listSubscriptionSecrets(em);
    let changed = 0;
    for (const row of rows) {
      if (needsReencryption(row.secret_ciphertext, this.keyring)) {
        const plaintext = decryptSecret(row.secret_ciphertext, this.keyring, row.id);
        await reencryptSubscriptionSecret(em, row.id, row.secret_ciphertext, encryptSecret(plaintext, this.keyring, row.id));
        changed += 1;
      }
      // The secret a rotation replaced is encrypted the same way and must not outlive the old key either.
      const previous = row.previous_secret_ciphertext;
      if (previous !== null && needsReencryption(previous, this.keyring)) {
        const plaintext = decryptSecret(previous, this.keyring, row.id);
        await reencryptPreviousSubscriptionSecret(em, row.id, previous, encryptSecret(plaintext, this.keyring, row.id));
      }
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
    return insertDeliveriesForEvents(
      em,
      messages.map((message) => message.id),
      WEBHOOK_TIERS,
      this.clock.now(),
    );
  }

  private async find(em: Em, apiKeyId: string, id: string, forUpdate = false): Promise<WebhookSubscription> {
    if (!isUuid(id) || !isUuid(apiKeyId)) throw new NotFoundError(`No webhook subscription with id ${id}.`);
    const subscription = await findSubscription(em, apiKeyId, id, forUpdate);
    if (!subscription) throw new NotFoundError(`No webhook subscription with id ${id}.`);
    return subscription;
  }

  private async findByUrl(apiKeyId: string, url: string): Promise<{ id: string } | null> {
    const id = await findSubscriptionIdByUrl(this.orm.em.fork(), apiKeyId, url);
    return id === null ? null : { id };
  }
}
