/**
 * The one configuration loader (DESIGN section 4). Every variable is parsed and
 * validated here, once; a bad value is a ConfigError whose message is one line naming
 * the variable and what is allowed, and the entry point exits with it.
 */
import { isIP } from 'node:net';
import path from 'node:path';
import { TIERS, type Tier } from './domain/api-key.js';
import { DEFAULT_TAX_RATE } from './domain/odds.js';
import { DEFAULT_TIER_LIMITS, type TierLimit, type TierLimits } from './domain/access.js';

export class ConfigError extends Error {
  constructor(variable: string, problem: string) {
    super(`Invalid configuration: ${variable} ${problem}`);
    this.name = 'ConfigError';
  }
}

export { DEFAULT_TIER_LIMITS, type TierLimit, type TierLimits };

/** Spec section 6.1: retries after 1 min, 5 min, 30 min, 2 h, 12 h. */
export const DEFAULT_WEBHOOK_RETRY_SCHEDULE_MS = [60_000, 300_000, 1_800_000, 7_200_000, 43_200_000];

export const LOG_LEVELS = ['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent'] as const;
export type LogLevel = (typeof LOG_LEVELS)[number];

export interface Config {
  port: number;
  host: string;
  /** Absent: embedded PGlite under dataDir. */
  databaseUrl: string | null;
  dataDir: string;
  /** Absent: in-memory limiter and event bus. */
  redisUrl: string | null;
  /** Null in embedded mode without ADMIN_TOKEN: one is generated and kept under DATA_DIR. */
  adminToken: string | null;
  demoSeed: boolean;
  tierLimits: TierLimits;
  webhookRetryScheduleMs: number[];
  /**
   * How long a dispatcher leases a delivery it attempts (WEBHOOK_LEASE_SECONDS): after a crash
   * another instance takes the delivery over when the lease ends. Attempts time out 1 s before it.
   */
  webhookLeaseMs: number;
  streamHeartbeatSeconds: number;
  /** Test-only: host name -> loopback address. */
  webhookHostOverrides: Map<string, string>;
  /**
   * AES-256 key for webhook secrets at rest (WEBHOOK_SECRET_KEY). Null in embedded mode
   * without one: generated and kept under DATA_DIR.
   */
  webhookSecretKey: Buffer | null;
  /** Earlier keys, still accepted for decryption during a key rotation (WEBHOOK_SECRET_KEY_PREVIOUS). */
  webhookSecretKeysPrevious: Buffer[];
  logLevel: LogLevel;
  /** Default bookmaker tax rate used when a pick does not name one. */
  defaultTaxRate: number;
  production: boolean;
  /** Serve __schema / __type queries (GRAPHQL_INTROSPECTION); default on outside production, off in production. */
  graphqlIntrospection: boolean;
  /**
   * TRUST_PROXY: the proxies (addresses, CIDR ranges, or proxy-addr's `loopback`,
   * `linklocal`, `uniquelocal`) whose X-Forwarded-For / -Proto are believed, for the client
   * address (dashboard sign-in throttling, logs) and TLS detection (Secure cookies). Empty:
   * none, the socket's peer is the client.
   */
  trustProxy: string[];
  /**
   * ANONYMOUS_GRAPHQL_LIMIT: requests per minute per client address without credentials to
   * /graphql and /graphql/stream (docs/RATE_LIMITING.md).
   */
  anonymousGraphqlLimit: number;
  /**
   * GRAPHQL_CORS_ORIGINS: the exact origins (`https://ops.example.com`) that may call /graphql
   * from a browser, never with credentials. Empty: no CORS headers on /graphql at all.
   */
  graphqlCorsOrigins: string[];
}

const TRUST_PROXY_PRESETS = ['loopback', 'linklocal', 'uniquelocal'];

