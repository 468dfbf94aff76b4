/**
 * The string rules of src/domain/text.ts at the GraphQL boundary: every string an operation
 * receives, in its variables or as a literal in the document, is checked before the
 * operation runs. One yoga plugin covers POST /graphql (queries, mutations, yoga's SSE
 * subscriptions) and the REST adapters (they execute their documents through
 * yoga.getEnveloped); /graphql/stream (graphql-sse) calls assertTextInputs itself.
 *
 * Strings are `line` strings except the long texts listed in MULTILINE_TEXTS. The stricter
 * `name` rule (no invisible or text-direction characters) belongs to particular fields and is
 * applied by the services that accept them.
 *
 * A refusal is 400 `invalid_parameter` with `parameter` named as the services name their
 * fields: the argument (`league`, `id`), or for an `input` argument the path inside it
 * (`homeTeam`, `bookmaker.name`). It comes after authentication and limits (the context is
 * built first) and before the resolvers, so before any tier check and any query.
 */
import {
  GraphQLError,
  isInputObjectType,
  isListType,
  isNonNullType,
  Kind,
  parse,
  TypeInfo,
  visit,
  visitWithTypeInfo,
  type DocumentNode,
  type ExecutionResult,
  type GraphQLInputType,
  type GraphQLSchema,
  type ValueNode,
  type VariableDefinitionNode,
} from 'graphql';
import type { Plugin } from 'graphql-yoga';
import { ErrorCode, errorHead, InvalidParameterError } from '../domain/errors.js';
import { textViolation, type TextRule } from '../domain/text.js';

/** Schema coordinates (`InputType.field`, `Type.field(argument:)`) of the long texts: tab, LF and CR allowed. */
export const MULTILINE_TEXTS: ReadonlySet<string> = new Set(['UpsertMatchAnalysisInput.analysis']);

/** Deeper than any input type of the schema: nothing below can be valid, so nothing below is walked. */
const MAX_INPUT_DEPTH = 16;

interface ArgumentInput {
  parameter: string;
  type: GraphQLInputType | null;
  rule: TextRule;
  value: ValueNode;
}

interface Plan {
  inputs: ArgumentInput[];
  variables: Map<string, VariableDefinitionNode>;
}

function ruleOf(coordinate: string): TextRule {
  return MULTILINE_TEXTS.has(coordinate) ? 'multiline' : 'line';
}

function join(parameter: string, field: string): string {
  return parameter === '' ? field : `${parameter}.${field}`;
}

/** The arguments (of fields and directives) of the operation that runs and of every fragment, with their input types. */
function planOf(schema: GraphQLSchema, document: DocumentNode, operationName: string | null | undefined): Plan {
  const operations = document.definitions.filter((definition) => definition.kind === Kind.OPERATION_DEFINITION);
  // Without a name only a one-operation document can run; walking all of them costs nothing more.
  const chosen = operationName != null ? operations.filter((operation) => operation.name?.value === operationName) : operations;
  const inputs: ArgumentInput[] = [];
  const variables = new Map<string, VariableDefinitionNode>();
  for (const operation of chosen) for (const definition of operation.variableDefinitions ?? []) variables.set(definition.variable.name.value, definition);
  for (const definition of document.definitions) {
    if (definition.kind !== Kind.FRAGMENT_DEFINITION && !chosen.includes(definition as (typeof chosen)[number])) continue;
    const typeInfo = new TypeInfo(schema);
    visit(
      definition,
      visitWithTypeInfo(typeInfo, {
        Argument(node) {
          const argument = typeInfo.getArgument();
          const directive = typeInfo.getDirective();
          const owner = directive ? `@${directive.name}` : `${typeInfo.getParentType()?.name ?? '?'}.${typeInfo.getFieldDef()?.name ?? '?'}`;
          const name = node.name.value;
          inputs.push({
            parameter: name === 'input' ? '' : name,
            type: argument?.type ?? null,
            rule: ruleOf(`${owner}(${name}:)`),
            value: node.value,
          });
          return false;
        },
      }),
    );
  }
  return { inputs, variables };
}

const plans = new WeakMap<DocumentNode, Map<string, Plan>>();

function cachedPlan(schema: GraphQLSchema, document: DocumentNode, operationName: string | null | undefined): Plan {
  let byOperation = plans.get(document);
  if (!byOperation) {
    byOperation = new Map();
    plans.set(document, byOperation);
  }
  const key = operationName ?? '';
  let plan = byOperation.get(key);
  if (!plan) {
    plan = planOf(schema, document, operationName);
    byOperation.set(key, plan);
  }
  return plan;
}

function unwrap(type: GraphQLInputType | null): GraphQLInputType | null {
  return type && isNonNullType(type) ? type.ofType : type;
}

function itemType(type: GraphQLInputType | null): GraphQLInputType | null {
  const inner = unwrap(type);
  return inner && isListType(inner) ? inner.ofType : inner;
}

