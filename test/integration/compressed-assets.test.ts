/**
 * Static assets answered compressed (docs/PERFORMANCE.md, "Compressed static assets"), through
 * inject(): Scalar's bundle under /docs, GraphiQL's files, the record page's stylesheet and the
 * dashboard's assets. Every brotli and gzip body decompresses to the exact bytes of the file it
 * comes from, read here from the package or the repository on disk (not through the code under
 * test); identity when no coding is accepted; Vary, ETags per representation, 304, caching
 * headers and HEAD.
 */
import { createHash } from 'node:crypto';
import { readFileSync } from 'node:fs';
import vm from 'node:vm';
import { brotliDecompressSync, gunzipSync } from 'node:zlib';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestApp, type TestApp } from '../helpers/app.js';

const IMMUTABLE = 'public, max-age=31536000, immutable';

/** Scalar's standalone bundle, as the package holds it: a string literal in its dist/index.js. */
function scalarBundleFromPackage(): Buffer {
  const source = readFileSync(new URL(import.meta.resolve('@scalar/fastify-api-reference')), 'utf8');
  const literal = /\nvar standalone_default = ("(?:[^"\\]|\\.)*");\n/.exec(source)?.[1];
  if (!literal) throw new Error('the bundle literal was not found in @scalar/fastify-api-reference');
  return Buffer.from(vm.runInNewContext(literal) as string, 'utf8');
}

const repositoryFile = (path: string) => readFileSync(new URL(`../../${path}`, import.meta.url));

interface Asset {
  url: string;
  original: Buffer;
  type: RegExp;
  cacheControl: string;
}

let t: TestApp;
let assets: Asset[];

beforeAll(async () => {
  t = await createTestApp();
  // GraphiQL's page names its files (hashed); the package exports their text.
  const page = (await t.app.inject({ method: 'GET', url: '/graphql', headers: { accept: 'text/html' } })).body;
  const start = JSON.parse(/<script type="application\/json" id="graphiql-start">([\s\S]*?)<\/script>/.exec(page)![1]!) as { workers: Record<string, string> };
  const named = (name: string, extension: string) => new RegExp(`(?:src|href)="(/graphql/assets/${name}\\.[0-9a-f]{16}\\.${extension})"`).exec(page)![1]!;
  const graphiql = await import('@graphql-yoga/render-graphiql/graphiql');
  const recordPage = (await t.app.inject({ method: 'GET', url: '/record' })).body;
  const recordStylesheet = /<link rel="stylesheet" href="([^"]+)">/.exec(recordPage)![1]!;
  const javascript = /^text\/javascript; charset=utf-8$/;
  assets = [
    { url: '/docs/js/scalar.js', original: scalarBundleFromPackage(), type: /^application\/javascript; charset=utf-8$/, cacheControl: 'public, no-cache' },
    { url: named('graphiql', 'js'), original: Buffer.from(graphiql.js, 'utf8'), type: javascript, cacheControl: IMMUTABLE },
    { url: named('graphiql', 'css'), original: Buffer.from(graphiql.css, 'utf8'), type: /^text\/css; charset=utf-8$/, cacheControl: IMMUTABLE },
    { url: start.workers.json!, original: Buffer.from(graphiql.jsonWorker, 'utf8'), type: javascript, cacheControl: IMMUTABLE },
    { url: named('start', 'js'), original: repositoryFile('adapters/home/assets/graphiql-start.js'), type: javascript, cacheControl: IMMUTABLE },
    { url: recordStylesheet, original: repositoryFile('adapters/record/assets/record.css'), type: /^text\/css; charset=utf-8$/, cacheControl: IMMUTABLE },
    { url: '/dashboard/assets/dashboard.css', original: repositoryFile('adapters/dashboard/assets/dashboard.css'), type: /^text\/css/, cacheControl: 'public, max-age=300' },
    { url: '/dashboard/assets/dashboard.js', original: repositoryFile('adapters/dashboard/assets/dashboard.js'), type: /^text\/javascript/, cacheControl: 'public, max-age=300' },
  ];
});

afterAll(async () => {
  await t?.close();
});

const get = (url: string, headers: Record<string, string> = {}, method: 'GET' | 'HEAD' = 'GET') => t.app.inject({ method, url, headers });

