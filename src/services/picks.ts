/**
 * Pick use cases: publishing, review, settlement and the read models. Every change that
 * makes a pick visible or settles it writes its outbox event in the same transaction.
 */
import type { Clock } from '../domain/clock.js';
import { UniqueConstraintViolationException } from '@mikro-orm/core';
import { CursorKind, decodeKeysetCursor, encodeKeysetCursor, encodePickCursor } from '../domain/cursor.js';
import { InvalidParameterError, InvalidTransitionError, NotFoundError } from '../domain/errors.js';
import { DEFAULT_MARKET, validateBookmaker, validateLeague, validateLine, validateMarket, validateSelection } from '../domain/market.js';
import {
  DEFAULT_EDGE_TIER_THRESHOLDS,
  priceEdges,
  validateDecimalOdds,
  validateTaxRate,
  type EdgeTierThresholds,
  type StakeAdvice,
} from '../domain/odds.js';
import {
  assertTransition,
  describePick,
  isVisibleStatus,
  validateConfidence,
  validateTeamName,
  type PickResult,
  type PickStatus,
  type PickWarning,
} from '../domain/pick.js';
import { isSportSlug, SPORT_SLUGS, type SportSlug } from '../domain/sports.js';
import { checkOptionalText, checkText } from '../domain/text.js';
import { parseIsoTimestamp } from '../domain/time.js';
import { asStored, type PickRecord } from '../domain/pick-shape.js';
import { isUuid } from '../domain/uuid.js';
import { availabilityAtPublication, availabilityChange, availabilityFields, pickAvailabilityRecord } from '../domain/availability.js';
import type { PickEntity } from '../persistence/entities/pick.js';
import type { Em, Orm } from '../persistence/orm.js';
import {
  availabilityChangesOf,
  findPick,
  findPickForUpdate,
  findProvenance,
  insertPick,
  type NewPick,
  listPicksSql,
  lockEngineEvents,
  pickRecordFromEntity,
  readPicks,
  readReviewQueue,
  recordAvailabilityChanges,
  reviewQueueSql,
  shownEngineSides,
  type ShownSide,
  todayPicksSql,
} from '../persistence/picks-repository.js';
import { engineEventKey, showsOtherSide } from '../domain/engine-rules.js';
import { createMatchAnalysis, upsertMatchAnalysis } from '../persistence/match-analyses-repository.js';
import { normalizeAnalysis } from './analyses.js';
import { addSettledPickToDays } from '../persistence/track-record-repository.js';
import { newId } from './ids.js';
import { recordLedgerEntries } from './ledger.js';
import { appendPickEvent, appendPickEvents } from './outbox.js';
import type { ServiceMetrics } from './metrics/metrics.js';

export interface PublishPickInput {
  sport: string;
  league: string;
  homeTeam: string;
  awayTeam: string;
  kickoffAt: string;
  market?: string | null;
  selection: string;
  /** The point of a spreads or totals pick; absent for h2h. */
  line?: number | null;
  bookmaker: { name: string; slug: string; taxRate?: number | null };
  odds: number;
  referenceFairOdds: number;
  confidence: number;
  pick?: string | null;
  status?: 'published' | 'admin_review' | null;
  publishedAt?: string | null;
}

export interface SettlePickInput {
  id: string;
  result: PickResult;
  /** Absent: the closing line the value engine stored at kickoff; with neither, invalid_parameter. */
  closingOdds?: number | null;
  settledAt?: string | null;
  /** Automatic settlement: the score record that settled the pick, kept in provenance.settlement. */
  settledFrom?: Record<string, unknown>;
  /**
   * Automatic settlement only: an engine pick the reference gave no close at its line (it moved
   * off the point, or stopped quoting before kickoff) settles without closing odds, and so stays
   * out of the CLV average; an operator must still give closingOdds for such a pick.
   */
  closeMayBeMissing?: boolean;
  /** Automatic settlement: the final score as the feed reported it (the pick's final_score). */
  finalScore?: { home: number; away: number };
}

