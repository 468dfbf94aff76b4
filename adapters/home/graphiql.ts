/**
 * GraphiQL at GET /graphql (Accept: text/html, outside production) with nothing from another
 * host. yoga's own page loads GraphiQL from a CDN and stays at "Loading..." offline; this one is
 * a small HTML shell whose scripts, stylesheet and Monaco workers are GraphiQL's build from the
 * package @graphql-yoga/render-graphiql (the version matching graphql-yoga), served by the app
 * under /graphql/assets/. The package's own renderer inlines all of it (9 MB of HTML on every
 * answer, in one inline script); served as files they are cached, and the page runs no inline
 * code: its options travel in a JSON data block that the start script reads.
 */
import { createHash, randomBytes } from 'node:crypto';
import { readFileSync } from 'node:fs';
import type { FastifyInstance } from 'fastify';
import type { GraphiQLOptions } from 'graphql-yoga';
import { registerMethodNotAllowed } from '../common/method-not-allowed.js';
import { FAVICON_PATH } from '../dashboard/brand.js';
import { html } from '../dashboard/html.js';
import { notModified } from '../public/plugin.js';

export const GRAPHQL_PATH = '/graphql';
export const GRAPHIQL_ASSETS_PATH = '/graphql/assets';
const ASSET_CACHE_CONTROL = 'public, max-age=300';
const NONCE_PLACEHOLDER = 'graphiql-csp-nonce-placeholder';

/**
 * As strict as GraphiQL allows, in the manner of /docs: scripts and workers from this origin only
 * (no inline script, no eval); stylesheets from here or with this answer's nonce, which the start
 * script gives to the styles GraphiQL's scripts create (assets/graphiql-start.js says why);
 * 'unsafe-inline' only for style attributes, which Monaco sets everywhere (positions, sizes) and
 * which can neither load anything nor run code. Fonts and icons are data: URLs in GraphiQL's
 * stylesheet; requests go to this origin only.
 */
export function graphiqlContentSecurityPolicy(nonce: string): string {
  return [
    "default-src 'none'",
    "script-src 'self'",
    "worker-src 'self'",
    `style-src 'self' 'nonce-${nonce}'`,
    `style-src-elem 'self' 'nonce-${nonce}'`,
    "style-src-attr 'unsafe-inline'",
    "img-src 'self' data:",
    "font-src 'self' data:",
    "connect-src 'self'",
    "object-src 'none'",
    "base-uri 'none'",
    "form-action 'none'",
    "frame-ancestors 'none'",
  ].join('; ');
}

/** The page's other headers: not framed, never cached (GraphiQL is a tool, not content). */
const PAGE_HEADERS = {
  'content-type': 'text/html; charset=utf-8',
  'cache-control': 'no-store',
  'x-frame-options': 'DENY',
  'x-content-type-options': 'nosniff',
  'referrer-policy': 'same-origin',
  'cross-origin-opener-policy': 'same-origin',
  'permissions-policy': 'camera=(), microphone=(), geolocation=(), payment=()',
};

/** One answer of the page: a fresh nonce in its body and in its Content-Security-Policy. */
export function answerGraphiQLPage(page: string): { body: string; headers: Record<string, string> } {
  const nonce = randomBytes(16).toString('base64');
  return { body: page.replaceAll(NONCE_PLACEHOLDER, nonce), headers: { ...PAGE_HEADERS, 'content-security-policy': graphiqlContentSecurityPolicy(nonce) } };
}

/** What GraphiQL opens with: a query anyone may run, and where the admin token goes. */
const DEFAULT_QUERY = `# The operators' GraphQL API. Fields the docs mark
# "Anonymous" need no credentials; the others need
# the admin token: open Headers below and add
#   {"Authorization": "Bearer <ADMIN_TOKEN>"}
# Ctrl-Enter runs the query.
{
  todayPicks(limit: 5) {
    id
    sport
    homeTeam
    awayTeam
    selection
    odds
    edgePctPostTax
  }
}
`;

export const GRAPHIQL_OPTIONS: GraphiQLOptions = {
  title: 'Picks Service GraphiQL',
  endpoint: GRAPHQL_PATH,
  favicon: FAVICON_PATH,
  defaultQuery: DEFAULT_QUERY,
  // The admin token typed into Headers stays in the tab, not in the browser's storage.
  shouldPersistHeaders: false,
};

interface Asset {
  path: string;
  type: string;
  /** The asset's text, from the package (loaded on first use: production never needs it). */
  text: () => Promise<string>;
}

