/**
 * Read models straight from SQL rows. Lists and the public feed are read-only, so they skip
 * entity hydration and change tracking (which cost more CPU than the query itself) and map
 * each row to a plain PickRecord. The column list is explicit so the query fetches only
 * what the record needs.
 */
import type { PickRecord } from '../domain/pick-view.js';

export const PICK_COLUMNS = [
  'id',
  'sport',
  'league',
  'home_team',
  'away_team',
  'kickoff_at',
  'market',
  'selection',
  'description',
  'bookmaker_name',
  'bookmaker_slug',
  'odds',
  'reference_fair_odds',
  'tax_rate',
  'edge_pct',
  'edge_pct_post_tax',
  'kelly_fraction',
  'edge_tier',
  'confidence',
  'status',
  'result',
  'closing_odds',
  'published_at',
  'settled_at',
].join(', ');

type Row = Record<string, unknown>;

// numeric columns arrive as strings from node-postgres and as numbers from PGlite.
const num = (value: unknown): number => (typeof value === 'number' ? value : Number(value));
const date = (value: unknown): Date => (value instanceof Date ? value : new Date(String(value)));
const dateOrNull = (value: unknown): Date | null => (value == null ? null : date(value));

export function pickRecordFromRow(row: Row): PickRecord {
  return {
    id: String(row.id),
    sport: String(row.sport),
    league: String(row.league),
    homeTeam: String(row.home_team),
    awayTeam: String(row.away_team),
    kickoffAt: date(row.kickoff_at),
    market: String(row.market),
    selection: String(row.selection),
    description: String(row.description),
    bookmakerName: String(row.bookmaker_name),
    bookmakerSlug: String(row.bookmaker_slug),
    odds: num(row.odds),
    referenceFairOdds: num(row.reference_fair_odds),
    taxRate: num(row.tax_rate),
    edgePct: num(row.edge_pct),
    edgePctPostTax: num(row.edge_pct_post_tax),
    kellyFraction: num(row.kelly_fraction),
    edgeTier: row.edge_tier as PickRecord['edgeTier'],
    confidence: num(row.confidence),
    status: row.status as PickRecord['status'],
    result: (row.result ?? null) as PickRecord['result'],
    closingOdds: row.closing_odds == null ? null : num(row.closing_odds),
    publishedAt: dateOrNull(row.published_at),
    settledAt: dateOrNull(row.settled_at),
  };
}
