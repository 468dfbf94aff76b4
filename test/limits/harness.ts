/**
 * The setup the small-window limiter suites share (anonymous, usage reads, stream-token opens):
 * a usage store that holds nothing (these windows store nothing durable), an injected clock
 * reset after each test, and limiters and silent Redis stand-ins closed after each test.
 */
import { afterEach } from 'vitest';
import type { RateLimiter } from '../../src/services/limits/rate-limiter.js';
import type { MonthlyUsageStore } from '../../src/services/limits/usage-store.js';
import { startSilentServer, type LoopbackServer } from './network.js';

export const noUsage: MonthlyUsageStore = { load: async () => ({ count: 0, refunded: 0 }), flush: async () => undefined };

export interface LimiterHarness {
  /** The injected time in ms; tests move it, and it is back at the start after each test. */
  clock: { ms: number };
  now: () => number;
  /** Closes the limiter after the test. */
  track<T extends RateLimiter>(limiter: T): T;
  /** A loopback server that accepts connections and never answers: Redis not answering. */
  silentRedisUrl(): Promise<string>;
}

export function limiterHarness(startMs: number): LimiterHarness {
  const clock = { ms: startMs };
  const opened: RateLimiter[] = [];
  const servers: LoopbackServer[] = [];
  afterEach(async () => {
    await Promise.all(opened.splice(0).map((limiter) => limiter.close()));
    await Promise.all(servers.splice(0).map((server) => server.close()));
    clock.ms = startMs;
  });
  return {
    clock,
    now: () => clock.ms,
    track(limiter) {
      opened.push(limiter);
      return limiter;
    },
    async silentRedisUrl() {
      const silent = await startSilentServer();
      servers.push(silent);
      return silent.url;
    },
  };
}
