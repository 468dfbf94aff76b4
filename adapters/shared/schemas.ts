/**
 * JSON Schemas of the documented bodies (spec sections 2 and 7). They are attached to the
 * Fastify routes for documentation only: @fastify/swagger turns them into the OpenAPI
 * document, and the tests validate real responses against that document.
 */
import { SPORT_SLUGS } from '../../src/domain/sports.js';
import { MAX_SUBSCRIPTIONS_PER_KEY, WEBHOOK_DELIVERY_STATUSES, WEBHOOK_EVENT_TYPES, WEBHOOK_SUBSCRIPTION_STATUSES } from '../../src/domain/webhook.js';
import { MAX_WEBHOOK_URL_LENGTH } from '../../src/domain/webhook-url.js';

const timestamp = { type: 'string', format: 'date-time' } as const;
const nullableTimestamp = { type: ['string', 'null'], format: 'date-time' } as const;

export const pickSchema = {
  type: 'object',
  additionalProperties: false,
  required: ['id', 'sport', 'league', 'home_team', 'away_team', 'kickoff_at', 'pick', 'odds', 'edge_pct', 'confidence', 'status', 'settled_at', 'result'],
  properties: {
    id: { type: 'string', format: 'uuid', description: 'Also the matchId of the match-analysis endpoint.' },
    sport: { type: 'string', description: 'Sport slug, e.g. soccer, tennis.' },
    league: { type: 'string' },
    home_team: { type: 'string' },
    away_team: { type: 'string' },
    kickoff_at: timestamp,
    pick: { type: 'string', description: 'Human-readable description of the bet.' },
    odds: { type: 'number', description: 'Decimal odds.' },
    edge_pct: { type: 'number', description: 'Edge in percent: (odds / referenceFairOdds - 1) x 100.' },
    confidence: { type: 'integer', minimum: 0, maximum: 100 },
    status: { type: 'string', enum: ['published', 'settled'] },
    settled_at: nullableTimestamp,
    result: { type: ['string', 'null'], enum: ['won', 'lost', 'void', 'half_won', 'half_lost', null] },
  },
} as const;

export const pickListSchema = {
  type: 'object',
  additionalProperties: false,
  required: ['data', 'next_cursor', 'count'],
  properties: {
    data: { type: 'array', items: pickSchema },
    next_cursor: { type: ['string', 'null'], description: 'Pass as `cursor` for the next page; null when no more results.' },
    count: { type: 'integer', description: 'Number of picks in this page.' },
  },
} as const;

export const trackRecordSchema = {
  type: 'object',
  additionalProperties: false,
  required: ['overall', 'per_sport', 'series'],
  properties: {
    overall: {
      type: 'object',
      additionalProperties: false,
      required: ['roi_pct', 'win_rate', 'total_settled', 'clv_avg_pct', 'edge_avg_pct'],
      properties: {
        roi_pct: { type: 'number' },
        win_rate: { type: 'number', description: 'Percent of non-void picks won (half wins count).' },
        total_settled: { type: 'integer', description: 'Settled picks in the window, void included.' },
        clv_avg_pct: { type: 'number' },
        edge_avg_pct: { type: 'number' },
      },
    },
    per_sport: {
      type: 'array',
      items: {
        type: 'object',
        additionalProperties: false,
        required: ['sport', 'roi_pct', 'total_settled'],
        properties: { sport: { type: 'string' }, roi_pct: { type: 'number' }, total_settled: { type: 'integer' } },
      },
    },
    series: {
      type: 'array',
      items: {
        type: 'object',
        additionalProperties: false,
        required: ['date', 'cumulative_pnl_pct'],
        properties: { date: { type: 'string', format: 'date' }, cumulative_pnl_pct: { type: 'number' } },
      },
    },
  },
} as const;

export const matchAnalysisSchema = {
  type: 'object',
  additionalProperties: false,
  required: ['match_id', 'analysis', 'created_at'],
  properties: {
    match_id: { type: 'string', format: 'uuid', description: 'Equals the pick id.' },
    analysis: { type: 'string' },
    created_at: timestamp,
  },
} as const;

