/**
 * A resource declared once (src/domain/resource-shape.ts): its documented JSON Schema and its
 * GraphQL selection are written out here by hand, so a derivation that drifts fails.
 */
import Type from 'typebox';
import { describe, expect, it } from 'vitest';
import {
  absentWhenNull,
  bodyVariables,
  component,
  dateTime,
  declaredLeaf,
  graphqlEnumName,
  graphqlSelectionOfResource,
  jsonNameOf,
  jsonText,
  nullable,
  oneOf,
  requestBody,
  requestBodyJsonSchema,
  resource,
  resourceFieldOf,
  resourceJson,
  resourceJsonSchema,
  resourceObject,
  snakeCase,
} from '../../src/domain/resource-shape.js';
import { TRACK_RECORD } from '../../src/domain/track-record-shape.js';

const SCORE = resourceObject('Score', { homeGoals: Type.Integer({ minimum: 0 }), awayGoals: nullable(Type.Integer({ minimum: 0, description: 'null until kickoff.' })) }, { description: 'A score.' });

const MATCH = resource(
  'Match',
  {
    matchId: Type.String({ format: 'uuid' }),
    oddsRange: nullable(Type.Tuple([Type.Number(), Type.Number()], { description: '[low, high].' })),
    finalScore: SCORE,
    market: nullable(Type.String({ enum: ['h2h', 'totals'] })),
    lastGoals: Type.Array(SCORE, { maxItems: 3, description: 'Newest first.' }),
    tags: Type.Array(Type.String(), { graphqlCostItems: 5 }),
    isLive: Type.Boolean(),
  },
  {
    description: 'A match.',
    example: {
      matchId: '0b7f3c9e-5d2a-4e61-9a8b-3c4d5e6f7a81',
      oddsRange: [1.5, 2.5],
      finalScore: { homeGoals: 2, awayGoals: null },
      market: null,
      lastGoals: [{ homeGoals: 1, awayGoals: 0 }],
      tags: ['derby'],
      isLive: false,
    },
  },
);

describe('resourceJsonSchema', () => {
  it('documents the resource in snake_case: every property required, null in type, bounds and example kept, GraphQL options left out', () => {
    expect(resourceJsonSchema(MATCH)).toStrictEqual({
      type: 'object',
      description: 'A match.',
      required: ['match_id', 'odds_range', 'final_score', 'market', 'last_goals', 'tags', 'is_live'],
      properties: {
        match_id: { type: 'string', format: 'uuid' },
        odds_range: { type: ['array', 'null'], items: { type: 'number' }, minItems: 2, maxItems: 2, description: '[low, high].' },
        final_score: {
          type: 'object',
          description: 'A score.',
          required: ['home_goals', 'away_goals'],
          properties: {
            home_goals: { type: 'integer', minimum: 0 },
            away_goals: { type: ['integer', 'null'], minimum: 0, description: 'null until kickoff.' },
          },
        },
        market: { type: ['string', 'null'], enum: ['h2h', 'totals', null] },
        last_goals: {
          type: 'array',
          maxItems: 3,
          description: 'Newest first.',
          items: {
            type: 'object',
            description: 'A score.',
            required: ['home_goals', 'away_goals'],
            properties: {
              home_goals: { type: 'integer', minimum: 0 },
              away_goals: { type: ['integer', 'null'], minimum: 0, description: 'null until kickoff.' },
            },
          },
        },
        tags: { type: 'array', items: { type: 'string' } },
        is_live: { type: 'boolean' },
      },
      examples: [
        {
          match_id: '0b7f3c9e-5d2a-4e61-9a8b-3c4d5e6f7a81',
          odds_range: [1.5, 2.5],
          final_score: { home_goals: 2, away_goals: null },
          market: null,
          last_goals: [{ home_goals: 1, away_goals: 0 }],
          tags: ['derby'],
          is_live: false,
        },
      ],
    });
  });

  it("keeps the track record's documented bounds", () => {
    const schema = resourceJsonSchema(TRACK_RECORD) as any;
    expect(schema.required).toEqual(['overall', 'per_sport', 'per_market', 'series', 'calibration', 'clv_distribution', 'reference_coverage', 'availability']);
    // The JSON names the declaration gives where snake_case would read "at5".
    expect(Object.keys(schema.properties.availability.properties)).toEqual(['tracked_picks', 'available_at_5_min_pct', 'available_at_30_min_pct', 'median_minutes_available']);
    expect(schema.properties.availability.properties.available_at_5_min_pct).toMatchObject({ type: ['number', 'null'] });
    expect(schema.properties.overall.properties.roi_ci95).toMatchObject({ type: ['array', 'null'], items: { type: 'number' }, minItems: 2, maxItems: 2 });
    expect(schema.properties.calibration).toMatchObject({ minItems: 10, maxItems: 10 });
    expect(schema.properties.per_sport).not.toHaveProperty('maxItems');
    expect(schema.properties.per_market.items.properties.market).toMatchObject({ type: 'string', enum: ['h2h', 'spreads', 'totals'] });
    expect(schema.examples[0].overall).toMatchObject({ roi_ci95: [-24.1, 36.9], t_score: 0.42, max_drawdown_units: 5.12 });
  });

  it('refuses what GraphQL or the contract cannot say', () => {
    expect(() => resourceJsonSchema(resourceObject('A', { a: Type.Optional(Type.Number()) }))).toThrow(/required/);
    expect(() => resourceJsonSchema(Type.Tuple([Type.Number(), Type.String()]))).toThrow(/one schema/);
    expect(() => resourceJsonSchema(Type.Union([Type.Number(), Type.String()]))).toThrow(/null/);
  });
});

