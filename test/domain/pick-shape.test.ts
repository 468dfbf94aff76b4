/**
 * The pick's one declaration and its layouts: the documented names (docs/API.md, "Pick" and
 * "Public pick") are written out here by hand, so a layout that drifts from the docs fails.
 */
import { describe, expect, it } from 'vitest';
import {
  fromPickSnapshot,
  layoutJsonSchema,
  PUBLIC_PICK,
  toPickSnapshot,
  v1PickJson,
  V1_PICK,
  withNulls,
  type PickRecord,
} from '../../src/domain/pick-shape.js';

const RECORD: PickRecord = {
  id: '5f0c8a4e-4c1b-4d8e-9f3a-2b7c6d5e4f30',
  sport: 'soccer',
  league: 'Premier League',
  homeTeam: 'Arsenal',
  awayTeam: 'Chelsea',
  kickoffAt: new Date('2026-12-01T15:00:00.000Z'),
  description: 'Arsenal to win @ 2.2',
  odds: 2.2,
  edgePct: 10,
  confidence: 70,
  status: 'settled',
  settledAt: new Date('2026-12-01T17:05:00.000Z'),
  result: 'won',
  market: 'h2h',
  selection: 'Arsenal',
  bookmakerName: 'Bet365',
  bookmakerSlug: 'bet365',
  referenceFairOdds: 2,
  taxRate: 0,
  edgePctPostTax: 0.1,
  kellyFraction: 0.083333,
  edgeTier: 'big_edge',
  closingOdds: 2.05,
  publishedAt: new Date('2026-11-30T09:00:00.000Z'),
  line: null,
  stakePct: 2,
  warnings: ['single_sharp_reference', 'stale_close'],
  finalHomeScore: 2,
  finalAwayScore: 1,
  ledgerSeq: 7,
  ledgerHash: 'a'.repeat(64),
  availabilityStatus: 'moved',
  availabilityOddsNow: 2.05,
  availabilityEdgePctNow: -1.2,
  availabilityCheckedAt: new Date('2026-12-01T14:59:00.000Z'),
  availabilitySince: new Date('2026-12-01T10:00:00.000Z'),
  bestOddsSincePublished: 2.25,
};

describe('the pick shape', () => {
  it('builds the documented Pick with its names, in the documented order', () => {
    const json = v1PickJson(toPickSnapshot(RECORD));
    expect(Object.keys(json)).toEqual(['id', 'sport', 'league', 'home_team', 'away_team', 'kickoff_at', 'pick', 'odds', 'edge_pct', 'confidence', 'status', 'settled_at', 'result', 'stake_pct', 'market', 'selection', 'line', 'warnings', 'closing_odds', 'final_score', 'ledger_seq', 'ledger_hash', 'bookmaker', 'reference_fair_odds', 'edge_pct_post_tax', 'kelly_fraction', 'published_at', 'availability', 'best_odds_since_published']);
    expect(json).toMatchObject({ closing_odds: 2.05, final_score: { home: 2, away: 1 }, ledger_seq: 7 });
    // Where to bet: the post-tax edge in percent like edge_pct (stored as the fraction 0.1).
    expect(json).toMatchObject({ bookmaker: { name: 'Bet365', slug: 'bet365' }, reference_fair_odds: 2, edge_pct_post_tax: 10, kelly_fraction: 0.083333, published_at: '2026-11-30T09:00:00.000Z' });
    expect(json).toMatchObject({ home_team: 'Arsenal', kickoff_at: '2026-12-01T15:00:00.000Z', pick: 'Arsenal to win @ 2.2', settled_at: '2026-12-01T17:05:00.000Z', result: 'won' });
    expect(json.warnings).toEqual(['single_sharp_reference', 'stale_close']);
    expect(json.availability).toEqual({ status: 'moved', odds_now: 2.05, edge_pct_now: -1.2, checked_at: '2026-12-01T14:59:00.000Z', since: '2026-12-01T10:00:00.000Z' });
    expect(json.best_odds_since_published).toBe(2.25);
  });

  it('documents a nullable field as the type or null, and the v1 status as the visible statuses only', () => {
    const schema = layoutJsonSchema(V1_PICK) as { required: string[]; properties: Record<string, Record<string, unknown>> };
    expect(schema.required).toEqual(Object.keys(V1_PICK));
    expect(schema.properties.settled_at).toMatchObject({ type: ['string', 'null'], format: 'date-time' });
    expect(schema.properties.result!.enum).toEqual(['won', 'lost', 'void', 'half_won', 'half_lost', null]);
    expect(schema.properties.status!.enum).toEqual(['published', 'settled']);
    expect(schema.properties.confidence).toMatchObject({ type: 'integer', minimum: 0, maximum: 100 });
    expect(schema.properties.published_at).toMatchObject({ type: 'string', format: 'date-time' });
    expect(schema.properties.edge_pct_post_tax!.description).toMatch(/percent/);
    expect(schema.properties.edge_pct_post_tax).not.toHaveProperty('percent');
    expect(schema.properties.warnings).toMatchObject({ type: 'array', items: { type: 'string', enum: ['single_sharp_reference', 'wide_reference_market', 'stale_close'] } });
  });

  it('nests the public pick as documented, its publishedAt never null', () => {
    const schema = layoutJsonSchema(PUBLIC_PICK) as { required: string[]; properties: Record<string, { required?: string[]; type?: unknown }> };
    expect(schema.required).toEqual(['id', 'match', 'market', 'selection', 'line', 'bookmaker', 'odds', 'edgePctPostTax', 'kellyFraction', 'tier', 'publishedAt', 'stakePct', 'warnings']);
    expect(schema.properties.match!.required).toEqual(['home', 'away', 'league', 'sport', 'kickoff']);
    expect(schema.properties.odds!.required).toEqual(['book', 'referenceFair']);
    expect(schema.properties.publishedAt!.type).toBe('string');
  });

  it('carries a pick across processes and back unchanged; a nullable field left out is null', () => {
    expect(fromPickSnapshot(JSON.parse(JSON.stringify(toPickSnapshot(RECORD))))).toEqual(RECORD);
    const { settledAt: _s, result: _r, closingOdds: _c, publishedAt: _p, line: _l, ...fresh } = RECORD;
    expect(toPickSnapshot(fresh)).toMatchObject({ settledAt: null, result: null, closingOdds: null, publishedAt: null, line: null });
    expect(withNulls(fresh)).toMatchObject({ settledAt: null, result: null, closingOdds: null, publishedAt: null });
  });

  it('starts a pick made without its availability as unknown, never null', () => {
    const { availabilityStatus: _status, availabilityCheckedAt: _checked, ...fresh } = RECORD;
    expect(withNulls(fresh)).toMatchObject({ availabilityStatus: 'unknown', availabilityCheckedAt: null });
    expect(toPickSnapshot(fresh)).toMatchObject({ availabilityStatus: 'unknown', availabilityCheckedAt: null });
    const schema = layoutJsonSchema(V1_PICK) as { properties: { availability: { required: string[]; properties: Record<string, { enum?: unknown[] }> } } };
    expect(schema.properties.availability.required).toEqual(['status', 'odds_now', 'edge_pct_now', 'checked_at', 'since']);
    expect(schema.properties.availability.properties.status!.enum).toEqual(['unknown', 'available', 'moved', 'gone']);
    expect(layoutJsonSchema(PUBLIC_PICK)).not.toHaveProperty('properties.availability');
  });
});