/** What the value engine adds to a publish: where the pick came from, and its generated analysis. */
export interface EnginePickExtras {
  eventId: string;
  /** Which fixture of a reused feed event id (odds_events.generation). */
  eventGeneration: number;
  provenance: Record<string, unknown>;
  analysis: string;
  /** What detection found worth a warning (single_sharp_reference, wide_reference_market). */
  warnings: PickWarning[];
  /** Whether the pick's offer is watched from publication (docs/API.md, "Availability"): engine picks found by a poll; not the demo seed's history. */
  watched?: boolean;
}

/** A new pick that passed every rule: the row, and an engine pick's analysis. */
interface PreparedPick {
  fields: NewPick;
  analysis: string | null;
  /** An engine pick watched from publication: its first availability check is its publication. */
  watched: boolean;
}

/** Page sizes arrive valid (the GraphQL arguments' bounds, src/domain/bounds.ts). */
export interface ReviewQueueQuery {
  first: number;
  after?: string | null;
}

export interface ReviewQueuePage extends PickPage {
  /** The queue's own cursor of each pick (creation order), parallel to `picks`. */
  cursors: string[];
}

export interface ListPicksQuery {
  first: number;
  after?: string | null;
  sport?: string | null;
  league?: string | null;
  market?: string | null;
  since?: string | null;
}

export interface PickPage {
  picks: PickRecord[];
  nextCursor: string | null;
}

export interface TodayPicksQuery {
  limit: number;
  sport?: string | null;
}


export interface PickServiceOptions {
  defaultTaxRate: number;
  edgeTierThresholds?: EdgeTierThresholds;
  /** STAKE_KELLY_MULTIPLIER and STAKE_MAX_PCT; the defaults when absent. */
  stakeAdvice?: StakeAdvice;
  /** Called after a commit that made a pick visible (cache invalidation). */
  onVisibleChange?: () => void;
  metrics?: ServiceMetrics;
}

function requireTimestamp(parameter: string, value: string): Date {
  const parsed = parseIsoTimestamp(value);
  if (!parsed) throw new InvalidParameterError(parameter, `${parameter} must be an ISO 8601 timestamp with a time zone, e.g. 2026-11-22T18:00:00Z`);
  return parsed;
}

function requireSport(parameter: string, value: string): SportSlug {
  if (!isSportSlug(value)) throw new InvalidParameterError(parameter, `${parameter} must be one of: ${SPORT_SLUGS.join(', ')}`);
  return value;
}

/**
 * The text rules of src/domain/text.ts, before any other check: names people compare by eye
 * (teams, league, bookmaker) refuse invisible and text-direction characters too.
 */
function checkPickTexts(input: PublishPickInput): void {
  checkText('league', input.league, 'name');
  checkText('homeTeam', input.homeTeam, 'name');
  checkText('awayTeam', input.awayTeam, 'name');
  checkText('selection', input.selection, 'name');
  checkText('bookmaker.name', input.bookmaker.name, 'name');
  checkText('bookmaker.slug', input.bookmaker.slug, 'line');
  checkOptionalText('market', input.market, 'line');
  checkOptionalText('pick', input.pick, 'line');
}

export class PickService {
  private readonly thresholds: EdgeTierThresholds;

  constructor(
    private readonly orm: Orm,
    private readonly clock: Clock,
    private readonly options: PickServiceOptions,
  ) {
    this.thresholds = options.edgeTierThresholds ?? DEFAULT_EDGE_TIER_THRESHOLDS;
  }

  async publish(input: PublishPickInput): Promise<PickRecord> {
    const prepared = this.prepare(input, null);
    const [pick] = await this.orm.em.fork().transactional((em) => this.write(em, [prepared]));
    if (prepared.fields.status === 'published') {
      this.options.metrics?.picksPublished.inc({ source: 'manual' });
      this.options.onVisibleChange?.();
    }
    return pickRecordFromEntity(pick!);
  }

