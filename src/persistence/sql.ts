/**
 * SQL text built from the domain's lists, so a status list is written once: in the domain, read
 * here by the entities' checks and partial indexes and by the repositories' filters.
 */

/** `status in ('a', 'b')`, as the migrations wrote the checks and index predicates. */
export function statusIn(statuses: readonly string[]): string {
  return `status in (${statuses.map((status) => `'${status}'`).join(', ')})`;
}
