/**
 * Hostile documents: depth, alias, directive and token limits from GraphQL Armor
 * (@escape.tech/graphql-armor-*), and a cost limit from @pothos/plugin-complexity's model
 * evaluated with the request's variables, applied on every GraphQL entry point as yoga plugins:
 * /graphql, and /graphql/stream through the same envelop.
 *
 * A document over a limit is refused before it is executed (and before the caller is
 * authenticated or counted) with the AppError `query_too_complex`, HTTP 400, with a message
 * naming the limit ("Query depth limit of 8 exceeded, found 9."). The numbers are documented
 * in docs/DECISIONS.md; test/integration/query-limits.test.ts checks that every document of
 * the repository passes them.
 */
import { blockFieldSuggestionsPlugin } from '@escape.tech/graphql-armor-block-field-suggestions';
import { maxAliasesPlugin, maxAliasesRule } from '@escape.tech/graphql-armor-max-aliases';
import { maxDepthPlugin, maxDepthRule } from '@escape.tech/graphql-armor-max-depth';
import { maxDirectivesPlugin, maxDirectivesRule } from '@escape.tech/graphql-armor-max-directives';
import { MaxTokensParserWLexer, maxTokensPlugin } from '@escape.tech/graphql-armor-max-tokens';
import { complexityFromQuery } from '@pothos/plugin-complexity';
import {
  getOperationAST,
  getVariableValues,
  GraphQLError,
  Kind,
  NoSchemaIntrospectionCustomRule,
  type DefinitionNode,
  type DocumentNode,
  type GraphQLSchema,
  type ValidationRule,
} from 'graphql';
import type { GraphQLParams, Plugin } from 'graphql-yoga';
import type { Bound } from '../domain/bounds.js';
import { ErrorCode, errorHead, QueryTooComplexError } from '../domain/errors.js';

export const QUERY_LIMITS = {
  /**
   * Field nesting, fragments flattened. The deepest path of the schema is 5; `__schema`
   * selections are not counted (armor's default): graphql-js's own MaxIntrospectionDepthRule
   * (part of its specified rules since 16.9) bounds nested introspection.
   */
  maxDepth: 8,
  /**
   * The cost of the operation run, with its variables: every field 1, and a list field's
   * selection counted once per item it may return (a connection's page size, `first` /
   * `limit`, its default when absent; see pageComplexity). One full page of 200 picks with
   * every field passes (7,001 as `nodes`, 7,401 as `edges`); two do not (12,402).
   */
  maxCost: 10_000,
  /** Aliased fields per operation (aliases of `__typename` are free). */
  maxAliases: 15,
  /** Directives per operation. */
  maxDirectives: 10,
  /** Lexical tokens per document (GraphiQL's introspection query has 184). */
  maxTokens: 1_000,
} as const;

/** The GraphQLError every limit throws: the AppError carries the code, yoga reads the status. */
export function queryTooComplexError(message: string): GraphQLError {
  return new GraphQLError(message, {
    originalError: new QueryTooComplexError(message),
    extensions: { code: ErrorCode.queryTooComplex, http: errorHead(ErrorCode.queryTooComplex) },
  });
}

export function isQueryTooComplexError(error: unknown): boolean {
  return error instanceof GraphQLError && error.originalError instanceof QueryTooComplexError;
}

/** Armor calls this before it would throw its own error: throw ours instead (message kept, minus a misleading "Syntax Error: "). */
function reject(_context: unknown, error: GraphQLError): never {
  throw queryTooComplexError(error.message.replace(/^Syntax Error: /, ''));
}

const callbacks = { onReject: [reject], propagateOnRejection: true };
const depthOptions = { n: QUERY_LIMITS.maxDepth, flattenFragments: true, ...callbacks };
const aliasOptions = { n: QUERY_LIMITS.maxAliases, ...callbacks };
const directiveOptions = { n: QUERY_LIMITS.maxDirectives, ...callbacks };
const tokenOptions = { n: QUERY_LIMITS.maxTokens, ...callbacks };

export interface GraphQLGuardOptions {
  /** Serve __schema / __type; when off, "Did you mean ..." suggestions are hidden as well. */
  introspection: boolean;
}

