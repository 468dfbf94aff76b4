/**
 * The value engine's operator surface (docs/VALUE_ENGINE.md): pushing odds and scores, the
 * review queue, discarding a held pick, a pick's provenance and an event's line movement.
 * Admin only, every field.
 */
import { describeBound, INGEST_EVENTS_MAX, PICKS_PAGE } from '../../domain/bounds.js';
import { HOLD_REASONS, type HoldReason } from '../../domain/engine-rules.js';
import type { ReferencePricing } from '../../domain/reference-consensus.js';
import { boundedInt } from '../argument-guard.js';
import { builder } from '../builder.js';
import { pageComplexity } from '../limits.js';
import { upperEnumValues } from './enums.js';
import { PickConnectionRef, PickRef } from './pick.js';

interface IngestResultShape {
  events: number;
  picksCreated: number;
  picksSettled: number;
  skipped: { eventId: string | null; reason: string }[];
}

const IngestSkipRef = builder.objectRef<IngestResultShape['skipped'][number]>('IngestSkip').implement({
  description: 'An event (or a bookmaker or market inside one) left out, and why.',
  fields: (t) => ({
    eventId: t.string({ nullable: true, resolve: (skip) => skip.eventId }),
    reason: t.exposeString('reason'),
  }),
});

const IngestResultRef = builder.objectRef<IngestResultShape>('IngestResult').implement({
  fields: (t) => ({
    events: t.exposeInt('events', { description: 'Events read (valid ones).' }),
    picksCreated: t.exposeInt('picksCreated'),
    picksSettled: t.exposeInt('picksSettled'),
    skipped: t.field({ type: [IngestSkipRef], resolve: (result) => result.skipped }),
  }),
});

const OutcomeInput = builder.inputType('OddsOutcomeInput', {
  fields: (t) => ({
    name: t.string({ required: true }),
    price: t.float({ required: true, description: 'Decimal odds.' }),
    point: t.float({ description: "spreads: this team's handicap; totals: the total (a multiple of 0.25). Absent for h2h." }),
  }),
});

const MarketInput = builder.inputType('OddsMarketInput', {
  fields: (t) => ({
    key: t.string({ required: true, description: '"h2h", "spreads" or "totals" (those the engine reads, ODDS_FEED_MARKETS); other keys are ignored.' }),
    lastUpdate: t.field({ type: 'DateTime' }),
    outcomes: t.field({ type: [OutcomeInput], required: true }),
  }),
});

const BookmakerOddsInput = builder.inputType('OddsBookmakerInput', {
  fields: (t) => ({
    key: t.string({ required: true, description: 'The feed key, e.g. betfair_ex_eu; becomes the pick bookmaker slug.' }),
    title: t.string({ required: true }),
    lastUpdate: t.field({ type: 'DateTime', required: true }),
    markets: t.field({ type: [MarketInput], required: true }),
  }),
});

const OddsEventInput = builder.inputType('OddsEventInput', {
  description: "One event of The Odds API v4 /odds answer, in camelCase.",
  fields: (t) => ({
    id: t.string({ required: true }),
    sportKey: t.string({ required: true }),
    sportTitle: t.string({ required: true, description: 'The league.' }),
    commenceTime: t.field({ type: 'DateTime', required: true }),
    homeTeam: t.string({ required: true }),
    awayTeam: t.string({ required: true }),
    bookmakers: t.field({ type: [BookmakerOddsInput], required: true }),
  }),
});

const TeamScoreInput = builder.inputType('TeamScoreInput', {
  fields: (t) => ({
    name: t.string({ required: true }),
    score: t.string({ required: true, description: 'Digits, as the feed sends them ("2").' }),
  }),
});

const ScoreEventInput = builder.inputType('ScoreEventInput', {
  description: "One event of The Odds API v4 /scores answer, in camelCase.",
  fields: (t) => ({
    id: t.string({ required: true }),
    sportKey: t.string({ required: true }),
    commenceTime: t.field({ type: 'DateTime', required: true }),
    completed: t.boolean({ required: true }),
    homeTeam: t.string({ required: true }),
    awayTeam: t.string({ required: true }),
    scores: t.field({ type: [TeamScoreInput], description: 'Null or absent before the start.' }),
    lastUpdate: t.field({ type: 'DateTime' }),
  }),
});

/** One reference behind a price, as provenance stores it (absent on picks found before several references). */
interface ReferenceShape {
  bookmaker: string;
  weight: number;
  prices: { name: string; price: number; point?: number; lay?: number }[];
  /** Absent on picks found before exchanges were priced by their midpoint: devigged. */
  pricing?: ReferencePricing;
  fairProbabilities: Record<string, number>;
  updatedAt: string;
}

