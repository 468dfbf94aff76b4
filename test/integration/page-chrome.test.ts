/**
 * The page chrome as served (adapters/common/page-chrome.ts): every HTML page of the service
 * (landing page, record page and its error page, dashboard pages, /docs, GraphiQL) answers with
 * the same baseline of security headers beside its own policy; the base stylesheet the dashboard
 * and the record page link is the repository's file byte for byte, kept a year under its hashed
 * name and compressed like the other assets.
 */
import { createHash } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { brotliDecompressSync } from 'node:zlib';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { pageHeaders } from '../../adapters/common/page-chrome.js';
import { createTestApp, type TestApp } from '../helpers/app.js';

/** The headers every page carries beside its policy (their values are pinned by test/adapters/page-chrome.test.ts). */
const { 'content-security-policy': _policy, ...BASELINE } = pageHeaders({ forms: 'none' });
const base = readFileSync(new URL('../../adapters/common/assets/base.css', import.meta.url));
const BASE_PATH = `/dashboard/assets/base.${createHash('sha256').update(base).digest('hex').slice(0, 16)}.css`;

let t: TestApp;

beforeAll(async () => {
  t = await createTestApp();
});

afterAll(async () => {
  await t?.close();
});

const get = (url: string, headers: Record<string, string> = {}) => t.app.inject({ method: 'GET', url, headers });

describe('the chrome of every HTML page', () => {
  it.each([
    ['/', 200],
    ['/record', 200],
    ['/record?days_back=0', 400],
    ['/dashboard/login', 200],
    ['/dashboard/nope', 404],
    ['/docs/', 200],
    ['/graphql', 200],
  ])('%s answers its page with the shared baseline and a policy closing the same way', async (url, status) => {
    const res = await get(url, { accept: 'text/html' });
    expect(res.statusCode).toBe(status);
    expect(res.headers['content-type']).toBe('text/html; charset=utf-8');
    expect(res.headers).toMatchObject(BASELINE);
    expect(String(res.headers['content-security-policy'])).toMatch(/^default-src '(none|self)'; .*; object-src 'none'; base-uri 'none'; form-action '(none|self)'; frame-ancestors 'none'$/);
  });
});

describe('the base stylesheet', () => {
  it('is linked by the dashboard and the record page, and inlined by the landing page', async () => {
    const link = `<link rel="stylesheet" href="${BASE_PATH}">`;
    expect((await get('/dashboard/login')).body).toContain(link);
    expect((await get('/record')).body).toContain(link);
    expect((await get('/record?days_back=0')).body).toContain(link);
    expect((await get('/')).body).not.toContain('<link rel="stylesheet"');
  });

  it('is served as the file, kept a year under its hashed name, compressed on demand; other names are not found', async () => {
    const res = await get(BASE_PATH);
    expect(res.statusCode).toBe(200);
    expect(res.headers['content-type']).toBe('text/css; charset=utf-8');
    expect(res.headers['cache-control']).toBe('public, max-age=31536000, immutable');
    expect(res.rawPayload.equals(base)).toBe(true);
    const compressed = await get(BASE_PATH, { 'accept-encoding': 'br' });
    expect(compressed.headers['content-encoding']).toBe('br');
    expect(brotliDecompressSync(compressed.rawPayload).equals(base)).toBe(true);
    expect((await get(BASE_PATH, { 'if-none-match': String(res.headers.etag) })).statusCode).toBe(304);
    for (const url of ['/dashboard/assets/base.css', '/dashboard/assets/base.0000000000000000.css', '/record/assets/base.css']) {
      expect((await get(url)).statusCode, url).toBe(404);
    }
  });
});
