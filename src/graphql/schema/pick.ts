import type { ObjectRef } from '@pothos/core';
import { MINIMUM_TIER } from '../../domain/access.js';
import { TIERS } from '../../domain/api-key.js';
import { PICKS_PAGE, TODAY_PAGE } from '../../domain/bounds.js';
import { encodePickCursor } from '../../domain/cursor.js';
import { factsOf, GRAPHQL_PICK, isLeaf, leafField, PICK_FIELDS, type Layout, type PickField, type PickRecord } from '../../domain/pick-shape.js';
import { boundedInt } from '../argument-guard.js';
import { builder, type Types } from '../builder.js';
import type { Context } from '../context.js';
import { ITEMS_OF_PAGE, pageComplexity } from '../limits.js';
import { declaredEnumType } from '../resource-types.js';
import { upperEnumValues } from './enums.js';
import { PickReceiptRef, pickReceiptRecord } from './ledger.js';
import { MatchAnalysisRef } from './match-analysis.js';

/** The enum types of the pick's closed-list fields, named and valued by the shape (upper case in GraphQL). */
const pickEnum = <const V extends readonly string[]>(facts: { graphqlEnum: string; values: V }) =>
  builder.enumType(facts.graphqlEnum, { values: upperEnumValues(facts.values) });
export const PickStatusEnum = pickEnum(PICK_FIELDS.status);
export const PickResultEnum = pickEnum(PICK_FIELDS.result);
export const EdgeTierEnum = pickEnum(PICK_FIELDS.edgeTier);
export const PickWarningEnum = pickEnum(PICK_FIELDS.warnings);
export const PickAvailabilityStatusEnum = pickEnum(PICK_FIELDS.availabilityStatus);
// Declared enums reuse it by name (the usage's tier, src/domain/usage-shape.ts).
export const TierEnum = declaredEnumType('Tier', TIERS);
const ENUM_TYPES: Record<string, typeof PickStatusEnum | typeof PickResultEnum | typeof EdgeTierEnum | typeof PickWarningEnum | typeof PickAvailabilityStatusEnum> = {
  [PICK_FIELDS.status.graphqlEnum]: PickStatusEnum,
  [PICK_FIELDS.result.graphqlEnum]: PickResultEnum,
  [PICK_FIELDS.edgeTier.graphqlEnum]: EdgeTierEnum,
  [PICK_FIELDS.warnings.graphqlEnum]: PickWarningEnum,
  [PICK_FIELDS.availabilityStatus.graphqlEnum]: PickAvailabilityStatusEnum,
};

const SCALAR_OF_STORAGE = { uuid: 'ID', text: 'String', smallint: 'Int', integer: 'Int', decimal: 'Float', datetime: 'DateTime' } as const;

/** A declared field's GraphQL type: its enum (a list of it for codes), or the scalar of how it is stored. */
function graphqlTypeOf(name: PickField) {
  const facts = factsOf(name);
  if (facts.graphqlEnum !== undefined) return facts.storage.kind === 'codes' ? [ENUM_TYPES[facts.graphqlEnum]!] : ENUM_TYPES[facts.graphqlEnum]!;
  if (facts.storage.kind === 'codes') throw new Error(`the pick's ${name} is a list of codes without an enum`);
  return SCALAR_OF_STORAGE[facts.storage.kind];
}

type PickFieldBuilder = PothosSchemaTypes.ObjectFieldBuilder<Types, PickRecord>;

/** The fields of a layout level; a nested level is an object type named by NESTED_TYPE_NAMES. */
function layoutFields(t: PickFieldBuilder, layout: Layout): Record<string, ReturnType<PickFieldBuilder['field']>> {
  return Object.fromEntries(
    Object.entries(layout).map(([key, entry]) => {
      if (!isLeaf(entry)) return [key, t.field({ type: nestedType(key, entry), resolve: (pick) => pick })];
      const name = leafField(entry);
      const facts = factsOf(name);
      const description = (facts.schema as { description?: string }).description;
      // Pothos types expose() per literal field name; the shape's names are checked by its own types.
      // A list of codes is never null and holds no nulls ([] when none apply).
      const nullable = facts.storage.kind === 'codes' ? { list: false, items: false } : facts.nullable;
      return [key, t.expose(name as never, { type: graphqlTypeOf(name) as never, nullable, description } as never)];
    }),
  );
}