/** Comma-separated addresses, CIDR ranges or presets; never "everything" (any client could then forge its address). */
export function parseTrustProxy(raw: string | undefined): string[] {
  if (raw === undefined) return [];
  const problem = 'must list proxy addresses, CIDR ranges (10.0.0.0/8) or loopback / linklocal / uniquelocal, comma-separated';
  return raw.split(',').map((part) => {
    const entry = part.trim();
    if (TRUST_PROXY_PRESETS.includes(entry)) return entry;
    if (isIP(entry) !== 0) return entry;
    const [address, bits, ...rest] = entry.split('/');
    const family = isIP(address ?? '');
    if (rest.length === 0 && family !== 0 && /^\d{1,3}$/.test(bits ?? '') && Number(bits) <= (family === 4 ? 32 : 128)) return entry;
    throw new ConfigError('TRUST_PROXY', `${problem} (got "${entry}")`);
  });
}

/** Comma-separated exact origins: scheme, host and port as a browser sends them in `Origin`. */
export function parseCorsOrigins(raw: string | undefined): string[] {
  if (raw === undefined) return [];
  const problem = 'must list exact origins such as https://ops.example.com, comma-separated (scheme, host and optional port; no path, no "*")';
  return raw.split(',').map((part) => {
    const entry = part.trim();
    let origin: string | null = null;
    try {
      const url = new URL(entry);
      if (url.protocol === 'https:' || url.protocol === 'http:') origin = url.origin;
    } catch {
      origin = null;
    }
    // Only the exact serialisation matches an Origin header: no trailing slash, path or credentials.
    if (origin !== entry) throw new ConfigError('GRAPHQL_CORS_ORIGINS', `${problem} (got "${entry}")`);
    return entry;
  });
}

type Env = Record<string, string | undefined>;

function value(env: Env, name: string): string | undefined {
  const raw = env[name];
  if (raw === undefined) return undefined;
  const trimmed = raw.trim();
  return trimmed === '' ? undefined : trimmed;
}

function parseInteger(name: string, raw: string, min: number, max: number): number {
  if (!/^\d+$/.test(raw)) throw new ConfigError(name, `must be an integer between ${min} and ${max} (got "${raw}")`);
  const parsed = Number(raw);
  if (parsed < min || parsed > max) throw new ConfigError(name, `must be an integer between ${min} and ${max} (got "${raw}")`);
  return parsed;
}

function parseBoolean(name: string, raw: string): boolean {
  const lowered = raw.toLowerCase();
  if (['1', 'true', 'yes', 'on'].includes(lowered)) return true;
  if (['0', 'false', 'no', 'off'].includes(lowered)) return false;
  throw new ConfigError(name, `must be one of true, false, 1, 0, yes, no, on, off (got "${raw}")`);
}

function parseUrl(name: string, raw: string, protocols: string[]): string {
  let url: URL;
  try {
    url = new URL(raw);
  } catch {
    throw new ConfigError(name, `must be a URL starting with ${protocols.join(' or ')}`);
  }
  if (!protocols.includes(url.protocol)) throw new ConfigError(name, `must be a URL starting with ${protocols.join(' or ')}`);
  return raw;
}

export function parseTierLimits(raw: string | undefined): TierLimits {
  const limits: TierLimits = structuredClone(DEFAULT_TIER_LIMITS);
  if (raw === undefined) return limits;
  const problem = 'must be JSON like {"starter":{"hourly":25},"enterprise":{"monthly":40}} with tiers starter, growth, enterprise and positive integer hourly/monthly';
  let parsed: unknown;
  try {
    parsed = JSON.parse(raw);
  } catch {
    throw new ConfigError('TIER_LIMITS', problem);
  }
  if (typeof parsed !== 'object' || parsed === null || Array.isArray(parsed)) throw new ConfigError('TIER_LIMITS', problem);
  for (const [tier, override] of Object.entries(parsed)) {
    if (!(TIERS as readonly string[]).includes(tier)) throw new ConfigError('TIER_LIMITS', `${problem} (unknown tier "${tier}")`);
    if (typeof override !== 'object' || override === null || Array.isArray(override)) throw new ConfigError('TIER_LIMITS', problem);
    for (const [field, amount] of Object.entries(override)) {
      if (field !== 'hourly' && field !== 'monthly') throw new ConfigError('TIER_LIMITS', `${problem} (unknown field "${field}")`);
      if (typeof amount !== 'number' || !Number.isSafeInteger(amount) || amount < 1) throw new ConfigError('TIER_LIMITS', problem);
      limits[tier as Tier][field] = amount;
    }
  }
  return limits;
}

