import { MINIMUM_TIER } from '../../domain/access.js';
import { AppError, ErrorCode } from '../../domain/errors.js';
import { CREATE_STREAM_TOKEN_BODY, STREAM_TOKEN } from '../../domain/stream-token-shape.js';
import { builder } from '../builder.js';
import { bodyInputFields, resourceObjectType } from '../resource-types.js';

/** StreamToken and createStreamToken's arguments, as declared (src/domain/stream-token-shape.ts). */
const StreamTokenRef = resourceObjectType(STREAM_TOKEN);

builder.mutationFields((t) => ({
  createStreamToken: t.field({
    type: StreamTokenRef,
    description: `An Enterprise API key mints a stream token for a browser. At most 60 per key per hour (429 stream_token_limit).`,
    authScopes: { tier: MINIMUM_TIER.streamTokens },
    args: bodyInputFields(t.arg, CREATE_STREAM_TOKEN_BODY),
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
