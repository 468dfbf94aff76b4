/**
 * The page chrome (adapters/common/page-chrome.ts): every HTML page's security headers built
 * from its own data, the rules they share declared once; nonces only where a page gives one;
 * hashes of the exact bytes served; the base stylesheet in its cascade layer, so the order a page
 * links it in cannot matter. Expected values are written out here, not taken from the module.
 */
import { createHash } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { BASE_STYLESHEET, BASE_STYLESHEET_NAME, contentSecurityPolicy, freshNonce, pageHeaders, sha256Source } from '../../adapters/common/page-chrome.js';
import { CONTENT_SECURITY_POLICY as DASHBOARD_POLICY } from '../../adapters/dashboard/setup.js';
import { docsPageHeaders } from '../../adapters/docs/plugin.js';
import { answerGraphiQLPage, graphiqlPageHeaders } from '../../adapters/home/graphiql.js';
import { homePage } from '../../adapters/home/page.js';
import { HOME_CONTENT_SECURITY_POLICY } from '../../adapters/home/plugin.js';
import { RECORD_CONTENT_SECURITY_POLICY } from '../../adapters/record/plugin.js';

const repositoryFile = (path: string) => readFileSync(new URL(`../../${path}`, import.meta.url));

/** The headers every page carries besides its policy. */
const BASELINE = {
  'x-frame-options': 'DENY',
  'x-content-type-options': 'nosniff',
  'referrer-policy': 'same-origin',
  'cross-origin-opener-policy': 'same-origin',
  'cross-origin-resource-policy': 'same-origin',
  'permissions-policy': 'camera=(), microphone=(), geolocation=(), payment=()',
};
/** The directives every policy ends with. */
const CLOSING = (forms: string) => `object-src 'none'; base-uri 'none'; form-action '${forms}'; frame-ancestors 'none'`;

const NONCE = 'AAECAwQFBgcICQoLDA0ODw==';
const SCALAR_HASHES = "'sha256-l/2OpPg0d+2VLTLgwjf5mQo2CYwHDEqdj5TjbfEyVJI=' 'sha256-T13Uev3xCax2N28XaoAE8DOzQZKvPp7ZQVAi1iRREjo='";

/** The landing page's one inline stylesheet, as served. */
function homeStylesheet(): string {
  return /<style>([\s\S]*?)<\/style>/.exec(homePage({ graphiql: true }))![1]!;
}

describe('the headers of each page, from its own data', () => {
  it('the dashboard: everything from this origin, forms posting here', () => {
    expect(DASHBOARD_POLICY).toBe(`default-src 'self'; script-src 'self'; style-src 'self'; img-src 'self'; font-src 'self'; connect-src 'self'; ${CLOSING('self')}`);
  });

  it('the record page: stylesheets and favicon from here, no script, its filters posting here', () => {
    expect(RECORD_CONTENT_SECURITY_POLICY).toBe(`default-src 'none'; style-src 'self'; img-src 'self'; ${CLOSING('self')}`);
  });

  it('the landing page: its one inline stylesheet by the hash of the bytes served, no script, no form', () => {
    const hash = `'sha256-${createHash('sha256').update(homeStylesheet()).digest('base64')}'`;
    expect(HOME_CONTENT_SECURITY_POLICY).toBe(`default-src 'none'; style-src ${hash}; img-src 'self'; ${CLOSING('none')}`);
  });

  it("/docs: the answer's nonce for scripts and styles, Scalar's two stylesheets by hash, style attributes", () => {
    expect(docsPageHeaders(NONCE)).toEqual({
      ...BASELINE,
      'content-security-policy':
        `default-src 'none'; script-src 'self' 'nonce-${NONCE}'; style-src 'self' 'nonce-${NONCE}'; style-src-elem 'self' 'nonce-${NONCE}' ${SCALAR_HASHES}; ` +
        `style-src-attr 'unsafe-inline'; img-src 'self' data:; font-src 'self'; connect-src 'self'; ${CLOSING('none')}`,
    });
  });

  it("GraphiQL: scripts and workers from here only, the answer's nonce for styles alone, data: fonts and images", () => {
    expect(graphiqlPageHeaders(NONCE)).toEqual({
      ...BASELINE,
      'content-security-policy':
        `default-src 'none'; script-src 'self'; worker-src 'self'; style-src 'self' 'nonce-${NONCE}'; style-src-elem 'self' 'nonce-${NONCE}'; ` +
        `style-src-attr 'unsafe-inline'; img-src 'self' data:; font-src 'self' data:; connect-src 'self'; ${CLOSING('none')}`,
    });
  });

  it('every page carries the same baseline, frozen, beside its policy', () => {
    const pages = [
      pageHeaders({ fallback: 'self', styles: { self: true }, forms: 'self' }),
      pageHeaders({ forms: 'none' }),
      docsPageHeaders(NONCE),
      graphiqlPageHeaders(NONCE),
    ];
    for (const headers of pages) {
      const { 'content-security-policy': policy, ...rest } = headers;
      expect(rest).toEqual(BASELINE);
      expect(policy).toMatch(/^default-src '(none|self)'; /);
      expect(policy).toMatch(/; object-src 'none'; base-uri 'none'; form-action '(none|self)'; frame-ancestors 'none'$/);
      expect(Object.isFrozen(headers)).toBe(true);
    }
  });

  it('names only the directives a page gives sources for, in one order whatever the order given', () => {
    expect(contentSecurityPolicy({ forms: 'none' })).toBe(`default-src 'none'; ${CLOSING('none')}`);
    expect(contentSecurityPolicy({ connections: { self: true }, images: { data: true }, scripts: {}, forms: 'self' })).toBe(
      `default-src 'none'; img-src data:; connect-src 'self'; ${CLOSING('self')}`,
    );
  });
});

