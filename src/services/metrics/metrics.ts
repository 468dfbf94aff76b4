/**
 * The service's metrics: one prom-client registry per runtime (tests build several runtimes in
 * one process), its families made from the catalog. Counters and histograms are moved where
 * things happen; the gauges of state (streams open, outbox, subscriptions, ledger, pool, Redis)
 * are read at scrape time from the sources the runtime and the app register.
 */
import { collectDefaultMetrics, Counter, Gauge, Histogram, Registry } from 'prom-client';
import { RequestTally } from './request-tally.js';
import { FEED_BUDGET_FIGURES, METRICS, POOL_STATES, STREAM_SURFACES, type FeedBudgetFigure, type LabelsOf, type MetricFamily, type MetricId, type PoolState, type StreamSurface } from './catalog.js';

type CounterOf<Id extends MetricId> = Counter<LabelsOf<Id>>;
type GaugeOf<Id extends MetricId> = Gauge<LabelsOf<Id>>;
type HistogramOf<Id extends MetricId> = Histogram<LabelsOf<Id>>;

/** A reading of state for the gauges, taken at scrape time. */
export interface StateReading {
  outbox: { pending: number; oldestPendingSeconds: number };
  subscriptions: Record<string, number>;
  ledgerEntries: number;
  /** The latest signed checkpoint; null before the first. */
  ledgerCheckpoint: { treeSize: number; signedAtSeconds: number } | null;
}

/** Where the scrape-time gauges read from; each source is optional (a test runtime has no app). */
export interface MetricSources {
  /** One reading of the database's state, shared by the gauges of a scrape. */
  state?: () => Promise<StateReading>;
  streamsOpen?: () => Record<StreamSurface, number>;
  pool?: () => Record<PoolState, number>;
  /** Whether Redis answers now (a ping); given only with Redis configured. */
  redisConnected?: () => Promise<boolean>;
}

/** Families whose series are started at 0: every label listed, and this many series at most. */
const ZERO_SERIES_MAX = 32;

/** Every label combination of a family whose labels are all listed and few; none otherwise. */
function everySeries(family: MetricFamily): Record<string, string>[] {
  const entries = Object.entries(family.labels);
  if (entries.length === 0 || entries.some(([, values]) => !Array.isArray(values))) return [];
  let combinations: Record<string, string>[] = [{}];
  for (const [name, values] of entries) combinations = combinations.flatMap((partial) => (values as readonly string[]).map((value) => ({ ...partial, [name]: value })));
  return combinations.length <= ZERO_SERIES_MAX ? combinations : [];
}

export class ServiceMetrics {
  readonly registry = new Registry();
  /** The HTTP families, counted in plain numbers (./request-tally.ts). */
  readonly http: RequestTally;
  readonly rateLimitDecisions: CounterOf<'rateLimitDecisions'>;
  readonly webhookDeliveries: CounterOf<'webhookDeliveries'>;
  readonly webhookDeliveryLag: HistogramOf<'webhookDeliveryLag'>;
  readonly feedRequests: CounterOf<'feedRequests'>;
  readonly ledgerWitnessSubmissions: CounterOf<'ledgerWitnessSubmissions'>;
  readonly enginePollDuration: HistogramOf<'enginePollDuration'>;
  readonly engineLastPoll: GaugeOf<'engineLastPoll'>;
  readonly engineCandidates: CounterOf<'engineCandidates'>;
  readonly picksPublished: CounterOf<'picksPublished'>;
  readonly picksSettled: CounterOf<'picksSettled'>;
  private readonly sources: MetricSources = {};
  private reading: Promise<StateReading | null> | null = null;
  private defaultsOn = false;
  private feedCredits: { remaining: GaugeOf<'feedCreditsRemaining'>; used: GaugeOf<'feedCreditsUsed'> } | null = null;
  private feedBudget: { credits: GaugeOf<'feedBudgetCredits'>; next: GaugeOf<'feedNextPoll'>; stopped: GaugeOf<'feedPollsStopped'> } | null = null;

  constructor() {
    this.http = new RequestTally(this.registry);
    this.rateLimitDecisions = this.counter('rateLimitDecisions');
    this.webhookDeliveries = this.counter('webhookDeliveries');
    this.webhookDeliveryLag = this.histogram('webhookDeliveryLag');
    this.feedRequests = this.counter('feedRequests');
    this.enginePollDuration = this.histogram('enginePollDuration');
    this.engineLastPoll = this.gauge('engineLastPoll');
    this.engineCandidates = this.counter('engineCandidates');
    this.picksPublished = this.counter('picksPublished');
    this.picksSettled = this.counter('picksSettled');
    this.ledgerWitnessSubmissions = this.counter('ledgerWitnessSubmissions');
    const sources = this.sources;
    this.gauge('streamsOpen', (gauge) => {
      const open = sources.streamsOpen?.();
      if (open) for (const surface of STREAM_SURFACES) gauge.set({ surface }, open[surface]);
    });
    this.gauge('outboxPending', async (gauge) => {
      const state = await this.state();
      if (state) gauge.set(state.outbox.pending);
    });
    this.gauge('outboxOldestPending', async (gauge) => {
      const state = await this.state();
      if (state) gauge.set(state.outbox.oldestPendingSeconds);
    });
    this.gauge('webhookSubscriptions', async (gauge) => {
      const state = await this.state();
      if (!state) return;
      // Every state has a sample, 0 included: an alert on one stays defined.
      for (const status of METRICS.webhookSubscriptions.labels.state) gauge.set({ state: status }, state.subscriptions[status] ?? 0);
    });
    this.gauge('ledgerEntries', async (gauge) => {
      const state = await this.state();
      if (state) gauge.set(state.ledgerEntries);
    });
    this.gauge('ledgerCheckpointSize', async (gauge) => {
      const state = await this.state();
      if (state) gauge.set(state.ledgerCheckpoint?.treeSize ?? 0);
    });
    this.gauge('ledgerCheckpointSigned', async (gauge) => {
      const state = await this.state();
      if (state) gauge.set(state.ledgerCheckpoint?.signedAtSeconds ?? 0);
    });
    this.gauge('dbPoolConnections', (gauge) => {
      const pool = sources.pool?.();
      if (pool) for (const state of POOL_STATES) gauge.set({ state }, pool[state]);
    });
  }

