/**
 * The dashboard's pages and actions (API keys: list, create, confirm and revoke; webhook
 * endpoints: add, send a test, rotate the secret, reactivate, confirm and delete) and its static
 * assets. Every piece of data shown or changed goes through one GraphQL document per page or
 * action, executed with the session's principal (the `dashboard` server context: nothing else
 * turns a cookie into a principal). The HTML itself is rendered by ./pages.ts.
 */
import { readFileSync } from 'node:fs';
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { GraphQLError, type ExecutionResult, type GraphQLSchema } from 'graphql';
import type { TierLimits } from '../../src/domain/access.js';
import type { Clock } from '../../src/domain/clock.js';
import { ErrorCode } from '../../src/domain/errors.js';
import type { Yoga } from '../../src/graphql/yoga.js';
import { errorPageHeaders, httpError, httpErrorOfGraphQL, type HttpError } from '../../src/server/http-errors.js';
import { IMMUTABLE_CACHE_CONTROL } from '../../src/server/static-assets.js';
import {
  CreateMyApiKeyDocument,
  CreateMyWebhookDocument,
  DashboardPageDocument,
  DeleteMyWebhookDocument,
  MyApiKeyDocument,
  MyWebhookDocument,
  ReactivateMyWebhookDocument,
  RevokeMyApiKeyDocument,
  RotateMyWebhookSecretDocument,
  TestMyWebhookDocument,
  type WebhookEventType,
} from '../common/generated/graphql.js';
import { domainValue } from '../common/graphql-enums.js';
import { openOperation, prepareOperation, type PreparedOperation } from '../common/operations.js';
import { BASE_STYLESHEET, BASE_STYLESHEET_NAME } from '../common/page-chrome.js';
import { confirmRevokePage, errorPage, keysPage, type AccountView, type WebhookFormState } from './pages.js';
import { confirmDeleteWebhookPage, webhookSecretPage, webhookTestPage } from './webhook-pages.js';
import { DASHBOARD_PREFIX, SESSION_COOKIE, STATUS_TITLES, csrfToken, sendPage, toLogin } from './setup.js';

export interface PageRoutesOptions {
  yoga: Yoga;
  schema: GraphQLSchema;
  clock: Clock;
  tierLimits: TierLimits;
  /** The embedded demo accepts webhook endpoints on this machine's loopback (config.localWebhookReceivers): the form says so. */
  localWebhookReceivers?: boolean;
}

interface Asset {
  body: Buffer;
  type: string;
  cacheControl: string;
}

/** Assets change with releases only: a short cache, revalidated. */
const ASSET_CACHE_CONTROL = 'public, max-age=300';

/**
 * A Map, not an object literal: an asset name such as `constructor` must not find Object.prototype's.
 * With the dashboard's own files, those every page shares (the favicon, the base stylesheet under
 * its hashed name, kept a year).
 */
function loadAssets(): ReadonlyMap<string, Asset> {
  const read = (name: string) => readFileSync(new URL(`./assets/${name}`, import.meta.url));
  return new Map([
    ['dashboard.css', { body: read('dashboard.css'), type: 'text/css; charset=utf-8', cacheControl: ASSET_CACHE_CONTROL }],
    ['dashboard.js', { body: read('dashboard.js'), type: 'text/javascript; charset=utf-8', cacheControl: ASSET_CACHE_CONTROL }],
    ['favicon.svg', { body: read('favicon.svg'), type: 'image/svg+xml', cacheControl: ASSET_CACHE_CONTROL }],
    [BASE_STYLESHEET_NAME, { body: BASE_STYLESHEET, type: 'text/css; charset=utf-8', cacheControl: IMMUTABLE_CACHE_CONTROL }],
  ]);
}

/** An operation's data, or its failure as the one error exit maps it (status, headers, code, message). */
type Outcome<TData> = { data: TData; failure?: undefined } | { data?: undefined; failure: HttpError };

function outcomeOf<TData>(result: ExecutionResult<TData>): Outcome<TData> {
  const error = result.errors?.[0];
  if (error) return { failure: httpErrorOfGraphQL(error) };
  return result.data ? { data: result.data } : { failure: httpError(ErrorCode.internalError) };
}

/** A form field sent once (a string) or repeated (an array, checkboxes); anything else is none. */
function formValues(value: unknown): string[] {
  if (typeof value === 'string') return [value];
  return Array.isArray(value) ? value.filter((item): item is string => typeof item === 'string') : [];
}

const WEBHOOK_EVENTS: readonly string[] = ['PICK_PUBLISHED', 'PICK_SETTLED', 'PICK_AVAILABILITY_CHANGED'] satisfies WebhookEventType[];

/** Refusals of the add-endpoint form shown on the keys page beside the form, with what was typed. */
const WEBHOOK_FORM_ERRORS = new Set<string>([ErrorCode.invalidUrl, ErrorCode.invalidParameter, ErrorCode.duplicateUrl, ErrorCode.subscriptionLimit]);

function baseUrl(req: FastifyRequest): string {
  return `${req.protocol}://${req.host}`;
}

