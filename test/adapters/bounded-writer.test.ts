import net, { type AddressInfo } from 'node:net';
import { afterEach, describe, expect, it } from 'vitest';
import { boundedWriter } from '../../adapters/stream/bounded-writer.js';
import { MAX_BUFFERED_BYTES } from '../../adapters/stream/plugin.js';

const cleanups: (() => void)[] = [];
afterEach(() => {
  for (const cleanup of cleanups.splice(0)) cleanup();
});

/** A real loopback TCP connection whose client never reads: the server side's socket is returned. */
async function stalledConnection(): Promise<net.Socket> {
  let accepted!: (socket: net.Socket) => void;
  const serverSide = new Promise<net.Socket>((resolve) => (accepted = resolve));
  const server = net.createServer((socket) => accepted(socket));
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const client = net.connect((server.address() as AddressInfo).port, '127.0.0.1');
  client.pause(); // never reads: the kernel buffers fill, then user space
  const socket = await serverSide;
  cleanups.push(() => {
    client.destroy();
    socket.destroy();
    server.close();
  });
  return socket;
}

describe('boundedWriter', () => {
  it('refuses to buffer more than the limit for a client that does not read, and reports it when the limit is passed', async () => {
    const socket = await stalledConnection();
    const chunk = 'x'.repeat(16 * 1024);
    const overflows: number[] = [];
    const write = boundedWriter(socket, MAX_BUFFERED_BYTES, (buffered) => overflows.push(buffered));
    let accepted = 0;
    let peak = 0;
    // The kernel takes a few MB on loopback first; stop at 64 MB in case nothing ever backs up.
    for (let written = 0; written < 64 * 1024 * 1024 && overflows.length === 0; written += chunk.length) {
      if (write(chunk)) accepted += 1;
      peak = Math.max(peak, socket.writableLength);
      // Let libuv hand what it can to the kernel, as the event loop would between fan-outs.
      if (accepted % 64 === 0) await new Promise((resolve) => setImmediate(resolve));
    }
    expect(overflows).toHaveLength(1);
    expect(overflows[0]).toBeGreaterThan(MAX_BUFFERED_BYTES);
    // Never more than the limit plus the one chunk that crossed it.
    expect(peak).toBeLessThanOrEqual(MAX_BUFFERED_BYTES + chunk.length);
    expect(write(chunk)).toBe(false);
  });

  it('passes every chunk through while the client keeps up', async () => {
    const written: string[] = [];
    const sink = { writableLength: 0, write: (chunk: string) => written.push(chunk) };
    const overflows: number[] = [];
    const write = boundedWriter(sink, 10, (buffered) => overflows.push(buffered));
    expect(write('a')).toBe(true);
    sink.writableLength = 10; // at the limit: still accepted
    expect(write('b')).toBe(true);
    sink.writableLength = 11;
    expect(write('c')).toBe(false);
    expect(written).toEqual(['a', 'b']);
    expect(overflows).toEqual([11]);
  });
});
