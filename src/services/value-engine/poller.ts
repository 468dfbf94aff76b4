/**
 * Polls the odds feed (docs/VALUE_ENGINE.md, "How a poll runs"): odds every ODDS_POLL_SECONDS and
 * scores every SCORES_POLL_SECONDS, for every configured sport key, or with a credit budget when
 * its plan says ("Feed credits", ./credit-budget.ts), by one instance of the deployment at a time.
 * The instance holding the `odds-feed` lease (src/persistence/lease-repository.ts) polls;
 * the others try to take it every half period, and the lease runs 1.5 periods past its last
 * renewal, so when the poller dies another instance polls within 2 periods.
 *
 * Each sport is polled on its own: its requests (and their retries) run concurrently with the
 * other sports', and a turn never waits for another sport's, so one sport's failing feed delays
 * no other sport (nor the lease's renewal). What the answers hold is ingested one answer at a
 * time, in the order the answers arrive: the embedded database is a single connection.
 *
 * A failed request (timeout, network, 5xx, not JSON) is retried with backoff (p-retry), a 429
 * after its Retry-After; 401, 403 and 422 are not retried (a bad key, an empty plan or a refused
 * query: the same request fails again). Failures are logged as warnings with the answer's status,
 * the feed's own message and the quota headers. A body that is not an array is refused whole; a
 * bad event is skipped and the rest are processed. Nothing here throws out of a timer: the engine
 * never takes the process down.
 */
import { randomUUID } from 'node:crypto';
import pRetry, { AbortError } from 'p-retry';
import type { PlannedPoll } from '../../domain/feed-credits.js';
import { parseOddsEvents, parseScheduledEvents, parseScoreEvents, type FeedSkip } from '../../domain/odds-feed.js';
import { releaseLease, tryTakeLease } from '../../persistence/lease-repository.js';
import type { Orm } from '../../persistence/orm.js';
import type { ServiceLog } from '../log.js';
import { annotateActiveSpan, inSpan } from '../spans.js';
import type { ServiceMetrics } from '../metrics/metrics.js';
import type { FeedBudgetView, FeedCreditBudget } from './credit-budget.js';
import type { ValueEngine } from './engine.js';
import { FeedError, type FeedResponse, type FeedSource } from './feed-source.js';

export const FEED_LEASE = 'odds-feed';
/** Below this share of the plan's requests left, every poll logs a warning. */
const REQUESTS_WARNING_SHARE = 0.1;
/** Skipped events are logged by reason, at most this many examples per poll. */
const SKIP_EXAMPLES = 5;
/**
 * Answers a retry cannot change: 401 (v4: a bad key, or a plan with no requests left), 403 and
 * 422 (a query the feed refuses). The next poll asks again.
 */
const NOT_RETRIED_STATUSES: ReadonlySet<number> = new Set([401, 403, 422]);

export interface FeedPollerOptions {
  sportKeys: readonly string[];
  oddsPollMs: number;
  scoresPollMs: number;
  log?: ServiceLog;
  /**
   * The level of the routine "poll processed" line (default info): debug in embedded mode, a
   * developer's machine, where a line a minute per sport would bury the start banner (src/serve.ts).
   */
  routineLogLevel?: 'info' | 'debug';
  /** p-retry: attempts after the first, and the first backoff (tests shorten it). */
  retries?: number;
  retryMinTimeoutMs?: number;
  /** Instance name in the lease (default a random id per process). */
  holder?: string;
  metrics?: ServiceMetrics;
  /**
   * The monthly credit budget (ODDS_FEED_MONTHLY_CREDITS): polls follow its plan instead of the
   * fixed periods (docs/VALUE_ENGINE.md, "Feed credits").
   */
  budget?: FeedCreditBudget;
}

