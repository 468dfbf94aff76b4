/**
 * A JSON resource declared once, as a TypeBox object tree named as GraphQL names it (camelCase):
 * its TypeScript type is Static<typeof declaration>, and the rest derives from it: the documented
 * JSON Schema with snake_case keys (resourceJsonSchema), the GraphQL object types
 * (src/graphql/resource-types.ts) and the selection of every field (graphqlSelectionOfResource).
 *
 * A declaration is made of:
 * - objects, each named by its GraphQL type (resourceObject; the root with its documented example: resource);
 * - leaves: Type.Number (GraphQL Float), Type.Integer (Int), Type.String (String, or ID with
 *   graphqlType), Type.Boolean, dateTime() (a Date; GraphQL DateTime, JSON an ISO 8601 string)
 *   and oneOf() (a closed list of values: a GraphQL enum, the values themselves in JSON), with
 *   their description and JSON Schema bounds (minimum, enum, format, ...);
 * - `json`: the property's name in the documented JSON when it is not the snake_case of its
 *   GraphQL name (`id` shown as `subscription_id`), or false for a property JSON does not show;
 * - nullable(X) for a value that may be null;
 * - lists: Type.Array with maxItems where the contract bounds them, or graphqlCostItems (the
 *   count GraphQL's query cost assumes) where it does not; a homogeneous Type.Tuple is a list of
 *   exactly that many items.
 * Every property is required (a value that may be missing is nullable instead).
 */
import Type, { type Static, type TObject, type TProperties, type TSchema } from 'typebox';

/** Schema options of a declaration that are no JSON Schema keywords: left out of the documented JSON Schema. */
export interface DeclarationOptions {
  /** An object's GraphQL type name. */
  graphqlName?: string;
  /** The item count a list's GraphQL query cost assumes when the contract sets no maxItems. */
  graphqlCostItems?: number;
  /** A string shown as GraphQL's ID. */
  graphqlType?: 'ID';
  /** The GraphQL enum type of a oneOf() value. */
  graphqlEnum?: string;
  /** The property's JSON name, when not the snake_case of its GraphQL name; false: not shown in JSON. */
  json?: string | false;
}
const DECLARATION_OPTIONS: readonly string[] = ['graphqlName', 'graphqlCostItems', 'graphqlType', 'graphqlEnum', 'json'] satisfies (keyof DeclarationOptions)[];

/** A nested object of a resource, named as its GraphQL type. */
export function resourceObject<P extends TProperties>(graphqlName: string, properties: P, options: { description?: string } = {}): TObject<P> {
  return Type.Object(properties, { graphqlName, ...options });
}

/** The root object of a resource, with the documented example (camelCase, as the resource's type). */
export function resource<P extends TProperties>(
  graphqlName: string,
  properties: P,
  documented: { description?: string; example: Static<TObject<P>> },
): TObject<P> {
  return Type.Object(properties, { graphqlName, ...(documented.description === undefined ? {} : { description: documented.description }), examples: [documented.example] });
}

/** A value that may be null. */
export function nullable<S extends TSchema>(schema: S) {
  return Type.Union([schema, Type.Null()]);
}

/** A point in time: a Date in records, GraphQL's DateTime, an ISO 8601 string in JSON. */
export function dateTime(options: { description?: string; json?: string | false } = {}) {
  return Type.Unsafe<Date>({ type: 'string', format: 'date-time', ...options });
}

/** A value from a closed list: a GraphQL enum (each value named by graphqlEnumName), the value itself in JSON. */
export function oneOf<const V extends readonly string[]>(values: V, graphqlEnum: string, options: { description?: string; json?: string | false } = {}) {
  return Type.Unsafe<V[number]>({ type: 'string', enum: [...values], graphqlEnum, ...options });
}

/** A value's name in its GraphQL enum: upper case, other characters as `_` (pick.published -> PICK_PUBLISHED). */
export function graphqlEnumName(value: string): string {
  return value.toUpperCase().replace(/[^A-Z0-9_]/g, '_');
}

