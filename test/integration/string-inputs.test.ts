/**
 * String inputs (docs/DECISIONS.md "String inputs"): a NUL, a lone surrogate or another
 * control character in any string is 400 `invalid_parameter` naming the field, before any
 * query; newline and tab only in long texts; invisible and text-direction characters not in
 * team names, labels and emails. Before the rules a NUL reached the database, which answered
 * a protocol error reported as an outage (503 service_unavailable, "retry").
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { InvalidParameterError } from '../../src/domain/errors.js';
import type { PublishPickInput } from '../../src/services/picks.js';
import { createTestApp, ADMIN_TOKEN, type TestApp } from '../helpers/app.js';
import { CREATE_ACCOUNT } from '../helpers/dashboard.js';
import { CREATE_KEY, pickInput, PUBLISH, UPSERT_ANALYSIS } from '../helpers/fixtures.js';

let t: TestApp;
let enterpriseKey = '';
let starterKey = '';
let pickId = '';
let kickoffDay = 1;

const LIMITS = JSON.stringify({ starter: { hourly: 100000, monthly: 100000 }, growth: { hourly: 100000, monthly: 100000 }, enterprise: { hourly: 100000, monthly: 100000 } });

async function createKey(tier: string): Promise<string> {
  return (await t.graphql<{ createApiKey: { key: string } }>(CREATE_KEY, { input: { tier } })).data!.createApiKey.key;
}

beforeAll(async () => {
  t = await createTestApp({ env: { WEBHOOK_HOST_OVERRIDES: 'hooks.test=127.0.0.1', TIER_LIMITS: LIMITS } });
  await t.runtime.dispatcher.stop();
  enterpriseKey = await createKey('ENTERPRISE');
  starterKey = await createKey('STARTER');
  pickId = (await t.graphql<{ publishPick: { id: string } }>(PUBLISH, { input: pickInput() })).data!.publishPick.id;
});
afterAll(async () => {
  await t?.close();
});

/** POST /graphql as the admin, keeping the HTTP status. */
async function graphql(query: string, variables?: Record<string, unknown>) {
  const res = await t.app.inject({
    method: 'POST',
    url: '/graphql',
    headers: { 'content-type': 'application/json', authorization: `Bearer ${ADMIN_TOKEN}` },
    payload: { query, variables },
  });
  return { status: res.statusCode, body: res.json() as { data?: Record<string, unknown> | null; errors?: { message: string; extensions: Record<string, unknown> }[] } };
}

function expectRefusedGraphQL(result: Awaited<ReturnType<typeof graphql>>, parameter: string): void {
  expect(result.status, JSON.stringify(result.body)).toBeLessThan(500);
  expect(result.body.errors?.[0]?.extensions, JSON.stringify(result.body)).toMatchObject({ code: 'invalid_parameter', parameter });
}

function expectRefusedRest(res: { statusCode: number; body: string; json(): unknown }, parameter: string): void {
  expect(res.statusCode, res.body).toBe(400);
  expect(res.json()).toMatchObject({ error: 'invalid_parameter', parameter });
}

/** Every rule refuses these, in every field. */
const ALWAYS_REFUSED: [string, string][] = [
  ['NUL', '\u0000'],
  ['SOH', '\u0001'],
  ['ESC', '\u001B'],
  ['DEL', '\u007F'],
  ['C1 NEL', '\u0085'],
  ['C1 CSI', '\u009B'],
  ['lone high surrogate', '\uD800'],
  ['lone low surrogate', '\uDC00'],
];
/** Refused in one-line fields, allowed in long texts. */
const LINE_BREAKS: [string, string][] = [
  ['line feed', '\n'],
  ['carriage return', '\r'],
  ['tab', '\t'],
  ['line separator', '\u2028'],
];
/** Refused in names (teams, league, bookmaker name, key labels, emails), allowed elsewhere. */
const INVISIBLES: [string, string][] = [
  ['zero-width space', '\u200B'],
  ['zero-width joiner', '\u200D'],
  ['right-to-left mark', '\u200F'],
  ['right-to-left override', '\u202E'],
  ['first strong isolate', '\u2068'],
  ['word joiner', '\u2060'],
  ['BOM', '\uFEFF'],
];

