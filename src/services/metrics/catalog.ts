/**
 * The metrics contract: every family the service exposes in the Prometheus text format, with
 * its type, help text and labels. Label values are bounded sets, written here: a label whose
 * values are not listed names the finite set it draws from (route templates, configured sport
 * keys). From this table come the registry (./metrics.ts), the "Metrics" table of
 * docs/OPERATIONS.md (`npm run config:docs`) and the check that the dashboard and the alerts
 * name only what exists.
 */
import { TIERS } from '../../domain/api-key.js';
import { HOLD_REASONS } from '../../domain/engine-rules.js';
import { PICK_RESULTS } from '../../domain/pick.js';
import type { LimiterEngine } from '../../domain/rate-limit.js';
import type { RejectionReason } from '../../domain/value-detection.js';
import { WEBHOOK_EVENT_TYPES, WEBHOOK_SUBSCRIPTION_STATUSES } from '../../domain/webhook.js';

export type MetricType = 'counter' | 'gauge' | 'histogram';

/** A label's values: the list itself, or (bounded by something else) what bounds them. */
export type LabelValues = readonly string[] | { readonly boundedBy: string };

export interface MetricFamily {
  readonly name: string;
  readonly type: MetricType;
  readonly help: string;
  readonly labels: Readonly<Record<string, LabelValues>>;
  /** Histogram buckets, in seconds. */
  readonly buckets?: readonly number[];
  /** What an operator reads from it, for the docs (when the help text is not enough). */
  readonly notes?: string;
}

/** What a submission of a checkpoint to a witness came to. */
export const WITNESS_OUTCOMES = ['cosigned', 'refused', 'unreachable'] as const;
export type WitnessOutcome = (typeof WITNESS_OUTCOMES)[number];

export const HTTP_SURFACES = ['rest', 'public', 'graphql', 'stream', 'dashboard', 'pages'] as const;
export type HttpSurface = (typeof HTTP_SURFACES)[number];
export const STREAM_SURFACES = ['rest', 'graphql', 'public', 'token'] as const;
export type StreamSurface = (typeof STREAM_SURFACES)[number];
export const HTTP_METHODS = ['GET', 'HEAD', 'POST', 'PUT', 'PATCH', 'DELETE', 'OPTIONS', 'other'] as const;
export const LIMIT_OUTCOMES = ['allowed', 'hourly_limited', 'monthly_limited'] as const;
export type LimitOutcome = (typeof LIMIT_OUTCOMES)[number];
export const LIMITER_ENGINES = ['redis', 'memory', 'fallback'] as const satisfies readonly LimiterEngine[];
export const DELIVERY_RESULTS = ['delivered', 'failed', 'exhausted'] as const;
export type DeliveryResult = (typeof DELIVERY_RESULTS)[number];
/** The odds feed's endpoints the service calls (The Odds API v4): `/v4/sports/{sport}/odds`, `/scores` and (with a credit budget) the free `/events`. */
export const FEED_ENDPOINTS = ['odds', 'scores', 'events'] as const;
/** The figures of a credit budget (docs/VALUE_ENGINE.md, "Feed credits"). */
export const FEED_BUDGET_FIGURES = ['monthly', 'reserve', 'reserve_left', 'used', 'remaining', 'projected'] as const;
export type FeedBudgetFigure = (typeof FEED_BUDGET_FIGURES)[number];
export const FEED_POLL_KINDS = ['odds', 'scores'] as const;
export type FeedEndpoint = (typeof FEED_ENDPOINTS)[number];
export const CANDIDATE_DECISIONS = ['published', 'held', 'rejected'] as const;
export type CandidateDecision = (typeof CANDIDATE_DECISIONS)[number];
/**
 * Why a candidate went as it did. Published: `none`, or `promoted` (a held pick that found a
 * plausible price). Held: the hold reasons. Rejected: the detection's reasons (docs/VALUE_ENGINE.md,
 * "Detection"; every `reference_refused:<reason>` counted as `reference_refused`), a candidate
 * still waiting for its confirming polls, or one the pick rules refused.
 */
export const REJECTION_REASONS = [
  'no_reference',
  'reference_stale',
  'reference_refused',
  'references_disagree',
  'kickoff_past',
  'beyond_horizon',
  'no_offer',
  'offered_stale',
  'outside_odds_range',
  'below_min_edge',
  'awaiting_confirmation',
  'refused_by_pick_rules',
] as const;
export const CANDIDATE_REASONS = ['none', 'promoted', ...HOLD_REASONS, ...REJECTION_REASONS] as const;
export type CandidateReason = (typeof CANDIDATE_REASONS)[number];

