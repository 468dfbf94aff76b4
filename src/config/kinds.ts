/**
 * The kinds of configuration value (src/config.ts declares each variable with one): how a
 * variable's text is parsed, refused in one line (ConfigError), described in the docs' Allowed
 * column and shown by `npm run config`. A kind's bounds are written once and feed its refusal
 * and its description alike.
 */
import { isIP } from 'node:net';
import path from 'node:path';
import { TIERS, type Tier } from '../domain/api-key.js';
import { DEFAULT_TIER_LIMITS, type TierLimits } from '../domain/access.js';
import { DEFAULT_DETECTION_OPTIONS, type OddsRange } from '../domain/value-detection.js';
import { MAX_DECIMAL_ODDS } from '../domain/odds.js';
import { REFERENCE_WEIGHT_MAX, type ReferenceBook } from '../domain/reference-consensus.js';
import { BOOKMAKER_KEY, sportSlugOfKey } from '../domain/odds-feed.js';
import { MARKETS, type Market } from '../domain/market.js';
import { isSportSlug, SPORT_SLUGS, type SportSlug } from '../domain/sports.js';
import { COSIGNATURE_ALGORITHM_ED25519, NOTE_ALGORITHM_ED25519, parseSignerKey, parseVerifierKey, type SignerKey, type VerifierKey } from '../domain/signed-note.js';

export class ConfigError extends Error {
  constructor(variable: string, problem: string) {
    super(`Invalid configuration: ${variable} ${problem}`);
    this.name = 'ConfigError';
  }
}

export interface Kind<T> {
  /** What a value may be, for the docs' Allowed column (Markdown). */
  readonly allowed: string;
  /** The variable's trimmed, non-empty text as a value, or a ConfigError naming `name`. */
  parse(raw: string, name: string, base: T): T;
  /** A value as the variable would spell it. */
  show(value: T): string;
  /** The text is merged over the default (passed as `base`) rather than replacing it. */
  readonly merges?: boolean;
}

const code = (text: string | number): string => `\`${text}\``;
const codes = (items: readonly (string | number)[]): string => items.map(code).join(', ');
const list = (raw: string): string[] => raw.split(',').map((part) => part.trim());

export function integer(min: number, max: number): Kind<number> {
  const rule = `an integer between ${min} and ${max}`;
  return {
    allowed: rule,
    parse(raw, name) {
      if (!/^\d+$/.test(raw) || Number(raw) < min || Number(raw) > max) throw new ConfigError(name, `must be ${rule} (got "${raw}")`);
      return Number(raw);
    },
    show: String,
  };
}

/** A TCP port, or `off` (null): a listener that can be turned off. */
export function portOrOff(): Kind<number | null> {
  const port = integer(0, 65535);
  return {
    allowed: `${port.allowed}, or \`off\``,
    parse: (raw, name, base) => (raw.toLowerCase() === 'off' ? null : port.parse(raw, name, base ?? 0)),
    show: (value) => (value === null ? 'off' : String(value)),
  };
}

/**
 * A decimal written plainly (0.02, 1, .5: no exponent, sign or hex) within bounds: from `min`
 * to `max`, above `min` (`above`), or greater than another variable (`lower`, checked by its row).
 */
export function decimal(bounds: { min: number; max: number; above?: boolean; lower?: string }, noun: string, example?: string): Kind<number> {
  const { min, max, above = false, lower } = bounds;
  const range = lower ? `greater than ${lower} and at most ${max}` : above ? `above ${min} and at most ${max}` : `from ${min} to ${max}`;
  const rule = `${noun} ${range}${example ? ` (${example})` : ''}`;
  return {
    allowed: rule,
    parse(raw, name) {
      const parsed = Number(raw);
      if (!/^(\d+(\.\d*)?|\.\d+)$/.test(raw) || !((above ? parsed > min : parsed >= min) && parsed <= max)) throw new ConfigError(name, `must be ${rule} (got "${raw}")`);
      return parsed;
    },
    show: String,
  };
}

const TRUE = ['1', 'true', 'yes', 'on'];
const FALSE = ['0', 'false', 'no', 'off'];

export function boolean(): Kind<boolean> {
  const spellings = TRUE.flatMap((yes, index) => [yes, FALSE[index]!]).sort((a, b) => Number(/\d/.test(a)) - Number(/\d/.test(b)));
  return {
    allowed: `a boolean: ${codes(spellings)}`,
    parse(raw, name) {
      const lowered = raw.toLowerCase();
      if (TRUE.includes(lowered)) return true;
      if (FALSE.includes(lowered)) return false;
      throw new ConfigError(name, `must be one of true, false, 1, 0, yes, no, on, off (got "${raw}")`);
    },
    show: (on) => (on ? 'true' : 'false'),
  };
}

