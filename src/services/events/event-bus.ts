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
  close(): Promise<void>;
}

export const BusChannel = {
  apiKeyRevoked: 'picks:api-key-revoked',
  pickEvents: 'picks:events',
  pickVisibility: 'picks:visibility',
} as const;
