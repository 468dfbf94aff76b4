/**
 * Hostile documents: depth, cost, alias, directive and token limits, from GraphQL Armor
 * (@escape.tech/graphql-armor-*), applied on every GraphQL entry point: /graphql (yoga
 * plugins) and /graphql/stream (the same rules, through graphql-sse's validate hook).
 *
 * A document over a limit is refused before it is executed (and before the caller is
 * authenticated or counted) with the AppError `query_too_complex`, HTTP 400, keeping armor's
 * message ("Query depth limit of 8 exceeded, found 9."). The numbers are documented in
 * docs/DECISIONS.md; test/integration/query-limits.test.ts checks that every document of the
 * repository passes them.
 */
import { blockFieldSuggestionsDefaultOptions, blockFieldSuggestionsPlugin } from '@escape.tech/graphql-armor-block-field-suggestions';
import { costLimitPlugin, costLimitRule } from '@escape.tech/graphql-armor-cost-limit';
import { maxAliasesPlugin, maxAliasesRule } from '@escape.tech/graphql-armor-max-aliases';
import { maxDepthPlugin, maxDepthRule } from '@escape.tech/graphql-armor-max-depth';
import { maxDirectivesPlugin, maxDirectivesRule } from '@escape.tech/graphql-armor-max-directives';
import { MaxTokensParserWLexer, maxTokensPlugin } from '@escape.tech/graphql-armor-max-tokens';
import { useDisableIntrospection } from '@graphql-yoga/plugin-disable-introspection';
import { GraphQLError, NoSchemaIntrospectionCustomRule, specifiedRules, validate, type DocumentNode, type GraphQLSchema, type ValidationRule } from 'graphql';
import type { Plugin } from 'graphql-yoga';
import { ERROR_HTTP_STATUS, ErrorCode, QueryTooComplexError } from '../domain/errors.js';

export const QUERY_LIMITS = {
  /**
   * Field nesting, fragments flattened. The deepest path of the schema is 5; `__schema`
   * selections are not counted (armor's default): graphql-js's own MaxIntrospectionDepthRule
   * (part of its specified rules since 16.9) bounds nested introspection.
   */
  maxDepth: 8,
  /**
   * Armor's cost model: object 2, scalar 1, x1.5 per level, times a literal `first:`. One full
   * page of 200 picks with every field (nodes 18,550, edges 27,775) passes; two do not.
   */
  maxCost: 30_000,
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
    extensions: { code: ErrorCode.queryTooComplex, http: { status: ERROR_HTTP_STATUS[ErrorCode.queryTooComplex] } },
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
const costOptions = { maxCost: QUERY_LIMITS.maxCost, flattenFragments: true, ...callbacks };
const aliasOptions = { n: QUERY_LIMITS.maxAliases, ...callbacks };
const directiveOptions = { n: QUERY_LIMITS.maxDirectives, ...callbacks };
const tokenOptions = { n: QUERY_LIMITS.maxTokens, ...callbacks };

export interface GraphQLGuardOptions {
  /** Serve __schema / __type; when off, "Did you mean ..." suggestions are hidden as well. */
  introspection: boolean;
}

/** The yoga plugins: limits, and introspection off unless enabled. */
export function guardPlugins(options: GraphQLGuardOptions): Plugin[] {
  return [
    maxTokensPlugin(tokenOptions),
    maxDirectivesPlugin(directiveOptions),
    maxAliasesPlugin(aliasOptions),
    costLimitPlugin(costOptions),
    maxDepthPlugin(depthOptions),
    ...(options.introspection ? [] : [useDisableIntrospection(), blockFieldSuggestionsPlugin()]),
  ] as Plugin[];
}

/** The same limits as validation rules, for surfaces outside yoga (graphql-sse) and for tests. */
export function limitRules(): ValidationRule[] {
  return [maxDirectivesRule(directiveOptions), maxAliasesRule(aliasOptions), costLimitRule(costOptions), maxDepthRule(depthOptions)];
}

/** Throws query_too_complex when the source has more tokens than allowed; other syntax errors are left to the parser. */
export function assertTokenLimit(source: string): void {
  try {
    new MaxTokensParserWLexer(source, tokenOptions).parseDocument();
  } catch (error) {
    if (isQueryTooComplexError(error)) throw error;
  }
}

/**
 * graphql-sse's validate: the specified rules, the limits, introspection when disabled. Errors
 * get yoga's code for validation failures so both surfaces answer alike.
 */
export function guardedValidate(options: GraphQLGuardOptions): (schema: GraphQLSchema, document: DocumentNode) => readonly GraphQLError[] {
  const rules = [...specifiedRules, ...limitRules(), ...(options.introspection ? [] : [NoSchemaIntrospectionCustomRule])];
  return (schema, document) =>
    validate(schema, document, rules).map((error) => {
      // As armor's block-field-suggestions plugin does on /graphql.
      const message = options.introspection ? error.message : error.message.replace(/Did you mean ".+"\?/g, blockFieldSuggestionsDefaultOptions.mask).trim();
      return new GraphQLError(message, { nodes: error.nodes, extensions: { ...error.extensions, code: error.extensions.code ?? 'GRAPHQL_VALIDATION_FAILED' } });
    });
}