describe('REST query and path parameters', () => {
  // Percent-encoded as a client would send them; %ED%A0%80 (a surrogate in UTF-8) decodes to U+FFFD, so none is here.
  const BAD = ['%00', '%01', '%1B', '%7F', '%C2%80', '%C2%9F', '%0A', '%0D', '%09', '%E2%80%A8'];
  const cases = ['league', 'sport', 'since', 'cursor', 'limit'].flatMap((name) => BAD.map((value) => [name, value] as const));

  it.each(cases)('GET /api/v1/picks?%s=%s: 400 invalid_parameter naming it', async (name, value) => {
    const res = await t.app.inject({ method: 'GET', url: `/api/v1/picks?${name}=a${value}b`, headers: { authorization: `Bearer ${enterpriseKey}` } });
    expectRefusedRest(res, name);
  });

  it.each(['sport', 'limit'].flatMap((name) => BAD.map((value) => [name, value] as const)))(
    'GET /api/public/picks/today?%s=%s: 400 invalid_parameter naming it',
    async (name, value) => {
      const res = await t.app.inject({ method: 'GET', url: `/api/public/picks/today?${name}=${value}` });
      expectRefusedRest(res, name);
    },
  );

  it.each([
    ['/api/v1/match-analyses/a%00b', 'matchId'],
    ['/api/v1/match-analyses/%0A', 'matchId'],
    ['/api/v1/webhooks/a%00b', 'id'],
  ])('GET %s: 400 invalid_parameter naming the path parameter', async (url, parameter) => {
    const res = await t.app.inject({ method: 'GET', url, headers: { authorization: `Bearer ${enterpriseKey}` } });
    expectRefusedRest(res, parameter);
  });

  it('a league filter with visible Unicode, or with a text-direction character, is just a filter', async () => {
    for (const league of ['Premier League', 'Ligue 1 – Été', 'a\u202Eb']) {
      const res = await t.app.inject({ method: 'GET', url: `/api/v1/picks?league=${encodeURIComponent(league)}`, headers: { authorization: `Bearer ${enterpriseKey}` } });
      expect(res.statusCode, res.body).toBe(200);
    }
  });

  it('the check order holds: a Starter key asking the track record with a NUL gets 403, not 400', async () => {
    const res = await t.app.inject({ method: 'GET', url: '/api/v1/track-record?sport=%00', headers: { authorization: `Bearer ${starterKey}` } });
    expect(res.statusCode).toBe(403);
    expect(res.json().error).toBe('tier_upgrade_required');
  });
});

describe('REST JSON bodies', () => {
  it.each([...ALWAYS_REFUSED, ...LINE_BREAKS])('POST /api/v1/webhooks with %s in url: 400 invalid_parameter url', async (_name, character) => {
    const res = await t.app.inject({
      method: 'POST',
      url: '/api/v1/webhooks',
      headers: { authorization: `Bearer ${enterpriseKey}`, 'content-type': 'application/json' },
      payload: JSON.stringify({ url: `https://hooks.test/a${character}b`, events: ['pick.published'] }),
    });
    expectRefusedRest(res, 'url');
  });

  it('a Starter key sending a NUL in a webhook url gets 403 first (check order)', async () => {
    const res = await t.app.inject({
      method: 'POST',
      url: '/api/v1/webhooks',
      headers: { authorization: `Bearer ${starterKey}`, 'content-type': 'application/json' },
      payload: JSON.stringify({ url: 'https://hooks.test/\u0000', events: ['pick.published'] }),
    });
    expect(res.statusCode, res.body).toBe(403);
  });
});

