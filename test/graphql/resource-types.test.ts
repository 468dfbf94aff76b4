/**
 * The GraphQL types of a declared resource (src/graphql/resource-types.ts), seen through the
 * track record: scalars, null, lists and each list's cost, written out by hand; and through the
 * webhook subscription, one type though another resource nests it.
 */
import { getNamedType, type GraphQLObjectType } from 'graphql';
import { describe, expect, it } from 'vitest';
import { getSchema } from '../../src/graphql/schema.js';
import { resourceObject } from '../../src/domain/resource-shape.js';
import { declaredEnumType, resourceObjectType } from '../../src/graphql/resource-types.js';
import Type from 'typebox';

const fieldsOf = (name: string) => (getSchema().getType(name) as GraphQLObjectType).getFields();

describe('resourceObjectType (the track record)', () => {
  it('types each field as declared: Float, Int, String, null, lists, nested objects', () => {
    const overall = fieldsOf('TrackRecordOverall');
    expect(String(overall.roiPct!.type)).toBe('Float!');
    expect(String(overall.totalSettled!.type)).toBe('Int!');
    expect(String(overall.avgOdds!.type)).toBe('Float');
    expect(String(overall.roiCi95!.type)).toBe('[Float!]');
    const record = fieldsOf('TrackRecord');
    expect(String(record.overall!.type)).toBe('TrackRecordOverall!');
    expect(String(record.clvDistribution!.type)).toBe('[TrackRecordClvBin!]!');
    expect(String(fieldsOf('TrackRecordPoint').date!.type)).toBe('String!');
    expect(getNamedType(record.series!.type).description).toBeUndefined();
    expect((getSchema().getType('TrackRecordClvBin') as GraphQLObjectType).description).toBe(
      'Picks in the CLV mean whose CLV (percent) is in [low_pct, high_pct); null is an open end.',
    );
    expect(fieldsOf('TrackRecordClvBin').lowPct!.description).toBe('Inclusive; null for the open lower end.');
  });

  it('costs each list of the track record at its most items', () => {
    const record = fieldsOf('TrackRecord');
    const multipliers = Object.fromEntries(
      ['perSport', 'perMarket', 'series', 'calibration', 'clvDistribution', 'referenceCoverage'].map((name) => [name, record[name]!.extensions.complexity]),
    );
    expect(multipliers).toEqual({
      perSport: { field: 1, multiplier: 11 },
      perMarket: { field: 1, multiplier: 3 },
      series: { field: 1, multiplier: 366 },
      calibration: { field: 1, multiplier: 10 },
      clvDistribution: { field: 1, multiplier: 12 },
      referenceCoverage: { field: 1, multiplier: 10 },
    });
  });
});

describe('resourceObjectType (a declared object nested in another resource)', () => {
  it('is one type wherever it is declared: the subscription alone and in the wrapper with its secret', () => {
    expect(String(fieldsOf('WebhookSubscriptionWithSecret').subscription!.type)).toBe('WebhookSubscription!');
    // The field GraphQL alone has (builder.objectFields) is on the one type.
    expect(Object.keys(fieldsOf('WebhookSubscription'))).toContain('deliveries');
  });

  it('refuses another object under a name already made', () => {
    getSchema();
    expect(() => resourceObjectType(resourceObject('TrackRecordPoint', { date: Type.String() }))).toThrow(/two declared objects are named TrackRecordPoint/);
  });
});

describe('declaredEnumType', () => {
  it('reuses an enum for a declaration naming some of its values, and refuses a value it lacks', () => {
    getSchema();
    const enumType = getSchema().getType('WebhookSubscriptionStatus') as unknown as { getValues(): { name: string; value: unknown }[] };
    expect(enumType.getValues().map((value) => [value.name, value.value])).toEqual([
      ['ACTIVE', 'active'],
      ['EXHAUSTED', 'exhausted'],
    ]);
    expect(() => declaredEnumType('WebhookSubscriptionStatus', ['active'])).not.toThrow();
    expect(() => declaredEnumType('WebhookSubscriptionStatus', ['active', 'paused'])).toThrow(/has no value paused/);
  });
});