interface ProvenanceShape {
  eventId: string;
  detectedAt: string;
  referenceBookmaker: string;
  referencePrices: { name: string; price: number; point?: number }[];
  referenceUpdatedAt: string;
  references?: ReferenceShape[];
  devigMethod: string;
  fairProbabilities: Record<'multiplicative' | 'additive' | 'power' | 'shin' | 'oddsRatio', number | null>;
  offeredPrices: { bookmaker: string; price: number; updatedAt: string }[];
  /** Absent on picks found before the rule existed. */
  excludedOffers?: { bookmaker: string; price: number; reason: string }[];
  /** Absent on picks found before hold reasons were recorded. */
  holdReasons?: HoldReason[];
  closingLine?: {
    referencePrices: { name: string; price: number }[];
    fairOdds: number;
    at: string;
    ageSecondsAtKickoff: number;
    stale: boolean;
    references?: ReferenceShape[];
  };
  settlement?: {
    eventId: string;
    homeTeam: string;
    awayTeam: string;
    commenceTime: string;
    scores: { name: string; score: number }[];
    lastUpdate: string | null;
    receivedAt: string;
  };
  engineVersion: string;
}

const PriceRef = builder.objectRef<{ name: string; price: number; lay?: number }>('ReferencePrice').implement({
  fields: (t) => ({
    name: t.exposeString('name'),
    price: t.exposeFloat('price', { description: 'The back price.' }),
    lay: t.float({ nullable: true, description: "An exchange's lay price of the outcome (h2h_lay); null for a book.", resolve: (p) => p.lay ?? null }),
  }),
});

const ReferencePricingEnum = builder.enumType('ReferencePricing', {
  description: "MIDPOINT: an exchange's back/lay midpoint, normalised (no devig method runs); DEVIG: the back prices devigged by the method.",
  values: upperEnumValues(['midpoint', 'devig'] as const),
});

const OutcomeProbabilityRef = builder.objectRef<{ name: string; probability: number }>('OutcomeProbability').implement({
  fields: (t) => ({ name: t.exposeString('name'), probability: t.exposeFloat('probability') }),
});

const ReferenceUsedRef = builder.objectRef<ReferenceShape>('ReferenceUsed').implement({
  description: 'One sharp reference behind a fair price: its prices, its own no-vig probabilities (by the devig method) and its weight in the consensus.',
  fields: (t) => ({
    bookmaker: t.exposeString('bookmaker', { description: 'Feed bookmaker key.' }),
    weight: t.exposeFloat('weight', { description: 'Its weight in REFERENCE_BOOKMAKERS.' }),
    prices: t.field({ type: [PriceRef], resolve: (r) => r.prices }),
    pricing: t.field({ type: ReferencePricingEnum, description: 'How its prices became its probabilities.', resolve: (r) => r.pricing ?? 'devig' }),
    fairProbabilities: t.field({
      type: [OutcomeProbabilityRef],
      resolve: (r) => Object.entries(r.fairProbabilities).map(([name, probability]) => ({ name, probability })),
    }),
    updatedAt: t.field({ type: 'DateTime', description: "The reference market's last_update.", resolve: (r) => new Date(r.updatedAt) }),
  }),
});

/** Picks found before several references name one reference and no per-outcome probabilities: listed as that one, weight 1. */
function referencesOf(stored: ReferenceShape[] | undefined, bookmaker: string, prices: ReferenceShape['prices'], updatedAt: string): ReferenceShape[] {
  return stored ?? [{ bookmaker, weight: 1, prices, fairProbabilities: {}, updatedAt }];
}

const OfferedPriceRef = builder.objectRef<ProvenanceShape['offeredPrices'][number]>('OfferedPrice').implement({
  fields: (t) => ({
    bookmaker: t.exposeString('bookmaker', { description: 'Feed bookmaker key.' }),
    price: t.exposeFloat('price'),
    updatedAt: t.field({ type: 'DateTime', resolve: (offer) => new Date(offer.updatedAt) }),
  }),
});

const FairProbabilitiesRef = builder.objectRef<ProvenanceShape['fairProbabilities']>('FairProbabilities').implement({
  description: "Each devig method's fair probability of the selection; null where the method refuses the market.",
  fields: (t) => ({
    multiplicative: t.float({ nullable: true, resolve: (p) => p.multiplicative }),
    additive: t.float({ nullable: true, resolve: (p) => p.additive }),
    power: t.float({ nullable: true, resolve: (p) => p.power }),
    shin: t.float({ nullable: true, resolve: (p) => p.shin }),
    oddsRatio: t.float({ nullable: true, resolve: (p) => p.oddsRatio }),
  }),
});

