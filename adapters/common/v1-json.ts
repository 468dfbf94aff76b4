/** GraphQL results -> the documented snake_case JSON of docs/API.md, "Resources" (enums lower case). */
import { v1PickJson, type V1PickJson } from '../../src/domain/pick-view.js';
import type { V1PickFragment } from './generated/graphql.js';
import { domainValue } from './graphql-enums.js';

/** The documented Pick (docs/API.md, "Pick") of a GraphQL Pick, built by the same function as webhook bodies. */
export function v1Pick(node: V1PickFragment): V1PickJson {
  return v1PickJson({
    id: node.id,
    sport: node.sport,
    league: node.league,
    homeTeam: node.homeTeam,
    awayTeam: node.awayTeam,
    kickoffAt: node.kickoffAt,
    description: node.pick,
    odds: node.odds,
    edgePct: node.edgePct,
    confidence: node.confidence,
    status: domainValue(node.status),
    settledAt: node.settledAt,
    result: node.result === null ? null : domainValue(node.result),
  });
}
