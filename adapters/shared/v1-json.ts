/** GraphQL results -> the documented snake_case JSON of spec section 2 (enums lower case). */
export interface V1PickNode {
  id: string;
  sport: string;
  league: string;
  homeTeam: string;
  awayTeam: string;
  kickoffAt: string;
  pick: string;
  odds: number;
  edgePct: number;
  confidence: number;
  status: string;
  settledAt: string | null;
  result: string | null;
}

export function v1Pick(node: V1PickNode) {
  return {
    id: node.id,
    sport: node.sport,
    league: node.league,
    home_team: node.homeTeam,
    away_team: node.awayTeam,
    kickoff_at: node.kickoffAt,
    pick: node.pick,
    odds: node.odds,
    edge_pct: node.edgePct,
    confidence: node.confidence,
    status: node.status.toLowerCase(),
    settled_at: node.settledAt,
    result: node.result === null ? null : node.result.toLowerCase(),
  };
}
