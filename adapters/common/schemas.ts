/**
 * JSON Schemas of the documented bodies (docs/API.md), as named OpenAPI components
 * (`#/components/schemas/<Name>`), so generated clients get a type per resource (`Pick`,
 * `PickList`, ...). Routes refer to them with schemaRef(); a new resource is one more entry of
 * API_SCHEMAS. They are documentation only: @fastify/swagger puts them into the OpenAPI
 * document, and the tests validate real responses against that document.
 *
 * Responses never say `additionalProperties: false`: adding a field is a non-breaking change
 * (docs/API.md, "Versioning"), and clients must ignore fields they do not know.
 */
import { encodePickCursor } from '../../src/domain/cursor.js';
import { ERROR_EXTRA_FIELDS, ERRORS, type ErrorCode, type ErrorExtraField } from '../../src/domain/errors.js';
import { LEDGER_ENTRY_TYPES } from '../../src/domain/ledger.js';
import { layoutExample, layoutJsonSchema, PUBLIC_PICK, V1_PICK } from '../../src/domain/pick-shape.js';
import { resourceJsonSchema } from '../../src/domain/resource-shape.js';
import { STREAM_TOKEN_MAX_ORIGINS, STREAM_TOKEN_TTL } from '../../src/domain/stream-token.js';
import { MATCH_ANALYSIS } from '../../src/domain/match-analysis-shape.js';
import { TRACK_RECORD } from '../../src/domain/track-record-shape.js';
import { MAX_SUBSCRIPTIONS_PER_KEY, WEBHOOK_DELIVERY_STATUSES, WEBHOOK_EVENT_TYPES, WEBHOOK_SUBSCRIPTION_STATUSES } from '../../src/domain/webhook.js';
import { MAX_WEBHOOK_URL_LENGTH } from '../../src/domain/webhook-url.js';

const timestamp = { type: 'string', format: 'date-time' } as const;
const HEX_256 = { type: 'string', pattern: '^[0-9a-f]{64}$' } as const;
const nullableTimestamp = { type: ['string', 'null'], format: 'date-time' } as const;
const SCHEMAS_PATH = '#/components/schemas/';

const EXAMPLE_PICK = layoutExample(V1_PICK);

const EXAMPLE_SUBSCRIPTION = {
  subscription_id: '6f1d2c3b-4a59-4e8d-8c7b-1a2b3c4d5e6f',
  url: 'https://hooks.example.com/picks',
  events: ['pick.published', 'pick.settled'],
  status: 'active',
  created_at: '2026-11-22T12:00:00.000Z',
};

const pick = {
  ...layoutJsonSchema(V1_PICK, 'A published or settled pick. Picks held for review are never returned.'),
  examples: [EXAMPLE_PICK],
};

const nextCursor = {
  type: ['string', 'null'],
  description: 'Opaque; pass it unchanged as `cursor` for the next page. null when there are no more results.',
} as const;

const webhookEvent = { type: 'string', enum: [...WEBHOOK_EVENT_TYPES] } as const;
const webhookUrl = {
  type: 'string',
  format: 'uri',
  maxLength: MAX_WEBHOOK_URL_LENGTH,
  description: 'https URL of a publicly reachable host: no user:password, no fragment; every address it resolves to must be public unicast.',
} as const;
const webhookEvents = {
  type: 'array',
  minItems: 1,
  uniqueItems: true,
  items: webhookEvent,
  description: 'Event types to deliver; each at most once.',
} as const;

const webhookSubscriptionProperties = {
  subscription_id: { type: 'string', format: 'uuid' },
  url: { type: 'string', description: 'As normalised by the URL parser (lower-case host, default port dropped).' },
  events: { type: 'array', items: webhookEvent, description: 'In a fixed order: pick.published, pick.settled.' },
  status: { type: 'string', enum: [...WEBHOOK_SUBSCRIPTION_STATUSES], description: 'exhausted after the last retry of a delivery failed; PATCH status "active" to resume.' },
  created_at: timestamp,
} as const;

