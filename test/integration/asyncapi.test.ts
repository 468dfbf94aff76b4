/**
 * The AsyncAPI document (GET /api/v1/asyncapi.json): valid by the AsyncAPI parser itself (zero
 * errors), and naming exactly the events the code sends, channel by channel: the names are read
 * from the declarations the streams write with, and from the frames written in the adapters'
 * source, so an event added in code without the document (or the other way) fails here.
 */
import { readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { Parser } from '@asyncapi/parser';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { documentedEventNames } from '../../adapters/common/asyncapi.js';
import { PICKS_STREAM_EVENT_NAMES, PUBLIC_STREAM_EVENT_NAME } from '../../src/domain/stream-events.js';
import { WEBHOOK_EVENT_TYPES } from '../../src/domain/webhook.js';
import { createTestApp, type TestApp } from '../helpers/app.js';

let t: TestApp;
let document: Record<string, unknown>;
beforeAll(async () => {
  t = await createTestApp();
  const res = await t.app.inject({ method: 'GET', url: '/api/v1/asyncapi.json', headers: { host: 'picks.example.com' } });
  expect(res.statusCode).toBe(200);
  expect(res.headers['content-type']).toBe('application/json; charset=utf-8');
  document = res.json();
});
afterAll(() => t?.close());

/** Every `event: <name>` an adapter writes into a frame (template literals and strings). */
function eventNamesWrittenIn(dir: string): Set<string> {
  const names = new Set<string>();
  for (const entry of readdirSync(dir, { withFileTypes: true, recursive: true })) {
    if (!entry.isFile() || !entry.name.endsWith('.ts')) continue;
    const text = readFileSync(path.join(entry.parentPath, entry.name), 'utf8');
    for (const match of text.matchAll(/\\nevent: ([a-z][a-z._]*)\\n/g)) names.add(match[1]!);
  }
  return names;
}

describe('GET /api/v1/asyncapi.json', () => {
  it('is a valid AsyncAPI 3.0 document: the AsyncAPI parser finds no error', async () => {
    const { document: parsed, diagnostics } = await new Parser().parse(JSON.stringify(document));
    const errors = diagnostics.filter((diagnostic) => diagnostic.severity === 0);
    expect(errors.map((error) => `${error.path.join('.')}: ${error.message}`)).toEqual([]);
    expect(parsed?.version()).toBe('3.0.0');
    expect(parsed?.servers().get('api')?.host()).toBe('picks.example.com');
  });

  it('names exactly the events the code sends, on each channel', () => {
    expect(documentedEventNames(document)).toEqual({
      picksStream: Object.values(PICKS_STREAM_EVENT_NAMES).sort(),
      publicStream: [PUBLIC_STREAM_EVENT_NAME],
      graphqlStream: ['complete', 'next'],
      graphqlWs: ['complete', 'error', 'next'],
      webhooks: [...WEBHOOK_EVENT_TYPES].sort(),
    });
    // A frame written with a literal name outside the declarations is caught too.
    const documented = new Set(Object.values(documentedEventNames(document)).flat());
    for (const name of eventNamesWrittenIn(path.resolve('adapters'))) expect(documented, name).toContain(name);
  });

  it('describes each payload with the schema OpenAPI documents', async () => {
    const openapi = (await t.app.inject({ method: 'GET', url: '/api/v1/openapi.json' })).json() as { components: { schemas: Record<string, unknown> } };
    const schemas = (document.components as { schemas: Record<string, unknown> }).schemas;
    // OpenAPI's serializer writes a `const` as a one-value `enum`: the same schema.
    const constAsEnum = (value: unknown): unknown =>
      Array.isArray(value)
        ? value.map(constAsEnum)
        : value !== null && typeof value === 'object'
          ? Object.fromEntries(Object.entries(value).map(([key, inner]) => (key === 'const' ? ['enum', [inner]] : [key, constAsEnum(inner)])))
          : value;
    for (const name of ['Pick', 'PublicPick', 'WebhookEvent']) expect(constAsEnum(schemas[name]), name).toEqual(constAsEnum(openapi.components.schemas[name]));
  });

  it('is linked from the API reference', async () => {
    const page = await t.app.inject({ method: 'GET', url: '/docs/' });
    expect(page.body).toContain('/api/v1/asyncapi.json');
  });
});
