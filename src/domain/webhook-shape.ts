/**
 * The webhook resources (docs/API.md, "Webhook subscription" and "Webhook delivery";
 * docs/WEBHOOKS.md for the test and replay results), declared once: the GraphQL types, the
 * documented JSON Schemas and examples, the REST selections and JSON derive from these
 * declarations (src/domain/resource-shape.ts).
 *
 * Two REST shapes differ from GraphQL's and are derived here from the one declaration:
 * - the subscription with its secret is one flat object in REST (hmac_secret after events),
 *   a wrapper { subscription, secret } in GraphQL;
 * - the test result says `"test": true` in REST, as the test delivery's body does.
 */
import Type, { type Static, type TObject } from 'typebox';
import { dateTime, jsonNameOf, nullable, oneOf, resource, resourceJson, resourceJsonSchema, resourceObject } from './resource-shape.js';
import { WEBHOOK_DELIVERY_STATUSES, WEBHOOK_EVENT_TYPES, WEBHOOK_SUBSCRIPTION_STATUSES, WEBHOOK_TEST_EVENT_TYPE } from './webhook.js';

/** Why an attempt failed, in the documented order. */
const WEBHOOK_ATTEMPT_ERROR_KINDS = ['http_status', 'timeout', 'connection', 'tls', 'redirect', 'invalid_url'] as const;

const ERROR_KIND_DESCRIPTION = 'null on success; otherwise http_status, timeout, connection, tls, redirect or invalid_url.';
const STATUS_CODE_DESCRIPTION = 'HTTP status of the answer; null when none arrived.';

const EVENT_TYPE = oneOf(WEBHOOK_EVENT_TYPES, 'WebhookEventType');

const SUBSCRIPTION = {
  id: Type.String({ format: 'uuid', graphqlType: 'ID', json: 'subscription_id' }),
  url: Type.String({ description: 'As normalised by the URL parser (lower-case host, default port dropped).' }),
  events: Type.Array(EVENT_TYPE, { description: 'In a fixed order: pick.published, pick.settled, pick.availability_changed.' }),
  status: oneOf(WEBHOOK_SUBSCRIPTION_STATUSES, 'WebhookSubscriptionStatus', {
    description: 'exhausted after the last retry of a delivery failed; PATCH status "active" to resume.',
  }),
  createdAt: dateTime(),
  // Operators see when it last changed; the documented JSON has only created_at.
  updatedAt: dateTime({ json: false }),
};

/** The documented subscription (camelCase, as the declaration): the lists' and errors' examples quote it. */
export const WEBHOOK_SUBSCRIPTION_EXAMPLE: Static<TObject<typeof SUBSCRIPTION>> = {
  id: '6f1d2c3b-4a59-4e8d-8c7b-1a2b3c4d5e6f',
  url: 'https://hooks.example.com/picks',
  events: [...WEBHOOK_EVENT_TYPES],
  status: 'active',
  createdAt: new Date('2026-11-22T12:00:00.000Z'),
  updatedAt: new Date('2026-11-22T12:00:00.000Z'),
};

/** GraphQL adds the deliveries connection to its type (src/graphql/schema/webhook.ts). */
export const WEBHOOK_SUBSCRIPTION = resource('WebhookSubscription', SUBSCRIPTION, {
  description:
    'A webhook endpoint of an API key. Its signing secret (hmac_secret) is never part of it: only creation and rotation show it (WebhookSubscriptionWithSecret).',
  example: WEBHOOK_SUBSCRIPTION_EXAMPLE,
});

export const WEBHOOK_SUBSCRIPTION_WITH_SECRET = resource(
  'WebhookSubscriptionWithSecret',
  {
    subscription: WEBHOOK_SUBSCRIPTION,
    secret: Type.String({
      pattern: '^whsec_',
      json: 'hmac_secret',
      description: 'Key of the X-Service-Signature HMAC (and of the Standard Webhooks signature). Shown only now; stored encrypted.',
    }),
  },
  {
    description: 'Creation and rotation only: the one time the secret is shown.',
    example: { subscription: WEBHOOK_SUBSCRIPTION_EXAMPLE, secret: 'whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw8b8sNLXDv1M=' },
  },
);