describe('GraphQL variables and literals', () => {
  const operations: [string, string, string][] = [
    ['picks(league:)', 'query($v: String) { picks(league: $v) { count } }', 'league'],
    ['picks(after:)', 'query($v: String) { picks(after: $v) { count } }', 'after'],
    ['picks(since:)', 'query($v: DateTime) { picks(since: $v) { count } }', 'since'],
    ['picks(sport:)', 'query($v: String) { picks(sport: $v) { count } }', 'sport'],
    ['pick(id:)', 'query($v: ID!) { pick(id: $v) { id } }', 'id'],
    ['matchAnalysis(matchId:)', 'query($v: ID!) { matchAnalysis(matchId: $v) { matchId } }', 'matchId'],
    ['trackRecord(sport:)', 'query($v: String) { trackRecord(sport: $v) { overall { totalSettled } } }', 'sport'],
    ['todayPicks(sport:)', 'query($v: String) { todayPicks(sport: $v) { id } }', 'sport'],
    ['settlePick(input.settledAt)', 'mutation($v: DateTime) { settlePick(input: {id: "00000000-0000-0000-0000-000000000000", result: WON, closingOdds: 2, settledAt: $v}) { id } }', 'settledAt'],
  ];
  const cases = operations.flatMap(([name, query, parameter]) => [...ALWAYS_REFUSED, ...LINE_BREAKS].map(([what, character]) => [name, what, query, parameter, character] as const));

  it.each(cases)('%s with %s: invalid_parameter naming it', async (_name, _what, query, parameter, character) => {
    const result = await graphql(query, { v: `a${character}b` });
    expectRefusedGraphQL(result, parameter);
    expect(result.status).toBe(400);
  });

  it('a string literal in the document is checked like a variable', async () => {
    expectRefusedGraphQL(await graphql('{ picks(league: "a\\u0000b") { count } }'), 'league');
    expectRefusedGraphQL(await graphql('{ picks(league: "a\\u0085b") { count } }'), 'league');
  });

  it('a refused subscription over POST /graphql never starts', async () => {
    const res = await t.app.inject({
      method: 'POST',
      url: '/graphql',
      headers: { 'content-type': 'application/json', accept: 'application/json', authorization: `Bearer ${ADMIN_TOKEN}` },
      payload: { query: 'subscription($v: String) { pickPublished(afterSequence: $v) { sequence } }', variables: { v: '1\u0000' } },
    });
    expect(res.statusCode, res.body).toBe(400);
    expect(res.json().errors[0].extensions).toMatchObject({ code: 'invalid_parameter', parameter: 'afterSequence' });
  });
});

describe('GraphQL subscriptions over /graphql/stream (graphql-sse)', () => {
  const subscribe = (variables: Record<string, unknown>, authorization: string | null) =>
    t.app.inject({
      method: 'POST',
      url: '/graphql/stream',
      headers: { 'content-type': 'application/json', accept: 'text/event-stream', ...(authorization ? { authorization } : {}) },
      payload: { query: 'subscription($v: String) { pickPublished(afterSequence: $v) { sequence } }', variables },
    });

  it('a NUL or a control character in a variable is 400 invalid_parameter naming the argument, before any stream byte', async () => {
    for (const value of ['1\u0000', '1\u0085', '\ud800']) {
      const res = await subscribe({ v: value }, `Bearer ${ADMIN_TOKEN}`);
      expect(res.statusCode, JSON.stringify(value)).toBe(400);
      expect(res.headers['content-type']).toContain('application/json');
      expect(res.json().errors[0].extensions).toMatchObject({ code: 'invalid_parameter', parameter: 'afterSequence' });
    }
  });

  it('the check order holds: a bad key with a NUL gets 401 first', async () => {
    const res = await subscribe({ v: '1\u0000' }, 'Bearer service_nope');
    expect(res.statusCode).toBe(401);
    expect(res.json().errors[0].extensions.code).toBe('invalid_api_key');
  });
});

