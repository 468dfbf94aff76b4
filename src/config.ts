/**
 * The one configuration loader (README.md, "Configuration"). Every variable is parsed and
 * validated here, once; a bad value is a ConfigError whose message is one line naming
 * the variable and what is allowed, and the entry point exits with it.
 */
import { isIP } from 'node:net';
import path from 'node:path';
import { TIERS, type Tier } from './domain/api-key.js';
import { DEFAULT_STAKE_ADVICE, DEFAULT_TAX_RATE, MAX_DECIMAL_ODDS, type StakeAdvice } from './domain/odds.js';
import { DEFAULT_TIER_LIMITS, type TierLimit, type TierLimits } from './domain/access.js';
import { DEFAULT_ODDS_HISTORY_DAYS } from './domain/bounds.js';
import { DEVIG_METHODS, isDevigMethod } from './domain/devig.js';
import { REFERENCE_WEIGHT_MAX, type ReferenceBook } from './domain/reference-consensus.js';
import { BOOKMAKER_KEY, sportSlugOfKey } from './domain/odds-feed.js';
import { MARKETS, type Market } from './domain/market.js';
import { DEFAULT_STREAM_TOKEN_MAX_STREAMS, STREAM_TOKEN_OPENS_PER_MINUTE } from './domain/stream-token.js';
import { DEFAULT_DETECTION_OPTIONS, type DetectionOptions, type OddsRange } from './domain/value-detection.js';
import { DEFAULT_MATCH_MIN_MINUTES, DEFAULT_SETTLEMENT_OPTIONS, type SettlementOptions } from './domain/settlement.js';
import { SIMULATED_MATCH_MIN_MINUTES, SIMULATED_REFERENCE_BOOKMAKERS } from './services/value-engine/simulated-feed.js';
import { isSportSlug, SPORT_SLUGS, type SportSlug } from './domain/sports.js';
import { isLoopbackListenHost } from './domain/webhook-url.js';

export class ConfigError extends Error {
  constructor(variable: string, problem: string) {
    super(`Invalid configuration: ${variable} ${problem}`);
    this.name = 'ConfigError';
  }
}

export { DEFAULT_TIER_LIMITS, type TierLimit, type TierLimits };

/** docs/API.md, "Success and retries": retries after 1 min, 5 min, 30 min, 2 h, 12 h. */
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
  /** STREAM_TOKEN_MAX_STREAMS: streams one key's stream tokens may hold open on an instance. */
  streamTokenMaxStreams: number;
  /** STREAM_TOKEN_OPENS_PER_MINUTE: streams one stream token may open in a rolling minute. */
  streamTokenOpensPerMinute: number;
  /** The public live feed (GET /api/public/picks/stream). */
  publicStream: { delaySeconds: number; perAddress: number; maxStreams: number };
  /** Test-only: host name -> loopback address. */
  webhookHostOverrides: Map<string, string>;
  /**
   * The embedded demo's local webhook receivers (docs/WEBHOOKS.md, "URL rule"): webhook URLs on
   * 127.0.0.1, [::1] or localhost, http or https, are accepted and delivered to this machine.
   * Derived, not set: on only in embedded demo mode (no DATABASE_URL, DEMO_SEED on), outside
   * production, with a loopback HOST, so only someone who can already reach this machine's
   * loopback can point a webhook at it.
   */
  localWebhookReceivers: boolean;
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
  /** The stake advice stored with each pick (STAKE_KELLY_MULTIPLIER, STAKE_MAX_PCT). */
  stakeAdvice: StakeAdvice;
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
  /** The value engine (docs/VALUE_ENGINE.md): where odds come from, and the detection rules. */
  valueEngine: ValueEngineConfig;
}

export const FEED_REGIONS = ['us', 'us2', 'uk', 'eu', 'au'] as const;

export interface OddsFeedConfig {
  /** ODDS_FEED_URL without a trailing slash. */
  url: string;
  apiKey: string;
}

