/**
 * Rolling-window logs: at most `limit` admitted events per subject in any `windowMs` ending now,
 * exactly (a log of the admitted events' times, not counters of aligned windows, which admit up
 * to twice the limit across a window's edge). For small limits where "per rolling minute" is the
 * contract: the opens of one stream token (STREAM_TOKEN_OPENS_PER_MINUTE, at most 600). The
 * engines hold the logs (in memory here; in Redis a sorted set per subject, lua/rolling-window.lua).
 */
import { LRUCache } from 'lru-cache';
import type { WindowDecision } from './fixed-window.js';

/**
 * The decision for an event at `nowMs`, given the admitted times still in the window (oldest
 * first) and how many there are. Refused: retry once the oldest leaves the window.
 */
export function rollingWindowDecision(countInWindow: number, oldestMs: number | undefined, limit: number, windowMs: number, nowMs: number): WindowDecision {
  const allowed = countInWindow < limit;
  const retryAfterMs = allowed || oldestMs === undefined ? windowMs : oldestMs + windowMs - nowMs;
  return {
    allowed,
    limit,
    remaining: Math.max(0, limit - countInWindow - (allowed ? 1 : 0)),
    retryAfterSeconds: Math.max(1, Math.ceil(retryAfterMs / 1000)),
  };
}

/** In-memory rolling windows: exact for one process; also the Redis engine's fallback. */
export class RollingWindows {
  private readonly logs: LRUCache<string, number[]>;

  /** `maxTracked`: subjects tracked at once (the least recent are forgotten first). */
  constructor(
    private readonly windowMs: number,
    maxTracked: number,
  ) {
    this.logs = new LRUCache({ max: maxTracked });
  }

  consume(subject: string, limit: number, nowMs: number): WindowDecision {
    let log = this.logs.get(subject);
    if (!log) {
      log = [];
      this.logs.set(subject, log);
    }
    const cutoff = nowMs - this.windowMs;
    let expired = 0;
    while (expired < log.length && log[expired]! <= cutoff) expired += 1;
    if (expired > 0) log.splice(0, expired);
    const decision = rollingWindowDecision(log.length, log[0], limit, this.windowMs, nowMs);
    // Refused events are not logged: a client retrying too early does not push its own retry back.
    if (decision.allowed) log.push(nowMs);
    return decision;
  }

  /** Drops logs whose every event has left the window. */
  evictEnded(nowMs: number): void {
    const cutoff = nowMs - this.windowMs;
    for (const [subject, log] of this.logs.entries()) if (log.length === 0 || log[log.length - 1]! <= cutoff) this.logs.delete(subject);
  }

  clear(): void {
    this.logs.clear();
  }
}
