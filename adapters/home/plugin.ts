/**
 * GET /: the landing page for people (./page.ts), or the same links as a small JSON index for a
 * client that asks for JSON (docs/API.md, "Home page"). Anonymous, the same for everyone, cached
 * briefly; HEAD as GET, other methods 405 like every known path.
 */
import { createHash } from 'node:crypto';
import type { FastifyInstance } from 'fastify';
import { registerMethodNotAllowed } from '../common/method-not-allowed.js';
import { pageHeaders, SELF } from '../common/page-chrome.js';
import { notModified } from '../public/plugin.js';
import { HOME_PATH, homeIndex, homePage, STYLESHEET_HASH } from './page.js';

export const HOME_CACHE_CONTROL = 'public, max-age=300';

/** No script at all, nothing from another host: the page's own inline stylesheet (by its hash) and the favicon. */
const PAGE_HEADERS = pageHeaders({ styles: { hashes: [STYLESHEET_HASH] }, images: SELF, forms: 'none' });
export const HOME_CONTENT_SECURITY_POLICY = PAGE_HEADERS['content-security-policy'];

interface MediaRange {
  type: string;
  q: number;
}

function mediaRanges(accept: string): MediaRange[] {
  return accept.split(',').flatMap((part) => {
    const [type, ...params] = part.trim().toLowerCase().split(';');
    if (!type) return [];
    const q = params.map((param) => /^\s*q=([0-9.]+)\s*$/.exec(param)?.[1]).find((value) => value !== undefined);
    return [{ type: type.trim(), q: q === undefined ? 1 : Math.min(1, Number(q) || 0) }];
  });
}

/**
 * JSON when the client names application/json and does not prefer HTML: a weight above
 * text/html's, or equal to one HTML gets only through a wildcard (application/json followed by a
 * catch-all). Browsers (text/html first), curl's catch-all and no Accept at all get the page.
 */
export function prefersJson(accept: string | undefined): boolean {
  if (!accept) return false;
  const ranges = mediaRanges(accept);
  const json = Math.max(0, ...ranges.filter((range) => range.type === 'application/json').map((range) => range.q));
  if (json === 0) return false;
  const exactHtml = ranges.filter((range) => range.type === 'text/html').map((range) => range.q);
  if (exactHtml.length > 0) return json > Math.max(...exactHtml);
  const wildcardHtml = Math.max(0, ...ranges.filter((range) => range.type === 'text/*' || range.type === '*/*').map((range) => range.q));
  return json >= wildcardHtml;
}

function etagOf(body: string): string {
  return `"${createHash('sha256').update(body).digest('base64url').slice(0, 27)}"`;
}

export function registerHomePage(app: FastifyInstance, { graphiql }: { graphiql: boolean }): void {
  const page = homePage({ graphiql });
  const pageEtag = etagOf(page);
  const index = `${JSON.stringify(homeIndex({ graphiql }), null, 2)}\n`;
  const indexEtag = etagOf(index);

  app.route({
    method: 'GET',
    url: HOME_PATH,
    schema: { hide: true },
    handler: async (req, reply) => {
      // One address, two representations: caches must keep them apart.
      reply.header('vary', 'Accept').header('cache-control', HOME_CACHE_CONTROL).header('x-content-type-options', 'nosniff');
      if (prefersJson(req.headers.accept)) {
        reply.header('etag', indexEtag);
        if (notModified(req.headers['if-none-match'], indexEtag)) return reply.status(304).send();
        return reply.status(200).type('application/json; charset=utf-8').send(index);
      }
      reply.headers(PAGE_HEADERS).header('etag', pageEtag);
      if (notModified(req.headers['if-none-match'], pageEtag)) return reply.status(304).send();
      return reply.status(200).type('text/html; charset=utf-8').send(page);
    },
  });
  registerMethodNotAllowed(app, HOME_PATH, ['GET']);
}