const DURATION_UNITS_MS: Record<string, number> = { ms: 1, s: 1_000, m: 60_000, min: 60_000, h: 3_600_000, hr: 3_600_000 };

export function parseRetrySchedule(raw: string | undefined): number[] {
  if (raw === undefined) return [...DEFAULT_WEBHOOK_RETRY_SCHEDULE_MS];
  const problem = `must be 5 comma-separated durations such as "1m,5m,30m,2h,12h" or "1s,1s,1s,1s,1s" (got "${raw}")`;
  const parts = raw.split(',').map((part) => part.trim());
  if (parts.length !== 5) throw new ConfigError('WEBHOOK_RETRY_SCHEDULE', problem);
  return parts.map((part) => {
    const match = /^(\d{1,9})(ms|s|m|min|h|hr)$/.exec(part);
    if (!match) throw new ConfigError('WEBHOOK_RETRY_SCHEDULE', problem);
    return Number(match[1]) * DURATION_UNITS_MS[match[2]!]!;
  });
}

export function parseHostOverrides(raw: string | undefined): Map<string, string> {
  const overrides = new Map<string, string>();
  if (raw === undefined) return overrides;
  const problem = `must be "name=127.0.0.1,other=::1" mapping host names to loopback addresses only (got "${raw}")`;
  for (const entry of raw.split(',')) {
    const [name, address, ...rest] = entry.trim().split('=');
    if (!name || !address || rest.length > 0) throw new ConfigError('WEBHOOK_HOST_OVERRIDES', problem);
    const host = name.trim().toLowerCase();
    const target = address.trim();
    // Only loopback targets: the override exists for tests and must not open a path to other hosts.
    const loopback = (isIP(target) === 4 && target.startsWith('127.')) || target === '::1';
    if (!/^[a-z0-9.-]+$/.test(host) || !loopback) throw new ConfigError('WEBHOOK_HOST_OVERRIDES', problem);
    overrides.set(host, target);
  }
  return overrides;
}

/** A 32-byte key as 64 hex digits or base64 / base64url. */
export function parseSecretKey(name: string, raw: string): Buffer {
  const problem = 'must be 32 random bytes as 64 hex digits or base64 (e.g. `openssl rand -base64 32`)';
  let key: Buffer | null = null;
  if (/^[0-9a-fA-F]{64}$/.test(raw)) key = Buffer.from(raw, 'hex');
  else if (/^[A-Za-z0-9+/_-]{43}=?$/.test(raw)) key = Buffer.from(raw.replace(/-/g, '+').replace(/_/g, '/'), 'base64');
  if (!key || key.length !== 32) throw new ConfigError(name, problem);
  return key;
}

export interface LoadConfigOptions {
  /** The migrate command needs neither an admin token nor the webhook secret key. */
  requireAdminToken?: boolean;
}

