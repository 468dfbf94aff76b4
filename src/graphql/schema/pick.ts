import { MINIMUM_TIER } from '../../domain/access.js';
import { TIERS } from '../../domain/api-key.js';
import { describeBound, PICKS_PAGE, TODAY_PAGE } from '../../domain/bounds.js';
import { EDGE_TIERS } from '../../domain/odds.js';
import { PICK_RESULTS, PICK_STATUSES } from '../../domain/pick.js';
import { encodePickCursor } from '../../domain/cursor.js';
import type { PickRecord } from '../../domain/pick-view.js';
import { builder } from '../builder.js';
import { ITEMS_OF_PAGE, pageComplexity } from '../limits.js';
import { upperEnumValues } from './enums.js';
import { MatchAnalysisRef } from './match-analysis.js';

export const PickStatusEnum = builder.enumType('PickStatus', { values: upperEnumValues(PICK_STATUSES) });
export const PickResultEnum = builder.enumType('PickResult', { values: upperEnumValues(PICK_RESULTS) });
export const EdgeTierEnum = builder.enumType('EdgeTier', { values: upperEnumValues(EDGE_TIERS) });
export const TierEnum = builder.enumType('Tier', { values: upperEnumValues(TIERS) });

const BookmakerRef = builder.objectRef<{ name: string; slug: string }>('Bookmaker').implement({
  fields: (t) => ({
    name: t.exposeString('name'),
    slug: t.exposeString('slug'),
  }),
});

export const PickRef = builder.objectRef<PickRecord>('Pick').implement({
  description: 'A model-generated bet whose odds beat the sharp reference bookmaker.',
  fields: (t) => ({
    id: t.exposeID('id', { description: 'Also the matchId of the match analysis.' }),
    sport: t.exposeString('sport'),
    league: t.exposeString('league'),
    homeTeam: t.exposeString('homeTeam'),
    awayTeam: t.exposeString('awayTeam'),
    kickoffAt: t.expose('kickoffAt', { type: 'DateTime' }),
    pick: t.exposeString('description', { description: 'Human-readable description of the bet.' }),
    market: t.exposeString('market', { description: 'Market code; h2h = head to head.' }),
    selection: t.exposeString('selection', { description: 'The chosen side: a team name or "Draw".' }),
    bookmaker: t.field({ type: BookmakerRef, resolve: (pick) => ({ name: pick.bookmakerName, slug: pick.bookmakerSlug }) }),
    odds: t.exposeFloat('odds', { description: 'Decimal odds at the bookmaker.' }),
    referenceFairOdds: t.exposeFloat('referenceFairOdds', { description: 'Fair odds of the sharp reference bookmaker.' }),
    taxRate: t.exposeFloat('taxRate', { description: 'Tax rate applied to winnings at this bookmaker (fraction).' }),
    edgePct: t.exposeFloat('edgePct', { description: '(odds / referenceFairOdds - 1) x 100.' }),
    edgePctPostTax: t.exposeFloat('edgePctPostTax', { description: 'Post-tax edge as a fraction (0.0858 = 8.58 %).' }),
    kellyFraction: t.exposeFloat('kellyFraction', { description: 'Full-Kelly stake as a fraction of bankroll, floored at 0.' }),
    edgeTier: t.field({ type: EdgeTierEnum, resolve: (pick) => pick.edgeTier }),
    confidence: t.exposeInt('confidence', { description: 'Model confidence, 0 to 100.' }),
    status: t.field({ type: PickStatusEnum, resolve: (pick) => pick.status }),
    result: t.field({ type: PickResultEnum, nullable: true, resolve: (pick) => pick.result ?? null }),
    closingOdds: t.float({
      nullable: true,
      description: "Closing odds for CLV: the operator's at settlement, or for engine picks the reference's no-vig close, stored at kickoff.",
      resolve: (pick) => pick.closingOdds ?? null,
    }),
    publishedAt: t.field({ type: 'DateTime', nullable: true, resolve: (pick) => pick.publishedAt ?? null }),
    settledAt: t.field({ type: 'DateTime', nullable: true, resolve: (pick) => pick.settledAt ?? null }),
    analysis: t.field({
      type: MatchAnalysisRef,
      nullable: true,
      authScopes: { tier: MINIMUM_TIER.matchAnalysis },
      resolve: (pick, _args, context) =>
        context.services.analyses.get(pick.id, { includeHidden: context.principal.kind === 'admin' }),
    }),
  }),
});

export const PageInfoRef = builder.objectRef<{ hasNextPage: boolean; endCursor: string | null }>('PageInfo').implement({
  fields: (t) => ({
    hasNextPage: t.exposeBoolean('hasNextPage'),
    endCursor: t.exposeString('endCursor', { nullable: true, description: 'Pass as `after` for the next page; null on the last page.' }),
  }),
});

const PickEdgeRef = builder.objectRef<{ pick: PickRecord; cursor: string }>('PickEdge').implement({
  fields: (t) => ({
    cursor: t.exposeString('cursor'),
    node: t.field({ type: PickRef, resolve: (edge) => edge.pick }),
  }),
});

interface PickConnectionShape {
  picks: PickRecord[];
  nextCursor: string | null;
  /** The list's own cursor per pick when it is not ordered by kickoff (the review queue). */
  cursors?: string[];
}

