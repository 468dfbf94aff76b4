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
import type { StakeAdvice } from '../../domain/odds.js';
import {
  sportSlugOfKey,
  validateOddsEvent,
  validateScoreEvent,
  type FeedSkip,
  type OddsEvent,
  type ScoreEvent,
  type ValidatedEvent,
} from '../../domain/odds-feed.js';
import { formatLine, MARKETS, type Market } from '../../domain/market.js';
import { FINAL_REFUSAL_TEXT, finalScoreFor, judgeFinal, pickResult, type FinalRefusal, type SettlementOptions } from '../../domain/settlement.js';
import { isSportSlug, type SportSlug } from '../../domain/sports.js';
import { checkText } from '../../domain/text.js';
import { closingLineOf, type ClosingLine } from '../../domain/closing-line.js';
import {
  engineEventKey,
  engineSelectionKey,
  generationOf,
  planEngineCandidates,
  QUIET_REFERENCE_WINDOW_MS,
  readMarkets,
  watchReferences,
  type HoldReason,
  type ReferenceWatch,
} from '../../domain/engine-rules.js';
import type { ReferenceRecord } from '../../domain/reference-consensus.js';
import {
  analysisText,
  DEFAULT_DETECTION_OPTIONS,
  detectValue,
  referenceObservations,
  sightOffer,
  type DetectionOutcome,
  type OfferSighting,
  type DetectionOptions,
  type RejectedOutcome,
  type ValueCandidate,
} from '../../domain/value-detection.js';
import { PriceMemory, ReferenceMemory } from '../../domain/price-memory.js';
import {
  claimPriceWriteEpoch,
  listOddsHistory,
  readOddsEvents,
  recordFinalScores,
  recordPriceChanges,
  recordReferenceMarkets,
  takeOverdueEvents,
  upsertOddsEvents,
  withdrawFinalScores,
  type FinalScoreRow,
  type OddsPointRecord,
  type PricePoint,
  type ReferenceMarketRow,
} from '../../persistence/odds-repository.js';
import type { Em, Orm } from '../../persistence/orm.js';
import {
  closablePicks,
  engineSlotsOf,
  findPicksForUpdate,
  moveKickoffs,
  type EngineSlot,
  lockTrackedPicks,
  recordAvailabilityChanges,
  recordClosingLines,
  settleablePicks,
  writeAvailability,
} from '../../persistence/picks-repository.js';
import { availabilityChange, availabilityFields, availabilityOf, nextAvailability } from '../../domain/availability.js';
import type { PickRecord } from '../../domain/pick-shape.js';
import { appendPickEvents } from '../outbox.js';
import { oneAtATime } from '../one-at-a-time.js';
import { recordLedgerEntries } from '../ledger.js';
import type { ServiceLog } from '../log.js';
import { rejectionLabel } from '../metrics/catalog.js';
import type { ServiceMetrics } from '../metrics/metrics.js';
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
  /**
   * The markets the engine reads (ODDS_FEED_MARKETS; all when absent); spreads and totals only
   * in the sports that have lines (LINE_UNITS), the others' are ignored.
   */
  markets?: readonly Market[];
  settlement: SettlementOptions;
  /** The stake advice the analyses quote (the same the picks store); the defaults when absent. */
  stakeAdvice?: StakeAdvice;
  /**
   * PICK_CONFIRM_POLLS: a selection is published once it has been a candidate on this many
   * consecutive polls of its event (1, the default: at once). Counted per instance, in memory.
   */
  confirmPolls?: number;
  log?: ServiceLog;
  metrics?: ServiceMetrics;
  /** After a commit that changed what readers see (kickoff moved, closing line, availability; it also relays the outbox at once). */
  onVisibleChange?: () => void;
}

/** What an odds batch covers beyond its own events. */
export interface OddsCoverage {
  /**
   * The sport keys the batch is the whole feed of (a poll of a sport key): their published
   * picks whose event is not in it have left the feed, and are gone. A pushed batch covers none.
   */
  sportKeys?: readonly string[];
}

/** An odds event with its sport slug and the generation of its id it belongs to. */
export type PlacedEvent = OddsEvent & { sport: SportSlug; generation: number };

