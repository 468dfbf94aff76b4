/**
 * The GraphQL object types of a resource declared with TypeBox (src/domain/resource-shape.ts):
 * one per object, named by its graphqlName, each property a field of the same name exposed as
 * is. Number is Float, Integer Int; null, lists, descriptions and a list's cost (its maxItems or
 * graphqlCostItems) come from the declaration.
 */
import type { ObjectRef } from '@pothos/core';
import Type, { type Static, type TObject, type TSchema } from 'typebox';
import { resourceFieldOf, resourceProperties } from '../domain/resource-shape.js';
import { builder, type Types } from './builder.js';

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

function scalarOf(leaf: TSchema, key: string): 'Float' | 'Int' | 'String' | 'Boolean' {
  if (Type.IsInteger(leaf)) return 'Int';
  if (Type.IsNumber(leaf)) return 'Float';
  if (Type.IsString(leaf)) return 'String';
  if (Type.IsBoolean(leaf)) return 'Boolean';
  throw new Error(`${key}: a resource leaf is a number, an integer, a string or a boolean`);
}
