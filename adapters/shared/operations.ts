/**
 * SOFA's idea, not its code: each adapter route owns one hand-written GraphQL document,
 * parsed and validated against the schema once at start-up; per request only variables are
 * built and the operation is executed through yoga.getEnveloped, so the same context
 * (auth, limits), plugins and error masking apply as on /graphql.
 */
import { readFileSync } from 'node:fs';
import { GraphQLError, parse, validate, type DocumentNode, type ExecutionResult, type GraphQLSchema } from 'graphql';
import type { Context } from '../../src/graphql/context.js';
import type { ServerContext, Yoga } from '../../src/graphql/yoga.js';

export interface PreparedOperation {
  name: string;
  document: DocumentNode;
}

const FRAGMENTS: Record<string, string> = {
  V1Pick: readFileSync(new URL('./v1-pick.graphql', import.meta.url), 'utf8'),
  V1WebhookSubscription: readFileSync(new URL('./v1-webhook-subscription.graphql', import.meta.url), 'utf8'),
};

/** Reads a document (plus the shared fragments it spreads) and validates it; a bad document stops start-up. */
export function prepareOperation(schema: GraphQLSchema, file: URL, name: string): PreparedOperation {
  let source = readFileSync(file, 'utf8');
  for (const [fragment, text] of Object.entries(FRAGMENTS)) {
    if (source.includes(`...${fragment}`)) source += `\n${text}`;
  }
  const document = parse(source);
  const errors = validate(schema, document);
  if (errors.length > 0) throw new Error(`${file.pathname}: ${errors.map((error) => error.message).join('; ')}`);
  return { name, document };
}

export interface OperationRunner {
  context: Context;
  execute(operation: PreparedOperation, variables: Record<string, unknown>): Promise<ExecutionResult>;
  /** For subscription documents: a stream of results, or one result carrying the refusal. */
  subscribe(operation: PreparedOperation, variables: Record<string, unknown>): Promise<AsyncIterableIterator<ExecutionResult> | ExecutionResult>;
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
  const args = (operation: PreparedOperation, variables: Record<string, unknown>) => ({
    schema,
    document: operation.document,
    operationName: operation.name,
    variableValues: variables,
    contextValue: context,
  });
  return {
    context,
    execute: async (operation, variables) => (await execute(args(operation, variables))) as ExecutionResult,
    subscribe: async (operation, variables) =>
      (await subscribe(args(operation, variables))) as AsyncIterableIterator<ExecutionResult> | ExecutionResult,
  };
}