/** An outcome as line movement names it: a line market's outcome with its point ("Arsenal -0.5", "Over 2.5"). */
function outcomeLabel(market: Market, name: string, point: number | undefined): string {
  return point === undefined ? name : `${name} ${formatLine(market, point)}`;
}

export class ValueEngine {
  /**
   * What was last logged about each event's settlement (a refused final, an unsettleable pick),
   * so a state is logged once, not at every poll; a new state is logged again. Per instance:
   * a restart logs each open state once more.
   */
  private readonly settlementNotes = new Map<string, string>();
  /**
   * The numbers last logged for each selection the references disagree on, until its kickoff
   * (entries of past kickoffs are dropped at each poll, so the map holds the listed events only).
   */
  private readonly disagreementNotes = new Map<string, { numbers: string; kickoffMs: number }>();
  /** Events no configured reference quoted, logged once each until kickoff (dropped like disagreementNotes). */
  private readonly unpricedNotes = new Map<string, number>();
  /** Which configured references quoted the events of the current hour (watchReferences). */
  private referenceWatch: ReferenceWatch | null = null;
  /** PICK_CONFIRM_POLLS: per event generation, each selection's run of consecutive polls as a candidate, until kickoff. */
  private readonly candidateRuns = new Map<string, { kickoffMs: number; runs: Map<string, number> }>();
  /** The prices this instance last confirmed in odds_latest: a poll sends only those that moved. */
  private readonly priceMemory = new PriceMemory();
  /** The reference markets this instance last confirmed in reference_markets: sent only when they moved. */
  private readonly referenceMemory = new ReferenceMemory();
  /** One poll's store at a time on this instance, so the write epochs it takes follow each other. */
  private readonly inStoreTurn = oneAtATime();

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
  async ingestOdds(parsed: readonly OddsEvent[], skipped: FeedSkip[] = [], coverage: OddsCoverage = {}): Promise<IngestResult> {
    const now = this.clock.now();
    const { detection } = this.options;
    const stored = await readOddsEvents(this.orm.em.fork(), parsed.map((event) => event.id));
    const events: PlacedEvent[] = [];
    for (const event of parsed) {
      const sport = sportSlugOfKey(event.sportKey);
      if (sport === null) skipped.push({ eventId: event.id, reason: `sport_key ${event.sportKey} maps to no sport the service publishes` });
      else events.push({ ...readMarkets(event, sport, this.options.markets ?? MARKETS), sport, generation: generationOf(stored.get(event.id), event.commenceTime) });
    }

    const points: PricePoint[] = [];
    const referenceRows: ReferenceMarketRow[] = [];
    for (const event of events) {
      for (const bookmaker of event.bookmakers) {
        for (const market of bookmaker.markets) {
          const at = market.lastUpdate ?? bookmaker.lastUpdate;
          for (const outcome of market.outcomes) {
            points.push({ eventId: event.id, bookmaker: bookmaker.key, market: market.key, outcome: outcomeLabel(market.key, outcome.name, outcome.point), price: outcome.price, at });
          }
        }
      }
      for (const observed of referenceObservations(event, detection, now)) {
        referenceRows.push({ eventId: event.id, generation: event.generation, ...observed });
      }
    }

    // New picks first, in one transaction: an edge reaches the stream without waiting for the
    // poll's bulk writes.
    const slots = await engineSlotsOf(this.orm.em.fork(), events.map((event) => event.id));
    const found: { event: PlacedEvent; candidate: ValueCandidate; holdReasons: HoldReason[] }[] = [];
    const promotions: { held: EngineSlot; event: PlacedEvent; candidate: ValueCandidate }[] = [];
    for (const [key, note] of this.disagreementNotes) if (note.kickoffMs <= now.getTime()) this.disagreementNotes.delete(key);
    this.noteReferences(events, now);
    for (const [key, entry] of this.candidateRuns) if (entry.kickoffMs <= now.getTime()) this.candidateRuns.delete(key);
    for (const event of events) {
      const raw = detectValue(event, detection, now);
      const detected = this.confirmed(event, raw);
      this.countRejections(detected.rejected, raw.candidates.length - detected.candidates.length);
      for (const book of detected.skippedBooks) {
        const market = book.line === null ? book.market : `${book.market} ${book.line}`;
        skipped.push({ eventId: event.id, reason: `bookmaker ${book.bookmaker}'s ${market} market not used for this event (${book.reason}): ${book.detail}` });
      }
      this.noteDisagreements(event, [...detected.rejected, ...detected.candidates]);
      // The unique index is the guard against a second pick per slot; the plan keeps known slots
      // out of the batch and one side per market.
      const plans = planEngineCandidates(event, detected.candidates, slots.get(engineEventKey(event.id, event.generation)) ?? new Map<string, EngineSlot>());
      plans.forEach((plan, index) => {
        const candidate = detected.candidates[index]!;
        if (plan.action === 'create') found.push({ event, candidate, holdReasons: plan.holdReasons });
        else if (plan.action === 'promote') promotions.push({ held: plan.held, event, candidate });
      });
    }
    const picksCreated = (await this.createPicks(found, now)) + (await this.promoteHeld(promotions, now));

    const { moved, closed } = await this.inStoreTurn(() => this.storePoll(events, points, referenceRows, now));
    if (moved.length > 0 || closed > 0) this.options.onVisibleChange?.();
    // After the kickoffs moved: a pick whose kickoff came is no longer checked.
    // An event the feed sent but the parser could not read is not an event that left the feed;
    // one it could not even identify makes every absence doubtful, and so does an empty answer
    // (a feed's hiccup far more often than every match of a sport withdrawn): no pick is then
    // taken as gone.
    const unread = new Set(skipped.map((skip) => skip.eventId));
    const doubtful = unread.has(null) || parsed.length === 0;
    await this.trackAvailability(events, doubtful ? [] : (coverage.sportKeys ?? []), unread, now);

    return { events: events.length, picksCreated, picksSettled: 0, skipped };
  }