export function oneOf<const V extends readonly string[]>(values: V): Kind<V[number]> {
  return {
    allowed: `one of ${codes(values)}`,
    parse(raw, name) {
      if (!values.includes(raw)) throw new ConfigError(name, `must be one of ${values.join(', ')} (got "${raw}")`);
      return raw;
    },
    show: String,
  };
}

/** A comma-separated list of `noun` among `values`; `unique` drops repeats. */
export function listOf<const V extends readonly string[]>(values: V, noun: string, { unique = false } = {}): Kind<V[number][]> {
  return {
    allowed: `${noun} among ${codes(values)}, comma-separated`,
    parse(raw, name) {
      const items = list(raw);
      for (const item of items) {
        if (!values.includes(item)) throw new ConfigError(name, `must list ${noun} among ${values.join(', ')}, comma-separated (got "${item}")`);
      }
      return unique ? [...new Set(items)] : items;
    },
    show: (items) => items.join(','),
  };
}

/** Any text (no rule beyond being non-empty). */
export function text(allowed: string, minLength = 0): Kind<string> {
  return {
    allowed,
    parse(raw, name) {
      if (raw.length < minLength) throw new ConfigError(name, `must be at least ${minLength} characters long`);
      return raw;
    },
    show: String,
  };
}

/** A path, resolved against the working directory. */
export function directory(): Kind<string> {
  return { allowed: 'a directory path', parse: (raw) => path.resolve(raw), show: String };
}

