/**
 * Hostile GraphQL documents: depth, cost, aliases, directives and tokens over the limits of
 * src/graphql/limits.ts are refused with 400 query_too_complex on /graphql and /graphql/stream;
 * every legitimate document of the repository passes them; introspection follows its setting.
 */
import { DECLARED_FRAGMENTS, V1_PICK_FRAGMENT } from '../../adapters/common/v1-json.js';
import { readdirSync, readFileSync, statSync } from 'node:fs';
import {
  getIntrospectionQuery,
  getNamedType,
  getNullableType,
  isEnumType,
  isInputObjectType,
  isListType,
  isNonNullType,
  Kind,
  parse,
  typeFromAST,
  validate,
  type GraphQLInputType,
  type GraphQLSchema,
  type DocumentNode,
} from 'graphql';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { getSchema } from '../../src/graphql/schema.js';
import { assertTokenLimit, limitRules, QUERY_LIMITS, queryCost } from '../../src/graphql/limits.js';
import { ADMIN_TOKEN, createTestApp, type TestApp } from '../helpers/app.js';
import { CREATE_KEY, PICK_FIELDS } from '../helpers/fixtures.js';

const ROOT = new URL('../../', import.meta.url);

function graphqlFiles(dir: URL): URL[] {
  return readdirSync(dir).flatMap((name) => {
    const entry = new URL(name, dir);
    if (statSync(entry).isDirectory()) return graphqlFiles(new URL(`${name}/`, dir));
    return name.endsWith('.graphql') ? [entry] : [];
  });
}

/** Every document the repository ships or documents: adapters, README examples, GraphiQL's introspection. */
function repositoryDocuments(): [string, string][] {
  const files = graphqlFiles(new URL('adapters/', ROOT));
  // Shared fragments live next to the documents (adapters/common/*.graphql), or are made from the
  // declarations; each is appended when spread.
  const fragments = [
    ...files.filter((file) => !file.pathname.includes('/documents/')).map((file) => readFileSync(file, 'utf8')),
    ...DECLARED_FRAGMENTS,
  ];
  const documents: [string, string][] = [];
  for (const file of files.filter((f) => f.pathname.includes('/documents/'))) {
    let source = readFileSync(file, 'utf8');
    for (const text of fragments) {
      const name = /fragment (\w+)/.exec(text)![1]!;
      if (source.includes(`...${name}`)) source += `\n${text}`;
    }
    documents.push([file.pathname.slice(ROOT.pathname.length), source]);
  }
  const readme = readFileSync(new URL('README.md', ROOT), 'utf8');
  let index = 0;
  for (const match of readme.matchAll(/"query":"((?:[^"\\]|\\.)*)"/g)) documents.push([`README.md example ${++index}`, JSON.parse(`"${match[1]}"`) as string]);
  documents.push(['GraphiQL introspection', getIntrospectionQuery({ descriptions: true, specifiedByUrl: true, directiveIsRepeatable: true, schemaDescription: true, inputValueDeprecation: true })]);
  // The widest pages a client may ask for: 200 picks with every field, 100 deliveries with every attempt.
  const everyPickField = `${PICK_FIELDS} analysis { matchId analysis createdAt updatedAt }`;
  documents.push(['a full page of picks (nodes)', `{ picks(first: 200) { count pageInfo { endCursor hasNextPage } nodes { ${everyPickField} } } }`]);
  documents.push(['a full page of picks (edges)', `{ picks(first: 200) { count pageInfo { endCursor hasNextPage } edges { cursor node { ${everyPickField} } } } }`]);
  return documents;
}

/** A value of an input type: the largest page sizes (every Int variable huge), and any valid value otherwise. */
function sampleValue(type: GraphQLInputType): unknown {
  const inner = getNullableType(type) as GraphQLInputType;
  if (isListType(inner)) return [sampleValue(inner.ofType)];
  const named = getNamedType(inner);
  if (isEnumType(named)) return named.getValues()[0]!.name;
  if (isInputObjectType(named)) {
    return Object.fromEntries(Object.values(named.getFields()).filter((field) => isNonNullType(field.type)).map((field) => [field.name, sampleValue(field.type)]));
  }
  return { Int: 1_000_000, Float: 2, Boolean: true, DateTime: '2026-11-22T12:00:00Z' }[named.name] ?? 'x';
}

