import { GraphQLError, Kind } from 'graphql';
import { ErrorCode } from '../../domain/errors.js';
import { builder } from '../builder.js';

/**
 * ISO 8601 timestamps. Output is always UTC with milliseconds. Input is passed on as the
 * string it is: services validate it with the domain's strict parser so the error names
 * the field (invalid_parameter) instead of a generic coercion failure.
 */
builder.scalarType('DateTime', {
  description: 'ISO 8601 timestamp with a time zone, e.g. 2026-11-22T18:00:00Z. Returned in UTC.',
  serialize: (value) => (value as Date).toISOString(),
  parseValue: (value) => {
    if (typeof value !== 'string') {
      throw new GraphQLError('DateTime must be a string', { extensions: { code: ErrorCode.invalidParameter } });
    }
    return value;
  },
  parseLiteral: (node) => {
    if (node.kind !== Kind.STRING) {
      throw new GraphQLError('DateTime must be a string', { extensions: { code: ErrorCode.invalidParameter } });
    }
    return node.value;
  },
});