/** The field's type and rule when `type` is an input object that has it; unknown fields are walked as plain lines. */
function fieldOf(type: GraphQLInputType | null, name: string): { type: GraphQLInputType | null; rule: TextRule } {
  const inner = unwrap(type);
  if (inner && isInputObjectType(inner)) {
    const field = inner.getFields()[name];
    if (field) return { type: field.type, rule: ruleOf(`${inner.name}.${name}`) };
  }
  return { type: null, rule: 'line' };
}

interface Pending {
  parameter: string;
  type: GraphQLInputType | null;
  rule: TextRule;
  depth: number;
}

/** The first string breaking its rule, as an invalid_parameter error; walks JSON values and literals without recursion. */
function firstViolation(plan: Plan, variableValues: Readonly<Record<string, unknown>> | null | undefined): InvalidParameterError | null {
  const stack: (Pending & ({ node: ValueNode } | { raw: unknown }))[] = plan.inputs.map((input) => ({ ...input, node: input.value, depth: 0 })).reverse();
  while (stack.length > 0) {
    const item = stack.pop()!;
    if (item.depth > MAX_INPUT_DEPTH) continue;
    const { parameter, type, rule, depth } = item;
    if ('raw' in item) {
      const value = item.raw;
      if (typeof value === 'string') {
        const violation = textViolation(value, rule);
        if (violation) return new InvalidParameterError(parameter || 'input', `${parameter || 'input'} ${violation}`);
      } else if (Array.isArray(value)) {
        for (let i = value.length - 1; i >= 0; i--) stack.push({ parameter, type: itemType(type), rule, depth: depth + 1, raw: value[i] });
      } else if (typeof value === 'object' && value !== null) {
        for (const [name, field] of Object.entries(value).reverse()) {
          stack.push({ parameter: join(parameter, name), ...fieldOf(type, name), depth: depth + 1, raw: field });
        }
      }
      continue;
    }
    const node = item.node;
    switch (node.kind) {
      case Kind.STRING: {
        const violation = textViolation(node.value, rule);
        if (violation) return new InvalidParameterError(parameter || 'input', `${parameter || 'input'} ${violation}`);
        break;
      }
      case Kind.LIST:
        for (let i = node.values.length - 1; i >= 0; i--) stack.push({ parameter, type: itemType(type), rule, depth: depth + 1, node: node.values[i]! });
        break;
      case Kind.OBJECT:
        for (let i = node.fields.length - 1; i >= 0; i--) {
          const field = node.fields[i]!;
          stack.push({ parameter: join(parameter, field.name.value), ...fieldOf(type, field.name.value), depth: depth + 1, node: field.value });
        }
        break;
      case Kind.VARIABLE: {
        const name = node.name.value;
        if (variableValues && Object.hasOwn(variableValues, name)) {
          stack.push({ parameter, type, rule, depth, raw: variableValues[name] });
        } else {
          const fallback = plan.variables.get(name)?.defaultValue;
          if (fallback) stack.push({ parameter, type, rule, depth: depth + 1, node: fallback });
        }
        break;
      }
      default:
        break;
    }
  }
  return null;
}

/** The error every surface reports: the AppError carries the code; yoga and graphql-sse read the status. */
function refusal(error: InvalidParameterError): GraphQLError {
  return new GraphQLError(error.message, {
    originalError: error,
    extensions: { code: ErrorCode.invalidParameter, ...error.extras, http: errorHead(ErrorCode.invalidParameter) },
  });
}

/** The refusal of this operation's string inputs, or null when all of them pass. */
export function textInputsError(
  schema: GraphQLSchema,
  document: DocumentNode,
  variableValues: Readonly<Record<string, unknown>> | null | undefined,
  operationName?: string | null,
): GraphQLError | null {
  const violation = firstViolation(cachedPlan(schema, document, operationName), variableValues);
  return violation ? refusal(violation) : null;
}

/**
 * For entry points outside yoga (graphql-sse's onSubscribe at /graphql/stream): throws the
 * 400 `invalid_parameter` GraphQLError when a string input breaks its rule. A query that does
 * not parse is left to the caller's own parser, which reports it.
 */
export function assertTextInputs(
  schema: GraphQLSchema,
  params: { query: string | DocumentNode; variables?: Readonly<Record<string, unknown>> | null; operationName?: string | null },
): void {
  let document: DocumentNode;
  if (typeof params.query === 'string') {
    try {
      document = parse(params.query);
    } catch {
      return;
    }
  } else {
    document = params.query;
  }
  const error = textInputsError(schema, document, params.variables, params.operationName);
  if (error) throw error;
}

/** The yoga plugin: refuses before execution (or before a subscription starts). */
export function useTextInputGuard(): Plugin {
  const refuse = (args: { schema: GraphQLSchema; document: DocumentNode; variableValues?: unknown; operationName?: string | null }): ExecutionResult | null => {
    const error = textInputsError(args.schema, args.document, args.variableValues as Record<string, unknown> | undefined, args.operationName);
    return error ? { errors: [error] } : null;
  };
  return {
    onExecute({ args, setResultAndStopExecution }) {
      const result = refuse(args);
      if (result) setResultAndStopExecution(result);
    },
    onSubscribe({ args, setResultAndStopExecution }) {
      const result = refuse(args);
      if (result) setResultAndStopExecution(result);
    },
  };
}
