import type { FastifyRequest } from 'fastify';
import { LRUCache } from 'lru-cache';
import { getOperationAST, GraphQLError, Kind, type DocumentNode, type FragmentDefinitionNode, type SelectionSetNode } from 'graphql';
import { useGraphQlJit } from '@envelop/graphql-jit';
import { createYoga, shouldRenderGraphiQL, type CORSOptions, type GraphiQLOptions, type Plugin, type YogaServerInstance } from 'graphql-yoga';
import {
  AppError,
  ERRORS,
  ErrorCode,
  errorHead,
  InvalidApiKeyError,
  isAppError,
  MonthlyQuotaExceededError,
  RateLimitExceededError,
  ServiceUnavailableError,
} from '../domain/errors.js';
import { answerCountsNothing } from '../domain/rate-limit.js';
import { streamTokenOriginAllowed } from '../domain/stream-token.js';
import { isDatabaseUnavailable } from '../persistence/availability.js';
import { authorizationHeaders } from '../services/auth.js';
import type { LimitDecision } from '../services/limits/rate-limiter.js';
import type { Services } from '../services/index.js';
import type { Context, ServerContext } from './context.js';

export type { ServerContext };
import { guardPlugins } from './limits.js';
import { getSchema } from './schema.js';
import { useSharedSubscriptionResults } from './shared-subscription-results.js';
import { useArgumentGuard } from './argument-guard.js';


declare module 'fastify' {
  interface FastifyRequest {
    /** Set while building the GraphQL context; the HTTP layer turns it into rate-limit headers. */
    rateLimit: LimitDecision | null;
    /**
     * Set when a GraphQL answer sent with HTTP 200 was a refusal that counts nothing (a 429 or
     * 5xx code, and no root field answered): the HTTP layer takes the request back as it does a
     * 429 or 5xx status.
     */
    refusedAfterAdmission: boolean;
  }
}

/** A failure of the whole request (auth, limits): carries its HTTP status (and headers) for yoga. */
/** An AppError as the answer to the whole request: its HTTP status and headers ride in extensions.http. */
export function requestError(error: AppError, credentialSent = false): GraphQLError {
  return new GraphQLError(error.message, {
    originalError: error,
    extensions: { code: error.code, ...error.extras, http: errorHead(error.code, error.extras, credentialSent) },
  });
}

export interface BuildContextOptions {
  /** Set by anonymous adapters (the public endpoint): credentials in the request are not looked at. */
  anonymous?: boolean;
  /** Set by the dashboard adapter: the session cookie's account is the principal. */
  dashboard?: { sessionToken: string | undefined };
  /**
   * Set when a REST adapter runs one of its own documents: a caller without credentials is not
   * counted against the anonymous GraphQL limit there (the /api/v1 routes refuse it with 401,
   * the public endpoint is served from its cache).
   */
  adapter?: boolean;
  /** Set by GET /api/v1/usage: the key is counted against that endpoint's own window, not its limits. */
  usageEndpoint?: boolean;
  /**
   * Set by the stream endpoints (the REST picks stream, /graphql/stream): a stream token is a
   * credential there, from the request's origin only (docs/API.md, "Frontends"); everywhere else
   * it is an invalid API key. `accessToken`: the REST stream's `access_token` query parameter.
   */
  streamEndpoint?: { accessToken?: string };
  /**
   * Set by the /api/v1 routes (REST, the picks stream, webhooks, usage, stream tokens): the
   * customer API takes customers' keys only. The admin token is refused there as any other
   * non-key (401 invalid_api_key): operators work through /graphql, and the one credential that
   * can do everything is never accepted, logged or limited on the surface customers' gateways see
   * (docs/DECISIONS.md, "A newcomer's first look").
   */
  customerApi?: boolean;
}

/** Every Authorization header of the request (Node keeps only the first in `headers`). */
function authorizationOf(req: FastifyRequest): string[] | string | undefined {
  const rawHeaders = req.raw?.rawHeaders;
  return Array.isArray(rawHeaders) ? authorizationHeaders(rawHeaders) : req.headers.authorization;
}

/**
 * 401 for a presented but invalid (or ambiguous) credential, then 429 when the key is over its
 * limits, or when a caller without credentials on /graphql or /graphql/stream is over its
 * address' per-minute limit.
 */
