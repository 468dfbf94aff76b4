/**
 * The landing page at / (docs/API.md, "Home page") and GraphiQL served from the app: the page's
 * links (GraphiQL's only outside production), its headers, HEAD, 405, the JSON index for a
 * client that asks for JSON, and nothing from another host; GraphiQL's page at /graphql
 * (Accept: text/html) referring only to this origin's assets, served with their content types,
 * under its Content-Security-Policy; in production no GraphiQL and no assets, as before. The
 * browser test (test/browser/home.browser.test.ts) renders both offline.
 */
import { createHash } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { graphiqlFiles, renderGraphiQLPage } from '../../adapters/home/graphiql.js';
import { prefersJson } from '../../adapters/home/plugin.js';
import { createTestApp, type TestApp } from '../helpers/app.js';

/** Any absolute URL or protocol-relative reference: the pages must name this origin's paths only. */
const OTHER_HOST = /(?:https?:)?\/\/[a-z0-9.-]+\.[a-z]{2,}|unpkg|jsdelivr|cdnjs|googleapis|gstatic|fonts\./i;
const BROWSER_ACCEPT = 'text/html,application/xhtml+xml,application/xml;q=0.9,image/avif,image/webp,*/*;q=0.8';

let t: TestApp;
let production: TestApp;

beforeAll(async () => {
  [t, production] = await Promise.all([createTestApp(), createTestApp({ env: { NODE_ENV: 'production' } })]);
  expect(production.config.production).toBe(true);
});

afterAll(async () => {
  await Promise.all([t?.close(), production?.close()]);
});

/** href values of the page's links, in order. */
function hrefs(page: string): string[] {
  return [...page.matchAll(/<a [^>]*href="([^"]*)"/g)].map((match) => match[1]!);
}

/** The one policy directive `name`'s sources. */
function directive(policy: string, name: string): string[] {
  const found = policy.split(';').map((part) => part.trim().split(/\s+/)).find(([directiveName]) => directiveName === name);
  return found ? found.slice(1) : [];
}

