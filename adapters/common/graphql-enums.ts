/**
 * GraphQL enum values are the domain's values upper-cased (src/graphql/schema/enums.ts), so a
 * generated enum type lower-cased is the domain's type: PickStatus, Tier, ...
 */
export function domainValue<T extends string>(value: T): Lowercase<T> {
  return value.toLowerCase() as Lowercase<T>;
}
