/**
 * The public ledger (docs/API.md, "Verifying the record"): GET /api/public/ledger,
 * /api/public/ledger/head and /api/public/ledger/checkpoints. Anonymous, CORS-open and cacheable
 * like /api/public/picks/today; each answer is a translation of one GraphQL query.
 */
import { createHash } from 'node:crypto';
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { GraphQLError, type GraphQLSchema } from 'graphql';
import { LEDGER_AFTER, LEDGER_PAGE } from '../../src/domain/bounds.js';
import { GENESIS_HASH } from '../../src/domain/ledger.js';
import type { Yoga } from '../../src/graphql/yoga.js';
import { httpError, httpErrorOf, httpErrorOfGraphQL } from '../../src/server/http-errors.js';
import { LedgerCheckpointsDocument, LedgerDocument, LedgerHeadDocument } from '../common/generated/graphql.js';
import { registerMethodNotAllowed } from '../common/method-not-allowed.js';
import { openApiRouteSchema } from '../common/openapi.js';
import { openOperation, prepareOperation } from '../common/operations.js';
import { pageParam, parseParams, type ParamSpec } from '../common/params.js';
import { ledgerCheckpointsSchema, ledgerHeadSchema, ledgerPageSchema } from '../common/schemas.js';
import { CORS_HEADERS, notModified, PUBLIC_CACHE_CONTROL, sendPublicError } from './plugin.js';

export const LEDGER_PATH = '/api/public/ledger';

/** Entries are immutable once appended and the head moves with each pick change: a short shared cache. */
const LEDGER_HEADERS = { ...CORS_HEADERS, 'cache-control': PUBLIC_CACHE_CONTROL, 'content-type': 'application/json; charset=utf-8' };

const PAGE_PARAMS: readonly ParamSpec[] = [
  { name: 'after', in: 'query', type: 'integer', minimum: LEDGER_AFTER.min!, maximum: LEDGER_AFTER.max, default: LEDGER_AFTER.default, variable: 'after', description: 'Entries after this seq (0: from the start).' },
  { name: 'limit', in: 'query', type: 'integer', ...pageParam(LEDGER_PAGE), variable: 'limit', description: 'Entries per page.' },
];

const PUBLIC_ERROR_HEADERS = {
  'Cache-Control': { description: 'Errors are never cached.', schema: { type: 'string', const: 'no-store' }, required: true },
  'Access-Control-Allow-Origin': { description: 'Any origin, without credentials.', schema: { type: 'string', const: '*' }, required: true },
} as const;
const PUBLIC_SUCCESS_HEADERS = {
  ETag: { description: 'Hash of the body: revalidate with If-None-Match.', schema: { type: 'string' }, required: true },
  'Cache-Control': { description: 'As /api/public/picks/today.', schema: { type: 'string', const: PUBLIC_CACHE_CONTROL }, required: true },
  'Access-Control-Allow-Origin': { description: 'Any origin, without credentials.', schema: { type: 'string', const: '*' }, required: true },
} as const;

const NOT_MODIFIED = {
  304: {
    description: 'Not Modified: If-None-Match names the current ETag (or is `*`). No body.',
    headers: { ETag: { description: 'The current ETag.', schema: { type: 'string' }, required: true } },
  },
} as const;

