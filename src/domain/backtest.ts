/**
 * The backtest (docs/VALUE_ENGINE.md, "Backtest"): saved odds and scores polls replayed in
 * memory through the live engine's pure rules, so an operator sees how a configuration would
 * have done before turning it on. The same functions decide as in the live engine: detection
 * (detectValue), the reference markets kept for the close (referenceObservations,
 * replacesKeptReference), the closing line (closingLineOf), the final (judgeFinal), the result
 * (pickResult), the stored prices (asStored, priceEdges) and the record (aggregateTrackRecord,
 * recordStatistics). What lives here is only the in-memory bookkeeping the engine keeps in its
 * tables: one pick per slot, a held pick promoted by a later plausible offer, kickoffs that move.
 */
import { closingLineOf, type StoredReferenceMarket } from './closing-line.js';
import {
  engineEventKey,
  engineSelectionKey,
  generationOf,
  planEngineCandidates,
  readMarkets,
  replacesKeptReference,
  type HoldReason,
  type KeptReferenceMarket,
  type KnownEnginePick,
} from './engine-rules.js';
import type { Market } from './market.js';
import { roundTo } from './numbers.js';
import type { FeedSkip, OddsEvent, ScoreEvent } from './odds-feed.js';
import { sportSlugOfKey } from './odds-feed.js';
import { priceEdges, type StakeAdvice } from './odds.js';
import type { PickResult, PickWarning } from './pick.js';
import { asStored } from './pick-shape.js';
import { recordStatistics, summarizePicks, type RecordPick } from './record-statistics.js';
import { finalScoreFor, judgeFinal, pickResult, FINAL_REFUSAL_TEXT, type FinalScore, type SettlementOptions } from './settlement.js';
import type { SportSlug } from './sports.js';
import { aggregateTrackRecord, clvPct, NO_AVAILABILITY, referenceCoverageOfPicks, trackRecordReport, type TrackRecordBucket, type TrackRecordReport } from './track-record.js';
import { detectValue, referenceObservations, type DetectionOptions, type ValueCandidate } from './value-detection.js';
import { utcDateString } from './time.js';

export interface BacktestOptions {
  detection: DetectionOptions;
  settlement: SettlementOptions;
  /** The markets read (ODDS_FEED_MARKETS). */
  markets: readonly Market[];
  stakeAdvice: StakeAdvice;
}

export type BacktestPoll =
  | { at: Date; kind: 'odds'; events: readonly OddsEvent[] }
  | { at: Date; kind: 'scores'; events: readonly ScoreEvent[] };

export interface BacktestPick {
  /** Creation order: the live engine's pick ids are time-ordered the same way. */
  seq: number;
  eventId: string;
  generation: number;
  sport: SportSlug;
  league: string;
  homeTeam: string;
  awayTeam: string;
  kickoffAt: Date;
  market: Market;
  selection: string;
  line: number | null;
  bookmaker: string;
  bookmakerTitle: string;
  odds: number;
  referenceFairOdds: number;
  taxRate: number;
  edgePct: number;
  edgePctPostTax: number;
  stakePct: number;
  confidence: number;
  warnings: PickWarning[];
  /** admin_review: held for an operator (holdReasons), never published by the backtest. */
  status: 'published' | 'admin_review' | 'settled';
  /** Why a held pick waits (too_good, opposite_side); [] for a published one. */
  holdReasons: HoldReason[];
  publishedAt: Date | null;
  /** Outcomes of the reference market (a level score voids an h2h pick of a two-way market). */
  referenceOutcomes: number;
  /** The references whose consensus priced it (the track record's referenceCoverage). */
  references: string[];
  closingOdds: number | null;
  result: PickResult | null;
  settledAt: Date | null;
  finalScore: { home: number; away: number } | null;
}

export interface BacktestRun {
  picks: BacktestPick[];
  /** Events, bookmakers and markets left out, and finals refused, with the reason (as the live engine logs them). */
  skipped: FeedSkip[];
  polls: number;
  events: number;
}

interface EventState {
  sport: SportSlug;
  homeTeam: string;
  awayTeam: string;
  commenceTime: Date;
  generation: number;
  completed: boolean;
  final: ScoreEvent | null;
}

