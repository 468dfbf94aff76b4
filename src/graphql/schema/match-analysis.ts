import { MINIMUM_TIER } from '../../domain/access.js';
import { MATCH_ANALYSIS } from '../../domain/match-analysis-shape.js';
import { builder } from '../builder.js';
import { resourceObjectType } from '../resource-types.js';

export const MatchAnalysisRef = resourceObjectType(MATCH_ANALYSIS);

builder.queryFields((t) => ({
  matchAnalysis: t.field({
    type: MatchAnalysisRef,
    nullable: true,
    description: 'The analysis of a visible pick; null when there is none.',
    authScopes: { tier: MINIMUM_TIER.matchAnalysis },
    args: { matchId: t.arg.id({ required: true }) },
    resolve: (_root, args, context) =>
      context.services.analyses.get(String(args.matchId), { includeHidden: context.principal.kind === 'admin' }),
  }),
}));

const UpsertMatchAnalysisInput = builder.inputType('UpsertMatchAnalysisInput', {
  fields: (t) => ({
    matchId: t.id({ required: true }),
    analysis: t.string({ required: true }),
  }),
});

builder.mutationFields((t) => ({
  upsertMatchAnalysis: t.field({
    type: MatchAnalysisRef,
    authScopes: { admin: true },
    args: { input: t.arg({ type: UpsertMatchAnalysisInput, required: true }) },
    resolve: (_root, { input }, context) =>
      context.services.analyses.upsert({ matchId: String(input.matchId), analysis: input.analysis }),
  }),
}));