/** What /readyz tells of the feed: information, never a reason to be unready. */
export interface FeedState {
  /** Seconds since this instance last completed an odds poll; null before its first. */
  lastPollAgeSeconds: number | null;
  /**
   * The newest failure among the sports and kinds whose last poll failed (`odds soccer_epl: HTTP
   * 401`), null when none did. A category, never the feed's own text: /readyz is public.
   */
  lastError: string | null;
  /** Whether this instance holds the feed lease (only one instance of a deployment polls). */
  polling: boolean;
  /** With a credit budget: why polls are stopped for the month (the feed reported no credits left), else null. */
  creditsStopped?: string | null;
}

type Kind = 'odds' | 'scores';
/** How a poll ended: its answer ingested; no usable answer and none charged; or otherwise failed. */
type PollOutcome = 'ingested' | 'unanswered' | 'failed';
const KINDS: readonly Kind[] = ['odds', 'scores'];

/** The log fields of a failed request: the error's message and what the feed's answer told. */
function failureFields(error: unknown): Record<string, unknown> {
  if (error instanceof FeedError) return { err: error.message, ...error.logFields() };
  return { err: error instanceof Error ? error.message : String(error) };
}

/** With a credit budget, an answer saying the key has no credits left is not retried either (it stops the polls). */
function isNotRetried(error: unknown, budgeted: boolean): error is FeedError {
  return error instanceof FeedError && ((error.status !== null && NOT_RETRIED_STATUSES.has(error.status)) || (budgeted && error.creditsExhausted));
}
/** A failed read of a sport's events list is tried again this much later. */
const SCHEDULE_RETRY_MS = 5 * 60_000;

export class FeedPoller {
  private readonly holder: string;
  private readonly timers = new Set<NodeJS.Timeout>();
  private readonly stopController = new AbortController();
  private running: Promise<void> | null = null;
  private holding = false;
  /** Set by stop(): no new poll starts, timers are not re-armed. */
  private stopped = false;
  /** When each sport's odds / scores were last polled by the timers, by `kind:sportKey`. */
  private readonly lastPoll = new Map<string, number>();
  /** The timers' turn of each sport still under way (fetching, retrying or ingesting), by sport key. */
  private readonly turns = new Map<string, Promise<void>>();
  /** Every poll under way (the timers' and pollNow's): stop() waits for them. */
  private readonly inFlight = new Set<Promise<void>>();
  /** The last ingestion queued: each answer's ingestion starts after the one before it ends. */
  private ingestTail: Promise<void> = Promise.resolve();
  private lastOddsPollAt: number | null = null;
  /** Each sport and kind whose last poll failed, by `kind sportKey`: when, and why in a word. */
  private readonly failing = new Map<string, { at: number; why: string }>();

  constructor(
    private readonly orm: Orm,
    private readonly engine: ValueEngine,
    private readonly source: FeedSource,
    private readonly options: FeedPollerOptions,
  ) {
    this.holder = options.holder ?? randomUUID();
  }

  /** Whether this instance holds the feed lease (operations, tests). */
  isPolling(): boolean {
    return this.holding;
  }

  /** The feed as /readyz reports it. */
  state(): FeedState {
    return {
      lastPollAgeSeconds: this.lastOddsPollAt === null ? null : Math.max(0, Math.round((Date.now() - this.lastOddsPollAt) / 1000)),
      lastError: this.newestFailure(),
      polling: this.holding,
      // The polling instance's plan is the deployment's; the others say nothing of it.
      ...(this.options.budget && this.holding ? { creditsStopped: this.options.budget.latest()?.stopped?.reason ?? null } : {}),
    };
  }

  start(): void {
    this.options.log?.info({ feed: this.source.description, sports: this.options.sportKeys }, 'value engine: polling the odds feed');
    this.schedule(0);
  }

