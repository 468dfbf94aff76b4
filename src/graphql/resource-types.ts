/**
 * The GraphQL object types of a resource declared with TypeBox (src/domain/resource-shape.ts):
 * one per object, named by its graphqlName, each property a field of the same name exposed as
 * is. Number is Float, Integer Int, a string String (or ID), dateTime() DateTime, oneOf() its enum
 * type; null, lists, descriptions and a list's cost (its maxItems or graphqlCostItems) come from
 * the declaration. Fields GraphQL alone has (a connection with arguments) are added to the type
 * where it is used (builder.objectFields).
 */
import type { EnumRef, ObjectRef } from '@pothos/core';
import Type, { type Static, type TObject, type TSchema } from 'typebox';
import { declaredLeaf, graphqlEnumName, resourceFieldOf, resourceProperties } from '../domain/resource-shape.js';
import { builder, type Types } from './builder.js';

const enumTypes = new Map<string, EnumRef<Types, string, string>>();

/**
 * The GraphQL enum of a closed list of values, made once per name: each value named by
 * graphqlEnumName (pick.published -> PICK_PUBLISHED), resolving to the value itself. The first
 * call with a name gives its description.
 */
export function declaredEnumType<const V extends readonly string[]>(name: string, values: V, description?: string): EnumRef<Types, V[number], V[number]> {
  let ref = enumTypes.get(name);
  if (ref === undefined) {
    ref = builder.enumType(name, {
      ...(description === undefined ? {} : { description }),
      values: Object.fromEntries(values.map((value) => [graphqlEnumName(value), { value }])),
    }) as EnumRef<Types, string, string>;
    enumTypes.set(name, ref);
  }
  return ref as EnumRef<Types, V[number], V[number]>;
}

type Json = Record<string, unknown>;
type ResourceFieldBuilder = PothosSchemaTypes.ObjectFieldBuilder<Types, Json>;

/** The object type of a resource, with the object types of its nested objects. */
export function resourceObjectType<S extends TObject>(declaration: S): ObjectRef<Types, Static<S>> {
  const types = new Map<string, ObjectRef<Types, Json>>();

  const objectType = (object: TObject): ObjectRef<Types, Json> => {
    const name = (object as { graphqlName?: unknown }).graphqlName;
    if (typeof name !== 'string') throw new Error(`a resource object has no graphqlName: ${JSON.stringify(object)}`);
    let ref = types.get(name);
    if (ref === undefined) {
      const { description } = object as { description?: string };
      ref = builder.objectRef<Json>(name).implement({
        ...(description === undefined ? {} : { description }),
        fields: (t) => Object.fromEntries(resourceProperties(object).map(([key, property]) => [key, fieldOf(t, key, property)])),
      });
      types.set(name, ref);
    }
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

  return objectType(declaration) as unknown as ObjectRef<Types, Static<S>>;
}

function scalarOf(leaf: TSchema, key: string): 'Float' | 'Int' | 'String' | 'ID' | 'Boolean' | 'DateTime' | EnumRef<Types, string, string> {
  const declared = declaredLeaf(leaf);
  if (declared?.kind === 'dateTime') return 'DateTime';
  if (declared?.kind === 'enum') return declaredEnumType(declared.graphqlEnum, declared.values);
  if ((leaf as { graphqlType?: unknown }).graphqlType === 'ID') return 'ID';
  if (Type.IsInteger(leaf)) return 'Int';
  if (Type.IsNumber(leaf)) return 'Float';
  if (Type.IsString(leaf)) return 'String';
  if (Type.IsBoolean(leaf)) return 'Boolean';
  throw new Error(`${key}: a resource leaf is a number, an integer, a string, a boolean, a dateTime() or a oneOf()`);
}
