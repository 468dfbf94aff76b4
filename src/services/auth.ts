/**
 * Authentication and request accounting for every surface.
 *
 * - API keys are looked up by SHA-256 behind a bounded in-process LRU cache. A revocation is
 *   broadcast on the event bus and evicts the key on every instance at once; the cache TTL
 *   bounds staleness if the bus is down.
 * - last_used_at is written in batches (one UPDATE per flush), not once per request.
 * - consume() asks the limiter for the key's tier limits: one request, one unit;
 *   consumeAnonymous() counts a request without credentials against its address' per-minute limit;
 *   consumeUsageRead() counts a read of GET /api/v1/usage against that endpoint's own window.
 */
import { LRUCache } from 'lru-cache';
import type { TierLimits } from '../domain/access.js';
import { apiKeyHashOfDigest, isApiKeyShape, parseBearerToken } from '../domain/api-key.js';
import type { Clock } from '../domain/clock.js';
import type { Principal } from '../domain/principal.js';
import { digestsEqual, secretDigest } from '../domain/secrets.js';
import { recordLastUsed } from '../persistence/api-keys-repository.js';
import type { Orm } from '../persistence/orm.js';
import type { Tier } from '../domain/api-key.js';
import type { ApiKeyService } from './api-keys.js';
import { STREAM_TOKEN_OPENS_PER_MINUTE, STREAM_TOKEN_PREFIX } from '../domain/stream-token.js';
import type { StreamTokenPrincipal, StreamTokenService } from './stream-tokens.js';
import type { ServiceMetrics } from './metrics/metrics.js';
import { BusChannel, type EventBus } from './events/event-bus.js';
import { clientAddressKey } from '../domain/client-address.js';
import type { Admission, AnonymousDecision, HourlyState, LimitDecision, MonthlyState, RateLimiter, StreamTokenOpenDecision, UsageReadDecision } from './limits/rate-limiter.js';

export type ApiKeyPrincipal = Extract<Principal, { kind: 'apiKey' }>;

export interface AuthServiceOptions {
  adminToken: string;
  tierLimits: TierLimits;
  /** STREAM_TOKEN_OPENS_PER_MINUTE; the default when absent. */
  streamTokenOpensPerMinute?: number;
  /** Entries in the key cache; each is about 200 bytes. */
  cacheSize?: number;
  cacheTtlMs?: number;
  lastUsedFlushMs?: number;
  metrics?: ServiceMetrics;
}

export const AUTH_CACHE_SIZE = 10_000;
export const AUTH_CACHE_TTL_MS = 10_000;
export const LAST_USED_FLUSH_MS = 10_000;

type CachedKey = { apiKeyId: string; tier: ApiKeyPrincipal['tier'] } | 'unknown';

/** A key whose access changed (revoked, or another tier): the revocation broadcast's message. */
export interface AccessChange {
  apiKeyId: string;
  keyHash: string;
}

/** JSON `{apiKeyId, keyHash}`; a bare key hash is what instances before the key id sent. */
function parseAccessChange(message: string): { keyHash: string; apiKeyId?: string } | null {
  if (!message.startsWith('{')) return { keyHash: message };
  try {
    const parsed = JSON.parse(message) as Partial<AccessChange>;
    if (typeof parsed.keyHash !== 'string') return null;
    return { keyHash: parsed.keyHash, apiKeyId: typeof parsed.apiKeyId === 'string' ? parsed.apiKeyId : undefined };
  } catch {
    return null;
  }
}

/**
 * Every Authorization header of a request, from Node's raw header list: Node keeps only the
 * first `Authorization` in `headers`, and a request carrying two is ambiguous, not the first.
 */
export function authorizationHeaders(rawHeaders: readonly string[]): string[] {
  const values: string[] = [];
  for (let i = 0; i + 1 < rawHeaders.length; i += 2) {
    if (rawHeaders[i]!.toLowerCase() === 'authorization') values.push(rawHeaders[i + 1]!);
  }
  return values;
}