  /**
   * Stops polling: every request under way is aborted, and the polls under way end before this
   * resolves. `release: false` leaves the lease to run out, as a crashed instance does (the
   * takeover test uses it); a normal stop hands the lease over at once.
   */
  async stop(options: { release?: boolean } = {}): Promise<void> {
    this.stopped = true;
    this.stopController.abort();
    for (const timer of this.timers) clearTimeout(timer);
    this.timers.clear();
    await this.running;
    await Promise.all([...this.inFlight]);
    await this.ingestTail;
    await this.source.close?.().catch(() => undefined);
    if (this.holding && options.release !== false) {
      this.holding = false;
      // A clean stop hands over at once instead of after the lease runs out.
      await releaseLease(this.orm.em.fork(), FEED_LEASE, this.holder).catch(() => undefined);
    }
    this.holding = false;
  }

  /**
   * One turn: take or renew the lease; when held, start a turn for every sport with something
   * due whose previous turn has ended. Runs every half odds period, so the lease (1.5 periods)
   * is renewed at least twice before it could lapse; it does not wait for the sports' turns.
   */
  async tick(): Promise<void> {
    try {
      this.holding = await tryTakeLease(this.orm.em.fork(), FEED_LEASE, this.holder, Math.round(this.options.oddsPollMs * 1.5));
    } catch (error) {
      this.holding = false;
      this.options.log?.warn({ err: (error as Error).message }, 'value engine: could not reach the database for the feed lease');
      return;
    }
    // An instance that lost the lease no longer shows a plan it does not follow.
    if (!this.holding) this.options.budget?.forgetPlan();
    if (!this.holding || this.stopped) return;
    if (this.options.budget) return this.plannedTick(this.options.budget);
    const now = Date.now();
    for (const sportKey of this.options.sportKeys) {
      // A sport still fetching, retrying or ingesting is left to finish; it is due again after.
      if (this.turns.has(sportKey)) continue;
      const due = KINDS.filter((kind) => now - (this.lastPoll.get(`${kind}:${sportKey}`) ?? 0) >= this.periodMs(kind));
      if (due.length === 0) continue;
      for (const kind of due) this.lastPoll.set(`${kind}:${sportKey}`, now);
      const turn = this.track(this.sportTurn(sportKey, due)).finally(() => this.turns.delete(sportKey));
      this.turns.set(sportKey, turn);
    }
  }

  /**
   * With a credit budget: reads the events lists that are due (free), makes the plan, and starts
   * the turn of every sport whose planned odds or scores poll is due and whose last turn ended.
   */
  private async plannedTick(budget: FeedCreditBudget): Promise<void> {
    const now = budget.now();
    // Also while stopped: the free list's headers tell when the feed's own period gave credits back.
    await this.readSchedules(budget, budget.schedulesDue(now));
    let planned;
    try {
      ({ plan: planned } = await budget.plan(now, { record: true }));
    } catch (error) {
      budget.forgetPlan();
      this.options.log?.warn({ err: (error as Error).message }, 'value engine: could not plan the feed polls (database); trying again next turn');
      return;
    }
    for (const sportKey of this.options.sportKeys) {
      if (this.turns.has(sportKey) || this.stopped) continue;
      const next = planned.next.get(sportKey);
      const due = [next?.odds, next?.scores].filter((poll): poll is PlannedPoll => poll != null && poll.at <= now);
      if (due.length === 0) continue;
      const turn = this.track(this.plannedTurn(budget, sportKey, due, now)).finally(() => this.turns.delete(sportKey));
      this.turns.set(sportKey, turn);
    }
  }

  /**
   * A sport's due polls. Each counts as made from its start (a slow one is not planned again
   * meanwhile). A closing poll the feed did not answer (no answer, a 5xx or 429 after every
   * retry) no longer counts: the next turn plans it again within its window. Any other failure
   * keeps the plan's spacing (a refused key, a charged answer that could not be used).
   */
  private async plannedTurn(budget: FeedCreditBudget, sportKey: string, polls: readonly PlannedPoll[], now: number): Promise<void> {
    for (const poll of polls) {
      if (this.stopped) return;
      const before = budget.polled(poll.kind, sportKey, now);
      const outcome = await this.tracedPoll(poll.kind, sportKey, poll);
      if (outcome === 'unanswered' && poll.purpose === 'closing' && !this.stopped) budget.unpolled(poll.kind, sportKey, before);
    }
  }

