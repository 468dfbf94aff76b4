/**
 * flattenSentHeader must still flatten once V8 has optimized it (a charCodeAt whose result is
 * unused is dead code to the optimizing compiler), and Node must still keep the sent header
 * block where it reads it.
 */
import http from 'node:http';
import { setFlagsFromString } from 'node:v8';
import { runInNewContext } from 'node:vm';
import { expect, it } from 'vitest';
import { flattenSentHeader } from '../../adapters/stream/plugin.js';

setFlagsFromString('--expose-gc');
setFlagsFromString('--allow-natives-syntax');
const gc = runInNewContext('gc') as () => void;
// Compiled after the flag is set, so the natives parse.
const prepare = new Function('f', '%PrepareFunctionForOptimization(f)') as (f: unknown) => void;
const optimize = new Function('f', '%OptimizeFunctionOnNextCall(f)') as (f: unknown) => void;

/** A response whose header block was built as the stream's is: ten headers, concatenated. */
function sent(i: number): http.ServerResponse {
  const res = new http.ServerResponse(new http.IncomingMessage(null as never));
  res.writeHead(200, {
    'content-type': 'text/event-stream; charset=utf-8',
    'cache-control': 'no-cache',
    connection: 'keep-alive',
    'x-accel-buffering': 'no',
    'x-request-id': `req-${i}`,
    'x-ratelimit-limit': '10000',
    'x-ratelimit-remaining': String(9_999 - (i % 1_000)),
    'x-ratelimit-reset': String(1_764_370_000 + i),
    ratelimit: `limit=10000, remaining=${9_999 - (i % 1_000)}, reset=${i % 3_600}`,
    'ratelimit-policy': '10000;w=3600',
  });
  return res;
}

function bytesPerHeaderBlock(count: number): number {
  const blocks: unknown[] = [];
  for (let i = 0; i < count; i += 1) {
    const res = sent(i);
    flattenSentHeader(res);
    blocks.push((res as unknown as { _header: unknown })._header);
  }
  gc();
  const before = process.memoryUsage().heapUsed;
  blocks.length = 0;
  gc();
  return (before - process.memoryUsage().heapUsed) / count;
}

it('leaves one flat string per header block, before and after V8 optimizes it', () => {
  expect(typeof (sent(0) as unknown as { _header: unknown })._header).toBe('string'); // Node still keeps it there
  const interpreted = bytesPerHeaderBlock(2_000);
  prepare(flattenSentHeader);
  flattenSentHeader(sent(1));
  optimize(flattenSentHeader);
  flattenSentHeader(sent(2));
  const optimized = bytesPerHeaderBlock(2_000);
  console.info(`header block: ${Math.round(interpreted)} B interpreted, ${Math.round(optimized)} B optimized`);
  // A flat block of this size is ~0.4 KB; the rope ~1.2 KB.
  expect(interpreted).toBeLessThan(700);
  expect(optimized).toBeLessThan(700);
});
