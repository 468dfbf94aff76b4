/**
 * A local HTTPS webhook receiver for tests: listens on loopback only, presents the fixture
 * certificate (test/fixtures/tls, trusted via NODE_EXTRA_CA_CERTS in `npm test`), records
 * every request and answers as told.
 */
import { readFileSync } from 'node:fs';
import { createServer, type Server } from 'node:https';
import type { AddressInfo, Socket } from 'node:net';
import { fileURLToPath } from 'node:url';

const TLS_DIR = fileURLToPath(new URL('../fixtures/tls/', import.meta.url));

export const TEST_CA_PEM = readFileSync(`${TLS_DIR}ca.pem`, 'utf8');
const SERVER_CERT = readFileSync(`${TLS_DIR}server.pem`, 'utf8');
const SERVER_KEY = readFileSync(`${TLS_DIR}server-key.pem`, 'utf8');

export interface ReceivedRequest {
  method: string;
  path: string;
  headers: Record<string, string | string[] | undefined>;
  body: Buffer;
  receivedAt: Date;
  /** Client port: equal for two requests on one keep-alive connection. */
  remotePort: number;
}

export type ReceiverResponse =
  | { status: number; body?: string | Buffer; headers?: Record<string, string>; delayMs?: number }
  /** Read the request, never answer. */
  | 'hang'
  | { redirect: string; status?: 301 | 302 | 303 | 307 | 308 };

/** Decides the answer per request (the request is already recorded in `requests`). */
export type ReceiverResponder = (request: ReceivedRequest) => ReceiverResponse;

export interface HttpsReceiverOptions {
  /** Loopback address to listen on. */
  listenHost?: '127.0.0.1' | '::1';
  response?: ReceiverResponse | ReceiverResponder;
}

export interface HttpsReceiver {
  port: number;
  /** https://<host>:<port><path>; host defaults to hooks.test (map it with hostOverrides). */
  url(host?: string, path?: string): string;
  requests: ReceivedRequest[];
  setResponse(response: ReceiverResponse | ReceiverResponder): void;
  waitForRequests(count: number, timeoutMs?: number): Promise<ReceivedRequest[]>;
  close(): Promise<void>;
}

export async function startHttpsReceiver(options: HttpsReceiverOptions = {}): Promise<HttpsReceiver> {
  const listenHost = options.listenHost ?? '127.0.0.1';
  let response: ReceiverResponse | ReceiverResponder = options.response ?? { status: 200, body: '' };
  const requests: ReceivedRequest[] = [];
  const waiters = new Set<() => void>();
  const sockets = new Set<Socket>();
  const timers = new Set<NodeJS.Timeout>();

  const server: Server = createServer({ cert: SERVER_CERT, key: SERVER_KEY }, (req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (chunk: Buffer) => chunks.push(chunk));
    req.on('end', () => {
      const recorded: ReceivedRequest = {
        method: req.method ?? '',
        path: req.url ?? '',
        headers: { ...req.headers },
        body: Buffer.concat(chunks),
        receivedAt: new Date(),
        remotePort: req.socket.remotePort ?? 0,
      };
      requests.push(recorded);
      for (const wake of waiters) wake();
      // The client may drop a large or late answer; that is expected, not a test failure.
      res.on('error', () => {});
      const current = typeof response === 'function' ? response(recorded) : response;
      if (current === 'hang') return;
      if ('redirect' in current) {
        res.writeHead(current.status ?? 302, { location: current.redirect, 'content-length': '0' });
        res.end();
        return;
      }
      const answer = () => {
        res.writeHead(current.status, { 'content-type': 'text/plain', ...current.headers });
        res.end(current.body ?? '');
      };
      if (current.delayMs === undefined) {
        answer();
      } else {
        const timer = setTimeout(() => {
          timers.delete(timer);
          answer();
        }, current.delayMs);
        timers.add(timer);
      }
    });
  });
  // Track raw TCP sockets: close() must also end connections that are mid-handshake or hanging.
  server.on('connection', (socket: Socket) => {
    sockets.add(socket);
    socket.on('close', () => sockets.delete(socket));
  });
  server.on('tlsClientError', () => {});

  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(0, listenHost, () => {
      server.off('error', reject);
      resolve();
    });
  });
  const port = (server.address() as AddressInfo).port;

  return {
    port,
    url(host = 'hooks.test', path = '/webhook') {
      const authority = host.includes(':') ? `[${host}]` : host;
      return `https://${authority}:${port}${path}`;
    },
    requests,
    setResponse(next) {
      response = next;
    },
    waitForRequests(count, timeoutMs = 5_000) {
      if (requests.length >= count) return Promise.resolve(requests.slice());
      return new Promise((resolve, reject) => {
        const timer = setTimeout(() => {
          waiters.delete(check);
          reject(new Error(`receiver got ${requests.length} request(s), expected ${count} within ${timeoutMs} ms`));
        }, timeoutMs);
        const check = () => {
          if (requests.length < count) return;
          clearTimeout(timer);
          waiters.delete(check);
          resolve(requests.slice());
        };
        waiters.add(check);
      });
    },
    async close() {
      for (const timer of timers) clearTimeout(timer);
      timers.clear();
      const closed = new Promise<void>((resolve) => server.close(() => resolve()));
      server.closeAllConnections();
      for (const socket of sockets) socket.destroy();
      await closed;
    },
  };
}
