/**
 * The static asset hook alone (src/server/static-assets.ts): content-coding negotiation against
 * hand-worked Accept-Encoding values, hashed file names, and on a bare Fastify app that each body
 * is compressed once per coding however many requests ask (zlib counted), that an answer already
 * encoded is not encoded again, and that routes outside the rule are untouched.
 */
import { createHash } from 'node:crypto';
import Fastify, { type FastifyInstance } from 'fastify';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { brotliDecompressSync, gunzipSync, gzipSync } from 'node:zlib';

const calls = vi.hoisted(() => ({ brotli: 0, gzip: 0 }));
vi.mock('node:zlib', async (importOriginal) => {
  const actual = await importOriginal<typeof import('node:zlib')>();
  return {
    ...actual,
    brotliCompress: (...args: Parameters<typeof actual.brotliCompress>) => {
      calls.brotli += 1;
      return (actual.brotliCompress as (...a: unknown[]) => void)(...args);
    },
    gzip: (...args: Parameters<typeof actual.gzip>) => {
      calls.gzip += 1;
      return (actual.gzip as (...a: unknown[]) => void)(...args);
    },
  };
});

const { hashedFileName, matchesIfNoneMatch, negotiateContentCoding, registerStaticAssetEncoding } = await import('../../src/server/static-assets.js');

describe('negotiateContentCoding', () => {
  it('picks by weight, brotli before gzip before identity on a tie', () => {
    const cases: [string | undefined, string][] = [
      [undefined, 'identity'],
      ['', 'identity'],
      ['gzip, deflate, br, zstd', 'br'],
      ['gzip, deflate', 'gzip'],
      ['GZIP', 'gzip'],
      ['x-gzip', 'gzip'],
      ['br;q=0.5, gzip;q=0.9', 'gzip'],
      ['br;q=0.5', 'br'],
      ['br;q=0, gzip', 'gzip'],
      ['br;q=0, gzip;q=0', 'identity'],
      ['gzip;q=0.5, identity', 'identity'],
      ['gzip;q=0.5, identity;q=0.4', 'gzip'],
      ['identity;q=0', 'identity'],
      ['*', 'br'],
      ['*;q=0', 'identity'],
      ['*;q=0, gzip', 'gzip'],
      ['*;q=0.1, br;q=0', 'gzip'],
      ['deflate, zstd', 'identity'],
      ['br;q=1.5, gzip;q=0.2', 'gzip'],
      ['br;q=abc', 'identity'],
      ['br; q=0.001', 'br'],
      ['br;q=0.0001', 'identity'],
      [' , ;q=1, br ', 'br'],
      ['br;q=0, br', 'identity'],
    ];
    for (const [header, expected] of cases) expect(negotiateContentCoding(header), String(header)).toBe(expected);
    expect(negotiateContentCoding(['gzip;q=0.2', 'br;q=0.3'])).toBe('br');
  });

  it('If-None-Match: the tag, weakly compared, in a list, or *', () => {
    expect(matchesIfNoneMatch('"a"', '"a"')).toBe(true);
    expect(matchesIfNoneMatch('W/"a"', '"a"')).toBe(true);
    expect(matchesIfNoneMatch('"b", "a"', '"a"')).toBe(true);
    expect(matchesIfNoneMatch('*', '"a"')).toBe(true);
    expect(matchesIfNoneMatch('"a-br"', '"a"')).toBe(false);
    expect(matchesIfNoneMatch(undefined, '"a"')).toBe(false);
  });

  it('hashed names: the first 16 hex digits of the SHA-256 before the extension', () => {
    const body = Buffer.from('body { color: red }\n');
    const hex = createHash('sha256').update(body).digest('hex').slice(0, 16);
    expect(hashedFileName('record.css', body)).toBe(`record.${hex}.css`);
    expect(hashedFileName('editor.worker.js', body)).toBe(`editor.worker.${hex}.js`);
    expect(hashedFileName('LICENSE', body)).toBe(`LICENSE.${hex}`);
  });
});