/** Replays the polls in time order (equal times: in the order given) and returns every pick the engine would have made. */
export function runBacktest(polls: readonly BacktestPoll[], options: BacktestOptions): BacktestRun {
  const events = new Map<string, EventState>();
  const references = new Map<string, Map<string, KeptReferenceMarket>>();
  // Per event generation (engineEventKey), the picks keyed by engineSelectionKey, as the live engine reads them.
  const slots = new Map<string, Map<string, BacktestPick & KnownEnginePick>>();
  const picks: BacktestPick[] = [];
  const skipped: FeedSkip[] = [];
  const referencesOf = (eventId: string, generation: number, market: string) => `${eventId}\u0000${generation}\u0000${market}`;

  const closeDuePicks = (now: Date) => {
    for (const pick of picks) {
      if (pick.status === 'settled' || pick.closingOdds !== null || pick.kickoffAt.getTime() > now.getTime()) continue;
      const kept = references.get(referencesOf(pick.eventId, pick.generation, pick.market));
      if (!kept) continue;
      const stored: StoredReferenceMarket[] = [...kept.entries()].map(([bookmaker, market]) => ({ bookmaker, prices: market.prices, updatedAt: market.updatedAt }));
      const close = closingLineOf(pick, stored, options.detection.references, options.detection.devigMethod, options.settlement.closingLineMaxAgeSeconds, options.detection.maxExchangeSpread);
      if (close === null) continue;
      pick.closingOdds = asStored('closingOdds', roundTo(close.fairOdds, 4));
      if (close.stale && !pick.warnings.includes('stale_close')) pick.warnings = [...pick.warnings, 'stale_close'];
    }
  };

  const pickOf = (
    seq: number,
    event: OddsEvent & { sport: SportSlug; generation: number },
    candidate: ValueCandidate,
    now: Date,
    holdReasons: HoldReason[],
  ): BacktestPick & KnownEnginePick => {
    const held = holdReasons.length > 0;
    const odds = asStored('odds', candidate.price);
    const referenceFairOdds = asStored('referenceFairOdds', roundTo(candidate.fairOdds, 4));
    const taxRate = asStored('taxRate', candidate.taxRate);
    const pricing = priceEdges({ odds, referenceFairOdds, taxRate }, undefined, options.stakeAdvice);
    return {
      seq,
      eventId: event.id,
      generation: event.generation,
      sport: event.sport,
      league: event.sportTitle,
      homeTeam: event.homeTeam,
      awayTeam: event.awayTeam,
      kickoffAt: event.commenceTime,
      market: candidate.market,
      selection: candidate.selection,
      line: candidate.line,
      bookmaker: candidate.bookmakerKey,
      bookmakerTitle: candidate.bookmakerTitle,
      odds,
      referenceFairOdds,
      taxRate,
      edgePct: pricing.edgePct,
      edgePctPostTax: pricing.edgePctPostTax,
      stakePct: pricing.stakePct,
      confidence: candidate.confidence,
      warnings: [...candidate.warnings],
      status: held ? 'admin_review' : 'published',
      holdReasons,
      publishedAt: held ? null : now,
      // The backtest never holds a published pick: visible once is visible now.
      everVisible: !held,
      referenceOutcomes: candidate.provenance.referencePrices.length,
      references: candidate.provenance.references.map((reference) => reference.bookmaker),
      closingOdds: null,
      result: null,
      settledAt: null,
      finalScore: null,
    };
  };

  const ingestOdds = (now: Date, parsed: readonly OddsEvent[]) => {
    const placed: (OddsEvent & { sport: SportSlug; generation: number })[] = [];
    for (const event of parsed) {
      const sport = sportSlugOfKey(event.sportKey);
      if (sport === null) skipped.push({ eventId: event.id, reason: `sport_key ${event.sportKey} maps to no sport the service publishes` });
      else placed.push({ ...readMarkets(event, sport, options.markets), sport, generation: generationOf(events.get(event.id), event.commenceTime) });
    }
    for (const event of placed) {
      const detected = detectValue(event, options.detection, now);
      for (const book of detected.skippedBooks) {
        const market = book.line === null ? book.market : `${book.market} ${book.line}`;
        skipped.push({ eventId: event.id, reason: `bookmaker ${book.bookmaker}'s ${market} market not used for this event (${book.reason}): ${book.detail}` });
      }
      const eventKey = engineEventKey(event.id, event.generation);
      const known = slots.get(eventKey) ?? new Map<string, BacktestPick & KnownEnginePick>();
      slots.set(eventKey, known);
      planEngineCandidates(event, detected.candidates, known).forEach((plan, index) => {
        const candidate = detected.candidates[index]!;
        if (plan.action === 'create') {
          const pick = pickOf(picks.length + 1, event, candidate, now, plan.holdReasons);
          known.set(engineSelectionKey(event.id, event.generation, candidate.market, candidate.selection, candidate.line), pick);
          picks.push(pick);
        } else if (plan.action === 'promote') {
          // A held pick nobody has seen takes a plausible offer that has appeared since.
          Object.assign(plan.held, pickOf(plan.held.seq, event, candidate, now, []));
        }
      });
    }
    for (const event of placed) {
      const known = events.get(event.id);
      const sameGeneration = known !== undefined && known.generation === event.generation;
      events.set(event.id, {
        sport: event.sport,
        homeTeam: event.homeTeam,
        awayTeam: event.awayTeam,
        commenceTime: event.commenceTime,
        generation: event.generation,
        completed: sameGeneration ? known.completed : false,
        final: sameGeneration ? known.final : null,
      });
      for (const observed of referenceObservations(event, options.detection, now)) {
        const key = referencesOf(event.id, event.generation, observed.market);
        const kept = references.get(key) ?? new Map<string, KeptReferenceMarket>();
        references.set(key, kept);
        const next = { line: observed.line, prices: observed.prices, updatedAt: observed.updatedAt };
        if (replacesKeptReference(kept.get(observed.bookmaker), next, event.commenceTime)) kept.set(observed.bookmaker, next);
      }
      // A moved kickoff moves the open picks of this generation while their kickoff is ahead.
      for (const pick of picks) {
        if (pick.eventId !== event.id || pick.generation !== event.generation || pick.status === 'settled') continue;
        if (pick.kickoffAt.getTime() !== event.commenceTime.getTime() && pick.kickoffAt.getTime() > now.getTime()) pick.kickoffAt = event.commenceTime;
      }
    }
    closeDuePicks(now);
  };

  const ingestScores = (now: Date, records: readonly ScoreEvent[]) => {
    closeDuePicks(now);
    for (const record of records) {
      const event = events.get(record.id);
      if (!event) continue;
      if (!record.completed) {
        if (event.completed && record.commenceTime.getTime() === event.commenceTime.getTime()) Object.assign(event, { completed: false, final: null });
        continue;
      }
      const verdict = judgeFinal(record, event, now, options.settlement.matchMinMinutes[event.sport]);
      if ('refusal' in verdict) {
        skipped.push({ eventId: record.id, reason: `final not accepted (${verdict.refusal}): ${FINAL_REFUSAL_TEXT[verdict.refusal]}` });
        continue;
      }
      Object.assign(event, { completed: true, final: record });
    }
    for (const pick of picks) {
      if (pick.status !== 'published') continue;
      const event = events.get(pick.eventId);
      if (!event?.completed || !event.final || event.generation !== pick.generation) continue;
      const final: FinalScore | null = finalScoreFor(pick, event.final.scores ?? []);
      const result = final === null ? null : pickResult(pick, final);
      if (result === null) {
        skipped.push({ eventId: pick.eventId, reason: `pick ${pick.seq} (${pick.market} ${pick.selection}) cannot be settled from the final` });
        continue;
      }
      Object.assign(pick, { status: 'settled', result, settledAt: now, finalScore: { home: final!.homeScore, away: final!.awayScore } });
    }
  };

  const ordered = polls.map((poll, index) => ({ poll, index })).sort((a, b) => a.poll.at.getTime() - b.poll.at.getTime() || a.index - b.index);
  for (const { poll } of ordered) {
    if (poll.kind === 'odds') ingestOdds(poll.at, poll.events);
    else ingestScores(poll.at, poll.events);
  }
  return { picks, skipped, polls: polls.length, events: events.size };
}

