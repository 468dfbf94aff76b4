import { AccountSchema, DashboardSessionSchema } from './account.js';
import { ApiKeySchema } from './api-key.js';
import { MatchAnalysisSchema } from './match-analysis.js';
import { OutboxEventSchema } from './outbox-event.js';
import { PickSchema } from './pick.js';
import { MonthlyUsageSchema } from './usage.js';
import { WebhookDeliveryAttemptSchema, WebhookDeliverySchema, WebhookSubscriptionSchema } from './webhook.js';

/**
 * Every table with an entity. Some are never queried through the ORM - webhook subscriptions,
 * deliveries and attempts, monthly usage, dashboard sessions: their repositories use SQL - and
 * are kept on purpose: they describe their tables for test/persistence/schema-drift.test.ts,
 * which fails when an entity and the migrations disagree.
 */
export const ENTITIES = [
  PickSchema,
  MatchAnalysisSchema,
  ApiKeySchema,
  OutboxEventSchema,
  WebhookSubscriptionSchema,
  WebhookDeliverySchema,
  WebhookDeliveryAttemptSchema,
  MonthlyUsageSchema,
  AccountSchema,
  DashboardSessionSchema,
];
