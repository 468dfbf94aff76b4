import type { Clock } from '../domain/clock.js';
import { InvalidParameterError, NotFoundError } from '../domain/errors.js';
import { checkText } from '../domain/text.js';
import { MatchAnalysisEntity } from '../persistence/entities/match-analysis.js';
import { PickEntity } from '../persistence/entities/pick.js';
import type { Orm } from '../persistence/orm.js';
import { isUuid } from './picks.js';

export const ANALYSIS_MAX_LENGTH = 20_000;

export class MatchAnalysisService {
  constructor(
    private readonly orm: Orm,
    private readonly clock: Clock,
  ) {}

  /** Creates or replaces the analysis of a pick's match (any status: analyses are prepared before approval). */
  async upsert(input: { matchId: string; analysis: string }): Promise<MatchAnalysisEntity> {
    // A long text: newlines and tabs are fine, NUL and other controls are not (src/domain/text.ts).
    const text = checkText('analysis', input.analysis, 'multiline').trim();
    if (text === '' || text.length > ANALYSIS_MAX_LENGTH) {
      throw new InvalidParameterError('analysis', `analysis must be 1 to ${ANALYSIS_MAX_LENGTH} characters`);
    }
    if (!isUuid(input.matchId)) throw new NotFoundError(`No pick with id ${input.matchId}.`);
    return this.orm.em.fork().transactional(async (em) => {
      const pick = await em.findOne(PickEntity, { id: input.matchId });
      if (!pick) throw new NotFoundError(`No pick with id ${input.matchId}.`);
      const now = this.clock.now();
      const existing = await em.findOne(MatchAnalysisEntity, { matchId: input.matchId });
      if (existing) {
        existing.analysis = text;
        existing.updatedAt = now;
        return existing;
      }
      return em.create(MatchAnalysisEntity, { matchId: input.matchId, analysis: text, createdAt: now, updatedAt: now });
    });
  }

  /** The analysis of a visible pick; hidden (admin_review) picks have none as far as callers can tell. */
  async get(matchId: string, options: { includeHidden: boolean }): Promise<MatchAnalysisEntity | null> {
    if (!isUuid(matchId)) return null;
    const em = this.orm.em.fork();
    const pick = await em.findOne(PickEntity, { id: matchId });
    if (!pick || (!options.includeHidden && pick.status === 'admin_review')) return null;
    return em.findOne(MatchAnalysisEntity, { matchId });
  }
}
