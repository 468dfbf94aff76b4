/**
 * Hostile variables on every public GraphQL operation and on the admin mutations' inputs,
 * through POST /graphql: whatever the values, the answer is never a 500 nor internal_error,
 * and every error carries a documented code.
 */
import fc from 'fast-check';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestApp, ADMIN_TOKEN, type TestApp } from '../helpers/app.js';
import { CREATE_KEY, pickInput, PICK_FIELDS, PUBLISH, SETTLE, UPSERT_ANALYSIS } from '../helpers/fixtures.js';

let t: TestApp;
let key = '';
let pickId = '';
let cursor = '';

beforeAll(async () => {
  t = await createTestApp({ env: { TIER_LIMITS: '{"enterprise":{"hourly":1000000,"monthly":1000000}}' } });
  key = (await t.graphql<{ createApiKey: { key: string } }>(CREATE_KEY, { input: { tier: 'ENTERPRISE' } })).data!.createApiKey.key;
  pickId = (await t.graphql<{ publishPick: { id: string } }>(PUBLISH, { input: pickInput() })).data!.publishPick.id;
  await t.graphql(PUBLISH, { input: pickInput({ kickoffAt: '2026-12-02T15:00:00Z' }) });
  const page = await t.graphql<{ picks: { pageInfo: { endCursor: string } } }>('{ picks(first: 1) { pageInfo { endCursor } } }');
  cursor = page.data!.picks.pageInfo.endCursor;
});
afterAll(async () => {
  await t?.close();
});

/** Codes a caller may see for bad input (docs/DECISIONS.md); GRAPHQL_* are yoga's own for documents that do not validate. */
const DOCUMENTED_CODES = new Set([
  'invalid_parameter',
  'invalid_cursor',
  'invalid_request',
  'not_found',
  'invalid_transition',
  'query_too_complex',
  'BAD_REQUEST',
  'GRAPHQL_PARSE_FAILED',
  'GRAPHQL_VALIDATION_FAILED',
]);

/** Any JSON value, weighted towards the edges: odd strings and numbers, wrong types, nesting. */
const anyValue: fc.Arbitrary<unknown> = fc.oneof(
  { weight: 3, arbitrary: fc.jsonValue({ maxDepth: 2 }) },
  fc.string({ unit: 'grapheme', maxLength: 40 }),
  fc.integer(),
  fc.double(),
  fc.constantFrom(
    null,
    '',
    ' ',
    '-0',
    '1e3',
    '0x10',
    'NaN',
    'null',
    '2026-02-30T10:00:00Z',
    '2026-12-01T15:00:00',
    '9999-12-31T23:59:59Z',
    '0000-01-01T00:00:00Z',
    '\u0000',
    'soccer',
    'SOCCER',
    'WON',
    'ENTERPRISE',
    '%00',
    'a'.repeat(10_000),
    2 ** 31,
    -(2 ** 31) - 1,
    Number.MAX_SAFE_INTEGER,
    1e308,
    -1,
    0,
    1.5,
    true,
    [],
    {},
    [null],
    { __proto__: { admin: true } },
  ),
);

/** Either an arbitrary value or, often, a plausible one, so that the services' own checks are reached too. */
const valueOr = (...plausible: unknown[]) => fc.oneof(anyValue, fc.constantFrom(...plausible));

/** A variables object: some of the named variables, each with an arbitrary value. */
function variablesOf(shape: Record<string, fc.Arbitrary<unknown>>): fc.Arbitrary<Record<string, unknown>> {
  return fc.record(shape, { requiredKeys: [] });
}

/** An input object: a valid base with some fields replaced, removed or added. */
function inputOf(base: () => Record<string, unknown>, fields: string[]): fc.Arbitrary<unknown> {
  const edits = fc.dictionary(fc.oneof(fc.constantFrom(...fields), fc.string({ maxLength: 12 })), fc.oneof(anyValue, fc.constant(undefined)), { maxKeys: 4 });
  return fc.oneof({ weight: 4, arbitrary: edits.map((changes) => ({ ...base(), ...changes })) }, anyValue);
}

async function expectDocumentedAnswer(query: string, variables: unknown, authorization: string): Promise<void> {
  const res = await t.app.inject({
    method: 'POST',
    url: '/graphql',
    headers: { 'content-type': 'application/json', authorization },
    payload: JSON.stringify({ query, variables }),
  });
  expect(res.statusCode, res.body).not.toBe(500);
  expect([200, 400]).toContain(res.statusCode);
  const body = res.json() as { data?: unknown; errors?: { message: string; extensions?: { code?: unknown } }[]; error?: string };
  // Refused before GraphQL (e.g. a "__proto__" key in the body): the service's JSON error.
  if (body.data === undefined && body.errors === undefined) expect(body.error, res.body).toBe('invalid_request');
  for (const error of body.errors ?? []) {
    expect(error.extensions?.code, res.body).not.toBe('internal_error');
    expect(DOCUMENTED_CODES.has(String(error.extensions?.code)), `${String(error.extensions?.code)}: ${res.body}`).toBe(true);
    expect(error.message).not.toMatch(/\bat .*\.(ts|js):\d+|SELECT |INSERT |UPDATE /);
  }
}