  /**
   * The poll's bulk writes in one transaction: events, the prices and the references' markets
   * that moved (the memories', when the write epoch shows nobody else wrote since; all of them
   * otherwise), kickoffs and closing lines. The memories take the outcome only once committed.
   */
  private async storePoll(events: readonly PlacedEvent[], points: readonly PricePoint[], referenceRows: readonly ReferenceMarketRow[], now: Date) {
    const memory = this.priceMemory;
    const referenceMemory = this.referenceMemory;
    const { moved, closed, prices, references } = await this.orm.em.fork().transactional(async (em) => {
      // First: from here to commit, another writer of odds_latest waits for this one.
      const epoch = await claimPriceWriteEpoch(em);
      if (!memory.follows(epoch, now.getTime())) memory.forget();
      if (!referenceMemory.follows(epoch, now.getTime())) referenceMemory.forget();
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
      const { send, repeated } = memory.toSend(points);
      const recorded = await recordPriceChanges(em, send);
      const prices = { epoch, sent: send, unconfirmed: new Set([...repeated, ...recorded.unconfirmed.map((price) => PriceMemory.keyOf(price))]) };
      const referencesToSend = referenceMemory.toSend(referenceRows);
      const referencesRecorded = await recordReferenceMarkets(em, referencesToSend.send);
      const references = {
        sent: referencesToSend.send,
        unconfirmed: new Set([...referencesToSend.repeated, ...referencesRecorded.unconfirmed.map((row) => ReferenceMemory.keyOf(row))]),
      };
      const moved = await moveKickoffs(em, events.map((event) => ({ eventId: event.id, generation: event.generation, commenceTime: event.commenceTime })), now);
      // A pick that was ever visible has its new kickoff in the public ledger.
      const ledgered = (await findPicksForUpdate(em, moved)).filter((pick) => pick.publishedAt != null);
      await recordLedgerEntries(em, 'pick.rescheduled', ledgered, now);
      const closed = await this.recordClosingLines(em, now);
      return { moved, closed, prices, references };
    });
    // Committed: the memories now hold what the tables hold. (A write that failed left the tables
    // and the epoch as they were, and the memories unconfirmed: they may serve the next write.)
    const mentioned = events.map((event) => event.id);
    memory.confirm(prices.sent, prices.unconfirmed, prices.epoch, now.getTime(), mentioned);
    referenceMemory.confirm(references.sent, references.unconfirmed, prices.epoch, now.getTime(), mentioned);
    return { moved, closed };
  }