/** A URL with one of `protocols`; `trimSlashes` drops trailing slashes. Shown with any password redacted. */
export function url(protocols: readonly string[], { trimSlashes = false } = {}): Kind<string> {
  const rule = `a URL starting with ${protocols.join(' or ')}`;
  return {
    allowed: `a URL starting with ${protocols.map(code).join(' or ')}`,
    parse(raw, name) {
      let parsed: URL;
      try {
        parsed = new URL(raw);
      } catch {
        throw new ConfigError(name, `must be ${rule}`);
      }
      if (!protocols.includes(parsed.protocol)) throw new ConfigError(name, `must be ${rule}`);
      return trimSlashes ? raw.replace(/\/+$/, '') : raw;
    },
    show(value) {
      const parsed = new URL(value);
      if (parsed.password === '') return value;
      parsed.password = 'redacted';
      return parsed.href.replace(':redacted@', ':[redacted]@');
    },
  };
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

const KEY_ALLOWED = '32 random bytes as 64 hex digits or base64 (`openssl rand -base64 32`)';

export function secretKey(): Kind<Buffer> {
  return { allowed: KEY_ALLOWED, parse: (raw, name) => parseSecretKey(name, raw), show: (key) => key.toString('base64') };
}

export function secretKeys(): Kind<Buffer[]> {
  return {
    allowed: `${KEY_ALLOWED}, comma-separated`,
    parse: (raw, name) => list(raw).map((part) => parseSecretKey(name, part)),
    show: (keys) => keys.map((key) => key.toString('base64')).join(','),
  };
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

const TIER_EXAMPLE = '{"starter":{"hourly":25},"enterprise":{"monthly":40}}';

/** TIER_LIMITS: JSON overrides of `base`, the tier table. */
export function parseTierLimits(raw: string | undefined, base: Readonly<TierLimits> = DEFAULT_TIER_LIMITS): TierLimits {
  const limits: TierLimits = structuredClone(base);
  if (raw === undefined) return limits;
  const problem = `must be JSON like ${TIER_EXAMPLE} with tiers ${TIERS.join(', ')} and positive integer hourly/monthly`;
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

export function tierLimits(): Kind<TierLimits> {
  return {
    allowed: `JSON overrides like ${code(TIER_EXAMPLE)}: tiers ${codes(TIERS)}, positive integer ${code('hourly')} / ${code('monthly')}`,
    merges: true,
    parse: (raw, _name, base) => parseTierLimits(raw, base),
    show: (limits) => JSON.stringify(limits),
  };
}

/** docs/API.md, "Success and retries": retries after 1 min, 5 min, 30 min, 2 h, 12 h. */
export const DEFAULT_WEBHOOK_RETRY_SCHEDULE_MS = [60_000, 300_000, 1_800_000, 7_200_000, 43_200_000];

const DURATION_UNITS_MS: Record<string, number> = { ms: 1, s: 1_000, m: 60_000, min: 60_000, h: 3_600_000, hr: 3_600_000 };
export const RETRY_ATTEMPTS = 5;

export function parseRetrySchedule(raw: string | undefined): number[] {
  if (raw === undefined) return [...DEFAULT_WEBHOOK_RETRY_SCHEDULE_MS];
  const problem = `must be ${RETRY_ATTEMPTS} comma-separated durations such as "1m,5m,30m,2h,12h" or "1s,1s,1s,1s,1s" (got "${raw}")`;
  const parts = list(raw);
  if (parts.length !== RETRY_ATTEMPTS) throw new ConfigError('WEBHOOK_RETRY_SCHEDULE', problem);
  return parts.map((part) => {
    const match = /^(\d{1,9})(ms|s|m|min|h|hr)$/.exec(part);
    if (!match) throw new ConfigError('WEBHOOK_RETRY_SCHEDULE', problem);
    return Number(match[1]) * DURATION_UNITS_MS[match[2]!]!;
  });
}

/** Milliseconds in the largest unit that divides them: 7200000 is 2h. */
function duration(ms: number): string {
  for (const unit of ['h', 'm', 's'] as const) if (ms % DURATION_UNITS_MS[unit]! === 0) return `${ms / DURATION_UNITS_MS[unit]!}${unit}`;
  return `${ms}ms`;
}

export function retrySchedule(): Kind<number[]> {
  return {
    allowed: `exactly ${RETRY_ATTEMPTS} comma-separated durations (${codes(['ms', 's', 'm', 'h'])}), e.g. ${code('1s,1s,1s,1s,1s')}`,
    parse: (raw) => parseRetrySchedule(raw),
    show: (schedule) => schedule.map(duration).join(','),
  };
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

export function hostOverrides(): Kind<Map<string, string>> {
  return {
    allowed: `${code('name=127.0.0.1,other=::1')}: host names to loopback addresses only`,
    parse: (raw) => parseHostOverrides(raw),
    show: (overrides) => [...overrides].map(([host, target]) => `${host}=${target}`).join(','),
  };
}

const TRUST_PROXY_PRESETS = ['loopback', 'linklocal', 'uniquelocal'];

/** Comma-separated addresses, CIDR ranges or presets; never "everything" (any client could then forge its address). */
export function parseTrustProxy(raw: string | undefined): string[] {
  if (raw === undefined) return [];
  const problem = `must list proxy addresses, CIDR ranges (10.0.0.0/8) or ${TRUST_PROXY_PRESETS.join(' / ')}, comma-separated`;
  return list(raw).map((entry) => {
    if (TRUST_PROXY_PRESETS.includes(entry)) return entry;
    if (isIP(entry) !== 0) return entry;
    const [address, bits, ...rest] = entry.split('/');
    const family = isIP(address ?? '');
    if (rest.length === 0 && family !== 0 && /^\d{1,3}$/.test(bits ?? '') && Number(bits) <= (family === 4 ? 32 : 128)) return entry;
    throw new ConfigError('TRUST_PROXY', `${problem} (got "${entry}")`);
  });
}

export function trustProxy(): Kind<string[]> {
  return {
    allowed: `addresses, CIDR ranges (${code('10.0.0.0/8')}) and ${TRUST_PROXY_PRESETS.map(code).join(' / ')}, comma-separated; "trust everything" is refused`,
    parse: (raw) => parseTrustProxy(raw),
    show: (entries) => entries.join(','),
  };
}

/** Comma-separated exact origins: scheme, host and port as a browser sends them in `Origin`. */
export function parseCorsOrigins(raw: string | undefined): string[] {
  if (raw === undefined) return [];
  const problem = 'must list exact origins such as https://ops.example.com, comma-separated (scheme, host and optional port; no path, no "*")';
  return list(raw).map((entry) => {
    let origin: string | null = null;
    try {
      const parsed = new URL(entry);
      if (parsed.protocol === 'https:' || parsed.protocol === 'http:') origin = parsed.origin;
    } catch {
      origin = null;
    }
    // Only the exact serialisation matches an Origin header: no trailing slash, path or credentials.
    if (origin !== entry) throw new ConfigError('GRAPHQL_CORS_ORIGINS', `${problem} (got "${entry}")`);
    return entry;
  });
}

export function corsOrigins(): Kind<string[]> {
  return {
    allowed: `exact origins (${code('https://ops.example.com,http://127.0.0.1:5173')}: scheme, host, optional port), comma-separated; ${code('*')} is refused`,
    parse: (raw) => parseCorsOrigins(raw),
    show: (origins) => origins.join(','),
  };
}

const TAX_EXAMPLE = '{"tipico":0.053,"betfair_ex_eu":0.02}';

/** BOOKMAKER_TAX_RATES: JSON keyed by the feed's bookmaker keys, each a fraction in [0, 1). */
export function parseTaxRates(raw: string | undefined): Record<string, number> {
  if (raw === undefined) return {};
  const problem = `must be JSON like ${TAX_EXAMPLE}: feed bookmaker keys to tax fractions from 0 up to (not including) 1`;
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

export function taxRates(): Kind<Record<string, number>> {
  return {
    allowed: `JSON by feed bookmaker key, e.g. ${code(TAX_EXAMPLE)}: fractions from 0 up to (not including) 1`,
    parse: (raw) => parseTaxRates(raw),
    show: (rates) => JSON.stringify(rates),
  };
}

const KEY_RULE = 'a feed bookmaker key: 1 to 40 lowercase letters, digits, "-" or "_"';

export function bookmakerKey(): Kind<string> {
  return {
    allowed: KEY_RULE,
    parse(raw, name) {
      if (!BOOKMAKER_KEY.test(raw)) throw new ConfigError(name, `must be ${KEY_RULE} (got "${raw}")`);
      return raw;
    },
    show: String,
  };
}

/** Feed bookmaker keys, comma-separated, each with an optional weight after ":" (default 1, 0 < weight <= 100), in order of precedence. */
export function parseReferenceList(name: string, raw: string): ReferenceBook[] {
  const problem = `must list feed bookmaker keys, each with an optional weight after ":" (0 < weight <= ${REFERENCE_WEIGHT_MAX}), e.g. pinnacle,circasports:1,betfair_ex_eu:0.5`;
  const references: ReferenceBook[] = [];
  for (const entry of list(raw)) {
    const [key = '', weightText, ...rest] = entry.split(':');
    const weight = weightText === undefined ? 1 : /^\d+(\.\d+)?$/.test(weightText) ? Number(weightText) : Number.NaN;
    if (!BOOKMAKER_KEY.test(key) || rest.length > 0) throw new ConfigError(name, `${problem} ("${entry}": must be ${KEY_RULE})`);
    if (!(weight > 0 && weight <= REFERENCE_WEIGHT_MAX)) throw new ConfigError(name, `${problem} (bad weight in "${entry}")`);
    if (references.some((reference) => reference.key === key)) throw new ConfigError(name, `${problem} ("${key}" is listed twice)`);
    references.push({ key, weight });
  }
  if (references.length === 0) throw new ConfigError(name, `${problem} (got an empty list)`);
  return references;
}

export function referenceBooks(): Kind<ReferenceBook[]> {
  return {
    allowed: `feed bookmaker keys in order of precedence, comma-separated, each with an optional weight after ${code(':')} (default 1, 0 < weight <= ${REFERENCE_WEIGHT_MAX}): ${code('pinnacle,circasports:1,betfair_ex_eu:0.5')}`,
    parse: (raw, name) => parseReferenceList(name, raw),
    show: (books) => books.map(({ key, weight }) => (weight === 1 ? key : `${key}:${weight}`)).join(','),
  };
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

export function oddsRange(): Kind<OddsRange> {
  return {
    allowed: `${code('min-max')} decimal odds, inclusive, 1 < min < max <= ${MAX_DECIMAL_ODDS}`,
    parse: (raw) => parseOddsRange(raw),
    show: ({ min, max }) => `${min}-${max}`,
  };
}

export function parseFeedSports(raw: string): string[] {
  const keys = list(raw);
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

export function feedSports(): Kind<string[]> {
  return {
    allowed: `v4 sport keys, comma-separated (${code('soccer_epl,basketball_nba,tennis_atp_finals')}), each starting with one of the ${SPORT_SLUGS.length} sports`,
    parse: (raw) => parseFeedSports(raw),
    show: (keys) => keys.join(','),
  };
}

/** ODDS_FEED_MARKETS: v4 market keys among h2h, spreads and totals, comma-separated; all three by default. */
export function feedMarkets(): Kind<Market[]> {
  return listOf(MARKETS, 'markets', { unique: true });
}

export function parseFeedMarkets(raw: string | undefined): Market[] {
  return raw === undefined ? [...MARKETS] : feedMarkets().parse(raw, 'ODDS_FEED_MARKETS', []);
}

/** The largest MATCH_MIN_MINUTES: a day. */
export const MATCH_MIN_MINUTES_MAX = 1440;

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

export function matchMinMinutes(): Kind<Record<SportSlug, number>> {
  return {
    allowed: `a whole number of minutes from 0 to ${MATCH_MIN_MINUTES_MAX} for every sport, or a JSON object of such numbers by sport slug (${code('{"soccer":100,"tennis":60}')}; missing slugs keep their defaults)`,
    merges: true,
    parse: (raw, _name, base) => parseMatchMinMinutes(raw, base),
    show: (minutes) => JSON.stringify(minutes),
  };
}

/** A signed-note key name (the ledger's origin): non-empty, no "+" or whitespace. */
export function noteKeyName(): Kind<string> {
  return {
    allowed: 'a name without spaces or `+`, conventionally a schema-less URL (`picks.example.com/ledger`)',
    parse(raw, name) {
      if (/[+\s]/u.test(raw)) throw new ConfigError(name, 'must have no spaces or "+" (it names a signed-note key)');
      return raw;
    },
    show: String,
  };
}

/** A signed-note Ed25519 private key (`PRIVATE+KEY+<name>+<id>+<key>`). */
export function noteSignerKey(): Kind<SignerKey> {
  return {
    allowed: 'an Ed25519 signed-note private key, `PRIVATE+KEY+<name>+<key id>+<key>` (`npm run ledger-key -- <origin>` makes one)',
    parse(raw, name) {
      try {
        return parseSignerKey(raw, [NOTE_ALGORITHM_ED25519]);
      } catch (error) {
        throw new ConfigError(name, `must be an Ed25519 signed-note private key: ${(error as Error).message}`);
      }
    },
    show: (key) => `PRIVATE+KEY+${key.name}+${key.keyId.toString('hex')}+[redacted]`,
  };
}

/** A signed-note key id: 8 lowercase hex digits. */
export function keyId(): Kind<string> {
  return {
    allowed: 'a key id, 8 hex digits (the second part of a verifier key `<name>+<key id>+<key>`)',
    parse(raw, name) {
      if (!/^[0-9a-fA-F]{8}$/.test(raw)) throw new ConfigError(name, `must be a key id, 8 hex digits (got "${raw}")`);
      return raw.toLowerCase();
    },
    show: String,
  };
}

export interface LedgerWitness {
  key: VerifierKey;
  /** The witness's base URL: the checkpoint is POSTed to `{url}/add-checkpoint`. */
  url: string;
}

/** `<witness verifier key> <url>` pairs, comma-separated. */
export function ledgerWitnesses(): Kind<LedgerWitness[]> {
  return {
    allowed: '`<verifier key> <url>` pairs, comma-separated: a witness\'s cosignature key (`name+id+key`, algorithm 0x04) and its base URL',
    parse(raw, name) {
      const witnesses = list(raw).map((part) => {
        const [keyText, urlText, ...rest] = part.split(/\s+/);
        if (!keyText || !urlText || rest.length > 0) throw new ConfigError(name, `must be "<verifier key> <url>" pairs, comma-separated (got "${part}")`);
        let key: VerifierKey;
        try {
          key = parseVerifierKey(keyText, [COSIGNATURE_ALGORITHM_ED25519]);
        } catch (error) {
          throw new ConfigError(name, `has a witness key that is not a cosignature/v1 verifier key: ${(error as Error).message} (got "${keyText}")`);
        }
        let parsed: URL;
        try {
          parsed = new URL(urlText);
        } catch {
          throw new ConfigError(name, `has a witness URL that is not a URL (got "${urlText}")`);
        }
        if (parsed.protocol !== 'http:' && parsed.protocol !== 'https:') throw new ConfigError(name, `has a witness URL that is not http or https (got "${urlText}")`);
        // The checkpoint is POSTed to {url}/add-checkpoint: a query or fragment would end up before
        // the path, and credentials in a URL are refused by fetch (and would be shown by npm run config).
        if (parsed.username !== '' || parsed.password !== '' || parsed.search !== '' || parsed.hash !== '' || urlText.includes('?') || urlText.includes('#')) {
          throw new ConfigError(name, `has a witness URL with credentials, a query or a fragment: give its base URL only (got "${parsed.origin}${parsed.pathname}...")`);
        }
        return { key, url: urlText.replace(/\/+$/, '') };
      });
      const names = witnesses.map((witness) => witness.key.name);
      if (new Set(names).size !== names.length) throw new ConfigError(name, 'names a witness twice');
      return witnesses;
    },
    show: (witnesses) => witnesses.map((witness) => `${witness.key.text} ${witness.url}`).join(','),
  };
}