/** The key pages, their actions and /assets/*, in the dashboard scope (set up by setUpDashboardScope). */
export function registerPageRoutes(scope: FastifyInstance, options: PageRoutesOptions): void {
  const { yoga, schema, clock, tierLimits, localWebhookReceivers = false } = options;
  const ops = {
    page: prepareOperation(schema, DashboardPageDocument),
    key: prepareOperation(schema, MyApiKeyDocument),
    create: prepareOperation(schema, CreateMyApiKeyDocument),
    revoke: prepareOperation(schema, RevokeMyApiKeyDocument),
    webhook: prepareOperation(schema, MyWebhookDocument),
    createWebhook: prepareOperation(schema, CreateMyWebhookDocument),
    rotateWebhook: prepareOperation(schema, RotateMyWebhookSecretDocument),
    testWebhook: prepareOperation(schema, TestMyWebhookDocument),
    reactivateWebhook: prepareOperation(schema, ReactivateMyWebhookDocument),
    deleteWebhook: prepareOperation(schema, DeleteMyWebhookDocument),
  };
  const assets = loadAssets();
  const protect = { preHandler: scope.csrfProtection };

  async function run<TData, TVariables>(
    req: FastifyRequest,
    reply: FastifyReply,
    operation: PreparedOperation<TData, TVariables>,
    variables: TVariables,
  ): Promise<Outcome<TData>> {
    const runner = await openOperation(yoga, { req, reply, dashboard: { sessionToken: req.cookies[SESSION_COOKIE] } });
    if (runner instanceof GraphQLError) return outcomeOf({ errors: [runner] });
    return outcomeOf(await runner.execute(operation, variables));
  }

  /** A failed operation as a page: no session -> sign-in; otherwise an error page with the code. */
  function failurePage(req: FastifyRequest, reply: FastifyReply, failure: HttpError, account?: AccountView) {
    if (failure.code === ErrorCode.sessionRequired) return toLogin(reply, req, 'expired');
    const { status } = failure;
    if (status >= 500) req.log.error({ code: failure.code, message: failure.message }, 'dashboard operation failed');
    reply.headers(errorPageHeaders(failure));
    const message = status >= 500 ? 'Something went wrong on our side. Please try again in a moment.' : failure.message;
    return sendPage(reply, status, errorPage({ title: STATUS_TITLES[status] ?? 'Something went wrong', message, csrfToken: csrfToken(req, reply), account }));
  }

  function limitsOf(account: AccountView) {
    return tierLimits[domainValue(account.tier)];
  }

  async function renderKeys(
    req: FastifyRequest,
    reply: FastifyReply,
    status: number,
    extra: Pick<Parameters<typeof keysPage>[0], 'created' | 'error' | 'label' | 'notice' | 'webhookForm'> & { revokedId?: string },
  ) {
    const { data, failure } = await run(req, reply, ops.page, {});
    if (failure) return failurePage(req, reply, failure);
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
        notice: extra.notice,
        webhookForm: extra.webhookForm,
        revoked,
        localWebhookReceivers,
      }),
    );
  }

  scope.get('/', async (_req, reply) => reply.redirect(`${DASHBOARD_PREFIX}/api-keys`, 302));

  scope.get('/api-keys', async (req, reply) => {
    if (!req.cookies[SESSION_COOKIE]) return toLogin(reply, req, null);
    const query = req.query as Record<string, unknown>;
    const revokedId = query.revoked;
    const notice = query.webhook === 'deleted' ? 'Webhook endpoint deleted.' : query.webhook === 'reactivated' ? 'Webhook endpoint reactivated: new events are delivered again.' : undefined;
    return renderKeys(req, reply, 200, { revokedId: typeof revokedId === 'string' ? revokedId : undefined, notice });
  });

  scope.post('/api-keys', protect, async (req, reply) => {
    const body = (req.body ?? {}) as Record<string, unknown>;
    const rawLabel = typeof body.label === 'string' ? body.label.trim() : '';
    const { data, failure } = await run(req, reply, ops.create, { label: rawLabel === '' ? null : rawLabel });
    if (failure) {
      if (failure.code === ErrorCode.invalidParameter || failure.code === ErrorCode.apiKeyLimit) {
        reply.headers(errorPageHeaders(failure));
        return renderKeys(req, reply, failure.status, { error: failure.message, label: rawLabel.slice(0, 100) });
      }
      return failurePage(req, reply, failure);
    }
    return renderKeys(req, reply, 201, { created: data.createMyApiKey });
  });

  scope.get('/api-keys/:id/revoke', async (req, reply) => {
    if (!req.cookies[SESSION_COOKIE]) return toLogin(reply, req, null);
    const { id } = req.params as { id: string };
    const { data, failure } = await run(req, reply, ops.key, { id });
    if (failure) return failurePage(req, reply, failure);
    if (!data.myApiKey.active) return reply.redirect(`${DASHBOARD_PREFIX}/api-keys`, 303);
    return sendPage(reply, 200, confirmRevokePage({ csrfToken: csrfToken(req, reply), account: data.me, key: data.myApiKey, now: clock.now() }));
  });

  scope.post('/api-keys/:id/revoke', protect, async (req, reply) => {
    const { id } = req.params as { id: string };
    const { failure } = await run(req, reply, ops.revoke, { id });
    if (failure) return failurePage(req, reply, failure);
    return reply.redirect(`${DASHBOARD_PREFIX}/api-keys?revoked=${encodeURIComponent(id)}`, 303);
  });

  /** The account and the subscription for a webhook page; another account's subscription is not_found. */
  async function webhookOf(req: FastifyRequest, reply: FastifyReply, id: string) {
    return run(req, reply, ops.webhook, { id });
  }

  scope.post('/webhooks', protect, async (req, reply) => {
    const body = (req.body ?? {}) as Record<string, unknown>;
    const url = typeof body.url === 'string' ? body.url.trim() : '';
    const apiKeyId = typeof body.apiKeyId === 'string' ? body.apiKeyId : '';
    const events = formValues(body.events);
    const form: WebhookFormState = { url: url.slice(0, 2048), apiKeyId, events };
    // Unknown event names never reach GraphQL (an enum refusal there would not say which field).
    if (events.length === 0 || events.some((event) => !WEBHOOK_EVENTS.includes(event))) {
      reply.header('x-error-code', ErrorCode.invalidParameter);
      return renderKeys(req, reply, 400, { webhookForm: { ...form, events: events.filter((event) => WEBHOOK_EVENTS.includes(event)), error: 'Choose at least one event.' } });
    }
    const created = await run(req, reply, ops.createWebhook, { input: { url, events: events as WebhookEventType[], apiKeyId } });
    if (created.failure) {
      if (WEBHOOK_FORM_ERRORS.has(created.failure.code)) {
        reply.headers(errorPageHeaders(created.failure));
        return renderKeys(req, reply, created.failure.status, { webhookForm: { ...form, error: created.failure.message } });
      }
      return failurePage(req, reply, created.failure);
    }
    const { secret, subscription } = created.data.createWebhookSubscription;
    const { data, failure } = await webhookOf(req, reply, subscription.id);
    if (failure) return failurePage(req, reply, failure);
    return sendPage(reply, 201, webhookSecretPage({ csrfToken: csrfToken(req, reply), account: data.me, subscription: data.webhookSubscription, secret, rotated: false }));
  });

  scope.post('/webhooks/:id/rotate-secret', protect, async (req, reply) => {
    const { id } = req.params as { id: string };
    const rotated = await run(req, reply, ops.rotateWebhook, { id });
    if (rotated.failure) return failurePage(req, reply, rotated.failure);
    const { data, failure } = await webhookOf(req, reply, id);
    if (failure) return failurePage(req, reply, failure);
    const secret = rotated.data.rotateWebhookSecret.secret;
    return sendPage(reply, 200, webhookSecretPage({ csrfToken: csrfToken(req, reply), account: data.me, subscription: data.webhookSubscription, secret, rotated: true }));
  });

  scope.post('/webhooks/:id/test', protect, async (req, reply) => {
    const { id } = req.params as { id: string };
    const tested = await run(req, reply, ops.testWebhook, { id });
    if (tested.failure) return failurePage(req, reply, tested.failure);
    const { data, failure } = await webhookOf(req, reply, id);
    if (failure) return failurePage(req, reply, failure);
    return sendPage(reply, 200, webhookTestPage({ csrfToken: csrfToken(req, reply), account: data.me, subscription: data.webhookSubscription, result: tested.data.testWebhookSubscription }));
  });

  scope.post('/webhooks/:id/reactivate', protect, async (req, reply) => {
    const { id } = req.params as { id: string };
    const { failure } = await run(req, reply, ops.reactivateWebhook, { id });
    if (failure) return failurePage(req, reply, failure);
    return reply.redirect(`${DASHBOARD_PREFIX}/api-keys?webhook=reactivated`, 303);
  });

  scope.get('/webhooks/:id/delete', async (req, reply) => {
    if (!req.cookies[SESSION_COOKIE]) return toLogin(reply, req, null);
    const { id } = req.params as { id: string };
    const { data, failure } = await webhookOf(req, reply, id);
    if (failure) return failurePage(req, reply, failure);
    return sendPage(reply, 200, confirmDeleteWebhookPage({ csrfToken: csrfToken(req, reply), account: data.me, subscription: data.webhookSubscription }));
  });

  scope.post('/webhooks/:id/delete', protect, async (req, reply) => {
    const { id } = req.params as { id: string };
    const { failure } = await run(req, reply, ops.deleteWebhook, { id });
    if (failure) return failurePage(req, reply, failure);
    return reply.redirect(`${DASHBOARD_PREFIX}/api-keys?webhook=deleted`, 303);
  });

  scope.get('/assets/:name', async (req, reply) => {
    const asset = assets.get((req.params as { name: string }).name);
    if (!asset) return reply.callNotFound();
    return reply.header('cache-control', asset.cacheControl).type(asset.type).send(asset.body);
  });
}
