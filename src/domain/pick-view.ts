/**
 * The documented JSON shapes of a pick (docs/API.md, "Pick" and "Public pick"), built from the stored fields.
 * Events carry a PickSnapshot; webhook bodies build the documented Pick from it with v1PickJson,
 * and the REST adapters build it with the same function from GraphQL results
 * (adapters/common/v1-json.ts), so there is one documented Pick.
 */
import type { EdgeTier } from './odds.js';
import type { PickResult, PickStatus } from './pick.js';

export interface PickFields {
  id: string;
  sport: string;
  league: string;
  homeTeam: string;
  awayTeam: string;
  kickoffAt: Date;
  description: string;
  odds: number;
  edgePct: number;
  confidence: number;
  status: PickStatus;
  settledAt?: Date | null;
  result?: PickResult | null;
  market: string;
  selection: string;
  bookmakerName: string;
  bookmakerSlug: string;
  referenceFairOdds: number;
  edgePctPostTax: number;
  kellyFraction: number;
  edgeTier: EdgeTier;
  publishedAt?: Date | null;
}

/** Every stored field a reader of a pick may need (the GraphQL Pick is built on this). */
export interface PickRecord extends PickFields {
  taxRate: number;
  closingOdds?: number | null;
}

/** A pick as JSON (timestamps as ISO strings): what events carry across processes. */
export interface PickSnapshot {
  id: string;
  sport: string;
  league: string;
  homeTeam: string;
  awayTeam: string;
  kickoffAt: string;
  description: string;
  odds: number;
  edgePct: number;
  confidence: number;
  status: PickStatus;
  settledAt: string | null;
  result: PickResult | null;
  market: string;
  selection: string;
  bookmakerName: string;
  bookmakerSlug: string;
  referenceFairOdds: number;
  taxRate: number;
  edgePctPostTax: number;
  kellyFraction: number;
  edgeTier: EdgeTier;
  publishedAt: string | null;
  closingOdds: number | null;
}

export function toPickSnapshot(pick: PickRecord): PickSnapshot {
  return {
    id: pick.id,
    sport: pick.sport,
    league: pick.league,
    homeTeam: pick.homeTeam,
    awayTeam: pick.awayTeam,
    kickoffAt: pick.kickoffAt.toISOString(),
    description: pick.description,
    odds: pick.odds,
    edgePct: pick.edgePct,
    confidence: pick.confidence,
    status: pick.status,
    settledAt: pick.settledAt ? pick.settledAt.toISOString() : null,
    result: pick.result ?? null,
    market: pick.market,
    selection: pick.selection,
    bookmakerName: pick.bookmakerName,
    bookmakerSlug: pick.bookmakerSlug,
    referenceFairOdds: pick.referenceFairOdds,
    taxRate: pick.taxRate,
    edgePctPostTax: pick.edgePctPostTax,
    kellyFraction: pick.kellyFraction,
    edgeTier: pick.edgeTier,
    publishedAt: pick.publishedAt ? pick.publishedAt.toISOString() : null,
    closingOdds: pick.closingOdds ?? null,
  };
}

export function fromPickSnapshot(snapshot: PickSnapshot): PickRecord {
  return {
    ...snapshot,
    kickoffAt: new Date(snapshot.kickoffAt),
    settledAt: snapshot.settledAt ? new Date(snapshot.settledAt) : null,
    publishedAt: snapshot.publishedAt ? new Date(snapshot.publishedAt) : null,
  };
}

export interface V1PickJson {
  id: string;
  sport: string;
  league: string;
  home_team: string;
  away_team: string;
  kickoff_at: string;
  pick: string;
  odds: number;
  edge_pct: number;
  confidence: number;
  status: PickStatus;
  settled_at: string | null;
  result: PickResult | null;
}

/** The fields of the documented Pick (docs/API.md, "Pick"), timestamps as ISO strings: a PickSnapshot has them. */
export type V1PickSource = Pick<
  PickSnapshot,
  'id' | 'sport' | 'league' | 'homeTeam' | 'awayTeam' | 'kickoffAt' | 'description' | 'odds' | 'edgePct' | 'confidence' | 'status' | 'settledAt' | 'result'
>;

export function v1PickJson(pick: V1PickSource): V1PickJson {
  return {
    id: pick.id,
    sport: pick.sport,
    league: pick.league,
    home_team: pick.homeTeam,
    away_team: pick.awayTeam,
    kickoff_at: pick.kickoffAt,
    pick: pick.description,
    odds: pick.odds,
    edge_pct: pick.edgePct,
    confidence: pick.confidence,
    status: pick.status,
    settled_at: pick.settledAt,
    result: pick.result,
  };
}
