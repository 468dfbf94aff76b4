/**
 * Stream tokens (docs/API.md, "Frontends"): an Enterprise key mints a short-lived token a web
 * page may hold; the token reads that key's pick stream (REST SSE with ?access_token=,
 * /graphql/stream with Authorization: Bearer) from its origins only, until it expires, and
 * nothing else. Real HTTP on 127.0.0.1; the service's clock is a manual one.
 */
import type { AddressInfo } from 'node:net';
import { print } from 'graphql';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { PickFeedDocument } from '../../adapters/common/generated/graphql.js';
import { ManualClock } from '../../src/domain/clock.js';
import { createTestApp, type TestApp } from '../helpers/app.js';
import { CREATE_KEY, pickInput, PUBLISH, REVOKE_KEY, UPSERT_ANALYSIS } from '../helpers/fixtures.js';
import { CREATE_ACCOUNT, PASSWORD, SET_ACCOUNT_TIER } from '../helpers/dashboard.js';
import { eventually, openStream, type OpenStream } from '../helpers/subscriptions.js';
import { RetentionJob } from '../../src/services/retention.js';

const NOW = new Date('2026-11-24T12:00:00.000Z');
const PAGE = 'https://app.example.com';
const TOKEN = /^sst_[A-Za-z0-9_-]{43}$/;
/** STREAM_TOKEN_OPENS_PER_MINUTE here: above what any other test of this file opens with one token. */
const OPENS_PER_MINUTE = 5;

let t: TestApp;
let port = 0;
const clock = new ManualClock(NOW);
const opened: OpenStream[] = [];

beforeAll(async () => {
  t = await createTestApp({ clock, env: { STREAM_TOKEN_MAX_STREAMS: '2', STREAM_TOKEN_OPENS_PER_MINUTE: String(OPENS_PER_MINUTE) } });
  await t.app.listen({ port: 0, host: '127.0.0.1' });
  port = (t.app.server.address() as AddressInfo).port;
});
afterAll(async () => {
  for (const stream of opened) stream.close();
  await t?.close();
});

async function key(tier = 'ENTERPRISE'): Promise<{ key: string; id: string }> {
  const created = await t.graphql<{ createApiKey: { key: string; apiKey: { id: string } } }>(CREATE_KEY, { input: { tier } });
  return { key: created.data!.createApiKey.key, id: created.data!.createApiKey.apiKey.id };
}

function mint(apiKey: string, body?: unknown) {
  return t.app.inject({
    method: 'POST',
    url: '/api/v1/stream-tokens',
    headers: { authorization: `Bearer ${apiKey}`, ...(body === undefined ? {} : { 'content-type': 'application/json' }) },
    payload: body === undefined ? undefined : JSON.stringify(body),
  });
}

async function token(apiKey: string, body: Record<string, unknown> = { origins: [PAGE] }): Promise<string> {
  const response = await mint(apiKey, body);
  expect(response.statusCode, response.body).toBe(201);
  return response.json().token as string;
}

async function restStream(query: string, headers: Record<string, string> = {}): Promise<OpenStream> {
  const stream = await openStream(port, 'rest', null, { headers, path: `/api/v1/picks/stream?${query}` });
  opened.push(stream);
  return stream;
}

async function publish(team: string): Promise<string> {
  const published = await t.graphql<{ publishPick: { id: string } }>(PUBLISH, { input: pickInput({ homeTeam: team, selection: team }) });
  expect(published.errors).toBeUndefined();
  return published.data!.publishPick.id;
}

