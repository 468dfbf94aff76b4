/**
 * The public live feed (docs/API.md, "Public live feed"): anonymous SSE that sends a published
 * pick PUBLIC_STREAM_DELAY_SECONDS after its publication, and only when it is then among the top
 * 50 of today's public picks; held or withdrawn picks never; resume by Last-Event-ID or
 * last_event_id; caps per client address and per instance. The service's clock is a manual one,
 * so the delay passes when the test moves it.
 */
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ManualClock } from '../../src/domain/clock.js';
import { createTestApp, type TestApp } from '../helpers/app.js';
import { HOLD, pickInput, PUBLISH } from '../helpers/fixtures.js';
import { connectSse, type SseConnection } from '../helpers/sse.js';

const NOW = new Date('2026-11-24T10:00:00.000Z');
const DELAY_S = 300;
const PATH = '/api/public/picks/stream';

let t: TestApp;
let port = 0;
const clock = new ManualClock(NOW);
const opened: SseConnection[] = [];

beforeAll(async () => {
  t = await createTestApp({
    clock,
    env: { PUBLIC_STREAM_DELAY_SECONDS: String(DELAY_S), PUBLIC_STREAMS_PER_ADDRESS: '3', PUBLIC_STREAMS_MAX: '5', TRUST_PROXY: 'loopback' },
  });
  await t.app.listen({ port: 0, host: '127.0.0.1' });
  port = (t.app.server.address() as AddressInfo).port;
});
afterAll(async () => {
  for (const stream of opened) stream.close();
  await t?.close();
});

async function connect(headers: Record<string, string> = {}, path = PATH): Promise<SseConnection> {
  const stream = await connectSse(port, path, headers);
  opened.push(stream);
  return stream;
}

/** Closes every stream of earlier tests and waits until the server has let them go (the caps count them). */
async function closeAll(): Promise<void> {
  for (const stream of opened.splice(0)) stream.close();
  await expect.poll(() => t.app.openPublicStreams(), { timeout: 5_000 }).toBe(0);
}

async function publish(team: string, odds = 2.2): Promise<string> {
  const published = await t.graphql<{ publishPick: { id: string } }>(PUBLISH, {
    input: pickInput({ homeTeam: team, selection: team, odds, referenceFairOdds: 2.0, publishedAt: clock.now().toISOString() }),
  });
  expect(published.errors).toBeUndefined();
  return published.data!.publishPick.id;
}

const frameOf = (id: string) => new RegExp(`id: (\\d+)\\nevent: pick\\.published\\ndata: ([^\\n]*"id":"${id}"[^\\n]*)\\n\\n`);

describe('the public live feed', () => {
  it('sends a pick when its delay ends, in the public shape, and never one held before then', async () => {
    const stream = await connect();
    expect(stream.status).toBe(200);
    expect(stream.headers['access-control-allow-origin']).toBe('*');
    await stream.waitFor(': stream open\nretry: 3000\n\n');
    const first = await publish('Public Athletic');
    const held = await publish('Public Held');
    clock.advance(200_000);
    const later = await publish('Public Later');
    await t.graphql(HOLD, { id: held });
    // 350 s after the first two: theirs has ended, the third's (150 s in) has not.
    clock.advance(150_000);
    const frame = frameOf(first).exec(await stream.waitFor(frameOf(first), 10_000))!;
    const today = (await t.app.inject({ method: 'GET', url: '/api/public/picks/today?limit=50' })).json() as { picks: { id: string }[] };
    expect(JSON.parse(frame[2]!)).toEqual(today.picks.find((pick) => pick.id === first));
    // The tick that sent the first saw the third not yet due, and the clock has not moved since.
    expect(stream.raw()).not.toContain(later);
    clock.advance(150_000);
    await stream.waitFor(frameOf(later), 10_000);
    expect(stream.raw()).not.toContain(held);
  });

  it('resumes after Last-Event-ID or last_event_id from the frames it sent', async () => {
    await closeAll();
    const stream = await connect();
    const a = await publish('Resume A');
    clock.advance(1_000);
    const b = await publish('Resume B');
    clock.advance(DELAY_S * 1000);
    const seqA = frameOf(a).exec(await stream.waitFor(frameOf(a), 10_000))![1]!;
    await stream.waitFor(frameOf(b), 10_000);
    for (const resumed of [await connect({ 'last-event-id': seqA }), await connect({}, `${PATH}?last_event_id=${seqA}`)]) {
      await resumed.waitFor(frameOf(b), 10_000);
      expect(resumed.raw()).not.toContain(a);
      resumed.close();
    }
    const bad = await connect({ 'last-event-id': 'yesterday' });
    expect(bad.status).toBe(400);
    expect(JSON.parse(await bad.body())).toMatchObject({ error: 'invalid_parameter' });
  });

  it('sends only picks among the top 50 of today when their delay ends', async () => {
    await closeAll();
    const stream = await connect();
    // 50 picks with a better edge than the last one: it is 51st of today's picks.
    for (let i = 0; i < 50; i++) await publish(`Top ${i}`, 3.5);
    const outside = await publish('Fifty First', 2.05);
    const marker = await publish('Top Marker', 3.6);
    clock.advance(DELAY_S * 1000);
    await stream.waitFor(frameOf(marker), 20_000);
    expect(stream.raw()).not.toContain(outside);
  });

  it('caps streams per client address (429 too_many_streams) and per instance (503 with Retry-After)', async () => {
    await closeAll();
    const from = (address: string) => connect({ 'x-forwarded-for': address });
    const a = [await from('198.51.100.1'), await from('198.51.100.1'), await from('198.51.100.1')];
    expect(a.map((s) => s.status)).toEqual([200, 200, 200]);
    const fourth = await from('198.51.100.1');
    expect(fourth.status).toBe(429);
    expect(JSON.parse(await fourth.body())).toMatchObject({ error: 'too_many_streams' });
    const b = [await from('198.51.100.2'), await from('198.51.100.2')];
    expect(b.map((s) => s.status)).toEqual([200, 200]);
    const full = await from('198.51.100.3');
    expect(full.status).toBe(503);
    expect(full.headers['retry-after']).toBe('1');
    expect(JSON.parse(await full.body())).toMatchObject({ error: 'service_unavailable' });
  });

  it('counts an IPv6 client by its /64 for the streams per address', async () => {
    await closeAll();
    const from = (address: string) => connect({ 'x-forwarded-for': address });
    const same64 = [await from('2001:db8:9:9::1'), await from('2001:db8:9:9::2'), await from('2001:db8:9:9:abcd::3')];
    expect(same64.map((s) => s.status)).toEqual([200, 200, 200]);
    const fourth = await from('2001:db8:9:9:ffff:ffff:ffff:ffff');
    expect(fourth.status).toBe(429);
    expect(JSON.parse(await fourth.body())).toMatchObject({ error: 'too_many_streams' });
    expect((await from('2001:db8:9:a::1')).status).toBe(200);
    await closeAll();
  });

  it('answers the preflight with 204 to any origin', async () => {
    const response = await t.app.inject({ method: 'OPTIONS', url: PATH, headers: { origin: 'https://embed.example', 'access-control-request-method': 'GET' } });
    expect(response.statusCode).toBe(204);
    expect(response.headers['access-control-allow-origin']).toBe('*');
  });
});
