/**
 * The served OpenAPI document (GET /api/v1/openapi.json) as generated clients and people meet
 * it: Redocly's recommended rules pass with no error, openapi-typescript makes a client with a
 * named `Pick` type and typed rate-limit headers (compiled with tsc), every operation says its
 * security, errors are the named Error with the codes each response can carry, the headers of
 * docs/API.md are declared, the stream is text/event-stream, the webhooks are in `webhooks`,
 * responses accept additions, every example matches its schema, and docs/API.md lists the
 * same paths and error codes. Also the reference page at /docs (headers and assets; the
 * browser test renders it).
 */
import { execFile } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';
import openapiTS, { astToString } from 'openapi-typescript';
import ts from 'typescript';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { loadConfig } from '../../src/config.js';
import { ERRORS } from '../../src/domain/errors.js';
import { startBanner } from '../../src/server/banner.js';
import { createTestApp, type TestApp } from '../helpers/app.js';
import { openApiValidator } from '../helpers/openapi.js';

const run = promisify(execFile);
const RATE_LIMIT_HEADERS = ['X-RateLimit-Limit', 'X-RateLimit-Remaining', 'X-RateLimit-Reset', 'RateLimit', 'RateLimit-Policy'];
const METHODS = ['get', 'post', 'put', 'patch', 'delete'];
/**
 * What a clone of the repository cannot follow: the shared folder beside it, the design notes
 * kept there, and numbered sections of its spec (the project's own docs are cited instead).
 */
const OUTSIDE_REFERENCE = /\.\.\/shared|shared\/spec|design\.md|spec\s+section|\bspec \d/i;
const NAMED = ['Pick', 'PickList', 'TrackRecord', 'MatchAnalysis', 'WebhookSubscription', 'PublicPick', 'PublicPickList', 'Error', 'WebhookEvent'];

let t: TestApp;
let openapi: any;
let dir: string;

interface Operation {
  path: string;
  method: string;
  operation: any;
}

function operations(): Operation[] {
  return Object.entries(openapi.paths as Record<string, Record<string, unknown>>).flatMap(([docPath, item]) =>
    METHODS.filter((method) => item[method]).map((method) => ({ path: docPath, method, operation: item[method] })),
  );
}

/** The error codes one operation documents, from the enum of each error response. */
function documentedCodes(operation: any): string[] {
  return Object.entries(operation.responses as Record<string, any>)
    .filter(([status]) => Number(status) >= 400)
    .flatMap(([, response]) => response.content?.['application/json']?.schema?.properties?.error?.enum ?? [])
    .sort();
}

function walk(value: unknown, visit: (node: Record<string, unknown>, where: string) => void, where = '#'): void {
  if (Array.isArray(value)) value.forEach((item, index) => walk(item, visit, `${where}/${index}`));
  else if (value !== null && typeof value === 'object') {
    visit(value as Record<string, unknown>, where);
    for (const [key, inner] of Object.entries(value)) walk(inner, visit, `${where}/${key}`);
  }
}

beforeAll(async () => {
  t = await createTestApp();
  const res = await t.app.inject({ method: 'GET', url: '/api/v1/openapi.json' });
  expect(res.statusCode).toBe(200);
  openapi = res.json();
  dir = mkdtempSync(path.join(tmpdir(), 'openapi-'));
  writeFileSync(path.join(dir, 'openapi.json'), res.body);
});
afterAll(async () => {
  await t?.close();
  if (dir) rmSync(dir, { recursive: true, force: true });
});