const RUNS = { numRuns: 75 };

describe('public operations with hostile variables', () => {
  const cases: [string, string, Record<string, fc.Arbitrary<unknown>>][] = [
    [
      'picks(first, after, sport, league, since)',
      `query($first: Int, $after: String, $sport: String, $league: String, $since: DateTime) {
        picks(first: $first, after: $after, sport: $sport, league: $league, since: $since) { count pageInfo { endCursor hasNextPage } nodes { ${PICK_FIELDS} } }
      }`,
      {
        first: valueOr(1, 200, 0, 201),
        after: valueOr('cursor'),
        sport: valueOr('soccer', 'tennis'),
        league: valueOr('Premier League'),
        since: valueOr('2026-01-01T00:00:00Z', '2026-12-01T15:00:00+02:00'),
      },
    ],
    ['trackRecord(daysBack, sport)', `query($daysBack: Int, $sport: String) { trackRecord(daysBack: $daysBack, sport: $sport) { overall { roiPct winRate totalSettled } perSport { sport } series { date cumulativePnlPct } } }`, { daysBack: valueOr(1, 30, 365, 366), sport: valueOr('soccer') }],
    ['matchAnalysis(matchId)', `query($matchId: ID!) { matchAnalysis(matchId: $matchId) { matchId analysis } }`, { matchId: valueOr('pick') }],
    ['pick(id)', `query($id: ID!) { pick(id: $id) { ${PICK_FIELDS} } }`, { id: valueOr('pick') }],
  ];

  it.each(cases)('%s', async (_name, query, shape) => {
    await fc.assert(
      fc.asyncProperty(variablesOf(shape), fc.constantFrom(`Bearer ${key}`, `Bearer ${ADMIN_TOKEN}`), async (variables, authorization) => {
        // Placeholders for the real ids and cursor, so that the success paths are exercised as well.
        const resolved = Object.fromEntries(Object.entries(variables).map(([name, value]) => [name, value === 'pick' ? pickId : value === 'cursor' ? cursor : value]));
        await expectDocumentedAnswer(query, resolved, authorization);
      }),
      RUNS,
    );
  });

  it('variables that are not an object', async () => {
    await fc.assert(
      fc.asyncProperty(anyValue, async (variables) => {
        await expectDocumentedAnswer('query($id: ID!) { pick(id: $id) { id } }', variables, `Bearer ${key}`);
      }),
      RUNS,
    );
  });
});

describe('admin mutations with hostile inputs', () => {
  const PUBLISH_FIELDS = ['sport', 'league', 'homeTeam', 'awayTeam', 'kickoffAt', 'market', 'selection', 'bookmaker', 'odds', 'referenceFairOdds', 'confidence', 'pick', 'status', 'publishedAt'];
  const admin = `Bearer ${ADMIN_TOKEN}`;

  it('publishPick(input)', async () => {
    const bookmaker = fc.oneof(anyValue, fc.record({ name: valueOr('Bet365'), slug: valueOr('bet365'), taxRate: valueOr(0, 0.053, 0.99, 1) }, { requiredKeys: [] }));
    const input = fc.oneof(inputOf(() => pickInput(), PUBLISH_FIELDS), bookmaker.map((b) => ({ ...pickInput(), bookmaker: b })));
    await fc.assert(
      fc.asyncProperty(input, async (value) => {
        await expectDocumentedAnswer(PUBLISH, { input: value }, admin);
      }),
      RUNS,
    );
  });

  it('settlePick(input)', async () => {
    const input = inputOf(() => ({ id: pickId, result: 'WON', closingOdds: 2.1 }), ['id', 'result', 'closingOdds', 'settledAt']);
    await fc.assert(
      fc.asyncProperty(input, async (value) => {
        await expectDocumentedAnswer(SETTLE, { input: value }, admin);
      }),
      RUNS,
    );
  });

  it('createApiKey(input)', async () => {
    const input = inputOf(() => ({ tier: 'STARTER', label: 'fuzz' }), ['tier', 'label']);
    await fc.assert(
      fc.asyncProperty(input, async (value) => {
        await expectDocumentedAnswer(CREATE_KEY, { input: value }, admin);
      }),
      RUNS,
    );
  });

  it('upsertMatchAnalysis(input)', async () => {
    const input = inputOf(() => ({ matchId: pickId, analysis: 'Fuzzed.' }), ['matchId', 'analysis']);
    await fc.assert(
      fc.asyncProperty(input, async (value) => {
        await expectDocumentedAnswer(UPSERT_ANALYSIS, { input: value }, admin);
      }),
      RUNS,
    );
  });
});
