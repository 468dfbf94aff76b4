/**
 * The GraphQL argument guard on its own (src/graphql/argument-guard.ts): what /graphql/stream's
 * graphql-sse hook calls with the raw request parameters, before parsing and validation.
 */
import { GraphQLError, isInputObjectType, parse } from 'graphql';
import { describe, expect, it } from 'vitest';
import { getSchema } from '../../src/graphql/schema.js';
import { assertArgumentInputs, MULTILINE_TEXTS, argumentInputsError } from '../../src/graphql/argument-guard.js';

const schema = getSchema();

function refusal(params: Parameters<typeof assertArgumentInputs>[1]): GraphQLError | null {
  try {
    assertArgumentInputs(schema, params);
    return null;
  } catch (error) {
    if (error instanceof GraphQLError) return error;
    throw error;
  }
}

describe('assertArgumentInputs', () => {
  it.each([
    ['a variable', { query: 'query($l: String) { picks(league: $l) { count } }', variables: { l: 'a\u0000' } }, 'league'],
    ['a literal', { query: '{ picks(league: "a\\u0000") { count } }' }, 'league'],
    ['a nested input field', { query: 'mutation($i: PublishPickInput!) { publishPick(input: $i) { id } }', variables: { i: { bookmaker: { name: 'B\uD800', slug: 'b' } } } }, 'bookmaker.name'],
    ['an input object literal holding a variable', { query: 'mutation($n: String!) { publishPick(input: {bookmaker: {name: $n, slug: "b"}}) { id } }', variables: { n: 'x\ny' } }, 'bookmaker.name'],
    ['a subscription argument', { query: 'subscription($s: String) { pickPublished(afterSequence: $s) { sequence } }', variables: { s: '\u0085' } }, 'afterSequence'],
    ['a list item', { query: 'mutation($e: [WebhookEventType!]!) { createWebhookSubscription(input: {url: "https://a.test", events: $e}) { secret } }', variables: { e: ['PICK_PUBLISHED', '\u0000'] } }, 'events'],
    ['the operation chosen by name', { query: 'query A { picks { count } } query B($l: String) { picks(league: $l) { count } }', variables: { l: '\u0000' }, operationName: 'B' }, 'league'],
    ['a fragment', { query: 'query($l: String) { ...F } fragment F on Query { picks(league: $l) { count } }', variables: { l: '\t' } }, 'league'],
    ['a variable default', { query: 'query($l: String = "a\\u0000") { picks(league: $l) { count } }' }, 'league'],
    ['an argument the schema does not know', { query: 'query($x: String) { picks(nope: $x) { count } }', variables: { x: '\u0000' } }, 'nope'],
  ])('%s: 400 invalid_parameter naming the field', (_name, params, parameter) => {
    const error = refusal(params);
    expect(error?.extensions).toMatchObject({ code: 'invalid_parameter', parameter, http: { status: 400 } });
  });

  it.each([
    ['a long text with newlines and tabs', { query: 'mutation($i: UpsertMatchAnalysisInput!) { upsertMatchAnalysis(input: $i) { matchId } }', variables: { i: { matchId: 'x', analysis: 'a\n\tb\r\n' } } }],
    ['a line with any visible Unicode', { query: 'query($l: String) { picks(league: $l) { count } }', variables: { l: 'Ligue 1 – Été 🏆 \u202E' } }],
    ['a document that does not parse (the caller reports it)', { query: '{ picks(league: "\u0000' }],
    ['strings of variables not used by the chosen operation', { query: 'query A { picks { count } } query B($l: String) { picks(league: $l) { count } }', variables: { l: '\u0000' }, operationName: 'A' }],
    ['non-string values', { query: 'query($n: Int) { picks(first: $n) { count } }', variables: { n: 5 } }],
    ['variables nested deeper than any input type', { query: 'query($l: String) { picks(league: $l) { count } }', variables: { l: JSON.parse(`${'['.repeat(5000)}"\\u0000"${']'.repeat(5000)}`) } }],
  ])('%s: passes', (_name, params) => {
    expect(refusal(params)).toBeNull();
  });

  it('walks a parsed document too, and caches its plan per document', () => {
    const document = parse('query($l: String) { picks(league: $l) { count } }');
    expect(argumentInputsError(schema, document, { l: 'ok' })).toBeNull();
    expect(argumentInputsError(schema, document, { l: 'a\u0000' })?.extensions).toMatchObject({ parameter: 'league' });
  });

  it('every long-text coordinate names a real input field (a rename must not make the analysis one line)', () => {
    for (const coordinate of MULTILINE_TEXTS) {
      const [typeName, fieldName] = coordinate.split('.');
      const type = schema.getType(typeName!);
      expect(type && isInputObjectType(type) ? Object.keys(type.getFields()) : [], coordinate).toContain(fieldName);
    }
  });
});
