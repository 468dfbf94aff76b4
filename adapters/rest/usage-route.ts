/**
 * GET /api/v1/usage: the calling key's tier, hourly window and monthly usage, the numbers the
 * dashboard shows. It is counted against its own window (60 reads per key per hour,
 * src/services/limits/usage-window.ts), never against the limits it reports, so it still
 * answers when they are exhausted (docs/RATE_LIMITING.md).
 */
import { resourceJson, resourceJsonSchema } from '../../src/domain/resource-shape.js';
import { USAGE } from '../../src/domain/usage-shape.js';
import { UsageDocument } from '../common/generated/graphql.js';
import { restRoute, type RestRoute } from './routes.js';

/** A route counted against the usage endpoint's own window instead of the key's limits. */
export type UsageMeteredRoute = RestRoute & { usageEndpoint: true };

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
    // The body, its schema and the selection come from the declared usage (src/domain/usage-shape.ts).
    responseSchema: resourceJsonSchema(USAGE),
    // Its own window's 429 only: it is never counted against the monthly cap.
    errors: [401, 404, 'rate_limit_exceeded'],
    toBody: ({ apiKeyUsage: usage }) => resourceJson(USAGE, usage),
  }),
  usageEndpoint: true,
};