describe('nonces', () => {
  it('appear only in the directives given one', () => {
    expect(contentSecurityPolicy({ styles: { self: true }, images: { self: true }, forms: 'none' })).not.toContain('nonce');
    expect(RECORD_CONTENT_SECURITY_POLICY).not.toContain('nonce');
    expect(HOME_CONTENT_SECURITY_POLICY).not.toContain('nonce');
    expect(DASHBOARD_POLICY).not.toContain('nonce');
    const withNonce = (policy: string) =>
      policy
        .split('; ')
        .filter((directive) => directive.includes(`'nonce-${NONCE}'`))
        .map((directive) => directive.split(' ')[0]);
    expect(withNonce(docsPageHeaders(NONCE)['content-security-policy'])).toEqual(['script-src', 'style-src', 'style-src-elem']);
    expect(withNonce(graphiqlPageHeaders(NONCE)['content-security-policy'])).toEqual(['style-src', 'style-src-elem']);
    expect(contentSecurityPolicy({ scripts: { nonce: NONCE }, forms: 'none' })).toBe(`default-src 'none'; script-src 'nonce-${NONCE}'; ${CLOSING('none')}`);
  });

  it('are 128 random bits, fresh on every call, and each GraphiQL answer carries its own in body and policy', () => {
    const nonces = new Set(Array.from({ length: 20 }, () => freshNonce()));
    expect(nonces.size).toBe(20);
    for (const nonce of nonces) expect(Buffer.from(nonce, 'base64')).toHaveLength(16);
    const template = '<script nonce="graphiql-csp-nonce-placeholder" src="/s.js"></script>';
    const [first, second] = [answerGraphiQLPage(template), answerGraphiQLPage(template)];
    for (const answer of [first, second]) {
      const nonce = /nonce="([^"]+)"/.exec(answer.body)![1]!;
      expect(answer.headers['content-security-policy']).toContain(`style-src-elem 'self' 'nonce-${nonce}'`);
      expect(answer.headers).toMatchObject({ ...BASELINE, 'content-type': 'text/html; charset=utf-8', 'cache-control': 'no-store' });
    }
    expect(first.body).not.toBe(second.body);
  });
});

describe('hashes and the base stylesheet', () => {
  it("sha256Source is the policy's form of the content's SHA-256", () => {
    expect(sha256Source('body{margin:0}')).toBe(`'sha256-${createHash('sha256').update('body{margin:0}').digest('base64')}'`);
    expect(sha256Source(Buffer.from('body{margin:0}'))).toBe(sha256Source('body{margin:0}'));
  });

  it('the base stylesheet is the file, named by its hash, and the landing page inlines it before its own rules', () => {
    const file = repositoryFile('adapters/common/assets/base.css');
    expect(BASE_STYLESHEET.equals(file)).toBe(true);
    expect(BASE_STYLESHEET_NAME).toBe(`base.${createHash('sha256').update(file).digest('hex').slice(0, 16)}.css`);
    const inline = homeStylesheet();
    expect(inline).toMatch(/^@layer base\{:root\{--font:/);
    expect(inline).toContain('.destinations{');
    expect(inline).not.toMatch(/\/\*|\n/);
  });

  it('is all in the layer `base`, and no page stylesheet is layered: page rules win whatever the order of the links', () => {
    const rules = (path: string) => repositoryFile(path).toString('utf8').replace(/\/\*[\s\S]*?\*\//g, '').trim();
    const base = rules('adapters/common/assets/base.css');
    expect(base).toMatch(/^@layer base \{/);
    // The layer's block closes at the very end: nothing of the base outside it.
    let depth = 0;
    const closes: number[] = [];
    for (let i = 0; i < base.length; i += 1) {
      if (base[i] === '{') depth += 1;
      if (base[i] === '}' && --depth === 0) closes.push(i);
    }
    expect(closes).toEqual([base.length - 1]);
    for (const page of ['adapters/dashboard/assets/dashboard.css', 'adapters/record/assets/record.css', 'adapters/home/assets/home.css']) {
      expect(rules(page), page).not.toContain('@layer');
    }
  });
});
