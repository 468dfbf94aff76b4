/**
 * SIGTERM (app.close()) ends every kind of subscription stream at once, so the drain does not
 * wait for them: yoga's own SSE on POST /graphql, graphql-sse at /graphql/stream and the REST
 * picks stream. Each response ends properly (a complete chunked body, no `complete` event: the
 * client resubscribes, to another instance), and every slot is given back.
 */
import type { AddressInfo } from 'node:net';
import { describe, expect, it } from 'vitest';
import { ADMIN_TOKEN, createTestApp } from '../helpers/app.js';
import { CREATE_KEY } from '../helpers/fixtures.js';
import { openStream, type OpenStream, type Surface } from '../helpers/subscriptions.js';

/** Generous: a stream that is not ended by close() never ends at all (pings keep it alive). */
function within<T>(promise: Promise<T>, what: string, ms = 15_000): Promise<T> {
  return Promise.race([promise, new Promise<T>((_, reject) => setTimeout(() => reject(new Error(`${what} did not happen within ${ms} ms`)), ms))]);
}

describe('app.close() with subscriptions open', () => {
  it('ends an open POST /graphql SSE subscription (and those of the other surfaces)', async () => {
    const t = await createTestApp();
    let closing: Promise<void> | null = null;
    const streams: OpenStream[] = [];
    try {
      await t.app.listen({ port: 0, host: '127.0.0.1' });
      const port = (t.app.server.address() as AddressInfo).port;
      const key = (await t.graphql<{ createApiKey: { key: string; apiKey: { id: string } } }>(CREATE_KEY, { input: { tier: 'ENTERPRISE' } })).data!
        .createApiKey;
      const surfaces: Surface[] = ['yoga', 'graphql-sse', 'rest'];
      streams.push(
        ...(await Promise.all(surfaces.map((surface) => openStream(port, surface, `Bearer ${key.key}`)))),
        await openStream(port, 'yoga', `Bearer ${ADMIN_TOKEN}`),
      );
      expect(streams.map((stream) => stream.status)).toEqual([200, 200, 200, 200]);
      expect(t.runtime.services.streamSlots.count(key.apiKey.id)).toBe(3);

      closing = t.close(); // app.close() first, as on SIGTERM
      await within(Promise.all(streams.map((stream) => stream.ended)), 'every stream ending');
      // Ended by the server, not cut off; without a `complete` event, so clients resubscribe elsewhere.
      expect(streams.map((stream) => stream.endedCleanly())).toEqual([true, true, true, true]);
      expect(streams[0]!.raw()).not.toContain('event: complete');
      await within(closing, 'close() returning');
      expect(t.runtime.services.streamSlots.count(key.apiKey.id)).toBe(0);
    } finally {
      // On failure, a stream the server did not end would hold close() forever: let go of it.
      for (const stream of streams) stream.close();
      await (closing ?? t.close());
    }
  });
});