  /** Adds sources of the scrape-time gauges. */
  readFrom(sources: MetricSources): void {
    // Without Redis the family is left out, rather than a 0 that would read as an outage.
    if (sources.redisConnected && !this.sources.redisConnected) {
      const connected = sources.redisConnected;
      this.gauge('redisConnected', async (gauge) => gauge.set((await connected()) ? 1 : 0));
    }
    Object.assign(this.sources, sources);
  }

  /**
   * The feed's credit headers of its last answer. The two families appear with the first
   * answer that has them: before, there is nothing to tell (a 0 would read as credits run out).
   */
  recordFeedCredits(remaining: number | null, used: number | null): void {
    if (remaining === null && used === null) return;
    this.feedCredits ??= { remaining: this.gauge('feedCreditsRemaining'), used: this.gauge('feedCreditsUsed') };
    if (remaining !== null) this.feedCredits.remaining.set(remaining);
    if (used !== null) this.feedCredits.used.set(used);
  }

  /**
   * The credit budget's figures and plan (docs/VALUE_ENGINE.md, "Feed credits"): the families
   * appear with the first plan; a deployment without a budget has none.
   */
  recordFeedBudget(view: { figures: Record<FeedBudgetFigure, number>; stopped: boolean; nextPolls: readonly { sportKey: string; odds: Date | null; scores: Date | null }[] }): void {
    this.feedBudget ??= { credits: this.gauge('feedBudgetCredits'), next: this.gauge('feedNextPoll'), stopped: this.gauge('feedPollsStopped') };
    for (const figure of FEED_BUDGET_FIGURES) this.feedBudget.credits.set({ figure }, view.figures[figure]);
    this.feedBudget.stopped.set(view.stopped ? 1 : 0);
    this.feedBudget.next.reset();
    for (const next of view.nextPolls) {
      if (next.odds) this.feedBudget.next.set({ sport: next.sportKey, kind: 'odds' }, next.odds.getTime() / 1000);
      if (next.scores) this.feedBudget.next.set({ sport: next.sportKey, kind: 'scores' }, next.scores.getTime() / 1000);
    }
  }

  /** The instance stopped polling: its budget families go (another instance's plan is the deployment's). */
  forgetFeedBudget(): void {
    if (!this.feedBudget) return;
    this.feedBudget.credits.reset();
    this.feedBudget.next.reset();
    this.feedBudget.stopped.reset();
  }

  /**
   * Turns on prom-client's default Node.js metrics (event-loop lag, heap, GC, CPU) for this
   * registry: done by the instance that serves the metrics, once (they install observers).
   */
  collectDefaults(): void {
    if (this.defaultsOn) return;
    this.defaultsOn = true;
    collectDefaultMetrics({ register: this.registry });
  }

  /** The Prometheus text exposition of every family. */
  text(): Promise<string> {
    // A new database reading for each scrape, shared by its gauges.
    this.reading = null;
    return this.registry.metrics();
  }

  get contentType(): string {
    return this.registry.contentType;
  }

  /**
   * The database reading of this scrape: one query shared by its gauges. A failed reading (the
   * database is down) leaves those gauges at their last values; /readyz and the 503s tell the outage.
   */
  private state(): Promise<StateReading | null> {
    const read = this.sources.state;
    if (!read) return Promise.resolve(null);
    this.reading ??= read().catch(() => null);
    return this.reading;
  }

  private counter<Id extends MetricId>(id: Id): CounterOf<Id> {
    const family: MetricFamily = METRICS[id];
    const counter = new Counter({ name: family.name, help: family.help, labelNames: Object.keys(family.labels) as LabelsOf<Id>[], registers: [this.registry] });
    // A small fully listed family starts every series at 0: an alert's increase() then sees the
    // first event too (a series born at 1 shows no increase), and a dashboard shows 0, not nothing.
    for (const labels of everySeries(family)) counter.inc(labels as Partial<Record<LabelsOf<Id>, string>>, 0);
    return counter;
  }

  private histogram<Id extends MetricId>(id: Id): HistogramOf<Id> {
    const family: MetricFamily = METRICS[id];
    return new Histogram({
      name: family.name,
      help: family.help,
      labelNames: Object.keys(family.labels) as LabelsOf<Id>[],
      buckets: [...(family.buckets ?? [])],
      registers: [this.registry],
    });
  }

  private gauge<Id extends MetricId>(id: Id, collect?: (gauge: GaugeOf<Id>) => void | Promise<void>): GaugeOf<Id> {
    const family = METRICS[id];
    return new Gauge({
      name: family.name,
      help: family.help,
      labelNames: Object.keys(family.labels) as LabelsOf<Id>[],
      registers: [this.registry],
      ...(collect ? { collect(this: GaugeOf<Id>) { return collect(this); } } : {}),
    });
  }
}
