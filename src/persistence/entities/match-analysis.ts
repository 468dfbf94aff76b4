import { defineEntity, p } from '@mikro-orm/core';

/** Generated analysis text for the match of one pick; match_id equals the pick id. */
export const MatchAnalysisSchema = defineEntity({
  name: 'MatchAnalysis',
  tableName: 'match_analyses',
  properties: {
    matchId: p.uuid().primary(),
    analysis: p.text(),
    createdAt: p.datetime(),
    updatedAt: p.datetime(),
  },
});

export class MatchAnalysisEntity extends MatchAnalysisSchema.class {}
MatchAnalysisSchema.setClass(MatchAnalysisEntity);