  /**
   * Engine picks, through the same rules and writes as publish (outbox, stream, webhooks), each
   * with its analysis, all in one transaction. Per input: the pick, null when its (event, market,
   * selection) slot is taken (the unique index decides, so two instances or a restart can never
   * make a second one), or the error that refused it. When another writer took a slot meanwhile,
   * the batch is retried one pick per transaction, so one taken slot never costs the others.
   */
  async publishFromEngine(items: readonly { input: PublishPickInput; extras: EnginePickExtras }[]): Promise<(PickRecord | null | Error)[]> {
    const results: (PickRecord | null | Error)[] = [];
    const prepared: { index: number; pick: PreparedPick }[] = [];
    items.forEach((item, index) => {
      try {
        prepared.push({ index, pick: this.prepare(item.input, item.extras) });
        results.push(null);
      } catch (error) {
        results.push(error as Error);
      }
    });
    if (prepared.length === 0) return results;
    try {
      const written = await this.orm.em.fork().transactional((em) => this.write(em, prepared.map((item) => item.pick)));
      written.forEach((pick, i) => (results[prepared[i]!.index] = pickRecordFromEntity(pick)));
    } catch (error) {
      if (!(error instanceof UniqueConstraintViolationException)) throw error;
      for (const item of prepared) {
        try {
          const [pick] = await this.orm.em.fork().transactional((em) => this.write(em, [item.pick]));
          results[item.index] = pickRecordFromEntity(pick!);
        } catch (single) {
          results[item.index] = single instanceof UniqueConstraintViolationException ? null : (single as Error);
        }
      }
    }
    const published = (item: (typeof prepared)[number]) => {
      const result = results[item.index];
      return item.pick.fields.status === 'published' && result !== null && !(result instanceof Error);
    };
    const publishedCount = prepared.filter(published).length;
    if (publishedCount > 0) {
      this.options.metrics?.picksPublished.inc({ source: 'engine' }, publishedCount);
      this.options.onVisibleChange?.();
    }
    return results;
  }

  /** Every rule of a new pick, before any I/O: the row to insert and, for engine picks, its analysis. */
  private prepare(input: PublishPickInput, engine: EnginePickExtras | null): PreparedPick {
    checkPickTexts(input);
    const sport = requireSport('sport', input.sport);
    const league = validateLeague(input.league);
    const homeTeam = validateTeamName('homeTeam', input.homeTeam);
    const awayTeam = validateTeamName('awayTeam', input.awayTeam);
    if (homeTeam === awayTeam) throw new InvalidParameterError('awayTeam', 'awayTeam must differ from homeTeam');
    const kickoffAt = requireTimestamp('kickoffAt', input.kickoffAt);
    const market = validateMarket(input.market ?? DEFAULT_MARKET);
    const selection = validateSelection(market, input.selection, homeTeam, awayTeam);
    const line = validateLine(market, input.line, sport);
    const bookmaker = validateBookmaker(input.bookmaker.name, input.bookmaker.slug);
    const givenTaxRate = input.bookmaker.taxRate ?? this.options.defaultTaxRate;
    validateTaxRate('bookmaker.taxRate', givenTaxRate);
    validateDecimalOdds('odds', input.odds);
    validateDecimalOdds('referenceFairOdds', input.referenceFairOdds);
    // The prices as stored (4 decimals; the tax rate 5): the edges, the events and the ledger are made from what readers get back.
    const odds = asStored('odds', input.odds);
    const referenceFairOdds = asStored('referenceFairOdds', input.referenceFairOdds);
    const taxRate = asStored('taxRate', givenTaxRate);
    validateConfidence(input.confidence);
    const status: PickStatus = input.status ?? 'published';
    const now = this.clock.now();
    let publishedAt: Date | null = null;
    if (input.publishedAt != null) {
      if (status !== 'published') {
        throw new InvalidParameterError('publishedAt', 'publishedAt can only be given for a pick created in status PUBLISHED');
      }
      publishedAt = requireTimestamp('publishedAt', input.publishedAt);
      if (publishedAt.getTime() > now.getTime()) throw new InvalidParameterError('publishedAt', 'publishedAt cannot be in the future');
    } else if (status === 'published') {
      // Published now after its kickoff, nobody could have bet it, and the ledger would have to
      // call it imported: a past pick is imported with its own publishedAt, and says so.
      if (kickoffAt.getTime() <= now.getTime()) {
        throw new InvalidParameterError('kickoffAt', 'kickoffAt has passed: a pick published now must kick off later (import a past pick with its publishedAt)');
      }
      publishedAt = now;
    }
    let description = describePick({ market, selection, odds, line, sport });
    if (input.pick != null) {
      description = input.pick.trim();
      if (description === '' || description.length > 300) throw new InvalidParameterError('pick', 'pick must be 1 to 300 characters');
    }
    const pricing = priceEdges({ odds, referenceFairOdds, taxRate }, this.thresholds, this.options.stakeAdvice);
    return {
      fields: {
        id: newId(),
        sport,
        league,
        homeTeam,
        awayTeam,
        kickoffAt,
        market,
        selection,
        line,
        description,
        bookmakerName: bookmaker.name,
        bookmakerSlug: bookmaker.slug,
        odds,
        referenceFairOdds,
        taxRate,
        ...pricing,
        confidence: input.confidence,
        status,
        publishedAt,
        createdAt: now,
        eventId: engine?.eventId ?? null,
        eventGeneration: engine?.eventGeneration ?? 0,
        provenance: engine?.provenance ?? null,
        warnings: engine?.warnings ?? [],
      },
      analysis: engine ? normalizeAnalysis(engine.analysis) : null,
      watched: engine?.watched === true,
    };
  }

