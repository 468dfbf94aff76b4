/**
 * The pick, declared once. PICK_FIELDS holds each field's value schema (TypeBox: a JSON Schema
 * object and a TypeScript type from one definition), how it is stored, and an example; the layouts
 * below say which fields each surface shows and under which names. Everything else derives from
 * them: the record and snapshot types, the table's columns and row mapping, the GraphQL Pick, the
 * documented Pick of REST, stream and webhook bodies (docs/API.md, "Pick"), the public pick, their
 * OpenAPI schemas and examples, and the adapters' GraphQL selections.
 *
 * A new field is one entry in PICK_FIELDS and one line in each layout that shows it (plus a
 * migration when it is stored). A nullable field, or one with a default, may be left out
 * wherever a pick is created.
 */
import Type, { type Static, type TSchema } from 'typebox';
import { MARKETS } from './market.js';
import { roundTo } from './numbers.js';
import { orNullJsonSchema } from './resource-shape.js';
import { EDGE_TIERS } from './odds.js';
import { AVAILABILITY_STATUSES, PICK_RESULTS, PICK_STATUSES, PICK_WARNINGS, VISIBLE_STATUSES } from './pick.js';
import { SPORT_SLUGS } from './sports.js';

/** How a field is stored: the column type (the column name is the field name in snake_case). */
export type Storage =
  | { kind: 'uuid' }
  | { kind: 'text' }
  | { kind: 'smallint' }
  | { kind: 'integer' }
  | { kind: 'datetime' }
  | { kind: 'decimal'; precision: number; scale: number }
  /** A JSON array of the field's `values` (jsonb, checked against them). */
  | { kind: 'codes' };

export interface FieldFacts<S extends TSchema = TSchema> {
  /** The JSON value (never null: see `nullable`); a datetime's is its ISO 8601 string. */
  schema: S;
  storage: Storage;
  nullable: boolean;
  /** The GraphQL enum type of a field whose values are a closed list (GraphQL spells them upper case). */
  graphqlEnum?: string;
  /** The allowed values of such a field (or of each element of a list of codes), as stored and as JSON shows them. */
  values?: readonly string[];
  /** The value of the documented example pick (OpenAPI), as JSON. */
  example: unknown;
  /** The value a pick created without this field starts with (a field with one is never null). */
  default?: unknown;
}

const field = <S extends TSchema, const St extends Storage>(schema: S, storage: St, example: Static<S>) => ({
  schema,
  storage,
  example,
  nullable: false as const,
});

const text = (description: string | undefined, example: string) => field(Type.String(described(description)), { kind: 'text' }, example);
const decimal = (precision: number, scale: number, description: string, example: number) =>
  field(Type.Number({ description }), { kind: 'decimal', precision, scale }, example);
const timestamp = (description: string | undefined, example: string) =>
  field(Type.String({ format: 'date-time', ...described(description) }), { kind: 'datetime' }, example);
const oneOf = <const V extends readonly string[]>(values: V, graphqlEnum: string, description: string | undefined, example: V[number]) => ({
  ...field(Type.Unsafe<V[number]>({ type: 'string', enum: [...values], ...described(description) }), { kind: 'text' }, example),
  graphqlEnum,
  values,
});
/** A list of codes from a closed list: a JSON array, [] when none apply. */
const codes = <const V extends readonly string[]>(values: V, graphqlEnum: string, description: string, example: V[number][]) => ({
  ...field(Type.Array(Type.Unsafe<V[number]>({ type: 'string', enum: [...values] }), { description }), { kind: 'codes' }, example),
  graphqlEnum,
  values,
});
function described(description: string | undefined): { description?: string } {
  return description === undefined ? {} : { description };
}

/** The same field, null until something happens (settlement, publication, the close). */
function orNull<Facts extends { schema: TSchema }>(
  facts: Facts,
  example: Static<Facts['schema']> | null = null,
): Omit<Facts, 'nullable' | 'example'> & { nullable: true; example: Static<Facts['schema']> | null } {
  return { ...facts, nullable: true, example };
}