describe('publishPick', () => {
  const fields: [string, (value: string) => Record<string, unknown>][] = [
    ['league', (v) => ({ league: `Premier${v}League` })],
    ['homeTeam', (v) => ({ homeTeam: `Arse${v}nal`, selection: 'Draw' })],
    ['awayTeam', (v) => ({ awayTeam: `Chel${v}sea` })],
    ['selection', (v) => ({ selection: `Arse${v}nal` })],
    ['bookmaker.name', (v) => ({ bookmaker: { name: `Bet${v}365`, slug: 'bet365' } })],
    ['bookmaker.slug', (v) => ({ bookmaker: { name: 'Bet365', slug: `bet${v}365` } })],
    ['pick', (v) => ({ pick: `Arsenal${v}to win` })],
    ['sport', (v) => ({ sport: `soccer${v}` })],
    ['market', (v) => ({ market: `h2h${v}` })],
    ['kickoffAt', (v) => ({ kickoffAt: `2026-12-01T15:00:00Z${v}` })],
  ];
  const cases = fields.flatMap(([field, input]) => [...ALWAYS_REFUSED, ...LINE_BREAKS].map(([what, character]) => [field, what, input, character] as const));

  it.each(cases)('input.%s with %s: invalid_parameter naming it, nothing stored', async (field, _what, input, character) => {
    const result = await graphql(PUBLISH, { input: pickInput({ kickoffAt: '2026-12-03T15:00:00Z', ...input(character) }) });
    expectRefusedGraphQL(result, field);
  });

  const names: [string, (value: string) => Record<string, unknown>][] = [
    ['homeTeam', (v) => ({ homeTeam: `Arse${v}nal`, selection: 'Draw' })],
    ['awayTeam', (v) => ({ awayTeam: `Chel${v}sea` })],
    ['league', (v) => ({ league: `Premier${v}League` })],
    ['bookmaker.name', (v) => ({ bookmaker: { name: `Bet${v}365`, slug: 'bet365' } })],
  ];
  it.each(names.flatMap(([field, input]) => INVISIBLES.map(([what, character]) => [field, what, input, character] as const)))(
    'input.%s with a %s: invalid_parameter naming it',
    async (field, _what, input, character) => {
      expectRefusedGraphQL(await graphql(PUBLISH, { input: pickInput({ kickoffAt: '2026-12-03T15:00:00Z', ...input(character) }) }), field);
    },
  );

  it('the same rules hold for literals in the document', async () => {
    const literal = (league: string) =>
      `mutation { publishPick(input: {sport: "soccer", league: "${league}", homeTeam: "Arsenal", awayTeam: "Chelsea", kickoffAt: "2026-12-03T15:00:00Z", selection: "Arsenal", bookmaker: {name: "Bet365", slug: "bet365"}, odds: 2.2, referenceFairOdds: 2, confidence: 70}) { id } }`;
    expectRefusedGraphQL(await graphql(literal('Premier\\u0000League')), 'league');
    expectRefusedGraphQL(await graphql(literal('Premier\\u200BLeague')), 'league');
  });

  it('names in any script, accents and emoji pass; nothing refused was stored', async () => {
    const result = await graphql(PUBLISH, {
      input: pickInput({ league: 'Liga Profesional – Ñandú 🏆', homeTeam: 'الهلال', awayTeam: '東京ヴェルディ', selection: 'Draw', kickoffAt: `2026-12-${String(10 + kickoffDay++).padStart(2, '0')}T15:00:00Z` }),
    });
    expect(result.body.errors, JSON.stringify(result.body)).toBeUndefined();
    const rows = await t.runtime.orm.em.fork().execute<{ count: string | number }[]>(`select count(*) as count from picks where kickoff_at = '2026-12-03T15:00:00Z'`);
    expect(Number(rows[0]!.count)).toBe(0);
  });
});

describe('upsertMatchAnalysis', () => {
  it.each(ALWAYS_REFUSED)('analysis with %s: invalid_parameter analysis', async (_what, character) => {
    expectRefusedGraphQL(await graphql(UPSERT_ANALYSIS, { input: { matchId: pickId, analysis: `Form${character}guide` } }), 'analysis');
  });

  it.each([...LINE_BREAKS, ...INVISIBLES, ['CRLF', '\r\n']])('analysis with %s is a long text: stored exactly', async (_what, character) => {
    const analysis = `Line one${character}Line two\n\tIndented ${character} end`;
    const result = await graphql(UPSERT_ANALYSIS, { input: { matchId: pickId, analysis } });
    expect(result.body.errors, JSON.stringify(result.body)).toBeUndefined();
    const read = await graphql('query($id: ID!) { matchAnalysis(matchId: $id) { analysis } }', { id: pickId });
    expect((read.body.data!.matchAnalysis as { analysis: string }).analysis).toBe(analysis);
  });
});

describe('API key labels', () => {
  it.each([...ALWAYS_REFUSED, ...LINE_BREAKS, ...INVISIBLES])('label with %s: invalid_parameter label', async (_what, character) => {
    expectRefusedGraphQL(await graphql(CREATE_KEY, { input: { tier: 'STARTER', label: `Acme${character}prod` } }), 'label');
  });

  it('a label with accents, punctuation and emoji passes', async () => {
    const result = await graphql(CREATE_KEY, { input: { tier: 'STARTER', label: 'Acme – prod ✓ 🚀 Ünïcödé' } });
    expect((result.body.data!.createApiKey as { apiKey: { label: string } }).apiKey.label).toBe('Acme – prod ✓ 🚀 Ünïcödé');
  });
});

