/**
 * Polls the odds feed (docs/VALUE_ENGINE.md, "Polling"): odds every ODDS_POLL_SECONDS and scores
 * every SCORES_POLL_SECONDS, for every configured sport key, by one instance of the deployment at
 * a time. The instance holding the `odds-feed` lease (src/persistence/lease-repository.ts) polls;
 * the others try to take it every half period, and the lease runs 1.5 periods past its last
 * renewal, so when the poller dies another instance polls within 2 periods.
 *
 * A failed request (timeout, non-2xx, not JSON) is retried with backoff (p-retry), a 429 after
 * its Retry-After; a body that is not an array is refused whole; a bad event is skipped and the
 * rest are processed. Nothing here throws out of a timer: the engine never takes the process down.
 */
import { randomUUID } from 'node:crypto';
import pRetry, { AbortError } from 'p-retry';
import { parseOddsEvents, parseScoreEvents, type FeedSkip } from '../../domain/odds-feed.js';
import { releaseLease, tryTakeLease } from '../../persistence/lease-repository.js';
import type { Orm } from '../../persistence/orm.js';
import type { ServiceLog } from '../log.js';
import type { ValueEngine } from './engine.js';
import { FeedError, type FeedResponse, type FeedSource } from './feed-source.js';

export const FEED_LEASE = 'odds-feed';
/** Below this share of the plan's requests left, every poll logs a warning. */
const REQUESTS_WARNING_SHARE = 0.1;
/** Skipped events are logged by reason, at most this many examples per poll. */
const SKIP_EXAMPLES = 5;

export interface FeedPollerOptions {
  sportKeys: readonly string[];
  oddsPollMs: number;
  scoresPollMs: number;
  log?: ServiceLog;
  /** p-retry: attempts after the first, and the first backoff (tests shorten it). */
  retries?: number;
  retryMinTimeoutMs?: number;
  /** Instance name in the lease (default a random id per process). */
  holder?: string;
}

type Kind = 'odds' | 'scores';

export class FeedPoller {
  private readonly holder: string;
  private readonly timers = new Set<NodeJS.Timeout>();
  private readonly stopController = new AbortController();
  private running: Promise<void> | null = null;
  private holding = false;
  /** Set by stop(): no new poll starts, timers are not re-armed. */
  private stopped = false;
  private lastPoll: Record<Kind, number> = { odds: 0, scores: 0 };

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

  start(): void {
    this.options.log?.info({ feed: this.source.description, sports: this.options.sportKeys }, 'value engine: polling the odds feed');
    this.schedule(0);
  }

  /**
   * Stops polling. `release: false` leaves the lease to run out, as a crashed instance does
   * (the takeover test uses it); a normal stop hands the lease over at once.
   */
  async stop(options: { release?: boolean } = {}): Promise<void> {
    this.stopped = true;
    this.stopController.abort();
    for (const timer of this.timers) clearTimeout(timer);
    this.timers.clear();
    await this.running;
    await this.source.close?.().catch(() => undefined);
    if (this.holding && options.release !== false) {
      this.holding = false;
      // A clean stop hands over at once instead of after the lease runs out.
      await releaseLease(this.orm.em.fork(), FEED_LEASE, this.holder).catch(() => undefined);
    }
    this.holding = false;
  }

  /**
   * One turn: take or renew the lease; when held, poll whatever is due. Runs every half odds
   * period, so the lease (1.5 periods) is renewed at least twice before it could lapse.
   */
  async tick(): Promise<void> {
    try {
      this.holding = await tryTakeLease(this.orm.em.fork(), FEED_LEASE, this.holder, Math.round(this.options.oddsPollMs * 1.5));
    } catch (error) {
      this.holding = false;
      this.options.log?.warn({ err: (error as Error).message }, 'value engine: could not reach the database for the feed lease');
      return;
    }
    if (!this.holding) return;
    const now = Date.now();
    if (now - this.lastPoll.odds >= this.options.oddsPollMs) {
      this.lastPoll.odds = now;
      await this.pollAll('odds');
    }
    if (this.stopped) return;
    if (now - this.lastPoll.scores >= this.options.scoresPollMs) {
      this.lastPoll.scores = now;
      await this.pollAll('scores');
    }
  }