  /**
   * Inserts prepared picks, their analyses and (when published) their pick.published events, in
   * the caller's transaction: one flush for the picks and one for the rest, whatever the count.
   */
  private async write(em: Em, prepared: readonly PreparedPick[]): Promise<PickEntity[]> {
    await this.holdOtherSides(em, prepared);
    // A held pick is not tracked: only a published engine pick starts with its first check.
    const checked = prepared.flatMap(({ fields, watched }) =>
      fields.status === 'published' && watched && fields.publishedAt != null ? [{ fields, availability: availabilityAtPublication(fields, fields.publishedAt) }] : [],
    );
    for (const { fields, availability } of checked) Object.assign(fields, availabilityFields(availability));
    const created = prepared.map(({ fields }) => insertPick(em, fields));
    // The picks exist before their analyses, and both before their events leave the outbox.
    await em.flush();
    await recordAvailabilityChanges(em, checked.map(({ fields, availability }) => availabilityChange(fields.id, availability)));
    prepared.forEach(({ fields, analysis }, i) => {
      if (analysis !== null) createMatchAnalysis(em, created[i]!.id, analysis, fields.createdAt);
    });
    const published = prepared.flatMap(({ fields }, i) => (fields.status === 'published' ? [{ pick: created[i]!, at: fields.createdAt }] : []));
    if (published.length > 0) await recordLedgerEntries(em, 'pick.published', published.map(({ pick }) => pick), published[0]!.at);
    await appendPickEvents(em, 'pick.published', published);
    return created;
  }


  /**
   * One side per market, checked where it is written (docs/VALUE_ENGINE.md, "One side per
   * market"): the engine plans from a read taken before this transaction, so another writer may
   * have published another side since. Under the event's lock, an engine pick to be published
   * whose market already shows another side (or one published earlier in this batch) is held
   * instead, with the reason opposite_side.
   */
  private async holdOtherSides(em: Em, prepared: readonly PreparedPick[]): Promise<void> {
    const engine = prepared.filter(({ fields }) => fields.eventId !== null && fields.status === 'published');
    if (engine.length === 0) return;
    const eventOf = (fields: NewPick) => ({ eventId: fields.eventId!, generation: fields.eventGeneration ?? 0 });
    const events = engine.map(({ fields }) => eventOf(fields));
    await lockEngineEvents(em, events);
    // Sides published earlier in this batch join them (without an id yet).
    const shown: Map<string, Omit<ShownSide, 'id'>[]> = await shownEngineSides(em, events);
    for (const { fields } of engine) {
      const { eventId, generation } = eventOf(fields);
      const sides = shown.get(engineEventKey(eventId, generation))!;
      const side = { market: fields.market, selection: fields.selection, line: fields.line ?? null };
      if (showsOtherSide(side, sides, fields.homeTeam)) {
        const provenance = (fields.provenance ?? {}) as { holdReasons?: string[] };
        fields.status = 'admin_review';
        fields.publishedAt = null;
        fields.provenance = { ...provenance, holdReasons: [...new Set([...(provenance.holdReasons ?? []), 'opposite_side'])] };
      } else {
        sides.push(side);
      }
    }
  }

