/**
 * The admission of one GraphQL operation on a streaming transport (graphql-sse at
 * /graphql/stream, graphql-ws at /graphql/ws), through yoga's envelop as on /graphql: parsing
 * with the document limits, validation with the depth, alias, cost and introspection rules
 * (both before the caller is authenticated or counted), then the context (authentication,
 * limits), then what a stream token may run (pickPublished, within the REST stream's frame).
 * One place: each transport maps the outcome to its own framing.
 */
import { getOperationAST, GraphQLError, type DocumentNode, type ExecutionArgs } from 'graphql';
import type { AppError } from '../domain/errors.js';
import { assertStreamTokenOperation } from '../graphql/auth.js';
import type { Context } from '../graphql/context.js';
import { assertStreamFrameSelection } from '../graphql/stream-frame.js';
import { requestError, toPublicGraphQLError, type Yoga } from '../graphql/yoga.js';

export type Enveloped = ReturnType<Yoga['getEnveloped']>;
export type OperationContext = Context & Record<PropertyKey, unknown>;

export interface StreamOperationRequest {
  query: string | DocumentNode;
  operationName?: string | null;
  variables?: Record<string, unknown> | null;
  extensions?: Record<string, unknown> | null;
}

export type StreamAdmission =
  /** The document does not parse (or is over the token limit): nothing was counted. */
  | { outcome: 'unparsable'; error: GraphQLError }
  /** The document does not validate (or breaks a limit): nothing was counted. */
  | { outcome: 'invalid'; errors: readonly GraphQLError[] }
  /** A mutation where the transport takes none (graphql-sse's GET): nothing was counted. */
  | { outcome: 'mutation' }
  | { outcome: 'admitted'; args: ExecutionArgs & { contextValue: OperationContext }; enveloped: Enveloped; context: OperationContext };

/**
 * Admits one operation. `initial` is yoga's initial context (the request, the reply, the
 * operation's parameters, `streamEndpoint`). A refusal of the caller (401, 429, 403) is thrown as
 * yoga's request error, with its code and HTTP status in the extensions.
 */
export async function admitStreamOperation(
  yoga: Yoga,
  initial: Record<string, unknown>,
  request: StreamOperationRequest,
  options: { mutations: boolean },
): Promise<StreamAdmission> {
  const enveloped = yoga.getEnveloped(initial);
  let document: DocumentNode;
  try {
    // The token limit and the document's syntax (a refused document counts nothing).
    document = typeof request.query === 'string' ? enveloped.parse(request.query) : request.query;
  } catch (error) {
    if (!(error instanceof GraphQLError) || error.originalError) throw error;
    return { outcome: 'unparsable', error };
  }
  // Depth, aliases, directives, cost and introspection throw query_too_complex or refuse here.
  const invalid = enveloped.validate(enveloped.schema, document);
  if (invalid.length > 0) return { outcome: 'invalid', errors: invalid };
  const operationName = request.operationName ?? undefined;
  if (!options.mutations && getOperationAST(document, operationName)?.operation === 'mutation') return { outcome: 'mutation' };
  const context = (await enveloped.contextFactory()) as unknown as OperationContext;
  if (context.principal.kind === 'streamToken') {
    try {
      assertStreamTokenOperation(context.principal, document, operationName);
      // Within pickPublished, the REST stream's frame only (403 field_not_allowed).
      assertStreamFrameSelection(enveloped.schema, document, operationName);
    } catch (error) {
      throw requestError(error as AppError, true);
    }
  }
  return {
    outcome: 'admitted',
    enveloped,
    context,
    args: { schema: enveloped.schema, document, operationName, variableValues: request.variables ?? undefined, contextValue: context },
  };
}

/**
 * Runs each admitted operation with the envelop of its own admission (yoga's plugins: tracing,
 * the JIT executor), which the transports find again by the operation's context.
 */
export function envelopedExecution() {
  const envelopOf = new WeakMap<object, Enveloped>();
  const of = (args: ExecutionArgs) => envelopOf.get(args.contextValue as object)!;
  return {
    remember: (admitted: Extract<StreamAdmission, { outcome: 'admitted' }>) => void envelopOf.set(admitted.context, admitted.enveloped),
    execute: (args: ExecutionArgs) => of(args).execute(args),
    subscribe: (args: ExecutionArgs) => of(args).subscribe(args),
  };
}

/**
 * An error as a streaming transport sends it in an event or message: masked when unexpected, and
 * without yoga's HTTP hints (extensions.http are for answering a request, not for a message).
 */
export function streamedError(error: unknown, logUnexpected: (error: unknown) => void): GraphQLError {
  const shown = toPublicGraphQLError(error, logUnexpected);
  const { http: _http, ...extensions } = shown.extensions as Record<string, unknown>;
  return new GraphQLError(shown.message, { nodes: shown.nodes, path: shown.path, extensions });
}
