/**
 * The composition root: one Runtime per process (or per test app) holding the ORM, the
 * clock, the shared engines (limiter, event bus) and the services, closing them in order.
 */
import type { ServiceLog } from './services/log.js';
import { systemClock, type Clock } from './domain/clock.js';
import type { Config } from './config.js';
import { databaseAnswers, deploymentId, initORM, poolReader, type DatabaseTarget, type Orm } from './persistence/orm.js';
import { readOperationsState } from './persistence/operations-state.js';
import { ServiceMetrics } from './services/metrics/metrics.js';
import { tracingActive } from './server/tracing-switch.js';
import { outsideTraces } from './services/spans.js';
import type { EventBus } from './services/events/event-bus.js';
import { BusChannel } from './services/events/event-bus.js';
import { MemoryEventBus } from './services/events/memory-bus.js';
import { OutboxRelay } from './services/events/outbox-relay.js';
import { RedisEventBus } from './services/events/redis-bus.js';
import { createServices, type Services } from './services/index.js';
import { createRateLimiter } from './services/limits/index.js';
import type { RateLimiter } from './services/limits/rate-limiter.js';
import { UsageStore } from './services/limits/usage-store.js';
import { createKeyring } from './domain/secrets.js';
import { WEBHOOK_TIMEOUT_MS, WEBHOOK_USER_AGENT } from './domain/webhook.js';
import { RetentionJob } from './services/retention.js';
import { WebhookDispatcher } from './services/webhooks/dispatcher.js';
import { WebhookSender } from './services/webhooks/http-sender.js';
import { WebhookUrlGuard, type Resolver } from './services/webhooks/url-guard.js';
import { HttpFeedSource, SimulatedFeedSource, type FeedSource } from './services/value-engine/feed-source.js';
import { FeedPoller, type FeedState } from './services/value-engine/poller.js';
import { FeedCreditBudget } from './services/value-engine/credit-budget.js';
import { SIMULATED_SPORT_KEYS } from './services/value-engine/simulated-feed.js';
import { generateSignerKey, parseSignerKey, type SignerKey } from './domain/signed-note.js';

export interface ReadinessCheck {
  name: string;
  /** A failing optional dependency degrades the service instead of making it unready. */
  optional?: boolean;
  check: () => Promise<boolean>;
}


export interface Runtime {
  config: Config;
  clock: Clock;
  orm: Orm;
  bus: EventBus;
  limiter: RateLimiter;
  relay: OutboxRelay;
  dispatcher: WebhookDispatcher;
  services: Services;
  readiness: ReadinessCheck[];
  /** The odds feed poller; null without a feed (ODDS_FEED_URL or DEMO_FEED). */
  poller: FeedPoller | null;
  /** This instance's metrics (served by src/server/metrics-listener.ts where METRICS_PORT is on). */
  metrics: ServiceMetrics;
  /** What /readyz tells of the feed; null without one. */
  feedState(): FeedState | null;
  /** Subscribes to changes that make cached public bodies stale. */
  onVisibilityChange(listener: () => void): void;
  close(): Promise<void>;
}

export interface RuntimeOptions {
  clock?: Clock;
  /** Overrides the target derived from config (tests use in-memory PGlite or a scratch database). */
  database?: DatabaseTarget;
  adminToken: string;
  log?: ServiceLog;
  /** Apply pending migrations at start. Default: embedded databases only (PostgreSQL runs `npm run migrate`). */
  migrate?: boolean;
  /** Used when the config has no WEBHOOK_SECRET_KEY (embedded mode keeps one under DATA_DIR). */
  webhookSecretKey?: Buffer;
  /** Used when the config has no LEDGER_SIGNING_KEY (embedded mode keeps one under DATA_DIR). */
  ledgerSigningKey?: SignerKey;
  /** Sign checkpoints on a timer (default true; tests that sign by hand with signIfDue() turn it off). */
  startCheckpointer?: boolean;
  /** DNS for webhook URLs (tests inject one; production uses the system resolver). */
  resolveWebhookHost?: Resolver;
  /** Webhook attempt timeout (tests shorten it). */
  webhookTimeoutMs?: number;
  /** Start the webhook dispatcher (default true; tests that drive it by hand turn it off). */
  startDispatcher?: boolean;
  /** Where odds come from, overriding the config's feed (tests hand in a feed; default from config). */
  feedSource?: FeedSource;
  /** p-retry's first backoff for feed requests (tests shorten it). */
  feedRetryMinTimeoutMs?: number;
  /** How long a feed request may take (default 10 s; tests shorten it). */
  feedTimeoutMs?: number;
  /** Start the feed poller's timers (default true; tests that poll by hand with pollNow() turn it off). */
  startPoller?: boolean;
  /** The level of the engine's routine "poll processed" line (default info; src/serve.ts: debug in embedded mode). */
  routineLogLevel?: 'info' | 'debug';
}