export async function buildContext(services: Services, req: FastifyRequest, options: BuildContextOptions = {}): Promise<Context> {
  // Anonymous surfaces (the public endpoint) ignore any credentials sent along; the dashboard
  // uses its session cookie only.
  const principal = options.anonymous
    ? ({ kind: 'anonymous' } as const)
    : options.dashboard
      ? await services.dashboardAuth.principalFor(options.dashboard.sessionToken)
      : await services.auth.principalFor(authorizationOf(req), options.streamEndpoint?.accessToken);
  // Only a presented credential is invalid: the challenge says the token was refused (RFC 6750).
  if (principal.kind === 'invalid') throw requestError(new InvalidApiKeyError(), true);
  if (principal.kind === 'admin' && options.customerApi) {
    throw requestError(new InvalidApiKeyError('The admin token is not an API key: /api/v1 takes customer keys; operators use /graphql.'), true);
  }
  if (principal.kind === 'streamToken') {
    if (!options.streamEndpoint) throw requestError(new InvalidApiKeyError('A stream token reads the picks stream only; send the API key here.'), true);
    const origin = typeof req.headers.origin === 'string' ? req.headers.origin : undefined;
    if (!streamTokenOriginAllowed(principal.origins, origin)) {
      throw requestError(new InvalidApiKeyError('This stream token may not be used from this origin (or from a page, when it names no origin).'), true);
    }
  }
  if (principal.kind === 'anonymous' && !options.anonymous && !options.dashboard && !options.adapter) {
    const decision = await services.auth.consumeAnonymous(req.ip);
    if (!decision.allowed) {
      const seconds = decision.retryAfterSeconds;
      throw requestError(
        new AppError(
          ErrorCode.rateLimitExceeded,
          `At most ${decision.limit} requests per minute without credentials from one address; retry in ${seconds} s or send an API key.`,
          { retry_after_seconds: seconds },
        ),
      );
    }
  }
  let limits: LimitDecision | null = null;
  if (principal.kind === 'apiKey' && options.usageEndpoint) {
    // Reading usage counts nothing against the limits it reports and answers when they are
    // exhausted; its own window keeps it from being unmetered. The headers show the key's standing.
    const [read, standing] = await Promise.all([services.auth.consumeUsageRead(principal), services.auth.usage(principal.apiKeyId, principal.tier)]);
    req.rateLimit = { allowed: true, ...standing };
    if (!read.allowed) {
      const seconds = read.retryAfterSeconds;
      throw requestError(
        new AppError(ErrorCode.rateLimitExceeded, `At most ${read.limit} usage reads per API key per hour; retry in ${seconds} s.`, { retry_after_seconds: seconds }),
      );
    }
  } else if (principal.kind === 'streamToken') {
    // The mint was the request counted against the key: a token copied out of a page must not
    // be able to spend the key's hour. Its opens have their own rolling minute instead.
    const opens = await services.auth.consumeStreamTokenOpen(principal);
    if (!opens.allowed) {
      const seconds = opens.retryAfterSeconds;
      throw requestError(
        new AppError(ErrorCode.streamTokenRateLimited, `A stream token may open at most ${opens.limit} streams per minute; retry in ${seconds} s (reconnect with Last-Event-ID to miss nothing).`, {
          retry_after_seconds: seconds,
        }),
      );
    }
  } else if (principal.kind === 'apiKey') {
    limits = await services.auth.consume(principal);
    req.rateLimit = limits;
    if (!limits.allowed) {
      throw requestError(
        limits.reason === 'monthly'
          ? new MonthlyQuotaExceededError(limits.monthly.resetsAt)
          : new RateLimitExceededError(limits.retryAfterSeconds),
      );
    }
  }
  return { principal, services, requestId: String(req.id), limits };
}

/**
 * The server acting for itself rather than for a caller: operator rights, no request, no
 * limits. Only server code can obtain it (no header or cookie maps to it); the stream
 * adapter's per-instance broadcast runs its one pickPublished subscription with it.
 */
export function internalContext(services: Services): Context {
  return { principal: { kind: 'admin' }, services, requestId: 'internal', limits: null };
}

export type Yoga = YogaServerInstance<ServerContext, Context>;

export interface YogaOptions {
  services: Services;
  /** GraphiQL at GET /graphql for browsers (Accept: text/html); null: none, /graphql answers as an API only. */
  graphiql: GraphiQLPage | null;
  /** Serve __schema / __type queries (GRAPHQL_INTROSPECTION). */
  introspection: boolean;
  /** GRAPHQL_CORS_ORIGINS: exact origins that may call /graphql from a browser; empty: no CORS. */
  corsOrigins: readonly string[];
  logUnexpected: (error: unknown) => void;
  /** Tracing's plugins (src/graphql/tracing.ts), when the process traces; they run last. */
  tracing?: readonly Plugin[];
}

