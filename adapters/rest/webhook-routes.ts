/**
 * The /api/v1/webhooks routes (docs/API.md, "Endpoints" and "Webhooks", for create, list, get,
 * update, delete, rotate-secret and deliveries; docs/WEBHOOKS.md for test and replay). Same shape as routes.ts: one GraphQL
 * document per route, its parameters and body, the documented schemas, and the mapping of
 * the GraphQL data to snake_case JSON. The body translation only checks JSON types and maps
 * REST event names to the GraphQL enum; the rules (URL policy, 409 before 429, limits,
 * ownership) live in the services behind GraphQL.
 */
import { DELIVERIES_PAGE } from '../../src/domain/bounds.js';
import { AppError, ErrorCode, InvalidParameterError } from '../../src/domain/errors.js';
import { checkText } from '../../src/domain/text.js';
import { parseEventTypes, WEBHOOK_EVENT_TYPES, type WebhookEventType } from '../../src/domain/webhook.js';
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
  type V1WebhookSubscriptionFragment,
  type WebhookDeliveriesQuery,
  type WebhookEventType as WebhookEventEnum,
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

/** REST `pick.published` <-> GraphQL PICK_PUBLISHED. */
const ENUM_OF_EVENT = Object.fromEntries(WEBHOOK_EVENT_TYPES.map((type) => [type, type.toUpperCase().replace('.', '_')])) as Record<WebhookEventType, WebhookEventEnum>;
const EVENT_OF_ENUM = Object.fromEntries(Object.entries(ENUM_OF_EVENT).map(([type, name]) => [name, type])) as Record<string, WebhookEventType>;

function restEvent(name: WebhookEventEnum): WebhookEventType {
  const type = EVENT_OF_ENUM[name];
  if (!type) throw new Error(`unexpected WebhookEventType ${name}`);
  return type;
}

type DeliveryNode = WebhookDeliveriesQuery['webhookSubscription']['deliveries']['nodes'][number];

/** Spec 2.5 field order; hmac_secret only when the operation returned one (create, rotate). */
function v1Subscription(node: V1WebhookSubscriptionFragment, secret?: string) {
  return {
    subscription_id: node.id,
    url: node.url,
    events: node.events.map(restEvent),
    ...(secret === undefined ? {} : { hmac_secret: secret }),
    status: node.status.toLowerCase(),
    created_at: node.createdAt,
  };
}

function v1Delivery(node: DeliveryNode) {
  return {
    delivery_id: node.id,
    event_id: node.eventId,
    event_type: restEvent(node.eventType),
    status: node.status.toLowerCase(),
    attempt_count: node.attemptCount,
    next_attempt_at: node.nextAttemptAt,
    last_status_code: node.lastStatusCode,
    last_error: node.lastError,
    created_at: node.createdAt,
    attempts: node.attempts.map((attempt) => ({
      attempt_number: attempt.attemptNumber,
      attempted_at: attempt.attemptedAt,
      duration_ms: attempt.durationMs,
      status_code: attempt.statusCode,
      error_kind: attempt.errorKind,
      response_body: attempt.responseBody,
    })),
  };
}

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
function eventsField(body: Record<string, unknown>): WebhookEventEnum[] {
  return parseEventTypes(body.events).map((type) => ENUM_OF_EVENT[type]);
}

const STATUS_VALUES: Record<string, string> = { active: 'ACTIVE', exhausted: 'EXHAUSTED' };

/** Only "active" is accepted by the service; "exhausted" is passed on so that rule stays there. */
function statusField(body: Record<string, unknown>): string {
  const status = typeof body.status === 'string' ? STATUS_VALUES[body.status] : undefined;
  if (!status) throw new InvalidParameterError('status', 'status can only be set to "active" (to reactivate an exhausted subscription).');
  return status;
}

/** The replay's lower bound; its form and range are the service's rule (ISO 8601 with a zone, within the log retention). */
function sinceField(body: Record<string, unknown>): string {
  if (typeof body.since !== 'string') throw new InvalidParameterError('since', 'since must be a string: an ISO 8601 timestamp with a time zone.');
  return checkText('since', body.since, 'line');
}