const fromPackage = (name: 'js' | 'css' | 'editorWorkerService' | 'jsonWorker' | 'graphqlWorker') => async () =>
  (await import('@graphql-yoga/render-graphiql/graphiql'))[name];

const START_SCRIPT = { path: `${GRAPHIQL_ASSETS_PATH}/start.js`, type: 'text/javascript; charset=utf-8', text: async () => readFileSync(new URL('./assets/graphiql-start.js', import.meta.url), 'utf8') };
const GRAPHIQL_SCRIPT = { path: `${GRAPHIQL_ASSETS_PATH}/graphiql.js`, type: 'text/javascript; charset=utf-8', text: fromPackage('js') };
const GRAPHIQL_STYLESHEET = { path: `${GRAPHIQL_ASSETS_PATH}/graphiql.css`, type: 'text/css; charset=utf-8', text: fromPackage('css') };

/** Monaco's workers by the label it asks for (the labels of yoga's own page). */
export const WORKER_PATHS = {
  editorWorkerService: `${GRAPHIQL_ASSETS_PATH}/editor.worker.js`,
  json: `${GRAPHIQL_ASSETS_PATH}/json.worker.js`,
  graphql: `${GRAPHIQL_ASSETS_PATH}/graphql.worker.js`,
} as const;

export const GRAPHIQL_ASSETS: readonly Asset[] = [
  START_SCRIPT,
  GRAPHIQL_SCRIPT,
  GRAPHIQL_STYLESHEET,
  { path: WORKER_PATHS.editorWorkerService, type: 'text/javascript; charset=utf-8', text: fromPackage('editorWorkerService') },
  { path: WORKER_PATHS.json, type: 'text/javascript; charset=utf-8', text: fromPackage('jsonWorker') },
  { path: WORKER_PATHS.graphql, type: 'text/javascript; charset=utf-8', text: fromPackage('graphqlWorker') },
];

/** A JSON value inside <script type="application/json">: nothing in it can close the element. */
function jsonForScriptElement(value: unknown): string {
  return JSON.stringify(value).replace(/</g, '\\u003c').replace(/\u2028/g, '\\u2028').replace(/\u2029/g, '\\u2029');
}

/**
 * The page yoga answers GET /graphql with (its renderGraphiQL option), the nonce still a
 * placeholder (answerGraphiQLPage). The start script, which carries the nonce, runs before
 * GraphiQL's bundle and renders GraphiQL with the page's options once the bundle has run.
 */
export function renderGraphiQLPage(options: GraphiQLOptions): string {
  const title = options.title ?? 'GraphiQL';
  // Escaped for a script element, whose text is never HTML-decoded: so added after html``.
  const startBlock = `<script type="application/json" id="graphiql-start">${jsonForScriptElement({ options, workers: WORKER_PATHS })}</script>`;
  return `<!doctype html>${html`<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<meta name="referrer" content="same-origin">
<title>${title}</title>
<link rel="icon" href="${options.favicon ?? FAVICON_PATH}" type="image/svg+xml">
<link rel="stylesheet" href="${GRAPHIQL_STYLESHEET.path}">
</head>
<body id="body" class="no-focus-outline">
<noscript>GraphiQL needs JavaScript.</noscript>
<div id="root">Loading ${title}...</div>
`.value}${startBlock}
<script nonce="${NONCE_PLACEHOLDER}" src="${START_SCRIPT.path}"></script>
<script src="${GRAPHIQL_SCRIPT.path}"></script>
</body>
</html>`;
}

/**
 * GET (and HEAD) for each asset, with an ETag (304 when unchanged) and a short public cache; other
 * methods 405. Registered only where GraphiQL is served.
 */
export function registerGraphiQLAssets(app: FastifyInstance): void {
  for (const asset of GRAPHIQL_ASSETS) {
    let loaded: Promise<{ body: Buffer; etag: string }> | null = null;
    const load = () =>
      (loaded ??= asset.text().then((text) => {
        const body = Buffer.from(text, 'utf8');
        return { body, etag: `"${createHash('sha256').update(body).digest('base64url').slice(0, 27)}"` };
      }));
    app.route({
      method: 'GET',
      url: asset.path,
      schema: { hide: true },
      handler: async (req, reply) => {
        const { body, etag } = await load();
        const headers = { 'x-content-type-options': 'nosniff', 'cache-control': ASSET_CACHE_CONTROL, 'cross-origin-resource-policy': 'same-origin', etag };
        if (notModified(req.headers['if-none-match'], etag)) return reply.status(304).headers(headers).send();
        return reply.status(200).headers(headers).type(asset.type).send(body);
      },
    });
    registerMethodNotAllowed(app, asset.path, ['GET']);
  }
}
