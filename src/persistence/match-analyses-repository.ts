/** Match analyses: one per pick (match_id equals the pick id). */
import type { MatchAnalysisRecord } from '../domain/account-records.js';
import { MatchAnalysisEntity } from './entities/match-analysis.js';
import type { Em } from './orm.js';

export function matchAnalysisRecordFromEntity(analysis: MatchAnalysisEntity): MatchAnalysisRecord {
  return { matchId: analysis.matchId, analysis: analysis.analysis, createdAt: analysis.createdAt, updatedAt: analysis.updatedAt };
}

export function findMatchAnalysis(em: Em, matchId: string): Promise<MatchAnalysisEntity | null> {
  return em.findOne(MatchAnalysisEntity, { matchId });
}

/** Creates or replaces the text in the unit of work of `em` (written when the transaction flushes). */
export async function upsertMatchAnalysis(em: Em, matchId: string, text: string, at: Date): Promise<MatchAnalysisEntity> {
  const existing = await findMatchAnalysis(em, matchId);
  if (existing) {
    existing.analysis = text;
    existing.updatedAt = at;
    return existing;
  }
  return em.create(MatchAnalysisEntity, { matchId, analysis: text, createdAt: at, updatedAt: at });
}

/** The analysis of a pick created in this transaction (it cannot have one yet: no lookup). */
export function createMatchAnalysis(em: Em, matchId: string, text: string, at: Date): MatchAnalysisEntity {
  return em.create(MatchAnalysisEntity, { matchId, analysis: text, createdAt: at, updatedAt: at });
}
