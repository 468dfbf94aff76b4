import { MINIMUM_TIER } from '../../domain/access.js';
import { DELIVERIES_PAGE } from '../../domain/bounds.js';
import { boundedInt } from '../argument-guard.js';
import { NotFoundError } from '../../domain/errors.js';
import { WEBHOOK_DELIVERY_STATUSES, WEBHOOK_EVENT_TYPES, WEBHOOK_SUBSCRIPTION_STATUSES } from '../../domain/webhook.js';
import type {
  DeliveryAttempt,
  ReplayResult,
  SubscriptionWithSecret,
  WebhookDelivery,
  WebhookSubscription,
  WebhookTestResult,
} from '../../services/webhooks/subscriptions.js';
import { builder } from '../builder.js';
import type { Context } from '../context.js';
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
 * (apiKeyId); a dashboard session names one of its account's keys to create, and acts on
 * its keys' subscriptions by id. Another owner's subscription is not_found: its existence is
 * not revealed.
 */
function ownerOf(context: Context, apiKeyId: string | number | null | undefined): Promise<string> {
  return context.services.webhooks.ownerKey(context.principal, apiKeyId == null ? null : String(apiKeyId), (accountId, id) =>
    context.services.apiKeys.getForAccount(accountId, id),
  );
}

/** The key owning subscription `id` as the caller may see it (see ownerOf). */
function ownerOfSubscription(context: Context, id: string, apiKeyId: string | number | null | undefined): Promise<string> {
  const { principal } = context;
  if (principal.kind !== 'account') return ownerOf(context, apiKeyId);
  return context.services.webhooks.accountSubscriptionKey(principal, id).then((owner) => {
    if (apiKeyId != null && String(apiKeyId) !== owner) throw new NotFoundError(`No webhook subscription with id ${id}.`);
    return owner;
  });
}

/** API keys of Growth and up, the admin, and (dashboard) signed-in accounts, whose tier the resolvers check. */
const webhookScope = (_parent: unknown, _args: unknown, context: Context) =>
  context.principal.kind === 'account' ? { account: true } : { tier: MINIMUM_TIER.webhooks };

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
    // Cost estimate: the first attempt and at most 5 retries (WEBHOOK_RETRY_SCHEDULE has exactly 5); each replay adds at most as many again.
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
      complexity: (args) => pageComplexity(args.first, DELIVERIES_PAGE),
      args: { first: boundedInt(t.arg, DELIVERIES_PAGE, 'Page size,'), after: t.arg.string() },
      resolve: (subscription, args, context) =>
        context.services.webhooks.deliveries(subscription.apiKeyId, subscription.id, { first: args.first ?? DELIVERIES_PAGE.default, after: args.after }),
    }),
  }),
});

const WithSecretRef = builder.objectRef<SubscriptionWithSecret>('WebhookSubscriptionWithSecret').implement({
  fields: (t) => ({
    subscription: t.field({ type: WebhookSubscriptionRef, resolve: (created) => created.subscription }),
    secret: t.exposeString('secret', { description: 'The HMAC secret. It is stored encrypted and cannot be shown again.' }),
  }),
});

const TestResultRef = builder.objectRef<WebhookTestResult>('WebhookTestResult').implement({
  description: 'The one attempt of a test delivery.',
  fields: (t) => ({
    deliveryId: t.exposeID('deliveryId', { description: 'X-Service-Delivery and webhook-id of the test.' }),
    eventType: t.field({ type: WebhookEventTypeEnum, resolve: (result) => result.eventType }),
    succeeded: t.exposeBoolean('succeeded', { description: 'A 2xx arrived within 10 s.' }),
    statusCode: t.exposeInt('statusCode', { nullable: true, description: 'HTTP status of the answer; null when none arrived.' }),
    durationMs: t.exposeInt('durationMs'),
    errorKind: t.exposeString('errorKind', {
      nullable: true,
      description: 'null on success; otherwise http_status, timeout, connection, tls, redirect or invalid_url.',
    }),
    error: t.exposeString('error', { nullable: true, description: 'What went wrong, as lastError of a delivery says it.' }),
    responseBody: t.exposeString('responseBody', { nullable: true, description: 'The first 4 KiB of the answer.' }),
  }),
});

const ReplayResultRef = builder.objectRef<ReplayResult>('WebhookReplayResult').implement({
  fields: (t) => ({
    queued: t.exposeInt('queued', { description: 'How many failed or cancelled deliveries were queued again.' }),
    since: t.expose('since', { type: 'DateTime' }),
  }),
});

