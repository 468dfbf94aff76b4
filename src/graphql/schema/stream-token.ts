import { MINIMUM_TIER } from '../../domain/access.js';
import { AppError, ErrorCode } from '../../domain/errors.js';
import { STREAM_TOKEN_MAX_ORIGINS, STREAM_TOKEN_TTL } from '../../domain/stream-token.js';
import type { MintedStreamToken } from '../../services/stream-tokens.js';
import { builder } from '../builder.js';

const StreamTokenRef = builder.objectRef<MintedStreamToken>('StreamToken').implement({
  description: "A short-lived credential a browser may hold: it reads the issuing key's pick stream only (docs/API.md, \"Frontends\").",
  fields: (t) => ({
    token: t.exposeString('token', { description: '`sst_` + 43 base64url characters. Returned once; only its hash is kept.' }),
    expiresAt: t.expose('expiresAt', { type: 'DateTime', description: 'The token is refused from then on, and a stream it opened ends.' }),
    origins: t.exposeStringList('origins', { description: 'The page origins that may use it; none: no page may (server use only).' }),
  }),
});

builder.mutationFields((t) => ({
  createStreamToken: t.field({
    type: StreamTokenRef,
    description: `An Enterprise API key mints a stream token for a browser. At most 60 per key per hour (429 stream_token_limit).`,
    authScopes: { tier: MINIMUM_TIER.streamTokens },
    args: {
      ttlSeconds: t.arg.int({ description: `Lifetime in seconds, ${STREAM_TOKEN_TTL.min} to ${STREAM_TOKEN_TTL.max}; default ${STREAM_TOKEN_TTL.default}.` }),
      origins: t.arg.stringList({
        description: `At most ${STREAM_TOKEN_MAX_ORIGINS} exact origins (https://host[:port], or http:// on localhost or 127.0.0.1) whose pages may use the token.`,
      }),
    },
    resolve: (_root, args, context) => {
      const { principal } = context;
      if (principal.kind !== 'apiKey') {
        // The admin token has no pick stream of its own to hand out.
        throw new AppError(ErrorCode.adminRequired, 'A stream token is minted by the Enterprise API key whose stream it reads; the admin token cannot mint one.');
      }
      return context.services.streamTokens.mint(principal.apiKeyId, { ttlSeconds: args.ttlSeconds, origins: args.origins });
    },
  }),
}));