describe('generated clients', () => {
  it('Redocly lint with the recommended rules reports no error', async () => {
    const { stdout } = await run(
      path.resolve('node_modules/.bin/redocly'),
      ['lint', '--extends=recommended', '--format=json', path.join(dir, 'openapi.json')],
      // Offline: no telemetry, no update check (tests talk to loopback only).
      { env: { ...process.env, REDOCLY_TELEMETRY: 'off', REDOCLY_SUPPRESS_UPDATE_NOTICE: 'true', CI: 'true' }, maxBuffer: 16 * 1024 * 1024 },
    ).catch((error: { stdout?: string; stderr?: string }) => ({ stdout: error.stdout ?? '', stderr: error.stderr }));
    const report = JSON.parse(stdout) as { totals: { errors: number }; problems: { severity: string; message: string; location: unknown }[] };
    expect(report.problems.filter((problem) => problem.severity === 'error')).toEqual([]);
    expect(report.totals.errors).toBe(0);
  }, 120_000);

  it('openapi-typescript generates a named Pick type and typed rate-limit headers, and a client using them compiles', async () => {
    const generated = astToString(await openapiTS(openapi));
    writeFileSync(path.join(dir, 'api.ts'), generated);
    // A client's view: the named schema, a required number header, the error codes as a union.
    writeFileSync(
      path.join(dir, 'client.ts'),
      [
        "import type { components, operations, webhooks } from './api';",
        "type Pick = components['schemas']['Pick'];",
        "type PickPage = operations['listPicks']['responses'][200];",
        "export function firstOdds(page: PickPage['content']['application/json']): number | undefined { const first: Pick | undefined = page.data[0]; return first?.odds; }",
        "export function remaining(headers: PickPage['headers']): number { return headers['X-RateLimit-Remaining']; }",
        "export function policy(headers: PickPage['headers']): string { return headers['RateLimit-Policy']; }",
        "type TooMany = operations['listPicks']['responses'][429];",
        "export function retryAfter(headers: TooMany['headers']): number { return headers['Retry-After']; }",
        "export const code: TooMany['content']['application/json']['error'] = 'monthly_quota_exceeded';",
        "export type Delivery = NonNullable<webhooks['pick.published']['post']['requestBody']>['content']['application/json'];",
        "export const eventType: Delivery['type'] = 'pick.published';",
      ].join('\n'),
    );
    expect(generated).toMatch(/\n {8}Pick: \{/);
    const program = ts.createProgram([path.join(dir, 'client.ts')], { strict: true, noEmit: true, target: ts.ScriptTarget.ES2022, module: ts.ModuleKind.ESNext, moduleResolution: ts.ModuleResolutionKind.Bundler, skipLibCheck: true });
    const diagnostics = ts.getPreEmitDiagnostics(program).map((diagnostic) => ts.flattenDiagnosticMessageText(diagnostic.messageText, '\n'));
    expect(diagnostics).toEqual([]);
  }, 120_000);
});

describe('the document', () => {
  it('names its servers, security on every operation (none on the public endpoint) and the named schemas', () => {
    expect(openapi.openapi).toBe('3.1.0');
    expect(openapi.servers.length).toBeGreaterThan(0);
    for (const { path: docPath, operation } of operations()) {
      const expected = docPath.startsWith('/api/public/') ? [] : [{ bearerAuth: [] }];
      expect(operation.security, `${operation.operationId}`).toEqual(expected);
    }
    for (const name of NAMED) expect(Object.keys(openapi.components.schemas)).toContain(name);
    expect(openapi.paths['/api/v1/picks'].get.responses['200'].content['application/json'].schema).toEqual({ $ref: '#/components/schemas/PickList' });
  });

  it('every error response is the Error schema with its codes enumerated, from the error table; every operation has a 500 internal_error', () => {
    for (const { operation } of operations()) {
      expect(operation.responses['500'], operation.operationId).toBeDefined();
      for (const [status, response] of Object.entries(operation.responses as Record<string, any>)) {
        if (Number(status) < 400) continue;
        const schema = response.content['application/json'].schema;
        expect(schema.allOf, `${operation.operationId} ${status}`).toEqual([{ $ref: '#/components/schemas/Error' }]);
        const codes: string[] = schema.properties.error.enum;
        expect(codes.length).toBeGreaterThan(0);
        for (const code of codes) expect(ERRORS[code as keyof typeof ERRORS].status, `${operation.operationId} ${code}`).toBe(Number(status));
      }
      expect(operation.responses['500'].content['application/json'].schema.properties.error.enum).toEqual(['internal_error']);
    }
  });

  it('declares the rate-limit headers on every authenticated answer, Retry-After on 429 and 503, ETag and Cache-Control on the public endpoint', () => {
    for (const { path: docPath, operation } of operations()) {
      for (const [status, response] of Object.entries(operation.responses as Record<string, any>)) {
        const headers = Object.keys(response.headers ?? {});
        const where = `${operation.operationId} ${status}`;
        expect(headers, where).toContain('X-Request-Id');
        if (status === '429' || status === '503') expect(headers, where).toContain('Retry-After');
        if (docPath.startsWith('/api/public/') || status === '401' || status === '413') continue;
        expect(headers, where).toEqual(expect.arrayContaining(RATE_LIMIT_HEADERS));
        if (Number(status) < 500) for (const name of RATE_LIMIT_HEADERS) expect(response.headers[name].required, `${where} ${name}`).toBe(true);
      }
    }
    const today = openapi.paths['/api/public/picks/today'].get.responses;
    expect(Object.keys(today['200'].headers)).toEqual(expect.arrayContaining(['ETag', 'Cache-Control', 'Access-Control-Allow-Origin']));
    expect(Object.keys(today['304'].headers)).toEqual(expect.arrayContaining(['ETag', 'Cache-Control']));
    expect(today['400'].headers['Cache-Control'].schema.const).toBe('no-store');
  });

  it('the stream answers text/event-stream with the frames described; Last-Event-ID is a header parameter, access_token and last_event_id query ones', () => {
    const stream = openapi.paths['/api/v1/picks/stream'].get;
    expect(Object.keys(stream.responses['200'].content)).toEqual(['text/event-stream']);
    const media = stream.responses['200'].content['text/event-stream'];
    expect(media.schema.description).toMatch(/event: pick\.published/);
    expect(media.example).toMatch(/^id: \d+\nevent: pick\.published\ndata: \{.*\}\n\n/m);
    expect(stream.parameters).toEqual([
      expect.objectContaining({ in: 'query', name: 'access_token' }),
      expect.objectContaining({ in: 'query', name: 'last_event_id' }),
      expect.objectContaining({ in: 'header', name: 'Last-Event-ID' }),
    ]);
  });

  it('describes the outgoing webhooks: body and signature headers per event type', () => {
    expect(Object.keys(openapi.webhooks).sort()).toEqual(['pick.availability_changed', 'pick.published', 'pick.settled']);
    for (const [type, item] of Object.entries(openapi.webhooks as Record<string, any>)) {
      const names = item.post.parameters.map((parameter: { name: string }) => parameter.name);
      expect(names).toEqual(expect.arrayContaining(['X-Service-Signature', 'X-Service-Event', 'X-Service-Delivery', 'webhook-id', 'webhook-timestamp', 'webhook-signature']));
      const body = item.post.requestBody.content['application/json'];
      expect(body.schema.allOf).toEqual([{ $ref: '#/components/schemas/WebhookEvent' }]);
      expect(body.example.type).toBe(type);
    }
  });

  it('has a real description on every response and no additionalProperties: false anywhere', () => {
    for (const { operation } of operations()) {
      expect(operation.description, operation.operationId).toBeTruthy();
      for (const [status, response] of Object.entries(operation.responses as Record<string, any>)) {
        expect(response.description, `${operation.operationId} ${status}`).not.toBe('Default Response');
      }
    }
    const closed: string[] = [];
    walk(openapi, (node, where) => {
      if (node.additionalProperties === false) closed.push(where);
    });
    expect(closed).toEqual([]);
  });

  it('every example matches its schema', () => {
    const validator = openApiValidator(openapi);
    let checked = 0;
    walk(openapi, (node, where) => {
      if (!node.schema || typeof node.schema !== 'object' || where.includes('/parameters/') || where.includes('/headers/')) return;
      const examples = [...(node.example === undefined ? [] : [node.example]), ...Object.values((node.examples ?? {}) as Record<string, { value: unknown }>).map((entry) => entry.value)];
      for (const example of examples) {
        if (typeof example === 'string') continue; // the stream's text
        checked += 1;
        expect(validator.errorsOf(node.schema as object, example), where).toBeNull();
      }
    });
    for (const [name, schema] of Object.entries(openapi.components.schemas as Record<string, { examples?: unknown[] }>)) {
      for (const example of schema.examples ?? []) {
        checked += 1;
        expect(validator.errorsOf({ $ref: `#/components/schemas/${name}` }, example), name).toBeNull();
      }
    }
    expect(checked).toBeGreaterThan(20);
  });

  it('points nowhere outside the repository or the service', () => {
    expect(JSON.stringify(openapi)).not.toMatch(OUTSIDE_REFERENCE);
  });
});

describe('docs/API.md', () => {
  const text = readFileSync(path.resolve('docs/API.md'), 'utf8');

  /** `### GET /api/v1/picks` headings, each with its `Errors:` line. */
  function documentedEndpoints(): Map<string, string[]> {
    const endpoints = new Map<string, string[]>();
    const sections = text.split(/^### /m).slice(1);
    for (const section of sections) {
      const heading = /^(GET|POST|PATCH|PUT|DELETE) (\/\S+)/.exec(section);
      if (!heading) continue;
      const errorsLine = /^Errors: (.*)$/m.exec(section);
      const codes = errorsLine ? [...errorsLine[1]!.matchAll(/`([a-z_]+)`/g)].map((match) => match[1]!).sort() : [];
      endpoints.set(`${heading[1]} ${heading[2]!.replace(/:([A-Za-z]+)/g, '{$1}')}`, codes);
    }
    return endpoints;
  }

  it('lists the same endpoints as the served document, each with the same error codes', () => {
    const endpoints = documentedEndpoints();
    const served = new Map(operations().map(({ path: docPath, method, operation }) => [`${method.toUpperCase()} ${docPath}`, documentedCodes(operation)]));
    expect([...endpoints.keys()].sort()).toEqual([...served.keys()].sort());
    for (const [endpoint, codes] of served) expect(endpoints.get(endpoint), endpoint).toEqual(codes);
  });

  it('its error table holds every code the document uses, with the status of the error table', () => {
    const rows = [...text.matchAll(/^\| (\d{3}) \| `([a-z_]+)` \|/gm)].map((match) => [match[2]!, Number(match[1])] as const);
    const table = new Map(rows);
    const used = new Set(operations().flatMap(({ operation }) => documentedCodes(operation)));
    for (const code of used) expect(table.get(code), code).toBe(ERRORS[code as keyof typeof ERRORS].status);
    for (const [code, status] of table) expect(ERRORS[code as keyof typeof ERRORS]?.status, code).toBe(status);
  });

  it('README and docs point nowhere outside the repository', () => {
    for (const file of ['README.md', 'docs/API.md', 'docs/DECISIONS.md', 'docs/RATE_LIMITING.md', 'docs/REALTIME.md', 'docs/WEBHOOKS.md', 'docs/OPERATIONS.md', 'docs/ARCHITECTURE.md']) {
      expect(readFileSync(path.resolve(file), 'utf8'), file).not.toMatch(OUTSIDE_REFERENCE);
    }
  });
});

describe('GET /docs', () => {
  it('redirects /docs to /docs/, which renders the served document with a strict Content-Security-Policy and a fresh nonce', async () => {
    const bare = await t.app.inject({ method: 'GET', url: '/docs' });
    expect(bare.statusCode).toBe(301);
    expect(bare.headers.location).toBe('/docs/');
    const [first, second] = await Promise.all([t.app.inject({ method: 'GET', url: '/docs/' }), t.app.inject({ method: 'GET', url: '/docs/' })]);
    for (const page of [first!, second!]) {
      expect(page.statusCode).toBe(200);
      expect(page.headers['content-type']).toMatch(/^text\/html/);
      const csp = String(page.headers['content-security-policy']);
      const nonce = /'nonce-([^']+)'/.exec(csp)?.[1];
      expect(nonce).toBeTruthy();
      expect(csp).toContain("default-src 'none'");
      expect(csp).toContain("frame-ancestors 'none'");
      // No other host, no eval, no inline script or stylesheet without the nonce (style attributes only).
      expect(csp).not.toMatch(/https?:|\*|unsafe-eval/);
      expect(csp.split('; ').filter((directive) => directive.includes('unsafe-inline'))).toEqual(["style-src-attr 'unsafe-inline'"]);
      expect(page.body).toContain(`nonce="${nonce}"`);
      expect(page.body).not.toContain('placeholder');
      expect(page.body).toContain('/api/v1/openapi.json');
      expect(page.body).toMatch(/<script src="js\/scalar\.js"/);
      expect(page.body).not.toMatch(/https?:\/\//);
    }
    expect(first!.headers['content-security-policy']).not.toBe(second!.headers['content-security-policy']);
  });

  it("serves Scalar's bundle from the package itself", async () => {
    const bundle = await t.app.inject({ method: 'GET', url: '/docs/js/scalar.js' });
    expect(bundle.statusCode).toBe(200);
    expect(bundle.headers['content-type']).toMatch(/javascript/);
    expect(bundle.body.length).toBeGreaterThan(100_000);
    expect(bundle.headers['x-content-type-options']).toBe('nosniff');
  });

  it('is linked from the start banner and from every dashboard page', async () => {
    expect(startBanner(loadConfig({ DATA_DIR: '/srv/picks' }), 'http://127.0.0.1:3000', 'token', null)).toContain('http://127.0.0.1:3000/docs/');
    const login = await t.app.inject({ method: 'GET', url: '/dashboard/login' });
    expect(login.body).toContain('<a href="/docs/">API reference</a>');
  });

  it('is not part of the OpenAPI document', () => {
    expect(Object.keys(openapi.paths).filter((docPath) => docPath.startsWith('/docs'))).toEqual([]);
  });
});