  /** Each sport's events list (free of credits): the kickoffs the plan follows. A failure keeps what was known. */
  private async readSchedules(budget: FeedCreditBudget, sportKeys: readonly string[]): Promise<void> {
    const events = this.source.events?.bind(this.source);
    if (!events || sportKeys.length === 0) return;
    const signal = this.stopController.signal;
    await Promise.all(
      sportKeys.map(async (sportKey) => {
        try {
          const response = await events(sportKey, signal);
          this.countRequest('events', '200', response);
          await budget.charge({ kind: 'events', sportKey, planned: null }, { ok: true, ...response, creditsExhausted: false });
          const parsed = parseScheduledEvents(response.body);
          if (parsed.error !== undefined) throw new Error(`body refused: ${parsed.error}`);
          budget.setSchedule(sportKey, parsed.events, budget.now());
          this.logSkipped(sportKey, 'events', parsed.skipped);
        } catch (error) {
          if (signal.aborted) return;
          if (error instanceof FeedError) {
            this.countRequest('events', error.statusLabel, error);
            // Free either way; the headers still tell what the key has.
            await budget.charge({ kind: 'events', sportKey, planned: null }, { ok: false, requestsUsed: error.requestsUsed, requestsRemaining: error.requestsRemaining, creditsExhausted: false });
          }
          budget.scheduleReadFailed(sportKey, budget.now() + SCHEDULE_RETRY_MS);
          this.options.log?.warn({ sportKey, kind: 'events', ...failureFields(error) }, 'value engine: could not read the events list; the plan keeps the kickoffs it knew');
        }
      }),
    );
  }

  /**
   * With a credit budget, before the start banner: every sport's events list (free of credits)
   * and the first plan, whatever the lease. Null without a budget or when planning fails.
   */
  async prepareBudget(): Promise<FeedBudgetView | null> {
    const budget = this.options.budget;
    if (!budget) return null;
    await this.readSchedules(budget, budget.schedulesDue(budget.now()));
    try {
      return (await budget.plan()).view;
    } catch (error) {
      this.options.log?.warn({ err: (error as Error).message }, 'value engine: could not plan the feed polls (database)');
      return null;
    }
  }

  /**
   * With a credit budget, for tests and tools: one turn of the poller (lease, schedules, plan,
   * the polls due at the service clock's time), resolving when every poll it started is ingested.
   */
  async runDue(): Promise<void> {
    await this.tick();
    await Promise.all([...this.turns.values()]);
    await this.ingestTail;
  }

  /**
   * Takes the lease and polls now, whatever the timers say: for tests and tools. Each kind is
   * polled for every sport at once, odds before scores; resolves when every answer is ingested.
   * False when another instance holds the lease (nothing was polled).
   */
  async pollNow(kinds: readonly Kind[] = ['odds', 'scores']): Promise<boolean> {
    this.holding = await tryTakeLease(this.orm.em.fork(), FEED_LEASE, this.holder, Math.round(this.options.oddsPollMs * 1.5));
    if (!this.holding) return false;
    for (const kind of kinds) await this.pollAll(kind);
    return true;
  }

  private periodMs(kind: Kind): number {
    return kind === 'odds' ? this.options.oddsPollMs : this.options.scoresPollMs;
  }

  private schedule(delayMs: number): void {
    if (this.stopped) return;
    const timer = setTimeout(() => {
      this.timers.delete(timer);
      this.running = this.tick()
        .catch((error: unknown) => this.options.log?.error({ err: error }, 'value engine: poll failed'))
        .finally(() => {
          this.running = null;
          this.schedule(this.nextTurnDelayMs());
        });
    }, delayMs);
    timer.unref();
    this.timers.add(timer);
  }