const ExcludedOfferRef = builder.objectRef<NonNullable<ProvenanceShape['excludedOffers']>[number]>('ExcludedOffer').implement({
  description: 'A qualifying offer the engine passed over for a plausible one.',
  fields: (t) => ({
    bookmaker: t.exposeString('bookmaker', { description: 'Feed bookmaker key.' }),
    price: t.exposeFloat('price'),
    reason: t.exposeString('reason', { description: '"too_good": its post-tax edge was at or above PICK_REVIEW_EDGE.' }),
  }),
});

const ClosingLineRecordRef = builder.objectRef<NonNullable<ProvenanceShape['closingLine']>>('ClosingLineRecord').implement({
  description: "What the stored closing line was made of: the reference's last prices before kickoff.",
  fields: (t) => ({
    referencePrices: t.field({ type: [PriceRef], resolve: (c) => c.referencePrices }),
    fairOdds: t.exposeFloat('fairOdds', { description: "The selection's no-vig closing price (Pick.closingOdds)." }),
    at: t.field({ type: 'DateTime', description: "The reference market's last_update.", resolve: (c) => new Date(c.at) }),
    ageSecondsAtKickoff: t.exposeFloat('ageSecondsAtKickoff'),
    stale: t.exposeBoolean('stale', { description: 'Older than CLOSING_LINE_MAX_AGE_SECONDS at kickoff: shown, left out of the CLV average.' }),
    references: t.field({
      type: [ReferenceUsedRef],
      description: 'Every reference the close is the consensus of.',
      // Filled in by PickProvenance.closingLine for closes recorded before several references.
      resolve: (c) => c.references ?? [],
    }),
  }),
});

const FinalScoreRef = builder.objectRef<{ name: string; score: number }>('FinalTeamScore').implement({
  fields: (t) => ({ name: t.exposeString('name'), score: t.exposeInt('score') }),
});

const SettlementRecordRef = builder.objectRef<NonNullable<ProvenanceShape['settlement']>>('SettlementRecord').implement({
  description: 'The score record an automatic settlement came from, as the scores feed sent it.',
  fields: (t) => ({
    eventId: t.exposeString('eventId'),
    homeTeam: t.exposeString('homeTeam'),
    awayTeam: t.exposeString('awayTeam'),
    commenceTime: t.field({ type: 'DateTime', resolve: (r) => new Date(r.commenceTime) }),
    scores: t.field({ type: [FinalScoreRef], resolve: (r) => r.scores }),
    lastUpdate: t.field({ type: 'DateTime', nullable: true, resolve: (r) => (r.lastUpdate === null ? null : new Date(r.lastUpdate)) }),
    receivedAt: t.field({ type: 'DateTime', resolve: (r) => new Date(r.receivedAt) }),
  }),
});

const HoldReasonEnum = builder.enumType('HoldReason', {
  description: 'Why the engine held a pick for an operator: TOO_GOOD, its post-tax edge was at or above PICK_REVIEW_EDGE; OPPOSITE_SIDE, the engine had already published another side of the same market and line.',
  values: upperEnumValues(HOLD_REASONS),
});

const PickProvenanceRef = builder.objectRef<ProvenanceShape>('PickProvenance').implement({
  description: 'How the value engine found a pick (internal tools).',
  fields: (t) => ({
    eventId: t.exposeString('eventId'),
    detectedAt: t.field({ type: 'DateTime', resolve: (p) => new Date(p.detectedAt) }),
    referenceBookmaker: t.exposeString('referenceBookmaker'),
    referencePrices: t.field({ type: [PriceRef], resolve: (p) => p.referencePrices }),
    referenceUpdatedAt: t.field({ type: 'DateTime', resolve: (p) => new Date(p.referenceUpdatedAt) }),
    references: t.field({
      type: [ReferenceUsedRef],
      description: 'Every reference the fair price is the consensus of (referenceBookmaker is the first).',
      resolve: (p) => referencesOf(p.references, p.referenceBookmaker, p.referencePrices, p.referenceUpdatedAt),
    }),
    devigMethod: t.exposeString('devigMethod'),
    fairProbabilities: t.field({ type: FairProbabilitiesRef, resolve: (p) => p.fairProbabilities }),
    offeredPrices: t.field({ type: [OfferedPriceRef], resolve: (p) => p.offeredPrices }),
    excludedOffers: t.field({ type: [ExcludedOfferRef], resolve: (p) => p.excludedOffers ?? [] }),
    holdReasons: t.field({
      type: [HoldReasonEnum],
      description: 'Why the engine held the pick when it found it; empty when it published it at once (and on picks found before the reasons were recorded). Kept after an operator approves it; a held pick the engine promotes to a plausible offer takes the provenance of that offer, and so none.',
      resolve: (p) => p.holdReasons ?? [],
    }),
    closingLine: t.field({
      type: ClosingLineRecordRef,
      nullable: true,
      description: 'Null until kickoff.',
      resolve: (p) =>
        p.closingLine ? { ...p.closingLine, references: referencesOf(p.closingLine.references, p.referenceBookmaker, p.closingLine.referencePrices, p.closingLine.at) } : null,
    }),
    settlement: t.field({ type: SettlementRecordRef, nullable: true, description: 'Null until the engine settles the pick (and for settlements by hand).', resolve: (p) => p.settlement ?? null }),
    engineVersion: t.exposeString('engineVersion'),
  }),
});