  /**
   * Availability (docs/API.md, "Availability"): every published engine pick before kickoff that
   * this poll covers gets its offer's sighting, in one transaction; a change of status is kept
   * and sent as a pick.availability_changed event through the outbox.
   */
  private async trackAvailability(events: readonly PlacedEvent[], coveredSportKeys: readonly string[], unread: ReadonlySet<string | null>, now: Date): Promise<void> {
    const { detection } = this.options;
    const minEdge = detection.minEdge ?? DEFAULT_DETECTION_OPTIONS.minEdge;
    const byKey = new Map(events.map((event) => [engineEventKey(event.id, event.generation), event]));
    const moved = await this.orm.em.fork().transactional(async (em) => {
      const picks = await lockTrackedPicks(em, events.map((event) => ({ eventId: event.id, generation: event.generation })), coveredSportKeys, now);
      const checked: PickRecord[] = [];
      const changes: ReturnType<typeof availabilityChange>[] = [];
      const changed: PickRecord[] = [];
      for (const { pick, eventId, eventGeneration } of picks) {
        // Checked at or after this poll's time already (published by this very poll, or checked
        // by a newer ingest): that newer check stays.
        if (pick.availabilityCheckedAt != null && pick.availabilityCheckedAt.getTime() >= now.getTime()) continue;
        const event = byKey.get(engineEventKey(eventId, eventGeneration));
        if (event === undefined && unread.has(eventId)) continue;
        const offer = { bookmaker: pick.bookmakerSlug, market: pick.market as Market, selection: pick.selection, line: pick.line };
        const sighting: OfferSighting = event === undefined ? { kind: 'gone' } : sightOffer(event, offer, detection, now);
        // Every check moves checked_at; a quote that cannot be judged moves nothing.
        if (sighting.kind === 'unpriced') continue;
        // A pick approved by an operator starts its best price at its own odds.
        const current = { ...availabilityOf(pick), bestOdds: pick.bestOddsSincePublished ?? pick.odds };
        const { next, changed: statusChanged } = nextAvailability(current, sighting, minEdge, now);
        Object.assign(pick, availabilityFields(next));
        checked.push(pick);
        if (statusChanged) {
          changes.push(availabilityChange(pick.id, next));
          changed.push(pick);
        }
      }
      await writeAvailability(em, checked);
      await recordAvailabilityChanges(em, changes);
      // The events carry the picks as they are now: the locked record with its new availability.
      await appendPickEvents(em, 'pick.availability_changed', changed.map((pick) => ({ pick, at: now })));
      return checked.length;
    });
    // A pick's availability is what readers see: any check that moved it (not only a change of
    // status) drops the read caches, and the events of changes leave the outbox at once.
    if (moved > 0) this.options.onVisibleChange?.();
  }

  /**
   * PICK_CONFIRM_POLLS: the detection with only the candidates seen on enough consecutive polls
   * of the event; a selection that is not a candidate in a poll of its event starts again.
   */
  private confirmed(event: PlacedEvent, detected: DetectionOutcome): DetectionOutcome {
    const needed = this.options.confirmPolls ?? 1;
    if (needed <= 1) return detected;
    const eventKey = engineEventKey(event.id, event.generation);
    const previous = this.candidateRuns.get(eventKey)?.runs ?? new Map<string, number>();
    const runs = new Map<string, number>();
    const candidates = detected.candidates.filter((candidate) => {
      const key = engineSelectionKey(event.id, event.generation, candidate.market, candidate.selection, candidate.line);
      const run = (previous.get(key) ?? 0) + 1;
      runs.set(key, run);
      return run >= needed;
    });
    if (runs.size > 0) this.candidateRuns.set(eventKey, { kickoffMs: event.commenceTime.getTime(), runs });
    else this.candidateRuns.delete(eventKey);
    return { ...detected, candidates };
  }