export interface ValueEngineConfig {
  /** Null: no HTTP feed (push with ingestOdds / ingestScores, or the demo feed). */
  feed: OddsFeedConfig | null;
  /** DEMO_FEED: the built-in simulated feed instead of an HTTP one. */
  demoFeed: boolean;
  /** v4 sport keys polled (ODDS_FEED_SPORTS); empty with no feed. */
  sportKeys: string[];
  regions: string[];
  /** The v4 market keys read (ODDS_FEED_MARKETS); the feed's quota cost is markets x regions per sport per poll. */
  markets: Market[];
  oddsPollSeconds: number;
  scoresPollSeconds: number;
  detection: DetectionOptions;
  settlement: SettlementOptions;
  oddsHistoryDays: number;
}

/** The largest MATCH_MIN_MINUTES: a day. */
const MATCH_MIN_MINUTES_MAX = 1440;

/**
 * MATCH_MIN_MINUTES: one whole number of minutes for every sport, or a JSON object by sport slug
 * (`{"soccer":100,"tennis":60}`) whose missing slugs keep `defaults`.
 */
export function parseMatchMinMinutes(raw: string | undefined, defaults: Readonly<Record<SportSlug, number>>): Record<SportSlug, number> {
  const result = { ...defaults };
  if (raw === undefined) return result;
  const problem = `must be a whole number of minutes from 0 to ${MATCH_MIN_MINUTES_MAX}, or a JSON object of such numbers by sport slug (${SPORT_SLUGS.join(', ')})`;
  const minutes = (value: unknown): number => {
    if (typeof value !== 'number' || !Number.isInteger(value) || value < 0 || value > MATCH_MIN_MINUTES_MAX) throw new ConfigError('MATCH_MIN_MINUTES', problem);
    return value;
  };
  if (/^\d{1,4}$/.test(raw.trim())) {
    const every = minutes(Number(raw.trim()));
    for (const sport of SPORT_SLUGS) result[sport] = every;
    return result;
  }
  let parsed: unknown;
  try {
    parsed = JSON.parse(raw);
  } catch {
    throw new ConfigError('MATCH_MIN_MINUTES', problem);
  }
  if (typeof parsed !== 'object' || parsed === null || Array.isArray(parsed)) throw new ConfigError('MATCH_MIN_MINUTES', problem);
  for (const [sport, value] of Object.entries(parsed)) {
    if (!isSportSlug(sport)) throw new ConfigError('MATCH_MIN_MINUTES', `names "${sport}", which is not a sport slug (${SPORT_SLUGS.join(', ')})`);
    result[sport] = minutes(value);
  }
  return result;
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

/** A JSON object variable, or a ConfigError naming it with `problem`. */
function parseJsonObject(name: string, raw: string, problem: string): Record<string, unknown> {
  let parsed: unknown;
  try {
    parsed = JSON.parse(raw);
  } catch {
    throw new ConfigError(name, problem);
  }
  if (typeof parsed !== 'object' || parsed === null || Array.isArray(parsed)) throw new ConfigError(name, problem);
  return parsed as Record<string, unknown>;
}

export function parseTierLimits(raw: string | undefined): TierLimits {
  const limits: TierLimits = structuredClone(DEFAULT_TIER_LIMITS);
  if (raw === undefined) return limits;
  const problem = 'must be JSON like {"starter":{"hourly":25},"enterprise":{"monthly":40}} with tiers starter, growth, enterprise and positive integer hourly/monthly';
  const parsed = parseJsonObject('TIER_LIMITS', raw, problem);
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

/** A decimal number written plainly (0.02, 1, .5): no exponent, no sign, no hex. */
function parseDecimal(name: string, raw: string, min: number, max: number, rule: string): number {
  if (!/^(\d+(\.\d*)?|\.\d+)$/.test(raw)) throw new ConfigError(name, `must be ${rule} (got "${raw}")`);
  const parsed = Number(raw);
  if (!(parsed >= min && parsed <= max)) throw new ConfigError(name, `must be ${rule} (got "${raw}")`);
  return parsed;
}

/** A decimal above 0 and at most `max`, or the default when the variable is not set. */
function positiveDecimal(env: Env, name: string, max: number, rule: string, fallback: number): number {
  const parsed = optionalDecimal(env, name, 0, max, rule, fallback);
  if (parsed === 0) throw new ConfigError(name, `must be ${rule} (got "${value(env, name)}")`);
  return parsed;
}

/** A decimal variable in [min, max], or `fallback` when unset. */
function optionalDecimal(env: Env, name: string, min: number, max: number, rule: string, fallback: number): number {
  const raw = value(env, name);
  return raw === undefined ? fallback : parseDecimal(name, raw, min, max, rule);
}

/** An integer variable in [min, max], or `fallback` when unset. */
function optionalInteger(env: Env, name: string, min: number, max: number, fallback: number): number {
  const raw = value(env, name);
  return raw === undefined ? fallback : parseInteger(name, raw, min, max);
}

function parseList(raw: string): string[] {
  return raw.split(',').map((part) => part.trim());
}

/** BOOKMAKER_TAX_RATES: JSON keyed by the feed's bookmaker keys, each a fraction in [0, 1). */
export function parseTaxRates(raw: string | undefined): Record<string, number> {
  if (raw === undefined) return {};
  const problem = 'must be JSON like {"tipico":0.053,"betfair_ex_eu":0.02}: feed bookmaker keys to tax fractions from 0 up to (not including) 1';
  const parsed = parseJsonObject('BOOKMAKER_TAX_RATES', raw, problem);
  const rates: Record<string, number> = {};
  for (const [key, rate] of Object.entries(parsed)) {
    if (!BOOKMAKER_KEY.test(key)) throw new ConfigError('BOOKMAKER_TAX_RATES', `${problem} (bad bookmaker key "${key}")`);
    if (typeof rate !== 'number' || !Number.isFinite(rate) || rate < 0 || rate >= 1) {
      throw new ConfigError('BOOKMAKER_TAX_RATES', `${problem} (bad rate for "${key}")`);
    }
    rates[key] = rate;
  }
  return rates;
}

/**
 * REFERENCE_BOOKMAKERS: feed bookmaker keys, comma-separated, each with an optional weight after
 * ":" (default 1, 0 < weight <= 100), in order of precedence. REFERENCE_BOOKMAKER is the one-book
 * alias; both at once is an error, neither means Pinnacle alone.
 */
export function parseReferenceBookmakers(raw: string | undefined, single: string | undefined): ReferenceBook[] {
  if (raw !== undefined && single !== undefined) {
    throw new ConfigError('REFERENCE_BOOKMAKERS', 'cannot be set together with REFERENCE_BOOKMAKER (its one-book alias): keep one of them');
  }
  const name = single === undefined ? 'REFERENCE_BOOKMAKERS' : 'REFERENCE_BOOKMAKER';
  const keyRule = `must be a feed bookmaker key: 1 to 40 lowercase letters, digits, "-" or "_"`;
  if (raw === undefined) {
    const key = single ?? DEFAULT_DETECTION_OPTIONS.references[0]!.key;
    if (!BOOKMAKER_KEY.test(key)) throw new ConfigError(name, `${keyRule} (got "${key}")`);
    return [{ key, weight: 1 }];
  }
  const problem = `must list feed bookmaker keys, each with an optional weight after ":" (0 < weight <= ${REFERENCE_WEIGHT_MAX}), e.g. pinnacle,circasports:1,betfair_ex_eu:0.5`;
  const references: ReferenceBook[] = [];
  for (const entry of parseList(raw)) {
    const [key = '', weightText, ...rest] = entry.split(':');
    const weight = weightText === undefined ? 1 : /^\d+(\.\d+)?$/.test(weightText) ? Number(weightText) : Number.NaN;
    if (!BOOKMAKER_KEY.test(key) || rest.length > 0) throw new ConfigError(name, `${problem} ("${entry}": ${keyRule})`);
    if (!(weight > 0 && weight <= REFERENCE_WEIGHT_MAX)) throw new ConfigError(name, `${problem} (bad weight in "${entry}")`);
    if (references.some((reference) => reference.key === key)) throw new ConfigError(name, `${problem} ("${key}" is listed twice)`);
    references.push({ key, weight });
  }
  if (references.length === 0) throw new ConfigError(name, `${problem} (got an empty list)`);
  return references;
}

/** PICK_ODDS_RANGE: `min-max`, inclusive, 1 < min < max <= 1000. */
export function parseOddsRange(raw: string | undefined): OddsRange {
  if (raw === undefined) return { ...DEFAULT_DETECTION_OPTIONS.oddsRange };
  const problem = `must be "min-max" decimal odds with 1 < min < max <= ${MAX_DECIMAL_ODDS}, e.g. 1.2-15 (got "${raw}")`;
  const match = /^(\d+(?:\.\d+)?)\s*-\s*(\d+(?:\.\d+)?)$/.exec(raw);
  if (!match) throw new ConfigError('PICK_ODDS_RANGE', problem);
  const min = Number(match[1]);
  const max = Number(match[2]);
  if (!(min > 1 && min < max && max <= MAX_DECIMAL_ODDS)) throw new ConfigError('PICK_ODDS_RANGE', problem);
  return { min, max };
}

export function parseFeedSports(raw: string): string[] {
  const keys = parseList(raw);
  for (const key of keys) {
    if (sportSlugOfKey(key) === null) {
      throw new ConfigError(
        'ODDS_FEED_SPORTS',
        `must list v4 sport keys whose first segment is a sport the service publishes (soccer_epl, basketball_nba, tennis_atp_finals); "${key}" maps to none`,
      );
    }
  }
  return [...new Set(keys)];
}

/** ODDS_FEED_MARKETS: v4 market keys among h2h, spreads and totals, comma-separated; all three by default. */
export function parseFeedMarkets(raw: string | undefined): Market[] {
  if (raw === undefined) return [...MARKETS];
  const keys = parseList(raw);
  for (const key of keys) {
    if (!(MARKETS as readonly string[]).includes(key)) {
      throw new ConfigError('ODDS_FEED_MARKETS', `must list markets among ${MARKETS.join(', ')}, comma-separated (got "${key}")`);
    }
  }
  return [...new Set(keys)] as Market[];
}

function loadValueEngine(env: Env, embedded: boolean, demoSeed: boolean): ValueEngineConfig {
  const urlRaw = value(env, 'ODDS_FEED_URL');
  const url = urlRaw === undefined ? null : parseUrl('ODDS_FEED_URL', urlRaw, ['http:', 'https:']).replace(/\/+$/, '');
  const apiKey = value(env, 'ODDS_FEED_API_KEY');
  const sportsRaw = value(env, 'ODDS_FEED_SPORTS');
  if (url !== null && apiKey === undefined) throw new ConfigError('ODDS_FEED_API_KEY', 'is required when ODDS_FEED_URL is set');
  if (url !== null && sportsRaw === undefined) throw new ConfigError('ODDS_FEED_SPORTS', 'is required when ODDS_FEED_URL is set (comma-separated v4 sport keys, e.g. soccer_epl,basketball_nba)');
  const demoRaw = value(env, 'DEMO_FEED');
  // The simulated feed is part of the embedded demo; it never runs against PostgreSQL unless asked.
  const demoFeed = demoRaw === undefined ? embedded && demoSeed && url === null : parseBoolean('DEMO_FEED', demoRaw);
  if (demoFeed && url !== null) throw new ConfigError('DEMO_FEED', 'cannot be on while ODDS_FEED_URL is set: the engine reads one feed');
  const regions = parseList(value(env, 'ODDS_FEED_REGIONS') ?? 'eu');
  for (const region of regions) {
    if (!(FEED_REGIONS as readonly string[]).includes(region)) {
      throw new ConfigError('ODDS_FEED_REGIONS', `must list regions among ${FEED_REGIONS.join(', ')}, comma-separated (got "${region}")`);
    }
  }
  const markets = parseFeedMarkets(value(env, 'ODDS_FEED_MARKETS'));
  const integer = (name: string, min: number, max: number, fallback: number) => optionalInteger(env, name, min, max, fallback);
  const decimal = (name: string, min: number, max: number, rule: string, fallback: number) => optionalDecimal(env, name, min, max, rule, fallback);
  const single = value(env, 'REFERENCE_BOOKMAKER');
  // The demo's simulated feed quotes a book and an exchange: its picks are consensus picks.
  const referencesRaw = value(env, 'REFERENCE_BOOKMAKERS') ?? (demoFeed && single === undefined ? SIMULATED_REFERENCE_BOOKMAKERS : undefined);
  const references = parseReferenceBookmakers(referencesRaw, single);
  const devigMethod = value(env, 'DEVIG_METHOD') ?? DEFAULT_DETECTION_OPTIONS.devigMethod;
  if (!isDevigMethod(devigMethod)) throw new ConfigError('DEVIG_METHOD', `must be one of ${DEVIG_METHODS.join(', ')} (got "${devigMethod}")`);
  const minEdge = decimal('PICK_MIN_EDGE', 0, 1, 'a fraction from 0 to 1 (0.02 = 2 %)', DEFAULT_DETECTION_OPTIONS.minEdge);
  const reviewEdge = decimal('PICK_REVIEW_EDGE', 0, 10, 'a fraction greater than PICK_MIN_EDGE and at most 10 (0.25 = 25 %)', DEFAULT_DETECTION_OPTIONS.reviewEdge);
  if (!(reviewEdge > minEdge)) throw new ConfigError('PICK_REVIEW_EDGE', `must be greater than PICK_MIN_EDGE (${minEdge}) and at most 10 (got "${reviewEdge}")`);
  return {
    feed: url === null ? null : { url, apiKey: apiKey! },
    demoFeed,
    sportKeys: sportsRaw === undefined ? [] : parseFeedSports(sportsRaw),
    regions,
    markets,
    oddsPollSeconds: integer('ODDS_POLL_SECONDS', 1, 3600, 60),
    scoresPollSeconds: integer('SCORES_POLL_SECONDS', 1, 3600, 300),
    detection: {
      references,
      devigMethod,
      maxReferenceSpread: decimal('REFERENCE_MAX_SPREAD', 0, 1, 'an absolute difference of probabilities from 0 to 1 (0.03 = 3 points)', DEFAULT_DETECTION_OPTIONS.maxReferenceSpread),
      maxReferenceMargin: decimal('REFERENCE_MAX_MARGIN', 0, 1, 'a margin fraction from 0 to 1 (0.08 = 8 %)', DEFAULT_DETECTION_OPTIONS.maxReferenceMargin),
      taxRates: parseTaxRates(value(env, 'BOOKMAKER_TAX_RATES')),
      defaultTaxRate: DEFAULT_TAX_RATE,
      maxExchangeSpread: decimal('REFERENCE_MAX_EXCHANGE_SPREAD', 0, 1, 'a relative spread from 0 to 1 (0.05 = lay 5 % above back)', DEFAULT_DETECTION_OPTIONS.maxExchangeSpread),
      minEdge,
      oddsRange: parseOddsRange(value(env, 'PICK_ODDS_RANGE')),
      horizonHours: integer('PICK_HORIZON_HOURS', 1, 720, DEFAULT_DETECTION_OPTIONS.horizonHours),
      referenceMaxAgeSeconds: integer('REFERENCE_MAX_AGE_SECONDS', 1, 86_400, DEFAULT_DETECTION_OPTIONS.referenceMaxAgeSeconds),
      reviewEdge,
      clockSkewSeconds: integer('FEED_CLOCK_SKEW_SECONDS', 0, 600, DEFAULT_DETECTION_OPTIONS.clockSkewSeconds),
    },
    settlement: {
      // The simulated feed plays 10- to 20-minute matches: real sports' floors would hold its finals for hours.
      matchMinMinutes: parseMatchMinMinutes(
        value(env, 'MATCH_MIN_MINUTES'),
        demoFeed ? Object.fromEntries(SPORT_SLUGS.map((sport) => [sport, SIMULATED_MATCH_MIN_MINUTES])) as Record<SportSlug, number> : DEFAULT_MATCH_MIN_MINUTES,
      ),
      closingLineMaxAgeSeconds: integer('CLOSING_LINE_MAX_AGE_SECONDS', 60, 86_400, DEFAULT_SETTLEMENT_OPTIONS.closingLineMaxAgeSeconds),
    },
    oddsHistoryDays: integer('ODDS_HISTORY_DAYS', 1, 365, DEFAULT_ODDS_HISTORY_DAYS),
  };
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
  const trustProxy = parseTrustProxy(value(env, 'TRUST_PROXY'));

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
  const demoSeed = demoSeedRaw === undefined ? embedded : parseBoolean('DEMO_SEED', demoSeedRaw);
  const host = value(env, 'HOST') ?? '127.0.0.1';

  return {
    port: portRaw === undefined ? 3000 : parseInteger('PORT', portRaw, 0, 65535),
    host,
    databaseUrl,
    dataDir: path.resolve(value(env, 'DATA_DIR') ?? './data'),
    redisUrl,
    adminToken: adminTokenRaw ?? null,
    demoSeed,
    tierLimits: parseTierLimits(value(env, 'TIER_LIMITS')),
    webhookRetryScheduleMs: parseRetrySchedule(value(env, 'WEBHOOK_RETRY_SCHEDULE')),
    webhookLeaseMs: (leaseRaw === undefined ? 30 : parseInteger('WEBHOOK_LEASE_SECONDS', leaseRaw, 3, 3600)) * 1000,
    streamHeartbeatSeconds: heartbeatRaw === undefined ? 30 : parseInteger('STREAM_HEARTBEAT_SECONDS', heartbeatRaw, 1, 3600),
    publicStream: {
      delaySeconds: optionalInteger(env, 'PUBLIC_STREAM_DELAY_SECONDS', 0, 86_400, 300),
      perAddress: optionalInteger(env, 'PUBLIC_STREAMS_PER_ADDRESS', 1, 1_000, 4),
      maxStreams: optionalInteger(env, 'PUBLIC_STREAMS_MAX', 1, 1_000_000, 10_000),
    },
    streamTokenMaxStreams: optionalInteger(env, 'STREAM_TOKEN_MAX_STREAMS', 1, 100_000, DEFAULT_STREAM_TOKEN_MAX_STREAMS),
    streamTokenOpensPerMinute: optionalInteger(env, 'STREAM_TOKEN_OPENS_PER_MINUTE', STREAM_TOKEN_OPENS_PER_MINUTE.min, STREAM_TOKEN_OPENS_PER_MINUTE.max, STREAM_TOKEN_OPENS_PER_MINUTE.default),
    webhookHostOverrides: parseHostOverrides(value(env, 'WEBHOOK_HOST_OVERRIDES')),
    // Behind a trusted proxy loopback is reachable from elsewhere, and NODE_ENV spelt "Production"
    // is someone meaning production: either turns the demo's local receivers off.
    localWebhookReceivers:
      embedded && demoSeed && !production && !/^production$/i.test(value(env, 'NODE_ENV') ?? '') && trustProxy.length === 0 && isLoopbackListenHost(host),
    webhookSecretKey: secretKeyRaw === undefined ? null : parseSecretKey('WEBHOOK_SECRET_KEY', secretKeyRaw),
    webhookSecretKeysPrevious:
      previousKeysRaw === undefined ? [] : previousKeysRaw.split(',').map((part) => parseSecretKey('WEBHOOK_SECRET_KEY_PREVIOUS', part.trim())),
    logLevel: logLevelRaw as LogLevel,
    defaultTaxRate: DEFAULT_TAX_RATE,
    stakeAdvice: {
      kellyMultiplier: positiveDecimal(env, 'STAKE_KELLY_MULTIPLIER', 1, 'a number above 0 and at most 1 (0.25 = a quarter of full Kelly)', DEFAULT_STAKE_ADVICE.kellyMultiplier),
      maxPct: positiveDecimal(env, 'STAKE_MAX_PCT', 100, 'a percentage above 0 and at most 100', DEFAULT_STAKE_ADVICE.maxPct),
    },
    production,
    graphqlIntrospection: introspectionRaw === undefined ? !production : parseBoolean('GRAPHQL_INTROSPECTION', introspectionRaw),
    trustProxy,
    anonymousGraphqlLimit: anonymousLimitRaw === undefined ? 120 : parseInteger('ANONYMOUS_GRAPHQL_LIMIT', anonymousLimitRaw, 1, 1_000_000),
    graphqlCorsOrigins: parseCorsOrigins(value(env, 'GRAPHQL_CORS_ORIGINS')),
    valueEngine: loadValueEngine(env, embedded, demoSeed),
  };
}
