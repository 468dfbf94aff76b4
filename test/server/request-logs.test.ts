/**
 * DebugRequestLogs (embedded mode's request logging): Fastify's per-request lines at debug, so
 * the default level (info) keeps the start banner readable.
 */
import { Writable } from 'node:stream';
import Fastify from 'fastify';
import { pino } from 'pino';
import { describe, expect, it } from 'vitest';
import { DebugRequestLogs, serviceLoggerOptions } from '../../src/server/logging.js';

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