/** A detection's rejection reason as the metric's label: `reference_refused:<why>` counts as `reference_refused`. */
export function rejectionLabel(reason: RejectionReason): CandidateReason {
  // Typed so that a new detection reason missing from REJECTION_REASONS fails to compile.
  return reason.startsWith('reference_refused:') ? 'reference_refused' : (reason as Exclude<RejectionReason, `reference_refused:${string}`>);
}
export const PICK_SOURCES = ['engine', 'manual'] as const;
export const POOL_STATES = ['busy', 'idle', 'waiting'] as const;
export type PoolState = (typeof POOL_STATES)[number];

/** Request latencies: from a cached list (~1 ms) to a slow write under load. */
const LATENCY_BUCKETS = [0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10];

export const METRICS = {
  httpRequests: {
    name: 'picks_http_requests_total',
    type: 'counter',
    help: 'HTTP requests answered, by surface, route template, method and status code.',
    labels: {
      surface: HTTP_SURFACES,
      route: { boundedBy: 'the route templates of the app (`/api/v1/picks/:id`), `unmatched` when no route answered' },
      method: HTTP_METHODS,
      status: { boundedBy: 'the HTTP status codes the service answers' },
    },
    notes: 'A stream is counted when it ends. `unmatched` holds every path no route took (404s, probes).',
  },
  httpDuration: {
    name: 'picks_http_request_duration_seconds',
    type: 'histogram',
    help: 'Time from a request received to its response sent, by surface, route template and method (streams excluded).',
    labels: { surface: HTTP_SURFACES, route: { boundedBy: 'as picks_http_requests_total' }, method: HTTP_METHODS },
    buckets: LATENCY_BUCKETS,
    notes: 'Streams (`surface="stream"` and the SSE subscriptions of `/graphql`) stay open for hours, so they are counted by picks_http_requests_total and picks_streams_open instead.',
  },
  rateLimitDecisions: {
    name: 'picks_rate_limit_decisions_total',
    type: 'counter',
    help: 'Hourly-limit and monthly-cap decisions on API-key requests, by tier, outcome and the engine that decided.',
    labels: { tier: TIERS, outcome: LIMIT_OUTCOMES, engine: LIMITER_ENGINES },
    notes: '`engine="fallback"` means Redis was unreachable and this instance decided alone (docs/RATE_LIMITING.md).',
  },
  streamsOpen: {
    name: 'picks_streams_open',
    type: 'gauge',
    help: 'Streams this instance holds open: the REST picks stream, GraphQL SSE subscriptions, the public live feed, and streams opened with a stream token.',
    labels: { surface: STREAM_SURFACES },
  },
  webhookDeliveries: {
    name: 'picks_webhook_deliveries_total',
    type: 'counter',
    help: 'Webhook attempts sent by this instance, by event type and result.',
    labels: { event: [...WEBHOOK_EVENT_TYPES], result: DELIVERY_RESULTS },
    notes: '`failed`: the attempt failed and a retry is scheduled; `exhausted`: it failed and was the last one.',
  },
  webhookDeliveryLag: {
    name: 'picks_webhook_delivery_lag_seconds',
    type: 'histogram',
    help: "Time from an event's commit to the first attempt of each of its deliveries.",
    labels: {},
    buckets: [0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60, 300],
  },
  webhookSubscriptions: {
    name: 'picks_webhook_subscriptions',
    type: 'gauge',
    help: 'Webhook subscriptions in the database, by state.',
    labels: { state: WEBHOOK_SUBSCRIPTION_STATUSES },
  },
  outboxPending: {
    name: 'picks_outbox_pending',
    type: 'gauge',
    help: 'Events committed to the outbox and not yet relayed to the event bus.',
    labels: {},
  },
  outboxOldestPending: {
    name: 'picks_outbox_oldest_pending_seconds',
    type: 'gauge',
    help: 'Age of the oldest event not yet relayed; 0 when none waits.',
    labels: {},
  },
  feedRequests: {
    name: 'picks_feed_requests_total',
    type: 'counter',
    help: 'Requests to the odds feed, by endpoint and HTTP status (`error`: no answer: timeout, refused connection).',
    labels: { endpoint: FEED_ENDPOINTS, status: { boundedBy: 'the HTTP status codes the feed answers, and `error`' } },
  },
  feedCreditsRemaining: {
    name: 'picks_feed_credits_remaining',
    type: 'gauge',
    help: "The feed's credits left this period, from its last `x-requests-remaining` header.",
    labels: {},
    notes: 'Absent until the feed has answered with the header.',
  },
  feedCreditsUsed: {
    name: 'picks_feed_credits_used',
    type: 'gauge',
    help: "The feed's credits used this period, from its last `x-requests-used` header.",
    labels: {},
    notes: 'Absent until the feed has answered with the header.',
  },
  feedBudgetCredits: {
    name: 'picks_feed_budget_credits',
    type: 'gauge',
    help: 'The credit budget this month (`ODDS_FEED_MONTHLY_CREDITS`): the budget, the reserve for closing lines and what is left of it, credits used and remaining, and the projected month-end spend.',
    labels: { figure: FEED_BUDGET_FIGURES },
    notes: 'Absent without a budget. `used` follows the feed\'s `x-requests-used` when it sends it, else what the requests cost by the formula.',
  },
  feedNextPoll: {
    name: 'picks_feed_next_poll_timestamp_seconds',
    type: 'gauge',
    help: "When the credit plan's next odds or scores poll of a sport is due (Unix seconds).",
    labels: { sport: { boundedBy: 'the sport keys polled (`ODDS_FEED_SPORTS`)' }, kind: FEED_POLL_KINDS },
    notes: 'Absent without a budget; a sport and kind with nothing planned in the week ahead has no sample.',
  },
  feedPollsStopped: {
    name: 'picks_feed_polls_stopped',
    type: 'gauge',
    help: 'Whether the feed reported no credits left and polls stopped until the next month or a budget change (1), or not (0).',
    labels: {},
    notes: 'Absent without a budget.',
  },
  enginePollDuration: {
    name: 'picks_engine_poll_duration_seconds',
    type: 'histogram',
    help: 'Time an odds poll of one sport took: the feed request (retries included), detection and writes, not its wait behind other sports\' ingestion.',
    labels: { sport: { boundedBy: 'the sport keys polled (`ODDS_FEED_SPORTS`)' } },
    buckets: [0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60],
  },
  engineLastPoll: {
    name: 'picks_engine_last_poll_timestamp_seconds',
    type: 'gauge',
    help: 'When the last odds poll of a sport completed (Unix seconds); a failed poll does not move it.',
    labels: { sport: { boundedBy: 'the sport keys polled (`ODDS_FEED_SPORTS`)' } },
  },
  engineCandidates: {
    name: 'picks_engine_candidates_total',
    type: 'counter',
    help: "The engine's outcomes at each odds poll: a new pick published or held, or an outcome rejected, with the reason.",
    labels: { decision: CANDIDATE_DECISIONS, reason: CANDIDATE_REASONS },
    notes: 'Counted per poll: an outcome rejected at every poll is counted at every poll; a published pick once.',
  },
  ledgerEntries: {
    name: 'picks_ledger_entries',
    type: 'gauge',
    help: "The public ledger's length (its head's sequence number).",
    labels: {},
  },
  ledgerCheckpointSize: {
    name: 'picks_ledger_checkpoint_size',
    type: 'gauge',
    help: "The latest signed checkpoint's tree size (0 before the first): picks_ledger_entries minus it is what no checkpoint covers yet.",
    labels: {},
  },
  ledgerCheckpointSigned: {
    name: 'picks_ledger_checkpoint_timestamp_seconds',
    type: 'gauge',
    help: 'When the latest checkpoint was signed (Unix seconds; 0 before the first).',
    labels: {},
  },
  ledgerWitnessSubmissions: {
    name: 'picks_ledger_witness_submissions_total',
    type: 'counter',
    help: 'Checkpoints submitted to a witness by this instance, by outcome: `cosigned`, `refused` (it answered, without a cosignature that verifies) or `unreachable` (no answer).',
    labels: { witness: { boundedBy: 'the witnesses configured (`LEDGER_WITNESSES`)' }, outcome: WITNESS_OUTCOMES },
  },
  picksPublished: {
    name: 'picks_picks_published_total',
    type: 'counter',
    help: 'Picks published by this instance, by source.',
    labels: { source: PICK_SOURCES },
    notes: 'A held pick approved by an operator counts as `manual`; one the engine promoted as `engine`.',
  },
  picksSettled: {
    name: 'picks_picks_settled_total',
    type: 'counter',
    help: 'Picks settled by this instance, by result.',
    labels: { result: PICK_RESULTS },
  },
  dbPoolConnections: {
    name: 'picks_db_pool_connections',
    type: 'gauge',
    help: 'PostgreSQL pool connections by state (`waiting`: requests queued for a connection).',
    notes: 'Absent in embedded mode (PGlite has no pool).',
    labels: { state: POOL_STATES },
  },
  redisConnected: {
    name: 'picks_redis_connected',
    type: 'gauge',
    help: 'Whether Redis answered the limiter\'s ping at this scrape: 1 yes, 0 no.',
    notes: 'Absent without `REDIS_URL`.',
    labels: {},
  },
} as const satisfies Record<string, MetricFamily>;

export type MetricId = keyof typeof METRICS;
export type LabelsOf<Id extends MetricId> = keyof (typeof METRICS)[Id]['labels'] & string;

/** The families of prom-client's default Node.js metrics the service also exposes (event loop lag, heap, GC, CPU). */
export const DEFAULT_METRICS_PREFIX = 'process_ / nodejs_';
