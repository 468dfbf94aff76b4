/** A key's usage from the limiter's states (src/domain/usage-shape.ts), and its documented JSON. */
import { describe, expect, it } from 'vitest';
import { resourceJson } from '../../src/domain/resource-shape.js';
import { keyUsageOf, USAGE } from '../../src/domain/usage-shape.js';

describe('keyUsageOf', () => {
  it("counts the hour's requests as what its limit no longer admits, and its reset as a Date", () => {
    const usage = keyUsageOf({
      hourly: { limit: 1000, remaining: 988, resetAt: 1_795_350_060 },
      monthly: { limit: 100_000, used: 3456, remaining: 96_544, resetsAt: new Date('2026-12-01T00:00:00.000Z') },
    });
    expect(usage).toStrictEqual({
      hourly: { limit: 1000, used: 12, remaining: 988, resetsAt: new Date(1_795_350_060_000) },
      monthly: { limit: 100_000, used: 3456, remaining: 96_544, resetsAt: new Date('2026-12-01T00:00:00.000Z') },
    });
    expect(resourceJson(USAGE, { tier: 'growth', ...usage }, 'value')).toStrictEqual({
      tier: 'growth',
      hourly: { limit: 1000, used: 12, remaining: 988, resets_at: new Date(1_795_350_060_000).toISOString() },
      monthly: { limit: 100_000, used: 3456, remaining: 96_544, resets_at: '2026-12-01T00:00:00.000Z' },
    });
  });
});