/** The same field, never null, set to `value` when a pick is created without it. */
function defaulted<Facts extends { schema: TSchema }, const D extends Static<Facts['schema']>>(facts: Facts, value: D): Facts & { default: D } {
  return { ...facts, default: value };
}

export const PICK_FIELDS = {
  id: field(Type.String({ format: 'uuid', description: 'Also the matchId of the match analysis.' }), { kind: 'uuid' }, '0b7f3c9e-5d2a-4e61-9a8b-3c4d5e6f7a81'),
  // A string with the slugs as documented values: feeds and old rows are typed as text, and the API documents the list.
  sport: field(Type.String({ enum: [...SPORT_SLUGS], description: 'Sport slug.' }), { kind: 'text' }, 'soccer'),
  league: text('League name.', 'Premier League'),
  homeTeam: text(undefined, 'Arsenal'),
  awayTeam: text(undefined, 'Chelsea'),
  kickoffAt: timestamp(undefined, '2026-12-01T15:00:00.000Z'),
  description: text('Human-readable description of the bet, e.g. "Arsenal to win @ 2.2".', 'Arsenal to win @ 2.2'),
  odds: decimal(10, 4, 'Decimal odds at the bookmaker.', 2.2),
  edgePct: decimal(12, 4, 'Edge in percent: (odds / reference fair odds - 1) x 100, 2 decimals.', 10),
  confidence: field(Type.Integer({ minimum: 0, maximum: 100, description: 'Model confidence, 0 to 100.' }), { kind: 'smallint' }, 70),
  status: oneOf(PICK_STATUSES, 'PickStatus', undefined, 'published'),
  settledAt: orNull(timestamp('null until settled.', '2026-12-01T17:00:00.000Z')),
  result: orNull(oneOf(PICK_RESULTS, 'PickResult', 'null until settled.', 'won')),
  market: field(Type.String({ enum: [...MARKETS], description: 'Market code: h2h (head to head), spreads (a handicap on one team), totals (over or under a total).' }), { kind: 'text' }, 'h2h'),
  selection: text('The chosen side: h2h, a team name or "Draw"; spreads, a team name; totals, "Over" or "Under".', 'Arsenal'),
  bookmakerName: text(undefined, 'Bet365'),
  bookmakerSlug: text(undefined, 'bet365'),
  referenceFairOdds: decimal(10, 4, 'Fair odds of the sharp reference bookmaker (its margin removed).', 2),
  taxRate: decimal(6, 5, 'Tax on stakes at this bookmaker, as a fraction: a bet pays odds x (1 - tax rate) per unit staked.', 0),
  edgePctPostTax: decimal(12, 6, 'Post-tax edge as a decimal fraction (0.0858 = 8.58 %): odds x (1 - tax rate) / reference fair odds - 1.', 0.1),
  kellyFraction: decimal(12, 6, 'Full-Kelly stake as a decimal fraction of the bankroll, floored at 0.', 0.083333),
  edgeTier: oneOf(EDGE_TIERS, 'EdgeTier', 'big_edge from 0.08 post-tax edge, stark from 0.04.', 'big_edge'),
  closingOdds: orNull(
    decimal(10, 4, "Closing odds for CLV: the operator's at settlement, or for engine picks the reference's no-vig close, stored at kickoff.", 2),
  ),
  publishedAt: orNull(timestamp(undefined, '2026-11-22T12:00:00.000Z'), '2026-11-22T12:00:00.000Z'),
  line: orNull(decimal(6, 2, "The point of a spreads or totals pick (the selected team's handicap, or the total); null for h2h.", 0)),
  stakePct: decimal(
    6,
    2,
    'Advised stake in percent of the bankroll, fixed at publication: a quarter of full Kelly, at most 2 (by default), two decimals.',
    2,
  ),
  finalHomeScore: orNull(field(Type.Integer({ minimum: 0, description: "The home side's final score as the scores feed reported it; null until the engine settles the pick (and for picks settled by hand)." }), { kind: 'smallint' }, 2), 2),
  finalAwayScore: orNull(field(Type.Integer({ minimum: 0, description: "The away side's final score, as final_score.home." }), { kind: 'smallint' }, 1), 1),
  ledgerSeq: orNull(
    field(Type.Integer({ minimum: 1, description: 'seq of the latest public ledger entry about this pick (docs/API.md, "Verifying the record"); null while it never was visible.' }), { kind: 'integer' }, 1042),
    1042,
  ),
  ledgerHash: orNull(text('hash of that ledger entry: keep it, and the ledger can be checked against it later.', 'b5bb9d8014a0f9b1d61e21e796d78dccdf1352f23cd32812f4850b878ae4944c'), 'b5bb9d8014a0f9b1d61e21e796d78dccdf1352f23cd32812f4850b878ae4944c'),
  warnings: codes(
    PICK_WARNINGS,
    'PickWarning',
    'What to know before trusting the price (docs/API.md, "Warnings"); empty when none: single_sharp_reference, wide_reference_market, stale_close.',
    ['single_sharp_reference'],
  ),
  // Availability (docs/API.md, "Availability"): what the engine saw of the pick's own offer at its last odds poll before kickoff.
  availabilityStatus: defaulted(
    oneOf(
      AVAILABILITY_STATUSES,
      'PickAvailabilityStatus',
      "available: the pick's bookmaker still quotes its selection (at its line) with at least the engine's minimum post-tax edge against the current fair price; moved: quoted without it; gone: no longer quoted; unknown: not checked yet, or a pick published by hand. Kept as it was at the last check before kickoff.",
      'available',
    ),
    'unknown',
  ),
  availabilityOddsNow: orNull(decimal(10, 4, "The bookmaker's price at the last check; null before it, and while gone.", 2.16), 2.16),
  availabilityEdgePctNow: orNull(
    decimal(12, 4, 'Post-tax edge in percent of that price against the fair price of the same check, 4 decimals; null when odds_now is.', 5.8),
    5.8,
  ),
  availabilityCheckedAt: orNull(
    timestamp("The last odds poll that read the offer and the fair price; it does not move while the references' fair price is unknown. null before the first check.", '2026-12-01T14:31:00.000Z'),
    '2026-12-01T14:31:00.000Z',
  ),
  availabilitySince: orNull(timestamp('When the current status began; null while unknown.', '2026-11-22T12:00:00.000Z'), '2026-11-22T12:00:00.000Z'),
  bestOddsSincePublished: orNull(
    decimal(10, 4, "The highest price the pick's bookmaker quoted for its selection and line at the engine's checks from publication to kickoff (odds included); null for picks published by hand (and older engine picks until their first check).", 2.2),
    2.2,
  ),
} as const satisfies Record<string, FieldFacts>;

