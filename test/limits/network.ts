/**
 * Loopback stand-ins for a broken Redis: a server that accepts connections and never answers,
 * one that completes the client handshake and then hangs (a frozen Redis), and a proxy to the
 * real Redis that can be cut and restored (an outage the client recovers from).
 */
import { createServer, connect, type Server, type Socket } from 'node:net';

export interface LoopbackServer {
  url: string;
  close(): Promise<void>;
}

async function listen(server: Server, sockets: Set<Socket>): Promise<LoopbackServer> {
  server.on('connection', (socket) => {
    sockets.add(socket);
    socket.on('close', () => sockets.delete(socket));
    socket.on('error', () => socket.destroy());
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const address = server.address();
  if (address === null || typeof address === 'string') throw new Error('no TCP address');
  return {
    url: `redis://127.0.0.1:${address.port}`,
    close: async () => {
      for (const socket of sockets) socket.destroy();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}

/** Accepts TCP connections and never writes a byte. */
export function startSilentServer(): Promise<LoopbackServer> {
  return listen(createServer(), new Set());
}

/**
 * Answers the ioredis handshake (refusing RESP3 so the client settles on RESP2, then the
 * CLIENT and INFO calls), then never answers anything else: a Redis that froze after the
 * connection became ready.
 */
export function startFrozenRedis(): Promise<LoopbackServer> {
  const server = createServer((socket) => {
    // Without it Nagle holds back the second reply of a pipelined handshake for a delayed ACK.
    socket.setNoDelay(true);
    let pending = Buffer.alloc(0);
    socket.on('data', (chunk) => {
      pending = Buffer.concat([pending, chunk]);
      for (;;) {
        const parsed = parseCommand(pending);
        if (!parsed) return;
        pending = pending.subarray(parsed.length);
        const reply = handshakeReply(parsed.args);
        if (reply !== null) socket.write(reply);
      }
    });
  });
  return listen(server, new Set());
}

function handshakeReply(args: string[]): string | null {
  const name = args[0]?.toUpperCase();
  if (name === 'HELLO') return "-ERR unknown command 'HELLO'\r\n";
  if (name === 'CLIENT') return '+OK\r\n';
  if (name === 'INFO') {
    const info = '# Persistence\r\nloading:0\r\n';
    return `$${Buffer.byteLength(info)}\r\n${info}\r\n`;
  }
  return null;
}

/** One RESP array of bulk strings from the start of `buffer`, or null if incomplete. */
function parseCommand(buffer: Buffer): { args: string[]; length: number } | null {
  let offset = 0;
  const line = (): string | null => {
    const end = buffer.indexOf('\r\n', offset);
    if (end === -1) return null;
    const text = buffer.subarray(offset, end).toString();
    offset = end + 2;
    return text;
  };
  const header = line();
  if (header === null) return null;
  if (!header.startsWith('*')) throw new Error(`unexpected RESP from client: ${header}`);
  const args: string[] = [];
  for (let i = 0; i < Number(header.slice(1)); i += 1) {
    const size = line();
    if (size === null) return null;
    const length = Number(size.slice(1));
    if (buffer.length < offset + length + 2) return null;
    args.push(buffer.subarray(offset, offset + length).toString());
    offset += length + 2;
  }
  return { args, length: offset };
}

export interface CuttableProxy extends LoopbackServer {
  /** Drops every connection and refuses new ones until restore(). */
  cut(): void;
  restore(): void;
  /** Holds Redis' replies back (commands still reach Redis) until releaseReplies(). */
  holdReplies(): void;
  releaseReplies(): void;
}

/** A TCP proxy to a real Redis. */
export async function startProxy(targetUrl: string): Promise<CuttableProxy> {
  const target = new URL(targetUrl);
  const sockets = new Set<Socket>();
  let down = false;
  let held: { client: Socket; chunk: Buffer }[] | null = null;
  const server = createServer((client) => {
    if (down) {
      client.destroy();
      return;
    }
    const upstream = connect(Number(target.port || 6379), target.hostname);
    sockets.add(upstream);
    upstream.on('close', () => {
      sockets.delete(upstream);
      client.destroy();
    });
    upstream.on('error', () => upstream.destroy());
    client.on('close', () => upstream.destroy());
    client.pipe(upstream);
    upstream.on('data', (chunk: Buffer) => {
      if (held) held.push({ client, chunk });
      else client.write(chunk);
    });
  });
  const loopback = await listen(server, sockets);
  return {
    ...loopback,
    // Same database and credentials as the target.
    url: `${target.protocol}//${target.username ? `${target.username}:${target.password}@` : ''}${new URL(loopback.url).host}${target.pathname}`,
    cut: () => {
      down = true;
      for (const socket of sockets) socket.destroy();
    },
    restore: () => {
      down = false;
    },
    holdReplies: () => {
      held = [];
    },
    releaseReplies: () => {
      const replies = held ?? [];
      held = null;
      for (const { client, chunk } of replies) client.write(chunk);
    },
  };
}
