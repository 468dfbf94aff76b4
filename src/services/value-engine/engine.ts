/**
 * The value engine's use cases (docs/VALUE_ENGINE.md): odds in -> events, line movement, the
 * reference's fair prices (closing line) and new picks; scores in -> automatic settlement. The
 * poller and the admin mutations ingestOdds / ingestScores both come through here, so polled and
 * pushed events cannot be treated differently.
 */
import { INGEST_EVENTS_MAX, ODDS_HISTORY_POINTS_MAX } from '../../domain/bounds.js';
import type { Clock } from '../../domain/clock.js';
import { InvalidParameterError, InvalidTransitionError } from '../../domain/errors.js';
import { roundTo } from '../../domain/numbers.js';
import {
  sportSlugOfKey,
  validateOddsEvent,
  validateScoreEvent,
  type FeedSkip,
  type OddsEvent,
  type ScoreEvent,
  type ValidatedEvent,
} from '../../domain/odds-feed.js';
import { h2hResult } from '../../domain/settlement.js';
import { checkText } from '../../domain/text.js';
import {
  analysisText,
  detectValue,
  referenceFairPrices,
  type DetectionOptions,
  type ValueCandidate,
} from '../../domain/value-detection.js';
import {
  listOddsHistory,
  recordFinalScores,
  recordPriceChanges,
  recordReferenceFair,
  takeOverdueEvents,
  upsertOddsEvents,
  type OddsPointRecord,
  type PricePoint,
  type ReferenceFairRow,
} from '../../persistence/odds-repository.js';
import type { Orm } from '../../persistence/orm.js';
import {
  engineSelectionKey,
  engineSelectionsOf,
  moveKickoffs,
  recordClosingLines,
  settleablePicks,
} from '../../persistence/picks-repository.js';
import type { ServiceLog } from '../log.js';
import type { EnginePickExtras, PickService, PublishPickInput } from '../picks.js';

/** Stored in every engine pick's provenance: which rules found it. */
export const ENGINE_VERSION = 'value-engine/1';
/** An event still not completed this long after kickoff is reported to the operator. */
export const OVERDUE_AFTER_MS = 72 * 60 * 60 * 1000;
/** Settlement works through the finished picks in batches of this many. */
const SETTLE_BATCH = 200;

export interface IngestResult {
  events: number;
  picksCreated: number;
  picksSettled: number;
  skipped: FeedSkip[];
}

export interface ValueEngineOptions {
  detection: DetectionOptions;
  log?: ServiceLog;
  /** After a commit that changed what readers see without a pick event (kickoff moved, closing line). */
  onVisibleChange?: () => void;
}

export class ValueEngine {
  constructor(
    private readonly orm: Orm,
    private readonly clock: Clock,
    private readonly picks: PickService,
    private readonly options: ValueEngineOptions,
  ) {}

  /** ingestOdds: camelCase events, each validated like a feed event; bad ones are skipped, never the batch. */
  async ingestOddsInput(inputs: readonly unknown[]): Promise<IngestResult> {
    const { events, skipped } = validateBatch(inputs, validateOddsEvent);
    return this.ingestOdds(events, skipped);
  }

  /** ingestScores: camelCase score events, validated like the feed's. */
  async ingestScoresInput(inputs: readonly unknown[]): Promise<IngestResult> {
    const { events, skipped } = validateBatch(inputs, validateScoreEvent);
    return this.ingestScores(events, skipped);
  }