export type PickField = keyof typeof PICK_FIELDS;
type Facts<F extends PickField> = (typeof PICK_FIELDS)[F];
type NullIf<F extends PickField> = Facts<F>['nullable'] extends true ? null : never;

/** Every stored field a reader of a pick may need: what services hand to GraphQL. */
export type PickRecord = {
  -readonly [F in PickField]: (Facts<F>['storage'] extends { kind: 'datetime' } ? Date : Static<Facts<F>['schema']>) | NullIf<F>;
};

/** A pick as JSON (timestamps as ISO strings): what events carry across processes. */
export type PickSnapshot = { -readonly [F in PickField]: Static<Facts<F>['schema']> | NullIf<F> };

/** The fields that may be left out when a pick is made (they start as null, or as their default). */
export type NullableField = { [F in PickField]: Facts<F>['nullable'] extends true ? F : Facts<F> extends { default: unknown } ? F : never }[PickField];

/** A pick's values where a nullable or defaulted field may also be missing (a new pick, an entity). */
export type PickValues = Omit<PickRecord, NullableField> & { [F in NullableField]?: PickRecord[F] | undefined };

export const PICK_FIELD_NAMES = Object.keys(PICK_FIELDS) as PickField[];
/** What a field left out starts as: its default, else null. */
const STARTING_VALUES = new Map<PickField, unknown>(
  PICK_FIELD_NAMES.flatMap((name) => {
    const facts: FieldFacts = PICK_FIELDS[name];
    return facts.nullable || 'default' in facts ? [[name, facts.default ?? null] as const] : [];
  }),
);
const DATETIME_FIELDS = PICK_FIELD_NAMES.filter((name) => PICK_FIELDS[name].storage.kind === 'datetime');

