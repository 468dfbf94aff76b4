import { parse, type ExecutionResult } from 'graphql';
import { createSchema, createYoga } from 'graphql-yoga';
import { describe, expect, it } from 'vitest';
import { useSharedSubscriptionResults } from '../../src/graphql/shared-subscription-results.js';

/** A feed that hands the same event object to every subscriber, as PickFeed does. */
function sharedFeed() {
  const queues = new Set<(event: unknown) => void>();
  return {
    publish: (event: unknown) => queues.forEach((push) => push(event)),
    subscribe(): AsyncIterableIterator<unknown> {
      const pending: unknown[] = [];
      let wake: (() => void) | null = null;
      const push = (event: unknown) => {
        pending.push(event);
        wake?.();
      };
      queues.add(push);
      const iterator: AsyncIterableIterator<unknown> = {
        async next() {
          while (pending.length === 0) await new Promise<void>((resolve) => (wake = resolve));
          return { value: pending.shift(), done: false };
        },
        async return() {
          queues.delete(push);
          return { value: undefined, done: true };
        },
        [Symbol.asyncIterator]: () => iterator,
      };
      return iterator;
    },
  };
}

function setup() {
  const feed = sharedFeed();
  const executions: string[] = [];
  const schema = createSchema({
    typeDefs: /* GraphQL */ `
      type Query { ok: Boolean }
      type Event { n: Int!, label(prefix: String): String!, viewer: String! }
      type Subscription { events(after: Int): Event! }
    `,
    resolvers: {
      Subscription: { events: { subscribe: () => feed.subscribe(), resolve: (event: unknown) => event } },
      Event: {
        label: (event: { n: number }, args: { prefix?: string }) => {
          executions.push(`${args.prefix ?? ''}${event.n}`);
          return `${args.prefix ?? ''}${event.n}`;
        },
        viewer: (_event: unknown, _args: unknown, context: { principal: { kind: string; tier?: string } }) =>
          context.principal.tier ?? context.principal.kind,
      },
    },
  });
  const yoga = createYoga({ schema, plugins: [useSharedSubscriptionResults()] });
  const document = parse('subscription S($after: Int, $prefix: String) { events(after: $after) { n label(prefix: $prefix) viewer } }');
  async function subscribe(variables: Record<string, unknown>, principal: { kind: string; tier?: string }) {
    const { subscribe: run, contextFactory, schema: enveloped } = yoga.getEnveloped({});
    const contextValue = await contextFactory({ principal });
    const stream = (await run({ schema: enveloped, document, variableValues: variables, contextValue })) as AsyncIterableIterator<ExecutionResult>;
    return stream;
  }
  return { feed, executions, subscribe };
}

describe('shared subscription results', () => {
  it('executes an event once for subscribers that differ only in root-field arguments', async () => {
    const { feed, executions, subscribe } = setup();
    const growth = { kind: 'apiKey', tier: 'growth' };
    const streams = await Promise.all([subscribe({ after: 1 }, growth), subscribe({ after: 2 }, growth), subscribe({}, growth)]);
    const next = streams.map((stream) => stream.next());
    feed.publish({ n: 7 });
    const results = await Promise.all(next);
    expect(results.map((result) => result.value.data)).toEqual(Array(3).fill({ events: { n: 7, label: '7', viewer: 'growth' } }));
    expect(executions).toEqual(['7']);
    await Promise.all(streams.map((stream) => stream.return?.()));
  });

  it('executes separately when a variable below the root differs, or the access level does', async () => {
    const { feed, executions, subscribe } = setup();
    const growth = { kind: 'apiKey', tier: 'growth' };
    const streams = await Promise.all([
      subscribe({ prefix: 'a' }, growth),
      subscribe({ prefix: 'b' }, growth),
      subscribe({ prefix: 'a' }, { kind: 'apiKey', tier: 'enterprise' }),
      subscribe({ prefix: 'a' }, { kind: 'admin' }),
      subscribe({ prefix: 'a' }, growth),
    ]);
    const next = streams.map((stream) => stream.next());
    feed.publish({ n: 1 });
    const results = await Promise.all(next);
    expect(results.map((result) => result.value.data.events.viewer)).toEqual(['growth', 'growth', 'enterprise', 'admin', 'growth']);
    expect(results.map((result) => result.value.data.events.label)).toEqual(['a1', 'b1', 'a1', 'a1', 'a1']);
    expect(executions.sort()).toEqual(['a1', 'a1', 'a1', 'b1']);
    await Promise.all(streams.map((stream) => stream.return?.()));
  });

  it('different event objects are different events, even when equal', async () => {
    const { feed, executions, subscribe } = setup();
    const stream = await subscribe({}, { kind: 'admin' });
    const first = stream.next();
    feed.publish({ n: 3 });
    await first;
    const second = stream.next();
    feed.publish({ n: 3 });
    await second;
    expect(executions).toEqual(['3', '3']);
    await stream.return?.();
  });
});