/** Variables that make every page as large as the schema lets it be (a size out of range is refused by the resolver). */
function widestVariables(schema: GraphQLSchema, document: DocumentNode): Record<string, unknown> {
  const variables: Record<string, unknown> = {};
  for (const definition of document.definitions) {
    if (definition.kind !== Kind.OPERATION_DEFINITION) continue;
    for (const variable of definition.variableDefinitions ?? []) {
      const type = typeFromAST(schema, variable.type as never) as GraphQLInputType | undefined;
      if (type && (isNonNullType(type) || getNamedType(type).name === 'Int')) variables[variable.variable.name.value] = sampleValue(type);
    }
  }
  return variables;
}

describe('the limits admit every legitimate document', () => {
  const documents = repositoryDocuments();

  it('finds the adapters documents and the README examples', () => {
    expect(documents.filter(([name]) => name.startsWith('adapters/')).length).toBeGreaterThanOrEqual(10);
    expect(documents.filter(([name]) => name.startsWith('README')).length).toBeGreaterThanOrEqual(5);
  });

  it.each(documents)('%s', (_name, source) => {
    expect(() => assertTokenLimit(source)).not.toThrow();
    const document = parse(source);
    const errors = validate(getSchema(), document, limitRules());
    expect(errors).toEqual([]);
    // Its cost with the widest pages its variables allow.
    const operations = document.definitions.filter((definition) => definition.kind === Kind.OPERATION_DEFINITION);
    for (const operation of operations) {
      const cost = queryCost(getSchema(), document, widestVariables(getSchema(), { ...document, definitions: [operation] }), operation.name?.value);
      expect(cost).not.toBeNull();
      expect(cost!).toBeLessThanOrEqual(QUERY_LIMITS.maxCost);
    }
  });
});

let t: TestApp;
let apiKey = '';
beforeAll(async () => {
  t = await createTestApp();
  apiKey = (await t.graphql<{ createApiKey: { key: string } }>(CREATE_KEY, { input: { tier: 'ENTERPRISE' } })).data!.createApiKey.key;
});
afterAll(async () => {
  await t?.close();
});

const EVERY_PICK_FIELD = `${PICK_FIELDS} analysis { matchId analysis createdAt updatedAt }`;
const PICK_SCALARS = PICK_FIELDS.replace(/bookmaker \{[^}]*\}/, '').split(/\s+/).filter(Boolean);
/** Valid apart from the count: one @include on each of `count` distinct fields. */
const withDirectives = (count: number) =>
  `{ picks(first: 1) { nodes { ${PICK_SCALARS.slice(0, count).map((field) => `${field} @include(if: true)`).join(' ')} } } }`;
const nestedType = (levels: number) => `{ __type(name: "Pick") { fields { type ${'{ ofType '.repeat(levels)}{ name }${' }'.repeat(levels)} } } }`;

const hostile: [string, string, RegExp][] = [
  ['too deep', nestedType(QUERY_LIMITS.maxDepth), new RegExp(`^Query depth limit of ${QUERY_LIMITS.maxDepth} exceeded, found \\d+\\.$`)],
  [
    'too costly (two full pages)',
    `{ a: picks(first: 200) { nodes { ${EVERY_PICK_FIELD} } } b: picks(first: 200) { nodes { ${EVERY_PICK_FIELD} } } }`,
    new RegExp(`^Query Cost limit of ${QUERY_LIMITS.maxCost} exceeded, found [\\d.]+\\.$`),
  ],
  [
    'too many aliases',
    `{ ${Array.from({ length: QUERY_LIMITS.maxAliases + 1 }, (_, i) => `p${i}: picks { count }`).join(' ')} }`,
    new RegExp(`^Aliases limit of ${QUERY_LIMITS.maxAliases} exceeded, found ${QUERY_LIMITS.maxAliases + 1}\\.$`),
  ],
  [
    'too many directives',
    withDirectives(QUERY_LIMITS.maxDirectives + 1),
    new RegExp(`^Directives limit of ${QUERY_LIMITS.maxDirectives} exceeded, found ${QUERY_LIMITS.maxDirectives + 1}\\.$`),
  ],
  ['too many tokens', `{ picks { ${'count '.repeat(QUERY_LIMITS.maxTokens)} } }`, new RegExp(`^Token limit of ${QUERY_LIMITS.maxTokens} exceeded\\.$`)],
];

