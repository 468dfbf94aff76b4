/** GraphQL enums are upper case; the stored and REST values are lower case. */
export function upperEnumValues<const T extends readonly string[]>(values: T): { [K in T[number] as Uppercase<K>]: { value: K } } {
  return Object.fromEntries(values.map((value) => [value.toUpperCase(), { value }])) as never;
}