  /**
   * Takes the lease and polls now, whatever the timers say: for tests and tools. False when
   * another instance holds the lease (nothing was polled).
   */
  async pollNow(kinds: readonly Kind[] = ['odds', 'scores']): Promise<boolean> {
    this.holding = await tryTakeLease(this.orm.em.fork(), FEED_LEASE, this.holder, Math.round(this.options.oddsPollMs * 1.5));
    if (!this.holding) return false;
    for (const kind of kinds) await this.pollAll(kind);
    return true;
  }

  private schedule(delayMs: number): void {
    if (this.stopped) return;
    const timer = setTimeout(() => {
      this.timers.delete(timer);
      this.running = this.tick()
        .catch((error: unknown) => this.options.log?.error({ err: error }, 'value engine: poll failed'))
        .finally(() => {
          this.running = null;
          this.schedule(Math.max(250, Math.floor(Math.min(this.options.oddsPollMs, this.options.scoresPollMs) / 2)));
        });
    }, delayMs);
    timer.unref();
    this.timers.add(timer);
  }

  private async pollAll(kind: Kind): Promise<void> {
    for (const sportKey of this.options.sportKeys) {
      if (this.stopped) return;
      await this.pollSport(kind, sportKey);
    }
  }

  /** One sport's odds or scores: fetched with retries, parsed, ingested. Logs, never throws. */
  async pollSport(kind: Kind, sportKey: string): Promise<void> {
    let response: FeedResponse;
    try {
      response = await this.fetchWithRetry(kind, sportKey);
    } catch (error) {
      if (this.stopped) return;
      this.options.log?.warn({ sportKey, kind, err: (error as Error).message }, 'value engine: feed request failed after retries; trying again next poll');
      return;
    }
    this.checkQuota(response);
    const refused = (reason: string) =>
      this.options.log?.warn({ sportKey, kind, reason }, 'value engine: feed body refused whole; nothing from it is used');
    try {
      let result;
      if (kind === 'odds') {
        const parsed = parseOddsEvents(response.body);
        if (parsed.error !== undefined) return refused(parsed.error);
        result = await this.engine.ingestOdds(parsed.events, parsed.skipped);
      } else {
        const parsed = parseScoreEvents(response.body);
        if (parsed.error !== undefined) return refused(parsed.error);
        result = await this.engine.ingestScores(parsed.events, parsed.skipped);
      }
      this.logSkipped(sportKey, kind, result.skipped);
      if (result.picksCreated > 0 || result.picksSettled > 0) {
        this.options.log?.info({ sportKey, kind, events: result.events, picksCreated: result.picksCreated, picksSettled: result.picksSettled }, 'value engine: poll processed');
      }
    } catch (error) {
      this.options.log?.error({ sportKey, kind, err: error }, 'value engine: processing a feed answer failed; trying again next poll');
    }
  }

  private fetchWithRetry(kind: Kind, sportKey: string): Promise<FeedResponse> {
    const signal = this.stopController.signal;
    return pRetry(
      async () => {
        try {
          return await (kind === 'odds' ? this.source.odds(sportKey, signal) : this.source.scores(sportKey, signal));
        } catch (error) {
          if (signal.aborted) throw new AbortError('stopped');
          throw error;
        }
      },
      {
        retries: this.options.retries ?? 3,
        minTimeout: this.options.retryMinTimeoutMs ?? 1_000,
        factor: 2,
        maxTimeout: 30_000,
        signal,
        onFailedAttempt: async ({ error, attemptNumber, retriesLeft }) => {
          this.options.log?.warn({ sportKey, kind, attempt: attemptNumber, retriesLeft, err: error.message }, 'value engine: feed request failed');
          // A 429 names its own wait; honour it before p-retry's backoff.
          if (error instanceof FeedError && error.retryAfterMs !== null && retriesLeft > 0) await abortableDelay(error.retryAfterMs, signal);
        },
      },
    );
  }

  private checkQuota(response: FeedResponse): void {
    const { requestsRemaining: remaining, requestsUsed: used } = response;
    if (remaining === null) return;
    const total = remaining + (used ?? 0);
    const low = total > 0 ? remaining / total < REQUESTS_WARNING_SHARE : remaining === 0;
    if (low) this.options.log?.warn({ requestsRemaining: remaining, requestsUsed: used }, 'value engine: the odds feed plan has less than 10 % of its requests left');
  }

  private logSkipped(sportKey: string, kind: Kind, skipped: readonly FeedSkip[]): void {
    if (skipped.length === 0) return;
    this.options.log?.warn({ sportKey, kind, skipped: skipped.length, examples: skipped.slice(0, SKIP_EXAMPLES) }, 'value engine: feed entries skipped');
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