/** Nested levels of the GraphQL Pick (the bookmaker's name and slug) read the same record. */
const NESTED_TYPE_NAMES: Record<string, string> = { bookmaker: 'Bookmaker', finalScore: 'FinalScore', availability: 'PickAvailability' };
const nestedTypes = new Map<string, ObjectRef<Types, PickRecord>>();
function nestedType(key: string, layout: Layout): ObjectRef<Types, PickRecord> {
  let ref = nestedTypes.get(key);
  if (ref === undefined) {
    const name = NESTED_TYPE_NAMES[key];
    if (name === undefined) throw new Error(`no GraphQL type name for the pick's nested ${key}`);
    ref = builder.objectRef<PickRecord>(name).implement({ fields: (t) => layoutFields(t, layout) });
    nestedTypes.set(key, ref);
  }
  return ref;
}

export const PickRef = builder.objectRef<PickRecord>('Pick').implement({
  description: 'A model-generated bet whose odds beat the sharp reference bookmaker.',
  fields: (t) => ({
    ...layoutFields(t, GRAPHQL_PICK),
    analysis: t.field({
      type: MatchAnalysisRef,
      nullable: true,
      authScopes: { tier: MINIMUM_TIER.matchAnalysis },
      resolve: (pick, _args, context) =>
        context.services.analyses.get(pick.id, { includeHidden: context.principal.kind === 'admin' }),
    }),
    receipt: t.field({
      type: PickReceiptRef,
      nullable: true,
      // As GET /api/v1/picks/:id/receipt: a key that may list picks (todayPicks is anonymous).
      authScopes: { tier: MINIMUM_TIER.listPicks },
      // Three reads, uncached: counted like a page of picks.
      complexity: 20,
      description:
        "The pick's ledger entries, each with its RFC 9162 inclusion proof against the latest signed checkpoint, and that checkpoint: archive it and check it offline " +
        '(docs/API.md, "Verifying the record"). Null for a pick never on the ledger.',
      resolve: async (pick, _args, context) => {
        const receipt = await context.services.ledgerLog.receipt(pick.id);
        return receipt && pickReceiptRecord(receipt);
      },
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
    complexity: (args) => pageComplexity(args.first, PICKS_PAGE),
    args: {
      first: boundedInt(t.arg, PICKS_PAGE, 'Page size,'),
      after: t.arg.string({ description: 'endCursor of the previous page.' }),
      sport: t.arg.string(),
      league: t.arg.string(),
      market: t.arg.string({ description: 'Only picks of this market: h2h, spreads or totals.' }),
      since: t.arg({ type: 'DateTime', description: 'Only picks with kickoffAt after this time.' }),
    },
    resolve: (_root, args, context) => context.services.picks.list({ ...args, first: args.first ?? PICKS_PAGE.default }),
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
    complexity: (args) => pageComplexity(args.limit, TODAY_PAGE),
    args: {
      limit: boundedInt(t.arg, TODAY_PAGE, 'Number of picks,'),
      sport: t.arg.string(),
    },
    resolve: async (_root, args, context) => (await todayTop(context, args.sport ?? null)).slice(0, args.limit ?? TODAY_PAGE.default),
  }),
}));

/**
 * Today's top picks of a sport, read once per request whatever the limits asked (one per alias):
 * anonymous callers cannot turn one request into many queries. Not a cache: it lives as long as
 * the request's context.
 */
const todayTops = new WeakMap<object, Map<string | null, Promise<PickRecord[]>>>();
function todayTop(context: Context, sport: string | null): Promise<PickRecord[]> {
  let tops = todayTops.get(context);
  if (tops === undefined) todayTops.set(context, (tops = new Map()));
  let top = tops.get(sport);
  if (top === undefined) tops.set(sport, (top = context.services.picks.today({ sport, limit: TODAY_PAGE.max })));
  return top;
}

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
    market: t.string({ description: 'Market code: h2h (default), spreads or totals.' }),
    selection: t.string({ required: true, description: 'h2h: homeTeam, awayTeam or "Draw"; spreads: homeTeam or awayTeam; totals: "Over" or "Under".' }),
    line: t.float({ description: "spreads: the selected team's handicap; totals: the point; a multiple of 0.25. Absent for h2h." }),
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
    description: 'PUBLISHED -> ADMIN_REVIEW before kickoff: hidden from the API again, recorded in the public ledger (invalid_transition after kickoff).',
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
