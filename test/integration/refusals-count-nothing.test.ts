/**
 * A 429 never counts, whichever limit answers it (docs/API.md, "Every request with a valid key
 * counts one unit ... except a 429 and a 5xx"): a request admitted by the key's limits and then
 * refused by another allowance (webhook subscriptions, stream-token mints, concurrent streams)
 * is taken back like a 5xx. Each refusal reads GET /api/v1/usage before and after it; REST and
 * GraphQL (where a refusal is HTTP 200 with the error, and is taken back when no root field was
 * answered), through the real app on 127.0.0.1 (its limiter in memory, or Redis with REDIS_URL).
 */
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { createTestApp, type TestApp } from '../helpers/app.js';
import { CREATE_KEY } from '../helpers/fixtures.js';
import { openStream, type OpenStream } from '../helpers/subscriptions.js';
import { MAX_STREAMS_PER_KEY } from '../../src/services/stream-slots.js';
import { STREAM_TOKENS_PER_HOUR } from '../../src/domain/stream-token.js';

const LIMITS = JSON.stringify({ growth: { hourly: 100_000, monthly: 1_000_000 }, enterprise: { hourly: 100_000, monthly: 1_000_000 } });
const SUBSCRIPTIONS_PER_KEY = 5;

let t: TestApp;
let port = 0;
const opened: OpenStream[] = [];

beforeAll(async () => {
  t = await createTestApp({ env: { WEBHOOK_HOST_OVERRIDES: 'hooks.test=127.0.0.1', TIER_LIMITS: LIMITS } });
  await t.runtime.dispatcher.stop();
  await t.app.listen({ port: 0, host: '127.0.0.1' });
  port = (t.app.server.address() as AddressInfo).port;
});
afterAll(async () => {
  for (const stream of opened) stream.close();
  await t?.close();
});

async function createKey(tier: 'GROWTH' | 'ENTERPRISE'): Promise<string> {
  return (await t.graphql<{ createApiKey: { key: string } }>(CREATE_KEY, { input: { tier } })).data!.createApiKey.key;
}

function call(key: string, method: 'GET' | 'POST', url: string, body?: unknown) {
  return t.app.inject({
    method,
    url,
    headers: { authorization: `Bearer ${key}`, ...(body === undefined ? {} : { 'content-type': 'application/json' }) },
    payload: body === undefined ? undefined : JSON.stringify(body),
  });
}

async function used(key: string): Promise<{ hourly: number; monthly: number }> {
  const usage = await call(key, 'GET', '/api/v1/usage');
  expect(usage.statusCode, usage.body).toBe(200);
  return { hourly: usage.json().hourly.used, monthly: usage.json().monthly.used };
}

/** The refusal leaves the key's usage where it was (taken back once its answer is sent). */
async function expectCountsNothing(key: string, refuse: () => Promise<{ status: number; code: string }>, code: string, status = 429): Promise<void> {
  const before = await used(key);
  const refused = await refuse();
  expect(refused).toEqual({ status, code });
  await vi.waitFor(async () => expect(await used(key)).toEqual(before), { timeout: 10_000, interval: 20 });
}

const webhook = (i: number) => ({ url: `https://hooks.test:9/count-${i}`, events: ['pick.published'] });

describe('a 429 after admission counts nothing', () => {
  it('subscription_limit (REST)', async () => {
    const key = await createKey('GROWTH');
    for (let i = 0; i < SUBSCRIPTIONS_PER_KEY; i++) expect((await call(key, 'POST', '/api/v1/webhooks', webhook(i))).statusCode).toBe(201);
    await expectCountsNothing(
      key,
      async () => {
        const res = await call(key, 'POST', '/api/v1/webhooks', webhook(99));
        return { status: res.statusCode, code: res.json().error };
      },
      'subscription_limit',
    );
  });

  it('stream_token_limit (REST)', async () => {
    const key = await createKey('ENTERPRISE');
    for (let i = 0; i < STREAM_TOKENS_PER_HOUR; i++) expect((await call(key, 'POST', '/api/v1/stream-tokens')).statusCode).toBe(201);
    await expectCountsNothing(
      key,
      async () => {
        const res = await call(key, 'POST', '/api/v1/stream-tokens');
        return { status: res.statusCode, code: res.json().error };
      },
      'stream_token_limit',
    );
  });

  it('too_many_streams (REST and /graphql/stream)', async () => {
    const key = await createKey('ENTERPRISE');
    for (let i = 0; i < MAX_STREAMS_PER_KEY; i++) {
      const stream = await openStream(port, i % 2 ? 'rest' : 'graphql-sse', `Bearer ${key}`);
      opened.push(stream);
      expect(stream.status).toBe(200);
    }
    for (const surface of ['rest', 'graphql-sse'] as const) {
      await expectCountsNothing(
        key,
        async () => {
          const stream = await openStream(port, surface, `Bearer ${key}`);
          opened.push(stream);
          return { status: stream.status, code: JSON.parse(await stream.ended).error ?? JSON.parse(await stream.ended).errors[0].extensions.code };
        },
        'too_many_streams',
      );
    }
  });
});