export class AuthService {
  private readonly cache: LRUCache<string, CachedKey>;
  private readonly lastUsed = new Map<string, Date>();
  private readonly flushTimer: NodeJS.Timeout;
  private unsubscribe: (() => Promise<void>) | null = null;
  private readonly accessListeners = new Set<(apiKeyId: string) => void>();

  private readonly adminTokenDigest: Buffer;

  constructor(
    private readonly orm: Orm,
    private readonly apiKeys: ApiKeyService,
    private readonly limiter: RateLimiter,
    private readonly bus: EventBus,
    private readonly clock: Clock,
    private readonly options: AuthServiceOptions,
    private readonly streamTokens: StreamTokenService,
  ) {
    this.cache = new LRUCache({ max: options.cacheSize ?? AUTH_CACHE_SIZE, ttl: options.cacheTtlMs ?? AUTH_CACHE_TTL_MS });
    this.adminTokenDigest = secretDigest(options.adminToken);
    this.flushTimer = setInterval(() => void this.flushLastUsed().catch(() => undefined), options.lastUsedFlushMs ?? LAST_USED_FLUSH_MS);
    this.flushTimer.unref();
  }

  /** Subscribes to revocations and tier changes from every instance. */
  async start(): Promise<void> {
    this.unsubscribe = await this.bus.subscribe(BusChannel.apiKeyRevoked, (message) => {
      const change = parseAccessChange(message);
      if (!change) return;
      this.cache.delete(change.keyHash);
      if (change.apiKeyId) this.accessChanged(change.apiKeyId);
    });
  }

  /**
   * Listens for keys revoked or moved to another tier, on any instance (each change may be
   * reported more than once): long-lived connections admitted under the old access end.
   */
  onAccessChanged(listener: (apiKeyId: string) => void): () => void {
    this.accessListeners.add(listener);
    return () => {
      this.accessListeners.delete(listener);
    };
  }

  private accessChanged(apiKeyId: string): void {
    for (const listener of [...this.accessListeners]) {
      try {
        listener(apiKeyId);
      } catch {
        // One listener's failure does not keep the others from hearing of the change.
      }
    }
  }

  /**
   * The caller of a request from its Authorization header. Given every header of the request
   * (authorizationHeaders), more than one is an invalid credential: which one was meant cannot
   * be told, so none is taken. `accessToken` is a stream token sent as a query parameter (an
   * EventSource cannot send headers): only a stream token is taken there, and never together
   * with an Authorization header. A stream token's principal is for the stream endpoints only;
   * the caller decides (buildContext).
   */
  async principalFor(authorizationHeader: string | readonly string[] | null | undefined, accessToken?: string): Promise<Principal> {
    let authorization = authorizationHeader;
    if (Array.isArray(authorizationHeader)) {
      if (authorizationHeader.length > 1) return { kind: 'invalid' };
      authorization = authorizationHeader[0];
    }
    const hasHeader = typeof authorization === 'string' && authorization !== '';
    if (accessToken !== undefined) {
      if (hasHeader || !accessToken.startsWith(STREAM_TOKEN_PREFIX)) return { kind: 'invalid' };
      return (await this.streamTokens.principalFor(accessToken)) ?? { kind: 'invalid' };
    }
    if (!hasHeader) return { kind: 'anonymous' };
    const token = parseBearerToken(authorization as string);
    if (token === null) return { kind: 'invalid' };
    if (token.startsWith(STREAM_TOKEN_PREFIX)) return (await this.streamTokens.principalFor(token)) ?? { kind: 'invalid' };
    // One digest of the token serves the admin comparison and the key lookup.
    const digest = secretDigest(token);
    if (digestsEqual(digest, this.adminTokenDigest)) return { kind: 'admin' };
    if (!isApiKeyShape(token)) return { kind: 'invalid' };
    const keyHash = apiKeyHashOfDigest(digest);
    let cached = this.cache.get(keyHash);
    if (cached === undefined) {
      const apiKey = await this.apiKeys.findActiveByHash(keyHash);
      cached = apiKey ? { apiKeyId: apiKey.id, tier: apiKey.tier } : 'unknown';
      this.cache.set(keyHash, cached);
    }
    if (cached === 'unknown') return { kind: 'invalid' };
    this.lastUsed.set(cached.apiKeyId, this.clock.now());
    return { kind: 'apiKey', apiKeyId: cached.apiKeyId, tier: cached.tier };
  }