  /**
   * One batch of odds: creates the picks detection finds (each in its own transaction, through
   * the publish path), then stores the events, the price changes and the reference's fair prices
   * in one transaction, moves kickoffs and records closing lines whose kickoff has come.
   */
  async ingestOdds(parsed: readonly OddsEvent[], skipped: FeedSkip[] = []): Promise<IngestResult> {
    const now = this.clock.now();
    const { detection } = this.options;
    const events: (OddsEvent & { sport: string })[] = [];
    for (const event of parsed) {
      const sport = sportSlugOfKey(event.sportKey);
      if (sport === null) skipped.push({ eventId: event.id, reason: `sport_key ${event.sportKey} maps to no sport the service publishes` });
      else events.push({ ...event, sport });
    }

    const points: PricePoint[] = [];
    const fairRows: ReferenceFairRow[] = [];
    for (const event of events) {
      for (const bookmaker of event.bookmakers) {
        for (const market of bookmaker.markets) {
          const at = market.lastUpdate ?? bookmaker.lastUpdate;
          for (const outcome of market.outcomes) points.push({ eventId: event.id, bookmaker: bookmaker.key, outcome: outcome.name, price: outcome.price, at });
        }
      }
      const fair = referenceFairPrices(event, detection);
      if (fair) fairRows.push({ eventId: event.id, fair: roundedPrices(fair.fair), updatedAt: fair.updatedAt });
    }

    // New picks first, in one transaction: an edge reaches the stream without waiting for the
    // poll's bulk writes.
    const existing = await engineSelectionsOf(this.orm.em.fork(), events.map((event) => event.id));
    const found: { event: OddsEvent & { sport: string }; candidate: ValueCandidate }[] = [];
    for (const event of events) {
      for (const candidate of detectValue(event, detection, now).candidates) {
        // The unique index is the guard; this only keeps known slots out of the batch.
        if (!existing.has(engineSelectionKey(event.id, candidate.market, candidate.selection))) found.push({ event, candidate });
      }
    }
    const picksCreated = await this.createPicks(found, now);

    const { moved, closed } = await this.orm.em.fork().transactional(async (em) => {
      await upsertOddsEvents(
        em,
        events.map((event) => ({
          id: event.id,
          sportKey: event.sportKey,
          sport: event.sport,
          league: event.sportTitle,
          homeTeam: event.homeTeam,
          awayTeam: event.awayTeam,
          commenceTime: event.commenceTime,
        })),
        now,
      );
      await recordPriceChanges(em, points);
      await recordReferenceFair(em, fairRows);
      const moved = await moveKickoffs(em, events.map((event) => ({ eventId: event.id, commenceTime: event.commenceTime })), now);
      const closed = await recordClosingLines(em, now);
      return { moved, closed };
    });
    if (moved > 0 || closed > 0) this.options.onVisibleChange?.();

    return { events: events.length, picksCreated, picksSettled: 0, skipped };
  }

  /** The line movement of one event, oldest first (admin oddsHistory); empty for an unknown event. */
  async oddsHistory(eventId: string): Promise<OddsPointRecord[]> {
    checkText('eventId', eventId, 'line');
    return listOddsHistory(this.orm.em.fork(), eventId, ODDS_HISTORY_POINTS_MAX);
  }

  /** Settles the published picks of completed events, and reports events overdue for a result. */
  async ingestScores(parsed: readonly ScoreEvent[], skipped: FeedSkip[] = []): Promise<IngestResult> {
    const now = this.clock.now();
    const finals: { eventId: string; homeScore: number; awayScore: number }[] = [];
    for (const event of parsed) {
      if (!event.completed) continue;
      const home = event.scores?.find((score) => score.name === event.homeTeam);
      const away = event.scores?.find((score) => score.name === event.awayTeam);
      if (!home || !away) {
        skipped.push({ eventId: event.id, reason: 'completed without a score for both teams; not settled' });
        continue;
      }
      finals.push({ eventId: event.id, homeScore: home.score, awayScore: away.score });
    }
    const closed = await this.orm.em.fork().transactional(async (em) => {
      await recordFinalScores(em, finals, now);
      // A scores poll may come before the first odds poll after kickoff: the closing line first.
      return recordClosingLines(em, now);
    });
    if (closed > 0) this.options.onVisibleChange?.();
    const picksSettled = await this.settleFinished();
    for (const event of await takeOverdueEvents(this.orm.em.fork(), now, OVERDUE_AFTER_MS)) {
      this.options.log?.warn(
        { eventId: event.id, kickoffAt: event.commenceTime.toISOString(), match: `${event.homeTeam} v ${event.awayTeam}` },
        'value engine: an event with published picks is still not completed 72 h after kickoff; settle its picks by hand (settlePick)',
      );
    }
    return { events: parsed.length, picksCreated: 0, picksSettled, skipped };
  }