const CreateInput = builder.inputType('CreateWebhookSubscriptionInput', {
  fields: (t) => ({
    url: t.string({ required: true, description: 'https URL of a publicly reachable host.' }),
    events: t.field({ type: [WebhookEventTypeEnum], required: true }),
    apiKeyId: t.id({ description: 'Admin, or a dashboard session (one of its keys): the API key the subscription belongs to.' }),
  }),
});

const UpdateInput = builder.inputType('UpdateWebhookSubscriptionInput', {
  fields: (t) => ({
    url: t.string(),
    events: t.field({ type: [WebhookEventTypeEnum] }),
    status: t.field({ type: SubscriptionStatusEnum, description: 'Only ACTIVE: reactivates an exhausted subscription.' }),
  }),
});

builder.queryFields((t) => ({
  webhookSubscriptions: t.field({
    type: [WebhookSubscriptionRef],
    description: "The calling API key's webhook subscriptions, oldest first (admin: name the key).",
    authScopes: webhookScope,
    args: { apiKeyId: t.arg.id() },
    resolve: async (_root, args, context) => context.services.webhooks.list(await ownerOf(context, args.apiKeyId)),
  }),
  webhookSubscription: t.field({
    type: WebhookSubscriptionRef,
    authScopes: webhookScope,
    args: { id: t.arg.id({ required: true }), apiKeyId: t.arg.id() },
    resolve: async (_root, args, context) => context.services.webhooks.get(await ownerOfSubscription(context, String(args.id), args.apiKeyId), String(args.id)),
  }),
}));

builder.mutationFields((t) => ({
  createWebhookSubscription: t.field({
    type: WithSecretRef,
    description: 'At most 5 per API key, one per URL (duplicate_url is checked before subscription_limit).',
    authScopes: webhookScope,
    args: { input: t.arg({ type: CreateInput, required: true }) },
    resolve: async (_root, { input }, context) =>
      context.services.webhooks.create(await ownerOf(context, input.apiKeyId), { url: input.url, events: input.events }),
  }),
  updateWebhookSubscription: t.field({
    type: WebhookSubscriptionRef,
    authScopes: webhookScope,
    args: { id: t.arg.id({ required: true }), input: t.arg({ type: UpdateInput, required: true }), apiKeyId: t.arg.id() },
    resolve: async (_root, args, context) =>
      context.services.webhooks.update(await ownerOfSubscription(context, String(args.id), args.apiKeyId), String(args.id), {
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
    resolve: async (_root, args, context) => context.services.webhooks.delete(await ownerOfSubscription(context, String(args.id), args.apiKeyId), String(args.id)),
  }),
  rotateWebhookSecret: t.field({
    type: WithSecretRef,
    description:
      'A new secret, used for every attempt from now on (retries included). For 24 h the replaced secret still signs too: ' +
      'webhook-signature carries both signatures (new first, space-separated); X-Service-Signature carries the new one only.',
    authScopes: webhookScope,
    args: { id: t.arg.id({ required: true }), apiKeyId: t.arg.id() },
    resolve: async (_root, args, context) =>
      context.services.webhooks.rotateSecret(await ownerOfSubscription(context, String(args.id), args.apiKeyId), String(args.id)),
  }),
  testWebhookSubscription: t.field({
    type: TestResultRef,
    description:
      'Sends a signed sample pick.published (body "test": true, header X-Service-Test: true) to the url now, whatever the status, ' +
      'and returns the outcome of that one attempt. Never retried, not in the deliveries log.',
    authScopes: webhookScope,
    args: { id: t.arg.id({ required: true }), apiKeyId: t.arg.id() },
    resolve: async (_root, args, context) =>
      context.services.webhooks.sendTest(await ownerOfSubscription(context, String(args.id), args.apiKeyId), String(args.id)),
  }),
  replayWebhookDeliveries: t.field({
    type: ReplayResultRef,
    description:
      'Queues again the failed and cancelled deliveries created at or after `since` (within the 30-day log retention), due now, ' +
      'with the retry schedule from its start. Those of an exhausted subscription are sent once it is reactivated.',
    authScopes: webhookScope,
    args: { id: t.arg.id({ required: true }), since: t.arg({ type: 'DateTime', required: true }), apiKeyId: t.arg.id() },
    resolve: async (_root, args, context) =>
      context.services.webhooks.replay(await ownerOfSubscription(context, String(args.id), args.apiKeyId), String(args.id), args.since),
  }),
}));