/** GraphiQL's page: yoga's own loads GraphiQL from a CDN, so the app brings its own. */
export interface GraphiQLPage {
  /** What GraphiQL starts with (title, endpoint, default query). */
  options: GraphiQLOptions;
  /** The page's HTML (yoga's renderGraphiQL). */
  render: (options: GraphiQLOptions) => string | Promise<string>;
  /** One answer from the rendered page: its body and its own headers (a fresh nonce in both, say). */
  answer: (page: string) => { body: string; headers: Readonly<Record<string, string>> };
}

/** The GraphiQL page's answer as the app makes it: yoga answers the page with a bare Content-Type. */
function useGraphiQLPageAnswer(page: GraphiQLPage): Plugin {
  return {
    async onResponse({ request, response, setResponse, fetchAPI }) {
      if (!shouldRenderGraphiQL(request) || !(response.headers.get('content-type') ?? '').startsWith('text/html')) return;
      const { body, headers } = page.answer(await response.text());
      const answered = new fetchAPI.Headers(response.headers);
      answered.delete('content-length'); // the body's own
      for (const [name, value] of Object.entries(headers)) answered.set(name, value);
      setResponse(new fetchAPI.Response(body, { status: response.status, headers: answered }));
    },
  };
}

/**
 * A GraphQL answer is HTTP 200 whatever its errors, so the month invariant's HTTP rule (a 429 or
 * 5xx answer counts nothing) is told here: an operation that served nothing, every root field it
 * ran refused with a 429 or 5xx code (subscription_limit, api_key_limit, internal_error, ...),
 * marks its request as refused. An operation that answered any root field counts: it was served.
 * The root fields are read from the document, not from `data`: a non-null root field's error
 * nulls `data` as a whole, and a mutation's fields after it never run. `__typename` serves
 * nothing.
 */
function useRefusalsCountNothing(): Plugin<ServerContext & Context> {
  return {
    onExecute() {
      return {
        onExecuteDone({ args, result }) {
          if (!('errors' in result) || !result.errors?.length) return;
          const req = (args.contextValue as Partial<ServerContext>).req;
          const operation = getOperationAST(args.document, args.operationName);
          if (!req || !operation) return;
          const failed = new Map<string | number, boolean>();
          for (const error of result.errors) {
            if (error.path?.length !== 1) continue;
            const status = errorHead(toPublicGraphQLError(error, () => undefined).extensions.code as ErrorCode).status;
            failed.set(error.path[0]!, (failed.get(error.path[0]!) ?? true) && answerCountsNothing(status));
          }
          if (![...failed.values()].some(Boolean)) return;
          let keys = rootResponseKeys(args.document, operation.selectionSet).filter((key) => key !== '__typename');
          // Mutation fields run one after another: once one nulls `data`, the rest never run.
          if (operation.operation === 'mutation' && result.data == null) {
            const stoppedAt = keys.findIndex((key) => failed.has(key));
            if (stoppedAt >= 0) keys = keys.slice(0, stoppedAt + 1);
          }
          if (keys.every((key) => failed.get(key) === true)) req.refusedAfterAdmission = true;
        },
      };
    },
  };
}

/** The response keys of an operation's root fields (fragments spread at the root included). */
function rootResponseKeys(document: DocumentNode, selectionSet: SelectionSetNode, seen = new Set<string>()): string[] {
  return selectionSet.selections.flatMap((selection) => {
    if (selection.kind === Kind.FIELD) return [selection.alias?.value ?? selection.name.value];
    if (selection.kind === Kind.INLINE_FRAGMENT) return rootResponseKeys(document, selection.selectionSet, seen);
    const name = selection.name.value;
    if (seen.has(name)) return [];
    seen.add(name);
    const fragment = document.definitions.find((definition): definition is FragmentDefinitionNode => definition.kind === Kind.FRAGMENT_DEFINITION && definition.name.value === name);
    return fragment ? rootResponseKeys(document, fragment.selectionSet, seen) : [];
  });
}

/**
 * CORS on /graphql: none unless the request's Origin is one of GRAPHQL_CORS_ORIGINS, and never
 * with credentials. (yoga's default echoes any origin with Access-Control-Allow-Credentials:
 * true, which would let any web page read what a signed-in browser may read.) Preflights of
 * other origins get a 204 without CORS headers, which browsers refuse.
 */
function graphqlCors(origins: readonly string[]): (request: Request) => CORSOptions {
  const allowed = new Set(origins);
  return (request) => {
    const origin = request.headers.get('origin');
    if (origin === null || !allowed.has(origin)) return false;
    return {
      origin,
      credentials: false,
      methods: ['GET', 'POST'],
      allowedHeaders: ['Authorization', 'Content-Type', 'Accept', 'X-Request-Id'],
      exposedHeaders: ['X-Request-Id', 'Retry-After', 'X-RateLimit-Limit', 'X-RateLimit-Remaining', 'X-RateLimit-Reset', 'RateLimit', 'RateLimit-Policy'],
      maxAge: 600,
    };
  };
}