const ATTEMPT = resourceObject(
  'WebhookDeliveryAttempt',
  {
    attemptNumber: Type.Integer({ minimum: 1 }),
    attemptedAt: dateTime(),
    durationMs: Type.Integer({ minimum: 0 }),
    statusCode: nullable(Type.Integer({ description: STATUS_CODE_DESCRIPTION })),
    errorKind: nullable(Type.String({ description: ERROR_KIND_DESCRIPTION })),
    responseBody: nullable(Type.String({ description: 'The first 4 KiB of the answer, as UTF-8 text.' })),
  },
  { description: 'One HTTP attempt of a delivery.' },
);

/** No example of its own: the documented example is the delivery list's (WEBHOOK_DELIVERY_EXAMPLE). */
export const WEBHOOK_DELIVERY = resourceObject(
  'WebhookDelivery',
  {
    id: Type.String({ format: 'uuid', graphqlType: 'ID', json: 'delivery_id', description: 'The X-Service-Delivery header (and webhook-id), stable across retries.' }),
    eventId: Type.String({ format: 'uuid', graphqlType: 'ID', description: 'The `id` of the delivery body.' }),
    eventType: EVENT_TYPE,
    status: oneOf(WEBHOOK_DELIVERY_STATUSES, 'WebhookDeliveryStatus'),
    attemptCount: Type.Integer({ minimum: 0 }),
    nextAttemptAt: nullable(dateTime({ description: 'When the next attempt is due; null unless pending.' })),
    lastStatusCode: nullable(Type.Integer({ description: 'HTTP status of the last answer; null when none arrived.' })),
    lastError: nullable(Type.String()),
    createdAt: dateTime(),
    // GraphQL's cost: the first attempt and at most 5 retries (WEBHOOK_RETRY_SCHEDULE has exactly 5); each replay adds at most as many again.
    attempts: Type.Array(ATTEMPT, { graphqlCostItems: 6, description: 'Oldest first.' }),
  },
  { description: 'One event sent (or to be sent) to one subscription, with every attempt.' },
);

export const WEBHOOK_DELIVERY_EXAMPLE: Static<typeof WEBHOOK_DELIVERY> = {
  id: '9a8b7c6d-5e4f-4a3b-8c2d-1e0f9a8b7c6d',
  eventId: '1c2d3e4f-5a6b-4c7d-8e9f-0a1b2c3d4e5f',
  eventType: 'pick.published',
  status: 'succeeded',
  attemptCount: 1,
  nextAttemptAt: null,
  lastStatusCode: 200,
  lastError: null,
  createdAt: new Date('2026-11-22T12:00:00.120Z'),
  attempts: [{ attemptNumber: 1, attemptedAt: new Date('2026-11-22T12:00:00.150Z'), durationMs: 84, statusCode: 200, errorKind: null, responseBody: 'ok' }],
};

export const WEBHOOK_TEST_RESULT = resourceObject(
  'WebhookTestResult',
  {
    deliveryId: Type.String({
      format: 'uuid',
      graphqlType: 'ID',
      description: 'X-Service-Delivery and webhook-id of the test delivery (not in the deliveries log).',
    }),
    // GraphQL's WebhookEventType (declared with every type beforehand); the JSON Schema names the one type a test sends.
    eventType: oneOf([WEBHOOK_TEST_EVENT_TYPE], 'WebhookEventType'),
    succeeded: Type.Boolean({ description: 'A 2xx arrived within 10 s.' }),
    statusCode: nullable(Type.Integer({ description: STATUS_CODE_DESCRIPTION })),
    durationMs: Type.Integer({ minimum: 0 }),
    errorKind: nullable(Type.String({ enum: [...WEBHOOK_ATTEMPT_ERROR_KINDS], description: ERROR_KIND_DESCRIPTION })),
    error: nullable(Type.String({ description: 'What went wrong (as last_error of a delivery); null on success.' })),
    responseBody: nullable(Type.String({ description: 'The first 4 KiB of the answer.' })),
  },
  { description: 'The one attempt of a test delivery.' },
);

