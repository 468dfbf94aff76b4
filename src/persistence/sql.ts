/**
 * SQL text built from the domain's lists, so a status list is written once: in the domain, read
 * here by the entities' checks and partial indexes and by the repositories' filters; and the
 * one way to run SQL with driver-bound parameters.
 */
import { CompiledQuery } from 'kysely';
import type { Em } from './orm.js';

// Raw rows: numeric columns arrive as strings from node-postgres and as numbers from PGlite,
// timestamps as Dates or strings.
export const numberOf = (value: unknown): number => (typeof value === 'number' ? value : Number(value));
export const dateOf = (value: unknown): Date => (value instanceof Date ? value : new Date(String(value)));
export const dateOrNullOf = (value: unknown): Date | null => (value == null ? null : dateOf(value));
/** A json/jsonb column: parsed by node-postgres and PGlite alike, unless a driver hands back text. */
export const jsonOf = <T>(value: unknown): T => (typeof value === 'string' ? JSON.parse(value) : value) as T;

/** The column of an entity property, as the naming strategy (underscore) names it: kickoffAt -> kickoff_at. */
export const columnNameOf = (property: string): string => property.replace(/[A-Z]/g, (letter) => `_${letter.toLowerCase()}`);

/** `column in ('a', 'b')`, as the migrations wrote the checks and index predicates. */
export function valueIn(column: string, values: readonly string[]): string {
  return `${column} in (${values.map((value) => `'${value}'`).join(', ')})`;
}

/** A jsonb column holding an array of codes, each among `values`. */
export function codesIn(column: string, values: readonly string[]): string {
  return `jsonb_typeof(${column}) = 'array' and ${column} <@ '${JSON.stringify(values)}'::jsonb`;
}

export const statusIn = (statuses: readonly string[]): string => valueIn('status', statuses);

/**
 * Runs SQL with `$1, $2, ...` parameters bound by the database driver. `em.execute` inlines its
 * `?` parameters into the SQL text on the client, which for a poll's megabyte of JSON means
 * escaping it in JavaScript and parsing it again as a literal; bound, it travels once, as is.
 */
export async function executeBound<Row = Record<string, unknown>>(em: Em, sql: string, parameters: readonly unknown[]): Promise<Row[]> {
  const result = await em.getKysely().executeQuery(CompiledQuery.raw(sql, [...parameters]));
  return result.rows as Row[];
}
