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
import { CURRENT_LEDGER_HEAD, LEDGER_CHECKPOINTS, LEDGER_CONSISTENCY_PROOF, LEDGER_ENTRY, LEDGER_INCLUSION_PROOF, LEDGER_PAGE, PICK_RECEIPT } from '../../src/domain/ledger-shape.js';
import { layoutExample, layoutJsonSchema, PUBLIC_PICK, V1_PICK } from '../../src/domain/pick-shape.js';
import { PUBLIC_PICK_LIST } from '../../src/domain/public-picks-shape.js';
import { requestBodyJsonSchema, resourceJson, resourceJsonSchema } from '../../src/domain/resource-shape.js';
import { CREATE_STREAM_TOKEN_BODY, STREAM_TOKEN } from '../../src/domain/stream-token-shape.js';
import { MATCH_ANALYSIS } from '../../src/domain/match-analysis-shape.js';
import { TRACK_RECORD } from '../../src/domain/track-record-shape.js';
import { MAX_SUBSCRIPTIONS_PER_KEY, WEBHOOK_EVENT_TYPES } from '../../src/domain/webhook.js';
import {
  WEBHOOK_DELIVERY,
  WEBHOOK_DELIVERY_EXAMPLE,
  WEBHOOK_SUBSCRIPTION,
  WEBHOOK_SUBSCRIPTION_EXAMPLE,
  webhookSubscriptionWithSecretJsonSchema,
} from '../../src/domain/webhook-shape.js';
import { CREATE_WEBHOOK_SUBSCRIPTION_BODY, UPDATE_WEBHOOK_SUBSCRIPTION_BODY } from '../../src/domain/webhook-body-shape.js';

const timestamp = { type: 'string', format: 'date-time' } as const;
const SCHEMAS_PATH = '#/components/schemas/';
/** How a declaration refers to a nested value documented as a component of its own (resourceJsonSchema). */
const componentRef = (name: string) => ({ $ref: `${SCHEMAS_PATH}${name}` });

const EXAMPLE_PICK = layoutExample(V1_PICK);

const EXAMPLE_SUBSCRIPTION = resourceJson(WEBHOOK_SUBSCRIPTION, WEBHOOK_SUBSCRIPTION_EXAMPLE, 'value');

const pick = {
  ...layoutJsonSchema(V1_PICK, 'A published or settled pick. Picks held for review are never returned.'),
  examples: [EXAMPLE_PICK],
};

const nextCursor = {
  type: ['string', 'null'],
  description: 'Opaque; pass it unchanged as `cursor` for the next page. null when there are no more results.',
} as const;

const webhookEvent = { type: 'string', enum: [...WEBHOOK_EVENT_TYPES] } as const;

/**
 * A REST list of a named component: `data`, `count` and, for a paged list, `next_cursor` (the
 * envelope every /api/v1 list shares, docs/API.md "Lists and cursors").
 */
function listSchema(
  item: string,
  options: { description?: string; count?: string; nextCursor?: true; items?: { maxItems?: number; description?: string }; example: object },
): Record<string, unknown> {
  return {
    type: 'object',
    ...(options.description === undefined ? {} : { description: options.description }),
    required: options.nextCursor ? ['data', 'next_cursor', 'count'] : ['data', 'count'],
    properties: {
      data: { type: 'array', items: componentRef(item), ...options.items },
      ...(options.nextCursor ? { next_cursor: nextCursor } : {}),
      count: { type: 'integer', minimum: 0, ...(options.count === undefined ? {} : { description: options.count }) },
    },
    examples: [options.example],
  };
}

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
  PickList: listSchema('Pick', {
    description: 'One page of picks, kickoff_at descending, then id descending.',
    count: 'Number of picks in this page (not a total).',
    nextCursor: true,
    example: { data: [EXAMPLE_PICK], next_cursor: encodePickCursor({ kickoffAt: new Date(EXAMPLE_PICK.kickoff_at), id: EXAMPLE_PICK.id }), count: 1 },
  }),
  TrackRecord: resourceJsonSchema(TRACK_RECORD),
  MatchAnalysis: resourceJsonSchema(MATCH_ANALYSIS),
  WebhookSubscription: resourceJsonSchema(WEBHOOK_SUBSCRIPTION),
  WebhookSubscriptionWithSecret: webhookSubscriptionWithSecretJsonSchema(),
  WebhookSubscriptionList: listSchema('WebhookSubscription', {
    items: { maxItems: MAX_SUBSCRIPTIONS_PER_KEY, description: 'Oldest first.' },
    example: { data: [EXAMPLE_SUBSCRIPTION], count: 1 },
  }),
  WebhookDelivery: resourceJsonSchema(WEBHOOK_DELIVERY),
  WebhookDeliveryList: listSchema('WebhookDelivery', {
    description: 'One page of deliveries, newest first.',
    count: 'Number of deliveries in this page.',
    nextCursor: true,
    example: { data: [resourceJson(WEBHOOK_DELIVERY, WEBHOOK_DELIVERY_EXAMPLE, 'value')], next_cursor: null, count: 1 },
  }),
  CreateWebhookSubscription: requestBodyJsonSchema(CREATE_WEBHOOK_SUBSCRIPTION_BODY),
  UpdateWebhookSubscription: requestBodyJsonSchema(UPDATE_WEBHOOK_SUBSCRIPTION_BODY),
  CreateStreamToken: requestBodyJsonSchema(CREATE_STREAM_TOKEN_BODY),
  StreamToken: resourceJsonSchema(STREAM_TOKEN),
  PublicPick: layoutJsonSchema(PUBLIC_PICK),
  PublicPickList: resourceJsonSchema(PUBLIC_PICK_LIST, componentRef),
  LedgerEntry: resourceJsonSchema(LEDGER_ENTRY),
  LedgerPage: resourceJsonSchema(LEDGER_PAGE, componentRef),
  LedgerHead: resourceJsonSchema(CURRENT_LEDGER_HEAD),
  LedgerCheckpoints: resourceJsonSchema(LEDGER_CHECKPOINTS),
  LedgerInclusionProof: resourceJsonSchema(LEDGER_INCLUSION_PROOF),
  LedgerConsistencyProof: resourceJsonSchema(LEDGER_CONSISTENCY_PROOF),
  PickReceipt: resourceJsonSchema(PICK_RECEIPT),
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
  return componentRef(name);
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
    subscription_id: WEBHOOK_SUBSCRIPTION_EXAMPLE.id,
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
export const ledgerInclusionProofSchema = schemaRef('LedgerInclusionProof');
export const ledgerConsistencyProofSchema = schemaRef('LedgerConsistencyProof');
export const pickReceiptSchema = schemaRef('PickReceipt');
export const webhookSubscriptionWithSecretSchema = schemaRef('WebhookSubscriptionWithSecret');
export const webhookSubscriptionListSchema = schemaRef('WebhookSubscriptionList');
export const webhookDeliveryListSchema = schemaRef('WebhookDeliveryList');
export const createWebhookBodySchema = schemaRef('CreateWebhookSubscription');
export const createStreamTokenBodySchema = schemaRef('CreateStreamToken');
export const streamTokenSchema = schemaRef('StreamToken');
export const updateWebhookBodySchema = schemaRef('UpdateWebhookSubscription');

/** 204 responses: no body. */
export const noContentSchema = { type: 'null', description: 'No content.' } as const;