describe('/graphql refuses documents over the limits', () => {
  it.each(hostile)('%s: 400 query_too_complex with the limit in the message', async (_name, query, message) => {
    for (const accept of ['application/json', 'application/graphql-response+json', undefined]) {
      for (const authorization of [`Bearer ${ADMIN_TOKEN}`, `Bearer ${apiKey}`, undefined]) {
        const headers: Record<string, string> = { 'content-type': 'application/json' };
        if (accept) headers.accept = accept;
        if (authorization) headers.authorization = authorization;
        const res = await t.app.inject({ method: 'POST', url: '/graphql', headers, payload: { query } });
        expect(res.statusCode, res.body).toBe(400);
        const body = res.json();
        expect(body.data).toBeUndefined();
        expect(body.errors).toHaveLength(1);
        expect(body.errors[0].message).toMatch(message);
        expect(body.errors[0].extensions).toEqual({ code: 'query_too_complex' });
      }
    }
  });

  it('refuses over GET as well', async () => {
    const res = await t.app.inject({ method: 'GET', url: `/graphql?query=${encodeURIComponent(hostile[2]![1])}`, headers: { authorization: `Bearer ${ADMIN_TOKEN}` } });
    expect(res.statusCode).toBe(400);
    expect(res.json().errors[0].extensions.code).toBe('query_too_complex');
  });

  it('does not count a refused document against the key', async () => {
    const before = await t.app.inject({ method: 'POST', url: '/graphql', headers: { authorization: `Bearer ${apiKey}` }, payload: { query: '{ picks(first: 1) { count } }' } });
    await t.app.inject({ method: 'POST', url: '/graphql', headers: { authorization: `Bearer ${apiKey}` }, payload: { query: hostile[0]![1] } });
    const after = await t.app.inject({ method: 'POST', url: '/graphql', headers: { authorization: `Bearer ${apiKey}` }, payload: { query: '{ picks(first: 1) { count } }' } });
    expect(Number(before.headers['x-ratelimit-remaining']) - Number(after.headers['x-ratelimit-remaining'])).toBe(1);
  });

  it('bounds nested introspection through graphql-js (MaxIntrospectionDepthRule)', async () => {
    const deep = '{ __schema { types { fields { type { fields { type { fields { type { fields { name } } } } } } } } } }';
    const res = await t.graphql(deep);
    expect(res.data).toBeNull();
    expect(res.errors?.[0]?.message).toMatch(/Maximum introspection depth exceeded/);
  });

  it('admits documents at the limits', async () => {
    const aliases = `{ ${Array.from({ length: QUERY_LIMITS.maxAliases }, (_, i) => `p${i}: picks(first: 1) { count }`).join(' ')} }`;
    const res = await t.graphql(aliases);
    expect(res.errors).toBeUndefined();
    expect((await t.graphql(withDirectives(QUERY_LIMITS.maxDirectives))).errors).toBeUndefined();
    expect((await t.graphql(nestedType(QUERY_LIMITS.maxDepth - 4))).errors).toBeUndefined();
  });
});

/** The REST list's field set (the V1Pick fragment the adapters spread) as GraphQL asks it. */
const V1_PICK = V1_PICK_FRAGMENT;
const pageOfPicks = (alias: string) => `${alias}: picks(first: $n) { count pageInfo { endCursor } nodes { ...V1Pick } }`;
/** 15 aliases (the alias limit) of a page whose size is a variable: invisible to a cost model of literals. */
const FIFTEEN_PAGES = `query($n: Int) { ${Array.from({ length: 15 }, (_, i) => pageOfPicks(`p${i}`)).join(' ')} }\n${V1_PICK}`;
const ONE_PAGE = `query($n: Int) { ${pageOfPicks('page')} }\n${V1_PICK}`;