export const WEBHOOK_REPLAY_RESULT = resourceObject('WebhookReplayResult', {
  queued: Type.Integer({ minimum: 0, description: 'How many failed or cancelled deliveries were queued again.' }),
  since: dateTime(),
});

type Json = Record<string, unknown>;

/** `object` with `name: value` right after its key `after`: the documented bodies keep their key order. */
function placedAfter(object: Json, after: string, name: string, value: unknown): Json {
  // A secret shown once must never go missing because a key was renamed.
  if (!Object.hasOwn(object, after)) throw new Error(`${name} belongs after ${after}, which this object does not have`);
  return Object.fromEntries(Object.entries(object).flatMap(([key, entry]) => (key === after ? [[key, entry], [name, value]] : [[key, entry]])));
}

/** A documented object schema with one more required property, right after `after`. */
function withPropertyAfter(schema: Json, after: string, name: string, property: unknown): Json {
  return {
    ...schema,
    required: (schema.required as string[]).flatMap((key) => (key === after ? [key, name] : [key])),
    properties: placedAfter(schema.properties as Json, after, name, property),
  };
}

// REST shows the subscription and its secret as one object, hmac_secret after events.
const SECRET_AFTER = 'events';
const SECRET_JSON_NAME = jsonNameOf('secret', WEBHOOK_SUBSCRIPTION_WITH_SECRET.properties.secret)!;

/** The wrapper's JSON ({ subscription, hmac_secret }) as one object. */
function flatSubscriptionWithSecret(nested: Json): Json {
  return placedAfter(nested.subscription as Json, SECRET_AFTER, SECRET_JSON_NAME, nested[SECRET_JSON_NAME]);
}

/** The documented WebhookSubscriptionWithSecret: the subscription's schema with hmac_secret, the wrapper's description and example. */
export function webhookSubscriptionWithSecretJsonSchema(): Json {
  const nested = resourceJsonSchema(WEBHOOK_SUBSCRIPTION_WITH_SECRET) as Json & { properties: Record<string, Json>; examples: Json[] };
  const { required, properties } = withPropertyAfter(nested.properties.subscription!, SECRET_AFTER, SECRET_JSON_NAME, nested.properties[SECRET_JSON_NAME]);
  return { type: 'object', description: nested.description, required, properties, examples: nested.examples.map(flatSubscriptionWithSecret) };
}

/** The documented JSON of a GraphQL WebhookSubscriptionWithSecret ({ subscription, secret }). */
export function webhookSubscriptionWithSecretJson(graphqlResult: unknown): Json {
  return flatSubscriptionWithSecret(resourceJson(WEBHOOK_SUBSCRIPTION_WITH_SECRET, graphqlResult) as Json);
}

// REST marks the test result as the test delivery's body is marked: "test": true, after event_type.
const TEST_MARK = { after: 'event_type', name: 'test', schema: { type: 'boolean', const: true } } as const;

/** The documented test result: WEBHOOK_TEST_RESULT with `test: true` (it has no example to mark). */
export function webhookTestResultJsonSchema(): Json {
  return withPropertyAfter(resourceJsonSchema(WEBHOOK_TEST_RESULT), TEST_MARK.after, TEST_MARK.name, { ...TEST_MARK.schema });
}

/** The documented JSON of a GraphQL WebhookTestResult. */
export function webhookTestResultJson(graphqlResult: unknown): Json {
  return placedAfter(resourceJson(WEBHOOK_TEST_RESULT, graphqlResult) as Json, TEST_MARK.after, TEST_MARK.name, true);
}
