#!/usr/bin/env node
/**
 * The live-picks example's backend (docs/API.md, "Frontends"): the one place that holds the API
 * key. It serves the page (and its Apollo Client module, apollo-feed.mjs, bundled for the browser
 * as a frontend's build would) and, at GET /stream-token, exchanges the key for a short-lived stream
 * token bound to this page's origin (POST /api/v1/stream-tokens, server to server). The page
 * then reads the pick stream with the token; the key never reaches the browser.
 *
 * Usage (from the repository root, with the service running: `npm start`):
 *   node docs/examples/live-picks/server.mjs
 * then open http://127.0.0.1:5173/ (the origin the tokens are minted for).
 * Environment:
 * - PICKS_API_KEY: an Enterprise key. Default: the demo's Enterprise key, which `npm start`'s
 *   banner prints and keeps in DATA_DIR/demo-keys.json (DATA_DIR: ./data).
 * - PICKS_API_URL: the service. Default http://127.0.0.1:<PORT>, PORT being the service's port as
 *   `npm start` reads it (3000), so `PORT=4000 npm start` and `PORT=4000 node .../server.mjs` agree.
 * - EXAMPLE_PORT (5173): this example's port; PAGE_ORIGIN (http://127.0.0.1:<EXAMPLE_PORT>: the
 *   origin written into each token); TOKEN_TTL_SECONDS (900).
 */
import { existsSync, readFileSync } from 'node:fs';
import { createServer } from 'node:http';
import { createRequire } from 'node:module';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

const here = path.dirname(fileURLToPath(import.meta.url));
// graphql-sse's browser build (a bundler or a CDN serves it in a real frontend).
const GRAPHQL_SSE_UMD = path.join(path.dirname(createRequire(import.meta.url).resolve('graphql-sse')), '..', 'umd', 'graphql-sse.min.js');

/**
 * apollo-feed.mjs and what it imports (@apollo/client, rxjs, graphql, graphql-ws) as one browser
 * module. Their published ES modules use bare and extensionless imports a browser cannot load,
 * so a bundler serves them, as in any frontend; rolldown (Vite's bundler, a development
 * dependency of this repository) takes a few hundred milliseconds.
 */
async function bundleApolloFeed() {
  const { rolldown } = await import('rolldown');
  const bundle = await rolldown({
    input: path.join(here, 'apollo-feed.mjs'),
    platform: 'browser',
    // Apollo Client's production build: no development warnings in the console.
    resolve: { conditionNames: ['browser', 'production', 'import', 'module', 'default'] },
    transform: { define: { 'process.env.NODE_ENV': '"production"' } },
    // An import rolldown cannot resolve is a warning to it (left as an external import, which a
    // browser cannot load): here it fails the bundle, so the page is told instead of broken.
    onLog: (level, log, handle) => handle(log.code === 'UNRESOLVED_IMPORT' ? 'error' : level, log),
    logLevel: 'warn',
  });
  try {
    const { output } = await bundle.generate({ format: 'esm', minify: true });
    return output[0].code;
  } finally {
    await bundle.close();
  }
}

/**
 * Starts the example; resolves with its origin and a close function.
 * @param {{ apiUrl: string, apiKey: string, port?: number, pageOrigin?: string, ttlSeconds?: number }} options
 */
export function startLivePicksExample(options) {
  const page = readFileSync(path.join(here, 'index.html'));
  const client = readFileSync(GRAPHQL_SSE_UMD);
  const apolloFeed = bundleApolloFeed();
  // Served (or answered 500) on request; never an unhandled rejection meanwhile.
  apolloFeed.catch(() => {});
  const server = createServer(async (req, res) => {
    const url = new URL(req.url ?? '/', 'http://example.invalid');
    if (req.method === 'GET' && url.pathname === '/') {
      res.writeHead(200, { 'content-type': 'text/html; charset=utf-8', 'cache-control': 'no-store' }).end(page);
    } else if (req.method === 'GET' && url.pathname === '/graphql-sse.js') {
      res.writeHead(200, { 'content-type': 'text/javascript; charset=utf-8' }).end(client);
    } else if (req.method === 'GET' && url.pathname === '/apollo-feed.js') {
      try {
        const code = await apolloFeed;
        res.writeHead(200, { 'content-type': 'text/javascript; charset=utf-8' }).end(code);
      } catch (error) {
        console.error('live picks example: could not bundle apollo-feed.mjs:', error);
        res.writeHead(500, { 'content-type': 'text/plain' }).end('the Apollo Client module could not be bundled; see the example server\'s log');
      }
    } else if (req.method === 'GET' && url.pathname === '/stream-token') {
      // A real backend first checks that its own user may see the feed.
      const minted = await fetch(`${options.apiUrl}/api/v1/stream-tokens`, {
        method: 'POST',
        headers: { authorization: `Bearer ${options.apiKey}`, 'content-type': 'application/json' },
        body: JSON.stringify({ ttl_seconds: options.ttlSeconds ?? 900, origins: [pageOrigin()] }),
      });
      const body = await minted.json();
      // The page learns the token and where the API is; never the key.
      res
        .writeHead(minted.status, { 'content-type': 'application/json', 'cache-control': 'no-store' })
        .end(JSON.stringify(minted.ok ? { token: body.token, expires_at: body.expires_at, api: options.apiUrl } : { error: body.error, message: body.message }));
    } else {
      res.writeHead(404, { 'content-type': 'text/plain' }).end('not found');
    }
  });
  const pageOrigin = () => options.pageOrigin ?? `http://127.0.0.1:${server.address().port}`;
  return new Promise((resolve) => {
    server.listen(options.port ?? 0, '127.0.0.1', () => resolve({ origin: pageOrigin(), close: () => new Promise((done) => server.close(done)) }));
  });
}

/** The demo's Enterprise key, as `npm start` keeps it in DATA_DIR/demo-keys.json; null without one. */
function demoEnterpriseKey() {
  const file = path.resolve(process.env.DATA_DIR ?? 'data', 'demo-keys.json');
  if (!existsSync(file)) return null;
  try {
    return JSON.parse(readFileSync(file, 'utf8')).enterprise ?? null;
  } catch {
    return null;
  }
}

if (process.argv[1] && path.resolve(process.argv[1]) === fileURLToPath(import.meta.url)) {
  const apiKey = process.env.PICKS_API_KEY ?? demoEnterpriseKey();
  if (!apiKey) {
    console.error(
      'Set PICKS_API_KEY to an Enterprise API key: the demo\'s is printed by `npm start` (demo API keys, enterprise) ' +
        'and kept in data/demo-keys.json (docs/API.md, "Frontends").',
    );
    process.exit(1);
  }
  const port = Number(process.env.EXAMPLE_PORT ?? 5173);
  const apiUrl = (process.env.PICKS_API_URL ?? `http://127.0.0.1:${process.env.PORT ?? 3000}`).replace(/\/+$/, '');
  const { origin } = await startLivePicksExample({
    apiUrl,
    apiKey,
    port,
    pageOrigin: process.env.PAGE_ORIGIN,
    ttlSeconds: process.env.TOKEN_TTL_SECONDS ? Number(process.env.TOKEN_TTL_SECONDS) : undefined,
  });
  console.log(`live picks example: open ${origin}/ (picks from ${apiUrl}${process.env.PICKS_API_KEY ? '' : ', with the demo Enterprise key'})`);
}
