/**
 * JSON 405 method_not_allowed with Allow for the other methods of a known path (REST, stream,
 * public endpoint alike); HEAD is allowed wherever GET is.
 */
import type { FastifyInstance } from 'fastify';
import { ErrorCode } from '../../src/domain/errors.js';
import { sendError } from '../../src/server/http-errors.js';

const ALL_METHODS = ['GET', 'HEAD', 'POST', 'PUT', 'PATCH', 'DELETE', 'OPTIONS'] as const;

export function registerMethodNotAllowed(app: FastifyInstance, url: string, allowed: readonly string[]): void {
  const allow = [...new Set([...allowed, ...(allowed.includes('GET') ? ['HEAD'] : [])])];
  const others = ALL_METHODS.filter((method) => !allow.includes(method));
  app.route({
    method: others,
    url,
    schema: { hide: true },
    handler: (req, reply) =>
      sendError(reply.header('allow', allow.join(', ')), ErrorCode.methodNotAllowed, `${req.method} is not allowed here; use ${allow.join(', ')}.`),
  });
}
