import type { ExecutionResult } from 'graphql';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { FANOUT_SLICE, HEARTBEAT, StreamBroadcast, type BroadcastMember, type StreamFrame } from '../../adapters/stream/broadcast.js';

/** A subscription we feed by hand: push() yields a result, fail() throws from the iterator. */
function source() {
  const queue: ExecutionResult[] = [];
  let wake: (() => void) | null = null;
  let failure: Error | null = null;
  let ended = false;
  const iterator: AsyncIterableIterator<ExecutionResult> = {
    async next() {
      for (;;) {
        if (failure) {
          const error = failure;
          failure = null;
          ended = true;
          throw error;
        }
        if (queue.length > 0) return { value: queue.shift()!, done: false };
        if (ended) return { value: undefined, done: true };
        await new Promise<void>((resolve) => (wake = resolve));
      }
    },
    async return() {
      ended = true;
      wake?.();
      return { value: undefined, done: true };
    },
    [Symbol.asyncIterator]() {
      return iterator;
    },
  };
  return {
    iterator,
    push(...seqs: number[]) {
      for (const seq of seqs) queue.push({ data: { pickPublished: { seq } } });
      wake?.();
    },
    fail(error: Error) {
      failure = error;
      wake?.();
    },
    get ended() {
      return ended;
    },
  };
}

const render = (result: ExecutionResult): StreamFrame | null => {
  const seq = (result.data?.pickPublished as { seq: number } | undefined)?.seq;
  return seq === undefined ? null : { seq, text: `<${seq}>` };
};

function recorder(): BroadcastMember & { chunks: string[]; text(): string } {
  const chunks: string[] = [];
  return { chunks, write: (chunk) => void chunks.push(chunk), text: () => chunks.join('') };
}

const settle = async (turns = 5) => {
  for (let i = 0; i < turns; i += 1) await new Promise((resolve) => setImmediate(resolve));
};

let open: StreamBroadcast[] = [];
afterEach(async () => {
  for (const broadcast of open) await broadcast.close();
  open = [];
});

function broadcastOver(sources: ReturnType<typeof source>[], options: { heartbeatMs?: number; errors?: unknown[]; subscribed?: (string | null)[] } = {}) {
  let next = 0;
  const broadcast = new StreamBroadcast({
    subscribe: async (afterSequence) => {
      options.subscribed?.push(afterSequence);
      const s = sources[next];
      next += 1;
      return s ? s.iterator : { errors: [{ message: 'refused' } as never] };
    },
    render,
    heartbeatMs: options.heartbeatMs ?? 60_000,
    onError: (error) => options.errors?.push(error),
  });
  open.push(broadcast);
  return broadcast;
}