export function factsOf(name: PickField): FieldFacts {
  return PICK_FIELDS[name];
}

/**
 * A decimal field's value as its column stores it (rounded to the column's scale): what a reader
 * gets back, so what the edges, the events and the ledger's commitments are made from.
 */
export function asStored(name: PickField, value: number): number {
  const { storage } = factsOf(name);
  return storage.kind === 'decimal' ? roundTo(value, storage.scale) : value;
}

/** A record or snapshot with the fields it was not given set to null, or to their default. */
export function withNulls<T extends object>(values: T): T & { [F in NullableField]: T extends Record<F, infer V> ? V : Facts<F> extends { default: infer D } ? D : null } {
  const complete: Record<string, unknown> = { ...(values as Record<string, unknown>) };
  for (const [name, value] of STARTING_VALUES) complete[name] ??= value;
  return complete as never;
}

export function toPickSnapshot(pick: PickValues): PickSnapshot {
  const snapshot: Record<string, unknown> = {};
  for (const name of PICK_FIELD_NAMES) {
    const value = (pick as Partial<PickRecord>)[name] ?? STARTING_VALUES.get(name) ?? null;
    snapshot[name] = value instanceof Date ? value.toISOString() : value;
  }
  return snapshot as PickSnapshot;
}

export function fromPickSnapshot(snapshot: PickSnapshot): PickRecord {
  const pick: Record<string, unknown> = { ...snapshot };
  for (const name of DATETIME_FIELDS) pick[name] = snapshot[name] === null ? null : new Date(snapshot[name] as unknown as string);
  return pick as PickRecord;
}

// ---- Layouts: which fields a surface shows, under which names, nested how.

/**
 * A field shown as is, or with its JSON Schema narrowed for that surface. `percent: true` shows a
 * fraction in percent (x 100, 4 decimals: exact for a fraction stored at scale 6), so a surface
 * whose edges are all in percent can show one stored as a fraction.
 */
type LayoutLeaf = PickField | readonly [PickField, Narrowing];
type Narrowing = Readonly<Record<string, unknown>> & { readonly percent?: true };
export interface Layout {
  readonly [name: string]: LayoutLeaf | Layout;
}

/** The GraphQL Pick's fields (camelCase; `pick` is the description, `bookmaker` an object). */
export const GRAPHQL_PICK = {
  id: 'id',
  sport: 'sport',
  league: 'league',
  homeTeam: 'homeTeam',
  awayTeam: 'awayTeam',
  kickoffAt: 'kickoffAt',
  pick: 'description',
  market: 'market',
  selection: 'selection',
  line: 'line',
  bookmaker: { name: 'bookmakerName', slug: 'bookmakerSlug' },
  odds: 'odds',
  referenceFairOdds: 'referenceFairOdds',
  taxRate: 'taxRate',
  edgePct: 'edgePct',
  edgePctPostTax: 'edgePctPostTax',
  kellyFraction: 'kellyFraction',
  edgeTier: 'edgeTier',
  confidence: 'confidence',
  status: 'status',
  result: 'result',
  closingOdds: 'closingOdds',
  publishedAt: 'publishedAt',
  settledAt: 'settledAt',
  stakePct: 'stakePct',
  warnings: 'warnings',
  finalScore: { home: 'finalHomeScore', away: 'finalAwayScore' },
  ledgerSeq: 'ledgerSeq',
  ledgerHash: 'ledgerHash',
  availability: {
    status: 'availabilityStatus',
    oddsNow: 'availabilityOddsNow',
    edgePctNow: 'availabilityEdgePctNow',
    checkedAt: 'availabilityCheckedAt',
    since: 'availabilitySince',
  },
  bestOddsSincePublished: 'bestOddsSincePublished',
} as const satisfies Layout;