/** The poller of the configured feed: HTTP (ODDS_FEED_URL), the simulated demo feed (DEMO_FEED), or none. */
function createFeedPoller(config: Config, orm: Orm, clock: Clock, services: Services, metrics: ServiceMetrics, options: RuntimeOptions): FeedPoller | null {
  const engine = config.valueEngine;
  let source = options.feedSource ?? null;
  if (!source && engine.feed) source = new HttpFeedSource({ url: engine.feed.url, apiKey: engine.feed.apiKey, regions: engine.regions, markets: engine.markets, timeoutMs: options.feedTimeoutMs });
  if (!source && engine.demoFeed) source = new SimulatedFeedSource(clock, engine.sportKeys.length > 0 ? engine.sportKeys : SIMULATED_SPORT_KEYS);
  if (!source) return null;
  const sportKeys = engine.sportKeys.length > 0 ? engine.sportKeys : engine.demoFeed ? SIMULATED_SPORT_KEYS : [];
  return new FeedPoller(orm, services.valueEngine, source, {
    sportKeys,
    oddsPollMs: engine.oddsPollSeconds * 1000,
    scoresPollMs: engine.scoresPollSeconds * 1000,
    log: options.log,
    routineLogLevel: options.routineLogLevel,
    retryMinTimeoutMs: options.feedRetryMinTimeoutMs,
    metrics,
    ...(services.feedBudget ? { budget: services.feedBudget } : {}),
  });
}

/** The credit budget of the HTTP feed (ODDS_FEED_MONTHLY_CREDITS); null without one. */
function createFeedBudget(config: Config, orm: Orm, clock: Clock, metrics: ServiceMetrics, options: RuntimeOptions): FeedCreditBudget | null {
  const engine = config.valueEngine;
  if (!engine.credits || !engine.feed) return null;
  return new FeedCreditBudget(
    orm,
    clock,
    {
      monthlyCredits: engine.credits.monthlyCredits,
      reserveCredits: engine.credits.reserveCredits,
      closingWindowMs: engine.credits.closingWindowSeconds * 1000,
      sportKeys: engine.sportKeys,
      oddsPollMs: engine.oddsPollSeconds * 1000,
      scoresPollMs: engine.scoresPollSeconds * 1000,
      horizonMs: engine.detection.horizonHours * 3_600_000,
      markets: engine.markets.length,
      regions: engine.regions.length,
    },
    { log: options.log, metrics },
  );
}

export function databaseTargetFor(config: Config): DatabaseTarget {
  return config.databaseUrl ? { kind: 'postgres', url: config.databaseUrl } : { kind: 'pglite', dataDir: config.dataDir };
}

/**
 * Idle poll of the outbox relay and the webhook dispatcher on an embedded database (instead of
 * 100 / 250 ms): each poll is a query in this process' PGlite, and at the shorter intervals an
 * idle embedded server spent about 80 ms of CPU a second on them (docs/PERFORMANCE.md). A
 * webhook retry or replay is picked up within this long after it is due.
 */
const EMBEDDED_IDLE_POLL_MS = 1_000;

