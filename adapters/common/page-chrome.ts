/**
 * The chrome of every HTML page the service renders (the dashboard, the record page, the landing
 * page, the API reference at /docs, GraphiQL): the security headers and Content-Security-Policy
 * built from each page's own data (where its scripts, styles, images, fonts and requests may come
 * from, its nonce, the hashes of its inline elements, where its forms post), and the base
 * stylesheet the dashboard, the record page and the landing page share.
 *
 * What every page has in common is declared once, here: no framing (frame-ancestors 'none' and,
 * for older browsers, X-Frame-Options), no plugins (object-src 'none'), no <base> (base-uri
 * 'none'), no MIME sniffing, no referrer beyond this origin, a browsing context group and
 * resources of its own (Cross-Origin-Opener- and -Resource-Policy), no camera, microphone,
 * geolocation or payment. A page names only what it loads.
 */
import { createHash, randomBytes } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { hashedFileName } from '../../src/server/static-assets.js';

/** Where one kind of resource may come from; nothing when empty. */
export interface Sources {
  /** This origin. */
  self?: boolean;
  /** The answer's nonce (`freshNonce`): elements carrying it. */
  nonce?: string;
  /** Inline elements by their content's hash, as `sha256Source` writes them. */
  hashes?: readonly string[];
  /** data: URLs. */
  data?: boolean;
}

/** One page's data: what it loads, from where. A kind not named falls back to `fallback`. */
export interface PagePolicy {
  /** default-src: nothing (the default) or this origin. */
  fallback?: 'none' | 'self';
  scripts?: Sources;
  workers?: Sources;
  styles?: Sources;
  /** style-src-elem: <style> and <link rel="stylesheet">, where it differs from `styles`. */
  styleElements?: Sources;
  /**
   * style-src-attr: style="..." attributes (which can neither load anything nor run code) allowed
   * whatever they say, the one place a page may name 'unsafe-inline'; absent, `styles` rules them.
   */
  styleAttributes?: 'unsafe-inline';
  images?: Sources;
  fonts?: Sources;
  connections?: Sources;
  /** Where the page's forms may send: nowhere, or this origin. */
  forms: 'none' | 'self';
}

/** This origin only. */
export const SELF: Sources = Object.freeze({ self: true });

/** The headers of every page but its policy, whatever it loads. */
const PAGE_BASELINE = {
  'x-frame-options': 'DENY',
  'x-content-type-options': 'nosniff',
  'referrer-policy': 'same-origin',
  'cross-origin-opener-policy': 'same-origin',
  'cross-origin-resource-policy': 'same-origin',
  'permissions-policy': 'camera=(), microphone=(), geolocation=(), payment=()',
} as const;

export type PageHeaders = Readonly<{ 'content-security-policy': string } & { [Name in keyof typeof PAGE_BASELINE]: string }>;

function sourceList(sources: Sources): string {
  return [
    ...(sources.self ? ["'self'"] : []),
    ...(sources.nonce === undefined ? [] : [`'nonce-${sources.nonce}'`]),
    ...(sources.hashes ?? []),
    ...(sources.data ? ['data:'] : []),
  ].join(' ');
}

/** The page's Content-Security-Policy: its sources in a fixed order of directives, then the rules every page shares. */
export function contentSecurityPolicy(policy: PagePolicy): string {
  const directives: [string, string][] = [
    ['script-src', sourceList(policy.scripts ?? {})],
    ['worker-src', sourceList(policy.workers ?? {})],
    ['style-src', sourceList(policy.styles ?? {})],
    ['style-src-elem', sourceList(policy.styleElements ?? {})],
    ['style-src-attr', policy.styleAttributes ? `'${policy.styleAttributes}'` : ''],
    ['img-src', sourceList(policy.images ?? {})],
    ['font-src', sourceList(policy.fonts ?? {})],
    ['connect-src', sourceList(policy.connections ?? {})],
  ];
  return [
    `default-src '${policy.fallback ?? 'none'}'`,
    ...directives.flatMap(([name, list]) => (list ? [`${name} ${list}`] : [])),
    "object-src 'none'",
    "base-uri 'none'",
    `form-action '${policy.forms}'`,
    "frame-ancestors 'none'",
  ].join('; ');
}

/** Every header a page answer carries for its security, from the page's own data. */
export function pageHeaders(policy: PagePolicy): PageHeaders {
  return Object.freeze({ 'content-security-policy': contentSecurityPolicy(policy), ...PAGE_BASELINE });
}

/** A nonce for one answer: 128 random bits, base64. */
export function freshNonce(): string {
  return randomBytes(16).toString('base64');
}

/** An inline element's source expression: its exact content's SHA-256, as a policy names it. */
export function sha256Source(content: string | Buffer): string {
  return `'sha256-${createHash('sha256').update(content).digest('base64')}'`;
}

/**
 * The base stylesheet (./assets/base.css, all in the cascade layer `base`), read once: the
 * dashboard and the record page link it, served with the dashboard's assets under a name carrying
 * its content's hash (BASE_STYLESHEET_PATH in ../dashboard/brand.ts, beside the favicon); the
 * landing page inlines it before its own rules.
 */
export const BASE_STYLESHEET = readFileSync(new URL('./assets/base.css', import.meta.url));
export const BASE_STYLESHEET_NAME = hashedFileName('base.css', BASE_STYLESHEET);
