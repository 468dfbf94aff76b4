/**
 * Minting and reading stream tokens (docs/API.md, "Frontends"). A key's mints are serialised
 * by its row lock, so the hourly cap holds across instances.
 */
import type { Clock } from '../domain/clock.js';
import { AppError, ErrorCode } from '../domain/errors.js';
import type { Principal } from '../domain/principal.js';
import {
  generateStreamToken,
  hashStreamToken,
  isStreamTokenShape,
  STREAM_TOKENS_PER_HOUR,
  validateStreamTokenOrigins,
  validateStreamTokenTtl,
} from '../domain/stream-token.js';
import { lockApiKey } from '../persistence/api-keys-repository.js';
import type { Orm } from '../persistence/orm.js';
import { findStreamToken, insertStreamToken, tokensMintedSince } from '../persistence/stream-tokens-repository.js';
import { newId } from './ids.js';

const HOUR_MS = 3_600_000;

export interface MintedStreamToken {
  /** The plaintext token: returned once, never stored. */
  token: string;
  expiresAt: Date;
  origins: string[];
}

export type StreamTokenPrincipal = Extract<Principal, { kind: 'streamToken' }>;

export class StreamTokenService {
  constructor(
    private readonly orm: Orm,
    private readonly clock: Clock,
  ) {}

  /** A new token for the key; 429 stream_token_limit past STREAM_TOKENS_PER_HOUR in the last hour. */
  async mint(apiKeyId: string, input: { ttlSeconds?: unknown; origins?: unknown }): Promise<MintedStreamToken> {
    const ttlSeconds = validateStreamTokenTtl(input.ttlSeconds);
    const origins = validateStreamTokenOrigins(input.origins);
    const token = generateStreamToken();
    return this.orm.em.fork().transactional(async (em) => {
      await lockApiKey(em, apiKeyId);
      const now = this.clock.now();
      const minted = await tokensMintedSince(em, apiKeyId, new Date(now.getTime() - HOUR_MS));
      if (minted.count >= STREAM_TOKENS_PER_HOUR) {
        const freesAt = (minted.oldest ?? now).getTime() + HOUR_MS;
        const seconds = Math.max(1, Math.ceil((freesAt - now.getTime()) / 1000));
        throw new AppError(
          ErrorCode.streamTokenLimit,
          `At most ${STREAM_TOKENS_PER_HOUR} stream tokens per API key per hour; reuse a token until it expires, or retry in ${seconds} s.`,
          { retry_after_seconds: seconds },
        );
      }
      const expiresAt = new Date(now.getTime() + ttlSeconds * 1000);
      await insertStreamToken(em, { id: newId(), apiKeyId, tokenHash: hashStreamToken(token), origins, expiresAt, createdAt: now });
      return { token, expiresAt, origins };
    });
  }

  /**
   * The principal of a presented stream token: null when it is malformed, unknown, expired or
   * its key revoked. The tier is the key's tier now (a downgraded key's tokens lose the stream).
   */
  async principalFor(token: string): Promise<StreamTokenPrincipal | null> {
    if (!isStreamTokenShape(token)) return null;
    const tokenHash = hashStreamToken(token);
    const found = await findStreamToken(this.orm.em.fork(), tokenHash);
    const remainingMs = found ? found.expiresAt.getTime() - this.clock.now().getTime() : 0;
    if (!found || found.keyTier === null || remainingMs <= 0) return null;
    return { kind: 'streamToken', tokenHash, apiKeyId: found.apiKeyId, tier: found.keyTier, origins: found.origins, remainingMs };
  }
}
