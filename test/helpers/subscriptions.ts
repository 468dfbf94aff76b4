/**
 * GraphQL subscriptions over Server-Sent Events for tests, on every surface that serves them:
 * yoga's own SSE (POST /graphql), graphql-sse (POST /graphql/stream) and the REST picks stream
 * (GET /api/v1/picks/stream). Raw bytes over node:http on loopback, so a refusal's status and
 * body can be read as they are.
 */
import http from 'node:http';
import { receivedText } from './sse.js';

export type Surface = 'yoga' | 'graphql-sse' | 'rest';

export interface OpenStream {
  surface: Surface;
  status: number;
  headers: http.IncomingHttpHeaders;
  /** Everything received so far. */
  raw(): string;
  /** Resolves when the received text contains `needle` (rejects after timeoutMs). */
  waitFor(needle: string | RegExp, timeoutMs?: number): Promise<string>;
  /** Resolves with the whole body once the response has ended (or the connection was lost). */
  ended: Promise<string>;
  /** After `ended`: whether the server ended the response properly (a complete body, not a cut connection). */
  endedCleanly(): boolean;
  close(): void;
}

export const PICK_PUBLISHED = 'subscription { pickPublished { sequence pick { id } } }';

const PATHS: Record<Surface, string> = { yoga: '/graphql', 'graphql-sse': '/graphql/stream', rest: '/api/v1/picks/stream' };

/** Opens one subscription; resolves once the response headers are in (the subscription is then live). */
export function openStream(
  port: number,
  surface: Surface,
  authorization: string | null,
  options: { query?: string; headers?: Record<string, string>; path?: string } = {},
): Promise<OpenStream> {
  const body = surface === 'rest' ? null : JSON.stringify({ query: options.query ?? PICK_PUBLISHED });
  return new Promise((resolve, reject) => {
    const req = http.request(
      {
        host: '127.0.0.1',
        port,
        path: options.path ?? PATHS[surface],
        method: body ? 'POST' : 'GET',
        headers: {
          accept: 'text/event-stream',
          ...(body ? { 'content-type': 'application/json' } : {}),
          ...(authorization ? { authorization } : {}),
          ...options.headers,
        },
      },
      (res) => {
        const received = receivedText();
        res.setEncoding('utf8');
        res.on('data', (chunk: string) => received.append(chunk));
        const ended = new Promise<string>((done) => {
          res.on('end', () => done(received.text()));
          res.on('close', () => done(received.text()));
        });
        resolve({
          surface,
          status: res.statusCode ?? 0,
          headers: res.headers,
          raw: received.text,
          ended,
          endedCleanly: () => res.complete,
          waitFor: received.waitFor,
          close: () => req.destroy(),
        });
      },
    );
    req.on('error', reject);
    req.end(body ?? undefined);
  });
}

/** Resolves when `condition()` holds, polling every 10 ms; rejects after timeoutMs. */
export async function eventually(condition: () => boolean, timeoutMs = 5_000, what = 'condition'): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!condition()) {
    if (Date.now() > deadline) throw new Error(`${what} did not hold within ${timeoutMs} ms`);
    await new Promise((resolve) => setTimeout(resolve, 10));
  }
}