/** The documented Pick (docs/API.md, "Pick"): REST pages, the SSE stream and webhook bodies. */
export const V1_PICK = {
  id: 'id',
  sport: 'sport',
  league: 'league',
  home_team: 'homeTeam',
  away_team: 'awayTeam',
  kickoff_at: 'kickoffAt',
  pick: 'description',
  odds: 'odds',
  edge_pct: 'edgePct',
  confidence: 'confidence',
  status: ['status', { enum: [...VISIBLE_STATUSES] }],
  settled_at: 'settledAt',
  result: 'result',
  stake_pct: 'stakePct',
  market: 'market',
  selection: 'selection',
  line: 'line',
  warnings: 'warnings',
  closing_odds: 'closingOdds',
  final_score: { home: 'finalHomeScore', away: 'finalAwayScore' },
  ledger_seq: 'ledgerSeq',
  ledger_hash: 'ledgerHash',
  // Where to bet and the price to beat: what a paying customer needs to act on the pick.
  bookmaker: { name: 'bookmakerName', slug: 'bookmakerSlug' },
  reference_fair_odds: 'referenceFairOdds',
  edge_pct_post_tax: [
    'edgePctPostTax',
    { percent: true, description: 'Post-tax edge in percent, like edge_pct: (odds x (1 - tax rate) / reference_fair_odds - 1) x 100, 4 decimals.' },
  ],
  kelly_fraction: 'kellyFraction',
  // Only published and settled picks are shown, and both were published.
  published_at: ['publishedAt', { nullable: false }],
  // Whether the offer can still be bet (docs/API.md, "Availability"); not committed by the ledger.
  availability: {
    status: 'availabilityStatus',
    odds_now: 'availabilityOddsNow',
    edge_pct_now: 'availabilityEdgePctNow',
    checked_at: 'availabilityCheckedAt',
    since: 'availabilitySince',
  },
  best_odds_since_published: 'bestOddsSincePublished',
} as const satisfies Layout;

/** The public pick (docs/API.md, "Public pick"), anonymous: no status, no result, no description. */
export const PUBLIC_PICK = {
  id: 'id',
  match: { home: 'homeTeam', away: 'awayTeam', league: 'league', sport: 'sport', kickoff: 'kickoffAt' },
  market: 'market',
  selection: 'selection',
  line: 'line',
  bookmaker: { name: 'bookmakerName', slug: 'bookmakerSlug' },
  odds: { book: 'odds', referenceFair: 'referenceFairOdds' },
  edgePctPostTax: 'edgePctPostTax',
  kellyFraction: 'kellyFraction',
  tier: 'edgeTier',
  // Only published picks are public.
  publishedAt: ['publishedAt', { nullable: false }],
  stakePct: 'stakePct',
  warnings: 'warnings',
} as const satisfies Layout;

type FieldOf<L> = L extends PickField ? L : L extends readonly [infer F extends PickField, unknown] ? F : never;

/** The JSON a layout describes, its leaves valued as in a snapshot. */
export type LayoutJson<L> = {
  -readonly [K in keyof L]: FieldOf<L[K]> extends never ? LayoutJson<L[K]> : PickSnapshot[FieldOf<L[K]>];
};

export type V1PickJson = LayoutJson<typeof V1_PICK>;
export type PublicPickJson = LayoutJson<typeof PUBLIC_PICK>;

export function isLeaf(entry: LayoutLeaf | Layout): entry is LayoutLeaf {
  return typeof entry === 'string' || Array.isArray(entry);
}