  /** Every published engine pick whose event has a final score, through the settlePick path. */
  private async settleFinished(): Promise<number> {
    let settled = 0;
    const failed = new Set<string>();
    for (;;) {
      const batch = (await settleablePicks(this.orm.em.fork(), SETTLE_BATCH + failed.size)).filter((pick) => !failed.has(pick.id));
      if (batch.length === 0) return settled;
      for (const pick of batch) {
        const result = h2hResult(pick.selection, pick.referenceOutcomes, pick);
        try {
          if (result === null) throw new InvalidParameterError('selection', `selection ${pick.selection} names neither team nor the draw`);
          await this.picks.settle({ id: pick.id, result });
          settled += 1;
        } catch (error) {
          failed.add(pick.id);
          // Another instance settled it first: settlement is idempotent across instances.
          if (error instanceof InvalidTransitionError) continue;
          this.options.log?.warn({ pickId: pick.id, err: (error as Error).message }, 'value engine: could not settle a finished pick; settle it by hand');
        }
      }
    }
  }

  /** Creates the detected picks through the publish path; returns how many were created. */
  private async createPicks(found: readonly { event: OddsEvent & { sport: string }; candidate: ValueCandidate }[], now: Date): Promise<number> {
    if (found.length === 0) return 0;
    const results = await this.picks.publishFromEngine(found.map(({ event, candidate }) => enginePick(event, candidate, now)));
    let created = 0;
    results.forEach((result, index) => {
      if (result instanceof Error) {
        // A candidate the pick rules refuse (a name too long for a pick, say) is skipped, never the poll.
        const { event, candidate } = found[index]!;
        this.options.log?.warn({ eventId: event.id, selection: candidate.selection, err: result.message }, 'value engine: a detected pick was refused');
      } else if (result !== null) {
        created += 1;
      }
    });
    return created;
  }
}

/** What the publish path needs for one detected pick: the pick, its provenance and its analysis. */
function enginePick(event: OddsEvent & { sport: string }, candidate: ValueCandidate, now: Date): { input: PublishPickInput; extras: EnginePickExtras } {
  const { provenance } = candidate;
  return {
    input: {
      sport: event.sport,
      league: event.sportTitle,
      homeTeam: event.homeTeam,
      awayTeam: event.awayTeam,
      kickoffAt: event.commenceTime.toISOString(),
      market: candidate.market,
      selection: candidate.selection,
      bookmaker: { name: candidate.bookmakerTitle, slug: candidate.bookmakerKey, taxRate: candidate.taxRate },
      odds: candidate.price,
      // Stored to 4 decimals: the stored edge is then the one a reader recomputes from the stored prices.
      referenceFairOdds: roundTo(candidate.fairOdds, 4),
      confidence: candidate.confidence,
      status: candidate.held ? 'admin_review' : 'published',
    },
    extras: {
      eventId: event.id,
      analysis: analysisText(candidate, event),
      provenance: {
        eventId: event.id,
        detectedAt: now.toISOString(),
        referenceBookmaker: provenance.referenceBookmaker,
        referencePrices: provenance.referencePrices,
        referenceUpdatedAt: provenance.referenceUpdatedAt.toISOString(),
        devigMethod: provenance.devigMethod,
        fairProbabilities: provenance.fairProbabilities,
        offeredPrices: provenance.offeredPrices.map((offer) => ({ ...offer, updatedAt: offer.updatedAt.toISOString() })),
        engineVersion: ENGINE_VERSION,
      },
    },
  };
}

function checkBatchSize(inputs: readonly unknown[]): void {
  if (inputs.length > INGEST_EVENTS_MAX) {
    throw new InvalidParameterError('events', `events must hold at most ${INGEST_EVENTS_MAX} events per call; send larger batches in parts`);
  }
}

function roundedPrices(fair: Record<string, number>): Record<string, number> {
  return Object.fromEntries(Object.entries(fair).map(([name, price]) => [name, roundTo(price, 4)]));
}

/**
 * A pushed batch through the feed's own event rules (camelCase names). A repeated id in one batch
 * contradicts itself: the first is kept, as the feed parser does.
 */
function validateBatch<T extends { id: string }>(
  inputs: readonly unknown[],
  validate: (input: unknown, naming: 'input') => ValidatedEvent<T>,
): { events: T[]; skipped: FeedSkip[] } {
  checkBatchSize(inputs);
  const events: T[] = [];
  const skipped: FeedSkip[] = [];
  const seen = new Set<string>();
  for (const input of inputs) {
    const validated = validate(input, 'input');
    skipped.push(...validated.skipped);
    const event = validated.event;
    if (!event) continue;
    if (seen.has(event.id)) {
      skipped.push({ eventId: event.id, reason: 'id repeats an earlier event of this batch; skipped' });
      continue;
    }
    seen.add(event.id);
    events.push(event);
  }
  return { events, skipped };
}