export function registerLedgerRoutes(app: FastifyInstance, yoga: Yoga, schema: GraphQLSchema): void {
  const page = prepareOperation(schema, LedgerDocument);
  const head = prepareOperation(schema, LedgerHeadDocument);
  const checkpoints = prepareOperation(schema, LedgerCheckpointsDocument);

  /** Runs one anonymous operation; its data, or the error already answered. */
  async function run<T>(req: FastifyRequest, reply: FastifyReply, execute: (runner: Exclude<Awaited<ReturnType<typeof openOperation>>, GraphQLError>) => Promise<{ data?: T | null; errors?: readonly GraphQLError[] }>): Promise<T | null> {
    const runner = await openOperation(yoga, { req, reply, anonymous: true });
    if (runner instanceof GraphQLError) {
      sendPublicError(reply, httpErrorOf(runner));
      return null;
    }
    const result = await execute(runner);
    const error = result.errors?.[0];
    if (error || !result.data) {
      sendPublicError(reply, error ? httpErrorOfGraphQL(error, { onUnexpected: (unexpected) => req.log.error({ error: unexpected }, 'ledger operation failed without a known code') }) : httpError('internal_error'));
      return null;
    }
    return result.data;
  }
  /** The body with an ETag; 304 without a body when If-None-Match names it (as the public endpoint). */
  const send = (req: FastifyRequest, reply: FastifyReply, body: unknown) => {
    const text = JSON.stringify(body);
    const etag = `"${createHash('sha256').update(text).digest('base64url').slice(0, 27)}"`;
    if (notModified(req.headers['if-none-match'], etag)) return reply.status(304).headers({ ...CORS_HEADERS, 'cache-control': PUBLIC_CACHE_CONTROL, etag }).send();
    return reply.status(200).headers({ ...LEDGER_HEADERS, etag }).send(text);
  };

  /** One anonymous GET of the ledger: documented, answered with `answer`'s body (null: already answered). */
  function read(
    path: string,
    doc: { operationId: string; summary: string; description: string; params: readonly ParamSpec[]; responseSchema: object },
    answer: (req: FastifyRequest, reply: FastifyReply) => Promise<unknown | null>,
  ): void {
    app.route({
      method: 'GET',
      url: path,
      schema: openApiRouteSchema({
        ...doc,
        params: [...doc.params],
        url: path,
        successHeaders: PUBLIC_SUCCESS_HEADERS,
        otherResponses: NOT_MODIFIED,
        errors: doc.params.length > 0 ? ['invalid_parameter'] : [],
        errorHeaders: PUBLIC_ERROR_HEADERS,
        anonymous: true,
      }),
      handler: async (req, reply) => {
        const body = await answer(req, reply);
        return body === null ? reply : send(req, reply, body);
      },
    });
    app.options(path, { schema: { hide: true } }, async (_req, reply) => reply.status(204).headers(CORS_HEADERS).send());
    registerMethodNotAllowed(app, path, ['GET', 'OPTIONS']);
  }

  read(
    LEDGER_PATH,
    {
      operationId: 'getLedger',
      summary: 'The public ledger (anonymous)',
      description:
        'Every change that made a pick visible, hid, republished, rescheduled or settled it, in seq order: a hash chain anyone can verify. ' +
        'An entry shows its pick and salt from its reveal_after (the kickoff) on. Page with after=next_after.',
      params: PAGE_PARAMS,
      responseSchema: ledgerPageSchema,
    },
    async (req, reply) => {
      const parsed = parseParams(PAGE_PARAMS, req.query as Record<string, unknown>, {});
      if (parsed.error) {
        sendPublicError(reply, httpErrorOf(parsed.error));
        return null;
      }
      const data = await run(req, reply, (runner) => runner.execute(page, parsed.variables));
      if (data === null) return null;
      const entries = data.ledger.entries.map(({ pickId, revealAfter, prevHash, pick, salt, ...entry }) => ({
        seq: entry.seq,
        type: entry.type,
        at: entry.at,
        pick_id: pickId,
        reveal_after: revealAfter,
        commitment: entry.commitment,
        prev_hash: prevHash,
        hash: entry.hash,
        // Only the clear fields before the reveal: a paid pick is not given away.
        ...(pick === null || pick === undefined ? {} : { pick: JSON.parse(pick) as unknown, salt }),
      }));
      return { entries, next_after: data.ledger.nextAfter ?? null };
    },
  );

  read(
    `${LEDGER_PATH}/head`,
    {
      operationId: 'getLedgerHead',
      summary: "The public ledger's last entry (anonymous)",
      description: 'seq 0 and 64 zeros while the ledger is empty. Archive it: a later verification with --anchor proves history was not rewritten since.',
      params: [],
      responseSchema: ledgerHeadSchema,
    },
    async (req, reply) => {
      const data = await run(req, reply, (runner) => runner.execute(head, {}));
      if (data === null) return null;
      const last = data.ledgerHead;
      return last ? { seq: last.seq, hash: last.hash, at: last.at } : { seq: 0, hash: GENESIS_HASH, at: null };
    },
  );

  read(
    `${LEDGER_PATH}/checkpoints`,
    {
      operationId: 'getLedgerCheckpoints',
      summary: "The public ledger's head at every 00:00 UTC (anonymous)",
      description: 'For each midnight since the first entry, the last entry appended before it, oldest first.',
      params: [],
      responseSchema: ledgerCheckpointsSchema,
    },
    async (req, reply) => {
      const data = await run(req, reply, (runner) => runner.execute(checkpoints, {}));
      if (data === null) return null;
      return { checkpoints: data.ledgerCheckpoints.map(({ checkpoint, seq, hash, at }) => ({ checkpoint, seq, hash, at })) };
    },
  );
}
