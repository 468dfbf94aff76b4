/**
 * Keeps one of the instance's own GraphQL subscriptions running for as long as the adapter
 * lives: each result goes to `onResult`; when the subscription fails or ends (it fell behind,
 * say) it is opened again after 50 ms, 250 ms, then every 1 s, and `open` decides where it
 * resumes. The first open happens at once and its failure is thrown: a subscription the
 * schema refuses is a programming error that should stop start-up.
 */
import type { ExecutionResult } from 'graphql';

export interface FollowOptions<TData> {
  open(): Promise<AsyncIterableIterator<ExecutionResult<TData>> | ExecutionResult<TData>>;
  /** Throwing ends this subscription; it is opened again. */
  onResult(result: ExecutionResult<TData>): void;
  onError(error: unknown): void;
}

export interface Follower {
  stop(): Promise<void>;
}

const REOPEN_DELAYS_MS = [50, 250, 1_000];

async function openStream<TData>(options: FollowOptions<TData>): Promise<AsyncIterableIterator<ExecutionResult<TData>>> {
  const outcome = await options.open();
  if (!(Symbol.asyncIterator in outcome)) {
    throw new Error(`could not subscribe: ${outcome.errors?.[0]?.message ?? 'no stream'}`);
  }
  return outcome;
}

export async function followSubscription<TData>(options: FollowOptions<TData>): Promise<Follower> {
  let results = await openStream(options);
  let stopped = false;

  const running = (async () => {
    let failures = 0;
    while (!stopped) {
      try {
        for await (const result of results) {
          options.onResult(result);
          failures = 0;
        }
        if (!stopped) throw new Error('the subscription ended');
      } catch (error) {
        if (stopped) return;
        options.onError(error);
      }
      for (;;) {
        await new Promise((resolve) => setTimeout(resolve, REOPEN_DELAYS_MS[Math.min(failures, REOPEN_DELAYS_MS.length - 1)]));
        failures += 1;
        if (stopped) return;
        try {
          results = await openStream(options);
          break;
        } catch (error) {
          options.onError(error);
        }
      }
    }
  })();

  return {
    async stop() {
      stopped = true;
      await results.return?.();
      await running;
    },
  };
}
