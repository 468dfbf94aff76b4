/**
 * The one configuration (README.md, "Configuration"): every variable is declared once in
 * VARIABLES below (section, one-line description, kind with its bounds, default by mode, secret
 * or not). Parsing and the one-line refusals (ConfigError), the README and docs/VALUE_ENGINE.md
 * tables (`npm run config:docs`) and `npm run config` all derive from it; a new variable is one
 * row here (and, if the app reads it, one field of Config below).
 */
import path from 'node:path';
import { DEFAULT_TIER_LIMITS, type TierLimit, type TierLimits } from './domain/access.js';
import { DEFAULT_ODDS_HISTORY_DAYS } from './domain/bounds.js';
import { DEVIG_METHODS } from './domain/devig.js';
import { LONGEST_MONTH_DAYS, minimumMonthlyCredits, oddsRequestCredits } from './domain/feed-credits.js';
import { MARKETS, type Market } from './domain/market.js';
import { DEFAULT_STAKE_ADVICE, DEFAULT_TAX_RATE, EXCHANGE_COMMISSIONS, type StakeAdvice } from './domain/odds.js';
import { type ReferenceBook } from './domain/reference-consensus.js';
import { DEFAULT_MATCH_MIN_MINUTES, DEFAULT_SETTLEMENT_OPTIONS, type SettlementOptions } from './domain/settlement.js';
import { SPORT_SLUGS, type SportSlug } from './domain/sports.js';
import { DEFAULT_STREAM_TOKEN_MAX_STREAMS, STREAM_TOKEN_OPENS_PER_MINUTE } from './domain/stream-token.js';
import { DEFAULT_DETECTION_OPTIONS, type DetectionOptions } from './domain/value-detection.js';
import { isLoopbackListenHost } from './domain/webhook-url.js';
import type { SignerKey } from './domain/signed-note.js';
import type { LedgerWitness } from './config/kinds.js';
import { SIMULATED_MATCH_MIN_MINUTES, SIMULATED_REFERENCE_BOOKMAKERS } from './services/value-engine/simulated-feed.js';
import { renderSettings } from './config/docs.js';
import * as kind from './config/kinds.js';
import { byMode, resolver, variable, type Context, type Env, type LoadConfigOptions } from './config/variables.js';

export {
  ConfigError,
  DEFAULT_WEBHOOK_RETRY_SCHEDULE_MS,
  parseCorsOrigins,
  parseFeedMarkets,
  parseFeedSports,
  parseHostOverrides,
  parseMatchMinMinutes,
  parseOddsRange,
  parseRetrySchedule,
  parseSecretKey,
  parseTaxRates,
  parseTierLimits,
  parseTrustProxy,
} from './config/kinds.js';
export type { LoadConfigOptions } from './config/variables.js';
export type { LedgerWitness } from './config/kinds.js';
export { DEFAULT_TIER_LIMITS, type TierLimit, type TierLimits };

export const LOG_LEVELS = ['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent'] as const;
export type LogLevel = (typeof LOG_LEVELS)[number];
export const FEED_REGIONS = ['us', 'us2', 'uk', 'eu', 'au'] as const;

export interface Config {
  port: number;
  host: string;
  /** METRICS_HOST / METRICS_PORT: the metrics listener (docs/OPERATIONS.md, "Metrics"); port null: off. */
  metrics: { host: string; port: number | null };
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
  /** The ledger's checkpoints and witnesses (docs/API.md, "Verifying the record"). */
  ledger: LedgerConfig;
}

export interface LedgerConfig {
  origin: string;
  /** Null in embedded mode without LEDGER_SIGNING_KEY: one is generated and kept under DATA_DIR. */
  signingKey: SignerKey | null;
  /** LEDGER_PREVIOUS_KEY_ID: the key id a deliberately replaced key replaces; null otherwise. */
  previousKeyId: string | null;
  checkpointSeconds: number;
  witnesses: LedgerWitness[];
}

/** The origin (and key name) of an embedded demo's ledger. */
export const EMBEDDED_LEDGER_ORIGIN = 'localhost/picks-ledger';

export interface OddsFeedConfig {
  /** ODDS_FEED_URL without a trailing slash. */
  url: string;
  apiKey: string;
}

export interface FeedCreditsConfig {
  monthlyCredits: number;
  reserveCredits: number;
  closingWindowSeconds: number;
}

function creditBudget(monthly: number | null, reserve: number | null, closingWindowSeconds: number): FeedCreditsConfig | null {
  return monthly === null ? null : { monthlyCredits: monthly, reserveCredits: reserve ?? Math.floor(monthly / 10), closingWindowSeconds };
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
  /** PICK_CONFIRM_POLLS: consecutive polls a candidate must last before it is published. */
  confirmPolls: number;
  scoresPollSeconds: number;
  /** ODDS_FEED_MONTHLY_CREDITS and its reserve; null: fixed poll periods (docs/VALUE_ENGINE.md, "Feed credits"). */
  credits: FeedCreditsConfig | null;
  detection: DetectionOptions;
  settlement: SettlementOptions;
  oddsHistoryDays: number;
}

