import type { BusHandler, EventBus } from './event-bus.js';

/** One process: handlers run on a later tick, as they would after a network hop. */
export class MemoryEventBus implements EventBus {
  private readonly handlers = new Map<string, Set<BusHandler>>();

  async publish(channel: string, message: string): Promise<void> {
    for (const handler of this.handlers.get(channel) ?? []) {
      queueMicrotask(() => handler(message));
    }
  }

  async subscribe(channel: string, handler: BusHandler): Promise<() => Promise<void>> {
    let set = this.handlers.get(channel);
    if (!set) {
      set = new Set();
      this.handlers.set(channel, set);
    }
    set.add(handler);
    return async () => {
      set.delete(handler);
    };
  }

  async close(): Promise<void> {
    this.handlers.clear();
  }
}