/** Settled picks in the order the record reads them: settled_at, then creation. */
export function settledInRecordOrder(picks: readonly BacktestPick[]): BacktestPick[] {
  return picks.filter((pick) => pick.status === 'settled').sort((a, b) => a.settledAt!.getTime() - b.settledAt!.getTime() || a.seq - b.seq);
}

function recordPickOf(pick: BacktestPick): RecordPick {
  const countsForClv = pick.closingOdds !== null && !pick.warnings.includes('stale_close');
  return { result: pick.result!, odds: pick.odds, clvPct: countsForClv ? clvPct(pick.odds, pick.closingOdds!) : null, fairProbability: 1 / pick.referenceFairOdds };
}

/** The day buckets the track record aggregates, made from picks instead of the database. */
export function bucketsOfPicks(settled: readonly BacktestPick[]): TrackRecordBucket[] {
  const buckets = new Map<string, TrackRecordBucket>();
  for (const pick of settled) {
    const date = utcDateString(pick.settledAt!);
    const key = [date, pick.sport, pick.market, pick.result].join('\u0000');
    const bucket = buckets.get(key) ?? { date, sport: pick.sport, market: pick.market, result: pick.result!, count: 0, sumOdds: 0, sumEdgePct: 0, countWithClosing: 0, sumClvPct: 0 };
    buckets.set(key, bucket);
    const clv = recordPickOf(pick).clvPct;
    bucket.count += 1;
    bucket.sumOdds += pick.odds;
    bucket.sumEdgePct += pick.edgePct;
    if (clv !== null) {
      bucket.countWithClosing += 1;
      bucket.sumClvPct += clv;
    }
  }
  return [...buckets.values()];
}

