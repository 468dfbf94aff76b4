/**
 * DebugRequestLogs (embedded mode's request logging): Fastify's per-request lines at debug, so
 * the default level (info) keeps the start banner readable. ServiceLogs (every mode): a client
 * closing a stream is logged at debug, not info.
 */
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { PassThrough, Writable } from 'node:stream';
import Fastify from 'fastify';
import { pino } from 'pino';
import { describe, expect, it } from 'vitest';
import { DebugRequestLogs, ServiceLogs, serviceLoggerOptions } from '../../src/server/logging.js';

async function requestLines(level: string): Promise<{ level: number; msg: string }[]> {
  const lines: { level: number; msg: string }[] = [];
  const stream = new Writable({
    write(chunk, _encoding, callback) {
      lines.push(JSON.parse(String(chunk)) as { level: number; msg: string });
      callback();
    },
  });
  const app = Fastify({ loggerInstance: pino(serviceLoggerOptions(level), stream), logController: new DebugRequestLogs() });
  app.get('/ok', async () => ({ ok: true }));
  await app.inject({ method: 'GET', url: '/ok' });
  await app.close();
  return lines.filter((line) => /request/.test(line.msg));
}

describe('DebugRequestLogs', () => {
  it('logs each request at debug: nothing at info, both lines at debug', async () => {
    expect(await requestLines('info')).toEqual([]);
    const debug = await requestLines('debug');
    expect(debug.map((line) => [line.level, line.msg])).toEqual([
      [20, 'incoming request'],
      [20, 'request completed'],
    ]);
  });
});

describe('ServiceLogs', () => {
  it('logs a client closing a stream at debug (nothing at info), and other stream errors still at warn', async () => {
    const lines: { level: number; msg: string }[] = [];
    const sink = new Writable({
      write(chunk, _encoding, callback) {
        lines.push(JSON.parse(String(chunk)) as { level: number; msg: string });
        callback();
      },
    });
    const app = Fastify({ loggerInstance: pino(serviceLoggerOptions('debug'), sink), logController: new ServiceLogs() });
    const opened = new Promise<PassThrough>((resolve) => {
      app.get('/stream', async (_req, reply) => {
        const body = new PassThrough();
        body.write('data: one\n\n');
        resolve(body);
        return reply.type('text/event-stream').send(body);
      });
    });
    await app.listen({ port: 0, host: '127.0.0.1' });
    try {
      const port = (app.server.address() as AddressInfo).port;
      await new Promise<void>((resolve) => {
        const req = http.get({ host: '127.0.0.1', port, path: '/stream' }, (res) => {
          res.once('data', () => {
            req.destroy();
            resolve();
          });
        });
      });
      await opened;
      // Wait for the close to be logged (bounded), never a fixed sleep.
      for (let i = 0; i < 200 && !lines.some((line) => line.msg === 'stream closed by the client'); i += 1) await new Promise((r) => setTimeout(r, 10));
      expect(lines.filter((line) => line.level >= 30 && /stream/.test(line.msg))).toEqual([]);
      expect(lines.find((line) => line.msg === 'stream closed by the client')?.level).toBe(20);
    } finally {
      await app.close();
    }
  });
});
