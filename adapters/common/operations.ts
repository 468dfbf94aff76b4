/**
 * SOFA's idea, not its code: each adapter route owns one hand-written GraphQL document
 * (adapters/<surface>/documents/, shared fragments in adapters/common/), compiled by
 * `npm run codegen` into typed documents (adapters/common/generated/graphql.ts: the AST with
 * the fragments it spreads, plus its result and variables types). Each is validated against
 * the schema once at start-up; per request only variables are built and the operation is
 * executed through yoga.getEnveloped, so the same context (auth, limits), plugins and error
 * masking apply as on /graphql.
 */
import type { TypedDocumentNode } from '@graphql-typed-document-node/core';
import { GraphQLError, Kind, validate, type ExecutionResult, type GraphQLSchema } from 'graphql';
import { operationAccessRefusal } from '../../src/graphql/argument-guard.js';
import type { Context } from '../../src/graphql/context.js';
import type { ServerContext, Yoga } from '../../src/graphql/yoga.js';

export interface PreparedOperation<TData, TVariables> {
  name: string;
  document: TypedDocumentNode<TData, TVariables>;
}

/** Validates a generated document against the served schema; a bad document stops start-up. */
export function prepareOperation<TData, TVariables>(
  schema: GraphQLSchema,
  document: TypedDocumentNode<TData, TVariables>,
): PreparedOperation<TData, TVariables> {
  const operation = document.definitions.find((definition) => definition.kind === Kind.OPERATION_DEFINITION);
  const name = operation?.name?.value;
  if (!name) throw new Error('An adapter document must hold one named operation.');
  const errors = validate(schema, document);
  if (errors.length > 0) throw new Error(`${name}: ${errors.map((error) => error.message).join('; ')}`);
  return { name, document };
}

export interface OperationRunner {
  context: Context;
  /** The refusal (401, 403) executing the operation would answer for a field this caller may not use, or null. */
  accessRefusal(operation: PreparedOperation<unknown, unknown>): GraphQLError | null;
  execute<TData, TVariables>(operation: PreparedOperation<TData, TVariables>, variables: TVariables): Promise<ExecutionResult<TData>>;
  /** For subscription documents: a stream of results, or one result carrying the refusal. */
  subscribe<TData, TVariables>(
    operation: PreparedOperation<TData, TVariables>,
    variables: TVariables,
  ): Promise<AsyncIterableIterator<ExecutionResult<TData>> | ExecutionResult<TData>>;
}

/**
 * Builds the request's GraphQL context (authentication, limits) exactly as /graphql does.
 * A request-level failure (401 invalid key, 429 limits) comes back as a GraphQLError.
 */
export async function openOperation(
  yoga: Yoga,
  server: ServerContext,
): Promise<OperationRunner | GraphQLError> {
  const serverContext: ServerContext = server;
  const { contextFactory, execute, subscribe, schema } = yoga.getEnveloped(serverContext);
  let context: Context;
  try {
    context = (await contextFactory()) as unknown as Context;
  } catch (error) {
    if (error instanceof GraphQLError) return error;
    throw error;
  }
  return runner(context, { execute, subscribe, schema });
}

/**
 * Runs documents as the server itself (src/graphql/yoga.ts internalContext): no request, so
 * no authentication or limits, but the same schema and plugins as every other operation.
 */
export function openInternalOperation(yoga: Yoga, context: Context): OperationRunner {
  return runner(context, yoga.getEnveloped({}));
}

function runner(context: Context, enveloped: Pick<ReturnType<Yoga['getEnveloped']>, 'execute' | 'subscribe' | 'schema'>): OperationRunner {
  const { execute, subscribe, schema } = enveloped;
  const args = <TData, TVariables>(operation: PreparedOperation<TData, TVariables>, variables: TVariables) => ({
    schema,
    document: operation.document,
    operationName: operation.name,
    variableValues: variables as Record<string, unknown>,
    contextValue: context,
  });
  // The one place results meet their types: the document was validated against this schema,
  // so the data has the shape its generated type describes.
  return {
    context,
    accessRefusal: (operation) => operationAccessRefusal(schema, operation.document, operation.name, context),
    execute: async <TData, TVariables>(operation: PreparedOperation<TData, TVariables>, variables: TVariables) =>
      (await execute(args(operation, variables))) as ExecutionResult<TData>,
    subscribe: async <TData, TVariables>(operation: PreparedOperation<TData, TVariables>, variables: TVariables) =>
      (await subscribe(args(operation, variables))) as AsyncIterableIterator<ExecutionResult<TData>> | ExecutionResult<TData>,
  };
}
