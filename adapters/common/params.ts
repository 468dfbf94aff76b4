/**
 * Query and path parameters of the REST surfaces, declared once: the same declarations parse
 * requests, describe the parameters in the OpenAPI document (ranges from src/domain/bounds.ts)
 * and rename them to the GraphQL arguments they feed (`limit` -> `first`). The adapter checks only
 * form (a single value, one line of text without control characters, integer syntax), and reports
 * it after authentication, limits and the tier check. Ranges are checked on the GraphQL arguments
 * (src/graphql/argument-guard.ts), slugs and timestamps by the services; their refusals name the
 * argument, which inRestNames renames back to the parameter the caller sent.
 */
import type { GraphQLError } from 'graphql';
import type { Bound } from '../../src/domain/bounds.js';
import { InvalidParameterError } from '../../src/domain/errors.js';
import { textViolation } from '../../src/domain/text.js';

interface ParamBase {
  name: string;
  in: 'query' | 'path';
  description: string;
  /** The GraphQL variable this parameter feeds. */
  variable: string;
  required?: boolean;
}

export type ParamSpec =
  | (ParamBase & { type: 'integer'; minimum: number; maximum: number; default?: number })
  | (ParamBase & { type: 'string'; format?: 'date-time' | 'uuid'; enum?: readonly string[]; maxLength?: number });

/** minimum, maximum and default of an integer parameter from its bound. */
export function pageParam(bound: Bound): { minimum: number; maximum: number; default: number } {
  return { minimum: 1, maximum: bound.max, default: bound.default };
}

const INTEGER = /^[+-]?\d{1,15}$/;
export const MAX_STRING_PARAM = 500;

export interface ParsedParams {
  variables: Record<string, unknown>;
  /** The first parameter of the wrong form, reported after the tier check. */
  error: InvalidParameterError | null;
}

export function parseParams(specs: readonly ParamSpec[], query: Record<string, unknown>, path: Record<string, unknown>): ParsedParams {
  const variables: Record<string, unknown> = {};
  for (const spec of specs) {
    const raw = (spec.in === 'query' ? query : path)[spec.name];
    if (raw === undefined) continue;
    if (Array.isArray(raw)) {
      return { variables, error: new InvalidParameterError(spec.name, `${spec.name} must be given at most once`) };
    }
    const value = String(raw);
    if (value.length > MAX_STRING_PARAM) {
      return { variables, error: new InvalidParameterError(spec.name, `${spec.name} is too long`) };
    }
    // Every parameter is one line of text (src/domain/text.ts): a NUL never reaches the database.
    const violation = textViolation(value, 'line');
    if (violation) return { variables, error: new InvalidParameterError(spec.name, `${spec.name} ${violation}`) };
    if (spec.type === 'integer') {
      // An optional sign and at most 15 digits (a safe integer): the range is the argument's to check.
      if (!INTEGER.test(value.trim())) {
        return {
          variables,
          error: new InvalidParameterError(spec.name, `${spec.name} must be an integer between ${spec.minimum} and ${spec.maximum}`),
        };
      }
      variables[spec.variable] = Number(value.trim());
    } else {
      variables[spec.variable] = value;
    }
  }
  return { variables, error: null };
}

type RefusalOf = Pick<GraphQLError, 'message' | 'extensions'>;

/** GraphQL's page fields a refusal may name, as the REST bodies name them. */
const REST_PAGE_FIELDS: Readonly<Record<string, string>> = Object.freeze({ endCursor: 'next_cursor' });

/**
 * A GraphQL refusal naming an argument, renamed to the parameter that feeds it (`first` ->
 * `limit`, `after` -> `cursor`): refusals name their parameter first in the message, as
 * src/domain/bounds.ts does; a page field they point to is renamed too (`endCursor` -> `next_cursor`).
 */
export function inRestNames(error: RefusalOf, specs: readonly ParamSpec[]): RefusalOf {
  const parameter = error.extensions?.parameter;
  const spec = specs.find((candidate) => candidate.variable === parameter && candidate.name !== parameter);
  if (!spec || typeof parameter !== 'string') return error;
  let message = error.message.startsWith(`${parameter} `) ? `${spec.name}${error.message.slice(parameter.length)}` : error.message;
  for (const [graphqlName, restName] of Object.entries(REST_PAGE_FIELDS)) message = message.replaceAll(graphqlName, restName);
  return { message, extensions: { ...error.extensions, parameter: spec.name } };
}
