import { defineEntity, p } from '@mikro-orm/core';
import type { EventType } from './outbox-event.js';

import {
  WEBHOOK_DELIVERY_STATUSES,
  WEBHOOK_SUBSCRIPTION_STATUSES,
  type WebhookDeliveryStatus,
  type WebhookSubscriptionStatus,
} from '../../domain/webhook.js';
import { statusIn } from '../sql.js';

export type { WebhookDeliveryStatus, WebhookSubscriptionStatus };

/** A customer's webhook endpoint. The HMAC secret is stored encrypted, never in clear. */
export const WebhookSubscriptionSchema = defineEntity({
  name: 'WebhookSubscription',
  tableName: 'webhook_subscriptions',
  properties: {
    id: p.uuid().primary(),
    apiKeyId: p.uuid(),
    url: p.text(),
    events: p.json<EventType[]>(),
    secretCiphertext: p.text(),
    /** The secret a rotation replaced, still signing beside the new one until previousSecretExpiresAt. */
    previousSecretCiphertext: p.text().nullable(),
    previousSecretExpiresAt: p.datetime().nullable(),
    status: p.text().$type<WebhookSubscriptionStatus>(),
    createdAt: p.datetime(),
    updatedAt: p.datetime(),
  },
  uniques: [{ name: 'webhook_subscriptions_key_url_unique', properties: ['apiKeyId', 'url'] }],
  indexes: [{ name: 'webhook_subscriptions_api_key_idx', properties: ['apiKeyId', 'createdAt'] }],
  checks: [{ name: 'webhook_subscriptions_status_check', expression: statusIn(WEBHOOK_SUBSCRIPTION_STATUSES) }],
});
export class WebhookSubscriptionEntity extends WebhookSubscriptionSchema.class {}
WebhookSubscriptionSchema.setClass(WebhookSubscriptionEntity);

/** One event to send to one subscription, across all of its attempts (X-Service-Delivery = id). */
export const WebhookDeliverySchema = defineEntity({
  name: 'WebhookDelivery',
  tableName: 'webhook_deliveries',
  properties: {
    id: p.uuid().primary(),
    subscriptionId: p.uuid(),
    eventId: p.uuid(),
    status: p.text().$type<WebhookDeliveryStatus>(),
    attemptCount: p.integer().default(0),
    /** attemptCount when the delivery was last replayed: the retry schedule counts from here. */
    attemptBase: p.integer().default(0),
    nextAttemptAt: p.datetime().nullable(),
    lockedUntil: p.datetime().nullable(),
    leaseToken: p.uuid().nullable(),
    lastStatusCode: p.integer().nullable(),
    lastError: p.text().nullable(),
    createdAt: p.datetime(),
    updatedAt: p.datetime(),
  },
  uniques: [{ name: 'webhook_deliveries_event_subscription_unique', properties: ['eventId', 'subscriptionId'] }],
  indexes: [
    { name: 'webhook_deliveries_due_idx', properties: ['nextAttemptAt'], where: "status = 'pending'" },
    { name: 'webhook_deliveries_subscription_idx', columns: [{ name: 'subscription_id' }, { name: 'created_at', sort: 'desc' }] },
    // Log retention (src/services/retention.ts): finished deliveries by age.
    { name: 'webhook_deliveries_finished_idx', properties: ['updatedAt'], where: "status <> 'pending'" },
  ],
  checks: [{ name: 'webhook_deliveries_status_check', expression: statusIn(WEBHOOK_DELIVERY_STATUSES) }],
});
export class WebhookDeliveryEntity extends WebhookDeliverySchema.class {}
WebhookDeliverySchema.setClass(WebhookDeliveryEntity);

/** The log of every attempt: kept for at least 30 days. */
export const WebhookDeliveryAttemptSchema = defineEntity({
  name: 'WebhookDeliveryAttempt',
  tableName: 'webhook_delivery_attempts',
  properties: {
    id: p.uuid().primary(),
    deliveryId: p.uuid(),
    attemptNumber: p.integer(),
    attemptedAt: p.datetime(),
    durationMs: p.integer(),
    statusCode: p.integer().nullable(),
    errorKind: p.text().nullable(),
    responseBody: p.text().nullable(),
  },
  indexes: [
    { name: 'webhook_delivery_attempts_delivery_idx', properties: ['deliveryId', 'attemptNumber'] },
    { name: 'webhook_delivery_attempts_attempted_at_idx', properties: ['attemptedAt'] },
  ],
});
export class WebhookDeliveryAttemptEntity extends WebhookDeliveryAttemptSchema.class {}
WebhookDeliveryAttemptSchema.setClass(WebhookDeliveryAttemptEntity);
