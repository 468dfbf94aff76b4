import { readFileSync } from 'node:fs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { printedSchema } from '../../src/graphql/schema.js';
import { createTestApp, type TestApp } from '../helpers/app.js';

let t: TestApp;
beforeAll(async () => {
  t = await createTestApp();
});
afterAll(async () => {
  await t?.close();
});

describe('health', () => {
  it('/healthz answers 200 while the process runs', async () => {
    const res = await t.app.inject({ method: 'GET', url: '/healthz' });
    expect(res.statusCode).toBe(200);
    expect(res.json()).toEqual({ status: 'ok' });
  });

  it('/readyz reports the database', async () => {
    const res = await t.app.inject({ method: 'GET', url: '/readyz' });
    expect(res.statusCode).toBe(200);
    expect(res.json()).toMatchObject({ status: 'ready', checks: { database: 'up' }, limiter: process.env.REDIS_URL ? 'redis' : 'memory' });
  });
});

describe('request ids and errors', () => {
  it('sets X-Request-Id on every response and keeps a sane incoming one', async () => {
    const generated = await t.app.inject({ method: 'GET', url: '/healthz' });
    expect(generated.headers['x-request-id']).toMatch(/^[0-9a-f-]{36}$/);
    const kept = await t.app.inject({ method: 'GET', url: '/healthz', headers: { 'x-request-id': 'lb-trace-12345678' } });
    expect(kept.headers['x-request-id']).toBe('lb-trace-12345678');
    const replaced = await t.app.inject({ method: 'GET', url: '/healthz', headers: { 'x-request-id': 'bad id\u0001' } });
    expect(replaced.headers['x-request-id']).toMatch(/^[0-9a-f-]{36}$/);
  });

  it('answers unknown routes with JSON 404 not_found', async () => {
    const res = await t.app.inject({ method: 'GET', url: '/nope?x=1' });
    expect(res.statusCode).toBe(404);
    expect(res.headers['content-type']).toContain('application/json');
    expect(res.json()).toEqual({ error: 'not_found', message: 'No route for GET /nope.' });
    expect(res.headers['x-request-id']).toBeTruthy();
  });

  it('answers a body that is not JSON with 400 invalid_request', async () => {
    const res = await t.app.inject({ method: 'POST', url: '/graphql', headers: { 'content-type': 'application/json' }, payload: '{"query": ' });
    expect(res.statusCode).toBe(400);
    expect(res.json()).toMatchObject({ error: 'invalid_request' });
  });

  it('answers an oversized body with 413 payload_too_large', async () => {
    const res = await t.app.inject({
      method: 'POST',
      url: '/graphql',
      headers: { 'content-type': 'application/json' },
      payload: JSON.stringify({ query: `{ __typename }`, padding: 'x'.repeat(300 * 1024) }),
    });
    expect(res.statusCode).toBe(413);
    expect(res.json()).toMatchObject({ error: 'payload_too_large' });
  });

  it('gives GraphQL syntax errors a code', async () => {
    const res = await t.graphql('{ picks(', {});
    expect(res.errors?.[0]?.extensions?.code).toEqual(expect.any(String));
  });
});

describe('schema.graphql', () => {
  it('is the printed schema (run `npm run schema:print` after changing the schema)', () => {
    const committed = readFileSync(new URL('../../schema.graphql', import.meta.url), 'utf8');
    expect(committed).toBe(printedSchema());
  });

  it('keeps the documented contract names', () => {
    const schema = printedSchema();
    for (const name of [
      'createApiKey(input: CreateApiKeyInput!): CreatedApiKey!',
      'revokeApiKey(id: ID!): ApiKey!',
      'publishPick(input: PublishPickInput!): Pick!',
      'approvePick(id: ID!): Pick!',
      'holdPick(id: ID!): Pick!',
      'settlePick(input: SettlePickInput!): Pick!',
      'upsertMatchAnalysis(input: UpsertMatchAnalysisInput!): MatchAnalysis!',
      'input BookmakerInput',
    ]) {
      expect(schema).toContain(name);
    }
  });
});

describe('logging', () => {
  it('never writes credentials to the log', async () => {
    const { Writable } = await import('node:stream');
    const { buildApp } = await import('../../src/app.js');
    const { serviceLoggerOptions } = await import('../../src/server/logging.js');
    const lines: string[] = [];
    const stream = new Writable({
      write(chunk, _encoding, callback) {
        lines.push(String(chunk));
        callback();
      },
    });
    const app = await buildApp(t.runtime, { logger: { ...serviceLoggerOptions('trace'), stream } });
    const secret = `service_${'ab'.repeat(32)}`;
    await app.inject({ method: 'POST', url: '/graphql', headers: { authorization: `Bearer ${secret}`, 'content-type': 'application/json' }, payload: { query: '{ picks { count } }' } });
    await app.inject({ method: 'GET', url: '/nope', headers: { authorization: `Bearer ${secret}`, cookie: `session=${secret}` } });
    // A key sent by mistake in the query string, under any name, or in the path.
    await app.inject({ method: 'GET', url: `/api/v1/picks?api_key=${secret}&limit=5` });
    await app.inject({ method: 'GET', url: `/api/v1/picks?q=${secret}` });
    await app.inject({ method: 'GET', url: `/api/v1/match-analyses/${secret}` });
    await app.inject({ method: 'GET', url: '/api/v1/picks?token=hunter2-token-value' });
    await app.close();
    expect(lines.join('')).toContain('api_key=[redacted]&limit=5');
    expect(lines.join('')).not.toContain('hunter2-token-value');
    expect(lines.length).toBeGreaterThan(0);
    expect(lines.join('')).not.toContain(secret);
    expect(lines.join('')).not.toContain('ab'.repeat(32));
  });
});
