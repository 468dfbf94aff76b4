/**
 * GET /docs: the API reference for people, rendered in the browser by Scalar
 * (@scalar/fastify-api-reference) from the served OpenAPI document. Everything comes from this
 * service: the plugin serves Scalar's standalone bundle from the package (/docs/js/scalar.js),
 * the default web fonts (fonts.scalar.com) and telemetry are off, and the page's
 * Content-Security-Policy allows no other host. The page's one inline script (Scalar's start-up
 * call) and the stylesheet the bundle injects carry a nonce that is fresh on every answer: the
 * plugin renders a fixed placeholder, which the onSend hook below replaces.
 *
 * The bundle (4.9 MB) is answered compressed with an ETag by the app's static asset hook
 * (src/server/static-assets.ts). Its path is the plugin's own, without a content hash (the plugin
 * offers no way to read the bundle to name it), so browsers keep it but revalidate it before each
 * use: a 304 without a body while it is unchanged, the new bundle at once after an upgrade.
 */
import scalarApiReference from '@scalar/fastify-api-reference';
import type { FastifyInstance } from 'fastify';
import { REVALIDATED_CACHE_CONTROL } from '../../src/server/static-assets.js';
import { OPENAPI_PATH } from '../common/openapi.js';
import { ASYNCAPI_PATH } from '../common/asyncapi.js';
import { freshNonce, pageHeaders, SELF, type PageHeaders } from '../common/page-chrome.js';

export const DOCS_PREFIX = '/docs';
/** Where the plugin serves Scalar's standalone bundle (its page names it `js/scalar.js`). */
export const DOCS_SCRIPT_PATH = `${DOCS_PREFIX}/js/scalar.js`;
const NONCE_PLACEHOLDER = 'docs-csp-nonce-placeholder';

/**
 * Two stylesheets Scalar's components insert without the nonce (the toast styles and the default
 * theme), allowed by their hashes. They are fixed for a given Scalar version: after an upgrade
 * the browser test (test/browser/api-reference.browser.test.ts) reports the new hashes.
 */
const SCALAR_STYLE_HASHES = ["'sha256-l/2OpPg0d+2VLTLgwjf5mQo2CYwHDEqdj5TjbfEyVJI='", "'sha256-T13Uev3xCax2N28XaoAE8DOzQZKvPp7ZQVAi1iRREjo='"];

/**
 * The headers of every answer under /docs, with that answer's nonce. The policy is as strict as
 * Scalar allows: scripts from here or with this answer's nonce (no eval: Scalar only probes for
 * it), stylesheets from here, with the nonce or one of the two hashes, nothing from any other
 * host. Scalar's components set style attributes (positions, sizes), which only 'unsafe-inline'
 * on style-src-attr permits; attributes cannot load anything or run code.
 */
export function docsPageHeaders(nonce: string): PageHeaders {
  return pageHeaders({
    scripts: { self: true, nonce },
    styles: { self: true, nonce },
    styleElements: { self: true, nonce, hashes: SCALAR_STYLE_HASHES },
    styleAttributes: 'unsafe-inline',
    images: { self: true, data: true },
    fonts: SELF,
    connections: SELF,
    forms: 'none',
  });
}

/**
 * The one addition to Scalar's page: a line above the reference leading to the public record
 * page (its style carries the answer's nonce like Scalar's own).
 */
const RECORD_LINK =
  `<style nonce="${NONCE_PLACEHOLDER}">.record-link{margin:0;padding:8px 16px;font:14px/1.4 system-ui,sans-serif;color:#0f172a;background:#eef0ff;border-bottom:1px solid #dde3ee}.record-link a{color:#4338ca;font-weight:600}</style>` +
  '<p class="record-link">Is it luck? The public <a href="/record">track record</a>: every pick settled, its significance, and a ledger anyone can verify. ' +
  `The streams and webhooks as AsyncAPI 3.0: <a href="${ASYNCAPI_PATH}">${ASYNCAPI_PATH}</a>.</p>`;
const SCALAR_MOUNT = '<div id="app"></div>';

export async function registerApiReference(app: FastifyInstance): Promise<void> {
  await app.register(async (scope) => {
    scope.addHook('onSend', async (req, reply, payload) => {
      const nonce = freshNonce();
      reply.headers(docsPageHeaders(nonce));
      const contentType = String(reply.getHeader('content-type') ?? '');
      if (!contentType.startsWith('text/html') || typeof payload !== 'string') {
        if (req.routeOptions.url === DOCS_SCRIPT_PATH) reply.header('cache-control', REVALIDATED_CACHE_CONTROL);
        return payload;
      }
      reply.header('cache-control', 'no-store');
      return payload.replace(SCALAR_MOUNT, `${RECORD_LINK}${SCALAR_MOUNT}`).replaceAll(NONCE_PLACEHOLDER, nonce);
    });
    await scope.register(scalarApiReference, {
      routePrefix: DOCS_PREFIX,
      logLevel: 'warn',
      configuration: {
        url: OPENAPI_PATH,
        pageTitle: 'Picks Service API reference',
        nonce: NONCE_PLACEHOLDER,
        withDefaultFonts: false,
        telemetry: false,
        showDeveloperTools: 'never',
        agent: { disabled: true },
        mcp: { disabled: true },
        documentDownloadType: 'json',
      },
    });
  });
}