describe('account emails', () => {
  const PASSWORD = 'correct horse battery staple';
  it.each([...ALWAYS_REFUSED, ...LINE_BREAKS, ...INVISIBLES])('email with %s: invalid_parameter email', async (_what, character) => {
    expectRefusedGraphQL(await graphql(CREATE_ACCOUNT, { input: { email: `dana${character}@acme.example`, password: PASSWORD, tier: 'STARTER' } }), 'email');
  });

  it('a plain email passes', async () => {
    const result = await graphql(CREATE_ACCOUNT, { input: { email: 'dana@acme.example', password: PASSWORD, tier: 'STARTER' } });
    expect(result.body.errors, JSON.stringify(result.body)).toBeUndefined();
  });
});

describe('the services refuse before any query, whoever calls them', () => {
  const basePick = () => pickInput() as unknown as PublishPickInput;
  async function refusal(promise: Promise<unknown>): Promise<unknown> {
    try {
      await promise;
    } catch (error) {
      return error;
    }
    return null;
  }

  it.each([
    ['picks.publish league', () => t.runtime.services.picks.publish({ ...basePick(), league: 'a\u0000b' }), 'league'],
    ['picks.publish bookmaker.name', () => t.runtime.services.picks.publish({ ...basePick(), bookmaker: { name: 'B\uD800', slug: 'b' } }), 'bookmaker.name'],
    ['picks.publish pick', () => t.runtime.services.picks.publish({ ...basePick(), pick: 'a\u0000' }), 'pick'],
    ['picks.list league', () => t.runtime.services.picks.list({ first: 50, league: 'a\u0000b' }), 'league'],
    ['analyses.upsert', () => t.runtime.services.analyses.upsert({ matchId: pickId, analysis: 'a\u0000b' }), 'analysis'],
    ['apiKeys.create label', () => t.runtime.services.apiKeys.create({ tier: 'starter', label: 'a\u202Eb' }), 'label'],
    ['accounts.create email', () => t.runtime.services.accounts.create({ email: 'a\u200B@b.example', password: 'correct horse battery staple', tier: 'starter' }), 'email'],
    ['webhooks.create url', () => t.runtime.services.webhooks.create('00000000-0000-0000-0000-000000000000', { url: 'https://hooks.test/\u0000', events: ['pick.published'] }), 'url'],
  ] as const)('%s: invalid_parameter', async (_name, call, parameter) => {
    const error = await refusal(call());
    expect(error).toBeInstanceOf(InvalidParameterError);
    expect((error as InvalidParameterError).extras.parameter).toBe(parameter);
  });

  it('an email that is not valid Unicode finds no account (sign-in treats it as unknown)', async () => {
    await expect(t.runtime.services.accounts.findByEmail('dana\uD800@acme.example')).resolves.toBeNull();
    await expect(t.runtime.services.accounts.findByEmail('dana\u0000@acme.example')).resolves.toBeNull();
  });
});

describe('ids that are not ids (found by test/integration/string-fuzz.test.ts)', () => {
  // An admin names the API key of a webhook subscription; a malformed or unknown id reached the
  // database as a uuid (22P02 invalid input syntax, or a foreign-key violation): internal_error.
  it.each([
    ['createWebhookSubscription', 'mutation($k: ID) { createWebhookSubscription(input: {apiKeyId: $k, url: "https://hooks.test/ids", events: [PICK_PUBLISHED]}) { secret } }'],
    ['webhookSubscriptions', 'query($k: ID) { webhookSubscriptions(apiKeyId: $k) { id } }'],
    ['webhookSubscription', 'query($k: ID) { webhookSubscription(apiKeyId: $k, id: "00000000-0000-0000-0000-000000000000") { id } }'],
    ['updateWebhookSubscription', 'mutation($k: ID) { updateWebhookSubscription(apiKeyId: $k, id: "00000000-0000-0000-0000-000000000000", input: {url: "https://hooks.test/x"}) { id } }'],
  ])('%s with a malformed apiKeyId: not_found; with an unknown one: not_found or nothing', async (name, query) => {
    for (const apiKeyId of ['not-a-key', '\u202EArsenal', '12']) {
      const result = await graphql(query, { k: apiKeyId });
      expect(result.body.errors?.[0]?.extensions.code, `${apiKeyId}: ${JSON.stringify(result.body)}`).toBe('not_found');
    }
    const unknown = await graphql(query, { k: '00000000-0000-0000-0000-000000000000' });
    if (name === 'webhookSubscriptions') expect(unknown.body).toEqual({ data: { webhookSubscriptions: [] } });
    else expect(unknown.body.errors?.[0]?.extensions.code, JSON.stringify(unknown.body)).toBe('not_found');
  });
});
