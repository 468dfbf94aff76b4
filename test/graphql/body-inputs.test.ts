/**
 * GraphQL arguments made from a declared request body (bodyInputFields, src/graphql/resource-types.ts),
 * seen through createStreamToken, and object types shared by two declared resources (the usage).
 */
import { getNamedType, type GraphQLObjectType } from 'graphql';
import { describe, expect, it } from 'vitest';
import { getSchema } from '../../src/graphql/schema.js';

const typeOf = (name: string) => getSchema().getType(name) as GraphQLObjectType;

describe('bodyInputFields (createStreamToken)', () => {
  it('makes one optional argument per property, typed and described as declared', () => {
    const args = typeOf('Mutation').getFields().createStreamToken!.args;
    expect(Object.fromEntries(args.map((arg) => [arg.name, [String(arg.type), arg.defaultValue]]))).toEqual({
      ttlSeconds: ['Int', undefined],
      origins: ['[String!]', undefined],
    });
    expect(args.find((arg) => arg.name === 'ttlSeconds')!.description).toBe('Lifetime of the token in seconds, 60 to 3600; default 900.');
  });
});

describe('declared objects shared by two resources (the usage)', () => {
  it('gives ApiKeyUsage and CallerKeyUsage the same window types', () => {
    const key = typeOf('ApiKeyUsage').getFields();
    const caller = typeOf('CallerKeyUsage').getFields();
    expect(getNamedType(key.hourly!.type)).toBe(getNamedType(caller.hourly!.type));
    expect(String(caller.tier!.type)).toBe('Tier!');
    expect(Object.fromEntries(Object.entries(typeOf('HourlyUsage').getFields()).map(([name, field]) => [name, String(field.type)]))).toEqual({
      limit: 'Int!',
      used: 'Int!',
      remaining: 'Int!',
      resetsAt: 'DateTime!',
    });
  });
});