describe('minting', () => {
  it('answers 201 with the token, its expiry and its normalised origins; the defaults are 15 minutes and no origin', async () => {
    const { key: apiKey } = await key();
    const response = await mint(apiKey, { ttl_seconds: 60, origins: ['https://App.Example.com:443', 'http://localhost:5173', 'http://127.0.0.1:8080', 'https://app.example.com'] });
    expect(response.statusCode).toBe(201);
    const body = response.json();
    expect(Object.keys(body)).toEqual(['token', 'expires_at', 'origins']);
    expect(body.token).toMatch(TOKEN);
    expect(body.expires_at).toBe(new Date(NOW.getTime() + 60_000).toISOString());
    expect(body.origins).toEqual(['https://app.example.com', 'http://localhost:5173', 'http://127.0.0.1:8080']);
    expect(response.headers['x-ratelimit-remaining']).toBeDefined();
    const bare = await mint(apiKey);
    expect(bare.statusCode).toBe(201);
    expect(bare.json()).toMatchObject({ expires_at: new Date(NOW.getTime() + 900_000).toISOString(), origins: [] });
    expect(bare.json().token).not.toBe(body.token);
  });

  it.each([
    [{ ttl_seconds: 59 }, 'ttl_seconds'],
    [{ ttl_seconds: 3601 }, 'ttl_seconds'],
    [{ ttl_seconds: 90.5 }, 'ttl_seconds'],
    [{ ttl_seconds: '900' }, 'ttl_seconds'],
    [{ ttl_seconds: null }, 'ttl_seconds'],
    [{ origins: 'https://app.example.com' }, 'origins'],
    [{ origins: [42] }, 'origins'],
    [{ origins: ['http://app.example.com'] }, 'origins'],
    [{ origins: ['https://app.example.com/'] }, 'origins'],
    [{ origins: ['https://app.example.com/live'] }, 'origins'],
    [{ origins: ['https://user:pw@app.example.com'] }, 'origins'],
    [{ origins: ['*'] }, 'origins'],
    [{ origins: ['null'] }, 'origins'],
    [{ origins: Array.from({ length: 11 }, (_, i) => `https://a${i}.example.com`) }, 'origins'],
  ])('refuses %j with 400 invalid_parameter naming %s', async (body, parameter) => {
    const { key: apiKey } = await key();
    const response = await mint(apiKey, body);
    expect(response.statusCode, response.body).toBe(400);
    expect(response.json()).toMatchObject({ error: 'invalid_parameter', parameter });
  });

  it('is for Enterprise keys: no key 401, Growth 403, the admin token admin_required on GraphQL', async () => {
    expect((await t.app.inject({ method: 'POST', url: '/api/v1/stream-tokens' })).statusCode).toBe(401);
    const growth = await mint((await key('GROWTH')).key, {});
    expect(growth.statusCode).toBe(403);
    expect(growth.json()).toMatchObject({ error: 'tier_upgrade_required', minimum_tier: 'enterprise' });
    const asAdmin = await t.graphql(`mutation { createStreamToken { token } }`);
    expect(asAdmin.errors?.[0]?.extensions).toMatchObject({ code: 'admin_required' });
    const { key: apiKey } = await key();
    const viaGraphql = await t.graphql<{ createStreamToken: { token: string; origins: string[] } }>(
      `mutation { createStreamToken(ttlSeconds: 120, origins: ["${PAGE}"]) { token expiresAt origins } }`,
      undefined,
      `Bearer ${apiKey}`,
    );
    expect(viaGraphql.data!.createStreamToken.token).toMatch(TOKEN);
    expect(viaGraphql.data!.createStreamToken.origins).toEqual([PAGE]);
  });

  it('caps a key at 60 tokens an hour: the 61st is 429 stream_token_limit with Retry-After, an hour later it is admitted', async () => {
    const { key: apiKey } = await key();
    for (let i = 0; i < 60; i++) {
      expect((await mint(apiKey)).statusCode).toBe(201);
      clock.advance(10_000);
    }
    const refused = await mint(apiKey);
    expect(refused.statusCode).toBe(429);
    // The first of the 60 was minted 600 s ago: it leaves the window in 3,000 s.
    expect(refused.json()).toMatchObject({ error: 'stream_token_limit', retry_after_seconds: 3000 });
    expect(refused.headers['retry-after']).toBe('3000');
    // Another key is not affected.
    expect((await mint((await key()).key)).statusCode).toBe(201);
    clock.advance(3_000_000);
    expect((await mint(apiKey)).statusCode).toBe(201);
  });
});