const webhookAttempt = {
  type: 'object',
  required: ['attempt_number', 'attempted_at', 'duration_ms', 'status_code', 'error_kind', 'response_body'],
  properties: {
    attempt_number: { type: 'integer', minimum: 1 },
    attempted_at: timestamp,
    duration_ms: { type: 'integer', minimum: 0 },
    status_code: { type: ['integer', 'null'], description: 'HTTP status of the answer; null when none arrived.' },
    error_kind: {
      type: ['string', 'null'],
      description: 'null on success; otherwise http_status, timeout, connection, tls, redirect or invalid_url.',
    },
    response_body: { type: ['string', 'null'], description: 'The first 4 KiB of the answer, as UTF-8 text.' },
  },
} as const;

/**
 * Every body field an error can carry beside `error` and `message`: the error table's extra
 * fields, each described with the codes that carry it.
 */
const errorExtras = Object.fromEntries(
  (Object.entries(ERROR_EXTRA_FIELDS) as [ErrorExtraField, (typeof ERROR_EXTRA_FIELDS)[ErrorExtraField]][]).map(([name, field]) => {
    const codes = (Object.keys(ERRORS) as ErrorCode[]).filter((code) => (ERRORS[code].extras as readonly string[]).includes(name));
    return [name, { ...field, description: `${codes.join(', ')}: ${field.description}` }];
  }),
) as Record<ErrorExtraField, object>;

