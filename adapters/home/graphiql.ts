/**
 * GraphiQL at GET /graphql (Accept: text/html, outside production) with nothing from another
 * host. yoga's own page loads GraphiQL from a CDN and stays at "Loading..." offline; this one is
 * a small HTML shell whose scripts, stylesheet and Monaco workers are GraphiQL's build from the
 * package @graphql-yoga/render-graphiql (the version matching graphql-yoga), served by the app
 * under /graphql/assets/. The package's own renderer inlines all of it (9 MB of HTML on every
 * answer, in one inline script); served as files under names carrying their content's hash, they
 * are compressed and kept by browsers, and the page runs no inline code: its options travel in a
 * JSON data block that the start script reads.
 */
import { readFileSync } from 'node:fs';
import type { FastifyInstance } from 'fastify';
import type { GraphiQLOptions } from 'graphql-yoga';
import { registerMethodNotAllowed } from '../common/method-not-allowed.js';
import { freshNonce, pageHeaders, SELF, type PageHeaders } from '../common/page-chrome.js';
import { FAVICON_PATH } from '../dashboard/brand.js';
import { html } from '../dashboard/html.js';
import { hashedFileName, IMMUTABLE_CACHE_CONTROL } from '../../src/server/static-assets.js';

export const GRAPHQL_PATH = '/graphql';
export const GRAPHIQL_ASSETS_PATH = '/graphql/assets';
const NONCE_PLACEHOLDER = 'graphiql-csp-nonce-placeholder';

/**
 * The page's headers with this answer's nonce. The policy is as strict as GraphiQL allows, in the
 * manner of /docs: scripts and workers from this origin only (no inline script, no eval);
 * stylesheets from here or with this answer's nonce, which the start script gives to the styles
 * GraphiQL's scripts create (assets/graphiql-start.js says why); 'unsafe-inline' only for style
 * attributes, which Monaco sets everywhere (positions, sizes) and which can neither load anything
 * nor run code. Fonts and icons are data: URLs in GraphiQL's stylesheet; requests go to this
 * origin only.
 */
export function graphiqlPageHeaders(nonce: string): PageHeaders {
  return pageHeaders({
    scripts: SELF,
    workers: SELF,
    styles: { self: true, nonce },
    styleElements: { self: true, nonce },
    styleAttributes: 'unsafe-inline',
    images: { self: true, data: true },
    fonts: { self: true, data: true },
    connections: SELF,
    forms: 'none',
  });
}