const embedded = (ctx: Context): boolean => ctx.get('DATABASE_URL') === null;
const production = (ctx: Context): boolean => ctx.get('NODE_ENV') === 'production';
/** The admin token and webhook key: generated in embedded mode, required with PostgreSQL (except by migrations). */
const requiredWithPostgres = (raw: string | undefined, ctx: Context): string | null =>
  raw === undefined && !embedded(ctx) && (ctx.options.requireAdminToken ?? true) ? 'is required when DATABASE_URL is set (it is generated only in embedded mode)' : null;
const generatedInEmbeddedMode = byMode<null>('generated (embedded only); required with `DATABASE_URL`', (ctx) => ({
  value: null,
  mode: embedded(ctx) ? 'embedded mode: generated under DATA_DIR' : 'not needed by this command',
}));
const withFeedUrl = (problem: string) => (raw: string | undefined, ctx: Context) => (raw === undefined && ctx.get('ODDS_FEED_URL') !== null ? problem : null);
const every = (minutes: number) => Object.fromEntries(SPORT_SLUGS.map((sport) => [sport, minutes])) as Record<SportSlug, number>;
const exchangeCommissions = [...new Set(Object.values(EXCHANGE_COMMISSIONS))]
  .map((rate) => `${Object.keys(EXCHANGE_COMMISSIONS).filter((key) => EXCHANGE_COMMISSIONS[key] === rate).map((key) => `\`${key}\``).join(', ')} ${rate}`)
  .join(', ');
/** PICK_REVIEW_EDGE's upper bound. */
const REVIEW_EDGE_MAX = 10;
const MAX_CLUSTER_INSTANCES = 32;
const CLUSTER = 'npm run cluster';

/** Every variable, once, in the order they are read (so the first refusal is the one reported). */
export const VARIABLES = {
  DATABASE_URL: variable({
    section: 'Storage',
    description: 'PostgreSQL; unset means embedded PGlite under `DATA_DIR`',
    kind: kind.url(['postgres:', 'postgresql:']),
    default: null,
    defaultDoc: 'unset (embedded)',
  }),
  REDIS_URL: variable({ section: 'Storage', description: 'Redis; unset means in-memory limiter and event bus', kind: kind.url(['redis:', 'rediss:']), default: null }),
  DATA_DIR: variable({
    section: 'Storage',
    description:
      'Embedded database, generated admin token, webhook secret key, demo keys; the folder is made `0700` and everything in it `0600`/`0700` at every start (readable by the service\'s user only)',
    kind: kind.directory(),
    // Resolved against the working directory at each load.
    default: byMode('`./data`', () => ({ value: path.resolve('./data') })),
  }),
  DEMO_SEED: variable({
    section: 'Storage',
    description: 'Seed the demo into an empty database',
    kind: kind.boolean(),
    default: byMode('on in embedded mode, off otherwise', (ctx) => (embedded(ctx) ? { value: true, mode: 'embedded mode' } : { value: false, mode: 'DATABASE_URL set' })),
  }),
  PORT: variable({ section: 'Server', description: 'HTTP port', kind: kind.integer(0, 65535), default: 3000 }),
  HOST: variable({ section: 'Server', description: 'Listen address; `0.0.0.0` to listen on all interfaces', kind: kind.text('a host name or address'), default: '127.0.0.1' }),
  METRICS_PORT: variable({
    section: 'Server',
    description: 'Port of the Prometheus metrics listener (`GET /metrics`), never the public one; `off` turns it off',
    kind: kind.portOrOff(),
    default: 9464,
    check: (value, ctx) => (value !== null && value !== 0 && value === ctx.get('PORT') ? 'must differ from PORT: the metrics never share the public listener' : null),
  }),
  METRICS_HOST: variable({
    section: 'Server',
    description: 'Listen address of the metrics listener; keep it private (a scraper on the same network)',
    kind: kind.text('a host name or address'),
    default: '127.0.0.1',
  }),
  NODE_ENV: variable({
    section: 'Server',
    description: '`production` turns GraphiQL and (by default) introspection off, and keeps the generated admin token and demo keys out of the start banner',
    kind: kind.text('any; only `production` counts'),
    default: null,
  }),
  LOG_LEVEL: variable({ section: 'Server', description: 'The service log level', kind: kind.oneOf(LOG_LEVELS), default: 'info' as const }),
  TRUST_PROXY: variable({
    section: 'Server',
    description: 'Proxies whose `X-Forwarded-For` / `X-Forwarded-Proto` are believed (client address, TLS detection); set it behind a load balancer (docs/OPERATIONS.md)',
    kind: kind.trustProxy(),
    default: [],
    defaultDoc: 'unset (no proxy trusted)',
  }),
  ADMIN_TOKEN: variable({
    section: 'Server',
    description: 'Bearer token of the admin scope',
    kind: kind.text('at least 16 characters', 16),
    default: generatedInEmbeddedMode,
    secret: true,
    refuse: requiredWithPostgres,
  }),
  TIER_LIMITS: variable({
    section: 'API',
    description: 'Overrides of the tier table below (requests per rolling hour and per calendar month)',
    kind: kind.tierLimits(),
    default: DEFAULT_TIER_LIMITS,
    defaultDoc: 'the tier table below',
  }),
  ANONYMOUS_GRAPHQL_LIMIT: variable({
    section: 'API',
    description:
      'Requests per minute per client address (as `TRUST_PROXY` decides it) to `/graphql` and `/graphql/stream` without credentials, then 429 `rate_limit_exceeded` with `Retry-After`; shared through Redis when configured (docs/RATE_LIMITING.md)',
    kind: kind.integer(1, 1_000_000),
    default: 120,
  }),
  GRAPHQL_INTROSPECTION: variable({
    section: 'API',
    description: 'Serve `__schema` / `__type` queries (and GraphiQL outside production)',
    kind: kind.boolean(),
    default: byMode('on, off in production', (ctx) => (production(ctx) ? { value: false, mode: 'production' } : { value: true })),
  }),
  GRAPHQL_CORS_ORIGINS: variable({
    section: 'API',
    description: 'Origins allowed to call `/graphql` from a browser, never with credentials (no `Access-Control-Allow-Credentials`), so browsers send no cookies',
    kind: kind.corsOrigins(),
    default: [],
    defaultDoc: 'unset (no CORS on `/graphql`)',
  }),
  STREAM_HEARTBEAT_SECONDS: variable({ section: 'Streams', description: 'SSE heartbeat interval', kind: kind.integer(1, 3600), default: 30 }),
  PUBLIC_STREAM_DELAY_SECONDS: variable({
    section: 'Streams',
    description: "The public live feed sends a pick this long after its publication (the public endpoint's CDN age)",
    kind: kind.integer(0, 86_400),
    default: 300,
  }),
  PUBLIC_STREAMS_PER_ADDRESS: variable({
    section: 'Streams',
    description: 'Public live feeds one client address may hold open (then 429 `too_many_streams`)',
    kind: kind.integer(1, 1_000),
    default: 4,
  }),
  PUBLIC_STREAMS_MAX: variable({ section: 'Streams', description: 'Public live feeds per instance (then 503 with `Retry-After`)', kind: kind.integer(1, 1_000_000), default: 10_000 }),
  STREAM_TOKEN_MAX_STREAMS: variable({
    section: 'Streams',
    description: "Streams one API key's stream tokens may hold open per instance (browsers; separate from the key's own 10)",
    kind: kind.integer(1, 100_000),
    default: DEFAULT_STREAM_TOKEN_MAX_STREAMS,
  }),
  STREAM_TOKEN_OPENS_PER_MINUTE: variable({
    section: 'Streams',
    description: 'Streams one stream token may open in any rolling minute, across instances (then 429 `stream_token_rate_limited`)',
    kind: kind.integer(STREAM_TOKEN_OPENS_PER_MINUTE.min, STREAM_TOKEN_OPENS_PER_MINUTE.max),
    default: STREAM_TOKEN_OPENS_PER_MINUTE.default,
  }),
  WEBHOOK_RETRY_SCHEDULE: variable({ section: 'Webhooks', description: 'The waits before the retries of a failed delivery', kind: kind.retrySchedule(), default: kind.DEFAULT_WEBHOOK_RETRY_SCHEDULE_MS }),
  WEBHOOK_LEASE_SECONDS: variable({
    section: 'Webhooks',
    description:
      'How long a delivery stays leased to the instance attempting it, i.e. how soon another instance retakes the attempts of a crashed one; attempts time out 1 s before their lease (10 s at most)',
    kind: kind.integer(3, 3600),
    default: 30,
  }),
  WEBHOOK_SECRET_KEY: variable({
    section: 'Webhooks',
    description:
      'Encrypts webhook secrets at rest. Embedded mode keeps a generated one in `DATA_DIR` beside the database it protects: fine on a developer\'s machine, but in production give it from a secret store, never from a file next to the data',
    kind: kind.secretKey(),
    default: generatedInEmbeddedMode,
    secret: true,
    refuse: requiredWithPostgres,
  }),
  WEBHOOK_SECRET_KEY_PREVIOUS: variable({
    section: 'Webhooks',
    description: 'Earlier keys, still accepted while rotating (docs/WEBHOOKS.md)',
    kind: kind.secretKeys(),
    default: [],
    secret: true,
  }),
  WEBHOOK_HOST_OVERRIDES: variable({
    section: 'Webhooks',
    description: 'Test only; a start with it set warns (banner and log). The embedded demo needs none to reach a local receiver ("Try webhooks locally")',
    kind: kind.hostOverrides(),
    default: new Map<string, string>(),
  }),
  LEDGER_SIGNING_KEY: variable({
    section: 'Ledger',
    description:
      "Signs the ledger's checkpoints (docs/API.md, \"Verifying the record\"); its name is the log's origin. Embedded mode keeps a generated one in `DATA_DIR`; in production give it from a secret store, and never change it: customers pin its verifier key",
    kind: kind.noteSignerKey(),
    default: generatedInEmbeddedMode,
    secret: true,
    refuse: requiredWithPostgres,
  }),
  LEDGER_ORIGIN: variable({
    section: 'Ledger',
    description:
      "The first line of every checkpoint, naming this log to witnesses and verifiers; with `LEDGER_SIGNING_KEY` it must be that key's name. Embedded mode names its generated key with it",
    kind: kind.noteKeyName(),
    default: byMode("`LEDGER_SIGNING_KEY`'s name; `localhost/picks-ledger` in embedded mode", (ctx) => {
      const key = ctx.get<SignerKey | null>('LEDGER_SIGNING_KEY');
      return key ? { value: key.name, mode: "LEDGER_SIGNING_KEY's name" } : { value: EMBEDDED_LEDGER_ORIGIN, mode: 'embedded mode' };
    }),
    check: (value, ctx) => {
      const key = ctx.get<SignerKey | null>('LEDGER_SIGNING_KEY');
      return key && key.name !== value ? `must be LEDGER_SIGNING_KEY's name, "${key.name}": the key is named after the log's origin` : null;
    },
  }),
  LEDGER_PREVIOUS_KEY_ID: variable({
    section: 'Ledger',
    description:
      "Only when `LEDGER_SIGNING_KEY` is replaced on purpose (lost or compromised): the key id of the key it replaces. A start whose key did not sign the latest checkpoint is refused without it (customers pinned that key); with it, the latest checkpoint is signed again by the new key",
    kind: kind.keyId(),
    default: null,
    defaultDoc: 'unset',
  }),
  LEDGER_CHECKPOINT_SECONDS: variable({
    section: 'Ledger',
    description: 'A checkpoint is signed at most this often, when the ledger grew since the last',
    kind: kind.integer(1, 86_400),
    default: 60,
  }),
  LEDGER_WITNESSES: variable({
    section: 'Ledger',
    description: 'Witnesses every checkpoint is submitted to (C2SP tlog-witness); their cosignatures are served with it. A witness that refuses or cannot be reached is retried and logged, never waited for',
    kind: kind.ledgerWitnesses(),
    default: [],
    defaultDoc: 'unset (no witness)',
  }),
  STAKE_KELLY_MULTIPLIER: variable({
    section: 'Picks',
    description: "The share of full Kelly a pick's stake advice (`stake_pct`) takes",
    kind: kind.decimal({ min: 0, max: 1, above: true }, 'a number', '0.25 = a quarter of full Kelly'),
    default: DEFAULT_STAKE_ADVICE.kellyMultiplier,
  }),
  STAKE_MAX_PCT: variable({
    section: 'Picks',
    description: 'The largest stake advice, in percent of the bankroll',
    kind: kind.decimal({ min: 0, max: 100, above: true }, 'a percentage'),
    default: DEFAULT_STAKE_ADVICE.maxPct,
  }),
  ODDS_FEED_URL: variable({
    section: 'Value engine',
    description: "Base URL of the value engine's odds feed, a server speaking The Odds API v4 (`https://api.the-odds-api.com`); the engine calls `{url}/v4/sports/{key}/odds` and `/scores`",
    kind: kind.url(['http:', 'https:'], { trimSlashes: true }),
    default: null,
    defaultDoc: 'unset (no HTTP feed)',
  }),
  ODDS_FEED_API_KEY: variable({
    section: 'Value engine',
    description: 'Sent as `apiKey=`; redacted from every log line',
    kind: kind.text('any'),
    default: null,
    defaultDoc: 'required with `ODDS_FEED_URL`',
    secret: true,
    refuse: withFeedUrl('is required when ODDS_FEED_URL is set'),
  }),
  ODDS_FEED_SPORTS: variable({
    section: 'Value engine',
    description: 'The v4 sport keys polled',
    kind: kind.feedSports(),
    default: [],
    defaultDoc: 'required with `ODDS_FEED_URL`',
    refuse: withFeedUrl('is required when ODDS_FEED_URL is set (comma-separated v4 sport keys, e.g. soccer_epl,basketball_nba)'),
  }),
  DEMO_FEED: variable({
    section: 'Value engine',
    description: 'The built-in simulated feed; never on with `DATABASE_URL` unless set, refused together with `ODDS_FEED_URL`',
    kind: kind.boolean(),
    // The simulated feed is part of the embedded demo; it never runs against PostgreSQL unless asked.
    default: byMode('on in embedded mode with `DEMO_SEED`, off otherwise', (ctx) => {
      if (ctx.get('ODDS_FEED_URL') !== null) return { value: false, mode: 'ODDS_FEED_URL set' };
      if (!embedded(ctx)) return { value: false, mode: 'DATABASE_URL set' };
      return ctx.get('DEMO_SEED') ? { value: true, mode: 'embedded demo' } : { value: false, mode: 'DEMO_SEED off' };
    }),
    check: (on, ctx) => (on && ctx.get('ODDS_FEED_URL') !== null ? 'cannot be on while ODDS_FEED_URL is set: the engine reads one feed' : null),
  }),
  ODDS_FEED_REGIONS: variable({ section: 'Value engine', description: 'The v4 regions asked for', kind: kind.listOf(FEED_REGIONS, 'regions'), default: ['eu'] }),
  ODDS_FEED_MARKETS: variable({
    section: 'Value engine',
    description: 'The v4 markets read, sent as `markets=`; the feed\'s quota counts markets x regions per sport per odds poll (the default costs 3 requests per sport per poll, `h2h` alone 1)',
    kind: kind.feedMarkets(),
    default: [...MARKETS],
  }),
  // Before REFERENCE_BOOKMAKER: both set is refused before either is read.
  REFERENCE_BOOKMAKERS: variable({
    section: 'Value engine',
    description: 'The sharp bookmakers whose devigged markets make the fair price (docs/VALUE_ENGINE.md, "References")',
    kind: kind.referenceBooks(),
    default: byMode(`\`${DEFAULT_DETECTION_OPTIONS.references[0]!.key}\` (the demo feed: \`${SIMULATED_REFERENCE_BOOKMAKERS}\`)`, (ctx) => {
      const single = ctx.get<string | null>('REFERENCE_BOOKMAKER');
      if (single !== null) return { value: [{ key: single, weight: 1 }], mode: 'REFERENCE_BOOKMAKER' };
      // The demo's simulated feed quotes a book and an exchange: its picks are consensus picks.
      if (ctx.get('DEMO_FEED')) return { value: kind.parseReferenceList('REFERENCE_BOOKMAKERS', SIMULATED_REFERENCE_BOOKMAKERS), mode: 'demo feed' };
      return { value: DEFAULT_DETECTION_OPTIONS.references.map((reference) => ({ ...reference })) };
    }),
    refuse: (raw, ctx) =>
      raw !== undefined && ctx.raw('REFERENCE_BOOKMAKER') !== undefined ? 'cannot be set together with REFERENCE_BOOKMAKER (its one-book alias): keep one of them' : null,
  }),
  REFERENCE_BOOKMAKER: variable({ section: 'Value engine', description: 'One-book alias of `REFERENCE_BOOKMAKERS`; not both', kind: kind.bookmakerKey(), default: null }),
  DEVIG_METHOD: variable({
    section: 'Value engine',
    description: "How a reference's margin is removed (docs/VALUE_ENGINE.md, \"Devigging\")",
    kind: kind.oneOf(DEVIG_METHODS),
    default: DEFAULT_DETECTION_OPTIONS.devigMethod,
  }),
  PICK_MIN_EDGE: variable({
    section: 'Value engine',
    description: 'Smallest post-tax edge of an engine pick',
    kind: kind.decimal({ min: 0, max: 1 }, 'a fraction', '0.02 = 2 %'),
    default: DEFAULT_DETECTION_OPTIONS.minEdge,
  }),
  PICK_REVIEW_EDGE: variable({
    section: 'Value engine',
    description: 'From this post-tax edge a price looks too good to be true and the engine pick is held for review (docs/VALUE_ENGINE.md, "Review queue")',
    kind: kind.decimal({ min: 0, max: REVIEW_EDGE_MAX, lower: 'PICK_MIN_EDGE' }, 'a fraction', '0.25 = 25 %'),
    default: DEFAULT_DETECTION_OPTIONS.reviewEdge,
    check: (edge, ctx) => {
      const minEdge = ctx.get<number>('PICK_MIN_EDGE');
      return edge > minEdge ? null : `must be greater than PICK_MIN_EDGE (${minEdge}) and at most ${REVIEW_EDGE_MAX} (got "${edge}")`;
    },
  }),
  PICK_CONFIRM_POLLS: variable({
    section: 'Value engine',
    description:
      'Consecutive odds polls a selection must show a qualifying edge on before the engine publishes it; 1 publishes at the first (docs/VALUE_ENGINE.md, "Confirmation")',
    kind: kind.integer(1, 5),
    default: 1,
  }),
  ODDS_POLL_SECONDS: variable({ section: 'Value engine', description: 'Odds poll period; one instance of a deployment polls at a time', kind: kind.integer(1, 3600), default: 60 }),
  SCORES_POLL_SECONDS: variable({ section: 'Value engine', description: 'Scores poll period', kind: kind.integer(1, 3600), default: 300 }),
  ODDS_FEED_MONTHLY_CREDITS: variable({
    section: 'Value engine',
    description:
      'The odds feed\'s monthly credit budget: polls follow the kickoffs and stay within it (docs/VALUE_ENGINE.md, "Feed credits"); unset: odds every `ODDS_POLL_SECONDS` and scores every `SCORES_POLL_SECONDS`, whatever the cost',
    kind: kind.integer(1, 1_000_000_000),
    default: null,
    defaultDoc: 'unset (fixed periods)',
    refuse: (raw, ctx) => (raw !== undefined && ctx.get('ODDS_FEED_URL') === null ? 'needs ODDS_FEED_URL: only a paid feed has credits to budget' : null),
    check: (value, ctx) => {
      if (value === null) return null;
      const oddsCredits = oddsRequestCredits(ctx.get<Market[]>('ODDS_FEED_MARKETS').length, ctx.get<string[]>('ODDS_FEED_REGIONS').length);
      const minimum = minimumMonthlyCredits(ctx.get<string[]>('ODDS_FEED_SPORTS').length, oddsCredits);
      return value < minimum.credits ? `is too small: ${minimum.arithmetic} credits a month at least (got ${value})` : null;
    },
  }),
  ODDS_FEED_CREDIT_RESERVE: variable({
    section: 'Value engine',
    description: 'Credits of the monthly budget kept for closing-line polls; the routine polls never spend them',
    kind: kind.integer(0, 1_000_000_000),
    default: byMode<number | null>('10 % of `ODDS_FEED_MONTHLY_CREDITS` (rounded down)', (ctx) => {
      const budget = ctx.get<number | null>('ODDS_FEED_MONTHLY_CREDITS');
      return budget === null ? { value: null, mode: 'no budget' } : { value: Math.floor(budget / 10), mode: '10 % of the budget' };
    }),
    refuse: (raw, ctx) => (raw !== undefined && ctx.get('ODDS_FEED_MONTHLY_CREDITS') === null ? 'needs ODDS_FEED_MONTHLY_CREDITS' : null),
    check: (value, ctx) => {
      const budget = ctx.get<number | null>('ODDS_FEED_MONTHLY_CREDITS');
      if (value === null || budget === null) return null;
      const oddsCredits = oddsRequestCredits(ctx.get<Market[]>('ODDS_FEED_MARKETS').length, ctx.get<string[]>('ODDS_FEED_REGIONS').length);
      const sports = ctx.get<string[]>('ODDS_FEED_SPORTS').length;
      const daily = sports * LONGEST_MONTH_DAYS * oddsCredits;
      return budget - value < daily
        ? `leaves too little of ODDS_FEED_MONTHLY_CREDITS=${budget} for the routine polls: ${sports} sport${sports === 1 ? '' : 's'} x ${LONGEST_MONTH_DAYS} days x ${oddsCredits} credit${oddsCredits === 1 ? '' : 's'} = ${daily} (got ${value}, at most ${budget - daily})`
        : null;
    },
  }),
  CLOSING_POLL_WINDOW_SECONDS: variable({
    section: 'Value engine',
    description: 'With a credit budget: the odds poll before each kickoff of an event with an open pick comes within this long before it, paid from the reserve first',
    kind: kind.integer(10, 3600),
    default: 120,
  }),
  REFERENCE_MAX_SPREAD: variable({
    section: 'Value engine',
    description: 'References further apart than this on a selection make no pick for it',
    kind: kind.decimal({ min: 0, max: 1 }, 'an absolute difference of probabilities', '0.03 = 3 points'),
    default: DEFAULT_DETECTION_OPTIONS.maxReferenceSpread,
  }),
  REFERENCE_MAX_MARGIN: variable({
    section: 'Value engine',
    description: 'A reference margin above this marks the pick `wide_reference_market`',
    kind: kind.decimal({ min: 0, max: 1 }, 'a margin fraction', '0.08 = 8 %'),
    default: DEFAULT_DETECTION_OPTIONS.maxReferenceMargin,
  }),
  BOOKMAKER_TAX_RATES: variable({
    section: 'Value engine',
    description: 'Tax rates of engine picks by bookmaker (a manual pick names its own); for an exchange key, a commission on net winnings (docs/VALUE_ENGINE.md, "Exchanges")',
    kind: kind.taxRates(),
    default: {},
    defaultDoc: `every bookmaker \`${DEFAULT_TAX_RATE}\`; the exchanges (${exchangeCommissions}) their base commission`,
  }),
  REFERENCE_MAX_EXCHANGE_SPREAD: variable({
    section: 'Value engine',
    description: 'An exchange reference (priced from its back/lay midpoint) whose lay / back - 1 exceeds this on any outcome is left out of that market (`exchange_spread_wide`)',
    kind: kind.decimal({ min: 0, max: 1 }, 'a relative spread', '0.05 = lay 5 % above back'),
    default: DEFAULT_DETECTION_OPTIONS.maxExchangeSpread,
  }),
  PICK_ODDS_RANGE: variable({ section: 'Value engine', description: 'Offered prices the engine picks from', kind: kind.oddsRange(), default: DEFAULT_DETECTION_OPTIONS.oddsRange }),
  PICK_HORIZON_HOURS: variable({ section: 'Value engine', description: 'How far ahead a kickoff may be', kind: kind.integer(1, 720), default: DEFAULT_DETECTION_OPTIONS.horizonHours }),
  REFERENCE_MAX_AGE_SECONDS: variable({
    section: 'Value engine',
    description: 'Oldest accepted reference and offered price',
    kind: kind.integer(1, 86_400),
    default: DEFAULT_DETECTION_OPTIONS.referenceMaxAgeSeconds,
  }),
  FEED_CLOCK_SKEW_SECONDS: variable({
    section: 'Value engine',
    description: "A `last_update` further than this ahead of the service's clock makes its market stale",
    kind: kind.integer(0, 600),
    default: DEFAULT_DETECTION_OPTIONS.clockSkewSeconds,
  }),
  MATCH_MIN_MINUTES: variable({
    section: 'Value engine',
    description: 'A `completed` score record earlier than kickoff + this is not believed; `0` turns the check off',
    kind: kind.matchMinMinutes(),
    // The simulated feed plays 10- to 20-minute matches: real sports' floors would hold its finals for hours.
    default: byMode(`by sport (docs/VALUE_ENGINE.md, "Settlement"); the demo feed: ${SIMULATED_MATCH_MIN_MINUTES} for every sport`, (ctx) =>
      ctx.get('DEMO_FEED') ? { value: every(SIMULATED_MATCH_MIN_MINUTES), mode: 'demo feed' } : { value: DEFAULT_MATCH_MIN_MINUTES },
    ),
  }),
  CLOSING_LINE_MAX_AGE_SECONDS: variable({
    section: 'Value engine',
    description: 'A closing line whose last reference price is older than this at kickoff is stale (stored and shown, left out of the CLV average)',
    kind: kind.integer(60, 86_400),
    default: DEFAULT_SETTLEMENT_OPTIONS.closingLineMaxAgeSeconds,
  }),
  ODDS_HISTORY_DAYS: variable({ section: 'Value engine', description: 'How long line movement is kept', kind: kind.integer(1, 365), default: DEFAULT_ODDS_HISTORY_DAYS }),
  CLUSTER_INSTANCES: variable({ section: 'Cluster', command: CLUSTER, description: 'How many instances it starts', kind: kind.integer(1, MAX_CLUSTER_INSTANCES), default: 3 }),
  CLUSTER_BASE_PORT: variable({
    section: 'Cluster',
    command: CLUSTER,
    description: 'Port of the first instance; the others follow, the last at most 65535',
    kind: kind.integer(1, 65535),
    default: 3001,
    // Refused with the bound the instance count leaves.
    refuse: (raw, ctx) => {
      const max = 65535 - ctx.get<number>('CLUSTER_INSTANCES') + 1;
      return raw !== undefined && !(/^\d+$/.test(raw) && Number(raw) >= 1 && Number(raw) <= max) ? `must be an integer between 1 and ${max} (got "${raw}")` : null;
    },
  }),
};

