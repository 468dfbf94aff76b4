/**
 * The arguments' rules at the GraphQL boundary, checked for the whole operation before it runs,
 * whatever data exists (a field under an empty list is checked too):
 * - the string rules of src/domain/text.ts: every string an operation receives, in its variables
 *   or as a literal in the document. Strings are `line` strings except the long texts listed in
 *   MULTILINE_TEXTS; the stricter `name` rule belongs to particular fields and is applied by the
 *   services that accept them;
 * - the bounds of src/domain/bounds.ts, declared on the arguments that take them (boundedInt):
 *   page sizes and windows. An absent or null value is the argument's default.
 *
 * One yoga plugin covers POST /graphql (queries, mutations, yoga's SSE subscriptions) and the
 * REST adapters (they execute their documents through yoga.getEnveloped); /graphql/stream
 * (graphql-sse) calls assertArgumentInputs itself.
 *
 * A refusal is 400 `invalid_parameter` with `parameter` named as the services name their
 * fields: the argument (`league`, `first`), or for an `input` argument the path inside it
 * (`homeTeam`, `bookmaker.name`). It comes after authentication and limits (the context is
 * built first) and after the access checks of the fields the operation selects: a caller who
 * may not use one of them gets that refusal (401, 403) instead, as the resolvers would have
 * answered, so the documented order 401 -> 429 -> 403 -> 400 holds. Nothing is queried.
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
import type { ArgBuilder } from '@pothos/core';
import type { Plugin } from 'graphql-yoga';
import { boundViolation, describeBound, type Bound, type Range } from '../domain/bounds.js';
import { AppError, errorHead, InvalidParameterError } from '../domain/errors.js';
import { textViolation, type TextRule } from '../domain/text.js';
import { assertScopes, type ScopeMap } from './auth.js';
import type { Types } from './builder.js';
import type { Context, Principal } from './context.js';

/** Schema coordinates (`InputType.field`, `Type.field(argument:)`) of the long texts: tab, LF and CR allowed. */
export const MULTILINE_TEXTS: ReadonlySet<string> = new Set(['UpsertMatchAnalysisInput.analysis']);

/** Deeper than any input type of the schema: nothing below can be valid, so nothing below is walked. */
const MAX_INPUT_DEPTH = 16;

/** Where an argument's bound is kept on the schema (the argument's extensions). */
const BOUND = 'bound';

/** An Int argument with a bound: its default, its description and the bound the guard checks. */
export function boundedInt(arg: ArgBuilder<Types>, bound: Bound, description: string) {
  return arg.int({ description: `${description} ${describeBound(bound)}`, defaultValue: bound.default, extensions: { [BOUND]: bound } });
}

/** An Int argument with bounds and no default: required, or optional with a default the resolver computes. */
export function rangedInt<Required extends boolean>(arg: ArgBuilder<Types>, range: Range, description: string, required: Required) {
  return arg.int({ description: `${description} ${describeBound(range)}`, required, extensions: { [BOUND]: range } });
}

interface ArgumentInput {
  parameter: string;
  type: GraphQLInputType | null;
  rule: TextRule;
  value: ValueNode;
  bound: Range | undefined;
}

/** A field's scopes as Pothos keeps them: a map, or a function of the parent, arguments and context. */
type FieldScopes = ScopeMap | ((parent: unknown, args: unknown, context: Context) => ScopeMap);

interface Plan {
  inputs: ArgumentInput[];
  variables: Map<string, VariableDefinitionNode>;
  /** The scopes of every field the operation selects, in document order. */
  scopes: FieldScopes[];
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
  const scopes: FieldScopes[] = [];
  const variables = new Map<string, VariableDefinitionNode>();
  for (const operation of chosen) for (const definition of operation.variableDefinitions ?? []) variables.set(definition.variable.name.value, definition);
  for (const definition of document.definitions) {
    if (definition.kind !== Kind.FRAGMENT_DEFINITION && !chosen.includes(definition as (typeof chosen)[number])) continue;
    const typeInfo = new TypeInfo(schema);
    visit(
      definition,
      visitWithTypeInfo(typeInfo, {
        Field() {
          const options = typeInfo.getFieldDef()?.extensions?.pothosOptions as { authScopes?: FieldScopes } | undefined;
          if (options?.authScopes) scopes.push(options.authScopes);
        },
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
            bound: argument?.extensions?.[BOUND] as Range | undefined,
          });
          return false;
        },
      }),
    );
  }
  return { inputs, variables, scopes };
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

/**
 * The number a bounded argument receives, when it is one: a literal, a variable's value or its
 * default. Null when absent or null (the argument's default applies), and for values of another
 * type, which GraphQL's own coercion refuses.
 */