  /**
   * Half the shorter period (the lease is renewed at least twice before it could lapse); with a
   * credit budget, sooner when the plan's next poll comes before that, so a closing poll shorter
   * than a half period is made in its window.
   */
  private nextTurnDelayMs(): number {
    const halfPeriod = Math.max(250, Math.floor(Math.min(this.options.oddsPollMs, this.options.scoresPollMs) / 2));
    const budget = this.options.budget;
    // A sport still in its turn is left out: its next poll waits for the turn's end anyway.
    const next = this.holding ? budget?.nextPlannedAt((sportKey) => !this.turns.has(sportKey)) : null;
    if (!budget || next == null) return halfPeriod;
    const wait = next - budget.now();
    // Already due (the plan moved a poll to now): the next turn; never a tight loop.
    return wait <= 0 ? Math.min(halfPeriod, 1_000) : Math.min(halfPeriod, Math.max(250, wait));
  }

  /** Keeps `poll` in the set stop() waits for until it settles; it never rejects. */
  private track(poll: Promise<unknown>): Promise<void> {
    const tracked = poll.then(
      () => undefined,
      (error: unknown) => this.options.log?.error({ err: error }, 'value engine: poll failed'),
    );
    this.inFlight.add(tracked);
    void tracked.finally(() => this.inFlight.delete(tracked));
    return tracked;
  }

  /** One sport's due kinds, odds before scores. */
  private async sportTurn(sportKey: string, kinds: readonly Kind[]): Promise<void> {
    for (const kind of kinds) {
      if (this.stopped) return;
      await this.tracedPoll(kind, sportKey);
    }
  }

  /** Every sport's odds or scores, fetched concurrently; resolves when all are ingested. */
  private async pollAll(kind: Kind): Promise<void> {
    if (this.stopped) return;
    await Promise.all(this.options.sportKeys.map((sportKey) => this.track(this.tracedPoll(kind, sportKey))));
  }

  /**
   * One poll as a trace of its own (docs/OPERATIONS.md, "Traces"): the feed request, and the
   * detection and writes of its answer, are under its span.
   */
  private tracedPoll(kind: Kind, sportKey: string, planned: PlannedPoll | null = null): Promise<PollOutcome> {
    const attributes = { 'engine.sport_key': sportKey, 'engine.feed_kind': kind, ...(planned ? { 'engine.poll_purpose': planned.purpose } : {}) };
    return inSpan('engine.poll', attributes, () => this.pollSport(kind, sportKey, planned), { root: true });
  }

