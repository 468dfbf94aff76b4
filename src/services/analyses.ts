import type { Clock } from '../domain/clock.js';
import { InvalidParameterError, NotFoundError } from '../domain/errors.js';
import { isVisibleStatus } from '../domain/pick.js';
import { checkText } from '../domain/text.js';
import type { MatchAnalysisRecord } from '../domain/account-records.js';
import { findMatchAnalysis, matchAnalysisRecordFromEntity, upsertMatchAnalysis } from '../persistence/match-analyses-repository.js';
import type { Orm } from '../persistence/orm.js';
import { findPick } from '../persistence/picks-repository.js';
import { isUuid } from '../domain/uuid.js';

export const ANALYSIS_MAX_LENGTH = 20_000;

/** The analysis text rules, for every writer (upsertMatchAnalysis and the value engine's generated text). */
export function normalizeAnalysis(analysis: string): string {
  // A long text: newlines and tabs are fine, NUL and other controls are not (src/domain/text.ts).
  const text = checkText('analysis', analysis, 'multiline').trim();
  if (text === '' || text.length > ANALYSIS_MAX_LENGTH) {
    throw new InvalidParameterError('analysis', `analysis must be 1 to ${ANALYSIS_MAX_LENGTH} characters`);
  }
  return text;
}

export class MatchAnalysisService {
  constructor(
    private readonly orm: Orm,
    private readonly clock: Clock,
    /** Called after a commit that changed an analysis (read caches, every instance). */
    private readonly onChange?: () => void,
  ) {}

  /** Creates or replaces the analysis of a pick's match (any status: analyses are prepared before approval). */
  async upsert(input: { matchId: string; analysis: string }): Promise<MatchAnalysisRecord> {
    const text = normalizeAnalysis(input.analysis);
    if (!isUuid(input.matchId)) throw new NotFoundError(`No pick with id ${input.matchId}.`);
    const analysis = await this.orm.em.fork().transactional(async (em) => {
      const pick = await findPick(em, input.matchId);
      if (!pick) throw new NotFoundError(`No pick with id ${input.matchId}.`);
      return upsertMatchAnalysis(em, input.matchId, text, this.clock.now());
    });
    this.onChange?.();
    return matchAnalysisRecordFromEntity(analysis);
  }

  /** The analysis of a visible pick; hidden (admin_review, discarded) picks have none as far as callers can tell. */
  async get(matchId: string, options: { includeHidden: boolean }): Promise<MatchAnalysisRecord | null> {
    if (!isUuid(matchId)) return null;
    const em = this.orm.em.fork();
    const pick = await findPick(em, matchId);
    if (!pick || (!options.includeHidden && !isVisibleStatus(pick.status))) return null;
    const analysis = await findMatchAnalysis(em, matchId);
    return analysis && matchAnalysisRecordFromEntity(analysis);
  }
}