describe('graphqlSelectionOfResource', () => {
  it('selects every field, nested objects and lists of objects with their fields', () => {
    expect(graphqlSelectionOfResource(MATCH)).toBe('matchId oddsRange finalScore { homeGoals awayGoals } market lastGoals { homeGoals awayGoals } tags isLive');
  });
});

describe('resourceFieldOf', () => {
  it('says null, list and the count a list is costed at', () => {
    const { properties } = MATCH;
    expect(resourceFieldOf(properties.oddsRange)).toMatchObject({ nullable: true, list: { itemsNullable: false, items: 2 }, description: '[low, high].' });
    expect(resourceFieldOf(properties.lastGoals)).toMatchObject({ nullable: false, list: { itemsNullable: false, items: 3 }, description: 'Newest first.' });
    expect(resourceFieldOf(properties.tags)).toMatchObject({ nullable: false, list: { itemsNullable: false, items: 5 } });
    expect(resourceFieldOf(Type.Array(nullable(Type.Number())))).toStrictEqual({ element: Type.Number(), nullable: false, list: { itemsNullable: true } });
    // A nested object's description is its type's, not the field's.
    expect(resourceFieldOf(properties.finalScore)).toStrictEqual({ element: SCORE, nullable: false });
  });
});

describe('snakeCase', () => {
  it('spells GraphQL names as the documented JSON does', () => {
    expect(['roiCi95', 'tScore', 'cumulativePnlUnits', 'sport'].map(snakeCase)).toEqual(['roi_ci95', 't_score', 'cumulative_pnl_units', 'sport']);
  });
});

