/**
 * The /api/v1/webhooks routes (docs/API.md, "Endpoints" and "Webhooks", for create, list, get,
 * update, delete, rotate-secret and deliveries; docs/WEBHOOKS.md for test and replay). Same shape as routes.ts: one GraphQL
 * document per route, its parameters and body, the documented schemas, and the mapping of
 * the GraphQL data to snake_case JSON; schemas and JSON derive from the declared resources
 * (src/domain/webhook-shape.ts). The body translation only checks JSON types and maps
 * REST event names to the GraphQL enum; the rules (URL policy, 409 before 429, limits,
 * ownership) live in the services behind GraphQL.
 */
import { DELIVERIES_PAGE } from '../../src/domain/bounds.js';
import { AppError, ErrorCode, InvalidParameterError } from '../../src/domain/errors.js';
import { checkText } from '../../src/domain/text.js';
import { bodyVariables, resourceJson, resourceJsonSchema } from '../../src/domain/resource-shape.js';
import { parseEventTypes, WEBHOOK_SUBSCRIPTION_STATUSES } from '../../src/domain/webhook.js';
import { CREATE_WEBHOOK_SUBSCRIPTION_BODY, UPDATE_WEBHOOK_SUBSCRIPTION_BODY } from '../../src/domain/webhook-body-shape.js';
import {
  WEBHOOK_DELIVERY,
  WEBHOOK_REPLAY_RESULT,
  WEBHOOK_SUBSCRIPTION,
  webhookSubscriptionWithSecretJson,
  webhookTestResultJson,
  webhookTestResultJsonSchema,
} from '../../src/domain/webhook-shape.js';
import {
  CreateWebhookSubscriptionDocument,
  DeleteWebhookSubscriptionDocument,
  GetWebhookSubscriptionDocument,
  ListWebhookSubscriptionsDocument,
  ReplayWebhookDeliveriesDocument,
  RotateWebhookSecretDocument,
  TestWebhookSubscriptionDocument,
  UpdateWebhookSubscriptionDocument,
  WebhookDeliveriesDocument,
} from '../common/generated/graphql.js';
import { pageParam, type ParamSpec } from '../common/params.js';
import {
  createWebhookBodySchema,
  noContentSchema,
  updateWebhookBodySchema,
  webhookDeliveryListSchema,
  webhookSubscriptionListSchema,
  webhookSubscriptionSchema,
  webhookSubscriptionWithSecretSchema,
} from '../common/schemas.js';
import { restRoute, SECRET_ANSWER_HEADERS, type RestRoute } from './routes.js';

// Body fields. Absent (a required field) -> invalid_request naming it; present with the wrong
// JSON type, null included -> invalid_parameter with `parameter`. A string url that breaks the
// URL rule reaches the service and comes back as invalid_url.

function missing(field: string): AppError {
  return new AppError(ErrorCode.invalidRequest, `The body must carry ${field}.`);
}

function urlField(body: Record<string, unknown>): string {
  if (typeof body.url !== 'string') throw new InvalidParameterError('url', 'url must be a string (an https URL).');
  // A body field of the wrong form, so reported after the tier check (src/domain/text.ts).
  return checkText('url', body.url, 'line');
}

/** parseEventTypes is the domain's rule (non-empty, known, distinct); unknown names never reach GraphQL. */
function eventsField(body: Record<string, unknown>): readonly string[] | undefined {
  return has(body, 'events') ? parseEventTypes(body.events) : undefined;
}

/** Only "active" is accepted by the service; "exhausted" is passed on so that rule stays there. */
function statusField(body: Record<string, unknown>): string | undefined {
  if (!has(body, 'status')) return undefined;
  if (typeof body.status !== 'string' || !(WEBHOOK_SUBSCRIPTION_STATUSES as readonly string[]).includes(body.status)) {
    throw new InvalidParameterError('status', 'status can only be set to "active" (to reactivate an exhausted subscription).');
  }
  return body.status;
}

/** The replay's lower bound; its form and range are the service's rule (ISO 8601 with a zone, within the log retention). */
function sinceField(body: Record<string, unknown>): string {
  if (typeof body.since !== 'string') throw new InvalidParameterError('since', 'since must be a string: an ISO 8601 timestamp with a time zone.');
  return checkText('since', body.since, 'line');
}

// The test and replay results are documented inline in their routes (the served OpenAPI document carries them).
const webhookTestResultSchema = webhookTestResultJsonSchema();
const replayResultSchema = resourceJsonSchema(WEBHOOK_REPLAY_RESULT);