export type VariableName = keyof typeof VARIABLES;

export function loadConfig(env: Env = process.env, options: LoadConfigOptions = {}): Config {
  const settings = resolver(VARIABLES, env, options);
  for (const [name, row] of Object.entries(VARIABLES)) if (row.command === undefined) settings.get(name as VariableName);
  const v = <K extends VariableName>(name: K) => settings.get(name);
  const feedUrl = v('ODDS_FEED_URL');
  const isProduction = v('NODE_ENV') === 'production';
  return {
    port: v('PORT'),
    host: v('HOST'),
    metrics: { host: v('METRICS_HOST'), port: v('METRICS_PORT') },
    databaseUrl: v('DATABASE_URL'),
    dataDir: v('DATA_DIR'),
    redisUrl: v('REDIS_URL'),
    adminToken: v('ADMIN_TOKEN'),
    demoSeed: v('DEMO_SEED'),
    tierLimits: v('TIER_LIMITS'),
    webhookRetryScheduleMs: v('WEBHOOK_RETRY_SCHEDULE'),
    webhookLeaseMs: v('WEBHOOK_LEASE_SECONDS') * 1000,
    streamHeartbeatSeconds: v('STREAM_HEARTBEAT_SECONDS'),
    publicStream: { delaySeconds: v('PUBLIC_STREAM_DELAY_SECONDS'), perAddress: v('PUBLIC_STREAMS_PER_ADDRESS'), maxStreams: v('PUBLIC_STREAMS_MAX') },
    streamTokenMaxStreams: v('STREAM_TOKEN_MAX_STREAMS'),
    streamTokenOpensPerMinute: v('STREAM_TOKEN_OPENS_PER_MINUTE'),
    webhookHostOverrides: v('WEBHOOK_HOST_OVERRIDES'),
    // Behind a trusted proxy loopback is reachable from elsewhere, and NODE_ENV spelt "Production"
    // is someone meaning production: either turns the demo's local receivers off.
    localWebhookReceivers:
      v('DATABASE_URL') === null && v('DEMO_SEED') && !/^production$/i.test(v('NODE_ENV') ?? '') && v('TRUST_PROXY').length === 0 && isLoopbackListenHost(v('HOST')),
    webhookSecretKey: v('WEBHOOK_SECRET_KEY'),
    webhookSecretKeysPrevious: v('WEBHOOK_SECRET_KEY_PREVIOUS'),
    logLevel: v('LOG_LEVEL'),
    defaultTaxRate: DEFAULT_TAX_RATE,
    stakeAdvice: { kellyMultiplier: v('STAKE_KELLY_MULTIPLIER'), maxPct: v('STAKE_MAX_PCT') },
    production: isProduction,
    graphqlIntrospection: v('GRAPHQL_INTROSPECTION'),
    trustProxy: v('TRUST_PROXY'),
    anonymousGraphqlLimit: v('ANONYMOUS_GRAPHQL_LIMIT'),
    graphqlCorsOrigins: v('GRAPHQL_CORS_ORIGINS'),
    valueEngine: {
      feed: feedUrl === null ? null : { url: feedUrl, apiKey: v('ODDS_FEED_API_KEY')! },
      demoFeed: v('DEMO_FEED'),
      sportKeys: v('ODDS_FEED_SPORTS'),
      regions: v('ODDS_FEED_REGIONS'),
      markets: v('ODDS_FEED_MARKETS'),
      oddsPollSeconds: v('ODDS_POLL_SECONDS'),
      confirmPolls: v('PICK_CONFIRM_POLLS'),
      scoresPollSeconds: v('SCORES_POLL_SECONDS'),
      credits: creditBudget(v('ODDS_FEED_MONTHLY_CREDITS'), v('ODDS_FEED_CREDIT_RESERVE'), v('CLOSING_POLL_WINDOW_SECONDS')),
      detection: {
        references: v('REFERENCE_BOOKMAKERS'),
        devigMethod: v('DEVIG_METHOD'),
        maxReferenceSpread: v('REFERENCE_MAX_SPREAD'),
        maxReferenceMargin: v('REFERENCE_MAX_MARGIN'),
        taxRates: v('BOOKMAKER_TAX_RATES'),
        defaultTaxRate: DEFAULT_TAX_RATE,
        maxExchangeSpread: v('REFERENCE_MAX_EXCHANGE_SPREAD'),
        minEdge: v('PICK_MIN_EDGE'),
        oddsRange: v('PICK_ODDS_RANGE'),
        horizonHours: v('PICK_HORIZON_HOURS'),
        referenceMaxAgeSeconds: v('REFERENCE_MAX_AGE_SECONDS'),
        reviewEdge: v('PICK_REVIEW_EDGE'),
        clockSkewSeconds: v('FEED_CLOCK_SKEW_SECONDS'),
      },
      settlement: { matchMinMinutes: v('MATCH_MIN_MINUTES'), closingLineMaxAgeSeconds: v('CLOSING_LINE_MAX_AGE_SECONDS') },
      oddsHistoryDays: v('ODDS_HISTORY_DAYS'),
    },
    ledger: {
      origin: v('LEDGER_ORIGIN'),
      signingKey: v('LEDGER_SIGNING_KEY'),
      previousKeyId: v('LEDGER_PREVIOUS_KEY_ID'),
      checkpointSeconds: v('LEDGER_CHECKPOINT_SECONDS'),
      witnesses: v('LEDGER_WITNESSES'),
    },
  };
}

