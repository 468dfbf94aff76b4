/** A minimal SSE client over node:http for tests: raw bytes in, frames out. Loopback only. */
import http from 'node:http';

export interface SseConnection {
  status: number;
  headers: http.IncomingHttpHeaders;
  /** Everything received so far, byte for byte. */
  raw(): string;
  /** Resolves when the raw text contains `needle` (or rejects after timeoutMs). */
  waitFor(needle: string | RegExp, timeoutMs?: number): Promise<string>;
  body(): Promise<string>;
  close(): void;
}

/** The text a streaming response has received so far, and a wait for what it should contain. */
export interface ReceivedText {
  append(chunk: string): void;
  text(): string;
  /** Resolves with the text once it contains `needle`; rejects after timeoutMs. */
  waitFor(needle: string | RegExp, timeoutMs?: number): Promise<string>;
}

export function receivedText(): ReceivedText {
  let text = '';
  const waiters = new Set<() => void>();
  return {
    append(chunk) {
      text += chunk;
      for (const waiter of [...waiters]) waiter();
    },
    text: () => text,
    waitFor(needle, timeoutMs = 5_000) {
      return new Promise((found, fail) => {
        const check = () => {
          if (typeof needle === 'string' ? text.includes(needle) : needle.test(text)) {
            waiters.delete(check);
            clearTimeout(timer);
            found(text);
          }
        };
        const timer = setTimeout(() => {
          waiters.delete(check);
          fail(new Error(`timed out waiting for ${String(needle)}; got: ${JSON.stringify(text)}`));
        }, timeoutMs);
        waiters.add(check);
        check();
      });
    },
  };
}

export function connectSse(port: number, path: string, headers: Record<string, string> = {}): Promise<SseConnection> {
  return new Promise((resolve, reject) => {
    const req = http.get({ host: '127.0.0.1', port, path, headers: { accept: 'text/event-stream', ...headers } }, (res) => {
      const received = receivedText();
      res.setEncoding('utf8');
      res.on('data', (chunk: string) => received.append(chunk));
      const ended = new Promise<string>((done) => res.on('end', () => done(received.text())));
      resolve({
        status: res.statusCode ?? 0,
        headers: res.headers,
        raw: received.text,
        body: () => ended,
        waitFor: received.waitFor,
        close: () => req.destroy(),
      });
    });
    req.on('error', reject);
  });
}