  /**
   * One sport's odds or scores: fetched with retries, then parsed and ingested after the
   * ingestions queued before it. Logs, never throws.
   */
  async pollSport(kind: Kind, sportKey: string, planned: PlannedPoll | null = null): Promise<PollOutcome> {
    if (this.stopped) return 'failed';
    const startedAt = performance.now();
    let response: FeedResponse;
    try {
      response = await this.fetchWithRetry(kind, sportKey, planned);
    } catch (error) {
      if (this.stopped) return 'failed';
      this.failed(kind, sportKey, error instanceof FeedError ? (error.statusLabel === 'error' ? error.kind : `HTTP ${error.status}`) : 'request failed');
      if (isNotRetried(error, this.options.budget !== undefined)) {
        const quotaExhausted = (error.status === 401 && error.requestsRemaining === 0) || error.creditsExhausted;
        this.options.log?.warn(
          { sportKey, kind, ...failureFields(error), ...(quotaExhausted ? { quotaExhausted } : {}) },
          quotaExhausted
            ? `value engine: the odds feed plan has no requests left (HTTP ${error.status}); not retried; trying again next poll`
            : `value engine: the odds feed refused the request (HTTP ${error.status ?? error.kind}); not retried; trying again next poll`,
        );
        return 'failed';
      }
      this.options.log?.warn({ sportKey, kind, ...failureFields(error) }, 'value engine: feed request failed after retries; trying again next poll');
      // No usable answer and none charged (no answer, a 5xx, a 429): another try may succeed.
      return error instanceof FeedError && !error.unusableSuccess ? 'unanswered' : 'failed';
    }
    const fetchMs = performance.now() - startedAt;
    // The poll's own time: its request and its ingestion, not its wait behind other sports' ingestions.
    let ingestMs = 0;
    const ingested = await this.queueIngest(() => {
      const ingestStartedAt = performance.now();
      return inSpan('engine.ingest', { 'engine.sport_key': sportKey, 'engine.feed_kind': kind }, () => this.ingest(kind, sportKey, response)).finally(() => {
        ingestMs = performance.now() - ingestStartedAt;
      });
    });
    if (!ingested) return 'failed';
    if (kind === 'odds') {
      const metrics = this.options.metrics;
      metrics?.enginePollDuration.observe({ sport: sportKey }, (fetchMs + ingestMs) / 1000);
      metrics?.engineLastPoll.set({ sport: sportKey }, Date.now() / 1000);
      this.lastOddsPollAt = Date.now();
    }
    this.failing.delete(`${kind} ${sportKey}`);
    return 'ingested';
  }

  private failed(kind: Kind, sportKey: string, why: string): void {
    this.failing.set(`${kind} ${sportKey}`, { at: Date.now(), why });
  }

  private newestFailure(): string | null {
    let newest: { key: string; at: number; why: string } | null = null;
    for (const [key, failure] of this.failing) if (!newest || failure.at >= newest.at) newest = { key, ...failure };
    return newest && `${newest.key}: ${newest.why}`;
  }

  /** Runs `ingest` once every ingestion queued before it has ended: never two at once. */
  private queueIngest<T>(ingest: () => Promise<T>): Promise<T> {
    const turn = this.ingestTail.then(ingest);
    this.ingestTail = turn.then(
      () => undefined,
      () => undefined,
    );
    return turn;
  }

  /** One answer into the engine; true when it was. Logs, never throws. */
  private async ingest(kind: Kind, sportKey: string, response: FeedResponse): Promise<boolean> {
    this.checkQuota(response);
    const refused = (reason: string) => {
      this.failed(kind, sportKey, 'body refused');
      this.options.log?.warn({ sportKey, kind, reason }, 'value engine: feed body refused whole; nothing from it is used');
      return false;
    };
    try {
      let result;
      if (kind === 'odds') {
        const parsed = parseOddsEvents(response.body);
        if (parsed.error !== undefined) return refused(parsed.error);
        // The answer is the whole feed of the sport key: a pick whose event left it is gone.
        result = await this.engine.ingestOdds(parsed.events, parsed.skipped, { sportKeys: [sportKey] });
      } else {
        const parsed = parseScoreEvents(response.body);
        if (parsed.error !== undefined) return refused(parsed.error);
        result = await this.engine.ingestScores(parsed.events, parsed.skipped);
      }
      this.logSkipped(sportKey, kind, result.skipped);
      annotateActiveSpan({ 'engine.events': result.events, 'engine.picks_created': result.picksCreated, 'engine.picks_settled': result.picksSettled });
      if (result.picksCreated > 0 || result.picksSettled > 0) {
        const fields = { sportKey, kind, events: result.events, picksCreated: result.picksCreated, picksSettled: result.picksSettled };
        if (this.options.routineLogLevel === 'debug') this.options.log?.debug?.(fields, 'value engine: poll processed');
        else this.options.log?.info(fields, 'value engine: poll processed');
      }
      return true;
    } catch (error) {
      this.failed(kind, sportKey, 'processing failed');
      this.options.log?.error({ sportKey, kind, err: error }, 'value engine: processing a feed answer failed; trying again next poll');
      return false;
    }
  }