export function leafField(entry: LayoutLeaf): PickField {
  return typeof entry === 'string' ? entry : entry[0];
}

/** Builds a layout's JSON, each leaf's value given by `valueOf` (the same order as the layout). */
export function layoutJson<L extends Layout>(layout: L, valueOf: (name: PickField) => unknown): LayoutJson<L> {
  const json: Record<string, unknown> = {};
  for (const [key, entry] of Object.entries(layout)) json[key] = isLeaf(entry) ? leafValue(entry, valueOf(leafField(entry))) : layoutJson(entry, valueOf);
  return json as LayoutJson<L>;
}

function leafValue(entry: LayoutLeaf, value: unknown): unknown {
  if (typeof entry === 'string' || entry[1].percent !== true || typeof value !== 'number') return value;
  return roundTo(value * 100, 4);
}

/** Where each field sits in a layout: the names to follow from the top. */
export function layoutPaths(layout: Layout, prefix: readonly string[] = []): Map<PickField, readonly string[]> {
  const paths = new Map<PickField, readonly string[]>();
  for (const [key, entry] of Object.entries(layout)) {
    if (isLeaf(entry)) paths.set(leafField(entry), [...prefix, key]);
    else for (const [name, path] of layoutPaths(entry, [...prefix, key])) paths.set(name, path);
  }
  return paths;
}

/** A GraphQL selection without aliases or arguments: each field selected, and the selection under it. */
export interface GraphqlSelection {
  readonly [field: string]: true | GraphqlSelection;
}

/**
 * The fields of the GraphQL Pick (GRAPHQL_PICK) that a layout reads, nested as the GraphQL Pick
 * nests them, in the layout's order: what the adapters' fragments select (adapters/common/v1-json.ts)
 * and, for the V1 Pick, the most a stream token may select of a pick (src/graphql/stream-frame.ts).
 */
export function graphqlSelectionOf(layout: Layout): GraphqlSelection {
  const graphqlPaths = layoutPaths(GRAPHQL_PICK);
  const tree: Record<string, true | Record<string, unknown>> = {};
  for (const name of layoutPaths(layout).keys()) {
    const path = graphqlPaths.get(name);
    if (path === undefined) throw new Error(`the GraphQL Pick does not show ${name}`);
    let node: Record<string, unknown> = tree;
    for (const key of path.slice(0, -1)) node = (node[key] ??= {}) as Record<string, unknown>;
    node[path.at(-1)!] = true;
  }
  return tree as GraphqlSelection;
}

/** The JSON Schema of a field's value as JSON (null included when nullable). */
export function fieldJsonSchema(name: PickField, narrowed: Record<string, unknown> = {}): Record<string, unknown> {
  const facts = factsOf(name);
  const { nullable = facts.nullable, percent: _percent, ...narrowing } = narrowed;
  const schema: Record<string, unknown> = { ...(facts.schema as Record<string, unknown>), ...narrowing };
  return nullable ? orNullJsonSchema(schema) : schema;
}

/** The JSON Schema of a layout's JSON: every field required (nullable ones may be null). */
export function layoutJsonSchema(layout: Layout, description?: string): Record<string, unknown> {
  const properties: Record<string, unknown> = {};
  for (const [key, entry] of Object.entries(layout)) {
    properties[key] = isLeaf(entry) ? fieldJsonSchema(leafField(entry), typeof entry === 'string' ? {} : entry[1]) : layoutJsonSchema(entry);
  }
  return { type: 'object', ...described(description), required: Object.keys(layout), properties };
}

/** The documented example of a layout: each field's example. */
export function layoutExample<L extends Layout>(layout: L): LayoutJson<L> {
  return layoutJson(layout, (name) => PICK_FIELDS[name].example);
}

/** The documented Pick of a snapshot: what webhook bodies carry (REST builds the same from GraphQL). */
export function v1PickJson(pick: PickSnapshot): V1PickJson {
  return layoutJson(V1_PICK, (name) => pick[name]);
}
