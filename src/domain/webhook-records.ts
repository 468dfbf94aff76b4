/**
 * Webhook subscriptions and deliveries as services return them (and GraphQL exposes them):
 * plain records, never ORM entities.
 */
import type { WebhookDeliveryStatus, WebhookEventType, WebhookSubscriptionStatus } from './webhook.js';

export interface WebhookSubscription {
  id: string;
  apiKeyId: string;
  url: string;
  events: WebhookEventType[];
  status: WebhookSubscriptionStatus;
  createdAt: Date;
  updatedAt: Date;
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
  status: WebhookDeliveryStatus;
  attemptCount: number;
  nextAttemptAt: Date | null;
  lastStatusCode: number | null;
  lastError: string | null;
  createdAt: Date;
  attempts: DeliveryAttempt[];
}