builder.objectField(PickRef, 'provenance', (t) =>
  t.field({
    type: PickProvenanceRef,
    nullable: true,
    description: 'Admin only. Null for picks published by hand.',
    authScopes: { admin: true },
    resolve: async (pick, _args, context) => (await context.services.picks.provenance(pick.id)) as ProvenanceShape | null,
  }),
);

const OddsPointRef = builder.objectRef<{ bookmaker: string; market: string; outcome: string; price: number; at: Date }>('OddsPoint').implement({
  description: 'One price change of one bookmaker for one outcome.',
  fields: (t) => ({
    bookmaker: t.exposeString('bookmaker', { description: 'Feed bookmaker key.' }),
    market: t.exposeString('market', { description: 'h2h, spreads or totals.' }),
    outcome: t.exposeString('outcome', { description: 'The outcome, with its point in a line market ("Arsenal -0.5", "Over 2.5").' }),
    price: t.exposeFloat('price'),
    at: t.expose('at', { type: 'DateTime', description: "The feed's last_update of the price." }),
  }),
});

builder.queryFields((t) => ({
  reviewQueue: t.field({
    type: PickConnectionRef,
    description: 'Held (ADMIN_REVIEW) picks whose kickoff is ahead, oldest first. Admin only.',
    authScopes: { admin: true },
    complexity: (args) => pageComplexity(args.first, PICKS_PAGE),
    args: {
      first: boundedInt(t.arg, PICKS_PAGE, 'Page size,'),
      after: t.arg.string({ description: 'endCursor of the previous page.' }),
    },
    resolve: (_root, args, context) => context.services.picks.reviewQueue({ ...args, first: args.first ?? PICKS_PAGE.default }),
  }),
  oddsHistory: t.field({
    type: [OddsPointRef],
    description: 'Line movement of one feed event, oldest first (at most 10,000 points). Admin only.',
    authScopes: { admin: true },
    // One field of the cost model: a bounded admin read, not a customer page.
    complexity: 100,
    args: { eventId: t.arg.string({ required: true }) },
    resolve: (_root, args, context) => context.services.valueEngine.oddsHistory(args.eventId),
  }),
}));

builder.mutationFields((t) => ({
  ingestOdds: t.field({
    type: IngestResultRef,
    description: `Pushes odds in The Odds API v4 shape (camelCase), at most ${INGEST_EVENTS_MAX} events; the same processing as a poll. Admin only.`,
    authScopes: { admin: true },
    args: { events: t.arg({ type: [OddsEventInput], required: true }) },
    resolve: (_root, args, context) => context.services.valueEngine.ingestOddsInput(args.events),
  }),
  ingestScores: t.field({
    type: IngestResultRef,
    description: `Pushes results in The Odds API v4 /scores shape (camelCase), at most ${INGEST_EVENTS_MAX} events; completed events settle their published picks. Admin only.`,
    authScopes: { admin: true },
    args: { events: t.arg({ type: [ScoreEventInput], required: true }) },
    resolve: (_root, args, context) => context.services.valueEngine.ingestScoresInput(args.events),
  }),
  discardPick: t.field({
    type: PickRef,
    description: 'ADMIN_REVIEW -> DISCARDED for a held pick that was never visible: it leaves the review queue for good. Admin only.',
    authScopes: { admin: true },
    args: { id: t.arg.id({ required: true }) },
    resolve: (_root, args, context) => context.services.picks.discard(String(args.id)),
  }),
}));
