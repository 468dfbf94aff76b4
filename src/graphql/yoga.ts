import type { FastifyReply, FastifyRequest } from 'fastify';
import { GraphQLError } from 'graphql';
import { createYoga, type YogaServerInstance } from 'graphql-yoga';
import { ErrorCode, isAppError } from '../domain/errors.js';
import type { Services } from '../services/index.js';
import type { Context } from './context.js';
import { getSchema } from './schema.js';

export interface ServerContext {
  req: FastifyRequest;
  reply: FastifyReply;
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
      extensions: { code: original.code, ...original.extras },
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

export function createYogaServer(options: YogaOptions): Yoga {
  return createYoga<ServerContext, Context>({
    schema: getSchema(),
    graphqlEndpoint: '/graphql',
    graphiql: options.graphiql,
    landingPage: false,
    logging: false,
    maskedErrors: {
      maskError: (error) => toPublicGraphQLError(error, options.logUnexpected),
    },
    context: async ({ req }): Promise<Context> => ({
      principal: await options.services.auth.principalFor(req.headers.authorization),
      services: options.services,
      requestId: String(req.id),
    }),
  });
}