/** `npm run cluster`'s own variables, with the same one-line refusals. */
export function loadClusterConfig(env: Env = process.env): { instances: number; basePort: number } {
  const settings = resolver(VARIABLES, env);
  return { instances: settings.get('CLUSTER_INSTANCES'), basePort: settings.get('CLUSTER_BASE_PORT') };
}

/**
 * REFERENCE_BOOKMAKERS and its one-book alias REFERENCE_BOOKMAKER as the references (outside the
 * demo feed): both at once is an error, neither means Pinnacle alone.
 */
export function parseReferenceBookmakers(raw: string | undefined, single: string | undefined): ReferenceBook[] {
  return resolver(VARIABLES, { REFERENCE_BOOKMAKERS: raw, REFERENCE_BOOKMAKER: single, DEMO_FEED: 'false' }).get('REFERENCE_BOOKMAKERS');
}

/**
 * `npm run config`: every variable's effective value (secrets redacted) and where it came from,
 * by section; `refusal` is the line `npm start` would stop with, or null.
 */
export function describeConfig(env: Env = process.env, options: LoadConfigOptions = {}): { lines: string[]; refusal: string | null } {
  let refusal: string | null = null;
  try {
    loadConfig(env, options);
  } catch (error) {
    if (!(error instanceof kind.ConfigError)) throw error;
    refusal = error.message;
  }
  const mode = env.DATABASE_URL?.trim() ? 'PostgreSQL (DATABASE_URL set)' : 'embedded (PGlite under DATA_DIR)';
  const header = [`Configuration from the environment, mode ${mode}; secrets [redacted]. Source: env, or the default (and the mode that chose it).`];
  return { lines: [...header, ...renderSettings(VARIABLES, resolver(VARIABLES, env, options))], refusal };
}
