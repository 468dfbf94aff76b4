/**
 * What a stream token may select (src/graphql/stream-frame.ts): exactly what the REST stream's
 * own document selects, however a document reaches a field (fragments, inline fragments,
 * aliases), __typename anywhere. The HTTP side (403 before any event) is in
 * test/integration/stream-tokens.test.ts.
 */
import { Kind, parse, type DocumentNode, type FragmentDefinitionNode, type GraphQLObjectType, type SelectionSetNode } from 'graphql';
import { describe, expect, it } from 'vitest';
import { PickFeedDocument } from '../../adapters/common/generated/graphql.js';
import { AppError } from '../../src/domain/errors.js';
import type { GraphqlSelection } from '../../src/domain/pick-shape.js';
import { getSchema } from '../../src/graphql/schema.js';
import { assertStreamFrameSelection, STREAM_FRAME } from '../../src/graphql/stream-frame.js';

/** The fields a document's operation selects, fragments merged in, aliases and __typename dropped. */
function selectionOf(document: DocumentNode): GraphqlSelection {
  const fragments = new Map(
    document.definitions.filter((definition): definition is FragmentDefinitionNode => definition.kind === Kind.FRAGMENT_DEFINITION).map((fragment) => [fragment.name.value, fragment]),
  );
  const collect = (selectionSet: SelectionSetNode, into: Record<string, true | Record<string, unknown>>): void => {
    for (const selection of selectionSet.selections) {
      if (selection.kind === Kind.FRAGMENT_SPREAD) collect(fragments.get(selection.name.value)!.selectionSet, into);
      else if (selection.kind === Kind.INLINE_FRAGMENT) collect(selection.selectionSet, into);
      else if (selection.name.value === '__typename') continue;
      else if (!selection.selectionSet) into[selection.name.value] = true;
      else collect(selection.selectionSet, (into[selection.name.value] ??= {}) as Record<string, true | Record<string, unknown>>);
    }
  };
  const operation = document.definitions.find((definition) => definition.kind === Kind.OPERATION_DEFINITION)!;
  const tree: Record<string, true | Record<string, unknown>> = {};
  collect(operation.selectionSet, tree);
  return tree as GraphqlSelection;
}

function refusal(query: string): AppError | null {
  try {
    assertStreamFrameSelection(getSchema(), parse(query), undefined);
    return null;
  } catch (error) {
    expect(error).toBeInstanceOf(AppError);
    return error as AppError;
  }
}

describe('the stream frame a token may select', () => {
  it("is exactly what the REST stream's document selects, and that document passes", () => {
    expect(selectionOf(PickFeedDocument)).toEqual({ pickFeed: STREAM_FRAME.pickFeed });
    expect(() => assertStreamFrameSelection(getSchema(), PickFeedDocument, 'PickFeed')).not.toThrow();
    // The two subscriptions the stream joins show the same frame.
    expect(STREAM_FRAME.pickPublished).toEqual(STREAM_FRAME.pickFeed);
    expect(STREAM_FRAME.pickAvailabilityChanged).toEqual(STREAM_FRAME.pickFeed);
    expect(((STREAM_FRAME.pickFeed as GraphqlSelection).pick as GraphqlSelection).availability).toEqual({ status: true, oddsNow: true, edgePctNow: true, checkedAt: true, since: true });
  });

  it('leaves out of a pick what docs/API.md ("Frontends") says: taxRate, edgeTier, analysis, provenance and receipt', () => {
    const pickType = getSchema().getType('Pick') as GraphQLObjectType;
    const frame = (STREAM_FRAME.pickPublished as GraphqlSelection).pick as GraphqlSelection;
    expect(Object.keys(pickType.getFields()).filter((name) => !(name in frame)).sort()).toEqual(['analysis', 'edgeTier', 'provenance', 'receipt', 'taxRate']);
  });

  it('passes parts of the frame, under aliases, in fragments, with __typename', () => {
    expect(refusal('subscription { pickPublished { sequence } }')).toBeNull();
    expect(refusal('subscription { p: pickPublished { __typename pick { __typename n: id ... on Pick { bookmaker { slug __typename } } ...F } } } fragment F on Pick { finalScore { home } }')).toBeNull();
  });

  it.each([
    ['analysis selected directly', 'subscription { pickPublished { pick { id analysis { analysis } } } }', 'analysis', 'Pick'],
    ['analysis selected through a fragment', 'subscription { pickPublished { ...E } } fragment E on PickEvent { pick { ...P } } fragment P on Pick { analysis { matchId } }', 'analysis', 'Pick'],
    ['analysis selected through an inline fragment', 'subscription { pickPublished { pick { ... on Pick { analysis { matchId } } } } }', 'analysis', 'Pick'],
    ['analysis selected under an alias', 'subscription { pickPublished { pick { notes: analysis { text: analysis } } } }', 'analysis', 'Pick'],
    ['a GraphQL Pick field the V1 Pick leaves out (taxRate)', 'subscription { pickPublished { pick { taxRate } } }', 'taxRate', 'Pick'],
    ['an event field the frame leaves out (createdAt)', 'subscription { pickPublished { createdAt type } }', 'createdAt', 'PickEvent'],
  ])('refuses %s, naming the field', (_how, query, field, type) => {
    const error = refusal(query);
    expect(error?.code).toBe('field_not_allowed');
    expect(error?.message).toContain(`\`${field}\` (on ${type}) is not one of them`);
  });

  it('looks at the operation asked for and the fragments it spreads only', () => {
    const document = 'subscription Frame { pickPublished { sequence ...F } } subscription Other { pickPublished { pick { analysis { matchId } } } } fragment F on PickEvent { pick { id } }';
    expect(() => assertStreamFrameSelection(getSchema(), parse(document), 'Frame')).not.toThrow();
    expect(() => assertStreamFrameSelection(getSchema(), parse(document), 'Other')).toThrow(/`analysis`/);
  });
});