/** What a leaf is beyond TypeBox's own kinds: a point in time, a value of a GraphQL enum, or neither. */
export function declaredLeaf(schema: TSchema): { kind: 'dateTime' } | { kind: 'enum'; graphqlEnum: string; values: readonly string[] } | null {
  const options = optionsOf(schema);
  if (typeof options.graphqlEnum === 'string') return { kind: 'enum', graphqlEnum: options.graphqlEnum, values: options.enum as string[] };
  if (options.type === 'string' && options.format === 'date-time' && Type.IsUnsafe(schema)) return { kind: 'dateTime' };
  return null;
}

/** A property's name in the documented JSON, or null when JSON does not show it. */
export function jsonNameOf(key: string, property: TSchema): string | null {
  const { json } = optionsOf(property);
  if (json === false) return null;
  return typeof json === 'string' ? json : snakeCase(key);
}

/** A GraphQL name as the documented JSON spells it: roiCi95 -> roi_ci95. */
export function snakeCase(name: string): string {
  return name.replace(/[A-Z]/g, (letter) => `_${letter.toLowerCase()}`);
}

type Json = Record<string, unknown>;
const optionsOf = (schema: TSchema): Json => schema as unknown as Json;

/** A schema without the null it may be united with, and whether it was. */
function withoutNull(schema: TSchema): { schema: TSchema; nullable: boolean; description?: string } {
  if (!Type.IsUnion(schema)) return { schema, nullable: false, ...describedBy(schema) };
  const others = schema.anyOf.filter((member) => !Type.IsNull(member));
  if (others.length !== 1 || schema.anyOf.length !== 2) throw new Error('a resource only unites a value with null (nullable)');
  return { schema: others[0]!, nullable: true, ...describedBy(others[0]!), ...describedBy(schema) };
}

function describedBy(schema: TSchema): { description?: string } {
  const { description } = optionsOf(schema);
  return typeof description === 'string' ? { description } : {};
}

/** What a property is, as GraphQL needs it: its element (a leaf or an object), null or not, listed or not. */
export interface ResourceField {
  /** The leaf or object, without null and without the list around it. */
  element: TSchema;
  nullable: boolean;
  /** A list: whether its items may be null, and how many it may hold (maxItems, else graphqlCostItems). */
  list?: { itemsNullable: boolean; items?: number };
  description?: string;
}

export function resourceFieldOf(schema: TSchema): ResourceField {
  const outer = withoutNull(schema);
  const described = outer.description === undefined ? {} : { description: outer.description };
  const options = optionsOf(outer.schema);
  if (Type.IsArray(outer.schema) || Type.IsTuple(outer.schema)) {
    const item = withoutNull(homogeneousItem(outer.schema));
    const items = Type.IsTuple(outer.schema) ? tupleLength(outer.schema) : ((options.maxItems ?? options.graphqlCostItems) as number | undefined);
    return { element: item.schema, nullable: outer.nullable, list: { itemsNullable: item.nullable, ...(items === undefined ? {} : { items }) }, ...described };
  }
  // A nested object's description is its type's (GraphQL), so not the field's.
  return { element: outer.schema, nullable: outer.nullable, ...(Type.IsObject(outer.schema) ? {} : described) };
}

const tupleLength = (tuple: TSchema): number => ((optionsOf(tuple).items ?? []) as TSchema[]).length;

/** The one item schema of a list: a tuple's items must all be the same (GraphQL lists are homogeneous). */
function homogeneousItem(schema: TSchema): TSchema {
  if (Type.IsArray(schema)) return schema.items;
  const items = (optionsOf(schema).items ?? []) as TSchema[];
  const first = items[0];
  if (first === undefined || items.some((item) => JSON.stringify(item) !== JSON.stringify(first))) {
    throw new Error('a resource tuple must hold items of one schema');
  }
  return first;
}