  /** Counts one request against the key's hourly window and monthly cap. */
  async consume(principal: ApiKeyPrincipal): Promise<LimitDecision> {
    const decision = await this.limiter.consume(principal.apiKeyId, this.options.tierLimits[principal.tier]);
    this.options.metrics?.rateLimitDecisions.inc({
      tier: principal.tier,
      outcome: decision.allowed ? 'allowed' : decision.reason === 'hourly' ? 'hourly_limited' : 'monthly_limited',
      // The engine that decided this request: mode() changes only with a decision or a probe.
      engine: this.limiter.mode(),
    });
    return decision;
  }

  /**
   * Takes back a request `consume` admitted: its answer was a 5xx (a database outage's 503, an
   * internal error), and a request the service failed to answer counts nothing.
   */
  release(admission: Admission): Promise<void> {
    return this.limiter.release(admission);
  }

  /**
   * Counts one read of the usage endpoint against its own window (60 per key per hour); the
   * key's hourly limit and monthly cap are untouched (src/services/limits/usage-window.ts).
   */
  consumeUsageRead(principal: ApiKeyPrincipal): Promise<UsageReadDecision> {
    return this.limiter.consumeUsageRead(principal.apiKeyId);
  }

  /**
   * Counts one stream opened with a stream token against the token's own rolling minute; the
   * issuing key's limits are untouched (its mint was the counted request).
   */
  consumeStreamTokenOpen(principal: StreamTokenPrincipal): Promise<StreamTokenOpenDecision> {
    return this.limiter.consumeStreamTokenOpen(principal.tokenHash, this.options.streamTokenOpensPerMinute ?? STREAM_TOKEN_OPENS_PER_MINUTE.default);
  }

  /** Counts one request without credentials from this client address (req.ip, as TRUST_PROXY decides it). */
  consumeAnonymous(address: string): Promise<AnonymousDecision> {
    return this.limiter.consumeAnonymous(clientAddressKey(address));
  }

  /**
   * Revokes in the database, then tells every instance to forget the key. With an owner, a key
   * of another account is not_found (the dashboard's revokeMyApiKey).
   */
  async revoke(id: string, owner: { accountId?: string } = {}) {
    const apiKey = await this.apiKeys.revoke(id, owner);
    await this.forgetKeys([{ apiKeyId: apiKey.id, keyHash: apiKey.keyHash }]);
    return apiKey;
  }

  /**
   * Drops keys from the cache of every instance (the revocation broadcast), so their next
   * request reads the database again, and tells access listeners everywhere: used after
   * revocations and tier changes. This instance's listeners hear it even when the bus is down.
   */
  async forgetKeys(keys: readonly AccessChange[]): Promise<void> {
    for (const key of keys) {
      this.cache.delete(key.keyHash);
      this.accessChanged(key.apiKeyId);
      await this.bus.publish(BusChannel.apiKeyRevoked, JSON.stringify(key)).catch(() => undefined);
    }
  }

  /** The key's hourly window and monthly usage under its tier's limits, counting nothing. */
  usage(apiKeyId: string, tier: Tier): Promise<{ hourly: HourlyState; monthly: MonthlyState }> {
    return this.limiter.peek(apiKeyId, this.options.tierLimits[tier]);
  }

  /** One statement for every key used since the last flush; never moves last_used_at backwards. */
  async flushLastUsed(): Promise<void> {
    if (this.lastUsed.size === 0) return;
    const batch = [...this.lastUsed];
    this.lastUsed.clear();
    await recordLastUsed(this.orm.em.fork(), batch);
  }

  async close(): Promise<void> {
    clearInterval(this.flushTimer);
    await this.unsubscribe?.();
    await this.flushLastUsed().catch(() => undefined);
  }
}
