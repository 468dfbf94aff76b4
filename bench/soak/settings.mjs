/**
 * The soak's settings (SOAK_* knobs, see bench/soak.mjs), constants and formatting helpers.
 */
import { randomBytes } from 'node:crypto';
import path from 'node:path';
import { BENCH_DIR, intEnv } from '../common.mjs';

export const RESULTS_FILE = path.join(BENCH_DIR, 'soak-results.json');
export const INSTANCES = 3;
export const DATABASE = 'picks_soak';
export const SPORT_KEY = 'soccer_epl';
export const TAX = 0.053;
/** The tiers' defaults (docs/API.md), under the soak's own small limits. */
const DEFAULT_TIER_LIMITS = { starter: { hourly: 100, monthly: 10_000 }, growth: { hourly: 1_000, monthly: 100_000 }, enterprise: { hourly: 10_000, monthly: 1_000_000 } };
const SOAK_TIER_LIMITS = { starter: { hourly: 60, monthly: 400 }, growth: { hourly: 200, monthly: 1_500 }, enterprise: { hourly: 1_000, monthly: 8_000 } };
/** 429 codes of the limiter: such a request counted nothing. Any other 429 passed the limiter. */
export const LIMIT_CODES = new Set(['rate_limit_exceeded', 'monthly_quota_exceeded']);

function floatEnv(name, fallback, min, max) {
  const raw = process.env[name]?.trim();
  if (!raw) return fallback;
  const value = Number(raw);
  if (!Number.isFinite(value) || value < min || value > max) throw new Error(`${name} must be a number ${min}..${max}, got "${raw}"`);
  return value;
}

/** "a-b" (uniform between) or "a" (always a). */
function rangeEnv(name, fallback, min, max) {
  const raw = process.env[name]?.trim();
  if (!raw) return fallback;
  const match = /^(\d+(?:\.\d+)?)(?:\s*-\s*(\d+(?:\.\d+)?))?$/.exec(raw);
  const lo = match ? Number(match[1]) : NaN;
  const hi = match ? Number(match[2] ?? match[1]) : NaN;
  if (!match || lo < min || hi > max || lo > hi) throw new Error(`${name} must be "a-b" or "a" with ${min} <= a <= b <= ${max}, got "${raw}"`);
  return [lo, hi];
}

function seedEnv() {
  const raw = process.env.SOAK_SEED?.trim();
  if (!raw) return randomBytes(4).readUInt32BE(0);
  const value = Number(raw);
  if (!Number.isInteger(value) || value < 0 || value > 0xffffffff) throw new Error(`SOAK_SEED must be an integer 0..4294967295, got "${raw}"`);
  return value;
}

function tierLimitsEnv() {
  const limits = structuredClone(DEFAULT_TIER_LIMITS);
  const raw = process.env.SOAK_TIER_LIMITS?.trim();
  const overrides = raw ? JSON.parse(raw) : {};
  for (const source of [SOAK_TIER_LIMITS, overrides]) {
    for (const [tier, values] of Object.entries(source)) {
      if (!limits[tier]) throw new Error(`SOAK_TIER_LIMITS: unknown tier ${tier}`);
      Object.assign(limits[tier], values);
    }
  }
  return limits;
}

function faultKindsEnv() {
  const raw = process.env.SOAK_FAULTS?.trim();
  const kinds = (raw || 'redis,postgres,instance').split(',').map((s) => s.trim()).filter(Boolean);
  for (const kind of kinds) if (!['redis', 'postgres', 'instance'].includes(kind)) throw new Error(`SOAK_FAULTS: unknown fault ${kind} (redis, postgres, instance)`);
  return kinds;
}

const faultsOff = ['off', '0', 'none'].includes(process.env.SOAK_FAULT_EVERY_SECONDS?.trim() ?? '');
export const settings = {
  seed: seedEnv(),
  minutes: floatEnv('SOAK_MINUTES', 20, 0.1, 24 * 60),
  faultEverySeconds: faultsOff ? null : rangeEnv('SOAK_FAULT_EVERY_SECONDS', [20, 60], 1, 3600),
  faultDownSeconds: rangeEnv('SOAK_FAULT_DOWN_SECONDS', [2, 6], 0, 300),
  faultKinds: faultKindsEnv(),
  clients: intEnv('SOAK_CLIENTS', 10, 1, 64),
  graphqlClients: intEnv('SOAK_GRAPHQL_CLIENTS', 2, 0, 16),
  streams: intEnv('SOAK_STREAMS', 4, 0, 16),
  keys: intEnv('SOAK_KEYS', 20, 8, 200),
  clientSleepMs: rangeEnv('SOAK_CLIENT_SLEEP_MS', [100, 400], 0, 60_000),
  publishEveryMs: rangeEnv('SOAK_PUBLISH_EVERY_MS', [1000, 3000], 100, 600_000),
  requestTimeoutMs: intEnv('SOAK_REQUEST_TIMEOUT_MS', 10_000, 1_000, 120_000),
  drainSeconds: intEnv('SOAK_DRAIN_SECONDS', 120, 10, 3_600),
  receiverFailShare: floatEnv('SOAK_RECEIVER_FAIL_SHARE', 0.02, 0, 0.5),
  tierLimits: tierLimitsEnv(),
  instances: INSTANCES,
};


export const floor2 = (x) => Math.floor(x * 100 + 1e-9) / 100;
export const round3 = (x) => Math.round(x * 1000) / 1000;
export const monthOf = (ms) => new Date(ms).toISOString().slice(0, 7);
export const fmtS = (ms) => `${(ms / 1000).toFixed(1)} s`;
export const pad = (s, n) => String(s).padEnd(n);
export const lpad = (s, n) => String(s).padStart(n);