describe('compressed static assets', () => {
  it('the hashed names carry the first 16 hex digits of the SHA-256 of the bytes they serve', () => {
    for (const asset of assets.filter((candidate) => candidate.cacheControl === IMMUTABLE)) {
      expect(asset.url, asset.url).toContain(`.${createHash('sha256').update(asset.original).digest('hex').slice(0, 16)}.`);
    }
  });

  it('brotli and gzip bodies decompress to the exact original bytes, with their own length, Vary and caching headers', async () => {
    for (const asset of assets) {
      for (const [accept, coding, decompress] of [
        ['br', 'br', brotliDecompressSync],
        ['gzip', 'gzip', gunzipSync],
        ['gzip, deflate, br, zstd', 'br', brotliDecompressSync],
        ['br;q=0.5, gzip;q=0.9', 'gzip', gunzipSync],
        ['x-gzip', 'gzip', gunzipSync],
        ['*', 'br', brotliDecompressSync],
      ] as const) {
        const res = await get(asset.url, { 'accept-encoding': accept });
        const label = `${asset.url} (${accept})`;
        expect(res.statusCode, label).toBe(200);
        expect(res.headers['content-encoding'], label).toBe(coding);
        expect(res.headers['content-type'], label).toMatch(asset.type);
        expect(res.headers.vary, label).toBe('Accept-Encoding');
        expect(res.headers['cache-control'], label).toBe(asset.cacheControl);
        expect(res.headers['x-content-type-options'], label).toBe('nosniff');
        expect(Number(res.headers['content-length']), label).toBe(res.rawPayload.length);
        expect(res.rawPayload.length, label).toBeLessThan(asset.original.length);
        // Compressed once, not twice: one decompression gives the original.
        expect(decompress(res.rawPayload).equals(asset.original), label).toBe(true);
      }
    }
  });

  it('identity when no coding is accepted: no header, empty, q=0, identity only, unknown codings', async () => {
    for (const asset of assets) {
      for (const headers of [{}, { 'accept-encoding': '' }, { 'accept-encoding': 'identity' }, { 'accept-encoding': 'br;q=0, gzip;q=0' }, { 'accept-encoding': '*;q=0' }, { 'accept-encoding': 'deflate, zstd' }, { 'accept-encoding': 'gzip;q=0, identity;q=0' }, { 'accept-encoding': 'br;q=2' }] as Record<string, string>[]) {
        const res = await get(asset.url, headers);
        const label = `${asset.url} ${JSON.stringify(headers)}`;
        expect(res.statusCode, label).toBe(200);
        expect(res.headers['content-encoding'], label).toBeUndefined();
        expect(res.headers.vary, label).toBe('Accept-Encoding');
        expect(Number(res.headers['content-length']), label).toBe(asset.original.length);
        expect(res.rawPayload.equals(asset.original), label).toBe(true);
      }
    }
  });

  it('HEAD answers the headers of GET, its Content-Length the encoded length, without a body', async () => {
    for (const asset of assets) {
      for (const accept of ['br', 'gzip', 'identity']) {
        const [got, head] = await Promise.all([get(asset.url, { 'accept-encoding': accept }), get(asset.url, { 'accept-encoding': accept }, 'HEAD')]);
        const label = `${asset.url} (${accept})`;
        expect(head.statusCode, label).toBe(200);
        expect(head.rawPayload.length, label).toBe(0);
        for (const name of ['content-type', 'content-encoding', 'content-length', 'vary', 'etag', 'cache-control']) expect(head.headers[name], `${label} ${name}`).toBe(got.headers[name]);
      }
    }
  });

  it('one ETag per representation: If-None-Match of the coding answered gives 304, another coding 200', async () => {
    for (const asset of assets) {
      const etags = new Map<string, string>();
      for (const accept of ['br', 'gzip', 'identity']) etags.set(accept, String((await get(asset.url, { 'accept-encoding': accept })).headers.etag));
      expect(new Set(etags.values()).size, asset.url).toBe(3);
      for (const [accept, etag] of etags) {
        const unchanged = await get(asset.url, { 'accept-encoding': accept, 'if-none-match': etag });
        expect(unchanged.statusCode, `${asset.url} ${accept}`).toBe(304);
        expect(unchanged.rawPayload.length).toBe(0);
        expect(unchanged.headers.vary).toBe('Accept-Encoding');
        expect(unchanged.headers.etag).toBe(etag);
        expect(unchanged.headers['cache-control']).toBe(asset.cacheControl);
        const headUnchanged = await get(asset.url, { 'accept-encoding': accept, 'if-none-match': `W/${etag}` }, 'HEAD');
        expect(headUnchanged.statusCode, `${asset.url} HEAD ${accept}`).toBe(304);
        expect(headUnchanged.rawPayload.length).toBe(0);
      }
      const other = await get(asset.url, { 'accept-encoding': 'gzip', 'if-none-match': etags.get('br')! });
      expect(other.statusCode, asset.url).toBe(200);
      expect(other.headers['content-encoding']).toBe('gzip');
    }
  });

  it('pages are left alone: no content coding on HTML, JSON or errors', async () => {
    for (const url of ['/docs/', '/record', '/', '/api/public/picks/today', '/graphql/assets/unknown.js', '/dashboard/assets/nothing.css']) {
      const res = await get(url, { 'accept-encoding': 'br, gzip', accept: 'text/html' });
      expect(res.headers['content-encoding'], url).toBeUndefined();
    }
  });

  it('the two big bundles shrink to under a third', async () => {
    for (const url of ['/docs/js/scalar.js', assets[1]!.url]) {
      const [plain, br, gz] = await Promise.all(['identity', 'br', 'gzip'].map((accept) => get(url, { 'accept-encoding': accept })));
      expect(plain!.rawPayload.length, url).toBeGreaterThan(4_000_000);
      expect(br!.rawPayload.length * 3, url).toBeLessThan(plain!.rawPayload.length);
      expect(gz!.rawPayload.length * 3, url).toBeLessThan(plain!.rawPayload.length);
    }
  });
});