// The schemas of the test and replay routes (documentation; the served OpenAPI document carries them).
const timestampSchema = { type: 'string', format: 'date-time' } as const;

const webhookTestResultSchema = {
  type: 'object',
  additionalProperties: false,
  required: ['delivery_id', 'event_type', 'test', 'succeeded', 'status_code', 'duration_ms', 'error_kind', 'error', 'response_body'],
  properties: {
    delivery_id: { type: 'string', format: 'uuid', description: 'X-Service-Delivery and webhook-id of the test delivery (not in the deliveries log).' },
    event_type: { type: 'string', enum: ['pick.published'] },
    test: { type: 'boolean', const: true },
    succeeded: { type: 'boolean', description: 'A 2xx arrived within 10 s.' },
    status_code: { type: ['integer', 'null'], description: 'HTTP status of the answer; null when none arrived.' },
    duration_ms: { type: 'integer', minimum: 0 },
    error_kind: {
      type: ['string', 'null'],
      enum: [null, 'http_status', 'timeout', 'connection', 'tls', 'redirect', 'invalid_url'],
      description: 'null on success.',
    },
    error: { type: ['string', 'null'], description: 'What went wrong (as last_error of a delivery); null on success.' },
    response_body: { type: ['string', 'null'], description: 'The first 4 KiB of the answer.' },
  },
} as const;

const replayBodySchema = {
  type: 'object',
  required: ['since'],
  properties: {
    since: { ...timestampSchema, description: 'ISO 8601 with a time zone; not earlier than 30 days ago (the deliveries log retention).' },
  },
} as const;

const replayResultSchema = {
  type: 'object',
  additionalProperties: false,
  required: ['queued', 'since'],
  properties: {
    queued: { type: 'integer', minimum: 0, description: 'How many failed or cancelled deliveries were queued again.' },
    since: timestampSchema,
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
        return { input: { url, events: eventsField(body) } };
      },
    },
    successStatus: 201,
    responseSchema: webhookSubscriptionWithSecretSchema,
    successHeaders: SECRET_ANSWER_HEADERS,
    errors: [400, 'invalid_url', 401, 403, 409, 413, 429, 'subscription_limit'],
    toBody: ({ createWebhookSubscription: created }) => v1Subscription(created.subscription, created.secret),
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
      return { data: nodes.map((node) => v1Subscription(node)), count: nodes.length };
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
    toBody: ({ webhookSubscription }) => v1Subscription(webhookSubscription),
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
        const input: Record<string, unknown> = {};
        if (has(body, 'url')) input.url = urlField(body);
        if (has(body, 'events')) input.events = eventsField(body);
        if (has(body, 'status')) input.status = statusField(body);
        if (Object.keys(input).length === 0) {
          throw new AppError(ErrorCode.invalidRequest, 'Nothing to change: send at least one of url, events, status.');
        }
        return { input };
      },
    },
    responseSchema: webhookSubscriptionSchema,
    errors: [400, 'invalid_url', 401, 403, 404, 409, 413, 429],
    toBody: ({ updateWebhookSubscription }) => v1Subscription(updateWebhookSubscription),
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
    toBody: ({ rotateWebhookSecret: rotated }) => v1Subscription(rotated.subscription, rotated.secret),
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
    toBody: ({ testWebhookSubscription: result }) => ({
      delivery_id: result.deliveryId,
      event_type: restEvent(result.eventType),
      test: true,
      succeeded: result.succeeded,
      status_code: result.statusCode,
      duration_ms: result.durationMs,
      error_kind: result.errorKind,
      error: result.error,
      response_body: result.responseBody,
    }),
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
    toBody: ({ replayWebhookDeliveries: replay }) => ({ queued: replay.queued, since: replay.since }),
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
      return { data: page.nodes.map(v1Delivery), next_cursor: page.pageInfo.endCursor, count: page.nodes.length };
    },
  }),
];