  private fetchWithRetry(kind: Kind, sportKey: string, planned: PlannedPoll | null): Promise<FeedResponse> {
    const signal = this.stopController.signal;
    const budget = this.options.budget;
    return pRetry(
      async () => {
        let response: FeedResponse;
        try {
          response = await (kind === 'odds' ? this.source.odds(sportKey, signal) : this.source.scores(sportKey, signal));
        } catch (error) {
          if (signal.aborted) throw new AbortError('stopped');
          this.countRequest(kind, error instanceof FeedError ? error.statusLabel : 'error', error instanceof FeedError ? error : null);
          if (budget && error instanceof FeedError) {
            // A 2xx whose body could not be used was still charged by the feed.
            await budget.charge({ kind, sportKey, planned }, { ok: error.unusableSuccess, requestsUsed: error.requestsUsed, requestsRemaining: error.requestsRemaining, creditsExhausted: error.creditsExhausted });
          }
          // A bad key, an empty plan or a refused query: retrying asks the same and gets the same.
          if (isNotRetried(error, budget !== undefined)) throw new AbortError(error);
          throw error;
        }
        this.countRequest(kind, '200', response);
        await budget?.charge({ kind, sportKey, planned }, { ok: true, ...response, creditsExhausted: false });
        return response;
      },
      {
        retries: this.options.retries ?? 3,
        minTimeout: this.options.retryMinTimeoutMs ?? 1_000,
        factor: 2,
        maxTimeout: 30_000,
        signal,
        onFailedAttempt: async ({ error, attemptNumber, retriesLeft }) => {
          this.options.log?.warn({ sportKey, kind, attempt: attemptNumber, retriesLeft, ...failureFields(error) }, 'value engine: feed request failed');
          // A 429 names its own wait; honour it before p-retry's backoff.
          if (error instanceof FeedError && error.retryAfterMs !== null && retriesLeft > 0) await abortableDelay(error.retryAfterMs, signal);
        },
      },
    );
  }

  /** One request to the feed, for the metrics: its status and the credits its answer reported. */
  private countRequest(kind: Kind | 'events', status: string, answer: Pick<FeedResponse, 'requestsRemaining' | 'requestsUsed'> | null): void {
    const metrics = this.options.metrics;
    if (!metrics || this.source.counted === false) return;
    metrics.feedRequests.inc({ endpoint: kind, status });
    if (answer) metrics.recordFeedCredits(answer.requestsRemaining, answer.requestsUsed);
  }

  private checkQuota(response: FeedResponse): void {
    const { requestsRemaining: remaining, requestsUsed: used } = response;
    if (remaining === null) return;
    const total = remaining + (used ?? 0);
    const low = total > 0 ? remaining / total < REQUESTS_WARNING_SHARE : remaining === 0;
    if (low) this.options.log?.warn({ requestsRemaining: remaining, requestsUsed: used }, 'value engine: the odds feed plan has less than 10 % of its requests left');
  }

  /** One line per poll for the entries skipped, but those the engine logs once on its own (a refused final) are left out. */
  private logSkipped(sportKey: string, kind: Kind | 'events', skipped: readonly FeedSkip[]): void {
    const unlogged = skipped.filter((skip) => !skip.loggedOnce);
    if (unlogged.length === 0) return;
    this.options.log?.warn({ sportKey, kind, skipped: unlogged.length, examples: unlogged.slice(0, SKIP_EXAMPLES) }, 'value engine: feed entries skipped');
  }
}

function abortableDelay(ms: number, signal: AbortSignal): Promise<void> {
  return new Promise((resolve) => {
    if (signal.aborted) return resolve();
    const timer = setTimeout(done, ms);
    timer.unref();
    function done() {
      clearTimeout(timer);
      signal.removeEventListener('abort', done);
      resolve();
    }
    signal.addEventListener('abort', done, { once: true });
  });
}
