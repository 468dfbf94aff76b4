/**
 * How often one stream token may open a stream (docs/API.md, "Frontends"): the mint is the
 * request counted against the key, so opening streams with a token counts nothing there, and a
 * token copied out of a page could otherwise reconnect without bound. At most
 * STREAM_TOKEN_OPENS_PER_MINUTE opens in any rolling minute, then 429 stream_token_rate_limited.
 * The counting is rolling-window.ts's; the engines hold the logs (in memory, in Redis in
 * redis-limiter.ts).
 */
import { RollingWindows } from './rolling-window.js';
import type { WindowDecision } from './fixed-window.js';

export const STREAM_TOKEN_OPENS_WINDOW_MS = 60_000;
/** Tokens tracked at once in memory (the least recent are forgotten first). */
const MAX_TRACKED_TOKENS = 100_000;

export type StreamTokenOpenDecision = WindowDecision;

/** In-memory opens per token: exact for one process; also the Redis engine's fallback. */
export class StreamTokenOpens extends RollingWindows {
  constructor() {
    super(STREAM_TOKEN_OPENS_WINDOW_MS, MAX_TRACKED_TOKENS);
  }
}
