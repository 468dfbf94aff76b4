/**
 * GET /api/v1/usage: the calling key's tier, hourly window and monthly usage, the numbers the
 * dashboard shows. It is counted against its own window (60 reads per key per hour,
 * src/services/limits/usage-window.ts), never against the limits it reports, so it still
 * answers when they are exhausted (docs/RATE_LIMITING.md).
 */
import { UsageDocument } from '../common/generated/graphql.js';
import { restRoute, type RestRoute } from './routes.js';

/** A route counted against the usage endpoint's own window instead of the key's limits. */
export type UsageMeteredRoute = RestRoute & { usageEndpoint: true };

const windowSchema = (description: string, resetsAt: string) => ({
  type: 'object',
  description,
  required: ['limit', 'used', 'remaining', 'resets_at'],
  properties: {
    limit: { type: 'integer', minimum: 1 },
    used: { type: 'integer', minimum: 0 },
    remaining: { type: 'integer', minimum: 0, description: 'Never negative.' },
    resets_at: { type: 'string', format: 'date-time', description: resetsAt },
  },
});

export const usageSchema = {
  type: 'object',
  required: ['tier', 'hourly', 'monthly'],
  properties: {
    tier: { type: 'string', enum: ['starter', 'growth', 'enterprise'] },
    hourly: windowSchema(
      'The rolling hour: X-RateLimit-Limit, the requests counted in it, X-RateLimit-Remaining.',
      'When the oldest counted request leaves the window (X-RateLimit-Reset as a timestamp).',
    ),
    monthly: windowSchema('The calendar month (UTC) against the monthly cap.', '00:00 UTC on the first day of next month.'),
  },
  example: {
    tier: 'growth',
    hourly: { limit: 1000, used: 12, remaining: 988, resets_at: '2026-11-22T12:41:00.000Z' },
    monthly: { limit: 100000, used: 3456, remaining: 96544, resets_at: '2026-12-01T00:00:00.000Z' },
  },
};

export const USAGE_ROUTE: UsageMeteredRoute = {
  ...restRoute({
    operationId: 'getUsage',
    method: 'GET',
    url: '/api/v1/usage',
    summary: "The calling key's tier and usage",
    description:
      "The key's tier, its rolling hourly window and its monthly usage: the numbers the dashboard shows. Not counted against the hourly limit or the monthly cap, and answered when they are exhausted; it has its own limit of 60 reads per key per clock hour (UTC), then 429 `rate_limit_exceeded` with `Retry-After`. The rate-limit headers describe the key's hourly and monthly standing, as on every other route. Every tier; the admin token is not a key (401 `invalid_api_key`, as everywhere on /api/v1).",
    document: UsageDocument,
    params: [],
    responseSchema: usageSchema,
    // Its own window's 429 only: it is never counted against the monthly cap.
    errors: [401, 404, 'rate_limit_exceeded'],
    toBody: ({ apiKeyUsage: usage }) => ({
      tier: usage.tier.toLowerCase(),
      hourly: { limit: usage.hourly.limit, used: usage.hourly.used, remaining: usage.hourly.remaining, resets_at: usage.hourly.resetsAt },
      monthly: { limit: usage.monthly.limit, used: usage.monthly.used, remaining: usage.monthly.remaining, resets_at: usage.monthly.resetsAt },
    }),
  }),
  usageEndpoint: true,
};