  /**
   * ADMIN_REVIEW -> PUBLISHED, while the kickoff is ahead (a pick published after kickoff
   * would be a bet nobody could place). The first time a pick becomes visible it emits pick.published.
   */
  async approve(id: string): Promise<PickRecord> {
    let firstPublication = false;
    const pick = await this.transition(id, 'published', async (pick, em, now, from) => {
      if (pick.kickoffAt.getTime() <= now.getTime()) {
        throw new InvalidTransitionError(from, 'published', 'the kickoff has passed; a pick cannot be approved after kickoff');
      }
      if (pick.publishedAt == null) {
        firstPublication = true;
        pick.publishedAt = now;
        await recordLedgerEntries(em, 'pick.published', [pick], now);
        await appendPickEvent(em, 'pick.published', pick, now);
      } else {
        // Visible again after a hold: the ledger records it; subscribers saw its publication already.
        await recordLedgerEntries(em, 'pick.republished', [pick], now);
      }
    });
    if (firstPublication) this.options.metrics?.picksPublished.inc({ source: 'manual' });
    this.options.onVisibleChange?.();
    return pickRecordFromEntity(pick);
  }

  /**
   * The engine's "best plausible price first" (docs/VALUE_ENGINE.md): a held pick that was never
   * visible takes a plausible offer found later (its price, bookmaker, fair odds, confidence,
   * provenance and analysis) and is published through the approval path, with one
   * pick.published. Null when the pick is no longer a never-visible held pick before kickoff
   * (an operator or another instance got there first): nothing changes then.
   */
  async promoteHeld(id: string, item: { input: PublishPickInput; extras: EnginePickExtras }): Promise<PickRecord | null> {
    const prepared = this.prepare({ ...item.input, status: 'published' }, item.extras);
    let promoted: PickEntity | null = null;
    await this.orm.em.fork().transactional(async (em) => {
      const pick = await findPickForUpdate(em, id);
      const now = this.clock.now();
      if (!pick || pick.status !== 'admin_review' || pick.publishedAt != null || pick.kickoffAt.getTime() <= now.getTime()) return;
      // One side per market: another side published since the engine planned keeps this one held.
      if (pick.eventId != null) {
        await lockEngineEvents(em, [{ eventId: pick.eventId, generation: pick.eventGeneration }]);
        const side = { market: pick.market, selection: pick.selection, line: pick.line ?? null };
        const event = { eventId: pick.eventId, generation: pick.eventGeneration };
        if (showsOtherSide(side, (await shownEngineSides(em, [event])).get(engineEventKey(event.eventId, event.generation))!, pick.homeTeam)) return;
      }
      const { fields } = prepared;
      Object.assign(pick, {
        bookmakerName: fields.bookmakerName,
        bookmakerSlug: fields.bookmakerSlug,
        odds: fields.odds,
        referenceFairOdds: fields.referenceFairOdds,
        taxRate: fields.taxRate,
        edgePct: fields.edgePct,
        edgePctPostTax: fields.edgePctPostTax,
        kellyFraction: fields.kellyFraction,
        edgeTier: fields.edgeTier,
        stakePct: fields.stakePct,
        confidence: fields.confidence,
        description: fields.description,
        provenance: fields.provenance,
        warnings: fields.warnings,
        status: 'published',
        publishedAt: now,
        updatedAt: now,
      });
      if (prepared.watched) {
        const availability = availabilityAtPublication(pick, now);
        Object.assign(pick, availabilityFields(availability));
        await recordAvailabilityChanges(em, [availabilityChange(pick.id, availability)]);
      }
      if (prepared.analysis !== null) await upsertMatchAnalysis(em, pick.id, prepared.analysis, now);
      await recordLedgerEntries(em, 'pick.published', [pick], now);
      await appendPickEvent(em, 'pick.published', pick, now);
      promoted = pick;
    });
    if (!promoted) return null;
    this.options.metrics?.picksPublished.inc({ source: 'engine' });
    this.options.onVisibleChange?.();
    return pickRecordFromEntity(promoted);
  }

