/**
 * What a stream token may select on /graphql/stream: the REST stream's frame and nothing more
 * (docs/API.md, "Frontends"). The frame is the event's sequence (`id:`) and the documented Pick
 * (`data:`), so the selection is made from the V1 Pick's layout (src/domain/pick-shape.ts), the
 * one the REST stream's fragment is printed from; test/graphql/stream-frame.test.ts checks that
 * the REST stream's own document selects exactly this.
 */
import {
  getNamedType,
  getOperationAST,
  isObjectType,
  Kind,
  separateOperations,
  TypeInfo,
  visit,
  visitWithTypeInfo,
  type DocumentNode,
  type GraphQLObjectType,
  type GraphQLSchema,
} from 'graphql';
import { AppError, ErrorCode } from '../domain/errors.js';
import { graphqlSelectionOf, V1_PICK, type GraphqlSelection } from '../domain/pick-shape.js';

/** One event of the frame: its sequence (`id:`), its type (`event:`) and the documented Pick (`data:`). */
const EVENT_FRAME: GraphqlSelection = { sequence: true, type: true, pick: graphqlSelectionOf(V1_PICK) };

/**
 * The REST stream's frame as subscription selections: `pickFeed { sequence type pick { ...V1Pick } }`
 * (what the stream itself runs), and the same frame of the two subscriptions it joins.
 */
export const STREAM_FRAME: GraphqlSelection = { pickFeed: EVENT_FRAME, pickPublished: EVENT_FRAME, pickAvailabilityChanged: EVENT_FRAME };

/** The subscriptions a stream token may run: those of the frame. */
export const STREAM_FRAME_SUBSCRIPTIONS: readonly string[] = Object.keys(STREAM_FRAME);

type AllowedFields = ReadonlyMap<string, ReadonlySet<string>>;

/**
 * The frame as the fields each schema type may show. Every type of the frame shows the same fields
 * wherever it sits (the Subscription root, PickEvent, Pick, Bookmaker, FinalScore, PickAvailability),
 * so a type's fields are those of any of its places, wherever a fragment is spread.
 */
function allowedFieldsOf(schema: GraphQLSchema): AllowedFields {
  const allowed = new Map<string, Set<string>>();
  const add = (type: GraphQLObjectType, selection: GraphqlSelection): void => {
    const fields = new Set(Object.keys(selection));
    const known = allowed.get(type.name);
    if (known !== undefined) {
      if (known.size !== fields.size || [...fields].some((name) => !known.has(name))) throw new Error(`the stream frame shows ${type.name} with different fields in two places`);
      return;
    }
    allowed.set(type.name, fields);
    for (const [name, child] of Object.entries(selection)) {
      const field = type.getFields()[name];
      if (field === undefined) throw new Error(`the stream frame selects ${type.name}.${name}, which the schema does not have`);
      if (child === true) continue;
      const childType = getNamedType(field.type);
      if (!isObjectType(childType)) throw new Error(`the stream frame selects within ${type.name}.${name}, which is not an object`);
      add(childType, child);
    }
  };
  const root = schema.getSubscriptionType();
  if (!root) throw new Error('the schema has no subscriptions');
  add(root, STREAM_FRAME);
  return allowed;
}

const allowedBySchema = new WeakMap<GraphQLSchema, AllowedFields>();

/**
 * Refuses (403 field_not_allowed, before anything is subscribed) a document whose operation
 * selects any field the frame does not show, however it is reached: directly, through a named or
 * inline fragment, under an alias. `__typename` is allowed anywhere. The message names the
 * first such field. The operation itself (a subscription of the frame) is assertStreamTokenOperation's.
 */
export function assertStreamFrameSelection(schema: GraphQLSchema, document: DocumentNode, operationName: string | null | undefined): void {
  let allowed = allowedBySchema.get(schema);
  if (allowed === undefined) allowedBySchema.set(schema, (allowed = allowedFieldsOf(schema)));
  const operation = getOperationAST(document, operationName ?? undefined);
  if (!operation) return;
  // The operation with the fragments it spreads, and only those.
  const used = separateOperations({ ...document, definitions: [operation, ...document.definitions.filter((definition) => definition.kind === Kind.FRAGMENT_DEFINITION)] });
  const operationDocument = Object.values(used)[0];
  if (!operationDocument) return;
  const typeInfo = new TypeInfo(schema);
  const refused: { field: string; type: string | null }[] = [];
  visit(
    operationDocument,
    visitWithTypeInfo(typeInfo, {
      Field(node) {
        if (refused.length > 0 || node.name.value === '__typename') return false;
        const parent = typeInfo.getParentType();
        if (parent && allowed.get(parent.name)?.has(node.name.value)) return undefined;
        refused.push({ field: node.name.value, type: parent?.name ?? null });
        return false;
      },
    }),
  );
  if (refused[0]) throw fieldNotAllowed(refused[0]);
}

function fieldNotAllowed({ field, type }: { field: string; type: string | null }): AppError {
  const where = type === null ? '' : ` (on ${type})`;
  return new AppError(
    ErrorCode.fieldNotAllowed,
    `A stream token may select only the stream frame's fields (the sequence and the REST stream's Pick); \`${field}\`${where} is not one of them.`,
  );
}
