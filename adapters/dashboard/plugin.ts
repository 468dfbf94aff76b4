/**
 * The customer dashboard at /dashboard (docs/DASHBOARD.md): server-rendered HTML,
 * progressive enhancement only (one small script for the copy button). This module composes the
 * encapsulated /dashboard scope:
 *
 * - ./setup.ts: cookies, form bodies, CSRF protection (keys derived from the deployment's
 *   secret) and the headers every page carries; registered in this scope only, the JSON APIs
 *   never see them.
 * - ./sign-in.ts: sign-in and sign-out (the session cookie), authentication at the edge.
 * - ./pages-routes.ts: the pages and actions, each one GraphQL document executed with the
 *   session's principal, and the static assets.
 * - here: the scope's not-found page and error page.
 */
import type { FastifyError, FastifyInstance } from 'fastify';
import type { GraphQLSchema } from 'graphql';
import type { TierLimits } from '../../src/domain/access.js';
import type { Clock } from '../../src/domain/clock.js';
import { ErrorCode, InvalidCsrfTokenError } from '../../src/domain/errors.js';
import type { Yoga } from '../../src/graphql/yoga.js';
import type { Services } from '../../src/services/index.js';
import { errorPageHeaders, httpError, httpErrorOf } from '../../src/server/http-errors.js';
import { errorPage } from './pages.js';
import { registerPageRoutes } from './pages-routes.js';
import { DASHBOARD_PREFIX, STATUS_TITLES, sendPage, setUpDashboardScope } from './setup.js';
import { registerSignInRoutes } from './sign-in.js';

export interface DashboardOptions {
  yoga: Yoga;
  schema: GraphQLSchema;
  services: Services;
  clock: Clock;
  tierLimits: TierLimits;
  /** Webhook endpoints on this machine's loopback are accepted (the embedded demo only). */
  localWebhookReceivers?: boolean;
}

export async function registerDashboardRoutes(app: FastifyInstance, options: DashboardOptions): Promise<void> {
  const { yoga, schema, services, clock, tierLimits, localWebhookReceivers } = options;

  await app.register(
    async (scope) => {
      await setUpDashboardScope(scope, services);
      registerSignInRoutes(scope, services);
      registerPageRoutes(scope, { yoga, schema, clock, tierLimits, localWebhookReceivers });

      scope.setNotFoundHandler(async (req, reply) => {
        const notFound = httpError(ErrorCode.notFound);
        reply.headers(errorPageHeaders(notFound));
        return sendPage(reply, notFound.status, errorPage({ title: STATUS_TITLES[notFound.status]!, message: 'There is nothing at this address.' }));
      });

      scope.setErrorHandler(async (error: FastifyError, req, reply) => {
        if (error.code === 'FST_CSRF_INVALID_TOKEN' || error.code === 'FST_CSRF_MISSING_SECRET') {
          const refused = httpErrorOf(new InvalidCsrfTokenError());
          const login = req.url.startsWith(`${DASHBOARD_PREFIX}/login`);
          reply.headers(errorPageHeaders(refused));
          return sendPage(
            reply,
            refused.status,
            errorPage({
              title: 'This form has expired',
              message: refused.message,
              action: login ? { href: `${DASHBOARD_PREFIX}/login`, text: 'Back to sign in' } : { href: `${DASHBOARD_PREFIX}/api-keys`, text: 'Back to your API keys' },
            }),
          );
        }
        const failure = httpErrorOf(error, (unexpected) => req.log.error({ err: unexpected }, 'unhandled dashboard error'));
        const { status, message } = failure;
        reply.headers(errorPageHeaders(failure));
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
