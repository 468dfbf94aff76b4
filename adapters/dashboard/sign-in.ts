/**
 * Sign-in and sign-out: authentication happens here, at the edge (the session cookie), as the
 * Authorization header does for API keys.
 */
import type { FastifyInstance } from 'fastify';
import { InvalidCredentialsError, LoginThrottledError } from '../../src/domain/errors.js';
import type { Services } from '../../src/services/index.js';
import { errorPageHeaders, httpErrorOf } from '../../src/server/http-errors.js';
import { loginPage } from './pages.js';
import { CSRF_COOKIE, DASHBOARD_PREFIX, SESSION_COOKIE, csrfToken, isTls, sendPage, sessionCookieOptions, toLogin } from './setup.js';

/** GET/POST /login and POST /logout, in the dashboard scope (set up by setUpDashboardScope). */
export function registerSignInRoutes(scope: FastifyInstance, services: Services): void {
  const protect = { preHandler: scope.csrfProtection };

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
      // Refused sign-ins show the form again, with the status and headers of the one error exit.
      if (error instanceof InvalidCredentialsError || error instanceof LoginThrottledError) {
        const refused = httpErrorOf(error);
        reply.headers(errorPageHeaders(refused));
        return sendPage(reply, refused.status, loginPage({ csrfToken: csrfToken(req, reply), email, error: refused.message }));
      }
      throw error;
    }
  });

  scope.post('/logout', protect, async (req, reply) => {
    await services.dashboardAuth.signOut(req.cookies[SESSION_COOKIE]);
    reply.clearCookie(CSRF_COOKIE, { path: DASHBOARD_PREFIX });
    return toLogin(reply, req, 'signed_out');
  });
}
