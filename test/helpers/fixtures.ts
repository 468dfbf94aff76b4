/** Inputs shared by the integration suites. */
export function pickInput(overrides: Record<string, unknown> = {}): Record<string, unknown> {
  return {
    sport: 'soccer',
    league: 'Premier League',
    homeTeam: 'Arsenal',
    awayTeam: 'Chelsea',
    kickoffAt: '2026-12-01T15:00:00Z',
    selection: 'Arsenal',
    bookmaker: { name: 'Bet365', slug: 'bet365' },
    odds: 2.2,
    referenceFairOdds: 2.0,
    confidence: 70,
    ...overrides,
  };
}

export const PICK_FIELDS = `id sport league homeTeam awayTeam kickoffAt pick market selection bookmaker { name slug }
  odds referenceFairOdds taxRate edgePct edgePctPostTax kellyFraction edgeTier confidence status result closingOdds publishedAt settledAt stakePct`;

export const PUBLISH = `mutation($input: PublishPickInput!) { publishPick(input: $input) { ${PICK_FIELDS} } }`;
export const APPROVE = `mutation($id: ID!) { approvePick(id: $id) { ${PICK_FIELDS} } }`;
export const HOLD = `mutation($id: ID!) { holdPick(id: $id) { ${PICK_FIELDS} } }`;
export const SETTLE = `mutation($input: SettlePickInput!) { settlePick(input: $input) { ${PICK_FIELDS} } }`;
export const CREATE_KEY = `mutation($input: CreateApiKeyInput!) { createApiKey(input: $input) { key apiKey { id tier label prefix active createdAt revokedAt } } }`;
export const REVOKE_KEY = `mutation($id: ID!) { revokeApiKey(id: $id) { id active revokedAt } }`;
export const UPSERT_ANALYSIS = `mutation($input: UpsertMatchAnalysisInput!) { upsertMatchAnalysis(input: $input) { matchId analysis createdAt updatedAt } }`;
