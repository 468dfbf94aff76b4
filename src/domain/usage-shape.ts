/**
 * An API key's usage (docs/API.md, "GET /api/v1/usage"), declared once: the hourly
 * and monthly windows, the GraphQL ApiKeyUsage (a key's windows, as ApiKey.usage shows them)
 * and CallerKeyUsage (the calling key's tier and windows: GET /api/v1/usage, with its documented
 * JSON Schema, example, selection and JSON), from src/domain/resource-shape.ts.
 */
import Type, { type Static } from 'typebox';
import { TIERS } from './api-key.js';
import type { HourlyState, MonthlyState } from './rate-limit.js';
import { dateTime, oneOf, resource, resourceObject } from './resource-shape.js';

/** The two windows have the same fields; their types differ in what they describe. */
function usageWindow(graphqlName: string, description: string, resetsAt: string) {
  return resourceObject(
    graphqlName,
    {
      limit: Type.Integer({ minimum: 1 }),
      used: Type.Integer({ minimum: 0 }),
      remaining: Type.Integer({ minimum: 0, description: 'Never negative.' }),
      resetsAt: dateTime({ description: resetsAt }),
    },
    { description },
  );
}

/** ApiKey.usage: a key's windows under its tier's limits. */
export const KEY_USAGE = resourceObject('ApiKeyUsage', {
  hourly: usageWindow(
    'HourlyUsage',
    'The rolling hour: X-RateLimit-Limit, the requests counted in it, X-RateLimit-Remaining.',
    'When the oldest counted request leaves the window (X-RateLimit-Reset as a timestamp).',
  ),
  monthly: usageWindow('MonthlyUsage', 'The calendar month (UTC) against the monthly cap.', '00:00 UTC on the first day of next month.'),
});

/** GET /api/v1/usage and GraphQL's apiKeyUsage: the calling key's tier, then its windows. */
export const USAGE = resource(
  'CallerKeyUsage',
  { tier: oneOf(TIERS, 'Tier'), ...KEY_USAGE.properties },
  {
    description: "The calling API key's tier and usage: the numbers the dashboard shows for it.",
    example: {
      tier: 'growth',
      hourly: { limit: 1000, used: 12, remaining: 988, resetsAt: new Date('2026-11-22T12:41:00.000Z') },
      monthly: { limit: 100000, used: 3456, remaining: 96544, resetsAt: new Date('2026-12-01T00:00:00.000Z') },
    },
  },
);

/** A key's usage from the limiter's states: the hour's count is what its limit no longer admits. */
export function keyUsageOf(states: { hourly: HourlyState; monthly: MonthlyState }): Static<typeof KEY_USAGE> {
  const { hourly, monthly } = states;
  return {
    hourly: { limit: hourly.limit, used: hourly.limit - hourly.remaining, remaining: hourly.remaining, resetsAt: new Date(hourly.resetAt * 1000) },
    monthly: { limit: monthly.limit, used: monthly.used, remaining: monthly.remaining, resetsAt: monthly.resetsAt },
  };
}
