/**
 * The event bus port: fire-and-forget fan-out between instances (pick events for streams,
 * key revocations for auth caches). Durability is the outbox's job, not the bus's.
 * Two implementations: Redis pub/sub (all instances) and in-memory (one process).
 */
export type BusHandler = (message: string) => void;

export interface EventBus {
  publish(channel: string, message: string): Promise<void>;
  /** Returns an unsubscribe function. */
  subscribe(channel: string, handler: BusHandler): Promise<() => Promise<void>>;
  /**
   * Calls `listener` each time the subscriptions are (re)established after the bus was cut off
   * (Redis restarted or unreachable): whatever was published meanwhile was missed, and
   * listeners catch up from durable storage. Absent on buses that cannot be cut off.
   */
  onResubscribed?(listener: () => void): () => void;
  close(): Promise<void>;
}

export const BusChannel = {
  apiKeyRevoked: 'picks:api-key-revoked',
  pickEvents: 'picks:events',
  pickVisibility: 'picks:visibility',
} as const;