export const PickConnectionRef = builder.objectRef<PickConnectionShape>('PickConnection').implement({
  description: 'A page of picks: the visible list (kickoff time descending, then id descending) or the review queue (oldest first).',
  fields: (t) => ({
    edges: t.field({
      type: [PickEdgeRef],
      complexity: ITEMS_OF_PAGE,
      resolve: (page) =>
        page.picks.map((pick, index) => ({ pick, cursor: page.cursors?.[index] ?? encodePickCursor({ kickoffAt: pick.kickoffAt, id: pick.id }) })),
    }),
    nodes: t.field({ type: [PickRef], complexity: ITEMS_OF_PAGE, resolve: (page) => page.picks }),
    pageInfo: t.field({
      type: PageInfoRef,
      resolve: (page) => ({ hasNextPage: page.nextCursor !== null, endCursor: page.nextCursor }),
    }),
    count: t.int({ description: 'Number of picks in this page.', resolve: (page) => page.picks.length }),
  }),
});

builder.queryFields((t) => ({
  picks: t.field({
    type: PickConnectionRef,
    description: 'Published and settled picks (never admin_review), newest kickoff first.',
    authScopes: { tier: MINIMUM_TIER.listPicks },
    complexity: (args) => pageComplexity(args.first, PICKS_PAGE.default, PICKS_PAGE.max),
    args: {
      first: t.arg.int({ description: `Page size, ${describeBound(PICKS_PAGE)}` }),
      after: t.arg.string({ description: 'endCursor of the previous page.' }),
      sport: t.arg.string(),
      league: t.arg.string(),
      since: t.arg({ type: 'DateTime', description: 'Only picks with kickoffAt after this time.' }),
    },
    resolve: (_root, args, context) => context.services.picks.list(args, 'first'),
  }),
  pick: t.field({
    type: PickRef,
    nullable: true,
    authScopes: { tier: MINIMUM_TIER.listPicks },
    args: { id: t.arg.id({ required: true }) },
    resolve: (_root, args, context) =>
      context.services.picks.get(String(args.id), { includeHidden: context.principal.kind === 'admin' }),
  }),
  todayPicks: t.field({
    type: [PickRef],
    description: "Today's top picks (first published on the current UTC date), best post-tax edge first. Anonymous.",
    complexity: (args) => pageComplexity(args.limit, TODAY_PAGE.default, TODAY_PAGE.max),
    args: {
      limit: t.arg.int({ description: describeBound(TODAY_PAGE) }),
      sport: t.arg.string(),
    },
    resolve: (_root, args, context) => context.services.picks.today(args, 'limit'),
  }),
}));

const BookmakerInput = builder.inputType('BookmakerInput', {
  fields: (t) => ({
    name: t.string({ required: true }),
    slug: t.string({ required: true }),
    taxRate: t.float({ description: 'Tax on stakes at this bookmaker (fraction; a bet pays odds x (1 - taxRate) per unit staked); default 0.053.' }),
  }),
});

const PublishableStatusEnum = builder.enumType('PublishableStatus', {
  values: { PUBLISHED: { value: 'published' as const }, ADMIN_REVIEW: { value: 'admin_review' as const } },
});

const PublishPickInput = builder.inputType('PublishPickInput', {
  fields: (t) => ({
    sport: t.string({ required: true, description: 'Sport slug, e.g. soccer.' }),
    league: t.string({ required: true }),
    homeTeam: t.string({ required: true }),
    awayTeam: t.string({ required: true }),
    kickoffAt: t.field({ type: 'DateTime', required: true }),
    market: t.string({ description: 'Market code; default "h2h".' }),
    selection: t.string({ required: true, description: 'homeTeam, awayTeam or "Draw".' }),
    bookmaker: t.field({ type: BookmakerInput, required: true }),
    odds: t.float({ required: true }),
    referenceFairOdds: t.float({ required: true }),
    confidence: t.int({ required: true, description: '0 to 100.' }),
    pick: t.string({ description: 'Description of the bet; derived when absent.' }),
    status: t.field({ type: PublishableStatusEnum, description: 'PUBLISHED (default) or ADMIN_REVIEW.' }),
    publishedAt: t.field({ type: 'DateTime', description: 'For importing history; only with status PUBLISHED.' }),
  }),
});

const SettlePickInput = builder.inputType('SettlePickInput', {
  fields: (t) => ({
    id: t.id({ required: true }),
    result: t.field({ type: PickResultEnum, required: true }),
    closingOdds: t.float({
      description:
        "Closing decimal odds, for CLV. Absent: the closing line the value engine stored at kickoff (the reference's no-vig close); with neither, invalid_parameter.",
    }),
    settledAt: t.field({ type: 'DateTime', description: 'Default: now.' }),
  }),
});

builder.mutationFields((t) => ({
  publishPick: t.field({
    type: PickRef,
    authScopes: { admin: true },
    args: { input: t.arg({ type: PublishPickInput, required: true }) },
    resolve: (_root, { input }, context) => context.services.picks.publish(input),
  }),
  approvePick: t.field({
    type: PickRef,
    description: 'ADMIN_REVIEW -> PUBLISHED; the first approval emits pick.published.',
    authScopes: { admin: true },
    args: { id: t.arg.id({ required: true }) },
    resolve: (_root, args, context) => context.services.picks.approve(String(args.id)),
  }),
  holdPick: t.field({
    type: PickRef,
    description: 'PUBLISHED -> ADMIN_REVIEW: hidden again.',
    authScopes: { admin: true },
    args: { id: t.arg.id({ required: true }) },
    resolve: (_root, args, context) => context.services.picks.hold(String(args.id)),
  }),
  settlePick: t.field({
    type: PickRef,
    description: 'PUBLISHED -> SETTLED (final); emits pick.settled.',
    authScopes: { admin: true },
    args: { input: t.arg({ type: SettlePickInput, required: true }) },
    resolve: (_root, { input }, context) => context.services.picks.settle({ ...input, id: String(input.id) }),
  }),
}));
