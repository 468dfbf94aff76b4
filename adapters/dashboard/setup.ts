/**
 * The dashboard scope's set-up: cookies (@fastify/cookie), form bodies (@fastify/formbody) and
 * CSRF protection (@fastify/csrf-protection: a signed secret cookie, tokens bound to the session),
 * with their keys derived from the deployment's one dashboard secret, and the headers every page
 * carries (strict Content-Security-Policy, no framing, no caching, no referrer beyond the origin).
 * Also the small helpers every dashboard handler shares: sending a page, a CSRF token, the way
 * back to sign-in.
 */
import { createHash, hkdfSync } from 'node:crypto';
import fastifyCookie, { type CookieSerializeOptions } from '@fastify/cookie';
import fastifyCsrf from '@fastify/csrf-protection';
import fastifyFormbody from '@fastify/formbody';
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { SESSION_ABSOLUTE_MS } from '../../src/domain/session.js';
import type { Services } from '../../src/services/index.js';
import { pageHeaders, SELF } from '../common/page-chrome.js';

export const DASHBOARD_PREFIX = '/dashboard';
export const SESSION_COOKIE = 'dashboard_session';
export const CSRF_COOKIE = 'dashboard_csrf';
const FORM_BODY_LIMIT = 16 * 1024;

/** Everything from this origin (the stylesheets, the copy script, the favicon), nothing inline, forms posting here. */
const PAGE_HEADERS = pageHeaders({ fallback: 'self', scripts: SELF, styles: SELF, images: SELF, fonts: SELF, connections: SELF, forms: 'self' });
export const CONTENT_SECURITY_POLICY = PAGE_HEADERS['content-security-policy'];

export const STATUS_TITLES: Record<number, string> = {
  400: 'That did not work',
  401: 'Please sign in',
  403: 'Not allowed',
  404: 'Page not found',
  413: 'That was too much',
  429: 'Too many requests',
};

/** Secure only over TLS (request.protocol is https): plain-HTTP development still works. */
export function isTls(req: Pick<FastifyRequest, 'protocol'>): boolean {
  return req.protocol === 'https';
}

/** The session cookie: httpOnly, SameSite=Strict, Path=/dashboard, Secure over TLS, 12 h at most. */
export function sessionCookieOptions(secure: boolean, maxAgeSeconds = Math.floor(SESSION_ABSOLUTE_MS / 1000)): CookieSerializeOptions {
  return { path: DASHBOARD_PREFIX, httpOnly: true, sameSite: 'strict', secure, maxAge: maxAgeSeconds };
}

function deriveKey(secret: Buffer, purpose: string): Buffer {
  return Buffer.from(hkdfSync('sha256', secret, Buffer.alloc(0), `picks-dashboard/${purpose}`, 32));
}

/** The CSRF token's binding: the session (by hash), or a fixed word before sign-in (the library refuses ''). */
function csrfUserInfo(req: FastifyRequest): string {
  const token = req.cookies[SESSION_COOKIE];
  return token ? `session:${createHash('sha256').update(token, 'utf8').digest('hex')}` : 'signed-out';
}

/** A fresh CSRF token for a form on the page being rendered. */
export function csrfToken(req: FastifyRequest, reply: FastifyReply): string {
  return reply.generateCsrf({ userInfo: csrfUserInfo(req), secure: isTls(req) } as never);
}

export function sendPage(reply: FastifyReply, status: number, page: string): FastifyReply {
  return reply.status(status).type('text/html; charset=utf-8').send(page);
}

/** Back to the sign-in page (dropping a session cookie the browser still sends), with the reason shown there. */
export function toLogin(reply: FastifyReply, req: FastifyRequest, reason: 'expired' | 'signed_out' | null): FastifyReply {
  if (req.cookies[SESSION_COOKIE]) reply.clearCookie(SESSION_COOKIE, { path: DASHBOARD_PREFIX });
  return reply.redirect(`${DASHBOARD_PREFIX}/login${reason ? `?${reason}=1` : ''}`, 303);
}

/**
 * Registers cookies, form bodies, CSRF protection and the page headers in the dashboard's
 * encapsulated scope only (the JSON APIs never see them).
 */
export async function setUpDashboardScope(scope: FastifyInstance, services: Services): Promise<void> {
  // One secret per deployment (database), shared by every instance.
  const secret = await services.dashboardAuth.serverSecret();
  await scope.register(fastifyCookie, { secret: deriveKey(secret, 'cookie-signing') });
  await scope.register(fastifyFormbody, { bodyLimit: FORM_BODY_LIMIT });
  await scope.register(fastifyCsrf, {
    sessionPlugin: '@fastify/cookie',
    cookieKey: CSRF_COOKIE,
    cookieOpts: { path: DASHBOARD_PREFIX, httpOnly: true, sameSite: 'strict', signed: true },
    csrfOpts: { hmacKey: deriveKey(secret, 'csrf-hmac') },
    getUserInfo: csrfUserInfo,
    // Forms only: the token travels in the body, never in a URL.
    getToken: (req) => {
      const body = req.body as Record<string, unknown> | undefined;
      return typeof body?._csrf === 'string' ? body._csrf : '';
    },
  });

  // HTML pages, not part of the REST API's OpenAPI document.
  scope.addHook('onRoute', (route) => {
    route.schema = { ...route.schema, hide: true };
  });

  scope.addHook('onRequest', async (_req, reply) => {
    reply.headers(PAGE_HEADERS);
    reply.header('cache-control', 'no-store');
  });
}
