/**
 * The stream adapter's live fan-out, one per instance.
 *
 * Every stream connection still runs its own pickPublished subscription through yoga
 * (authentication, tier, limits, Last-Event-ID replay), but live frames do not flow through
 * 10,000 per-connection GraphQL result pipelines: the instance runs ONE pickPublished
 * subscription (as the server itself), renders each event's frame once and writes the same
 * bytes to every live socket. Frames that arrive while a fan-out is under way are written
 * together as one chunk per socket. Sockets are served in slices with a macrotask in between,
 * so one event never holds the event loop for the whole fan-out. Heartbeats go out from one
 * timer for every connection.
 *
 * Handover, exact by sequence: a connection goes live with `after` = the last sequence it has
 * written, and is then sent every broadcast frame above it. A fresh connection goes live at
 * once (after = the broadcast's latest sequence: events from now on). A resuming connection
 * first writes what its own subscription replays, and goes live once it has written an event
 * at or past the broadcast's latest sequence, while the broadcast has been covering the feed
 * since an earlier event: then every later event reaches the broadcast, none twice, none lost.
 */
import type { ExecutionResult } from 'graphql';
import { followSubscription, type Follower } from './follow.js';

export interface StreamFrame {
  seq: number;
  text: string;
}

export interface BroadcastMember {
  /** Writes to this connection (the connection closes itself when the client is too slow). */
  write(chunk: string): void;
}

export interface BroadcastOptions<TData> {
  /** Opens the instance's pickPublished subscription, replaying after `afterSequence` when given. */
  subscribe(afterSequence: string | null): Promise<AsyncIterableIterator<ExecutionResult<TData>> | ExecutionResult<TData>>;
  render(result: ExecutionResult<TData>): StreamFrame | null;
  heartbeatMs: number;
  /** The subscription failed or ended: logged; the broadcast resubscribes after the last frame. */
  onError(error: unknown): void;
}

export const HEARTBEAT = ': heartbeat\n\n';
/** Sockets written per turn of the event loop. */
export const FANOUT_SLICE = 500;

interface MemberState {
  /** Live: receives broadcast frames above `after`. Not live (replaying): heartbeats only. */
  live: boolean;
  after: number;
}

const nextTurn = () => new Promise<void>((resolve) => setImmediate(resolve));

export class StreamBroadcast<TData = unknown> {
  private readonly members = new Map<BroadcastMember, MemberState>();
  private pending: StreamFrame[] = [];
  private heartbeatDue = false;
  private flushing = false;
  /** Highest sequence accepted; 0 until the first event since start. */
  private latest = 0;
  private follower: Follower | null = null;
  private heartbeat: NodeJS.Timeout | null = null;
  private closed = false;

  constructor(private readonly options: BroadcastOptions<TData>) {}

  async start(): Promise<void> {
    this.follower = await followSubscription({
      // Resume after the last accepted frame: the subscription replays what was missed meanwhile.
      open: () => this.options.subscribe(this.latest > 0 ? String(this.latest) : null),
      onResult: (result) => {
        const frame = this.options.render(result);
        if (!frame) throw new Error(result.errors?.[0]?.message ?? 'a subscription result without an event');
        this.accept(frame);
      },
      onError: this.options.onError,
    });
    this.heartbeat = setInterval(() => {
      this.heartbeatDue = true;
      this.schedule();
    }, this.options.heartbeatMs);
    this.heartbeat.unref();
  }

  /** Joins for heartbeats; frames once `goLive` is called. */
  add(member: BroadcastMember): void {
    this.members.set(member, { live: false, after: 0 });
  }

  remove(member: BroadcastMember): void {
    this.members.delete(member);
  }

  /** Fresh connections: live at once, from the events not yet accepted. */
  goLiveNow(member: BroadcastMember): void {
    this.goLive(member, this.latest);
  }

  /**
   * A resuming connection that has written up to `writtenSeq` may switch to the broadcast when
   * nothing it still needs can be missing: see the header.
   */
  canTakeOver(writtenSeq: number): boolean {
    return this.latest > 0 && writtenSeq >= this.latest;
  }

  goLive(member: BroadcastMember, after: number): void {
    const state = this.members.get(member);
    if (!state) return;
    state.live = true;
    state.after = after;
  }

  get memberCount(): number {
    return this.members.size;
  }

  async close(): Promise<void> {
    this.closed = true;
    if (this.heartbeat) clearInterval(this.heartbeat);
    this.members.clear();
    this.pending = [];
    await this.follower?.stop();
  }

  private accept(frame: StreamFrame): void {
    if (frame.seq <= this.latest) return;
    this.latest = frame.seq;
    this.pending.push(frame);
    this.schedule();
  }

  private schedule(): void {
    if (!this.flushing && !this.closed) void this.flush();
  }

  private async flush(): Promise<void> {
    this.flushing = true;
    try {
      while (!this.closed && (this.pending.length > 0 || this.heartbeatDue)) {
        const frames = this.pending;
        this.pending = [];
        const heartbeat = this.heartbeatDue ? HEARTBEAT : '';
        this.heartbeatDue = false;
        const all = frames.map((frame) => frame.text).join('');
        const first = frames[0]?.seq ?? Infinity;
        const last = frames.at(-1)?.seq ?? 0;
        const members = [...this.members];
        for (let start = 0; start < members.length; start += FANOUT_SLICE) {
          if (start > 0) await nextTurn();
          for (let index = start; index < Math.min(start + FANOUT_SLICE, members.length); index += 1) {
            const [member, state] = members[index]!;
            // Left meanwhile (a member that went live after the batch was taken has `after` >= last).
            if (this.members.get(member) !== state) continue;
            let chunk = heartbeat;
            if (state.live && state.after < last) {
              chunk += state.after < first ? all : framesAfter(frames, state.after);
            }
            if (chunk) member.write(chunk);
          }
        }
      }
    } finally {
      this.flushing = false;
    }
  }
}

function framesAfter(frames: StreamFrame[], after: number): string {
  return frames
    .filter((frame) => frame.seq > after)
    .map((frame) => frame.text)
    .join('');
}