export async function createRuntime(config: Config, options: RuntimeOptions): Promise<Runtime> {
  const clock = options.clock ?? systemClock;
  const secretKey = config.webhookSecretKey ?? options.webhookSecretKey;
  if (!secretKey) throw new Error('WEBHOOK_SECRET_KEY is required (it is generated only in embedded mode)');
  const target = options.database ?? databaseTargetFor(config);
  // A database in memory lives as long as the process, and so may its ledger's key (tests, benchmarks).
  const ledgerSigner =
    config.ledger.signingKey ??
    options.ledgerSigningKey ??
    (target.kind === 'pglite' && target.dataDir === 'memory://' ? parseSignerKey(generateSignerKey(config.ledger.origin)) : undefined);
  if (!ledgerSigner) throw new Error('LEDGER_SIGNING_KEY is required (it is generated only in embedded mode)');
  // Embedded databases are migrated at start; PostgreSQL deployments run `npm run migrate` first.
  const orm = await initORM(target, { migrate: options.migrate ?? target.kind === 'pglite', traceSql: tracingActive() });
  // An embedded database belongs to this process alone: every event and delivery is written
  // here and kicks the relay and the dispatcher, so their idle polls are only a safety net.
  const singleProcess = target.kind === 'pglite';
  const metrics = new ServiceMetrics();
  let bus: EventBus = new MemoryEventBus();
  // Redis channels and anonymous counters are per deployment: another database's instances on the same Redis stay apart.
  const namespace = config.redisUrl ? await deploymentId(orm) : undefined;
  if (config.redisUrl && namespace) {
    const redisBus = new RedisEventBus(config.redisUrl, { log: options.log, namespace });
    // Start promptly either way: with Redis down the service runs degraded and reconnects.
    if (!(await redisBus.ready())) options.log?.warn({}, 'event bus: Redis not reachable at start; continuing and reconnecting');
    bus = redisBus;
  }
  const limiter = createRateLimiter({
    redisUrl: config.redisUrl,
    usageStore: new UsageStore(orm, clock),
    log: options.log,
    // Production decides on Redis' own clock; tests inject theirs (month rollover, windows).
    now: options.clock ? () => clock.now().getTime() : undefined,
    anonymousLimit: config.anonymousGraphqlLimit,
    namespace,
  });
  const webhookKeyring = createKeyring(secretKey, config.webhookSecretKeysPrevious);
  const webhookUrlGuard = new WebhookUrlGuard({ resolve: options.resolveWebhookHost, hostOverrides: config.webhookHostOverrides, localReceivers: config.localWebhookReceivers });
  // An attempt ends (times out) before its lease does, so a live attempt is never taken over.
  const timeoutMs = options.webhookTimeoutMs ?? Math.min(WEBHOOK_TIMEOUT_MS, config.webhookLeaseMs - 1_000);
  const sender = new WebhookSender({ guard: webhookUrlGuard, timeoutMs, userAgent: WEBHOOK_USER_AGENT });
  const dispatcher = new WebhookDispatcher(orm, clock, sender, webhookKeyring, {
    ...(singleProcess ? { pollIntervalMs: EMBEDDED_IDLE_POLL_MS } : {}),
    retryScheduleMs: config.webhookRetryScheduleMs,
    leaseMs: config.webhookLeaseMs,
    log: options.log,
    metrics,
  });
  const visibilityListeners = new Set<() => void>();
  const feedBudget = createFeedBudget(config, orm, clock, metrics, options);
  const services = createServices(
    { orm, clock, limiter, bus, webhookUrlGuard, webhookKeyring },
    {
      feedBudget,
      defaultTaxRate: config.defaultTaxRate,
      stakeAdvice: config.stakeAdvice,
      adminToken: options.adminToken,
      tierLimits: config.tierLimits,
      detection: config.valueEngine.detection,
      settlement: config.valueEngine.settlement,
      markets: config.valueEngine.markets,
      confirmPolls: config.valueEngine.confirmPolls,
      streamTokenMaxStreams: config.streamTokenMaxStreams,
      streamTokenOpensPerMinute: config.streamTokenOpensPerMinute,
      ledgerLog: { signer: ledgerSigner, checkpointIntervalMs: config.ledger.checkpointSeconds * 1000, witnesses: config.ledger.witnesses },
      log: options.log,
      metrics,
      // Every instance drops its public cache when any instance changes what is visible.
      onVisibleChange: () => {
        // This instance drops its caches at once; the others when the bus message arrives.
        for (const listener of visibilityListeners) listener();
        outsideTraces(() => relay.kick());
        void bus.publish(BusChannel.pickVisibility, '1').catch(() => undefined);
      },
    },
  );
  const relay = new OutboxRelay(orm, bus, {
    ...(singleProcess ? { intervalMs: EMBEDDED_IDLE_POLL_MS } : {}),
    log: options.log,
    // Deliveries are created in the relay's transaction: an event is relayed and fanned out together.
    onBatch: async (em, messages) => void (await services.webhooks.fanOut(em, messages)),
    // Both loops run outside the trace that woke them (src/services/spans.ts).
    onCommitted: () => outsideTraces(() => dispatcher.kick()),
  });
  await services.auth.start();
  // Picks published before the ledger existed get their entry once (a no-op afterwards).
  await services.ledger.appendMissing();
  // The tree over entries appended before it existed, once (a no-op afterwards).
  await services.ledgerLog.catchUp();
  await services.ledgerLog.checkKey(config.ledger.previousKeyId);
  // Days settled before the record statistics existed get their summaries once.
  await services.trackRecord.fillMissingSummaries();
  await services.feed.start();
  relay.start();
  if (options.startDispatcher ?? true) dispatcher.start();
  const retention = new RetentionJob(orm, clock, { log: options.log, oddsHistoryDays: config.valueEngine.oddsHistoryDays });
  retention.start();
  const poller = createFeedPoller(config, orm, clock, services, metrics, options);
  let stateReadFailing = false;
  metrics.readFrom({
    state: async () => {
      const state = await readOperationsState(orm.em.fork()).catch((error: unknown) => {
        // Once per failing stretch: the gauges keep their last values meanwhile.
        if (!stateReadFailing) options.log?.warn({ err: (error as Error).message }, 'metrics: reading the outbox, subscriptions and ledger failed; their gauges keep their last values');
        stateReadFailing = true;
        throw error;
      });
      stateReadFailing = false;
      const oldest = state.oldestPendingAt;
      return {
        outbox: { pending: state.outboxPending, oldestPendingSeconds: oldest ? Math.max(0, (clock.now().getTime() - oldest.getTime()) / 1000) : 0 },
        subscriptions: state.subscriptionsByStatus,
        ledgerEntries: state.ledgerHeadSeq,
        ledgerCheckpoint: state.ledgerCheckpoint && { treeSize: state.ledgerCheckpoint.treeSize, signedAtSeconds: state.ledgerCheckpoint.signedAt.getTime() / 1000 },
      };
    },
    ...(target.kind === 'postgres' ? { pool: await poolReader(orm) } : {}),
    // Asked at each scrape: the last decision's engine would say nothing while no key is used.
    ...(config.redisUrl ? { redisConnected: () => limiter.ping() } : {}),
  });
  if (options.startPoller ?? true) poller?.start();
  if (options.startCheckpointer ?? true) services.ledgerLog.start();
  const unsubscribeVisibility = await bus.subscribe(BusChannel.pickVisibility, () => {
    for (const listener of visibilityListeners) listener();
  });
  const readiness: ReadinessCheck[] = [{ name: 'database', check: () => databaseAnswers(orm) }];
  if (config.redisUrl) readiness.push({ name: 'redis', optional: true, check: () => limiter.ping() });
  return {
    config,
    clock,
    orm,
    bus,
    limiter,
    relay,
    dispatcher,
    services,
    readiness,
    onVisibilityChange: (listener) => void visibilityListeners.add(listener),
    poller,
    metrics,
    feedState: () => poller?.state() ?? null,
    async close() {
      await poller?.stop();
      await services.ledgerLog.close();
      await relay.stop();
      // In-flight attempts complete (and release their lease) before the database closes.
      await dispatcher.stop();
      await retention.stop();
      await sender.close();
      await services.feed.close();
      await unsubscribeVisibility();
      await services.auth.close();
      await limiter.close();
      await bus.close();
      await orm.close();
    },
  };
}