describe('points in time, closed lists, IDs and JSON names', () => {
  const HOOK = resource(
    'Hook',
    {
      id: Type.String({ format: 'uuid', graphqlType: 'ID', json: 'hook_id' }),
      events: Type.Array(oneOf(['pick.published', 'pick.settled'], 'HookEvent')),
      state: nullable(oneOf(['active', 'exhausted'], 'HookState', { description: 'null while unknown.' })),
      createdAt: dateTime({ description: 'Creation.' }),
      updatedAt: dateTime({ json: false }),
    },
    {
      example: {
        id: '6f1d2c3b-4a59-4e8d-8c7b-1a2b3c4d5e6f',
        events: ['pick.settled'],
        state: 'active',
        createdAt: new Date('2026-11-22T12:00:00.000Z'),
        updatedAt: new Date('2026-11-23T12:00:00.000Z'),
      },
    },
  );

  it('documents them: a date-time string, the values as an enum, the JSON name, nothing of a field JSON does not show', () => {
    expect(resourceJsonSchema(HOOK)).toStrictEqual({
      type: 'object',
      required: ['hook_id', 'events', 'state', 'created_at'],
      properties: {
        hook_id: { type: 'string', format: 'uuid' },
        events: { type: 'array', items: { type: 'string', enum: ['pick.published', 'pick.settled'] } },
        state: { type: ['string', 'null'], enum: ['active', 'exhausted', null], description: 'null while unknown.' },
        created_at: { type: 'string', format: 'date-time', description: 'Creation.' },
      },
      examples: [{ hook_id: '6f1d2c3b-4a59-4e8d-8c7b-1a2b3c4d5e6f', events: ['pick.settled'], state: 'active', created_at: '2026-11-22T12:00:00.000Z' }],
    });
  });

  it('selects only what JSON shows, and maps a GraphQL answer to the documented JSON', () => {
    expect(graphqlSelectionOfResource(HOOK)).toBe('id events state createdAt');
    const answer = { id: 'x', events: ['PICK_PUBLISHED', 'PICK_SETTLED'], state: null, createdAt: '2026-11-22T12:00:00.000Z' };
    expect(resourceJson(HOOK, answer)).toStrictEqual({ hook_id: 'x', events: ['pick.published', 'pick.settled'], state: null, created_at: '2026-11-22T12:00:00.000Z' });
    expect(resourceJson(HOOK, { ...answer, state: 'EXHAUSTED' })).toMatchObject({ state: 'exhausted' });
  });

  it('throws rather than show what the declaration cannot: a required value missing, an enum name it does not list', () => {
    const answer = { id: 'x', events: ['PICK_PUBLISHED'], state: null, createdAt: '2026-11-22T12:00:00.000Z' };
    expect(() => resourceJson(HOOK, { ...answer, events: ['PICK_VOIDED'] })).toThrow(/PICK_VOIDED is not a value of HookEvent/);
    expect(() => resourceJson(HOOK, { events: answer.events, state: null, createdAt: answer.createdAt })).toThrow(/missing/);
    // A nullable value missing is null, as GraphQL would answer it.
    expect(resourceJson(HOOK, { id: 'x', events: [], createdAt: answer.createdAt })).toMatchObject({ state: null });
  });

  it('names enum values as GraphQL allows', () => {
    expect(['pick.published', 'admin_review', 'h2h'].map(graphqlEnumName)).toEqual(['PICK_PUBLISHED', 'ADMIN_REVIEW', 'H2H']);
  });
});

describe('request bodies', () => {
  const HOOK_CHANGE = requestBody(
    {
      targetUrl: Type.Optional(Type.String({ format: 'uri', description: 'Where to send.' })),
      events: Type.Optional(Type.Array(oneOf(['pick.published', 'pick.settled'], 'HookEvent'), { minItems: 1 })),
      retries: Type.Optional(Type.Integer({ minimum: 0, default: 3 })),
      apiKeyId: Type.Optional(Type.String({ graphqlType: 'ID', json: false })),
    },
    { description: 'A change.', requireOneOf: ['targetUrl', 'events'], example: { events: ['pick.settled'], retries: 5 } },
  );
  const HOOK_NEW = requestBody({ url: Type.String(), secretHint: Type.Optional(Type.String({ json: 'hint' })) }, { example: { url: 'https://a.example' } });

  it('documents a body: only the properties it must carry required, anyOf for requireOneOf, defaults kept, the example as sent', () => {
    expect(requestBodyJsonSchema(HOOK_CHANGE)).toStrictEqual({
      type: 'object',
      description: 'A change.',
      anyOf: [{ required: ['target_url'] }, { required: ['events'] }],
      properties: {
        target_url: { type: 'string', format: 'uri', description: 'Where to send.' },
        events: { type: 'array', minItems: 1, items: { type: 'string', enum: ['pick.published', 'pick.settled'] } },
        retries: { type: 'integer', minimum: 0, default: 3 },
      },
      examples: [{ events: ['pick.settled'], retries: 5 }],
    });
    expect(requestBodyJsonSchema(HOOK_NEW)).toStrictEqual({
      type: 'object',
      required: ['url'],
      properties: { url: { type: 'string' }, hint: { type: 'string' } },
      examples: [{ url: 'https://a.example' }],
    });
  });

  it('reads a JSON body as GraphQL variables: GraphQL names, enum names, absent and unknown fields left out', () => {
    expect(bodyVariables(HOOK_CHANGE, { target_url: 'https://b.example', events: ['pick.published'], apiKeyId: 'k', other: 1 })).toStrictEqual({
      targetUrl: 'https://b.example',
      events: ['PICK_PUBLISHED'],
    });
    expect(bodyVariables(HOOK_NEW, { hint: 'h' })).toStrictEqual({ secretHint: 'h' });
    expect(bodyVariables(HOOK_NEW, {})).toStrictEqual({});
  });

  it('refuses a requireOneOf the JSON body does not show', () => {
    const body = requestBody({ apiKeyId: Type.Optional(Type.String({ json: false })) }, { requireOneOf: ['apiKeyId'], example: {} });
    expect(() => requestBodyJsonSchema(body)).toThrow(/requireOneOf/);
  });
});

