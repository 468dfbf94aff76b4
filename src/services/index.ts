import type { TierLimits } from '../domain/access.js';
import type { Clock } from '../domain/clock.js';
import type { EdgeTierThresholds, StakeAdvice } from '../domain/odds.js';
import type { Market } from '../domain/market.js';
import type { SecretKeyring } from '../domain/secrets.js';
import type { Orm } from '../persistence/orm.js';
import { AccountService } from './accounts.js';
import { MatchAnalysisService } from './analyses.js';
import { ApiKeyService } from './api-keys.js';
import { AuthService } from './auth.js';
import { DashboardAuthService } from './dashboard-auth.js';
import type { EventBus } from './events/event-bus.js';
import { PickFeed } from './events/pick-feed.js';
import type { RateLimiter } from './limits/rate-limiter.js';
import { PickService } from './picks.js';
import { MAX_STREAMS_PER_KEY, StreamSlots } from './stream-slots.js';
import { DEFAULT_STREAM_TOKEN_MAX_STREAMS } from '../domain/stream-token.js';
import { StreamTokenService } from './stream-tokens.js';
import { TrackRecordService } from './track-record.js';
import { LedgerService } from './ledger.js';
import { LedgerLog, type LedgerLogOptions } from './ledger-log.js';
import { WebhookService } from './webhooks/subscriptions.js';
import type { FeedCreditBudget } from './value-engine/credit-budget.js';
import { ValueEngine } from './value-engine/engine.js';
import { DEFAULT_DETECTION_OPTIONS, type DetectionOptions } from '../domain/value-detection.js';
import { DEFAULT_SETTLEMENT_OPTIONS, type SettlementOptions } from '../domain/settlement.js';
import type { ServiceLog } from './log.js';
import type { ServiceMetrics } from './metrics/metrics.js';
import type { WebhookUrlGuard } from './webhooks/url-guard.js';

export interface Services {
  picks: PickService;
  analyses: MatchAnalysisService;
  trackRecord: TrackRecordService;
  ledger: LedgerService;
  /** Signed checkpoints, proofs, receipts and witnesses of the ledger (docs/API.md, "Verifying the record"). */
  ledgerLog: LedgerLog;
  apiKeys: ApiKeyService;
  auth: AuthService;
  /** Short-lived credentials a browser may hold to read a key's pick stream (docs/API.md, "Frontends"). */
  streamTokens: StreamTokenService;
  /** Live and replayed pick events for subscriptions and streams. */
  feed: PickFeed;
  webhooks: WebhookService;
  /** Customer accounts (docs/DASHBOARD.md). */
  accounts: AccountService;
  /** Dashboard sign-in and sessions. */
  dashboardAuth: DashboardAuthService;
  /** API keys' concurrent subscriptions on this instance, every surface together. */
  streamSlots: StreamSlots;
  /** Odds in, picks out; scores in, settlements out (docs/VALUE_ENGINE.md). */
  valueEngine: ValueEngine;
  /** The odds feed's monthly credit budget (ODDS_FEED_MONTHLY_CREDITS); null without one. */
  feedBudget: FeedCreditBudget | null;
}

export interface ServiceDeps {
  orm: Orm;
  clock: Clock;
  limiter: RateLimiter;
  bus: EventBus;
  webhookUrlGuard: WebhookUrlGuard;
  webhookKeyring: SecretKeyring;
}

export interface ServiceOptions {
  defaultTaxRate: number;
  /** STAKE_KELLY_MULTIPLIER and STAKE_MAX_PCT; the defaults when absent. */
  stakeAdvice?: StakeAdvice;
  adminToken: string;
  tierLimits: TierLimits;
  edgeTierThresholds?: EdgeTierThresholds;
  /**
   * Called after a commit that changes what a read may answer: a pick became visible, hidden or
   * settled, an analysis was written (the read caches of every instance are dropped).
   */
  onVisibleChange?: () => void;
  /** The value engine's detection rules (config VALUE_ENGINE variables); defaults when absent. */
  detection?: DetectionOptions;
  /** STREAM_TOKEN_MAX_STREAMS; the default when absent. */
  streamTokenMaxStreams?: number;
  /** STREAM_TOKEN_OPENS_PER_MINUTE; the default when absent. */
  streamTokenOpensPerMinute?: number;
  /** The markets the engine reads (ODDS_FEED_MARKETS); all when absent. */
  markets?: readonly Market[];
  /** When finals and closing lines are believed (MATCH_MIN_MINUTES, CLOSING_LINE_MAX_AGE_SECONDS); defaults when absent. */
  settlement?: SettlementOptions;
  /** PICK_CONFIRM_POLLS; 1 when absent. */
  confirmPolls?: number;
  log?: ServiceLog;
  metrics?: ServiceMetrics;
  /** The odds feed's credit budget, made by the runtime with the feed (src/runtime.ts). */
  feedBudget?: FeedCreditBudget | null;
  /** The ledger's signing key, checkpoint interval and witnesses. */
  ledgerLog: LedgerLogOptions;
}

export function createServices({ orm, clock, limiter, bus, webhookUrlGuard, webhookKeyring }: ServiceDeps, options: ServiceOptions): Services {
  const apiKeys = new ApiKeyService(orm, clock);
  const streamTokens = new StreamTokenService(orm, clock);
  const auth = new AuthService(orm, apiKeys, limiter, bus, clock, { adminToken: options.adminToken, tierLimits: options.tierLimits, streamTokenOpensPerMinute: options.streamTokenOpensPerMinute, metrics: options.metrics }, streamTokens);
  const accounts = new AccountService(orm, clock, { keysChanged: (keys) => auth.forgetKeys(keys) });
  const picks = new PickService(orm, clock, options);
  return {
    picks,
    analyses: new MatchAnalysisService(orm, clock, options.onVisibleChange),
    trackRecord: new TrackRecordService(orm, clock),
    ledger: new LedgerService(orm, clock),
    ledgerLog: new LedgerLog(orm, clock, { log: options.log, metrics: options.metrics, ...options.ledgerLog }),
    apiKeys,
    auth,
    streamTokens,
    feed: new PickFeed(orm, bus, clock),
    webhooks: new WebhookService(orm, clock, webhookUrlGuard, webhookKeyring),
    accounts,
    dashboardAuth: new DashboardAuthService(orm, clock, accounts),
    streamSlots: new StreamSlots({ key: MAX_STREAMS_PER_KEY, token: options.streamTokenMaxStreams ?? DEFAULT_STREAM_TOKEN_MAX_STREAMS }),
    valueEngine: new ValueEngine(orm, clock, picks, {
      detection: options.detection ?? { ...DEFAULT_DETECTION_OPTIONS, defaultTaxRate: options.defaultTaxRate },
      settlement: options.settlement ?? DEFAULT_SETTLEMENT_OPTIONS,
      markets: options.markets,
      stakeAdvice: options.stakeAdvice,
      confirmPolls: options.confirmPolls,
      log: options.log,
      metrics: options.metrics,
      onVisibleChange: options.onVisibleChange,
    }),
    feedBudget: options.feedBudget ?? null,
  };
}
