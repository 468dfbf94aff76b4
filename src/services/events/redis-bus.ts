import type { ServiceLog } from '../log.js';
import { Redis } from 'ioredis';
import type { BusHandler, EventBus } from './event-bus.js';

export interface RedisBusOptions {
  log?: ServiceLog;
  /** Prefix of every channel name: the deployment id, so deployments sharing a Redis stay apart. */
  namespace: string;
  connectionName?: string;
}

/**
 * Redis pub/sub. Publishing uses a normal connection; subscribing needs a dedicated one.
 * ioredis reconnects with the backoff below and re-subscribes to every channel by itself.
 * Callers use logical channel names; on the wire they are `<namespace>:<channel>`.
 */
export class RedisEventBus implements EventBus {
  private readonly publisher: Redis;
  private readonly subscriber: Redis;
  private readonly handlers = new Map<string, Set<BusHandler>>();
  private readonly resubscribedListeners = new Set<() => void>();
  private readonly log: ServiceLog | undefined;
  private readonly prefix: string;

  constructor(url: string, { log, namespace, connectionName = 'picks-bus' }: RedisBusOptions) {
    this.prefix = `${namespace}:`;
    const options = {
      // Back off up to 2 s between reconnects; never give up.
      retryStrategy: (attempt: number) => Math.min(50 * 2 ** attempt, 2_000),
      maxRetriesPerRequest: 1,
      enableOfflineQueue: false,
      commandTimeout: 1_000,
      lazyConnect: false,
    };
    this.log = log;
    this.publisher = new Redis(url, { ...options, connectionName: `${connectionName}-pub` });
    this.subscriber = new Redis(url, {
      ...options,
      connectionName: `${connectionName}-sub`,
      enableOfflineQueue: true,
      commandTimeout: undefined,
      autoResubscribe: true,
    });
    for (const connection of [this.publisher, this.subscriber]) {
      connection.on('error', (error: Error) => log?.warn({ err: error.message }, 'event bus: redis error'));
    }
    this.subscriber.on('ready', () => {
      log?.info({}, 'event bus: subscribed connection ready');
      // ioredis resubscribes by itself right after 'ready', but pub/sub keeps nothing: what was
      // published while the connection was down is gone. Subscribe again ourselves, and once
      // Redis has acknowledged it (so nothing published from now on can be missed), let
      // listeners catch up from the outbox.
      const channels = [...this.handlers.keys()].map((channel) => this.prefix + channel);
      const subscribed = channels.length > 0 ? this.subscriber.subscribe(...channels) : Promise.resolve();
      subscribed.then(
        () => {
          for (const listener of this.resubscribedListeners) listener();
        },
        (error: Error) => log?.warn({ err: error.message }, 'event bus: resubscribe failed; will retry on reconnect'),
      );
    });
    this.subscriber.on('message', (wireChannel: string, message: string) => {
      if (!wireChannel.startsWith(this.prefix)) return;
      for (const handler of this.handlers.get(wireChannel.slice(this.prefix.length)) ?? []) handler(message);
    });
  }

  /** Waits (bounded) until both connections are up; false when Redis did not answer in time. */
  async ready(timeoutMs = 2_000): Promise<boolean> {
    const up = (connection: Redis) =>
      connection.status === 'ready' ? Promise.resolve() : new Promise<void>((resolve) => connection.once('ready', () => resolve()));
    let timer: NodeJS.Timeout | undefined;
    const timeout = new Promise<false>((resolve) => {
      timer = setTimeout(() => resolve(false), timeoutMs);
    });
    const result = await Promise.race([Promise.all([up(this.publisher), up(this.subscriber)]).then(() => true), timeout]);
    clearTimeout(timer);
    return result;
  }

  async publish(channel: string, message: string): Promise<void> {
    await this.publisher.publish(this.prefix + channel, message);
  }

  async subscribe(channel: string, handler: BusHandler): Promise<() => Promise<void>> {
    let set = this.handlers.get(channel);
    if (!set) {
      set = new Set();
      this.handlers.set(channel, set);
      // Not awaited while Redis is away: start-up must not wait for it. The command is queued
      // until the connection is ready, and ioredis resubscribes after every reconnect.
      const subscribed = this.subscriber.subscribe(this.prefix + channel).catch((error: Error) => {
        this.log?.warn({ err: error.message, channel }, 'event bus: subscribe failed; will resubscribe on reconnect');
      });
      if (this.subscriber.status === 'ready') await subscribed;
    }
    set.add(handler);
    return async () => {
      set.delete(handler);
      if (set.size === 0) {
        this.handlers.delete(channel);
        await this.subscriber.unsubscribe(this.prefix + channel).catch(() => undefined);
      }
    };
  }

  onResubscribed(listener: () => void): () => void {
    this.resubscribedListeners.add(listener);
    return () => void this.resubscribedListeners.delete(listener);
  }

  async close(): Promise<void> {
    this.resubscribedListeners.clear();
    this.handlers.clear();
    await Promise.allSettled([this.publisher.quit(), this.subscriber.quit()]);
  }
}
