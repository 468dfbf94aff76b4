import { MINIMUM_TIER } from '../../domain/access.js';
import { DELIVERIES_PAGE, describeBound } from '../../domain/bounds.js';
import { InvalidParameterError, NotFoundError } from '../../domain/errors.js';
import { WEBHOOK_DELIVERY_STATUSES, WEBHOOK_EVENT_TYPES, WEBHOOK_SUBSCRIPTION_STATUSES } from '../../domain/webhook.js';
import type { Principal } from '../../domain/principal.js';
import type { DeliveryAttempt, SubscriptionWithSecret, WebhookDelivery, WebhookSubscription } from '../../services/webhooks/subscriptions.js';
import { builder } from '../builder.js';
import { ITEMS_OF_PAGE, pageComplexity } from '../limits.js';
import { upperEnumValues } from './enums.js';
import { PageInfoRef } from './pick.js';

export const WebhookEventTypeEnum = builder.enumType('WebhookEventType', {
  description: 'PICK_PUBLISHED is `pick.published` in REST and in delivery headers; PICK_SETTLED is `pick.settled`.',
  values: { PICK_PUBLISHED: { value: WEBHOOK_EVENT_TYPES[0] }, PICK_SETTLED: { value: WEBHOOK_EVENT_TYPES[1] } },
});
const SubscriptionStatusEnum = builder.enumType('WebhookSubscriptionStatus', { values: upperEnumValues(WEBHOOK_SUBSCRIPTION_STATUSES) });
const DeliveryStatusEnum = builder.enumType('WebhookDeliveryStatus', { values: upperEnumValues(WEBHOOK_DELIVERY_STATUSES) });

/**
 * Subscriptions belong to an API key. A key acts on its own; an admin names the key
 * (apiKeyId). Another key's subscription is not_found: its existence is not revealed.
 */
function ownerOf(principal: Principal, apiKeyId: string | number | null | undefined): string {
  if (principal.kind === 'apiKey') {
    if (apiKeyId != null && String(apiKeyId) !== principal.apiKeyId) throw new NotFoundError('No such API key.');
    return principal.apiKeyId;
  }
  if (apiKeyId == null) throw new InvalidParameterError('apiKeyId', 'Admin calls name the API key whose subscriptions they manage (apiKeyId).');
  return String(apiKeyId);
}

const AttemptRef = builder.objectRef<DeliveryAttempt>('WebhookDeliveryAttempt').implement({
  description: 'One HTTP attempt of a delivery.',
  fields: (t) => ({
    attemptNumber: t.exposeInt('attemptNumber'),
    attemptedAt: t.expose('attemptedAt', { type: 'DateTime' }),
    durationMs: t.exposeInt('durationMs'),
    statusCode: t.exposeInt('statusCode', { nullable: true, description: 'HTTP status of the answer; null when none arrived.' }),
    errorKind: t.exposeString('errorKind', {
      nullable: true,
      description: 'null on success; otherwise http_status, timeout, connection, tls, redirect or invalid_url.',
    }),
    responseBody: t.exposeString('responseBody', { nullable: true, description: 'The first 4 KiB of the answer.' }),
  }),
});

const DeliveryRef = builder.objectRef<WebhookDelivery>('WebhookDelivery').implement({
  description: 'One event to send to one subscription, across its attempts. `id` is the X-Service-Delivery header.',
  fields: (t) => ({
    id: t.exposeID('id'),
    eventId: t.exposeID('eventId', { description: 'The `id` of the delivery body.' }),
    eventType: t.field({ type: WebhookEventTypeEnum, resolve: (delivery) => delivery.eventType }),
    status: t.field({ type: DeliveryStatusEnum, resolve: (delivery) => delivery.status }),
    attemptCount: t.exposeInt('attemptCount'),
    nextAttemptAt: t.field({ type: 'DateTime', nullable: true, resolve: (delivery) => delivery.nextAttemptAt }),
    lastStatusCode: t.exposeInt('lastStatusCode', { nullable: true }),
    lastError: t.exposeString('lastError', { nullable: true }),
    createdAt: t.expose('createdAt', { type: 'DateTime' }),
    // The first attempt and at most 5 retries (WEBHOOK_RETRY_SCHEDULE has exactly 5).
    attempts: t.field({ type: [AttemptRef], complexity: { field: 1, multiplier: 6 }, resolve: (delivery) => delivery.attempts }),
  }),
});

const DeliveryPageRef = builder.objectRef<{ nodes: WebhookDelivery[]; endCursor: string | null }>('WebhookDeliveryConnection').implement({
  fields: (t) => ({
    nodes: t.field({ type: [DeliveryRef], complexity: ITEMS_OF_PAGE, resolve: (page) => page.nodes }),
    pageInfo: t.field({ type: PageInfoRef, resolve: (page) => ({ hasNextPage: page.endCursor !== null, endCursor: page.endCursor }) }),
  }),
});

