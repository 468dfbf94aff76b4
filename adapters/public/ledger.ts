/**
 * The public ledger (docs/API.md, "Verifying the record"): GET /api/public/ledger,
 * /api/public/ledger/head and /api/public/ledger/checkpoints. Anonymous, CORS-open and cacheable
 * like /api/public/picks/today; each answer is a translation of one GraphQL query, rendered once
 * and kept (the bytes, ETag and headers) per page (after, limit), head and checkpoints, so a
 * burst of anonymous readers costs one query per body (docs/DECISIONS.md, "Ledger cache"):
 * - a body is dropped with every announced change (src/app.ts wires it), the way appends are
 *   announced; a full page whose entries are all revealed never changes and is kept through them,
 *   until evicted;
 * - a page holding hidden entries is stale from the first of their reveals (the ledger query's
 *   nextRevealAt, the rule the page itself applies), checkpoints from the next midnight (UTC), by
 *   the app's clock;
 * - the rest is bounded by PUBLIC_CACHE_TTL_MS, for announcements lost between instances;
 * - a render that finds the chain longer than a kept end-of-chain body (the head, a last page)
 *   showed it drops the kept bodies, as the announcement of that append will: a head rendered
 *   fresh is not served beside an older last page (the verifier fails a head the chain lacks).
 */
import { createHash } from 'node:crypto';
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { GraphQLError, type ExecutionResult, type GraphQLSchema } from 'graphql';
import { LEDGER_AFTER, LEDGER_PAGE as LEDGER_PAGE_SIZE, LEDGER_SIZE } from '../../src/domain/bounds.js';
import type { Clock } from '../../src/domain/clock.js';
import { CURRENT_LEDGER_HEAD, EMPTY_LEDGER_HEAD, LEDGER_CHECKPOINTS, LEDGER_CONSISTENCY_PROOF, LEDGER_INCLUSION_PROOF, LEDGER_PAGE } from '../../src/domain/ledger-shape.js';
import { resourceJson } from '../../src/domain/resource-shape.js';
import { addDays, startOfUtcDay } from '../../src/domain/time.js';
import type { Yoga } from '../../src/graphql/yoga.js';
import { InvalidParameterError, NotFoundError, type ErrorCode } from '../../src/domain/errors.js';
import { httpError, httpErrorOf, httpErrorOfGraphQL, type HttpError } from '../../src/server/http-errors.js';
import {
  LedgerCheckpointsDocument,
  LedgerConsistencyProofDocument,
  LedgerDocument,
  LedgerHeadDocument,
  LedgerInclusionProofDocument,
  LedgerKeyDocument,
  LedgerSignedCheckpointDocument,
} from '../common/generated/graphql.js';
import { registerMethodNotAllowed } from '../common/method-not-allowed.js';
import { openApiRouteSchema } from '../common/openapi.js';
import { openOperation, prepareOperation, type OperationRunner } from '../common/operations.js';
import { inRestNames, pageParam, parseParams, type ParamSpec } from '../common/params.js';
import { ledgerCheckpointsSchema, ledgerConsistencyProofSchema, ledgerHeadSchema, ledgerInclusionProofSchema, ledgerPageSchema } from '../common/schemas.js';
import { answerRendered, CORS_HEADERS, PUBLIC_CACHE_CONTROL, PUBLIC_CACHE_TTL_MS, sendPublicError, type RenderedBody } from './plugin.js';
import { SingleFlightCache } from '../common/single-flight-cache.js';

export const LEDGER_PATH = '/api/public/ledger';

const TEXT_PLAIN = 'text/plain; charset=utf-8';
/** How long the latest signed checkpoint's body (and the proofs against it) is kept. */
const SIGNED_CHECKPOINT_KEEP_MS = 5_000;

/**
 * Bodies kept per instance: a page of 500 revealed entries is about 550 KB, so the bytes are
 * bounded (about 60 such pages, a walk of a 30,000-entry ledger) besides the count.
 */
const LEDGER_CACHE_MAX_BODIES = 1_000;
const LEDGER_CACHE_MAX_BYTES = 32 * 1024 * 1024;