function numberOf(plan: Plan, node: ValueNode, variableValues: Readonly<Record<string, unknown>> | null | undefined): number | null {
  if (node.kind === Kind.INT || node.kind === Kind.FLOAT) return Number(node.value);
  if (node.kind !== Kind.VARIABLE) return null;
  const given = variableInput(plan, node.name.value, variableValues);
  if (given === null) return null;
  if ('node' in given) return numberOf(plan, given.node, null);
  return typeof given.raw === 'number' ? given.raw : null;
}

/** What a variable hands an argument: the request's value, else its declared default (a literal), else nothing. */
function variableInput(plan: Plan, name: string, variableValues: Readonly<Record<string, unknown>> | null | undefined): { raw: unknown } | { node: ValueNode } | null {
  if (variableValues && Object.hasOwn(variableValues, name)) return { raw: variableValues[name] };
  const fallback = plan.variables.get(name)?.defaultValue;
  return fallback ? { node: fallback } : null;
}

/** The first argument breaking its rule, as an invalid_parameter error; walks JSON values and literals without recursion. */
function firstViolation(plan: Plan, variableValues: Readonly<Record<string, unknown>> | null | undefined): InvalidParameterError | null {
  for (const input of plan.inputs) {
    if (input.bound === undefined) continue;
    const value = numberOf(plan, input.value, variableValues);
    const violation = value === null ? null : boundViolation(input.bound, input.parameter, value);
    if (violation) return violation;
  }
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
        const given = variableInput(plan, node.name.value, variableValues);
        if (given !== null) stack.push({ parameter, type, rule, depth: 'node' in given ? depth + 1 : depth, ...given });
        break;
      }
      default:
        break;
    }
  }
  return null;
}

/** The error every surface reports: the AppError carries the code; yoga and graphql-sse read the status. */
function refusal(error: AppError): GraphQLError {
  return new GraphQLError(error.message, {
    originalError: error,
    extensions: { code: error.code, ...error.extras, http: errorHead(error.code, error.extras) },
  });
}

/** The first access check of the operation's fields that `principal` fails, or null. */
function accessRefusal(plan: Plan, principal: Principal, context: Context): AppError | null {
  for (const scopes of plan.scopes) {
    let map: ScopeMap;
    try {
      map = typeof scopes === 'function' ? scopes(undefined, {}, context) : scopes;
    } catch {
      // A scope that needs its parent object is left to its resolver.
      continue;
    }
    try {
      assertScopes(principal, map);
    } catch (error) {
      if (error instanceof AppError) return error;
      throw error;
    }
  }
  return null;
}

/**
 * The first access refusal (401, 403) of the fields the operation selects, for this context, or
 * null: what their resolvers would answer. For a surface that refuses a request of the wrong
 * form itself, after the access checks (the REST parameters).
 */
export function operationAccessRefusal(schema: GraphQLSchema, document: DocumentNode, operationName: string | null | undefined, context: Context): GraphQLError | null {
  const error = accessRefusal(cachedPlan(schema, document, operationName), context.principal, context);
  return error ? refusal(error) : null;
}

/**
 * The refusal of this operation's arguments, or null when all of them pass. With a context, a
 * field the caller may not use is refused first (its 401 or 403), as its resolver would be.
 */
export function argumentInputsError(
  schema: GraphQLSchema,
  document: DocumentNode,
  variableValues: Readonly<Record<string, unknown>> | null | undefined,
  operationName?: string | null,
  context?: Context,
): GraphQLError | null {
  const plan = cachedPlan(schema, document, operationName);
  const violation = firstViolation(plan, variableValues);
  if (!violation) return null;
  return refusal((context && accessRefusal(plan, context.principal, context)) || violation);
}

/**
 * For entry points outside yoga (graphql-sse's context at /graphql/stream): throws the
 * GraphQLError of argumentInputsError. A query that does not parse is left to the caller's own
 * parser, which reports it.
 */
export function assertArgumentInputs(
  schema: GraphQLSchema,
  params: { query: string | DocumentNode; variables?: Readonly<Record<string, unknown>> | null; operationName?: string | null },
  context?: Context,
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
  const error = argumentInputsError(schema, document, params.variables, params.operationName, context);
  if (error) throw error;
}

/** The yoga plugin: refuses before execution (or before a subscription starts). */
export function useArgumentGuard(): Plugin {
  const refuse = (args: {
    schema: GraphQLSchema;
    document: DocumentNode;
    variableValues?: unknown;
    operationName?: string | null;
    contextValue?: unknown;
  }): ExecutionResult | null => {
    const variables = args.variableValues as Record<string, unknown> | undefined;
    const error = argumentInputsError(args.schema, args.document, variables, args.operationName, args.contextValue as Context | undefined);
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