describe('over GraphQL', () => {
  async function graphql(key: string, query: string) {
    const res = await call(key, 'POST', '/graphql', { query });
    const code = res.json().errors?.[0]?.extensions?.code as string | undefined;
    return { status: res.statusCode, code: code ?? 'none' };
  }

  it('subscription_limit', async () => {
    const key = await createKey('GROWTH');
    const create = (i: number) => `mutation { createWebhookSubscription(input: { url: "${webhook(i).url}", events: [PICK_PUBLISHED] }) { secret } }`;
    for (let i = 0; i < SUBSCRIPTIONS_PER_KEY; i++) expect(await graphql(key, create(i))).toEqual({ status: 200, code: 'none' });
    // GraphQL answers 200 with the error; the refusal is still taken back.
    await expectCountsNothing(key, () => graphql(key, create(99)), 'subscription_limit', 200);
  });

  it('a mutation refused at its first field serves nothing, whatever follows it (fields never run, __typename)', async () => {
    const key = await createKey('GROWTH');
    const create = (i: number) => `createWebhookSubscription(input: { url: "${webhook(i).url}", events: [PICK_PUBLISHED] }) { secret }`;
    for (let i = 0; i < SUBSCRIPTIONS_PER_KEY; i++) expect(await graphql(key, `mutation { ${create(i)} }`)).toEqual({ status: 200, code: 'none' });
    await expectCountsNothing(key, () => graphql(key, `mutation { a: ${create(10)} b: ${create(11)} }`), 'subscription_limit', 200);
    await expectCountsNothing(key, () => graphql(key, `mutation { __typename ${create(12)} }`), 'subscription_limit', 200);
  });

  it('an operation that answered any root field counts, even beside a refusal', async () => {
    const key = await createKey('GROWTH');
    const create = (i: number) => `createWebhookSubscription(input: { url: "${webhook(i).url}", events: [PICK_PUBLISHED] }) { secret }`;
    for (let i = 0; i < SUBSCRIPTIONS_PER_KEY - 1; i++) expect(await graphql(key, `mutation { ${create(i)} }`)).toEqual({ status: 200, code: 'none' });
    const before = await used(key);
    // The fifth subscription is created, the sixth refused: the request was served, and counts.
    // (The field is non-null: its error nulls `data` as a whole, though the fifth was created.)
    const res = await call(key, 'POST', '/graphql', { query: `mutation { fifth: ${create(5)} sixth: ${create(6)} }` });
    expect(res.json().errors.map((error: { path: string[]; extensions: { code: string } }) => [error.path[0], error.extensions.code])).toEqual([['sixth', 'subscription_limit']]);
    const listed = await call(key, 'GET', '/api/v1/webhooks');
    expect(listed.json().data.map((subscription: { url: string }) => subscription.url)).toContain(webhook(5).url);
    // The mutation and the list: two.
    await vi.waitFor(async () => expect(await used(key)).toEqual({ hourly: before.hourly + 2, monthly: before.monthly + 2 }), { timeout: 10_000, interval: 20 });
  });
});

describe('documents /graphql/stream refuses count nothing, as on /graphql', () => {
  async function streamAnswer(key: string, method: 'GET' | 'POST', query: string): Promise<{ status: number; body: string }> {
    const res = await t.app.inject({
      method,
      url: method === 'GET' ? `/graphql/stream?query=${encodeURIComponent(query)}` : '/graphql/stream',
      headers: { authorization: `Bearer ${key}`, accept: 'text/event-stream', ...(method === 'POST' ? { 'content-type': 'application/json' } : {}) },
      ...(method === 'POST' ? { payload: JSON.stringify({ query }) } : {}),
    });
    return { status: res.statusCode, body: res.body };
  }

  it('a document that does not validate: one event with the error (no HTTP hints in it), nothing counted', async () => {
    const key = await createKey('ENTERPRISE');
    const before = await used(key);
    const answer = await streamAnswer(key, 'POST', 'subscription { pickPublished { nope } }');
    expect(answer.status).toBe(200);
    const event = JSON.parse(/^data: (.*)$/m.exec(answer.body)![1]!) as { errors: { message: string; extensions: Record<string, unknown> }[] };
    expect(event.errors[0]!.message).toMatch(/nope/);
    expect(event.errors[0]!.extensions).toEqual({ code: 'GRAPHQL_VALIDATION_FAILED' });
    // And the same document on /graphql, for comparison: not counted either.
    expect((await call(key, 'POST', '/graphql', { query: '{ nope }' })).json().errors[0].extensions.code).toBe('GRAPHQL_VALIDATION_FAILED');
    expect(await used(key)).toEqual(before);
  });

  it('a mutation over GET: 405 method_not_allowed, nothing counted', async () => {
    const key = await createKey('ENTERPRISE');
    const before = await used(key);
    const answer = await streamAnswer(key, 'GET', 'mutation { createStreamToken { token } }');
    expect(answer.status).toBe(405);
    expect(JSON.parse(answer.body).errors[0].extensions.code).toBe('method_not_allowed');
    expect(await used(key)).toEqual(before);
  });
});
