import { MINIMUM_TIER } from '../../domain/access.js';
import { DELIVERIES_PAGE } from '../../domain/bounds.js';
import { boundedInt } from '../argument-guard.js';
import { NotFoundError } from '../../domain/errors.js';
import { WEBHOOK_EVENT_TYPES, WEBHOOK_SUBSCRIPTION_STATUSES } from '../../domain/webhook.js';
import { CREATE_WEBHOOK_SUBSCRIPTION_BODY, UPDATE_WEBHOOK_SUBSCRIPTION_BODY } from '../../domain/webhook-body-shape.js';
import { WEBHOOK_DELIVERY, WEBHOOK_REPLAY_RESULT, WEBHOOK_SUBSCRIPTION, WEBHOOK_SUBSCRIPTION_WITH_SECRET, WEBHOOK_TEST_RESULT } from '../../domain/webhook-shape.js';
import type { DeliveryPage, WebhookSubscription } from '../../services/webhooks/subscriptions.js';
import { builder } from '../builder.js';
import type { Context } from '../context.js';
import { ITEMS_OF_PAGE, pageComplexity } from '../limits.js';
import { bodyInputFields, declaredEnumType, resourceObjectType } from '../resource-types.js';
import { PageInfoRef } from './pick.js';

// The enums the declarations and the input types share, made here first with every value (a
// declaration may name only some: the update body's status, the test result's event type) and
// the description.
declaredEnumType(
  'WebhookEventType',
  WEBHOOK_EVENT_TYPES,
  'PICK_PUBLISHED is `pick.published` in REST and in delivery headers; PICK_SETTLED is `pick.settled`; PICK_AVAILABILITY_CHANGED is `pick.availability_changed`, sent only to subscriptions that name it.',
);
declaredEnumType('WebhookSubscriptionStatus', WEBHOOK_SUBSCRIPTION_STATUSES);

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

/** The declared types (src/domain/webhook-shape.ts); the subscription's records also carry the owning key, which deliveries reads. */
export const WebhookSubscriptionRef = resourceObjectType<typeof WEBHOOK_SUBSCRIPTION, WebhookSubscription>(WEBHOOK_SUBSCRIPTION);
const DeliveryRef = resourceObjectType(WEBHOOK_DELIVERY);
const WithSecretRef = resourceObjectType(WEBHOOK_SUBSCRIPTION_WITH_SECRET);
const TestResultRef = resourceObjectType(WEBHOOK_TEST_RESULT);
const ReplayResultRef = resourceObjectType(WEBHOOK_REPLAY_RESULT);

const DeliveryPageRef = builder.objectRef<DeliveryPage>('WebhookDeliveryConnection').implement({
  fields: (t) => ({
    nodes: t.field({ type: [DeliveryRef], complexity: ITEMS_OF_PAGE, resolve: (page) => page.nodes }),
    pageInfo: t.field({ type: PageInfoRef, resolve: (page) => ({ hasNextPage: page.endCursor !== null, endCursor: page.endCursor }) }),
  }),
});

builder.objectFields(WebhookSubscriptionRef, (t) => ({
  deliveries: t.field({
    type: DeliveryPageRef,
    description: 'Newest first, with every attempt.',
    complexity: (args) => pageComplexity(args.first, DELIVERIES_PAGE),
    args: { first: boundedInt(t.arg, DELIVERIES_PAGE, 'Page size,'), after: t.arg.string() },
    resolve: (subscription, args, context) =>
      context.services.webhooks.deliveries(subscription.apiKeyId, subscription.id, { first: args.first ?? DELIVERIES_PAGE.default, after: args.after }),
  }),
}));

// The bodies of POST and PATCH /api/v1/webhooks, declared once (src/domain/webhook-body-shape.ts).
const CreateInput = builder.inputType('CreateWebhookSubscriptionInput', {
  fields: (t) => bodyInputFields((options) => t.field(options), CREATE_WEBHOOK_SUBSCRIPTION_BODY),
});

const UpdateInput = builder.inputType('UpdateWebhookSubscriptionInput', {
  fields: (t) => bodyInputFields((options) => t.field(options), UPDATE_WEBHOOK_SUBSCRIPTION_BODY),
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
