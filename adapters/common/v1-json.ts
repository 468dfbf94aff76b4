/**
 * GraphQL results -> the documented JSON of docs/API.md, "Resources" (enums lower case). The pick's
 * surfaces are layouts of its declared fields (src/domain/pick-shape.ts): the GraphQL selection each
 * adapter asks for is made from the same layouts (V1_PICK_FRAGMENT, PUBLIC_PICK_FRAGMENT), so a
 * field added to a layout is asked for, read and shown without another edit.
 */
import {
  GRAPHQL_PICK,
  layoutJson,
  layoutPaths,
  factsOf,
  graphqlSelectionOf,
  PUBLIC_PICK,
  V1_PICK,
  type GraphqlSelection,
  type Layout,
  type PickField,
  type PublicPickJson,
  type V1PickJson,
} from '../../src/domain/pick-shape.js';
import { LEDGER_HEAD, LEDGER_PAGE, LEDGER_INCLUSION_PROOF, LEDGER_CONSISTENCY_PROOF, PICK_RECEIPT } from '../../src/domain/ledger-shape.js';
import { graphqlSelectionOfResource } from '../../src/domain/resource-shape.js';
import { TRACK_RECORD } from '../../src/domain/track-record-shape.js';
import { MATCH_ANALYSIS } from '../../src/domain/match-analysis-shape.js';
import { STREAM_TOKEN } from '../../src/domain/stream-token-shape.js';
import { USAGE } from '../../src/domain/usage-shape.js';
import { WEBHOOK_DELIVERY, WEBHOOK_REPLAY_RESULT, WEBHOOK_SUBSCRIPTION, WEBHOOK_SUBSCRIPTION_WITH_SECRET, WEBHOOK_TEST_RESULT } from '../../src/domain/webhook-shape.js';
import type { TObject } from 'typebox';
import type { PublicPickFragment, V1PickFragment } from './generated/graphql.js';

const GRAPHQL_PATHS = layoutPaths(GRAPHQL_PICK);

function graphqlPathOf(name: PickField): readonly string[] {
  const path = GRAPHQL_PATHS.get(name);
  if (path === undefined) throw new Error(`the GraphQL Pick does not show ${name}`);
  return path;
}

/** A field's value in a GraphQL Pick result, an enum's back in the domain's lower case. */
function valueInResult(node: object, name: PickField): unknown {
  let value: unknown = node;
  for (const key of graphqlPathOf(name)) value = (value as Record<string, unknown>)[key];
  if (factsOf(name).values === undefined) return value;
  return Array.isArray(value) ? value.map((code: string) => code.toLowerCase()) : typeof value === 'string' ? value.toLowerCase() : value;
}

/** The documented Pick (docs/API.md, "Pick") of a GraphQL Pick: the same layout webhook bodies are built from. */
export function v1Pick(node: V1PickFragment): V1PickJson {
  return layoutJson(V1_PICK, (name) => valueInResult(node, name));
}

/** The public pick (docs/API.md, "Public pick") of a GraphQL Pick. */
export function publicPick(node: PublicPickFragment): PublicPickJson {
  return layoutJson(PUBLIC_PICK, (name) => valueInResult(node, name));
}

/** The GraphQL selection of the fields a layout shows, nested as the GraphQL Pick nests them (graphqlSelectionOf). */
function selectionOf(layout: Layout): string {
  const print = (node: GraphqlSelection): string =>
    Object.entries(node)
      .map(([key, child]) => (child === true ? key : `${key} { ${print(child)} }`))
      .join(' ');
  return print(graphqlSelectionOf(layout));
}

/** The fragments the adapters' documents spread (`...V1Pick`, `...PublicPick`), for GraphQL Code Generator. */
export const V1_PICK_FRAGMENT = `fragment V1Pick on Pick { ${selectionOf(V1_PICK)} }`;
export const PUBLIC_PICK_FRAGMENT = `fragment PublicPick on Pick { ${selectionOf(PUBLIC_PICK)} }`;
/**
 * The declared resources whose documents select them whole: each gets a fragment `<Type>Fields`
 * of every field its JSON shows (graphqlSelectionOfResource), for the REST documents.
 */
const DECLARED_RESOURCES: readonly TObject[] = [TRACK_RECORD, MATCH_ANALYSIS, WEBHOOK_SUBSCRIPTION, WEBHOOK_SUBSCRIPTION_WITH_SECRET, WEBHOOK_DELIVERY, WEBHOOK_TEST_RESULT, WEBHOOK_REPLAY_RESULT, STREAM_TOKEN, USAGE, LEDGER_PAGE, LEDGER_HEAD, LEDGER_INCLUSION_PROOF, LEDGER_CONSISTENCY_PROOF, PICK_RECEIPT];

function resourceFragment(declaration: TObject): string {
  const type = (declaration as { graphqlName?: string }).graphqlName;
  return `fragment ${type}Fields on ${type} { ${graphqlSelectionOfResource(declaration)} }`;
}

/** Every fragment made from a declaration rather than written in a .graphql file. */
export const DECLARED_FRAGMENTS: readonly string[] = [V1_PICK_FRAGMENT, PUBLIC_PICK_FRAGMENT, ...DECLARED_RESOURCES.map(resourceFragment)];