describe('JSON text, values absent while null, components', () => {
  const ITEM = resourceObject('Item', { name: Type.String() }, { jsonComponent: 'Item' });
  const RECEIPT = resource(
    'Receipt',
    {
      seq: Type.Integer({ minimum: 1 }),
      body: absentWhenNull(jsonText({ type: 'object' }, { description: 'Once revealed.' })),
      salt: absentWhenNull(Type.String({ pattern: '^[0-9a-f]+$' })),
      items: Type.Array(ITEM),
      cover: component<{ title: string }>('Cover', { type: 'object', required: ['title'] }),
      revealsAt: nullable(dateTime({ json: false })),
    },
    { example: { seq: 1, body: '{"a":1}', salt: 'ab', items: [{ name: 'x' }], cover: { title: 'T' }, revealsAt: null } },
  );
  const ref = (name: string) => ({ $ref: `#/components/schemas/${name}` });

  it('documents them: absent values not required and never null, the JSON value of the text, components inline or referred to', () => {
    expect(resourceJsonSchema(RECEIPT)).toStrictEqual({
      type: 'object',
      required: ['seq', 'items', 'cover'],
      properties: {
        seq: { type: 'integer', minimum: 1 },
        body: { type: 'object', description: 'Once revealed.' },
        salt: { type: 'string', pattern: '^[0-9a-f]+$' },
        items: { type: 'array', items: { type: 'object', required: ['name'], properties: { name: { type: 'string' } } } },
        cover: { type: 'object', required: ['title'] },
      },
      examples: [{ seq: 1, body: { a: 1 }, salt: 'ab', items: [{ name: 'x' }], cover: { title: 'T' } }],
    });
    expect(resourceJsonSchema(RECEIPT, ref)).toMatchObject({ properties: { items: { type: 'array', items: ref('Item') }, cover: ref('Cover') } });
    // A component is documented in full where it is the root.
    expect(resourceJsonSchema(ITEM, ref)).toStrictEqual({ type: 'object', required: ['name'], properties: { name: { type: 'string' } } });
  });

  it('leaves out what is absent while null, and shows the JSON text as its value, in declared order', () => {
    const revealed = { seq: 2, body: '{"b":[1,2],"a":null}', salt: 'cd', items: [], cover: { title: 'T' }, revealsAt: null };
    expect(JSON.stringify(resourceJson(RECEIPT, revealed))).toBe('{"seq":2,"body":{"b":[1,2],"a":null},"salt":"cd","items":[],"cover":{"title":"T"}}');
    expect(JSON.stringify(resourceJson(RECEIPT, { ...revealed, body: null, salt: null }))).toBe('{"seq":2,"items":[],"cover":{"title":"T"}}');
  });

  it('selects them in GraphQL, nullable, and reads json: false through nullable()', () => {
    expect(graphqlSelectionOfResource(RECEIPT)).toBe('seq body salt items { name } cover');
    expect(resourceFieldOf(RECEIPT.properties.body)).toMatchObject({ nullable: true, description: 'Once revealed.' });
    expect(declaredLeaf(RECEIPT.properties.body.anyOf[0])).toStrictEqual({ kind: 'jsonText' });
    expect(jsonNameOf('revealsAt', RECEIPT.properties.revealsAt)).toBeNull();
  });
});