describe('what a token may do', () => {
  it('is 401 invalid_api_key everywhere but the stream, and an API key is no access_token', async () => {
    const { key: apiKey } = await key();
    const streamToken = await token(apiKey, {});
    for (const url of ['/api/v1/picks', '/api/v1/track-record', '/api/v1/usage']) {
      const response = await t.app.inject({ method: 'GET', url, headers: { authorization: `Bearer ${streamToken}` } });
      expect(response.statusCode, url).toBe(401);
      expect(response.json()).toMatchObject({ error: 'invalid_api_key' });
    }
    expect((await mint(streamToken)).statusCode).toBe(401);
    const graphql = await t.graphql(`query { picks(first: 1) { nodes { id } } }`, undefined, `Bearer ${streamToken}`);
    expect(graphql.errors?.[0]?.extensions).toMatchObject({ code: 'invalid_api_key' });
    // Over graphql-sse, a query is refused like anything but pickPublished.
    const query = await openStream(port, 'graphql-sse', `Bearer ${streamToken}`, { query: 'query { picks(first: 1) { nodes { id } } }' });
    opened.push(query);
    expect(query.status).toBe(401);
    const apiKeyInQuery = await restStream(`access_token=${apiKey}`);
    expect(apiKeyInQuery.status).toBe(401);
    // Two credentials are one too many.
    const both = await restStream(`access_token=${streamToken}`, { authorization: `Bearer ${apiKey}` });
    expect(both.status).toBe(401);
  });

  it('streams published picks from an allowed origin, with CORS for that origin only, and resumes from last_event_id', async () => {
    const { key: apiKey } = await key();
    const streamToken = await token(apiKey);
    const stream = await restStream(`access_token=${streamToken}`, { origin: PAGE });
    expect(stream.status).toBe(200);
    expect(stream.headers['access-control-allow-origin']).toBe(PAGE);
    expect(stream.headers.vary).toBe('Origin');
    const id = await publish('Token FC');
    const frameOfPick = new RegExp(`id: (\\d+)\\nevent: pick\\.published\\ndata: [^\\n]*"${id}"`);
    const sequence = frameOfPick.exec(await stream.waitFor(frameOfPick, 10_000))![1]!;
    // A fresh EventSource resumes with the query parameter: the next pick only.
    const second = await publish('Token United');
    const resumed = await restStream(`access_token=${streamToken}&last_event_id=${sequence}`, { origin: PAGE });
    await resumed.waitFor(`"${second}"`, 10_000);
    expect(resumed.raw()).not.toContain(`"${id}"`);
    expect((await restStream(`access_token=${streamToken}&last_event_id=abc`, { origin: PAGE })).status).toBe(400);
  });

  it('refuses another origin, a missing origin, and a page origin for a token minted for none', async () => {
    const { key: apiKey } = await key();
    const forPage = await token(apiKey);
    expect((await restStream(`access_token=${forPage}`, { origin: 'https://evil.example.com' })).status).toBe(401);
    expect((await restStream(`access_token=${forPage}`)).status).toBe(401);
    const forServers = await token(apiKey, {});
    expect((await restStream(`access_token=${forServers}`, { origin: PAGE })).status).toBe(401);
    const server = await restStream(`access_token=${forServers}`);
    expect(server.status).toBe(200);
    expect(server.headers['access-control-allow-origin']).toBeUndefined();
  });

  it('answers the CORS preflight of both stream endpoints with 204 to any origin', async () => {
    for (const url of ['/api/v1/picks/stream', '/graphql/stream']) {
      const response = await t.app.inject({ method: 'OPTIONS', url, headers: { origin: 'https://anyone.example', 'access-control-request-method': 'GET' } });
      expect(response.statusCode, url).toBe(204);
      expect(response.headers).toMatchObject({
        'access-control-allow-origin': 'https://anyone.example',
        'access-control-allow-methods': 'GET, POST',
        'access-control-allow-headers': 'Authorization, Content-Type, Last-Event-ID',
      });
      expect(response.headers['access-control-allow-credentials']).toBeUndefined();
    }
  });

  it('subscribes over /graphql/stream with Authorization: Bearer, with CORS for its origin and without the key\'s rate-limit headers', async () => {
    const { key: apiKey } = await key();
    const streamToken = await token(apiKey);
    const stream = await openStream(port, 'graphql-sse', `Bearer ${streamToken}`, { headers: { origin: PAGE } });
    opened.push(stream);
    expect(stream.status).toBe(200);
    expect(stream.headers['access-control-allow-origin']).toBe(PAGE);
    // The stream counted nothing against the key, and a page is not told the key's standing.
    expect(stream.headers['x-ratelimit-remaining']).toBeUndefined();
    const id = await publish('Sse Rovers');
    await stream.waitFor(`"${id}"`, 10_000);
    const elsewhere = await openStream(port, 'graphql-sse', `Bearer ${streamToken}`, { headers: { origin: 'https://evil.example.com' } });
    opened.push(elsewhere);
    expect(elsewhere.status).toBe(401);
  });
});

