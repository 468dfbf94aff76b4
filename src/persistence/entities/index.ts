import { AccountSchema, DashboardSessionSchema } from './account.js';
import { ApiKeySchema } from './api-key.js';
import { MatchAnalysisSchema } from './match-analysis.js';
import { OutboxEventSchema } from './outbox-event.js';
import { PickSchema } from './pick.js';
import { MonthlyUsageSchema } from './usage.js';
import { WebhookDeliveryAttemptSchema, WebhookDeliverySchema, WebhookSubscriptionSchema } from './webhook.js';

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