  /** The line movement of one event, oldest first (admin oddsHistory); empty for an unknown event. */
  async oddsHistory(eventId: string): Promise<OddsPointRecord[]> {
    checkText('eventId', eventId, 'line');
    return listOddsHistory(this.orm.em.fork(), eventId, ODDS_HISTORY_POINTS_MAX);
  }

  /**
   * Stores the finals the score records prove (docs/VALUE_ENGINE.md, "Settlement": matched by
   * team name, not before the match can have ended, for the event's current generation only),
   * withdraws a final a later record takes back, settles the published picks of finished events,
   * and reports events overdue for a result.
   */
  async ingestScores(parsed: readonly ScoreEvent[], skipped: FeedSkip[] = []): Promise<IngestResult> {
    const now = this.clock.now();
    const stored = await readOddsEvents(this.orm.em.fork(), parsed.map((event) => event.id));
    const finals: FinalScoreRow[] = [];
    const withdrawals: { eventId: string; generation: number }[] = [];
    for (const record of parsed) {
      const event = stored.get(record.id);
      // An event the odds feed never showed has no picks to settle.
      if (!event) continue;
      if (!record.completed) {
        if (event.completed && record.commenceTime.getTime() === event.commenceTime.getTime()) withdrawals.push({ eventId: event.id, generation: event.generation });
        continue;
      }
      const minMinutes = isSportSlug(event.sport) ? this.options.settlement.matchMinMinutes[event.sport] : 0;
      const verdict = judgeFinal(record, event, now, minMinutes);
      if ('refusal' in verdict) {
        this.noteFinalRefusal(record, event.generation, verdict.refusal, skipped);
        continue;
      }
      this.settlementNotes.delete(`final:${record.id}`);
      finals.push({
        eventId: event.id,
        generation: event.generation,
        homeScore: verdict.final.homeScore,
        awayScore: verdict.final.awayScore,
        record: { ...scoreRecordJson(record), receivedAt: now.toISOString() },
      });
    }
    const { closed, withdrawn } = await this.orm.em.fork().transactional(async (em) => {
      const withdrawn = await withdrawFinalScores(em, withdrawals, now);
      await recordFinalScores(em, finals, now);
      // A scores poll may come before the first odds poll after kickoff: the closing line first.
      return { withdrawn, closed: await this.recordClosingLines(em, now) };
    });
    for (const { eventId, settledPicks } of withdrawn) {
      const fields = { eventId, settledPicks };
      if (settledPicks > 0) this.options.log?.warn(fields, 'value engine: the scores feed withdrew a final after picks were settled from it; check those picks by hand');
      else this.options.log?.info(fields, 'value engine: the scores feed withdrew a final before settlement; waiting for a new one');
    }
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

  /**
   * Closing lines of the engine picks whose kickoff has come (docs/VALUE_ENGINE.md, "Closing
   * line"): the consensus of the configured references' last pre-kickoff markets at the pick's
   * point, in `em`'s transaction. Returns how many picks got one.
   */
  private async recordClosingLines(em: Em, now: Date): Promise<number> {
    const { detection, settlement } = this.options;
    const closes = (await closablePicks(em, now)).flatMap((pick) => {
      const close = closingLineOf(pick, pick.references, detection.references, detection.devigMethod, settlement.closingLineMaxAgeSeconds, detection.maxExchangeSpread);
      return close === null ? [] : [{ id: pick.id, closingOdds: roundTo(close.fairOdds, 4), stale: close.stale, record: closingLineRecord(close) }];
    });
    return recordClosingLines(em, closes, now);
  }

  /**
   * References that disagree on a selection make no pick (REFERENCE_MAX_SPREAD): logged with the
   * numbers once per event, market and selection while they disagree, and again when it changes.
   */
  private noteDisagreements(event: PlacedEvent, outcomes: readonly (RejectedOutcome | ValueCandidate)[]): void {
    for (const outcome of outcomes) {
      const key = `${event.id}:${event.generation}:${outcome.market}:${outcome.line ?? ''}:${outcome.selection}`;
      if (!('reason' in outcome) || outcome.reason !== 'references_disagree') {
        this.disagreementNotes.delete(key);
        continue;
      }
      const probabilities = (outcome.referenceProbabilities ?? []).map((reference) => ({ ...reference, probability: roundTo(reference.probability, 4) }));
      const numbers = JSON.stringify(probabilities);
      if (this.disagreementNotes.get(key)?.numbers === numbers) continue;
      this.disagreementNotes.set(key, { numbers, kickoffMs: event.commenceTime.getTime() });
      const values = probabilities.map((reference) => reference.probability);
      this.options.log?.info(
        {
          eventId: event.id,
          market: outcome.market,
          line: outcome.line,
          selection: outcome.selection,
          references: probabilities,
          spread: roundTo(Math.max(...values) - Math.min(...values), 4),
          maxSpread: this.options.detection.maxReferenceSpread,
        },
        'value engine: the references disagree on a selection by more than REFERENCE_MAX_SPREAD; no pick',
      );
    }
  }

  /**
   * References that come and go: an event no configured reference quotes can make no pick, logged
   * once per event until its kickoff; a configured reference that quoted none of the events
   * polled in an hour is named in a warning once that hour is over.
   */
  private noteReferences(events: readonly PlacedEvent[], now: Date): void {
    const keys = this.options.detection.references.map((reference) => reference.key);
    for (const [key, kickoffMs] of this.unpricedNotes) if (kickoffMs <= now.getTime()) this.unpricedNotes.delete(key);
    for (const event of events) {
      if (event.commenceTime.getTime() <= now.getTime() || event.bookmakers.some((bookmaker) => keys.includes(bookmaker.key))) continue;
      const key = `${event.id}:${event.generation}`;
      if (this.unpricedNotes.has(key)) continue;
      this.unpricedNotes.set(key, event.commenceTime.getTime());
      this.options.log?.info(
        { eventId: event.id, match: `${event.homeTeam} v ${event.awayTeam}`, references: keys, bookmakers: event.bookmakers.map((bookmaker) => bookmaker.key) },
        'value engine: no configured reference quotes this event, so it can make no pick',
      );
    }
    const watched = watchReferences(this.referenceWatch, events, keys, now.getTime());
    this.referenceWatch = watched.watch;
    for (const reference of watched.quiet) {
      this.options.log?.warn(
        { reference, windowMinutes: QUIET_REFERENCE_WINDOW_MS / 60_000, references: keys },
        `value engine: the reference ${reference} (REFERENCE_BOOKMAKERS) quoted none of the events polled in the last hour; check the feed's bookmakers and regions`,
      );
    }
  }

  /** A completed record not used (yet): a feed skip at every poll, a log line once per event and reason. */
  private noteFinalRefusal(record: ScoreEvent, generation: number, refusal: FinalRefusal, skipped: FeedSkip[]): void {
    skipped.push({ eventId: record.id, reason: FINAL_REFUSAL_TEXT[refusal], loggedOnce: true });
    if (!this.isNewNote(`final:${record.id}`, `${generation}:${refusal}`)) return;
    this.options.log?.warn(
      { eventId: record.id, reason: refusal, record: scoreRecordJson(record) },
      `value engine: a completed score record was not used: ${FINAL_REFUSAL_TEXT[refusal]}`,
    );
  }

  /** Whether `state` is new for `key` (and remembers it): each state is logged once, a changed one again. */
  private isNewNote(key: string, state: string): boolean {
    if (this.settlementNotes.get(key) === state) return false;
    this.settlementNotes.set(key, state);
    return true;
  }

  /** Every published engine pick whose event has a final score, through the settlePick path. */
  private async settleFinished(): Promise<number> {
    let settled = 0;
    const failed = new Set<string>();
    for (;;) {
      const batch = (await settleablePicks(this.orm.em.fork(), SETTLE_BATCH + failed.size)).filter((pick) => !failed.has(pick.id));
      if (batch.length === 0) return settled;
      for (const pick of batch) {
        const final = finalScoreFor(pick, pick.finalRecord.scores ?? []);
        const result = final === null ? null : pickResult(pick, final);
        try {
          if (result === null) {
            throw new InvalidParameterError(
              'selection',
              final === null ? "the final does not name the pick's two teams" : `selection ${pick.selection} (${pick.market} ${pick.line ?? ''}) cannot be settled from this final`,
            );
          }
          await this.picks.settle({
            id: pick.id,
            result,
            settledFrom: pick.finalRecord,
            closeMayBeMissing: true,
            finalScore: { home: final!.homeScore, away: final!.awayScore },
          });
          settled += 1;
        } catch (error) {
          failed.add(pick.id);
          // Another instance settled it first: settlement is idempotent across instances.
          if (error instanceof InvalidTransitionError) continue;
          const message = (error as Error).message;
          if (!this.isNewNote(`pick:${pick.id}`, message)) continue;
          this.options.log?.warn({ pickId: pick.id, eventId: pick.eventId, err: message }, 'value engine: could not settle a finished pick; settle it by hand');
        }
      }
    }
  }

  /** A poll's rejected outcomes of one event, and its candidates still short of their confirming polls, for the metrics. */
  private countRejections(rejected: readonly RejectedOutcome[], awaitingConfirmation: number): void {
    const candidates = this.options.metrics?.engineCandidates;
    if (!candidates) return;
    for (const outcome of rejected) candidates.inc({ decision: 'rejected', reason: rejectionLabel(outcome.reason) });
    if (awaitingConfirmation > 0) candidates.inc({ decision: 'rejected', reason: 'awaiting_confirmation' }, awaitingConfirmation);
  }

  /** Creates the detected picks through the publish path; returns how many were created. */
  private async createPicks(found: readonly { event: PlacedEvent; candidate: ValueCandidate; holdReasons: HoldReason[] }[], now: Date): Promise<number> {
    if (found.length === 0) return 0;
    const results = await this.picks.publishFromEngine(
      found.map(({ event, candidate, holdReasons }) => enginePick(event, candidate, now, this.options.stakeAdvice, holdReasons)),
    );
    let created = 0;
    const candidates = this.options.metrics?.engineCandidates;
    results.forEach((result, index) => {
      const { event, candidate, holdReasons } = found[index]!;
      if (result instanceof Error) candidates?.inc({ decision: 'rejected', reason: 'refused_by_pick_rules' });
      else if (result?.status === 'published') candidates?.inc({ decision: 'published', reason: 'none' });
      else if (result) candidates?.inc({ decision: 'held', reason: holdReasons[0] ?? 'opposite_side' });
      if (result instanceof Error) {
        // A candidate the pick rules refuse (a name too long for a pick, say) is skipped, never the poll.
        this.options.log?.warn({ eventId: event.id, selection: candidate.selection, err: result.message }, 'value engine: a detected pick was refused');
      } else if (result !== null) {
        created += 1;
        // Planned as a first side, but another writer published one before this write (PickService's check).
        const heldAtWrite = holdReasons.length === 0 && result.status === 'admin_review';
        if (holdReasons.includes('opposite_side') || heldAtWrite) {
          this.options.log?.info(
            { eventId: event.id, pickId: result.id, market: candidate.market, line: candidate.line, selection: candidate.selection },
            'value engine: a candidate on another side of a market the engine already published is held for review (opposite_side)',
          );
        }
      }
    });
    return created;
  }

  /**
   * Held picks never seen by anyone that now have a plausible offer: updated to it and published
   * through the approval path, the suspect price they were held for kept in excludedOffers.
   */
  private async promoteHeld(promotions: readonly { held: EngineSlot; event: PlacedEvent; candidate: ValueCandidate }[], now: Date): Promise<number> {
    let promoted = 0;
    for (const { held, event, candidate } of promotions) {
      try {
        const item = enginePick(event, candidate, now, this.options.stakeAdvice);
        const excluded = candidate.provenance.excludedOffers;
        if (!excluded.some((offer) => offer.bookmaker === held.bookmaker && offer.price === held.price)) {
          item.extras.provenance.excludedOffers = [{ bookmaker: held.bookmaker, price: held.price, reason: 'too_good' }, ...excluded];
        }
        if (await this.picks.promoteHeld(held.id, item)) {
          promoted += 1;
          this.options.metrics?.engineCandidates.inc({ decision: 'published', reason: 'promoted' });
        }
      } catch (error) {
        this.options.log?.warn({ eventId: event.id, selection: candidate.selection, err: (error as Error).message }, 'value engine: a held pick could not take the plausible offer');
      }
    }
    return promoted;
  }
}

/** What the publish path needs for one detected pick: the pick, its provenance and its analysis (the demo seed's picks are made the same way). */
export function enginePick(
  event: PlacedEvent,
  candidate: ValueCandidate,
  now: Date,
  stakeAdvice: StakeAdvice | undefined,
  holdReasons: readonly HoldReason[] = candidate.held ? ['too_good'] : [],
): { input: PublishPickInput; extras: EnginePickExtras & { provenance: { excludedOffers: unknown[] } } } {
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
      line: candidate.line,
      bookmaker: { name: candidate.bookmakerTitle, slug: candidate.bookmakerKey, taxRate: candidate.taxRate },
      odds: candidate.price,
      // Stored to 4 decimals: the stored edge is then the one a reader recomputes from the stored prices.
      referenceFairOdds: roundTo(candidate.fairOdds, 4),
      confidence: candidate.confidence,
      status: holdReasons.length > 0 ? 'admin_review' : 'published',
    },
    extras: {
      eventId: event.id,
      eventGeneration: event.generation,
      analysis: analysisText(candidate, event, stakeAdvice),
      warnings: candidate.warnings,
      watched: true,
      provenance: {
        eventId: event.id,
        detectedAt: now.toISOString(),
        referenceBookmaker: provenance.referenceBookmaker,
        referencePrices: provenance.referencePrices,
        referenceUpdatedAt: provenance.referenceUpdatedAt.toISOString(),
        references: provenance.references.map(referenceRecordJson),
        devigMethod: provenance.devigMethod,
        fairProbabilities: provenance.fairProbabilities,
        offeredPrices: provenance.offeredPrices.map((offer) => ({ ...offer, updatedAt: offer.updatedAt.toISOString() })),
        excludedOffers: provenance.excludedOffers as unknown[],
        holdReasons: [...holdReasons],
        engineVersion: ENGINE_VERSION,
      },
    },
  };
}