/** The named components, in the order the document lists them. */
export const API_SCHEMAS = {
  Pick: pick,
  PickList: {
    type: 'object',
    description: 'One page of picks, kickoff_at descending, then id descending.',
    required: ['data', 'next_cursor', 'count'],
    properties: {
      data: { type: 'array', items: { $ref: `${SCHEMAS_PATH}Pick` } },
      next_cursor: nextCursor,
      count: { type: 'integer', minimum: 0, description: 'Number of picks in this page (not a total).' },
    },
    examples: [{ data: [EXAMPLE_PICK], next_cursor: encodePickCursor({ kickoffAt: new Date(EXAMPLE_PICK.kickoff_at), id: EXAMPLE_PICK.id }), count: 1 }],
  },
  TrackRecord: resourceJsonSchema(TRACK_RECORD),
  MatchAnalysis: resourceJsonSchema(MATCH_ANALYSIS),
  WebhookSubscription: {
    type: 'object',
    description: 'hmac_secret is never part of it (see WebhookSubscriptionWithSecret).',
    required: ['subscription_id', 'url', 'events', 'status', 'created_at'],
    properties: webhookSubscriptionProperties,
    examples: [EXAMPLE_SUBSCRIPTION],
  },
  WebhookSubscriptionWithSecret: {
    type: 'object',
    description: 'Creation and rotation only: the one time the secret is shown.',
    required: ['subscription_id', 'url', 'events', 'hmac_secret', 'status', 'created_at'],
    properties: {
      ...webhookSubscriptionProperties,
      hmac_secret: {
        type: 'string',
        pattern: '^whsec_',
        description: 'Key of the X-Service-Signature HMAC (and of the Standard Webhooks signature). Shown only now; stored encrypted.',
      },
    },
    examples: [{ ...EXAMPLE_SUBSCRIPTION, hmac_secret: 'whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw8b8sNLXDv1M=' }],
  },
  WebhookSubscriptionList: {
    type: 'object',
    required: ['data', 'count'],
    properties: {
      data: { type: 'array', items: { $ref: `${SCHEMAS_PATH}WebhookSubscription` }, maxItems: MAX_SUBSCRIPTIONS_PER_KEY, description: 'Oldest first.' },
      count: { type: 'integer', minimum: 0 },
    },
    examples: [{ data: [EXAMPLE_SUBSCRIPTION], count: 1 }],
  },
  WebhookDelivery: {
    type: 'object',
    description: 'One event sent (or to be sent) to one subscription, with every attempt.',
    required: ['delivery_id', 'event_id', 'event_type', 'status', 'attempt_count', 'next_attempt_at', 'last_status_code', 'last_error', 'created_at', 'attempts'],
    properties: {
      delivery_id: { type: 'string', format: 'uuid', description: 'The X-Service-Delivery header (and webhook-id), stable across retries.' },
      event_id: { type: 'string', format: 'uuid', description: 'The `id` of the delivery body.' },
      event_type: webhookEvent,
      status: { type: 'string', enum: [...WEBHOOK_DELIVERY_STATUSES] },
      attempt_count: { type: 'integer', minimum: 0 },
      next_attempt_at: { ...nullableTimestamp, description: 'When the next attempt is due; null unless pending.' },
      last_status_code: { type: ['integer', 'null'], description: 'HTTP status of the last answer; null when none arrived.' },
      last_error: { type: ['string', 'null'] },
      created_at: timestamp,
      attempts: { type: 'array', description: 'Oldest first.', items: webhookAttempt },
    },
  },
  WebhookDeliveryList: {
    type: 'object',
    description: 'One page of deliveries, newest first.',
    required: ['data', 'next_cursor', 'count'],
    properties: {
      data: { type: 'array', items: { $ref: `${SCHEMAS_PATH}WebhookDelivery` } },
      next_cursor: nextCursor,
      count: { type: 'integer', minimum: 0, description: 'Number of deliveries in this page.' },
    },
    examples: [
      {
        data: [
          {
            delivery_id: '9a8b7c6d-5e4f-4a3b-8c2d-1e0f9a8b7c6d',
            event_id: '1c2d3e4f-5a6b-4c7d-8e9f-0a1b2c3d4e5f',
            event_type: 'pick.published',
            status: 'succeeded',
            attempt_count: 1,
            next_attempt_at: null,
            last_status_code: 200,
            last_error: null,
            created_at: '2026-11-22T12:00:00.120Z',
            attempts: [
              { attempt_number: 1, attempted_at: '2026-11-22T12:00:00.150Z', duration_ms: 84, status_code: 200, error_kind: null, response_body: 'ok' },
            ],
          },
        ],
        next_cursor: null,
        count: 1,
      },
    ],
  },
  CreateWebhookSubscription: {
    type: 'object',
    description: 'Unknown fields are ignored.',
    required: ['url', 'events'],
    properties: { url: webhookUrl, events: webhookEvents },
    examples: [{ url: 'https://hooks.example.com/picks', events: ['pick.published'] }],
  },
  UpdateWebhookSubscription: {
    type: 'object',
    description: 'At least one of url, events, status. Unknown fields are ignored.',
    anyOf: [{ required: ['url'] }, { required: ['events'] }, { required: ['status'] }],
    properties: {
      url: webhookUrl,
      events: webhookEvents,
      status: { type: 'string', enum: ['active'], description: 'Reactivates an exhausted subscription.' },
    },
    examples: [{ status: 'active' }],
  },
  CreateStreamToken: {
    type: 'object',
    description: 'Every field is optional; an empty object (or no body) gives a 15-minute token for no page origin. Unknown fields are ignored.',
    properties: {
      ttl_seconds: {
        type: 'integer',
        minimum: STREAM_TOKEN_TTL.min,
        maximum: STREAM_TOKEN_TTL.max,
        default: STREAM_TOKEN_TTL.default,
        description: 'Lifetime of the token in seconds.',
      },
      origins: {
        type: 'array',
        maxItems: STREAM_TOKEN_MAX_ORIGINS,
        items: { type: 'string', examples: ['https://app.example.com'] },
        description: 'Exact origins whose pages may use the token: `https://host[:port]`, or `http://` on localhost or 127.0.0.1; no path or trailing slash.',
      },
    },
    examples: [{ ttl_seconds: 900, origins: ['https://app.example.com'] }],
  },
  StreamToken: {
    type: 'object',
    required: ['token', 'expires_at', 'origins'],
    properties: {
      token: { type: 'string', pattern: '^sst_[A-Za-z0-9_-]{43}$', description: "Reads this key's pick stream only, from the origins below; returned once." },
      expires_at: { type: 'string', format: 'date-time', description: 'Refused from then on; a stream it opened ends then.' },
      origins: { type: 'array', items: { type: 'string' }, description: 'As normalised (lower-case host, default port dropped).' },
    },
    examples: [{ token: 'sst_Zm9vYmFyYmF6cXV4cXV1eGNvcmdlZ3JhdWx0Z2FycGx', expires_at: '2026-12-01T15:15:00.000Z', origins: ['https://app.example.com'] }],
  },
  PublicPick: layoutJsonSchema(PUBLIC_PICK),
  PublicPickList: {
    type: 'object',
    description: "Today's picks (first published on the current UTC date), best post-tax edge first.",
    required: ['generatedAt', 'count', 'picks'],
    properties: {
      generatedAt: timestamp,
      count: { type: 'integer', minimum: 0 },
      picks: { type: 'array', items: { $ref: `${SCHEMAS_PATH}PublicPick` } },
    },
    examples: [
      {
        generatedAt: '2026-11-22T12:00:03.512Z',
        count: 1,
        picks: [
          layoutExample(PUBLIC_PICK),
        ],
      },
    ],
  },
  LedgerEntry: {
    type: 'object',
    description: 'One entry of the public ledger (see "Verifying the record"). pick and salt appear from reveal_after on (and not while the pick\'s current kickoff is ahead).',
    required: ['seq', 'type', 'at', 'pick_id', 'reveal_after', 'commitment', 'prev_hash', 'hash'],
    properties: {
      seq: { type: 'integer', minimum: 1 },
      type: { type: 'string', enum: [...LEDGER_ENTRY_TYPES] },
      at: { ...timestamp, description: 'Append time, exactly as hashed.' },
      pick_id: { type: 'string', format: 'uuid' },
      reveal_after: { ...timestamp, description: "The pick's kickoff when the entry was appended, rounded up to the quarter hour (UTC), exactly as hashed." },
      commitment: { ...HEX_256, description: 'hex SHA-256 of the RFC 8785 canonical JSON of {"pick": pick, "salt": salt}.' },
      prev_hash: { ...HEX_256, description: "The previous entry's hash; 64 zeros for seq 1." },
      hash: { ...HEX_256, description: 'hex SHA-256 of the canonical JSON of seq, type, at, pick_id, reveal_after, commitment and prev_hash.' },
      pick: { type: 'object', description: 'The Pick as it was committed, without ledger_seq and ledger_hash. Revealed entries only.' },
      salt: { ...HEX_256, description: '32 random bytes, hex. Revealed entries only.' },
    },
  },
  LedgerPage: {
    type: 'object',
    required: ['entries', 'next_after'],
    properties: {
      entries: { type: 'array', items: { $ref: `${SCHEMAS_PATH}LedgerEntry` } },
      next_after: { type: ['integer', 'null'], description: 'Ask again with after=next_after; null at the end of the chain.' },
    },
    examples: [{ entries: [], next_after: null }],
  },
  LedgerHead: {
    type: 'object',
    required: ['seq', 'hash', 'at'],
    properties: {
      seq: { type: 'integer', minimum: 0, description: '0 while the ledger is empty.' },
      hash: { ...HEX_256, description: '64 zeros while the ledger is empty.' },
      at: { type: ['string', 'null'], format: 'date-time' },
    },
    examples: [{ seq: 1042, hash: 'b5bb9d8014a0f9b1d61e21e796d78dccdf1352f23cd32812f4850b878ae4944c', at: '2026-11-22T12:00:00.000Z' }],
  },
  LedgerCheckpoints: {
    type: 'object',
    required: ['checkpoints'],
    properties: {
      checkpoints: {
        type: 'array',
        items: {
          type: 'object',
          required: ['checkpoint', 'seq', 'hash', 'at'],
          properties: { checkpoint: { ...timestamp, description: 'A midnight, 00:00 UTC.' }, seq: { type: 'integer', minimum: 1 }, hash: HEX_256, at: timestamp },
        },
      },
    },
    examples: [{ checkpoints: [{ checkpoint: '2026-11-23T00:00:00.000Z', seq: 1042, hash: 'b5bb9d8014a0f9b1d61e21e796d78dccdf1352f23cd32812f4850b878ae4944c', at: '2026-11-22T23:58:12.345Z' }] }],
  },
  WebhookEvent: {
    type: 'object',
    description: 'The body of a webhook delivery: the same bytes on every attempt of one delivery.',
    required: ['id', 'type', 'created_at', 'data'],
    properties: {
      id: { type: 'string', format: 'uuid', description: 'The event id (the same for every subscription that receives it).' },
      type: webhookEvent,
      created_at: { ...timestamp, description: 'When the event was committed.' },
      data: { $ref: `${SCHEMAS_PATH}Pick` },
      test: { type: 'boolean', const: true, description: 'Present (true) only on a test delivery.' },
    },
    examples: [{ id: '1c2d3e4f-5a6b-4c7d-8e9f-0a1b2c3d4e5f', type: 'pick.published', created_at: '2026-11-22T12:00:00.100Z', data: EXAMPLE_PICK }],
  },
  Error: {
    type: 'object',
    description: 'Every error answer: a stable code, a human-readable message and the extra fields of that code.',
    required: ['error', 'message'],
    properties: {
      error: { type: 'string', description: 'Stable error code (docs/API.md, "Errors"). Each response lists the codes it can carry.' },
      message: { type: 'string', description: 'For people; may change at any time.' },
      ...errorExtras,
    },
    examples: [{ error: 'invalid_parameter', message: 'limit must be an integer from 1 to 200', parameter: 'limit' }],
  },
} as const;

