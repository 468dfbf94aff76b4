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
 * Every property is required (a value that may be missing is nullable instead, or
 * absentWhenNull where the documented JSON leaves it out).
 *
 * Where JSON and GraphQL carry a value differently: jsonText() (JSON text in GraphQL, the value in
 * JSON); component() and resourceObject's jsonComponent (documented as a named schema of its own,
 * which resourceJsonSchema refers to when given componentRef).
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
  /** A nullable value (absentWhenNull) the documented JSON leaves out while it is null. */
  jsonAbsentWhenNull?: true;
  /** A JSON value GraphQL carries as its text (jsonText). */
  graphqlJsonText?: true;
  /** The name of the schema documenting this value on its own (component, resourceObject). */
  jsonComponent?: string;
}
const DECLARATION_OPTIONS: readonly string[] = [
  'graphqlName',
  'graphqlCostItems',
  'graphqlType',
  'graphqlEnum',
  'json',
  'jsonAbsentWhenNull',
  'graphqlJsonText',
  'jsonComponent',
] satisfies (keyof DeclarationOptions)[];

/** A nested object of a resource, named as its GraphQL type; jsonComponent: documented as that named schema of its own. */
export function resourceObject<P extends TProperties>(graphqlName: string, properties: P, options: { description?: string; jsonComponent?: string } = {}): TObject<P> {
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

/**
 * A value that may be null, which the documented JSON leaves out while it is null (a field shown
 * only once known): nullable in GraphQL, not required in the JSON Schema.
 */
export function absentWhenNull<S extends TSchema>(schema: S) {
  return Type.Union([schema, Type.Null()], { jsonAbsentWhenNull: true });
}

/**
 * A JSON value GraphQL carries as its text (a String; canonical JSON, say, that is hashed as
 * is): records hold the text, the documented JSON shows the value, which jsonSchema documents.
 */
export function jsonText(jsonSchema: Record<string, unknown>, options: { description?: string } = {}) {
  return Type.Unsafe<string>({ ...jsonSchema, graphqlJsonText: true, ...options });
}

/**
 * A JSON value documented elsewhere, as the named schema `name` (jsonSchema): shown as it is,
 * referred to by the JSON Schema of a resource holding it (resourceJsonSchema's componentRef).
 * JSON only: it has no GraphQL type.
 */
export function component<T>(name: string, jsonSchema: Record<string, unknown>) {
  return Type.Unsafe<T>({ ...jsonSchema, jsonComponent: name });
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

/** What a leaf is beyond TypeBox's own kinds: a point in time, a value of a GraphQL enum, JSON text, or none of these. */
export function declaredLeaf(schema: TSchema): { kind: 'dateTime' } | { kind: 'enum'; graphqlEnum: string; values: readonly string[] } | { kind: 'jsonText' } | null {
  const options = optionsOf(schema);
  if (options.graphqlJsonText === true) return { kind: 'jsonText' };
  if (typeof options.graphqlEnum === 'string') return { kind: 'enum', graphqlEnum: options.graphqlEnum, values: options.enum as string[] };
  if (options.type === 'string' && options.format === 'date-time' && Type.IsUnsafe(schema)) return { kind: 'dateTime' };
  return null;
}

/** A property's name in the documented JSON, or null when JSON does not show it. */
export function jsonNameOf(key: string, property: TSchema): string | null {
  // Said of the property, or of the value a nullable() property holds: nullable(dateTime({ json: false })).
  const value = Type.IsUnion(property) ? property.anyOf.find((member) => !Type.IsNull(member)) : undefined;
  const json = optionsOf(property).json ?? (value === undefined ? undefined : optionsOf(value).json);
  if (json === false) return null;
  return typeof json === 'string' ? json : snakeCase(key);
}

/** A GraphQL name as the documented JSON spells it: roiCi95 -> roi_ci95. */
export function snakeCase(name: string): string {
  return name.replace(/[A-Z]/g, (letter) => `_${letter.toLowerCase()}`);
}

type Json = Record<string, unknown>;
const optionsOf = (schema: TSchema): Json => schema as unknown as Json;
const isAbsentWhenNull = (property: TSchema): boolean => optionsOf(property).jsonAbsentWhenNull === true;

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
 * The documented JSON Schema of a resource: snake_case keys, every property required (but those
 * absentWhenNull), null as `type: [x, 'null']`, descriptions, bounds and the example (snake_cased)
 * kept; no additionalProperties: false (a new field is a non-breaking change). Given componentRef,
 * a nested value with a jsonComponent is its reference (`{ $ref }`), not its schema again.
 */
export function resourceJsonSchema(declaration: TSchema, componentRef?: (name: string) => Json): Json {
  const { schema, nullable: orNull } = withoutNull(declaration);
  const json: Json = { ...withoutGraphqlOptions(optionsOf(schema)), ...describedBy(declaration) };
  const nested = (child: TSchema): Json => {
    const { jsonComponent } = optionsOf(child);
    return componentRef !== undefined && typeof jsonComponent === 'string' ? componentRef(jsonComponent) : resourceJsonSchema(child, componentRef);
  };
  if (Type.IsObject(schema)) {
    const properties = jsonProperties(schema);
    json.required = properties.filter(([, , property]) => !isAbsentWhenNull(property)).map(([name]) => name);
    json.properties = Object.fromEntries(
      // Left out while null, so never null when shown.
      properties.map(([name, , property]) => [name, isAbsentWhenNull(property) ? { ...nested(withoutNull(property).schema), ...describedBy(property) } : nested(property)]),
    );
  } else if (Type.IsTuple(schema)) {
    const count = tupleLength(schema);
    delete json.additionalItems;
    Object.assign(json, { items: nested(homogeneousItem(schema)), minItems: count, maxItems: count });
  } else if (Type.IsArray(schema)) {
    json.items = nested(schema.items);
  } else if (
    !(Type.IsNumber(schema) || Type.IsInteger(schema) || Type.IsString(schema) || Type.IsBoolean(schema) || declaredLeaf(schema) || typeof optionsOf(schema).jsonComponent === 'string')
  ) {
    throw new Error(`a resource has no JSON Schema for ${JSON.stringify(schema)}`);
  }
  if (Array.isArray(json.examples)) json.examples = json.examples.map((example) => resourceJson(schema, example, 'value'));
  return orNull ? orNullJsonSchema(json) : json;
}

/** A JSON Schema that also admits null: null added to its type, and to its enum when it has one. */
export function orNullJsonSchema(schema: Json): Json {
  const widened: Json = { ...schema, type: [schema.type ?? 'string', 'null'] };
  if (Array.isArray(schema.enum)) widened.enum = [...schema.enum, null];
  return widened;
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
 * does not show (or absentWhenNull and null) left out, a Date as its ISO 8601 string, JSON text as
 * the value it encodes. An enum's value comes as GraphQL answers it (`from: 'graphql'`: its name,
 * PICK_PUBLISHED) or as the record holds it (`'value'`). A value the declaration cannot show (a
 * required property missing, an enum name it does not list) throws: a wrong body is worse than
 * an error.
 */
export function resourceJson(declaration: TSchema, value: unknown, from: 'graphql' | 'value' = 'graphql'): unknown {
  return jsonMapperOf(declaration, from)(value);
}

type ToJson = (value: unknown) => unknown;

/** One mapper per declaration and direction, made on first use: the walk of the declaration is not redone per value. */
const JSON_MAPPERS = { graphql: new WeakMap<TSchema, ToJson>(), value: new WeakMap<TSchema, ToJson>() };

function jsonMapperOf(declaration: TSchema, from: 'graphql' | 'value'): ToJson {
  let mapper = JSON_MAPPERS[from].get(declaration);
  if (mapper === undefined) {
    mapper = compileJsonMapper(declaration, from);
    JSON_MAPPERS[from].set(declaration, mapper);
  }
  return mapper;
}

function compileJsonMapper(declaration: TSchema, from: 'graphql' | 'value'): ToJson {
  const { schema, nullable: mayBeNull } = withoutNull(declaration);
  const map = compileValueMapper(schema, from);
  return (value) => {
    if (value === null) return null;
    if (value === undefined) {
      if (mayBeNull) return null;
      throw new Error(`a required value is missing (${JSON.stringify(optionsOf(schema).description ?? optionsOf(schema).graphqlName ?? optionsOf(schema).type)})`);
    }
    return map(value);
  };
}

function compileValueMapper(schema: TSchema, from: 'graphql' | 'value'): ToJson {
  if (Type.IsObject(schema)) {
    // Lazily: a declaration may hold itself no deeper than its values do.
    const fields = jsonProperties(schema).map(([name, key, property]) => ({ name, key, absentWhenNull: isAbsentWhenNull(property), property }));
    let mappers: ToJson[] | undefined;
    return (value) => {
      mappers ??= fields.map((field) => jsonMapperOf(field.property, from));
      const source = value as Json;
      const json: Json = {};
      fields.forEach((field, index) => {
        const fieldValue = source[field.key];
        if (field.absentWhenNull && (fieldValue === null || fieldValue === undefined)) return;
        json[field.name] = mappers![index]!(fieldValue);
      });
      return json;
    };
  }
  if (Type.IsArray(schema) || Type.IsTuple(schema)) {
    const item = jsonMapperOf(homogeneousItem(schema), from);
    return (value) => (value as unknown[]).map(item);
  }
  const leaf = declaredLeaf(schema);
  if (leaf?.kind === 'jsonText') return (value) => JSON.parse(value as string) as unknown;
  if (leaf?.kind === 'enum' && from === 'graphql') {
    const values = new Map(leaf.values.map((candidate) => [graphqlEnumName(candidate), candidate]));
    return (value) => {
      const found = values.get(value as string);
      if (found === undefined) throw new Error(`${String(value)} is not a value of ${leaf.graphqlEnum} this resource shows`);
      return found;
    };
  }
  return (value) => (value instanceof Date ? value.toISOString() : value);
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

/**
 * A request body, declared as a resource is (GraphQL names, `json` names, leaves and lists),
 * with what only a body has: properties that may be left out (Type.Optional; a `default`
 * documents what absence means) and requireOneOf, properties of which at least one must be
 * sent. Its documented JSON Schema is requestBodyJsonSchema, its GraphQL arguments or input
 * fields bodyInputFields (src/graphql/resource-types.ts); bodyVariables reads a JSON body.
 */
export function requestBody<P extends TProperties>(
  properties: P,
  documented: { description?: string; requireOneOf?: readonly (keyof P & string)[]; example: Static<TObject<P>> },
): TObject<P> {
  const { example, ...options } = documented;
  return Type.Object(properties, { ...options, examples: [example] });
}

/** The properties of a body JSON shows: its JSON name, the GraphQL name, the schema, whether it may be left out. */
function bodyJsonProperties(body: TObject): [string, string, TSchema, boolean][] {
  return Object.entries(body.properties).flatMap(([key, property]): [string, string, TSchema, boolean][] => {
    const name = jsonNameOf(key, property);
    return name === null ? [] : [[name, key, property, Type.IsOptional(property)]];
  });
}

/**
 * The documented JSON Schema of a request body: as resourceJsonSchema documents a resource, but
 * `required` lists only the properties that may not be left out (none: no `required`), and
 * requireOneOf is an `anyOf` of one-property `required`s.
 */
export function requestBodyJsonSchema(body: TObject): Json {
  const options = optionsOf(body);
  const properties = bodyJsonProperties(body);
  const jsonNames = new Map(properties.map(([name, key]) => [key, name]));
  const required = properties.filter(([, , , optional]) => !optional).map(([name]) => name);
  const oneOf = (options.requireOneOf ?? []) as string[];
  const anyOf = oneOf.map((key) => {
    const name = jsonNames.get(key);
    if (name === undefined) throw new Error(`requireOneOf: ${key} is no property the JSON body shows`);
    return { required: [name] };
  });
  const kept = Object.fromEntries(Object.entries(withoutGraphqlOptions(options)).filter(([key]) => !['required', 'properties', 'requireOneOf', 'examples'].includes(key)));
  return {
    ...kept,
    ...(required.length === 0 ? {} : { required }),
    ...(anyOf.length === 0 ? {} : { anyOf }),
    properties: Object.fromEntries(properties.map(([name, , property]) => [name, resourceJsonSchema(property)])),
    ...(Array.isArray(options.examples) ? { examples: options.examples.map((example) => requestBodyJson(body, example as Json)) } : {}),
  };
}

/** A body as its declaration types it (an example) in the documented JSON: only the properties it has. */
function requestBodyJson(body: TObject, value: Json): Json {
  return Object.fromEntries(
    bodyJsonProperties(body).flatMap(([name, key, property]) => (value[key] === undefined ? [] : [[name, resourceJson(property, value[key], 'value')]])),
  );
}

/**
 * A JSON body's properties as GraphQL variables: by their GraphQL names, a oneOf() value as its
 * enum name (pick.published -> PICK_PUBLISHED), a property left out left out. Fields the body
 * does not declare are ignored; the form of each value is the caller's to check first.
 */
export function bodyVariables(body: TObject, json: Record<string, unknown>): Json {
  return Object.fromEntries(
    bodyJsonProperties(body).flatMap(([name, key, property]) => (json[name] === undefined ? [] : [[key, graphqlInputValue(property, json[name])]])),
  );
}

function graphqlInputValue(schema: TSchema, value: unknown): unknown {
  const { schema: inner } = withoutNull(schema);
  if (Array.isArray(value) && (Type.IsArray(inner) || Type.IsTuple(inner))) return value.map((item) => graphqlInputValue(homogeneousItem(inner), item));
  const leaf = declaredLeaf(inner);
  return leaf?.kind === 'enum' && typeof value === 'string' ? graphqlEnumName(value) : value;
}