const PAGE_PARAMS: readonly ParamSpec[] = [
  { name: 'after', in: 'query', type: 'integer', minimum: LEDGER_AFTER.min!, maximum: LEDGER_AFTER.max, default: LEDGER_AFTER.default, variable: 'after', description: 'Entries after this seq (0: from the start).' },
  { name: 'limit', in: 'query', type: 'integer', ...pageParam(LEDGER_PAGE_SIZE), variable: 'limit', description: 'Entries per page.' },
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

/** A kept answer, with what ends its freshness besides an announced change. */
interface RenderedLedgerBody extends RenderedBody {
  /** From this time of the app's clock (ms) on it may be stale: a hidden entry's reveal, the next midnight; Infinity: none. */
  staleAtMs: number;
  /** Nothing can change it (a full page, every entry revealed): kept through announced changes, until evicted. */
  immutable: boolean;
}
type RenderOutcome = RenderedLedgerBody | { error: HttpError };

/** The JSON body (or the text, with its type) with its ETag and headers, as sent on every hit. */
function rendered(body: unknown, freshness: Pick<RenderedLedgerBody, 'staleAtMs' | 'immutable'>, contentType = 'application/json; charset=utf-8'): RenderedLedgerBody {
  const text = contentType.startsWith('application/json') ? JSON.stringify(body) : String(body);
  const etag = `"${createHash('sha256').update(text).digest('base64url').slice(0, 27)}"`;
  const notModifiedHeaders = Object.freeze({ ...CORS_HEADERS, 'cache-control': PUBLIC_CACHE_CONTROL, etag });
  const headers = Object.freeze({ ...notModifiedHeaders, 'content-type': contentType });
  return { body: Buffer.from(text, 'utf8'), etag, headers, notModifiedHeaders, ...freshness };
}

export interface LedgerAdapter {
  /** Drops the kept bodies but the immutable pages: call when an append is announced. */
  invalidate(): void;
}

export function registerLedgerRoutes(app: FastifyInstance, yoga: Yoga, schema: GraphQLSchema, clock: Clock): LedgerAdapter {
  const page = prepareOperation(schema, LedgerDocument);
  const head = prepareOperation(schema, LedgerHeadDocument);
  const checkpoints = prepareOperation(schema, LedgerCheckpointsDocument);
  const signedCheckpoint = prepareOperation(schema, LedgerSignedCheckpointDocument);
  const verifierKey = prepareOperation(schema, LedgerKeyDocument);
  const inclusionProof = prepareOperation(schema, LedgerInclusionProofDocument);
  const consistencyProof = prepareOperation(schema, LedgerConsistencyProofDocument);

  // Requests that miss together share one render; errors are answered, never kept.
  const cache = new SingleFlightCache<RenderOutcome>({
    max: LEDGER_CACHE_MAX_BODIES,
    ttlMs: PUBLIC_CACHE_TTL_MS,
    byteBudget: { maxBytes: LEDGER_CACHE_MAX_BYTES, bytesOf: (outcome) => ('error' in outcome ? 1 : outcome.body.length) },
    cacheable: (outcome) => !('error' in outcome),
    isFresh: (outcome) => 'error' in outcome || clock.now().getTime() < outcome.staleAtMs,
    immutable: (outcome) => !('error' in outcome) && outcome.immutable,
  });
  /**
   * The shortest chain an end-of-chain body (the head, a page no entry followed) rendered since
   * the last invalidation showed: the last seq it showed (a page's `after` when empty).
   */
  let shortestChainKept = Infinity;
  const invalidate = () => {
    shortestChainKept = Infinity;
    cache.invalidate();
  };
  /**
   * A render saw entries up to `seq` (and, ending the chain, shows it ending at `chainEnd`): a
   * kept end-of-chain body shorter than that missed an append whose announcement is on its way.
   */
  const sawChainUpTo = (seq: number | null, chainEnd: number | null) => {
    if (seq !== null && seq > shortestChainKept) invalidate();
    if (chainEnd !== null) shortestChainKept = Math.min(shortestChainKept, chainEnd);
  };

  /** Runs one anonymous operation: its data, or the error to answer. */
  async function run<T>(
    req: FastifyRequest,
    reply: FastifyReply,
    execute: (runner: OperationRunner) => Promise<ExecutionResult<T>>,
    params: readonly ParamSpec[] = [],
  ): Promise<{ data: T } | { error: HttpError }> {
    const runner = await openOperation(yoga, { req, reply, anonymous: true });
    if (runner instanceof GraphQLError) return { error: httpErrorOf(runner) };
    const result = await execute(runner);
    const error = result.errors?.[0];
    if (error || !result.data) {
      // A refusal names the parameter as the caller sent it (tree_size, not treeSize).
      return { error: error ? httpErrorOfGraphQL(inRestNames(error, params), { onUnexpected: (unexpected) => req.log.error({ error: unexpected }, 'ledger operation failed without a known code') }) : httpError('internal_error') };
    }
    return { data: result.data };
  }

  /** What a request asks for: the key of its body and how to render it, or the refusal of its parameters. */
  type Asked = { key: string; render: (req: FastifyRequest, reply: FastifyReply) => Promise<RenderOutcome> } | { error: HttpError };

  /** One anonymous GET of the ledger: documented, answered from the kept body of its key. */
  function read(
    path: string,
    doc: { operationId: string; summary: string; description: string; params: readonly ParamSpec[]; responseSchema: object; contentType?: string; errors?: readonly ErrorCode[] },
    ask: (req: FastifyRequest) => Asked,
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
        errors: doc.errors ?? (doc.params.length > 0 ? ['invalid_parameter'] : []),
        ...(doc.contentType ? { successMediaType: doc.contentType.split(';')[0]! } : {}),
        errorHeaders: PUBLIC_ERROR_HEADERS,
        anonymous: true,
      }),
      // Not async, as the public endpoint's: a hit is answered synchronously; a miss returns the
      // promise of the one render of its key, which it starts or joins.
      handler: (req, reply) => {
        const asked = ask(req);
        if ('error' in asked) {
          sendPublicError(reply, asked.error);
          return;
        }
        const cached = cache.peek(asked.key);
        if (cached) {
          answerRendered(req, reply, cached);
          return;
        }
        return cache.get(asked.key, () => asked.render(req, reply)).then((outcome) => answerRendered(req, reply, outcome));
      },
    });
    app.options(path, { schema: { hide: true } }, async (_req, reply) => reply.status(204).headers(CORS_HEADERS).send());
    registerMethodNotAllowed(app, path, ['GET', 'OPTIONS']);
  }

  async function renderPage(req: FastifyRequest, reply: FastifyReply, after: number, limit: number): Promise<RenderOutcome> {
    const outcome = await run(req, reply, (runner) => runner.execute(page, { after, limit }));
    if ('error' in outcome) return outcome;
    const { entries, nextRevealAt } = outcome.data.ledger;
    const body = resourceJson(LEDGER_PAGE, outcome.data.ledger);
    const last = entries.at(-1)?.seq ?? null;
    // A page shorter than its limit ends the chain: an append changes it (an empty one as well, from after + 1).
    const endsChain = entries.length < limit;
    const chainEnd = endsChain ? (last ?? after) : null;
    sawChainUpTo(last, chainEnd);
    const staleAtMs = nextRevealAt == null ? Infinity : Date.parse(nextRevealAt);
    return rendered(body, { staleAtMs, immutable: !endsChain && nextRevealAt == null });
  }

  read(
    LEDGER_PATH,
    {
      operationId: 'getLedger',
      summary: 'The public ledger (anonymous)',
      description:
        'Every change that made a pick visible, hid, republished, rescheduled or settled it, in seq order: a hash chain anyone can verify. ' +
        'An entry shows its pick and salt from its reveal_after (the kickoff rounded up to the quarter hour) on. Page with after=next_after.',
      params: PAGE_PARAMS,
      responseSchema: ledgerPageSchema,
    },
    (req) => {
      const parsed = parseParams(PAGE_PARAMS, req.query as Record<string, unknown>, {});
      if (parsed.error) return { error: httpErrorOf(parsed.error) };
      // Keyed on the numbers GraphQL will get, defaults applied ('+500', '0500' and '500' are one
      // page; no limit is limit=100). Their range is GraphQL's to check: a refusal is never kept.
      const after = (parsed.variables.after as number | undefined) ?? LEDGER_AFTER.default;
      const limit = (parsed.variables.limit as number | undefined) ?? LEDGER_PAGE_SIZE.default;
      return { key: `${after} ${limit}`, render: (req, reply) => renderPage(req, reply, after, limit) };
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
    () => ({
      key: 'head',
      render: async (req, reply) => {
        const outcome = await run(req, reply, (runner) => runner.execute(head, {}));
        if ('error' in outcome) return outcome;
        const last = outcome.data.ledgerHead;
        sawChainUpTo(last?.seq ?? null, last?.seq ?? 0);
        // Only an append moves the head.
        return rendered(resourceJson(CURRENT_LEDGER_HEAD, last ?? EMPTY_LEDGER_HEAD), { staleAtMs: Infinity, immutable: false });
      },
    }),
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
    () => ({
      key: 'checkpoints',
      render: async (req, reply) => {
        // Read before the query: a midnight passing meanwhile makes the body stale at once, never late.
        const nextMidnight = addDays(startOfUtcDay(clock.now()), 1).getTime();
        const outcome = await run(req, reply, (runner) => runner.execute(checkpoints, {}));
        if ('error' in outcome) return outcome;
        const heads = outcome.data.ledgerCheckpoints;
        sawChainUpTo(heads.at(-1)?.seq ?? null, null);
        return rendered(resourceJson(LEDGER_CHECKPOINTS, { checkpoints: heads }), { staleAtMs: nextMidnight, immutable: false });
      },
    }),
  );

  // The signed checkpoint changes without an append (signing follows it by up to
  // LEDGER_CHECKPOINT_SECONDS, cosignatures arrive after): its body and the default-size proofs are
  // kept this long at most.
  const latestStaleAt = () => clock.now().getTime() + SIGNED_CHECKPOINT_KEEP_MS;

  read(
    `${LEDGER_PATH}/checkpoint`,
    {
      operationId: 'getLedgerCheckpoint',
      summary: 'The latest signed checkpoint (anonymous)',
      description:
        "The C2SP tlog-checkpoint of the ledger's RFC 9162 Merkle tree as a signed note (text/plain): origin, tree size, base64 root, a blank line, the log's Ed25519 signature line, " +
        "then every witness's cosignature line (C2SP tlog-cosignature). Check it with the key of /api/public/ledger/key. 404 not_found before the first checkpoint.",
      params: [],
      responseSchema: { type: 'string', example: 'api.example.com/ledger\n1042\nA1b2...=\n\n\u2014 api.example.com/ledger 3ba5c1e2...\n' },
      contentType: TEXT_PLAIN,
      errors: ['not_found'],
    },
    () => ({
      key: 'checkpoint',
      render: async (req, reply) => {
        const staleAtMs = latestStaleAt();
        const outcome = await run(req, reply, (runner) => runner.execute(signedCheckpoint, {}));
        if ('error' in outcome) return outcome;
        const checkpoint = outcome.data.ledgerSignedCheckpoint;
        if (!checkpoint) return { error: httpErrorOf(new NotFoundError('No checkpoint is signed yet: the ledger is empty, or its first entries are not a minute old.')) };
        return rendered(checkpoint.note, { staleAtMs, immutable: false }, TEXT_PLAIN);
      },
    }),
  );

  read(
    `${LEDGER_PATH}/key`,
    {
      operationId: 'getLedgerKey',
      summary: "The checkpoints' verifier key (anonymous)",
      description: 'The C2SP signed-note verifier key of the checkpoints, `<origin>+<key id>+<base64 key>` and a newline (text/plain). Fetch it once and pin it.',
      params: [],
      responseSchema: { type: 'string', example: 'api.example.com/ledger+3ba5c1e2+AYsW...\n' },
      contentType: TEXT_PLAIN,
    },
    () => ({
      key: 'key',
      render: async (req, reply) => {
        const outcome = await run(req, reply, (runner) => runner.execute(verifierKey, {}));
        if ('error' in outcome) return outcome;
        return rendered(`${outcome.data.ledgerKey}\n`, { staleAtMs: Infinity, immutable: true }, TEXT_PLAIN);
      },
    }),
  );

  /**
   * A proof's route: its parameters (the required ones refused when absent), and its one
   * operation. A proof for given sizes never changes; one for the latest checkpoint's size goes with it.
   */
  function proofRoute<T>(
    path: string,
    doc: { operationId: string; summary: string; description: string; responseSchema: object },
    params: readonly ParamSpec[],
    defaulted: string,
    execute: (runner: OperationRunner, variables: Record<string, unknown>) => Promise<ExecutionResult<T>>,
    toBody: (data: T) => unknown,
  ): void {
    read(path, { ...doc, params }, (req) => {
      const parsed = parseParams(params, req.query as Record<string, unknown>, {});
      if (parsed.error) return { error: httpErrorOf(parsed.error) };
      const variables = parsed.variables;
      const missing = params.find((param) => param.required && variables[param.variable] === undefined);
      if (missing) return { error: httpErrorOf(new InvalidParameterError(missing.name, `${missing.name} is required`)) };
      const immutable = variables[defaulted] !== undefined;
      return {
        key: `${path} ${params.map((param) => variables[param.variable] ?? '').join(' ')}`,
        render: async (req, reply) => {
          const staleAtMs = immutable ? Infinity : latestStaleAt();
          const outcome = await run(req, reply, (runner) => execute(runner, variables), params);
          if ('error' in outcome) return outcome;
          return rendered(toBody(outcome.data), { staleAtMs, immutable });
        },
      };
    });
  }

  const sizeParam = (name: string, variable: string, required: boolean, description: string): ParamSpec => ({
    name,
    in: 'query',
    type: 'integer',
    minimum: LEDGER_SIZE.min!,
    maximum: LEDGER_SIZE.max,
    variable,
    required,
    description,
  });

  proofRoute(
    `${LEDGER_PATH}/proof/inclusion`,
    {
      operationId: 'getLedgerInclusionProof',
      summary: 'Inclusion proof of an entry (anonymous)',
      description:
        'The RFC 9162 (section 2.1.3) inclusion proof of entry `seq` (leaf `seq - 1`, SHA-256(0x00 || its hash)) in the tree of the first `tree_size` entries; ' +
        "`tree_size` defaults to the latest checkpoint's. A proof for a given tree_size never changes.",
      responseSchema: ledgerInclusionProofSchema,
    },
    [sizeParam('seq', 'seq', true, 'The entry.'), sizeParam('tree_size', 'treeSize', false, "The tree's size, at least seq and at most the ledger's length; default: the latest checkpoint's.")],
    'treeSize',
    (runner, variables) => runner.execute(inclusionProof, variables as { seq: number; treeSize?: number }),
    (data) => resourceJson(LEDGER_INCLUSION_PROOF, data.ledgerInclusionProof),
  );

  proofRoute(
    `${LEDGER_PATH}/proof/consistency`,
    {
      operationId: 'getLedgerConsistencyProof',
      summary: 'Consistency proof between two tree sizes (anonymous)',
      description:
        'The RFC 9162 (section 2.1.4) consistency proof from the tree of the first `from` entries (an archived checkpoint) to the tree of the first `to`; ' +
        "`to` defaults to the latest checkpoint's. A proof for given sizes never changes.",
      responseSchema: ledgerConsistencyProofSchema,
    },
    [sizeParam('from', 'from', true, 'The older size.'), sizeParam('to', 'to', false, "The newer size, at least from and at most the ledger's length; default: the latest checkpoint's.")],
    'to',
    (runner, variables) => runner.execute(consistencyProof, variables as { from: number; to?: number }),
    (data) => resourceJson(LEDGER_CONSISTENCY_PROOF, data.ledgerConsistencyProof),
  );

  return { invalidate };
}