export const WebhookSubscriptionRef = builder.objectRef<WebhookSubscription>('WebhookSubscription').implement({
  description: 'A webhook endpoint of an API key. The signing secret is shown only on creation and rotation.',
  fields: (t) => ({
    id: t.exposeID('id'),
    url: t.exposeString('url'),
    events: t.field({ type: [WebhookEventTypeEnum], resolve: (subscription) => subscription.events }),
    status: t.field({
      type: SubscriptionStatusEnum,
      description: 'EXHAUSTED after the last retry of a delivery failed; set ACTIVE again to resume.',
      resolve: (subscription) => subscription.status,
    }),
    createdAt: t.expose('createdAt', { type: 'DateTime' }),
    updatedAt: t.expose('updatedAt', { type: 'DateTime' }),
    deliveries: t.field({
      type: DeliveryPageRef,
      description: 'Newest first, with every attempt.',
      complexity: (args) => pageComplexity(args.first, DELIVERIES_PAGE.default, DELIVERIES_PAGE.max),
      args: { first: t.arg.int({ defaultValue: DELIVERIES_PAGE.default, description: `Page size, ${describeBound(DELIVERIES_PAGE)}` }), after: t.arg.string() },
      resolve: (subscription, args, context) =>
        context.services.webhooks.deliveries(subscription.apiKeyId, subscription.id, { first: args.first ?? DELIVERIES_PAGE.default, after: args.after }, 'first'),
    }),
  }),
});

const WithSecretRef = builder.objectRef<SubscriptionWithSecret>('WebhookSubscriptionWithSecret').implement({
  fields: (t) => ({
    subscription: t.field({ type: WebhookSubscriptionRef, resolve: (created) => created.subscription }),
    secret: t.exposeString('secret', { description: 'The HMAC secret. It is stored encrypted and cannot be shown again.' }),
  }),
});

const CreateInput = builder.inputType('CreateWebhookSubscriptionInput', {
  fields: (t) => ({
    url: t.string({ required: true, description: 'https URL of a publicly reachable host.' }),
    events: t.field({ type: [WebhookEventTypeEnum], required: true }),
    apiKeyId: t.id({ description: 'Admin only: the API key the subscription belongs to.' }),
  }),
});

const UpdateInput = builder.inputType('UpdateWebhookSubscriptionInput', {
  fields: (t) => ({
    url: t.string(),
    events: t.field({ type: [WebhookEventTypeEnum] }),
    status: t.field({ type: SubscriptionStatusEnum, description: 'Only ACTIVE: reactivates an exhausted subscription.' }),
  }),
});

const webhookScope = { tier: MINIMUM_TIER.webhooks } as const;

builder.queryFields((t) => ({
  webhookSubscriptions: t.field({
    type: [WebhookSubscriptionRef],
    description: "The calling API key's webhook subscriptions, oldest first (admin: name the key).",
    authScopes: webhookScope,
    args: { apiKeyId: t.arg.id() },
    resolve: (_root, args, context) => context.services.webhooks.list(ownerOf(context.principal, args.apiKeyId)),
  }),
  webhookSubscription: t.field({
    type: WebhookSubscriptionRef,
    authScopes: webhookScope,
    args: { id: t.arg.id({ required: true }), apiKeyId: t.arg.id() },
    resolve: (_root, args, context) => context.services.webhooks.get(ownerOf(context.principal, args.apiKeyId), String(args.id)),
  }),
}));

builder.mutationFields((t) => ({
  createWebhookSubscription: t.field({
    type: WithSecretRef,
    description: 'At most 5 per API key, one per URL (duplicate_url is checked before subscription_limit).',
    authScopes: webhookScope,
    args: { input: t.arg({ type: CreateInput, required: true }) },
    resolve: (_root, { input }, context) =>
      context.services.webhooks.create(ownerOf(context.principal, input.apiKeyId), { url: input.url, events: input.events }),
  }),
  updateWebhookSubscription: t.field({
    type: WebhookSubscriptionRef,
    authScopes: webhookScope,
    args: { id: t.arg.id({ required: true }), input: t.arg({ type: UpdateInput, required: true }), apiKeyId: t.arg.id() },
    resolve: (_root, args, context) =>
      context.services.webhooks.update(ownerOf(context.principal, args.apiKeyId), String(args.id), {
        url: args.input.url,
        events: args.input.events,
        status: args.input.status,
      }),
  }),
  deleteWebhookSubscription: t.field({
    type: WebhookSubscriptionRef,
    description: 'Deletes the subscription, its pending deliveries and its delivery log.',
    authScopes: webhookScope,
    args: { id: t.arg.id({ required: true }), apiKeyId: t.arg.id() },
    resolve: (_root, args, context) => context.services.webhooks.delete(ownerOf(context.principal, args.apiKeyId), String(args.id)),
  }),
  rotateWebhookSecret: t.field({
    type: WithSecretRef,
    description: 'A new secret, used for every attempt from now on (retries included); the old one stops at once.',
    authScopes: webhookScope,
    args: { id: t.arg.id({ required: true }), apiKeyId: t.arg.id() },
    resolve: (_root, args, context) => context.services.webhooks.rotateSecret(ownerOf(context.principal, args.apiKeyId), String(args.id)),
  }),
}));