  /**
   * PUBLISHED -> ADMIN_REVIEW before kickoff: hidden from the API again; the ledger records the
   * hold (after kickoff the pick's record is public history and cannot be withdrawn).
   */
  async hold(id: string): Promise<PickRecord> {
    const pick = await this.transition(id, 'admin_review', async (pick, em, now, from) => {
      if (pick.kickoffAt.getTime() <= now.getTime()) {
        throw new InvalidTransitionError(from, 'admin_review', 'the kickoff has passed; a pick cannot be held after kickoff');
      }
      await recordLedgerEntries(em, 'pick.held', [pick], now);
    });
    this.options.onVisibleChange?.();
    return pickRecordFromEntity(pick);
  }

  /**
   * ADMIN_REVIEW -> DISCARDED (final) for a held pick that was never visible: it leaves the
   * review queue for good and keeps its (event, market, selection) slot.
   */
  async discard(id: string): Promise<PickRecord> {
    const pick = await this.transition(id, 'discarded', (pick, _em, _now, from) => {
      if (pick.publishedAt != null) {
        throw new InvalidTransitionError(from, 'discarded', 'the pick was visible once; hold it instead');
      }
    });
    return pickRecordFromEntity(pick);
  }

  /** How the value engine found a pick; null for a manual pick or an unknown id. */
  async provenance(id: string): Promise<Record<string, unknown> | null> {
    if (!isUuid(id)) return null;
    return findProvenance(this.orm.em.fork(), id);
  }

  /** Held picks whose kickoff is ahead, oldest first (the operators' review queue). */
  async reviewQueue(query: ReviewQueueQuery): Promise<ReviewQueuePage> {
    const { first } = query;
    const after = query.after == null ? null : decodeKeysetCursor(CursorKind.reviewQueue, query.after);
    const rows = await readReviewQueue(this.orm.em.fork(), reviewQueueSql(this.clock.now(), after, first + 1));
    const page = rows.slice(0, first);
    const cursors = page.map((row) => encodeKeysetCursor(CursorKind.reviewQueue, { at: row.createdAt, id: row.pick.id }));
    return { picks: page.map((row) => row.pick), cursors, nextCursor: rows.length > first ? (cursors.at(-1) ?? null) : null };
  }