describe('what a token may select on /graphql/stream: the REST stream frame', () => {
  const ANALYSIS = 'Arsenal press high; Chelsea tire late.';
  const REFUSED: Record<string, string> = {
    directly: 'subscription { pickPublished(afterSequence: "0") { sequence pick { id analysis { analysis } } } }',
    'through a fragment': 'subscription { pickPublished(afterSequence: "0") { ...Event } } fragment Event on PickEvent { sequence pick { ...Mine } } fragment Mine on Pick { id analysis { analysis } }',
    'through an inline fragment': 'subscription { pickPublished(afterSequence: "0") { pick { ... on Pick { id analysis { analysis } } } } }',
    'under an alias': 'subscription { pickPublished(afterSequence: "0") { pick { id notes: analysis { text: analysis } } } }',
  };

  /** A visible pick with a match analysis: a replay from sequence 0 would carry it. */
  async function pickWithAnalysis(team: string): Promise<string> {
    const id = await publish(team);
    const upserted = await t.graphql(UPSERT_ANALYSIS, { input: { matchId: id, analysis: ANALYSIS } });
    expect(upserted.errors).toBeUndefined();
    return id;
  }

  it.each(Object.entries(REFUSED))('refuses analysis selected %s: 403 field_not_allowed naming the field, before any event', async (_how, query) => {
    await pickWithAnalysis('Analysis Athletic');
    const { key: apiKey } = await key();
    const streamToken = await token(apiKey);
    const stream = await openStream(port, 'graphql-sse', `Bearer ${streamToken}`, { query, headers: { origin: PAGE } });
    opened.push(stream);
    expect(stream.status).toBe(403);
    expect(stream.headers['content-type']).toMatch(/^application\/json/);
    const body = await stream.ended;
    expect(body).not.toContain('event:');
    expect(body).not.toContain(ANALYSIS);
    const error = (JSON.parse(body) as { errors: { message: string; extensions: { code: string } }[] }).errors[0]!;
    expect(error.extensions.code).toBe('field_not_allowed');
    expect(error.message).toContain('`analysis` (on Pick) is not one of them');
  });

  it("accepts exactly the REST stream's own document, and a selection of it with aliases, fragments and __typename; each receives the next pick", async () => {
    const { key: apiKey } = await key();
    const streamToken = await token(apiKey);
    const frame = await openStream(port, 'graphql-sse', `Bearer ${streamToken}`, { query: print(PickFeedDocument), headers: { origin: PAGE } });
    opened.push(frame);
    const picked = await openStream(port, 'graphql-sse', `Bearer ${streamToken}`, {
      query: 'subscription { e: pickPublished { __typename s: sequence pick { __typename ... on Pick { bookmaker { name } } ...Score } } } fragment Score on Pick { id score: finalScore { home away } }',
      headers: { origin: PAGE },
    });
    opened.push(picked);
    expect([frame.status, picked.status]).toEqual([200, 200]);
    const id = await publish('Frame Town');
    await frame.waitFor(`"${id}"`, 10_000);
    await picked.waitFor(`"${id}"`, 10_000);
    expect(frame.raw()).toContain('"ledgerHash"');
    expect(picked.raw()).toContain('"__typename":"PickEvent"');
  });

  it('leaves an API key free to select the analysis (replayed with the pick)', async () => {
    const id = await pickWithAnalysis('Keyed Wanderers');
    const { key: apiKey } = await key();
    const stream = await openStream(port, 'graphql-sse', `Bearer ${apiKey}`, { query: REFUSED.directly });
    opened.push(stream);
    expect(stream.status).toBe(200);
    await stream.waitFor(new RegExp(`"${id}","analysis":\\{"analysis":"${ANALYSIS}"`), 10_000);
  });
});