export type ApiSchemaName = keyof typeof API_SCHEMAS;

/** A reference to a named component. */
export function schemaRef(name: ApiSchemaName): { $ref: string } {
  return { $ref: `${SCHEMAS_PATH}${name}` };
}

/** The first example of a schema (of the named component it refers to), for the responses that return it. */
export function schemaExample(schema: object): unknown {
  const ref = (schema as { $ref?: unknown }).$ref;
  const target = (typeof ref === 'string' && ref.startsWith(SCHEMAS_PATH) ? API_SCHEMAS[ref.slice(SCHEMAS_PATH.length) as ApiSchemaName] : schema) as
    | { example?: unknown; examples?: readonly unknown[] }
    | undefined;
  return target?.example ?? target?.examples?.[0];
}

/** The error body of one response: Error, with `error` narrowed to the codes it can carry. */
export function errorSchemaFor(codes: readonly ErrorCode[]): object {
  return {
    allOf: [schemaRef('Error')],
    properties: { error: { type: 'string', enum: [...codes] } },
  };
}

/** An example error body of a code, from the one error table. */
export function errorExample(code: ErrorCode): Record<string, unknown> {
  const extras: Record<ErrorExtraField, unknown> = {
    parameter: 'limit',
    minimum_tier: 'growth',
    retry_after_seconds: 1200,
    resets_at: '2026-12-01T00:00:00.000Z',
    subscription_id: EXAMPLE_SUBSCRIPTION.subscription_id,
    limit: MAX_SUBSCRIPTIONS_PER_KEY,
    from: 'settled',
    to: 'published',
  };
  const row = ERRORS[code];
  return { error: code, message: row.message, ...Object.fromEntries(row.extras.map((name) => [name, extras[name]])) };
}

