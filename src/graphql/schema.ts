import { lexicographicSortSchema, printSchema, type GraphQLSchema } from 'graphql';
import { builder } from './builder.js';
import './schema/index.js';

let schema: GraphQLSchema | undefined;

/** The one schema, built once per process. */
export function getSchema(): GraphQLSchema {
  schema ??= builder.toSchema();
  return schema;
}

export function printedSchema(): string {
  return `${printSchema(lexicographicSortSchema(getSchema()))}\n`;
}
