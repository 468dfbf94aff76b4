/**
 * POST /api/v1/stream-tokens (docs/API.md, "Frontends"): an Enterprise key mints a stream token
 * for a browser. The body and the answer are declared in src/domain/stream-token-shape.ts; the
 * body translation checks JSON types only; the rules (lifetime, origins, the hourly cap) live in
 * the service behind GraphQL's createStreamToken.
 */
import { InvalidParameterError } from '../../src/domain/errors.js';
import { bodyVariables, resourceJson } from '../../src/domain/resource-shape.js';
import { STREAM_TOKEN_TTL } from '../../src/domain/stream-token.js';
import { CREATE_STREAM_TOKEN_BODY, STREAM_TOKEN } from '../../src/domain/stream-token-shape.js';
import { CreateStreamTokenDocument } from '../common/generated/graphql.js';
import { createStreamTokenBodySchema, streamTokenSchema } from '../common/schemas.js';
import { restRoute, SECRET_ANSWER_HEADERS, type RestRoute } from './routes.js';

export const STREAM_TOKENS_PATH = '/api/v1/stream-tokens';

export const STREAM_TOKEN_ROUTES: readonly RestRoute[] = [
  restRoute({
    operationId: 'createStreamToken',
    method: 'POST',
    url: STREAM_TOKENS_PATH,
    summary: 'Mint a stream token for a browser (Enterprise)',
    description:
      "Server to server: exchange the API key for a short-lived token a web page may hold. The token reads this key's pick stream only " +
      '(`GET /api/v1/picks/stream?access_token=`, `/graphql/stream` with `Authorization: Bearer`), from the origins it names, until it expires; ' +
      'everywhere else it is 401 invalid_api_key. Counts one request; at most 60 tokens per key per hour (429 stream_token_limit). Body: Content-Type application/json, optional.',
    document: CreateStreamTokenDocument,
    params: [],
    body: {
      schema: createStreamTokenBodySchema,
      optional: true,
      toVariables: (body) => {
        const ttl = body.ttl_seconds;
        if (ttl !== undefined && (typeof ttl !== 'number' || !Number.isInteger(ttl))) {
          throw new InvalidParameterError('ttl_seconds', `ttl_seconds must be a whole number of seconds from ${STREAM_TOKEN_TTL.min} to ${STREAM_TOKEN_TTL.max}.`);
        }
        const origins = body.origins;
        if (origins !== undefined && (!Array.isArray(origins) || origins.some((origin) => typeof origin !== 'string'))) {
          throw new InvalidParameterError('origins', 'origins must be an array of strings such as "https://app.example.com".');
        }
        return bodyVariables(CREATE_STREAM_TOKEN_BODY, body);
      },
    },
    successStatus: 201,
    successHeaders: SECRET_ANSWER_HEADERS,
    responseSchema: streamTokenSchema,
    errors: [400, 401, 403, 413, 429, 'stream_token_limit'],
    toBody: ({ createStreamToken: token }) => resourceJson(STREAM_TOKEN, token),
  }),
];