export const publicPickSchema = {
  type: 'object',
  additionalProperties: false,
  required: ['id', 'match', 'market', 'selection', 'bookmaker', 'odds', 'edgePctPostTax', 'kellyFraction', 'tier', 'publishedAt'],
  properties: {
    id: { type: 'string', format: 'uuid' },
    match: {
      type: 'object',
      additionalProperties: false,
      required: ['home', 'away', 'league', 'sport', 'kickoff'],
      properties: {
        home: { type: 'string' },
        away: { type: 'string' },
        league: { type: 'string' },
        sport: { type: 'string', enum: [...SPORT_SLUGS] },
        kickoff: timestamp,
      },
    },
    market: { type: 'string', description: 'Market code; h2h = head to head.' },
    selection: { type: 'string', description: 'The chosen side: a team name or "Draw".' },
    bookmaker: {
      type: 'object',
      additionalProperties: false,
      required: ['name', 'slug'],
      properties: { name: { type: 'string' }, slug: { type: 'string' } },
    },
    odds: {
      type: 'object',
      additionalProperties: false,
      required: ['book', 'referenceFair'],
      properties: { book: { type: 'number' }, referenceFair: { type: 'number' } },
    },
    edgePctPostTax: { type: 'number', description: 'Decimal fraction, e.g. 0.0858.' },
    kellyFraction: { type: 'number', description: 'Decimal fraction.' },
    tier: { type: 'string', enum: ['big_edge', 'stark', 'standard'] },
    publishedAt: timestamp,
  },
} as const;

export const publicEnvelopeSchema = {
  type: 'object',
  additionalProperties: false,
  required: ['generatedAt', 'count', 'picks'],
  properties: {
    generatedAt: timestamp,
    count: { type: 'integer' },
    picks: { type: 'array', items: publicPickSchema },
  },
} as const;

const webhookEventSchema = { type: 'string', enum: [...WEBHOOK_EVENT_TYPES] } as const;
const webhookUrlSchema = {
  type: 'string',
  format: 'uri',
  maxLength: MAX_WEBHOOK_URL_LENGTH,
  description: 'https URL of a publicly reachable host: no user:password, no fragment; every address it resolves to must be public unicast.',
} as const;
const webhookEventsSchema = {
  type: 'array',
  minItems: 1,
  uniqueItems: true,
  items: webhookEventSchema,
  description: 'Event types to deliver; each at most once.',
} as const;

const webhookSubscriptionProperties = {
  subscription_id: { type: 'string', format: 'uuid' },
  url: { type: 'string' },
  events: { type: 'array', items: webhookEventSchema },
  status: { type: 'string', enum: [...WEBHOOK_SUBSCRIPTION_STATUSES], description: 'exhausted after the last retry of a delivery failed; PATCH status "active" to resume.' },
  created_at: timestamp,
} as const;

/** Spec 2.5 plus DESIGN 3's status and created_at; hmac_secret is never part of it. */
export const webhookSubscriptionSchema = {
  type: 'object',
  additionalProperties: false,
  required: ['subscription_id', 'url', 'events', 'status', 'created_at'],
  properties: webhookSubscriptionProperties,
} as const;

/** Creation and rotation only: the one time the secret is shown. */
export const webhookSubscriptionWithSecretSchema = {
  type: 'object',
  additionalProperties: false,
  required: ['subscription_id', 'url', 'events', 'hmac_secret', 'status', 'created_at'],
  properties: {
    ...webhookSubscriptionProperties,
    hmac_secret: {
      type: 'string',
      pattern: '^whsec_',
      description: 'Key of the X-Service-Signature HMAC (and of the Standard Webhooks signature). Shown only now; stored encrypted.',
    },
  },
} as const;