describe('expiry, revocation, downgrade and caps', () => {
  it('is refused once expired, and an open stream ends at the expiry after saying so', async () => {
    const { key: apiKey } = await key();
    const streamToken = await token(apiKey, { ttl_seconds: 60, origins: [PAGE] });
    // 59.5 s later the token has half a second left: the stream opens, then ends.
    clock.advance(59_500);
    const stream = await restStream(`access_token=${streamToken}`, { origin: PAGE });
    expect(stream.status).toBe(200);
    const body = await stream.ended;
    expect(body).toMatch(/: stream token expired; mint a new one and reconnect\n\n$/);
    clock.advance(500);
    expect((await restStream(`access_token=${streamToken}`, { origin: PAGE })).status).toBe(401);
  });

  it('completes a /graphql/stream subscription at the expiry too', async () => {
    const { key: apiKey } = await key();
    const streamToken = await token(apiKey, { ttl_seconds: 60, origins: [PAGE] });
    clock.advance(59_500);
    const stream = await openStream(port, 'graphql-sse', `Bearer ${streamToken}`, { headers: { origin: PAGE } });
    opened.push(stream);
    expect(stream.status).toBe(200);
    expect(await stream.ended).toContain('event: complete');
  });

  it("ends the key's token streams when the key is revoked; reconnecting is 401", async () => {
    const { key: apiKey, id } = await key();
    const streamToken = await token(apiKey);
    const stream = await restStream(`access_token=${streamToken}`, { origin: PAGE });
    expect(stream.status).toBe(200);
    await t.graphql(REVOKE_KEY, { id });
    await stream.ended;
    expect((await restStream(`access_token=${streamToken}`, { origin: PAGE })).status).toBe(401);
  });

  it("ends them when the key moves below Enterprise; reconnecting is 403 tier_upgrade_required", async () => {
    const account = await t.graphql<{ createAccount: { id: string } }>(CREATE_ACCOUNT, {
      input: { email: `frontend-${Date.now()}@example.com`, password: PASSWORD, tier: 'ENTERPRISE' },
    });
    const accountId = account.data!.createAccount.id;
    const created = await t.graphql<{ createApiKey: { key: string } }>(CREATE_KEY, { input: { accountId } });
    const streamToken = await token(created.data!.createApiKey.key);
    const stream = await restStream(`access_token=${streamToken}`, { origin: PAGE });
    expect(stream.status).toBe(200);
    await t.graphql(SET_ACCOUNT_TIER, { id: accountId, tier: 'GROWTH' });
    await stream.ended;
    const again = await restStream(`access_token=${streamToken}`, { origin: PAGE });
    expect(again.status).toBe(403);
    expect(JSON.parse(await again.ended)).toMatchObject({ error: 'tier_upgrade_required' });
  });

  it("caps a key's token streams at STREAM_TOKEN_MAX_STREAMS, apart from the key's own streams", async () => {
    const { key: apiKey, id } = await key();
    const streamToken = await token(apiKey);
    const first = await restStream(`access_token=${streamToken}`, { origin: PAGE });
    const second = await openStream(port, 'graphql-sse', `Bearer ${streamToken}`, { headers: { origin: PAGE } });
    opened.push(second);
    expect([first.status, second.status]).toEqual([200, 200]);
    const third = await restStream(`access_token=${streamToken}`, { origin: PAGE });
    expect(third.status).toBe(429);
    expect(JSON.parse(await third.ended)).toMatchObject({ error: 'too_many_streams' });
    // The key's own allowance is untouched.
    const own = await openStream(port, 'rest', `Bearer ${apiKey}`);
    opened.push(own);
    expect(own.status).toBe(200);
    first.close();
    await eventually(() => t.runtime.services.streamSlots.count(id, 'token') === 1, 5_000, 'the closed stream gave its slot back');
    expect((await restStream(`access_token=${streamToken}`, { origin: PAGE })).status).toBe(200);
  });
});