describe('the cost sees variables', () => {
  const post = (url: string, payload: object, authorization?: string) =>
    t.app.inject({
      method: 'POST',
      url,
      headers: { 'content-type': 'application/json', accept: url.endsWith('/stream') ? 'text/event-stream' : 'application/json', ...(authorization ? { authorization } : {}) },
      payload,
    });

  it.each(['/graphql', '/graphql/stream'])('%s: 15 aliased pages of picks(first: $n) with n = 200 are refused with 400 query_too_complex', async (url) => {
    for (const authorization of [`Bearer ${ADMIN_TOKEN}`, `Bearer ${apiKey}`, undefined]) {
      const res = await post(url, { query: FIFTEEN_PAGES, variables: { n: 200 } }, authorization);
      expect(res.statusCode, res.body).toBe(400);
      const body = res.json();
      expect(body.data).toBeUndefined();
      expect(body.errors).toHaveLength(1);
      expect(body.errors[0].message).toMatch(new RegExp(`^Query Cost limit of ${QUERY_LIMITS.maxCost} exceeded, found \\d+\\.$`));
      expect(body.errors[0].extensions).toEqual({ code: 'query_too_complex' });
    }
  });

  it('counts a page size left out as the default page (50)', async () => {
    const schema = getSchema();
    const widest = queryCost(schema, parse(ONE_PAGE), { n: 200 });
    expect(queryCost(schema, parse(ONE_PAGE), {})).toBe(queryCost(schema, parse(ONE_PAGE), { n: 50 }));
    expect(queryCost(schema, parse(ONE_PAGE), { n: 1 })! * 200).toBeGreaterThanOrEqual(widest!);
  });

  it('admits one full page of 200 with the REST field set, on both surfaces', async () => {
    const res = await post('/graphql', { query: ONE_PAGE, variables: { n: 200 } }, `Bearer ${apiKey}`);
    expect(res.statusCode, res.body).toBe(200);
    expect(res.json().errors).toBeUndefined();
    const sse = await post('/graphql/stream', { query: ONE_PAGE, variables: { n: 200 } }, `Bearer ${apiKey}`);
    expect(sse.statusCode, sse.body).toBe(200);
    expect(sse.body).toContain('"count"');
  });

  it('counts nothing against the key for a refused document (checked before authentication)', async () => {
    const remaining = async () =>
      Number((await post('/graphql', { query: '{ picks(first: 1) { count } }' }, `Bearer ${apiKey}`)).headers['x-ratelimit-remaining']);
    const before = await remaining();
    expect((await post('/graphql', { query: FIFTEEN_PAGES, variables: { n: 200 } }, `Bearer ${apiKey}`)).statusCode).toBe(400);
    expect(before - (await remaining())).toBe(1);
  });

  it('leaves variables that do not fit their type to execution (invalid_request), not to the cost', async () => {
    const res = await post('/graphql', { query: FIFTEEN_PAGES, variables: { n: 'many' } }, `Bearer ${ADMIN_TOKEN}`);
    expect(res.json().errors[0].extensions.code).not.toBe('query_too_complex');
  });
});

