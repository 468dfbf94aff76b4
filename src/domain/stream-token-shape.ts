/**
 * The stream token (docs/API.md, "Frontends"), declared once: the minted token (STREAM_TOKEN:
 * the GraphQL StreamToken, the documented JSON Schema, example and JSON, the REST selection) and
 * the body that asks for one (CREATE_STREAM_TOKEN_BODY: the documented request body and the
 * arguments of GraphQL's createStreamToken), from src/domain/resource-shape.ts.
 */
import Type from 'typebox';
import { dateTime, requestBody, resource } from './resource-shape.js';
import { STREAM_TOKEN_MAX_ORIGINS, STREAM_TOKEN_TTL } from './stream-token.js';

const EXAMPLE_ORIGIN = 'https://app.example.com';

export const STREAM_TOKEN = resource(
  'StreamToken',
  {
    token: Type.String({
      pattern: '^sst_[A-Za-z0-9_-]{43}$',
      description: "`sst_` and 43 base64url characters. Reads this key's pick stream only, from its origins; returned once (only its hash is kept).",
    }),
    expiresAt: dateTime({ description: 'Refused from then on; a stream it opened ends then.' }),
    origins: Type.Array(Type.String(), {
      description: 'The page origins that may use it, as normalised (lower-case host, default port dropped); none: no page may (server use only).',
    }),
  },
  {
    description: "A short-lived credential a browser may hold: it reads the issuing key's pick stream only (docs/API.md, \"Frontends\").",
    example: {
      token: 'sst_Zm9vYmFyYmF6cXV4cXV1eGNvcmdlZ3JhdWx0Z2FycGx',
      expiresAt: new Date('2026-12-01T15:15:00.000Z'),
      origins: [EXAMPLE_ORIGIN],
    },
  },
);

export const CREATE_STREAM_TOKEN_BODY = requestBody(
  {
    ttlSeconds: Type.Optional(
      Type.Integer({
        minimum: STREAM_TOKEN_TTL.min,
        maximum: STREAM_TOKEN_TTL.max,
        default: STREAM_TOKEN_TTL.default,
        description: `Lifetime of the token in seconds, ${STREAM_TOKEN_TTL.min} to ${STREAM_TOKEN_TTL.max}; default ${STREAM_TOKEN_TTL.default}.`,
      }),
    ),
    origins: Type.Optional(
      Type.Array(Type.String({ examples: [EXAMPLE_ORIGIN] }), {
        maxItems: STREAM_TOKEN_MAX_ORIGINS,
        description: `At most ${STREAM_TOKEN_MAX_ORIGINS} exact origins whose pages may use the token: \`https://host[:port]\`, or \`http://\` on localhost or 127.0.0.1; no path or trailing slash.`,
      }),
    ),
  },
  {
    description: `Every field is optional; an empty object (or no body) gives a ${STREAM_TOKEN_TTL.default / 60}-minute token for no page origin. Unknown fields are ignored.`,
    example: { ttlSeconds: STREAM_TOKEN_TTL.default, origins: [EXAMPLE_ORIGIN] },
  },
);