export interface BacktestGroupRow {
  picks: number;
  held: number;
  settled: number;
  roiPct: number | null;
  clvAvgPct: number | null;
}

export interface BacktestReport {
  /** The record of the settled picks, as the API's track record computes it over the backtest's span. */
  trackRecord: TrackRecordReport;
  window: { from: string; to: string } | null;
  picks: number;
  held: number;
  unsettled: number;
  skipped: number;
  perMarket: ({ market: string } & BacktestGroupRow)[];
  perBook: ({ bookmaker: string } & BacktestGroupRow)[];
}

function groupRow(picks: readonly BacktestPick[]): BacktestGroupRow {
  const settled = settledInRecordOrder(picks).map(recordPickOf);
  const summary = summarizePicks(settled);
  const profit = summary.meanProfit * summary.n;
  const clv = settled.flatMap((pick) => (pick.clvPct === null ? [] : [pick.clvPct]));
  return {
    picks: picks.length,
    held: picks.filter((pick) => pick.status === 'admin_review').length,
    settled: settled.length,
    roiPct: summary.n === 0 ? null : roundTo((100 * profit) / summary.n, 2),
    clvAvgPct: clv.length === 0 ? null : roundTo(clv.reduce((a, b) => a + b, 0) / clv.length, 2),
  };
}

function groupsBy<K extends 'market' | 'bookmaker'>(picks: readonly BacktestPick[], key: K): ({ [P in K]: string } & BacktestGroupRow)[] {
  const groups = new Map<string, BacktestPick[]>();
  for (const pick of picks) groups.set(pick[key], [...(groups.get(pick[key]) ?? []), pick]);
  return [...groups.entries()]
    .sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0))
    .map(([value, group]) => ({ [key]: value, ...groupRow(group) }) as { [P in K]: string } & BacktestGroupRow);
}

/** The report of a run: the track record with its statistics over the settled picks, and picks per market and per book. */
export function backtestReport(run: BacktestRun): BacktestReport {
  const settled = settledInRecordOrder(run.picks);
  const first = settled[0]?.settledAt ?? null;
  const last = settled.at(-1)?.settledAt ?? null;
  const window = first && last ? { from: first, to: last } : { from: new Date(0), to: new Date(0) };
  const record = aggregateTrackRecord(bucketsOfPicks(settled), window);
  return {
    trackRecord: trackRecordReport(first ? record : { ...record, series: [] }, recordStatistics(summarizePicks(settled.map(recordPickOf))), referenceCoverageOfPicks(settled), NO_AVAILABILITY),
    window: first && last ? { from: first.toISOString(), to: last.toISOString() } : null,
    picks: run.picks.length,
    held: run.picks.filter((pick) => pick.status === 'admin_review').length,
    unsettled: run.picks.filter((pick) => pick.status === 'published').length,
    skipped: run.skipped.length,
    perMarket: groupsBy(run.picks, 'market'),
    perBook: groupsBy(run.picks, 'bookmaker'),
  };
}