describe('GET /', () => {
  it('is a page saying what the service is, linking the reference, the dashboard, the record, GraphiQL and the public endpoint', async () => {
    const res = await t.app.inject({ method: 'GET', url: '/', headers: { accept: BROWSER_ACCEPT } });
    expect(res.statusCode).toBe(200);
    expect(res.headers['content-type']).toBe('text/html; charset=utf-8');
    const page = res.body;
    expect(page).toMatch(/^<!doctype html><html lang="en">/);
    expect(page).toContain('<title>Picks API</title>');
    expect(page).toMatch(/devigging/);
    expect(page).toMatch(/sharp bookmakers/);
    expect(page).toMatch(/public ledger/);
    expect(page).toMatch(/webhooks/);
    expect(hrefs(page)).toEqual(['/', '/docs/', '/dashboard', '/record', '/api/public/picks/today', '/graphql']);
    expect(page).toContain('<h2><a href="/graphql">GraphiQL</a></h2>');
    // No script of any kind, nothing from another host.
    expect(page).not.toMatch(/<script|javascript:|\son[a-z]+=/i);
    expect(page).not.toMatch(OTHER_HOST);
  });

  it('answers with a Content-Security-Policy without scripts, allowing its own stylesheet by hash, and a short public cache', async () => {
    const res = await t.app.inject({ method: 'GET', url: '/' });
    const policy = String(res.headers['content-security-policy']);
    expect(directive(policy, 'default-src')).toEqual(["'none'"]);
    expect(directive(policy, 'script-src')).toEqual([]);
    expect(directive(policy, 'frame-ancestors')).toEqual(["'none'"]);
    expect(directive(policy, 'img-src')).toEqual(["'self'"]);
    // The inline stylesheet is the one the policy names, byte for byte.
    const stylesheet = /<style>([\s\S]*?)<\/style>/.exec(res.body)?.[1] ?? '';
    expect(stylesheet.length).toBeGreaterThan(100);
    expect(directive(policy, 'style-src')).toEqual([`'sha256-${createHash('sha256').update(stylesheet).digest('base64')}'`]);
    expect(res.body.match(/<style/g)).toHaveLength(1);
    expect(res.body).not.toMatch(/\sstyle="/);
    expect(res.headers).toMatchObject({
      'x-content-type-options': 'nosniff',
      'x-frame-options': 'DENY',
      'referrer-policy': 'same-origin',
      'cache-control': 'public, max-age=300',
      vary: 'Accept',
    });
    expect(res.headers.etag).toMatch(/^"[\w-]{27}"$/);
    const again = await t.app.inject({ method: 'GET', url: '/', headers: { 'if-none-match': String(res.headers.etag) } });
    expect(again.statusCode).toBe(304);
    expect(again.body).toBe('');
  });

  it('leaves GraphiQL out in production, the rest the same', async () => {
    const res = await production.app.inject({ method: 'GET', url: '/', headers: { accept: BROWSER_ACCEPT } });
    expect(res.statusCode).toBe(200);
    expect(hrefs(res.body)).toEqual(['/', '/docs/', '/dashboard', '/record', '/api/public/picks/today']);
    expect(res.body).not.toContain('GraphiQL');
    expect(res.body).not.toMatch(OTHER_HOST);
    const index = await production.app.inject({ method: 'GET', url: '/', headers: { accept: 'application/json' } });
    expect(index.json().links).not.toHaveProperty('graphiql');
    expect(index.json().links.graphql).toBe('/graphql');
  });

  it('answers HEAD like GET without a body, and 405 JSON to other methods', async () => {
    const get = await t.app.inject({ method: 'GET', url: '/' });
    const head = await t.app.inject({ method: 'HEAD', url: '/' });
    expect(head.statusCode).toBe(200);
    expect(head.body).toBe('');
    expect(head.headers['content-type']).toBe('text/html; charset=utf-8');
    expect(head.headers['content-length']).toBe(get.headers['content-length']);
    expect(head.headers['content-security-policy']).toBe(get.headers['content-security-policy']);
    for (const method of ['POST', 'PUT', 'PATCH', 'DELETE', 'OPTIONS'] as const) {
      const res = await t.app.inject({ method, url: '/' });
      expect(res.statusCode, method).toBe(405);
      expect(res.headers.allow).toBe('GET, HEAD');
      expect(res.json()).toEqual({ error: 'method_not_allowed', message: `${method} is not allowed here; use GET, HEAD.` });
    }
  });

  it('gives a client asking for JSON the same links as a small index', async () => {
    const res = await t.app.inject({ method: 'GET', url: '/', headers: { accept: 'application/json' } });
    expect(res.statusCode).toBe(200);
    expect(res.headers['content-type']).toBe('application/json; charset=utf-8');
    expect(res.headers).toMatchObject({ vary: 'Accept', 'cache-control': 'public, max-age=300' });
    expect(res.headers['content-security-policy']).toBeUndefined();
    expect(res.json()).toEqual({
      service: 'Picks API',
      description: expect.stringMatching(/devigged/),
      links: {
        docs: '/docs/',
        openapi: '/api/v1/openapi.json',
        dashboard: '/dashboard',
        record: '/record',
        public_picks_today: '/api/public/picks/today',
        public_ledger: '/api/public/ledger',
        graphql: '/graphql',
        graphiql: '/graphql',
      },
    });
    // Every link of the index leads somewhere (the dashboard redirects to its sign-in).
    for (const link of Object.values(res.json().links as Record<string, string>)) {
      const target = await t.app.inject({ method: 'GET', url: link, headers: { accept: link === '/graphql' ? 'text/html' : '*/*' } });
      expect([200, 302, 303], link).toContain(target.statusCode);
    }
    // Its own ETag: the page's does not answer for it.
    const page = await t.app.inject({ method: 'GET', url: '/' });
    expect(res.headers.etag).not.toBe(page.headers.etag);
    const unchanged = await t.app.inject({ method: 'GET', url: '/', headers: { accept: 'application/json', 'if-none-match': String(res.headers.etag) } });
    expect(unchanged.statusCode).toBe(304);
  });

  it('chooses JSON only when the client prefers it', () => {
    for (const accept of [undefined, '', '*/*', BROWSER_ACCEPT, 'text/html', 'text/html, application/json', 'application/json;q=0.5, text/html', 'application/json;q=0, */*', 'text/*, application/json;q=0.9']) {
      expect(prefersJson(accept), String(accept)).toBe(false);
    }
    for (const accept of ['application/json', 'application/json, */*', 'application/json, */*;q=0.1', 'text/html;q=0.5, application/json', 'APPLICATION/JSON; charset=utf-8']) {
      expect(prefersJson(accept), accept).toBe(true);
    }
  });
});

describe('GraphiQL at /graphql', () => {
  it('is a small page of this origin: its scripts, stylesheet and workers are same-origin files, its options a JSON data block', async () => {
    const res = await t.app.inject({ method: 'GET', url: '/graphql', headers: { accept: BROWSER_ACCEPT } });
    expect(res.statusCode).toBe(200);
    expect(res.headers['content-type']).toBe('text/html; charset=utf-8');
    const page = res.body;
    expect(page).toContain('<title>Picks Service GraphiQL</title>');
    expect(page.length).toBeLessThan(4_000);
    expect(page).not.toMatch(OTHER_HOST);
    expect(page).not.toContain('__TITLE__');
    const scripts = [...page.matchAll(/<script([^>]*)>([\s\S]*?)<\/script>/g)].map((match) => ({ attributes: match[1]!, body: match[2]! }));
    // Two scripts from the app, one data block; no inline code. The start script carries the answer's nonce.
    expect(scripts.map((script) => script.attributes.trim())).toEqual([
      'type="application/json" id="graphiql-start"',
      expect.stringMatching(/^nonce="[A-Za-z0-9+/]{22}==" src="\/graphql\/assets\/start\.[0-9a-f]{16}\.js"$/),
      expect.stringMatching(/^src="\/graphql\/assets\/graphiql\.[0-9a-f]{16}\.js"$/),
    ]);
    expect(scripts.slice(1).map((script) => script.body)).toEqual(['', '']);
    const start = JSON.parse(scripts[0]!.body);
    expect(start.options).toMatchObject({ endpoint: '/graphql', title: 'Picks Service GraphiQL', shouldPersistHeaders: false });
    expect(start.options.defaultQuery).toContain('todayPicks');
    expect(start.workers).toEqual({
      editorWorkerService: expect.stringMatching(/^\/graphql\/assets\/editor\.worker\.[0-9a-f]{16}\.js$/),
      json: expect.stringMatching(/^\/graphql\/assets\/json\.worker\.[0-9a-f]{16}\.js$/),
      graphql: expect.stringMatching(/^\/graphql\/assets\/graphql\.worker\.[0-9a-f]{16}\.js$/),
    });
    const references = [...page.matchAll(/(?:src|href)="([^"]*)"/g)].map((match) => match[1]!.replace(/\.[0-9a-f]{16}\./, '.<hash>.'));
    expect(references).toEqual(['/dashboard/assets/favicon.svg', '/graphql/assets/graphiql.<hash>.css', '/graphql/assets/start.<hash>.js', '/graphql/assets/graphiql.<hash>.js']);
  });

  it('answers under a Content-Security-Policy allowing scripts and workers from this origin only, no eval, no other host, and a fresh nonce for styles', async () => {
    const [first, second] = await Promise.all([1, 2].map(() => t.app.inject({ method: 'GET', url: '/graphql', headers: { accept: 'text/html' } })));
    const nonces = [first!, second!].map((res) => {
      const policy = String(res.headers['content-security-policy']);
      expect(directive(policy, 'default-src')).toEqual(["'none'"]);
      expect(directive(policy, 'script-src')).toEqual(["'self'"]);
      expect(directive(policy, 'worker-src')).toEqual(["'self'"]);
      expect(directive(policy, 'connect-src')).toEqual(["'self'"]);
      expect(directive(policy, 'img-src')).toEqual(["'self'", 'data:']);
      expect(directive(policy, 'font-src')).toEqual(["'self'", 'data:']);
      expect(directive(policy, 'frame-ancestors')).toEqual(["'none'"]);
      expect(directive(policy, 'object-src')).toEqual(["'none'"]);
      expect(directive(policy, 'base-uri')).toEqual(["'none'"]);
      // Style elements only from here or with the nonce; 'unsafe-inline' for style attributes alone.
      const nonce = /nonce="([^"]+)"/.exec(res.body)?.[1];
      expect(directive(policy, 'style-src-elem')).toEqual(["'self'", `'nonce-${nonce}'`]);
      expect(directive(policy, 'style-src-attr')).toEqual(["'unsafe-inline'"]);
      expect(policy.match(/'unsafe-inline'/g)).toHaveLength(1);
      expect(policy).not.toMatch(/unsafe-eval|https?:|\*/);
      expect(res.headers).toMatchObject({ 'x-content-type-options': 'nosniff', 'x-frame-options': 'DENY', 'cache-control': 'no-store' });
      expect(Number(res.headers['content-length'])).toBe(Buffer.byteLength(res.body));
      return nonce;
    });
    expect(nonces[0]).not.toBe(nonces[1]);
    expect(first!.body).not.toContain('placeholder');
  });

  it('serves the assets the page names, with their content types, an ETag and HEAD, kept a year under hashed names; other methods 405', async () => {
    const page = (await t.app.inject({ method: 'GET', url: '/graphql', headers: { accept: BROWSER_ACCEPT } })).body;
    const start = JSON.parse(/<script type="application\/json" id="graphiql-start">([\s\S]*?)<\/script>/.exec(page)![1]!);
    const named = [...page.matchAll(/(?:src|href)="(\/graphql\/assets\/[^"]*)"/g)].map((match) => match[1]!);
    const urls = [...named, ...Object.values(start.workers as Record<string, string>)];
    expect(urls).toHaveLength(6);
    for (const url of urls) {
      const res = await t.app.inject({ method: 'GET', url });
      expect(res.statusCode, url).toBe(200);
      expect(res.headers['content-type'], url).toBe(url.endsWith('.css') ? 'text/css; charset=utf-8' : 'text/javascript; charset=utf-8');
      expect(res.headers['x-content-type-options'], url).toBe('nosniff');
      expect(res.headers['cache-control'], url).toBe('public, max-age=31536000, immutable');
      expect(res.body.length, url).toBeGreaterThan(300);
      // The name carries the first 16 hex digits of the content's SHA-256.
      expect(url, url).toContain(`.${createHash('sha256').update(res.rawPayload).digest('hex').slice(0, 16)}.`);
      // Nothing the assets load by themselves comes from a CDN.
      expect(res.body, url).not.toMatch(/unpkg\.com|cdn\.jsdelivr|fonts\.googleapis|raw\.githubusercontent/);
      const unchanged = await t.app.inject({ method: 'GET', url, headers: { 'if-none-match': String(res.headers.etag) } });
      expect(unchanged.statusCode, url).toBe(304);
      const head = await t.app.inject({ method: 'HEAD', url });
      expect(head.statusCode, url).toBe(200);
      expect(head.body, url).toBe('');
      const post = await t.app.inject({ method: 'POST', url });
      expect(post.statusCode, url).toBe(405);
    }
    // GraphiQL's bundle defines the entry point the start script calls.
    const [stylesheet, startScript, bundle] = named;
    expect(stylesheet).toMatch(/\.css$/);
    expect((await t.app.inject({ method: 'GET', url: bundle! })).body).toContain('renderYogaGraphiQL');
    expect((await t.app.inject({ method: 'GET', url: startScript! })).body).toContain('YogaGraphiQL.renderYogaGraphiQL');
    // A name that is not one of them (an old, unhashed one, say) is not found.
    for (const url of ['/graphql/assets/graphiql.js', '/graphql/assets/graphiql.0000000000000000.js']) {
      expect((await t.app.inject({ method: 'GET', url })).statusCode, url).toBe(404);
    }
  });

  it('keeps option text inert: the title escaped as HTML, the options escaped for their script element', () => {
    const hostile = '</script><script>alert(1)</script><!--';
    const files = { start: '/s.js', script: '/g.js', stylesheet: '/g.css', workers: { editorWorkerService: '/e.js', json: '/j.js', graphql: '/q.js' } };
    const page = renderGraphiQLPage({ title: hostile, defaultQuery: hostile }, files);
    expect(page.match(/<script/g)).toHaveLength(3);
    expect(page.match(/<\/script>/g)).toHaveLength(3);
    expect(page).toContain('<title>&lt;/script&gt;&lt;script&gt;alert(1)&lt;/script&gt;&lt;!--</title>');
    const block = /<script type="application\/json" id="graphiql-start">([\s\S]*?)<\/script>/.exec(page)![1]!;
    expect(JSON.parse(block).options).toEqual({ title: hostile, defaultQuery: hostile });
  });

  it('leaves the API unchanged: JSON answers carry none of the page headers', async () => {
    const res = await t.app.inject({ method: 'GET', url: '/graphql?query=%7B__typename%7D', headers: { accept: 'application/json' } });
    expect(res.statusCode).toBe(200);
    expect(res.json()).toEqual({ data: { __typename: 'Query' } });
    expect(res.headers['content-type']).toMatch(/^application\/json/);
    expect(res.headers['content-security-policy']).toBeUndefined();
    // Every GraphQL answer is no-store (some carry secrets: docs/API.md, "Basics"), the page's rule or not.
    expect(res.headers['cache-control']).toBe('no-store');
  });

  it('is off in production, its assets with it', async () => {
    const res = await production.app.inject({ method: 'GET', url: '/graphql', headers: { accept: BROWSER_ACCEPT } });
    expect(res.headers['content-type'] ?? '').not.toContain('text/html');
    expect(res.headers['content-security-policy']).toBeUndefined();
    const files = await graphiqlFiles();
    for (const url of [files.script, files.start, files.stylesheet]) {
      const asset = await production.app.inject({ method: 'GET', url });
      expect(asset.statusCode, url).toBe(404);
      expect(asset.json()).toMatchObject({ error: 'not_found' });
    }
  });
});