/** The properties of a resource object; each is required, so none may be optional. */
export function resourceProperties(object: TObject): [string, TSchema][] {
  return Object.entries(object.properties).map(([key, property]) => {
    if (Type.IsOptional(property)) throw new Error(`${key}: resource properties are required (nullable instead of optional)`);
    return [key, property];
  });
}

/**
 * The documented JSON Schema of a resource: snake_case keys, every property required, null as
 * `type: [x, 'null']`, descriptions, bounds and the example (snake_cased) kept; no
 * additionalProperties: false (a new field is a non-breaking change).
 */
export function resourceJsonSchema(declaration: TSchema): Json {
  const { schema, nullable: orNull } = withoutNull(declaration);
  const json: Json = { ...withoutGraphqlOptions(optionsOf(schema)), ...describedBy(declaration) };
  if (Type.IsObject(schema)) {
    const properties = jsonProperties(schema);
    json.required = properties.map(([name]) => name);
    json.properties = Object.fromEntries(properties.map(([name, , property]) => [name, resourceJsonSchema(property)]));
  } else if (Type.IsTuple(schema)) {
    const count = tupleLength(schema);
    delete json.additionalItems;
    Object.assign(json, { items: resourceJsonSchema(homogeneousItem(schema)), minItems: count, maxItems: count });
  } else if (Type.IsArray(schema)) {
    json.items = resourceJsonSchema(schema.items);
  } else if (!(Type.IsNumber(schema) || Type.IsInteger(schema) || Type.IsString(schema) || Type.IsBoolean(schema) || declaredLeaf(schema))) {
    throw new Error(`a resource has no JSON Schema for ${JSON.stringify(schema)}`);
  }
  if (Array.isArray(json.examples)) json.examples = json.examples.map((example) => resourceJson(schema, example, 'value'));
  if (!orNull) return json;
  if (Array.isArray(json.enum)) json.enum = [...json.enum, null];
  return { ...json, type: [json.type, 'null'] };
}

function withoutGraphqlOptions(options: Json): Json {
  return Object.fromEntries(Object.entries(options).filter(([key]) => !DECLARATION_OPTIONS.includes(key)));
}

/** The properties the documented JSON shows: its name, the GraphQL name, the schema. */
function jsonProperties(object: TObject): [string, string, TSchema][] {
  return resourceProperties(object).flatMap(([key, property]): [string, string, TSchema][] => {
    const name = jsonNameOf(key, property);
    return name === null ? [] : [[name, key, property]];
  });
}

/**
 * The documented JSON of a value of the declaration: keys by their JSON names, properties JSON
 * does not show left out, a Date as its ISO 8601 string. An enum's value comes as GraphQL
 * answers it (`from: 'graphql'`: its name, PICK_PUBLISHED) or as the record holds it (`'value'`).
 */
export function resourceJson(declaration: TSchema, value: unknown, from: 'graphql' | 'value' = 'graphql'): unknown {
  if (value === null || value === undefined) return null;
  const { schema } = withoutNull(declaration);
  if (Type.IsObject(schema)) {
    const source = value as Json;
    return Object.fromEntries(jsonProperties(schema).map(([name, key, property]) => [name, resourceJson(property, source[key], from)]));
  }
  if (Type.IsArray(schema) || Type.IsTuple(schema)) {
    const item = homogeneousItem(schema);
    return (value as unknown[]).map((element) => resourceJson(item, element, from));
  }
  if (value instanceof Date) return value.toISOString();
  const leaf = declaredLeaf(schema);
  if (leaf?.kind === 'enum' && from === 'graphql') return leaf.values.find((candidate) => graphqlEnumName(candidate) === value) ?? value;
  return value;
}

/** The GraphQL selection of every field of a resource object that JSON shows, nested objects included: `a b { c }`. */
export function graphqlSelectionOfResource(object: TObject): string {
  return jsonProperties(object)
    .map(([, key, property]) => {
      const { element } = resourceFieldOf(property);
      return Type.IsObject(element) ? `${key} { ${graphqlSelectionOfResource(element)} }` : key;
    })
    .join(' ');
}