/**
 * Introspection refused by validation, on every surface that validates through the envelop
 * (/graphql, /graphql/stream). yoga's own plugin decides per HTTP request in a hook of yoga's
 * request pipeline, which graphql-sse's requests never pass.
 */
function noIntrospection(): Plugin {
  return {
    onValidate({ addValidationRule }) {
      addValidationRule(NoSchemaIntrospectionCustomRule);
    },
  };
}

/** The yoga plugins: limits, and introspection off unless enabled. */
export function guardPlugins(options: GraphQLGuardOptions): Plugin[] {
  return [
    maxTokensPlugin(tokenOptions),
    maxDirectivesPlugin(directiveOptions),
    maxAliasesPlugin(aliasOptions),
    queryCostPlugin(),
    maxDepthPlugin(depthOptions),
    ...(options.introspection ? [] : [noIntrospection(), blockFieldSuggestionsPlugin()]),
  ] as Plugin[];
}

/** The same limits as validation rules, for tests that check every document of the repository. */
export function limitRules(): ValidationRule[] {
  return [maxDirectivesRule(directiveOptions), maxAliasesRule(aliasOptions), maxDepthRule(depthOptions)];
}

/** Throws query_too_complex when the source has more tokens than allowed; other syntax errors are left to the parser. */
export function assertTokenLimit(source: string): void {
  try {
    new MaxTokensParserWLexer(source, tokenOptions).parseDocument();
  } catch (error) {
    if (isQueryTooComplexError(error)) throw error;
  }
}

/** The `complexity` of a connection or list field with a page size argument (schema files). */
export function pageComplexity(size: number | null | undefined, bound: Bound): { field: number; multiplier: number } {
  // Sizes out of range are refused before execution (argument-guard.ts, invalid_parameter), not here: clamp them.
  const items = Math.min(Math.max(size ?? bound.default, 1), bound.max);
  return { field: 1, multiplier: items };
}

/** The items of a connection (`nodes`, `edges`): the page size is already counted on the connection field. */
export const ITEMS_OF_PAGE = { field: 1, multiplier: 1 } as const;

type Variables = GraphQLParams['variables'];

/**
 * The cost of the operation a request runs, with its variables. Null when it cannot run (no
 * such operation, variables that do not fit their types): execution refuses those anyway.
 */
export function queryCost(schema: GraphQLSchema, document: DocumentNode, variables: Variables, operationName?: string | null): number | null {
  const operation = getOperationAST(document, operationName ?? undefined);
  if (!operation) return null;
  const values = variables ?? {};
  if (typeof values !== 'object' || Array.isArray(values)) return null;
  if (getVariableValues(schema, operation.variableDefinitions ?? [], values).errors) return null;
  // complexityFromQuery takes a document's first operation: hand it the selected one.
  const definitions: DefinitionNode[] = [operation, ...document.definitions.filter((definition) => definition.kind === Kind.FRAGMENT_DEFINITION)];
  return complexityFromQuery({ kind: Kind.DOCUMENT, definitions }, { schema, variables: values }).complexity;
}

/** Throws query_too_complex when the operation costs more than the limit. */
export function assertQueryCost(schema: GraphQLSchema, document: DocumentNode, variables: Variables, operationName?: string | null): void {
  refuseOverCost(queryCost(schema, document, variables, operationName));
}

function refuseOverCost(cost: number | null): void {
  if (cost !== null && cost > QUERY_LIMITS.maxCost) {
    throw queryTooComplexError(`Query Cost limit of ${QUERY_LIMITS.maxCost} exceeded, found ${cost}.`);
  }
}

/**
 * /graphql and /graphql/stream: the cost of a valid document, with the request's variables
 * (the request's parameters in the context), right after validation (which yoga caches per
 * document, so it cannot see variables itself) and before the context is built. The REST
 * adapters run only their own documents, validated at start-up.
 */
function queryCostPlugin(): Plugin {
  return {
    onValidate({ context, params }) {
      return ({ valid }) => {
        const request = (context as { params?: GraphQLParams }).params;
        if (!valid || !request) return;
        assertQueryCost(params.schema, params.documentAST, request.variables, request.operationName);
      };
    },
  };
}
