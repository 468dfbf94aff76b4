/**
 * The request bodies of POST and PATCH /api/v1/webhooks (docs/API.md, "Webhooks"), declared
 * once: the documented request bodies (requestBodyJsonSchema), the JSON they read into GraphQL
 * variables (bodyVariables) and the fields of GraphQL's CreateWebhookSubscriptionInput and
 * UpdateWebhookSubscriptionInput (bodyInputFields), from src/domain/resource-shape.ts.
 */
import Type from 'typebox';
import { oneOf, requestBody } from './resource-shape.js';
import { WEBHOOK_EVENT_TYPES } from './webhook.js';
import { MAX_WEBHOOK_URL_LENGTH } from './webhook-url.js';

const url = () =>
  Type.String({
    format: 'uri',
    maxLength: MAX_WEBHOOK_URL_LENGTH,
    description: 'https URL of a publicly reachable host: no user:password, no fragment; every address it resolves to must be public unicast.',
  });

const events = () =>
  Type.Array(oneOf(WEBHOOK_EVENT_TYPES, 'WebhookEventType'), { minItems: 1, uniqueItems: true, description: 'Event types to deliver; each at most once.' });

export const CREATE_WEBHOOK_SUBSCRIPTION_BODY = requestBody(
  {
    url: url(),
    events: events(),
    // GraphQL only: a key acts on its own subscriptions.
    apiKeyId: Type.Optional(
      Type.String({ graphqlType: 'ID', json: false, description: 'Admin, or a dashboard session (one of its keys): the API key the subscription belongs to.' }),
    ),
  },
  {
    description: 'Unknown fields are ignored.',
    example: { url: 'https://hooks.example.com/picks', events: ['pick.published'] },
  },
);

export const UPDATE_WEBHOOK_SUBSCRIPTION_BODY = requestBody(
  {
    url: Type.Optional(url()),
    events: Type.Optional(events()),
    // GraphQL's WebhookSubscriptionStatus (made from the subscription's declaration, with every status); a body may only reactivate.
    status: Type.Optional(oneOf(['active'], 'WebhookSubscriptionStatus', { description: 'Reactivates an exhausted subscription: active is the only value accepted.' })),
  },
  {
    description: 'At least one of url, events, status. Unknown fields are ignored.',
    requireOneOf: ['url', 'events', 'status'],
    example: { status: 'active' },
  },
);