/** A score record as stored with a final and logged with a refusal: the feed's fields, times in ISO 8601. */
function scoreRecordJson(record: ScoreEvent): Record<string, unknown> {
  return {
    eventId: record.id,
    homeTeam: record.homeTeam,
    awayTeam: record.awayTeam,
    commenceTime: record.commenceTime.toISOString(),
    scores: record.scores,
    lastUpdate: record.lastUpdate?.toISOString() ?? null,
  };
}

function checkBatchSize(inputs: readonly unknown[]): void {
  if (inputs.length > INGEST_EVENTS_MAX) {
    throw new InvalidParameterError('events', `events must hold at most ${INGEST_EVENTS_MAX} events per call; send larger batches in parts`);
  }
}

/** A reference as provenance stores it: its fair probabilities to 6 decimals, its time in ISO 8601. */
function referenceRecordJson(reference: ReferenceRecord): Record<string, unknown> {
  return {
    bookmaker: reference.bookmaker,
    weight: reference.weight,
    prices: reference.prices,
    pricing: reference.pricing,
    fairProbabilities: Object.fromEntries(Object.entries(reference.fairProbabilities).map(([name, p]) => [name, roundTo(p, 6)])),
    updatedAt: reference.updatedAt.toISOString(),
  };
}

/** provenance.closingLine: the first reference's prices (as before several references), the close, and every reference used. */
export function closingLineRecord(close: ClosingLine): Record<string, unknown> {
  return {
    referencePrices: close.references[0]!.prices,
    fairOdds: roundTo(close.fairOdds, 4),
    at: close.at.toISOString(),
    ageSecondsAtKickoff: roundTo(close.ageSecondsAtKickoff, 3),
    stale: close.stale,
    references: close.references.map(referenceRecordJson),
  };
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
