/**
 * The customer dashboard at /dashboard (spec 5.3, docs/DASHBOARD.md): server-rendered HTML,
 * progressive enhancement only (one small script for the copy button).
 *
 * - Authentication happens here, at the edge (sign-in, sign-out, the session cookie), as the
 *   Authorization header does for API keys; every piece of data shown or changed goes through
 *   one GraphQL document per page or action, executed with the session's principal (the
 *   `dashboard` server context: nothing else turns a cookie into a principal).
 * - Cookies (@fastify/cookie), form bodies (@fastify/formbody) and CSRF protection
 *   (@fastify/csrf-protection: a signed secret cookie, tokens bound to the session) are
 *   registered in this encapsulated scope only; the JSON APIs never see them.
 * - Every page: strict Content-Security-Policy (default-src 'self', nothing inline), no
 *   framing, no caching, no referrer beyond the origin.
 */
import { createHash, hkdfSync } from 'node:crypto';
import { readFileSync } from 'node:fs';
import fastifyCookie, { type CookieSerializeOptions } from '@fastify/cookie';
import fastifyCsrf from '@fastify/csrf-protection';
import fastifyFormbody from '@fastify/formbody';
import type { FastifyError, FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { GraphQLError, type ExecutionResult, type GraphQLSchema } from 'graphql';
import type { TierLimits } from '../../src/domain/access.js';
import type { Clock } from '../../src/domain/clock.js';
import { ERROR_HTTP_STATUS, ErrorCode, InvalidCredentialsError, InvalidCsrfTokenError, LoginThrottledError } from '../../src/domain/errors.js';
import { SESSION_ABSOLUTE_MS } from '../../src/domain/session.js';
import type { Yoga } from '../../src/graphql/yoga.js';
import type { Services } from '../../src/services/index.js';
import { classifyError } from '../../src/server/errors.js';
import { openOperation, prepareOperation, type PreparedOperation } from '../shared/operations.js';
import { confirmRevokePage, errorPage, keysPage, loginPage, type AccountView, type KeyView } from './pages.js';

export const DASHBOARD_PREFIX = '/dashboard';
export const SESSION_COOKIE = 'dashboard_session';
export const CSRF_COOKIE = 'dashboard_csrf';
const FORM_BODY_LIMIT = 16 * 1024;

export const CONTENT_SECURITY_POLICY = [
  "default-src 'self'",
  "script-src 'self'",
  "style-src 'self'",
  "img-src 'self'",
  "font-src 'self'",
  "connect-src 'self'",
  "object-src 'none'",
  "base-uri 'none'",
  "form-action 'self'",
  "frame-ancestors 'none'",
].join('; ');

const PAGE_HEADERS = {
  'content-security-policy': CONTENT_SECURITY_POLICY,
  'x-frame-options': 'DENY',
  'x-content-type-options': 'nosniff',
  'referrer-policy': 'same-origin',
  'cross-origin-opener-policy': 'same-origin',
  'cross-origin-resource-policy': 'same-origin',
  'permissions-policy': 'camera=(), microphone=(), geolocation=(), payment=()',
};

/** Secure only over TLS (request.protocol is https): plain-HTTP development still works. */
export function isTls(req: Pick<FastifyRequest, 'protocol'>): boolean {
  return req.protocol === 'https';
}

/** The session cookie: httpOnly, SameSite=Strict, Path=/dashboard, Secure over TLS, 12 h at most. */
export function sessionCookieOptions(secure: boolean, maxAgeSeconds = Math.floor(SESSION_ABSOLUTE_MS / 1000)): CookieSerializeOptions {
  return { path: DASHBOARD_PREFIX, httpOnly: true, sameSite: 'strict', secure, maxAge: maxAgeSeconds };
}

export interface DashboardOptions {
  yoga: Yoga;
  schema: GraphQLSchema;
  services: Services;
  clock: Clock;
  tierLimits: TierLimits;
}

interface Asset {
  body: Buffer;
  type: string;
}

/** A Map, not an object literal: an asset name such as `constructor` must not find Object.prototype's. */
function loadAssets(): ReadonlyMap<string, Asset> {
  const read = (name: string) => readFileSync(new URL(`./assets/${name}`, import.meta.url));
  return new Map([
    ['dashboard.css', { body: read('dashboard.css'), type: 'text/css; charset=utf-8' }],
    ['dashboard.js', { body: read('dashboard.js'), type: 'text/javascript; charset=utf-8' }],
    ['favicon.svg', { body: read('favicon.svg'), type: 'image/svg+xml' }],
  ]);
}

function deriveKey(secret: Buffer, purpose: string): Buffer {
  return Buffer.from(hkdfSync('sha256', secret, Buffer.alloc(0), `picks-dashboard/${purpose}`, 32));
}

/** The CSRF token's binding: the session (by hash), or a fixed word before sign-in (the library refuses ''). */
function csrfUserInfo(req: FastifyRequest): string {
  const token = req.cookies[SESSION_COOKIE];
  return token ? `session:${createHash('sha256').update(token, 'utf8').digest('hex')}` : 'signed-out';
}

function sendPage(reply: FastifyReply, status: number, page: string): FastifyReply {
  return reply.status(status).type('text/html; charset=utf-8').send(page);
}

interface OperationFailure {
  code: string;
  message: string;
}

function failureOf(result: ExecutionResult): OperationFailure | null {
  const error = result.errors?.[0];
  if (!error) return result.data ? null : { code: ErrorCode.internalError, message: 'Unexpected server error.' };
  const code = typeof error.extensions?.code === 'string' ? error.extensions.code : ErrorCode.internalError;
  return { code, message: error.message };
}

const STATUS_TITLES: Record<number, string> = {
  400: 'That did not work',
  401: 'Please sign in',
  403: 'Not allowed',
  404: 'Page not found',
  413: 'That was too much',
  429: 'Too many requests',
};

export async function registerDashboardRoutes(app: FastifyInstance, options: DashboardOptions): Promise<void> {
  const { yoga, schema, services, clock, tierLimits } = options;
  const document = (file: string, name: string) => prepareOperation(schema, new URL(`./documents/${file}`, import.meta.url), name);
  const ops = {
    page: document('dashboard-page.graphql', 'DashboardPage'),
    key: document('my-api-key.graphql', 'MyApiKey'),
    create: document('create-my-api-key.graphql', 'CreateMyApiKey'),
    revoke: document('revoke-my-api-key.graphql', 'RevokeMyApiKey'),
  };
  const assets = loadAssets();

  await app.register(
    async (scope) => {
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

      const csrfToken = (req: FastifyRequest, reply: FastifyReply) => reply.generateCsrf({ userInfo: csrfUserInfo(req), secure: isTls(req) } as never);
      const protect = { preHandler: scope.csrfProtection };

      async function run(req: FastifyRequest, reply: FastifyReply, operation: PreparedOperation, variables: Record<string, unknown>): Promise<ExecutionResult> {
        const runner = await openOperation(yoga, { req, reply, dashboard: { sessionToken: req.cookies[SESSION_COOKIE] } });
        if (runner instanceof GraphQLError) return { errors: [runner] };
        return runner.execute(operation, variables);
      }

      function toLogin(reply: FastifyReply, req: FastifyRequest, reason: 'expired' | 'signed_out' | null) {
        if (req.cookies[SESSION_COOKIE]) reply.clearCookie(SESSION_COOKIE, { path: DASHBOARD_PREFIX });
        return reply.redirect(`${DASHBOARD_PREFIX}/login${reason ? `?${reason}=1` : ''}`, 303);
      }

      /** A failed operation as a page: no session -> sign-in; otherwise an error page with the code. */
      function failurePage(req: FastifyRequest, reply: FastifyReply, failure: OperationFailure, account?: AccountView) {
        if (failure.code === ErrorCode.sessionRequired) return toLogin(reply, req, 'expired');
        const status = ERROR_HTTP_STATUS[failure.code as ErrorCode] ?? 500;
        if (status >= 500) req.log.error({ code: failure.code, message: failure.message }, 'dashboard operation failed');
        reply.header('x-error-code', failure.code);
        const message = status >= 500 ? 'Something went wrong on our side. Please try again in a moment.' : failure.message;
        return sendPage(reply, status, errorPage({ title: STATUS_TITLES[status] ?? 'Something went wrong', message, csrfToken: csrfToken(req, reply), account }));
      }

      function baseUrl(req: FastifyRequest): string {
        return `${req.protocol}://${req.host}`;
      }

      function limitsOf(account: AccountView) {
        return tierLimits[account.tier.toLowerCase() as keyof TierLimits];
      }

      async function renderKeys(
        req: FastifyRequest,
        reply: FastifyReply,
        status: number,
        extra: Pick<Parameters<typeof keysPage>[0], 'created' | 'error' | 'label'> & { revokedId?: string },
      ) {
        const result = await run(req, reply, ops.page, {});
        const failure = failureOf(result);
        if (failure) return failurePage(req, reply, failure);
        const data = result.data as { me: AccountView; myApiKeys: KeyView[] };
        const revoked = extra.revokedId ? data.myApiKeys.find((key) => key.id === extra.revokedId && !key.active) : undefined;
        return sendPage(
          reply,
          status,
          keysPage({
            csrfToken: csrfToken(req, reply),
            account: data.me,
            keys: data.myApiKeys,
            now: clock.now(),
            baseUrl: baseUrl(req),
            limits: limitsOf(data.me),
            created: extra.created,
            error: extra.error,
            label: extra.label,
            revoked,
          }),
        );
      }

      scope.get('/', async (_req, reply) => reply.redirect(`${DASHBOARD_PREFIX}/api-keys`, 302));

      scope.get('/login', async (req, reply) => {
        const principal = await services.dashboardAuth.principalFor(req.cookies[SESSION_COOKIE]);
        if (principal.kind === 'account') return reply.redirect(`${DASHBOARD_PREFIX}/api-keys`, 303);
        const query = req.query as Record<string, unknown>;
        const notice =
          query.signed_out !== undefined ? 'You have been signed out.' : query.expired !== undefined ? 'Your session has ended. Please sign in again.' : undefined;
        return sendPage(reply, 200, loginPage({ csrfToken: csrfToken(req, reply), notice }));
      });

      scope.post('/login', protect, async (req, reply) => {
        const body = (req.body ?? {}) as Record<string, unknown>;
        const email = typeof body.email === 'string' ? body.email.slice(0, 254) : '';
        try {
          const session = await services.dashboardAuth.signIn({ email: body.email, password: body.password, ip: req.ip });
          // A session this browser still held ends: one browser, one session.
          await services.dashboardAuth.signOut(req.cookies[SESSION_COOKIE]);
          reply.setCookie(SESSION_COOKIE, session.token, sessionCookieOptions(isTls(req)));
          // A fresh CSRF secret for the new session.
          reply.clearCookie(CSRF_COOKIE, { path: DASHBOARD_PREFIX });
          return reply.redirect(`${DASHBOARD_PREFIX}/api-keys`, 303);
        } catch (error) {
          if (error instanceof InvalidCredentialsError) {
            reply.header('x-error-code', error.code);
            return sendPage(reply, 401, loginPage({ csrfToken: csrfToken(req, reply), email, error: error.message }));
          }
          if (error instanceof LoginThrottledError) {
            reply.header('x-error-code', error.code).header('retry-after', String(error.extras.retry_after_seconds));
            return sendPage(reply, 429, loginPage({ csrfToken: csrfToken(req, reply), email, error: error.message }));
          }
          throw error;
        }
      });

      scope.post('/logout', protect, async (req, reply) => {
        await services.dashboardAuth.signOut(req.cookies[SESSION_COOKIE]);
        reply.clearCookie(CSRF_COOKIE, { path: DASHBOARD_PREFIX });
        return toLogin(reply, req, 'signed_out');
      });

      scope.get('/api-keys', async (req, reply) => {
        if (!req.cookies[SESSION_COOKIE]) return toLogin(reply, req, null);
        const revokedId = (req.query as Record<string, unknown>).revoked;
        return renderKeys(req, reply, 200, { revokedId: typeof revokedId === 'string' ? revokedId : undefined });
      });

      scope.post('/api-keys', protect, async (req, reply) => {
        const body = (req.body ?? {}) as Record<string, unknown>;
        const rawLabel = typeof body.label === 'string' ? body.label.trim() : '';
        const result = await run(req, reply, ops.create, { label: rawLabel === '' ? null : rawLabel });
        const failure = failureOf(result);
        if (failure) {
          const status = ERROR_HTTP_STATUS[failure.code as ErrorCode];
          if (failure.code === ErrorCode.invalidParameter || failure.code === ErrorCode.apiKeyLimit) {
            reply.header('x-error-code', failure.code);
            return renderKeys(req, reply, status, { error: failure.message, label: rawLabel.slice(0, 100) });
          }
          return failurePage(req, reply, failure);
        }
        const created = (result.data as { createMyApiKey: { key: string; apiKey: Pick<KeyView, 'label' | 'prefix'> } }).createMyApiKey;
        return renderKeys(req, reply, 201, { created });
      });

      scope.get('/api-keys/:id/revoke', async (req, reply) => {
        if (!req.cookies[SESSION_COOKIE]) return toLogin(reply, req, null);
        const { id } = req.params as { id: string };
        const result = await run(req, reply, ops.key, { id });
        const failure = failureOf(result);
        if (failure) return failurePage(req, reply, failure);
        const data = result.data as { me: AccountView; myApiKey: KeyView };
        if (!data.myApiKey.active) return reply.redirect(`${DASHBOARD_PREFIX}/api-keys`, 303);
        return sendPage(reply, 200, confirmRevokePage({ csrfToken: csrfToken(req, reply), account: data.me, key: data.myApiKey, now: clock.now() }));
      });

      scope.post('/api-keys/:id/revoke', protect, async (req, reply) => {
        const { id } = req.params as { id: string };
        const result = await run(req, reply, ops.revoke, { id });
        const failure = failureOf(result);
        if (failure) return failurePage(req, reply, failure);
        return reply.redirect(`${DASHBOARD_PREFIX}/api-keys?revoked=${encodeURIComponent(id)}`, 303);
      });

      scope.get('/assets/:name', async (req, reply) => {
        const asset = assets.get((req.params as { name: string }).name);
        if (!asset) return reply.callNotFound();
        // Assets change with releases only: a short cache, revalidated.
        return reply.header('cache-control', 'public, max-age=300').type(asset.type).send(asset.body);
      });

      scope.setNotFoundHandler(async (req, reply) => {
        reply.header('x-error-code', ErrorCode.notFound);
        return sendPage(reply, 404, errorPage({ title: STATUS_TITLES[404]!, message: 'There is nothing at this address.' }));
      });

      scope.setErrorHandler(async (error: FastifyError, req, reply) => {
        if (error.code === 'FST_CSRF_INVALID_TOKEN' || error.code === 'FST_CSRF_MISSING_SECRET') {
          const refused = new InvalidCsrfTokenError();
          const login = req.url.startsWith(`${DASHBOARD_PREFIX}/login`);
          reply.header('x-error-code', refused.code);
          return sendPage(
            reply,
            403,
            errorPage({
              title: 'This form has expired',
              message: refused.message,
              action: login ? { href: `${DASHBOARD_PREFIX}/login`, text: 'Back to sign in' } : { href: `${DASHBOARD_PREFIX}/api-keys`, text: 'Back to your API keys' },
            }),
          );
        }
        const { code, message } = classifyError(error);
        if (code === ErrorCode.internalError) req.log.error({ err: error }, 'unhandled dashboard error');
        const status = ERROR_HTTP_STATUS[code];
        reply.header('x-error-code', code);
        return sendPage(
          reply,
          status,
          errorPage({ title: STATUS_TITLES[status] ?? 'Something went wrong', message: status >= 500 ? 'Something went wrong on our side. Please try again in a moment.' : message }),
        );
      });
    },
    { prefix: DASHBOARD_PREFIX },
  );
}
