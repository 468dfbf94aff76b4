import type { FastifyReply, FastifyRequest } from 'fastify';
import { LRUCache } from 'lru-cache';
import { GraphQLError } from 'graphql';
import { useGraphQlJit } from '@envelop/graphql-jit';
import { createYoga, type YogaServerInstance } from 'graphql-yoga';
import {
  AppError,
  ERROR_HTTP_STATUS,
  ErrorCode,
  InvalidApiKeyError,
  isAppError,
  MonthlyQuotaExceededError,
  RateLimitExceededError,
} from '../domain/errors.js';
import type { LimitDecision } from '../services/limits/rate-limiter.js';
import type { Services } from '../services/index.js';
import type { Context } from './context.js';
import { getSchema } from './schema.js';
import { useSharedSubscriptionResults } from './shared-subscription-results.js';

export interface ServerContext {
  req: FastifyRequest;
  reply: FastifyReply;
  /** Set by anonymous adapters: credentials in the request are not looked at. */
  anonymous?: boolean;
}

declare module 'fastify' {
  interface FastifyRequest {
    /** Set while building the GraphQL context; the HTTP layer turns it into rate-limit headers. */
    rateLimit: LimitDecision | null;
  }
}

/** A failure of the whole request (auth, limits): carries its HTTP status for yoga. */
function requestError(error: AppError): GraphQLError {
  return new GraphQLError(error.message, {
    originalError: error,
    extensions: { code: error.code, ...error.extras, http: { status: ERROR_HTTP_STATUS[error.code] } },
  });
}

/** 401 for a presented but invalid credential, then 429 when the key is over its limits. */
export async function buildContext(services: Services, req: FastifyRequest, options: { anonymous?: boolean } = {}): Promise<Context> {
  // Anonymous surfaces (the public endpoint) ignore any credentials sent along.
  const principal = options.anonymous ? ({ kind: 'anonymous' } as const) : await services.auth.principalFor(req.headers.authorization);
  if (principal.kind === 'invalid') throw requestError(new InvalidApiKeyError());
  let limits: LimitDecision | null = null;
  if (principal.kind === 'apiKey') {
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

export type Yoga = YogaServerInstance<ServerContext, Context>;

export interface YogaOptions {
  services: Services;
  graphiql: boolean;
  logUnexpected: (error: unknown) => void;
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
    return new GraphQLError(original.message, {
      nodes: graphQLError?.nodes,
      path: graphQLError?.path,
      extensions: { ...graphQLError?.extensions, code: original.code, ...original.extras },
    });
  }
  if (graphQLError && (!original || original instanceof GraphQLError)) {
    const code = typeof graphQLError.extensions.code === 'string' ? graphQLError.extensions.code : ErrorCode.invalidRequest;
    return new GraphQLError(graphQLError.message, {
      nodes: graphQLError.nodes,
      path: graphQLError.path,
      extensions: { ...graphQLError.extensions, code },
    });
  }
  logUnexpected(original ?? error);
  return new GraphQLError('Unexpected server error; retry with exponential backoff.', {
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
    graphiql: options.graphiql,
    landingPage: false,
    logging: false,
    // The REST adapters run a handful of fixed documents at high rates: compile them once.
    plugins: [
      useGraphQlJit({}, { cache: { get: (key) => jitCache.get(key), set: (key, value) => void jitCache.set(key, value) } }),
      // After jit: replaces its subscribe so each event is executed once per access level, not per subscriber.
      useSharedSubscriptionResults(),
    ],
    maskedErrors: {
      maskError: (error) => toPublicGraphQLError(error, options.logUnexpected),
    },
    context: ({ req, anonymous }) => buildContext(options.services, req, { anonymous }),
  });
}