  /** PUBLISHED -> SETTLED (final); emits pick.settled. */
  async settle(input: SettlePickInput): Promise<PickRecord> {
    if (input.closingOdds != null) validateDecimalOdds('closingOdds', input.closingOdds);
    const now = this.clock.now();
    let settledAt = now;
    if (input.settledAt != null) {
      settledAt = requireTimestamp('settledAt', input.settledAt);
      if (settledAt.getTime() > now.getTime()) throw new InvalidParameterError('settledAt', 'settledAt cannot be in the future');
    }
    const pick = await this.transition(input.id, 'settled', async (pick, em) => {
      if (pick.publishedAt && settledAt.getTime() < pick.publishedAt.getTime()) {
        throw new InvalidParameterError('settledAt', 'settledAt cannot be before the pick was published');
      }
      // The operator's closing odds win; else the engine's stored no-vig closing line.
      const closingOdds = input.closingOdds != null ? asStored('closingOdds', input.closingOdds) : (pick.closingOdds ?? null);
      if (closingOdds == null && !input.closeMayBeMissing) {
        throw new InvalidParameterError('closingOdds', 'closingOdds is required: this pick has no stored closing line');
      }
      // The operator's close is theirs to vouch for; only the engine's own can be stale.
      if (input.closingOdds != null) pick.warnings = pick.warnings.filter((warning) => warning !== 'stale_close');
      if (input.settledFrom) pick.provenance = { ...(pick.provenance ?? {}), settlement: input.settledFrom };
      pick.result = input.result;
      pick.closingOdds = closingOdds;
      pick.settledAt = settledAt;
      if (input.finalScore) {
        pick.finalHomeScore = input.finalScore.home;
        pick.finalAwayScore = input.finalScore.away;
      }
      // What the record counts of its availability, final now: checks stop at kickoff.
      if (pick.eventId != null && pick.publishedAt != null) {
        const record = pickAvailabilityRecord(await availabilityChangesOf(em, pick.id), pick.publishedAt, pick.kickoffAt);
        pick.availabilityAt5Min = record?.at5Min ?? null;
        pick.availabilityAt30Min = record?.at30Min ?? null;
        pick.availableMinutes = record?.minutesAvailable ?? null;
      }
      await recordLedgerEntries(em, 'pick.settled', [pick], now);
      await appendPickEvent(em, 'pick.settled', pick, now);
      // The track record's day sums move with the settlement, in the same transaction.
      await em.flush();
      await addSettledPickToDays(em, { id: pick.id, settledAt });
    });
    this.options.metrics?.picksSettled.inc({ result: input.result });
    this.options.onVisibleChange?.();
    return pickRecordFromEntity(pick);
  }

  private async transition(
    id: string,
    to: PickStatus,
    apply: (pick: PickEntity, em: Em, now: Date, from: PickStatus) => void | Promise<void>,
  ): Promise<PickEntity> {
    if (!isUuid(id)) throw new NotFoundError(`No pick with id ${id}.`);
    return this.orm.em.fork().transactional(async (em) => {
      // Row lock: two concurrent transitions of one pick serialise instead of both passing the check.
      const pick = await findPickForUpdate(em, id);
      if (!pick) throw new NotFoundError(`No pick with id ${id}.`);
      assertTransition(pick.status, to);
      const now = this.clock.now();
      // `apply` sees the new status (events carry it) and the one it replaces (errors name it).
      const from = pick.status;
      pick.status = to;
      pick.updatedAt = now;
      await apply(pick, em, now, from);
      return pick;
    });
  }

  /** A pick by id; admin_review picks only for callers allowed to see them. */
  async get(id: string, options: { includeHidden: boolean }): Promise<PickRecord | null> {
    if (!isUuid(id)) return null;
    const pick = await findPick(this.orm.em.fork(), id);
    if (!pick) return null;
    if (!options.includeHidden && !isVisibleStatus(pick.status)) return null;
    return pickRecordFromEntity(pick);
  }

  /** GET /api/v1/picks: kickoff_at desc, id desc, keyset pagination over visible picks. */
  async list(query: ListPicksQuery): Promise<PickPage> {
    const { first } = query;
    if (query.sport != null) requireSport('sport', query.sport);
    checkOptionalText('league', query.league, 'line');
    if (query.market != null) validateMarket(query.market);
    const since = query.since == null ? null : requireTimestamp('since', query.since);
    const filter = { sport: query.sport, league: query.league, market: query.market, since, after: query.after };
    const rows = await readPicks(this.orm.em.fork(), listPicksSql(filter, first + 1));
    const picks = rows.slice(0, first);
    const last = picks.at(-1);
    const nextCursor = rows.length > first && last ? encodePickCursor({ kickoffAt: last.kickoffAt, id: last.id }) : null;
    return { picks, nextCursor };
  }

  /** The public "today's top picks": first published on the current UTC date, best post-tax edge first. */
  async today(query: TodayPicksQuery): Promise<PickRecord[]> {
    const { limit } = query;
    if (query.sport != null) requireSport('sport', query.sport);
    return readPicks(this.orm.em.fork(), todayPicksSql({ sport: query.sport }, this.clock.now(), limit));
  }
}
