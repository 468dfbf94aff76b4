/**
 * Query and path parameters of the REST surfaces, declared once: the same declarations parse
 * requests and describe the parameters in the OpenAPI document. The adapter checks form (a
 * single value, one line of text without control characters, integer syntax) and the ranges of
 * page sizes and windows (src/domain/bounds.ts), so a refusal names the REST parameter (`limit`,
 * not GraphQL's `first`); the REST adapter reports it after authentication, limits and the tier
 * check. Slugs and timestamps are validated by the services behind GraphQL.
 */
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
  | (ParamBase & { type: 'integer'; minimum: number; maximum: number; default: number })
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
      // Beyond 32 bits GraphQL's Int cannot carry it: a form error like any other.
      const integer = Number(value.trim());
      if (!INTEGER.test(value.trim()) || integer < spec.minimum || integer > spec.maximum) {
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