export const webhookSubscriptionListSchema = {
  type: 'object',
  additionalProperties: false,
  required: ['data', 'count'],
  properties: {
    data: { type: 'array', items: webhookSubscriptionSchema, maxItems: MAX_SUBSCRIPTIONS_PER_KEY, description: 'Oldest first.' },
    count: { type: 'integer' },
  },
} as const;

export const webhookDeliveryListSchema = {
  type: 'object',
  additionalProperties: false,
  required: ['data', 'next_cursor', 'count'],
  properties: {
    data: {
      type: 'array',
      description: 'Newest first.',
      items: {
        type: 'object',
        additionalProperties: false,
        required: ['delivery_id', 'event_id', 'event_type', 'status', 'attempt_count', 'next_attempt_at', 'last_status_code', 'last_error', 'created_at', 'attempts'],
        properties: {
          delivery_id: { type: 'string', format: 'uuid', description: 'The X-Service-Delivery header, stable across retries.' },
          event_id: { type: 'string', format: 'uuid', description: 'The `id` of the delivery body.' },
          event_type: webhookEventSchema,
          status: { type: 'string', enum: [...WEBHOOK_DELIVERY_STATUSES] },
          attempt_count: { type: 'integer', minimum: 0 },
          next_attempt_at: { ...nullableTimestamp, description: 'When the next attempt is due; null unless pending.' },
          last_status_code: { type: ['integer', 'null'], description: 'HTTP status of the last answer; null when none arrived.' },
          last_error: { type: ['string', 'null'] },
          created_at: timestamp,
          attempts: {
            type: 'array',
            description: 'Oldest first.',
            items: {
              type: 'object',
              additionalProperties: false,
              required: ['attempt_number', 'attempted_at', 'duration_ms', 'status_code', 'error_kind', 'response_body'],
              properties: {
                attempt_number: { type: 'integer', minimum: 1 },
                attempted_at: timestamp,
                duration_ms: { type: 'integer', minimum: 0 },
                status_code: { type: ['integer', 'null'] },
                error_kind: {
                  type: ['string', 'null'],
                  description: 'null on success; otherwise http_status, timeout, connection, tls, redirect or invalid_url.',
                },
                response_body: { type: ['string', 'null'], description: 'The first 4 KiB of the answer.' },
              },
            },
          },
        },
      },
    },
    next_cursor: { type: ['string', 'null'], description: 'Pass as `cursor` for the next page; null when no more results.' },
    count: { type: 'integer', description: 'Number of deliveries in this page.' },
  },
} as const;

/** 204 responses: no body. */
export const noContentSchema = { type: 'null', description: 'No content.' } as const;

/** Request bodies (Content-Type: application/json). Unknown fields are ignored. */
export const createWebhookBodySchema = {
  type: 'object',
  required: ['url', 'events'],
  properties: { url: webhookUrlSchema, events: webhookEventsSchema },
} as const;

export const updateWebhookBodySchema = {
  type: 'object',
  description: 'At least one of url, events, status.',
  anyOf: [{ required: ['url'] }, { required: ['events'] }, { required: ['status'] }],
  properties: {
    url: webhookUrlSchema,
    events: webhookEventsSchema,
    status: { type: 'string', enum: ['active'], description: 'Reactivates an exhausted subscription.' },
  },
} as const;

export const errorSchema = {
  type: 'object',
  required: ['error', 'message'],
  properties: {
    error: { type: 'string', description: 'Stable error code (spec section 7).' },
    message: { type: 'string' },
    parameter: { type: 'string', description: 'invalid_parameter: the offending parameter.' },
    minimum_tier: { type: 'string', enum: ['growth', 'enterprise'], description: 'tier_upgrade_required only.' },
    retry_after_seconds: { type: 'integer', description: 'rate_limit_exceeded only.' },
    resets_at: { ...timestamp, description: 'monthly_quota_exceeded only.' },
    subscription_id: { type: 'string', format: 'uuid', description: 'duplicate_url only: the existing subscription for this url.' },
    limit: { type: 'integer', description: 'subscription_limit only: subscriptions allowed per API key.' },
  },
} as const;