/** One answer of the page: a fresh nonce in its body and in its Content-Security-Policy; never cached (GraphiQL is a tool, not content). */
export function answerGraphiQLPage(page: string): { body: string; headers: Record<string, string> } {
  const nonce = freshNonce();
  return {
    body: page.replaceAll(NONCE_PLACEHOLDER, nonce),
    headers: { 'content-type': 'text/html; charset=utf-8', 'cache-control': 'no-store', ...graphiqlPageHeaders(nonce) },
  };
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

/** GraphiQL's files as served: under names carrying their content's hash, so browsers keep them a year. */
export interface GraphiQLFiles {
  /** Each file by its hashed name (the last segment of its path). */
  byName: ReadonlyMap<string, { body: Buffer; type: string }>;
  start: string;
  script: string;
  stylesheet: string;
  /** Monaco's workers by the label it asks for (the labels of yoga's own page). */
  workers: { editorWorkerService: string; json: string; graphql: string };
}

const JAVASCRIPT = 'text/javascript; charset=utf-8';

/**
 * The files from the package @graphql-yoga/render-graphiql (strings of its module) and the start
 * script of this adapter, loaded, hashed and named once per process, on first use: production,
 * where GraphiQL is off, never loads the 9 MB module.
 */
async function loadGraphiQLFiles(): Promise<GraphiQLFiles> {
  const graphiql = await import('@graphql-yoga/render-graphiql/graphiql');
  const byName = new Map<string, { body: Buffer; type: string }>();
  const add = (name: string, text: string, type: string) => {
    const body = Buffer.from(text, 'utf8');
    const hashed = hashedFileName(name, body);
    byName.set(hashed, { body, type });
    return `${GRAPHIQL_ASSETS_PATH}/${hashed}`;
  };
  return {
    byName,
    start: add('start.js', readFileSync(new URL('./assets/graphiql-start.js', import.meta.url), 'utf8'), JAVASCRIPT),
    script: add('graphiql.js', graphiql.js, JAVASCRIPT),
    stylesheet: add('graphiql.css', graphiql.css, 'text/css; charset=utf-8'),
    workers: {
      editorWorkerService: add('editor.worker.js', graphiql.editorWorkerService, JAVASCRIPT),
      json: add('json.worker.js', graphiql.jsonWorker, JAVASCRIPT),
      graphql: add('graphql.worker.js', graphiql.graphqlWorker, JAVASCRIPT),
    },
  };
}

let files: Promise<GraphiQLFiles> | null = null;
export function graphiqlFiles(): Promise<GraphiQLFiles> {
  files ??= loadGraphiQLFiles().catch((error: unknown) => {
    files = null;
    throw error;
  });
  return files;
}

/** A JSON value inside <script type="application/json">: nothing in it can close the element. */
function jsonForScriptElement(value: unknown): string {
  return JSON.stringify(value).replace(/</g, '\\u003c').replace(/\u2028/g, '\\u2028').replace(/\u2029/g, '\\u2029');
}

/**
 * The page yoga answers GET /graphql with (its renderGraphiQL option), the nonce still a
 * placeholder (answerGraphiQLPage), naming the files `files` serves. The start script, which
 * carries the nonce, runs before GraphiQL's bundle and renders GraphiQL with the page's options
 * once the bundle has run.
 */
export function renderGraphiQLPage(options: GraphiQLOptions, files: Pick<GraphiQLFiles, 'start' | 'script' | 'stylesheet' | 'workers'>): string {
  const title = options.title ?? 'GraphiQL';
  // Escaped for a script element, whose text is never HTML-decoded: so added after html``.
  const startBlock = `<script type="application/json" id="graphiql-start">${jsonForScriptElement({ options, workers: files.workers })}</script>`;
  return `<!doctype html>${html`<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<meta name="referrer" content="same-origin">
<title>${title}</title>
<link rel="icon" href="${options.favicon ?? FAVICON_PATH}" type="image/svg+xml">
<link rel="stylesheet" href="${files.stylesheet}">
</head>
<body id="body" class="no-focus-outline">
<noscript>GraphiQL needs JavaScript.</noscript>
<div id="root">Loading ${title}...</div>
`.value}${startBlock}
<script nonce="${NONCE_PLACEHOLDER}" src="${files.start}"></script>
<script src="${files.script}"></script>
</body>
</html>`;
}

/** yoga's renderGraphiQL: the page, once GraphiQL's files are loaded (on the first page asked for). */
export async function renderGraphiQL(options: GraphiQLOptions): Promise<string> {
  return renderGraphiQLPage(options, await graphiqlFiles());
}

/**
 * GET (and HEAD) /graphql/assets/<name>.<hash>.<ext>: GraphiQL's files, kept a year by browsers
 * (the name changes with the content); compressed, with an ETag, by the app's static asset hook
 * (src/server/static-assets.ts). Unknown names 404, other methods 405. Registered only where
 * GraphiQL is served.
 */
export function registerGraphiQLAssets(app: FastifyInstance): void {
  const url = `${GRAPHIQL_ASSETS_PATH}/:file`;
  app.route({
    method: 'GET',
    url,
    schema: { hide: true },
    handler: async (req, reply) => {
      const file = (await graphiqlFiles()).byName.get((req.params as { file: string }).file);
      if (!file) return reply.callNotFound();
      return reply
        .status(200)
        .headers({ 'cache-control': IMMUTABLE_CACHE_CONTROL, 'cross-origin-resource-policy': 'same-origin' })
        .type(file.type)
        .send(file.body);
    },
  });
  registerMethodNotAllowed(app, url, ['GET']);
}
