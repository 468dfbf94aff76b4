/**
 * JSON Schemas of the documented bodies (spec sections 2 and 7). They are attached to the
 * Fastify routes for documentation only: @fastify/swagger turns them into the OpenAPI
 * document, and the tests validate real responses against that document.
 */
import { SPORT_SLUGS } from '../../src/domain/sports.js';

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
  },
} as const;