/** The answer depends on the Origin as soon as one is listed: caches must keep them apart. */
function useVaryOnOrigin(): Plugin {
  return {
    onResponse({ response }) {
      if (!/(^|,)\s*origin\s*(,|$)/i.test(response.headers.get('vary') ?? '')) response.headers.append('vary', 'Origin');
    },
  };
}

/**
 * Error policy, applied once for every surface: an AppError becomes its code and extras
 * in `extensions`; GraphQL's own request errors keep their message with a code; anything
 * else is logged and masked as internal_error with no detail.
 */
export function toPublicGraphQLError(error: unknown, logUnexpected: (error: unknown) => void): GraphQLError {

  const graphQLError = error instanceof GraphQLError ? error : null;
  const original = graphQLError ? (graphQLError.originalError ?? null) : error;
  if (isAppError(original)) {
    const extensions: Record<string, unknown> = { ...graphQLError?.extensions, code: original.code, ...original.extras };
    // A refused request (limits, auth) answers with its code's status whatever the Accept header:
    // yoga marks parse and validation failures as "spec" errors, which are 200 for application/json.
    if (extensions.http) extensions.http = { ...(extensions.http as object), spec: false, status: errorHead(original.code).status };
    return new GraphQLError(original.message, {
      nodes: graphQLError?.nodes,
      path: graphQLError?.path,
      extensions,
    });
  }
  if (graphQLError && (!original || original instanceof GraphQLError)) {
    // graphql-jit's errors (variable coercion) pass instanceof but may have no extensions at all.
    const code = typeof graphQLError.extensions?.code === 'string' ? graphQLError.extensions.code : ErrorCode.invalidRequest;
    return new GraphQLError(graphQLError.message, {
      nodes: graphQLError.nodes,
      path: graphQLError.path,
      extensions: { ...graphQLError.extensions, code },
    });
  }
  if (isDatabaseUnavailable(original ?? error)) {
    // The database is down or restarting: a prompt 503, not a bug (the REST adapters drop `http`).
    return new GraphQLError(new ServiceUnavailableError().message, {
      nodes: graphQLError?.nodes,
      path: graphQLError?.path,
      extensions: {
        code: ErrorCode.serviceUnavailable,
        http: errorHead(ErrorCode.serviceUnavailable),
      },
    });
  }
  logUnexpected(original ?? error);
  return new GraphQLError(ERRORS.internal_error.message, {
    nodes: graphQLError?.nodes,
    path: graphQLError?.path,
    extensions: { code: ErrorCode.internalError },
  });
}

const jitCache = new LRUCache<string, any>({ max: 1_000 });

export function createYogaServer(options: YogaOptions): Yoga {
  return createYoga<ServerContext, Context>({
    schema: getSchema(),
    graphqlEndpoint: '/graphql',
    graphiql: options.graphiql?.options ?? false,
    ...(options.graphiql ? { renderGraphiQL: options.graphiql.render } : {}),
    landingPage: false,
    logging: false,
    cors: graphqlCors(options.corsOrigins),
    // The REST adapters run a handful of fixed documents at high rates: compile them once.
    plugins: [
      // Hostile documents: depth, cost, aliases, directives, tokens; introspection per config.
      ...guardPlugins({ introspection: options.introspection }),
      useArgumentGuard(), // Strings (src/domain/text.ts) and bounds before execution: 400 invalid_parameter, never a database error.
      useGraphQlJit({}, { cache: { get: (key) => jitCache.get(key), set: (key, value) => void jitCache.set(key, value) } }),
      // After jit: replaces its subscribe so each event is executed once per access level, not per subscriber.
      useSharedSubscriptionResults(),
      useRefusalsCountNothing(),
      ...(options.corsOrigins.length > 0 ? [useVaryOnOrigin()] : []),
      ...(options.graphiql ? [useGraphiQLPageAnswer(options.graphiql)] : []),
      ...(options.tracing ?? []),
    ],
    maskedErrors: {
      maskError: (error) => toPublicGraphQLError(error, options.logUnexpected),
    },
    // `params` is set when yoga itself parsed the request (/graphql); the REST adapters run their
    // documents through getEnveloped without it.
    context: ({ req, anonymous, dashboard, usageEndpoint, streamEndpoint, customerApi, params }) =>
      buildContext(options.services, req, { anonymous, dashboard, usageEndpoint, streamEndpoint, customerApi, adapter: params === undefined }),
  });
}