// Routes name their bodies through these (the webhook routes, the read routes, the public endpoint).
export const pickListSchema = schemaRef('PickList');
export const trackRecordSchema = schemaRef('TrackRecord');
export const matchAnalysisSchema = schemaRef('MatchAnalysis');
export const publicEnvelopeSchema = schemaRef('PublicPickList');
export const webhookSubscriptionSchema = schemaRef('WebhookSubscription');
export const ledgerPageSchema = schemaRef('LedgerPage');
export const ledgerHeadSchema = schemaRef('LedgerHead');
export const ledgerCheckpointsSchema = schemaRef('LedgerCheckpoints');
export const webhookSubscriptionWithSecretSchema = schemaRef('WebhookSubscriptionWithSecret');
export const webhookSubscriptionListSchema = schemaRef('WebhookSubscriptionList');
export const webhookDeliveryListSchema = schemaRef('WebhookDeliveryList');
export const createWebhookBodySchema = schemaRef('CreateWebhookSubscription');
export const createStreamTokenBodySchema = schemaRef('CreateStreamToken');
export const streamTokenSchema = schemaRef('StreamToken');
export const updateWebhookBodySchema = schemaRef('UpdateWebhookSubscription');

/** 204 responses: no body. */
export const noContentSchema = { type: 'null', description: 'No content.' } as const;