const timestampSchema = { type: 'string', format: 'date-time' } as const;

const replayBodySchema = {
  type: 'object',
  required: ['since'],
  properties: {
    since: { ...timestampSchema, description: 'ISO 8601 with a time zone; not earlier than 30 days ago (the deliveries log retention).' },
  },
} as const;

const has = (body: Record<string, unknown>, field: string) => Object.hasOwn(body, field) && body[field] !== undefined;

const idParam: ParamSpec = { name: 'id', in: 'path', type: 'string', format: 'uuid', required: true, variable: 'id', description: 'The subscription_id.' };

const COLLECTION = '/api/v1/webhooks';
const ITEM = '/api/v1/webhooks/:id';

export const WEBHOOK_ROUTES: readonly RestRoute[] = [
  restRoute({
    operationId: 'createWebhookSubscription',
    method: 'POST',
    url: COLLECTION,
    summary: 'Create a webhook subscription',
    description:
      'At most 5 per API key, one per url: 409 duplicate_url (with subscription_id) is checked before 429 subscription_limit (with limit). ' +
      'The hmac_secret is returned only here and by rotate-secret. Body: Content-Type application/json; unknown fields are ignored.',
    document: CreateWebhookSubscriptionDocument,
    params: [],
    body: {
      schema: createWebhookBodySchema,
      toVariables: (body) => {
        if (!has(body, 'url')) throw missing('url');
        const url = urlField(body);
        if (!has(body, 'events')) throw missing('events');
        return { input: bodyVariables(CREATE_WEBHOOK_SUBSCRIPTION_BODY, { url, events: eventsField(body) }) };
      },
    },
    successStatus: 201,
    responseSchema: webhookSubscriptionWithSecretSchema,
    successHeaders: SECRET_ANSWER_HEADERS,
    errors: [400, 'invalid_url', 401, 403, 409, 413, 429, 'subscription_limit'],
    toBody: ({ createWebhookSubscription }) => webhookSubscriptionWithSecretJson(createWebhookSubscription),
  }),
  restRoute({
    operationId: 'listWebhookSubscriptions',
    method: 'GET',
    url: COLLECTION,
    summary: "The API key's webhook subscriptions",
    description: 'Oldest first. hmac_secret is never included.',
    document: ListWebhookSubscriptionsDocument,
    params: [],
    responseSchema: webhookSubscriptionListSchema,
    errors: [401, 403, 429],
    toBody: ({ webhookSubscriptions: nodes }) => {
      return { data: nodes.map((node) => resourceJson(WEBHOOK_SUBSCRIPTION, node)), count: nodes.length };
    },
  }),
  restRoute({
    operationId: 'getWebhookSubscription',
    method: 'GET',
    url: ITEM,
    summary: 'One webhook subscription',
    description: "hmac_secret is never included. 404 not_found for an unknown or malformed id and for another key's subscription.",
    document: GetWebhookSubscriptionDocument,
    params: [idParam],
    responseSchema: webhookSubscriptionSchema,
    errors: [401, 403, 404, 429],
    toBody: ({ webhookSubscription }) => resourceJson(WEBHOOK_SUBSCRIPTION, webhookSubscription),
  }),
  restRoute({
    operationId: 'updateWebhookSubscription',
    method: 'PATCH',
    url: ITEM,
    summary: 'Change url or events, or reactivate',
    description:
      'Any of url, events, status; at least one (else 400 invalid_request). status accepts only "active": it reactivates an exhausted subscription. ' +
      'A new url follows the creation rules (invalid_url, duplicate_url). Unknown fields are ignored.',
    document: UpdateWebhookSubscriptionDocument,
    params: [idParam],
    body: {
      schema: updateWebhookBodySchema,
      toVariables: (body) => {
        const input = bodyVariables(UPDATE_WEBHOOK_SUBSCRIPTION_BODY, {
          url: has(body, 'url') ? urlField(body) : undefined,
          events: eventsField(body),
          status: statusField(body),
        });
        if (Object.keys(input).length === 0) {
          throw new AppError(ErrorCode.invalidRequest, 'Nothing to change: send at least one of url, events, status.');
        }
        return { input };
      },
    },
    responseSchema: webhookSubscriptionSchema,
    errors: [400, 'invalid_url', 401, 403, 404, 409, 413, 429],
    toBody: ({ updateWebhookSubscription }) => resourceJson(WEBHOOK_SUBSCRIPTION, updateWebhookSubscription),
  }),
  restRoute({
    operationId: 'deleteWebhookSubscription',
    method: 'DELETE',
    url: ITEM,
    summary: 'Delete a webhook subscription',
    description: 'Deletes it with its pending deliveries and its delivery log. 204, no body.',
    document: DeleteWebhookSubscriptionDocument,
    params: [idParam],
    successStatus: 204,
    responseSchema: noContentSchema,
    errors: [401, 403, 404, 429],
    toBody: () => undefined,
  }),
  restRoute({
    operationId: 'rotateWebhookSecret',
    method: 'POST',
    url: `${ITEM}/rotate-secret`,
    summary: 'Replace the signing secret',
    description:
      'Returns the subscription with its new hmac_secret, shown only now; every later attempt (retries included) is signed with it. ' +
      'For 24 h the replaced secret still signs too: webhook-signature carries both Standard Webhooks signatures (new first, space-separated), ' +
      'while X-Service-Signature carries only sha256=<hex> under the new secret. No body needed; any body is ignored.',
    document: RotateWebhookSecretDocument,
    params: [idParam],
    responseSchema: webhookSubscriptionWithSecretSchema,
    successHeaders: SECRET_ANSWER_HEADERS,
    errors: [401, 403, 404, 429],
    toBody: ({ rotateWebhookSecret }) => webhookSubscriptionWithSecretJson(rotateWebhookSecret),
  }),
  restRoute({
    operationId: 'testWebhookSubscription',
    method: 'POST',
    url: `${ITEM}/test`,
    summary: 'Send a signed test delivery now',
    description:
      'Sends a sample pick.published to the url at once, whatever the status: body field "test": true, header X-Service-Test: true, ' +
      'every signature as usual (including the overlap after a rotation). Answers the outcome of that one attempt; ' +
      'it is never retried and not written to the deliveries log. Counts one request. No body needed; any body is ignored.',
    document: TestWebhookSubscriptionDocument,
    params: [idParam],
    responseSchema: webhookTestResultSchema,
    errors: [401, 403, 404, 429],
    toBody: ({ testWebhookSubscription }) => webhookTestResultJson(testWebhookSubscription),
  }),
  restRoute({
    operationId: 'replayWebhookDeliveries',
    method: 'POST',
    url: `${ITEM}/replay`,
    summary: 'Queue failed and cancelled deliveries again',
    description:
      'Body {"since": "<ISO 8601>"}: the failed and cancelled deliveries of this subscription created at or after since are queued again, ' +
      'due now, with the retry schedule from its start (their log keeps the earlier attempts). since may not be earlier than 30 days ago ' +
      '(the log retention): 400 invalid_parameter. Those of an exhausted subscription are sent once it is reactivated. Answers how many were queued.',
    document: ReplayWebhookDeliveriesDocument,
    params: [idParam],
    body: {
      schema: replayBodySchema,
      toVariables: (body) => {
        if (!has(body, 'since')) throw missing('since');
        return { since: sinceField(body) };
      },
    },
    responseSchema: replayResultSchema,
    errors: [400, 401, 403, 404, 413, 429],
    toBody: ({ replayWebhookDeliveries }) => resourceJson(WEBHOOK_REPLAY_RESULT, replayWebhookDeliveries),
  }),
  restRoute({
    operationId: 'listWebhookDeliveries',
    method: 'GET',
    url: `${ITEM}/deliveries`,
    summary: 'Deliveries of a subscription, with every attempt',
    description: 'Newest first; keyset pagination with `cursor`. next_attempt_at is set while a delivery is pending.',
    document: WebhookDeliveriesDocument,
    params: [
      idParam,
      { name: 'limit', in: 'query', type: 'integer', ...pageParam(DELIVERIES_PAGE), variable: 'first', description: 'Page size.' },
      { name: 'cursor', in: 'query', type: 'string', variable: 'after', description: 'next_cursor of the previous response, unchanged.' },
    ],
    responseSchema: webhookDeliveryListSchema,
    errors: [400, 401, 403, 404, 429],
    toBody: ({ webhookSubscription }) => {
      const page = webhookSubscription.deliveries;
      return { data: page.nodes.map((node) => resourceJson(WEBHOOK_DELIVERY, node)), next_cursor: page.pageInfo.endCursor, count: page.nodes.length };
    },
  }),
];