describe('opening streams with a token', () => {
  async function hourlyUsed(apiKey: string): Promise<number> {
    const usage = await t.app.inject({ method: 'GET', url: '/api/v1/usage', headers: { authorization: `Bearer ${apiKey}` } });
    expect(usage.statusCode, usage.body).toBe(200);
    return usage.json().hourly.used as number;
  }

  /** Opens a REST or GraphQL stream with the token, then closes it and waits for its slot to come back. */
  async function openAndClose(streamToken: string, apiKeyId: string, via: 'rest' | 'graphql-sse'): Promise<number> {
    const stream =
      via === 'rest'
        ? await restStream(`access_token=${streamToken}`, { origin: PAGE })
        : await openStream(port, 'graphql-sse', `Bearer ${streamToken}`, { headers: { origin: PAGE } });
    opened.push(stream);
    stream.close();
    await eventually(() => t.runtime.services.streamSlots.count(apiKeyId, 'token') === 0, 5_000, 'the closed stream gave its slot back');
    return stream.status;
  }

  it('counts nothing against the key: the mint is the counted request', async () => {
    const { key: apiKey, id } = await key();
    const streamToken = await token(apiKey);
    const afterMint = await hourlyUsed(apiKey);
    expect(afterMint).toBe(1);
    expect(await openAndClose(streamToken, id, 'rest')).toBe(200);
    expect(await openAndClose(streamToken, id, 'graphql-sse')).toBe(200);
    expect(await openAndClose(streamToken, id, 'rest')).toBe(200);
    expect(await hourlyUsed(apiKey)).toBe(afterMint);
  });

  it('opens at most STREAM_TOKEN_OPENS_PER_MINUTE streams in a rolling minute, then 429 stream_token_rate_limited with Retry-After', async () => {
    const { key: apiKey, id } = await key();
    const streamToken = await token(apiKey);
    // One open every 10 s: the fifth at +40 s.
    for (let i = 0; i < OPENS_PER_MINUTE; i++) {
      expect(await openAndClose(streamToken, id, i % 2 === 0 ? 'rest' : 'graphql-sse')).toBe(200);
      clock.advance(10_000);
    }
    // +50 s: the minute (-10 s, +50 s] holds five opens. (A fixed minute would have room again at
    // +60 s for five more; the rolling one frees one place per open that leaves it.)
    const refused = await restStream(`access_token=${streamToken}`, { origin: PAGE });
    expect(refused.status).toBe(429);
    expect(refused.headers['retry-after']).toBe('10');
    expect(JSON.parse(await refused.ended)).toMatchObject({ error: 'stream_token_rate_limited', retry_after_seconds: 10 });
    const overGraphql = await openStream(port, 'graphql-sse', `Bearer ${streamToken}`, { headers: { origin: PAGE } });
    opened.push(overGraphql);
    expect(overGraphql.status).toBe(429);
    expect(await overGraphql.ended).toContain('stream_token_rate_limited');
    // Another token of the same key has its own minute.
    expect(await openAndClose(await token(apiKey), id, 'rest')).toBe(200);
    // +60 s: the first open left the window, one place is free; at +65 s the second has not left yet.
    clock.advance(10_000);
    expect(await openAndClose(streamToken, id, 'rest')).toBe(200);
    clock.advance(5_000);
    const again = await restStream(`access_token=${streamToken}`, { origin: PAGE });
    expect(again.status).toBe(429);
    expect(again.headers['retry-after']).toBe('5');
    // None of it counted against the key: two mints only.
    expect(await hourlyUsed(apiKey)).toBe(2);
  });
});