describe('the hook on a bare app', () => {
  let app: FastifyInstance;
  const script = Buffer.from(`${'console.log("a static asset, repeated to be worth compressing");\n'.repeat(400)}`);
  const text = 'p { margin: 0 }\n'.repeat(300);
  const small = Buffer.from('x'.repeat(100));
  // gzip's stored blocks (level 0): still compressible, so the hook would compress it again if it ignored Content-Encoding.
  const precompressed = gzipSync(script, { level: 0 });

  beforeAll(async () => {
    app = Fastify();
    registerStaticAssetEncoding(app, (url) => url.startsWith('/assets/'));
    app.get('/assets/script.js', async (_req, reply) => reply.type('text/javascript').send(script));
    app.get('/assets/style.css', async (_req, reply) => reply.type('text/css').send(text));
    app.get('/assets/small.js', async (_req, reply) => reply.type('text/javascript').send(small));
    app.get('/assets/image.png', async (_req, reply) => reply.type('image/png').send(script));
    app.get('/assets/encoded.js', async (_req, reply) => reply.type('text/javascript').header('content-encoding', 'gzip').send(precompressed));
    app.get('/page', async (_req, reply) => reply.type('text/javascript').send(script));
    await app.ready();
  });
  afterAll(() => app.close());

  it('compresses each body once per coding, however many requests ask, at the same time or later', async () => {
    const before = { ...calls };
    const first = await Promise.all(Array.from({ length: 5 }, () => app.inject({ url: '/assets/script.js', headers: { 'accept-encoding': 'br' } })));
    const later = await Promise.all(Array.from({ length: 5 }, () => app.inject({ url: '/assets/script.js', headers: { 'accept-encoding': 'gzip' } })));
    for (let round = 0; round < 3; round += 1) {
      await app.inject({ url: '/assets/script.js', headers: { 'accept-encoding': 'br' } });
      await app.inject({ url: '/assets/script.js', headers: { 'accept-encoding': 'gzip' } });
      await app.inject({ url: '/assets/script.js', method: 'HEAD', headers: { 'accept-encoding': 'br' } });
    }
    expect(calls.brotli - before.brotli).toBe(1);
    expect(calls.gzip - before.gzip).toBe(1);
    for (const res of first) expect(brotliDecompressSync(res.rawPayload).equals(script)).toBe(true);
    for (const res of later) expect(gunzipSync(res.rawPayload).equals(script)).toBe(true);
  });

  it('a string body (a package bundle) too: compressed once, decompressing to its UTF-8 bytes', async () => {
    const before = calls.brotli;
    for (let round = 0; round < 3; round += 1) {
      const res = await app.inject({ url: '/assets/style.css', headers: { 'accept-encoding': 'br' } });
      expect(res.headers['content-encoding']).toBe('br');
      expect(brotliDecompressSync(res.rawPayload).toString('utf8')).toBe(text);
    }
    expect(calls.brotli - before).toBe(1);
  });

  it('leaves alone what does not pay or is encoded already: small bodies, images, a gzip body, other routes', async () => {
    const before = { ...calls };
    const smallAnswer = await app.inject({ url: '/assets/small.js', headers: { 'accept-encoding': 'br, gzip' } });
    expect(smallAnswer.headers['content-encoding']).toBeUndefined();
    expect(smallAnswer.rawPayload.equals(small)).toBe(true);
    expect(smallAnswer.headers.etag).toMatch(/^"[A-Za-z0-9_-]{27}"$/);
    const image = await app.inject({ url: '/assets/image.png', headers: { 'accept-encoding': 'br, gzip' } });
    expect(image.headers['content-encoding']).toBeUndefined();
    expect(image.rawPayload.equals(script)).toBe(true);
    const encoded = await app.inject({ url: '/assets/encoded.js', headers: { 'accept-encoding': 'br' } });
    expect(encoded.headers['content-encoding']).toBe('gzip');
    expect(encoded.rawPayload.equals(precompressed)).toBe(true);
    expect(gunzipSync(encoded.rawPayload).equals(script)).toBe(true);
    const page = await app.inject({ url: '/page', headers: { 'accept-encoding': 'br' } });
    expect(page.headers['content-encoding']).toBeUndefined();
    expect(page.headers.vary).toBeUndefined();
    expect(page.headers.etag).toBeUndefined();
    expect(calls).toEqual(before);
  });
});