describe('StreamBroadcast', () => {
  it('writes each frame to live members only, after their own sequence', async () => {
    const s = source();
    const broadcast = broadcastOver([s]);
    await broadcast.start();
    const fresh = recorder();
    const resuming = recorder();
    const replaying = recorder();
    for (const member of [fresh, resuming, replaying]) broadcast.add(member);
    broadcast.goLiveNow(fresh);
    broadcast.goLive(resuming, 11);
    s.push(10, 11, 12);
    await settle();
    expect(fresh.text()).toBe('<10><11><12>');
    expect(resuming.text()).toBe('<12>');
    expect(replaying.text()).toBe('');
  });

  it('drops repeated sequences (at-least-once upstream)', async () => {
    const s = source();
    const broadcast = broadcastOver([s]);
    await broadcast.start();
    const member = recorder();
    broadcast.add(member);
    broadcast.goLiveNow(member);
    s.push(1, 2, 2, 1, 3);
    await settle();
    expect(member.text()).toBe('<1><2><3>');
  });

  it('lets a resuming connection take over only once it has caught up with a broadcast that has seen an event', async () => {
    const s = source();
    const broadcast = broadcastOver([s]);
    await broadcast.start();
    // Nothing seen yet: the broadcast cannot vouch for anything before its first event.
    expect(broadcast.canTakeOver(5)).toBe(false);
    s.push(7);
    await settle();
    expect(broadcast.canTakeOver(6)).toBe(false);
    expect(broadcast.canTakeOver(7)).toBe(true);
    expect(broadcast.canTakeOver(9)).toBe(true);
  });

  it('goes live from what it has not accepted yet: a fresh member gets later events only', async () => {
    const s = source();
    const broadcast = broadcastOver([s]);
    await broadcast.start();
    s.push(1);
    await settle();
    const member = recorder();
    broadcast.add(member);
    broadcast.goLiveNow(member);
    s.push(2);
    await settle();
    expect(member.text()).toBe('<2>');
  });

  it('serves members in slices with a macrotask between them, and batches frames that arrive meanwhile into one write', async () => {
    const s = source();
    const broadcast = broadcastOver([s]);
    await broadcast.start();
    const members = Array.from({ length: FANOUT_SLICE * 2 + 1 }, () => recorder());
    let lastServedAtNextMacrotask: number | null = null;
    const first = members[0]!;
    // While the first slice is written, two more events arrive; a macrotask queued now runs
    // before the last member is served.
    first.write = (chunk) => {
      first.chunks.push(chunk);
      if (chunk === '<1>') {
        setImmediate(() => (lastServedAtNextMacrotask = members.at(-1)!.chunks.length));
        s.push(2, 3);
      }
    };
    for (const member of members) {
      broadcast.add(member);
      broadcast.goLiveNow(member);
    }
    s.push(1);
    await settle(20);
    expect(lastServedAtNextMacrotask).toBe(0);
    for (const member of members) expect(member.chunks).toEqual(['<1>', '<2><3>']);
  });

  it('does not write to a member removed in the middle of a fan-out', async () => {
    const s = source();
    const broadcast = broadcastOver([s]);
    await broadcast.start();
    const members = Array.from({ length: FANOUT_SLICE + 1 }, () => recorder());
    const last = members.at(-1)!;
    const first = members[0]!;
    first.write = (chunk) => {
      first.chunks.push(chunk);
      broadcast.remove(last); // the last member's connection closes during the first slice
    };
    for (const member of members) {
      broadcast.add(member);
      broadcast.goLiveNow(member);
    }
    s.push(1);
    await settle();
    expect(last.chunks).toEqual([]);
    expect(members.at(-2)!.chunks).toEqual(['<1>']);
    expect(broadcast.memberCount).toBe(FANOUT_SLICE);
  });

  it('resubscribes after a failure, resuming after the last accepted sequence, without duplicates', async () => {
    const first = source();
    const second = source();
    const errors: unknown[] = [];
    const subscribed: (string | null)[] = [];
    const broadcast = broadcastOver([first, second], { errors, subscribed });
    await broadcast.start();
    const member = recorder();
    broadcast.add(member);
    broadcast.goLiveNow(member);
    first.push(4, 5);
    await settle();
    first.fail(new Error('fell behind'));
    await vi.waitFor(() => expect(subscribed).toEqual([null, '5']), { timeout: 5_000, interval: 10 });
    expect(errors.map((error) => (error as Error).message)).toEqual(['fell behind']);
    // The replay overlaps what was already written; only the new events go out.
    second.push(5, 6, 7);
    await settle();
    expect(member.text()).toBe('<4><5><6><7>');
  });

  it('fails to start when the subscription is refused', async () => {
    const broadcast = broadcastOver([]);
    await expect(broadcast.start()).rejects.toThrow(/could not subscribe: refused/);
  });

  it('sends heartbeats to every member, live or still replaying, from one timer', async () => {
    const s = source();
    const broadcast = broadcastOver([s], { heartbeatMs: 30 });
    await broadcast.start();
    const live = recorder();
    const replaying = recorder();
    broadcast.add(live);
    broadcast.add(replaying);
    broadcast.goLiveNow(live);
    // Two heartbeats each, however long a loaded machine takes to fire the timer twice.
    await vi.waitFor(
      () => {
        expect(live.chunks.length).toBeGreaterThanOrEqual(2);
        expect(replaying.chunks.length).toBeGreaterThanOrEqual(2);
      },
      { timeout: 5_000, interval: 10 },
    );
    expect(new Set(live.chunks)).toEqual(new Set([HEARTBEAT]));
    expect(new Set(replaying.chunks)).toEqual(new Set([HEARTBEAT]));
  });

  it('writes nothing after close and ends its subscription', async () => {
    const s = source();
    const broadcast = broadcastOver([s], { heartbeatMs: 20 });
    await broadcast.start();
    const member = recorder();
    broadcast.add(member);
    broadcast.goLiveNow(member);
    await broadcast.close();
    expect(s.ended).toBe(true);
    s.push(1);
    await new Promise((resolve) => setTimeout(resolve, 60));
    expect(member.chunks).toEqual([]);
    expect(broadcast.memberCount).toBe(0);
  });
});