describe('/graphql/stream refuses them too', () => {
  it.each(hostile)('%s: 400 query_too_complex', async (_name, query, message) => {
    const res = await t.app.inject({
      method: 'POST',
      url: '/graphql/stream',
      headers: { 'content-type': 'application/json', accept: 'text/event-stream', authorization: `Bearer ${ADMIN_TOKEN}` },
      payload: { query },
    });
    expect(res.statusCode, res.body).toBe(400);
    const error = res.json().errors[0];
    expect(error.message).toMatch(message);
    expect(error.extensions).toEqual({ code: 'query_too_complex' });
  });

  it('refuses them before authentication: nothing is counted against the key', async () => {
    const remaining = async () =>
      Number((await t.app.inject({ method: 'POST', url: '/graphql', headers: { authorization: `Bearer ${apiKey}` }, payload: { query: '{ picks(first: 1) { count } }' } })).headers['x-ratelimit-remaining']);
    const before = await remaining();
    for (const [, query] of hostile) {
      const res = await t.app.inject({
        method: 'POST',
        url: '/graphql/stream',
        headers: { 'content-type': 'application/json', accept: 'text/event-stream', authorization: `Bearer ${apiKey}` },
        payload: { query },
      });
      expect(res.statusCode).toBe(400);
    }
    expect(before - (await remaining())).toBe(1);
  });
});

describe('introspection', () => {
  const INTROSPECT = '{ __schema { queryType { name } } }';
  const TYPE = '{ __type(name: "Pick") { name } }';

  it('is served outside production by default', async () => {
    expect(t.config.graphqlIntrospection).toBe(true);
    const res = await t.graphql<{ __schema: { queryType: { name: string } } }>(INTROSPECT);
    expect(res.data?.__schema.queryType.name).toBe('Query');
  });

  describe('when disabled', () => {
    let off: TestApp;
    beforeAll(async () => {
      off = await createTestApp({ env: { GRAPHQL_INTROSPECTION: 'false' } });
    });
    afterAll(async () => {
      await off?.close();
    });

    it.each([INTROSPECT, TYPE])('refuses %s on /graphql and /graphql/stream with a coded error', async (query) => {
      const res = await off.graphql(query);
      expect(res.data).toBeNull();
      expect(res.errors?.[0]?.message).toMatch(/introspection has been disabled/);
      expect(res.errors?.[0]?.extensions?.code).toBe('GRAPHQL_VALIDATION_FAILED');
      // graphql-sse streams validation errors as a `next` event, then completes.
      const sse = await off.app.inject({
        method: 'POST',
        url: '/graphql/stream',
        headers: { 'content-type': 'application/json', accept: 'text/event-stream', authorization: `Bearer ${ADMIN_TOKEN}` },
        payload: { query },
      });
      const data = /^data: (.*)$/m.exec(sse.body)?.[1];
      expect(JSON.parse(data ?? '{}').errors?.[0], sse.body).toMatchObject({
        message: expect.stringMatching(/introspection has been disabled/),
        extensions: { code: 'GRAPHQL_VALIDATION_FAILED' },
      });
    });

    it('still answers __typename and ordinary queries', async () => {
      const res = await off.graphql<{ __typename: string; picks: { count: number } }>('{ __typename picks(first: 1) { count } }');
      expect(res.errors).toBeUndefined();
      expect(res.data?.__typename).toBe('Query');
    });

    it('hides "Did you mean" suggestions, which would leak the schema', async () => {
      const res = await off.graphql('{ picks { nodez { id } } }');
      expect(res.errors?.[0]?.message).not.toMatch(/Did you mean/);
      const sse = await off.app.inject({
        method: 'POST',
        url: '/graphql/stream',
        headers: { 'content-type': 'application/json', accept: 'text/event-stream', authorization: `Bearer ${ADMIN_TOKEN}` },
        payload: { query: '{ picks { nodez { id } } }' },
      });
      expect(sse.body).toContain('Cannot query field');
      expect(sse.body).not.toMatch(/Did you mean/);
      // Suggestions stay where introspection is on.
      expect((await t.graphql('{ picks { nodez { id } } }')).errors?.[0]?.message).toMatch(/Did you mean "nodes"/);
    });

    it('turns GraphiQL off with it', async () => {
      const res = await off.app.inject({ method: 'GET', url: '/graphql', headers: { accept: 'text/html' } });
      expect(res.headers['content-type'] ?? '').not.toContain('text/html');
      const dev = await t.app.inject({ method: 'GET', url: '/graphql', headers: { accept: 'text/html' } });
      expect(dev.headers['content-type']).toContain('text/html');
    });
  });
});