export function loadConfig(env: Env = process.env, options: LoadConfigOptions = {}): Config {
  const databaseUrlRaw = value(env, 'DATABASE_URL');
  const databaseUrl = databaseUrlRaw === undefined ? null : parseUrl('DATABASE_URL', databaseUrlRaw, ['postgres:', 'postgresql:']);
  const redisUrlRaw = value(env, 'REDIS_URL');
  const redisUrl = redisUrlRaw === undefined ? null : parseUrl('REDIS_URL', redisUrlRaw, ['redis:', 'rediss:']);
  const embedded = databaseUrl === null;
  const production = value(env, 'NODE_ENV') === 'production';

  const adminTokenRaw = value(env, 'ADMIN_TOKEN');
  if (adminTokenRaw !== undefined && adminTokenRaw.length < 16) {
    throw new ConfigError('ADMIN_TOKEN', 'must be at least 16 characters long');
  }
  if (adminTokenRaw === undefined && !embedded && (options.requireAdminToken ?? true)) {
    throw new ConfigError('ADMIN_TOKEN', 'is required when DATABASE_URL is set (it is generated only in embedded mode)');
  }

  const secretKeyRaw = value(env, 'WEBHOOK_SECRET_KEY');
  if (secretKeyRaw === undefined && !embedded && (options.requireAdminToken ?? true)) {
    throw new ConfigError('WEBHOOK_SECRET_KEY', 'is required when DATABASE_URL is set (it is generated only in embedded mode)');
  }
  const previousKeysRaw = value(env, 'WEBHOOK_SECRET_KEY_PREVIOUS');

  const logLevelRaw = value(env, 'LOG_LEVEL') ?? 'info';
  if (!(LOG_LEVELS as readonly string[]).includes(logLevelRaw)) {
    throw new ConfigError('LOG_LEVEL', `must be one of ${LOG_LEVELS.join(', ')} (got "${logLevelRaw}")`);
  }

  const portRaw = value(env, 'PORT');
  const demoSeedRaw = value(env, 'DEMO_SEED');
  const heartbeatRaw = value(env, 'STREAM_HEARTBEAT_SECONDS');
  const leaseRaw = value(env, 'WEBHOOK_LEASE_SECONDS');
  const introspectionRaw = value(env, 'GRAPHQL_INTROSPECTION');
  const anonymousLimitRaw = value(env, 'ANONYMOUS_GRAPHQL_LIMIT');

  return {
    port: portRaw === undefined ? 3000 : parseInteger('PORT', portRaw, 0, 65535),
    host: value(env, 'HOST') ?? '127.0.0.1',
    databaseUrl,
    dataDir: path.resolve(value(env, 'DATA_DIR') ?? './data'),
    redisUrl,
    adminToken: adminTokenRaw ?? null,
    demoSeed: demoSeedRaw === undefined ? embedded : parseBoolean('DEMO_SEED', demoSeedRaw),
    tierLimits: parseTierLimits(value(env, 'TIER_LIMITS')),
    webhookRetryScheduleMs: parseRetrySchedule(value(env, 'WEBHOOK_RETRY_SCHEDULE')),
    webhookLeaseMs: (leaseRaw === undefined ? 30 : parseInteger('WEBHOOK_LEASE_SECONDS', leaseRaw, 3, 3600)) * 1000,
    streamHeartbeatSeconds: heartbeatRaw === undefined ? 30 : parseInteger('STREAM_HEARTBEAT_SECONDS', heartbeatRaw, 1, 3600),
    webhookHostOverrides: parseHostOverrides(value(env, 'WEBHOOK_HOST_OVERRIDES')),
    webhookSecretKey: secretKeyRaw === undefined ? null : parseSecretKey('WEBHOOK_SECRET_KEY', secretKeyRaw),
    webhookSecretKeysPrevious:
      previousKeysRaw === undefined ? [] : previousKeysRaw.split(',').map((part) => parseSecretKey('WEBHOOK_SECRET_KEY_PREVIOUS', part.trim())),
    logLevel: logLevelRaw as LogLevel,
    defaultTaxRate: DEFAULT_TAX_RATE,
    production,
    graphqlIntrospection: introspectionRaw === undefined ? !production : parseBoolean('GRAPHQL_INTROSPECTION', introspectionRaw),
    trustProxy: parseTrustProxy(value(env, 'TRUST_PROXY')),
    anonymousGraphqlLimit: anonymousLimitRaw === undefined ? 120 : parseInteger('ANONYMOUS_GRAPHQL_LIMIT', anonymousLimitRaw, 1, 1_000_000),
    graphqlCorsOrigins: parseCorsOrigins(value(env, 'GRAPHQL_CORS_ORIGINS')),
  };
}
