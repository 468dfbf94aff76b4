/**
 * The GraphQL object types of a resource declared with TypeBox (src/domain/resource-shape.ts):
 * one per object, named by its graphqlName, each property a field of the same name exposed as
 * is. Number is Float, Integer Int, a string String (or ID), dateTime() DateTime, oneOf() its enum
 * type, jsonText() String; null, lists, descriptions and a list's cost (its maxItems or graphqlCostItems) come from
 * the declaration. Fields GraphQL alone has (a connection with arguments) are added to the type
 * where it is used (builder.objectFields).
 */
import type { EnumRef, InputOrArgRef, ObjectRef } from '@pothos/core';
import Type, { type Static, type TObject, type TOptional, type TProperties, type TSchema } from 'typebox';
import { declaredLeaf, graphqlEnumName, resourceFieldOf, resourceProperties } from '../domain/resource-shape.js';
import { builder, type Types } from './builder.js';

const enumTypes = new Map<string, EnumRef<Types, string, string>>();
const enumValues = new Map<string, readonly string[]>();

/**
 * The GraphQL enum of a closed list of values, made once per name: each value named by
 * graphqlEnumName (pick.published -> PICK_PUBLISHED), resolving to the value itself. The first
 * call with a name gives its description.
 */
export function declaredEnumType<const V extends readonly string[]>(name: string, values: V, description?: string): EnumRef<Types, V[number], V[number]> {
  let ref = enumTypes.get(name);
  if (ref !== undefined) {
    // A declaration may name some of an enum's values (the update body's status), never others.
    const known = enumValues.get(name)!;
    const unknown = values.filter((value) => !known.includes(value));
    if (unknown.length > 0) throw new Error(`${name} has no value ${unknown.join(', ')}: make the enum with every value first`);
  } else {
    ref = builder.enumType(name, {
      ...(description === undefined ? {} : { description }),
      values: Object.fromEntries(values.map((value) => [graphqlEnumName(value), { value }])),
    }) as EnumRef<Types, string, string>;
    enumTypes.set(name, ref);
    enumValues.set(name, values);
  }
  return ref as EnumRef<Types, V[number], V[number]>;
}

type Json = Record<string, unknown>;
type ResourceFieldBuilder = PothosSchemaTypes.ObjectFieldBuilder<Types, Json>;

/**
 * Every object type made from a declared object, by name: a declared object nested in another
 * resource (a subscription in the wrapper that adds its secret) is the same type. Another
 * object may not take a name already made.
 */
const objectTypes = new Map<string, { object: TObject; ref: ObjectRef<Types, Json> }>();

/**
 * The object type of a resource, with the object types of its nested objects. Its records are
 * Static<S>, or records holding more (R) that fields added with builder.objectFields read.
 */
export function resourceObjectType<S extends TObject, R extends Static<S> = Static<S>>(declaration: S): ObjectRef<Types, R> {
  const objectType = (object: TObject): ObjectRef<Types, Json> => {
    const name = (object as { graphqlName?: unknown }).graphqlName;
    if (typeof name !== 'string') throw new Error(`a resource object has no graphqlName: ${JSON.stringify(object)}`);
    const made = objectTypes.get(name);
    if (made !== undefined) {
      if (made.object !== object) throw new Error(`two declared objects are named ${name}`);
      return made.ref;
    }
    const { description } = object as { description?: string };
    const ref = builder.objectRef<Json>(name).implement({
      ...(description === undefined ? {} : { description }),
      fields: (t) => Object.fromEntries(resourceProperties(object).map(([key, property]) => [key, fieldOf(t, key, property)])),
    });
    objectTypes.set(name, { object, ref });
    return ref;
  };

  const fieldOf = (t: ResourceFieldBuilder, key: string, property: TSchema) => {
    const field = resourceFieldOf(property);
    const element = Type.IsObject(field.element) ? objectType(field.element) : scalarOf(field.element, key);
    const type = field.list ? [element] : element;
    const nullable = field.list ? { list: field.nullable, items: field.list.itemsNullable } : field.nullable;
    const complexity = field.list?.items === undefined ? {} : { complexity: { field: 1, multiplier: field.list.items } };
    // Pothos types expose() per literal field name and type; the declaration is typed by TypeBox instead.
    return t.expose(key as never, { type, nullable, ...complexity, ...(field.description === undefined ? {} : { description: field.description }) } as never);
  };

  return objectType(declaration) as unknown as ObjectRef<Types, R>;
}

function scalarOf(leaf: TSchema, key: string): 'Float' | 'Int' | 'String' | 'ID' | 'Boolean' | 'DateTime' | EnumRef<Types, string, string> {
  const declared = declaredLeaf(leaf);
  if (declared?.kind === 'dateTime') return 'DateTime';
  if (declared?.kind === 'enum') return declaredEnumType(declared.graphqlEnum, declared.values);
  if (declared?.kind === 'jsonText') return 'String';
  if ((leaf as { graphqlType?: unknown }).graphqlType === 'ID') return 'ID';
  if (Type.IsInteger(leaf)) return 'Int';
  if (Type.IsNumber(leaf)) return 'Float';
  if (Type.IsString(leaf)) return 'String';
  if (Type.IsBoolean(leaf)) return 'Boolean';
  throw new Error(`${key}: a resource leaf is a number, an integer, a string, a boolean, a dateTime() or a oneOf()`);
}

/** A body property's GraphQL value: what it declares, or null and absent too when it may be left out. */
type BodyInputRefs<P extends TProperties, Kind extends 'Arg' | 'InputObject'> = {
  [K in keyof P]: InputOrArgRef<Types, P[K] extends TOptional<TSchema> ? Static<P[K]> | null | undefined : Static<P[K]>, Kind>;
};

/**
 * The GraphQL arguments (pass `t.arg`) or input fields (pass `(options) => t.field(options)`) of
 * a request body (requestBody, src/domain/resource-shape.ts): one per property, `json: false`
 * ones included, its leaves typed as resourceObjectType types them. A property the body may
 * leave out (or null) is optional, the others required; requireOneOf is the resolver's to check.
 */
export function bodyInputFields<P extends TProperties, Kind extends 'Arg' | 'InputObject'>(
  field: PothosSchemaTypes.InputFieldBuilder<Types, Kind>['field'],
  body: TObject<P>,
): BodyInputRefs<P, Kind> {
  return Object.fromEntries(
    Object.entries(body.properties).map(([key, property]) => {
      const declared = resourceFieldOf(property);
      if (Type.IsObject(declared.element)) throw new Error(`${key}: a request body's properties are leaves or lists of leaves`);
      const scalar = scalarOf(declared.element, key);
      const required = !Type.IsOptional(property) && !declared.nullable;
      const type = declared.list ? [scalar] : scalar;
      const requiredness = declared.list ? { list: required, items: !declared.list.itemsNullable } : required;
      // As in resourceObjectType: the declaration, not Pothos, types the field.
      return [key, field({ type, required: requiredness, ...(declared.description === undefined ? {} : { description: declared.description }) } as never)];
    }),
  ) as BodyInputRefs<P, Kind>;
}
