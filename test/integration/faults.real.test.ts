/**
 * Faults on real engines: two server processes (dist/) on a PRIVATE PostgreSQL cluster and a
 * PRIVATE Redis started by this suite (the shared servers are never touched), then Redis
 * killed and restarted, PostgreSQL restarted, and an instance sent SIGTERM, all under load.
 * Each test asserts what callers see and that nothing committed is lost.
 *
 * A `.real.test.ts` suite (runs when DATABASE_URL and REDIS_URL are set); it fails, rather than
 * skips, when the PostgreSQL or Redis server binaries are missing.
 */
import net from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ADMIN_TOKEN, LEDGER_SIGNING_KEY, WEBHOOK_SECRET_KEY } from '../helpers/app.js';
import { CREATE_KEY, pickInput, PUBLISH } from '../helpers/fixtures.js';
import { startHttpsReceiver, type HttpsReceiver, type ReceivedRequest, type ReceiverResponse } from '../helpers/https-receiver.js';
import {
  ensureBuilt,
  findPostgresBin,
  findRedisServer,
  freePorts,
  migrate,
  openSql,
  pidOfConnection,
  PrivatePostgres,
  PrivateRedis,
  sleep,
  startServer,
  waitUntil,
  type ServerProcess,
  type Sql,
} from '../helpers/processes.js';
import { connectSse, type SseConnection } from '../helpers/sse.js';

/** The documented bound for a database outage: a 503 within this, never a hang. */
const FAIL_FAST_MS = 2_000;
const CREATE_HOOK = `mutation($input: CreateWebhookSubscriptionInput!) { createWebhookSubscription(input: $input) { subscription { id } } }`;

let pg: PrivatePostgres;
let redis: PrivateRedis;
let sql: Sql;
let a: ServerProcess;
let b: ServerProcess;
let receiver: HttpsReceiver;
const responders = new Map<string, (request: ReceivedRequest) => ReceiverResponse>();
const senderPid = new Map<ReceivedRequest, number | null>();
const streams: SseConnection[] = [];

/** Shared by the tests, in order. */
const state = {
  enterprise: '',
  growth: '',
  stream: null as SseConnection | null,
  outagePick: '',
};

beforeAll(async () => {
  // Fail loudly, not skip: these suites were asked for by setting DATABASE_URL and REDIS_URL.
  findPostgresBin();
  findRedisServer();
  await ensureBuilt();
  const [pgPort, redisPort, portA, portB] = await freePorts(4);
  pg = new PrivatePostgres(pgPort!);
  await pg.init();
  await pg.start();
  await pg.createDatabase('picks_faults');
  redis = new PrivateRedis(redisPort!);
  await redis.start();
  receiver = await startHttpsReceiver({
    response: (request) => {
      senderPid.set(request, pidOfConnection(request.remotePort, receiver.port, [a?.pid, b?.pid].filter(Boolean) as number[]));
      return responders.get(request.path)?.(request) ?? { status: 200 };
    },
  });
  const env = {
    DATABASE_URL: pg.url('picks_faults'),
    REDIS_URL: redis.url,
    ADMIN_TOKEN,
    WEBHOOK_SECRET_KEY,
    LEDGER_SIGNING_KEY,
    TIER_LIMITS: '{"starter":{"hourly":25},"growth":{"monthly":40}}',
    WEBHOOK_HOST_OVERRIDES: 'hooks.test=127.0.0.1',
    WEBHOOK_RETRY_SCHEDULE: '1s,1s,1s,1s,1s',
    WEBHOOK_LEASE_SECONDS: '4',
  };
  await migrate(env);
  [a, b] = await Promise.all([startServer('A', portA!, env), startServer('B', portB!, env)]);
  sql = await openSql(pg.url('picks_faults'));
}, 240_000);

afterAll(async () => {
  for (const stream of streams) stream.close();
  await Promise.all([a?.stop('SIGTERM', 10_000), b?.stop('SIGTERM', 10_000)]);
  await receiver?.close();
  await sql?.close().catch(() => undefined);
  await redis?.stop('SIGKILL');
  await pg?.destroy();
}, 60_000);

// ---------------------------------------------------------------------------------------------

interface Answer {
  status: number | 'error';
  ms: number;
  at: number;
  headers: Headers | null;
  body: unknown;
  error?: string;
}

async function call(url: string, init: RequestInit = {}): Promise<Answer> {
  const started = Date.now();
  try {
    const response = await fetch(url, { ...init, signal: AbortSignal.timeout(10_000) });
    const text = await response.text();
    let body: unknown = text;
    try {
      body = JSON.parse(text);
    } catch {
      // not JSON: kept as text, and the assertions will say so
    }
    return { status: response.status, ms: Date.now() - started, at: started, headers: response.headers, body };
  } catch (error) {
    return { status: 'error', ms: Date.now() - started, at: started, headers: null, body: null, error: String((error as Error).cause ?? error) };
  }
}

const get = (server: ServerProcess, path: string, key: string) => call(`${server.url}${path}`, { headers: { authorization: `Bearer ${key}` } });

function graphql(server: ServerProcess, query: string, variables: Record<string, unknown> = {}, authorization = `Bearer ${ADMIN_TOKEN}`): Promise<Answer> {
  return call(`${server.url}/graphql`, { method: 'POST', headers: { 'content-type': 'application/json', authorization }, body: JSON.stringify({ query, variables }) });
}

async function createKey(tier: 'STARTER' | 'GROWTH' | 'ENTERPRISE'): Promise<string> {
  const answer = await graphql(a, CREATE_KEY, { input: { tier } });
  return (answer.body as { data: { createApiKey: { key: string } } }).data.createApiKey.key;
}

async function publish(server: ServerProcess, team: string): Promise<{ answer: Answer; id: string | null }> {
  const answer = await graphql(server, PUBLISH, { input: pickInput({ homeTeam: team, selection: team }) });
  const id = (answer.body as { data?: { publishPick?: { id: string } } } | null)?.data?.publishPick?.id ?? null;
  return { answer, id };
}

async function readyz(server: ServerProcess): Promise<Answer> {
  return call(`${server.url}/readyz`);
}

/** Parallel requests on one key spread over the given servers; the statuses by server. */
async function hammer(servers: ServerProcess[], key: string, perServer: number): Promise<number[][]> {
  return Promise.all(servers.map((server) => Promise.all(Array.from({ length: perServer }, async () => (await get(server, '/api/v1/picks?limit=1', key)).status as number))));
}

const count = (statuses: number[], status: number) => statuses.filter((s) => s === status).length;

/** Background traffic until stop(): each worker sends one request after another. */
function load(workers: (() => Promise<Answer>)[]): { stop(): Promise<Answer[]> } {
  const answers: Answer[] = [];
  let running = true;
  const loops = workers.map(async (work) => {
    while (running) {
      answers.push(await work());
      await sleep(15);
    }
  });
  return {
    async stop() {
      running = false;
      await Promise.all(loops);
      return answers;
    },
  };
}

function summary(answers: Answer[]): string {
  const ms = answers.map((x) => x.ms).sort((x, y) => x - y);
  const pct = (p: number) => ms[Math.min(ms.length - 1, Math.floor((p / 100) * ms.length))];
  const statuses = Object.entries(answers.reduce<Record<string, number>>((acc, x) => ({ ...acc, [x.status]: (acc[x.status] ?? 0) + 1 }), {}));
  return `${answers.length} requests, statuses ${statuses.map(([s, n]) => `${s}x${n}`).join(' ')}, p50 ${pct(50)} ms, p99 ${pct(99)} ms, max ${ms[ms.length - 1]} ms`;
}

async function monthlyUsage(key: string): Promise<number> {
  const rows = await sql.query<{ request_count: string }>(
    `select u.request_count from monthly_usage u join api_keys k on k.id = u.api_key_id where k.key_hash = encode(sha256(convert_to(?, 'UTF8')), 'hex')`,
    [key],
  );
  return Number(rows[0]?.request_count ?? 0);
}

/** The body of one raw HTTP/1.1 response (chunked or not). */
function httpBody(response: string): string {
  const split = response.indexOf('\r\n\r\n');
  const head = response.slice(0, split).toLowerCase();
  let rest = response.slice(split + 4);
  if (!head.includes('transfer-encoding: chunked')) return rest;
  let out = '';
  for (;;) {
    const eol = rest.indexOf('\r\n');
    const size = parseInt(rest.slice(0, eol), 16);
    if (!size) return out;
    out += rest.slice(eol + 2, eol + 2 + size);
    rest = rest.slice(eol + 2 + size + 2);
  }
}

function requestsTo(path: string): ReceivedRequest[] {
  return receiver.requests.filter((request) => request.path === path);
}

function deliveredPicks(path: string): Set<string> {
  return new Set(requestsTo(path).map((r) => (JSON.parse(r.body.toString()) as { data: { id: string } }).data.id));
}

// ---------------------------------------------------------------------------------------------

describe('faults on real engines (private PostgreSQL and Redis, two server processes)', () => {
  it('Redis killed under load: every request is still answered promptly, limits fall back per instance, /readyz says degraded', async () => {
    state.enterprise = await createKey('ENTERPRISE');
    state.growth = await createKey('GROWTH');
    const hook = await graphql(a, CREATE_HOOK, { input: { url: receiver.url('hooks.test', '/hooks/faults'), events: ['PICK_PUBLISHED'] } }, `Bearer ${state.enterprise}`);
    expect(hook.status).toBe(200);
    state.stream = await connectSse(b.port, '/api/v1/picks/stream', { authorization: `Bearer ${state.enterprise}` });
    streams.push(state.stream);
    expect(state.stream.status).toBe(200);

    // Month usage before the outage, written to PostgreSQL by the periodic flush (5 s).
    const before = await hammer([a, b], state.growth, 15);
    expect(before.flat().every((s) => s === 200)).toBe(true);
    await waitUntil('30 requests of the month flushed to PostgreSQL', async () => (await monthlyUsage(state.growth)) === 30, 15_000, 250);

    const traffic = load([a, b, a, b].map((server) => () => get(server, '/api/v1/picks?limit=1', state.enterprise)));
    await sleep(500);
    await redis.stop('SIGKILL');
    const killedAt = Date.now();
    // Each instance notices at its first decision Redis fails to answer (the load sends them).
    for (const server of [a, b]) {
      await waitUntil(`${server.name} to report degraded with the fallback limiter`, async () => {
        const ready = await readyz(server);
        return ready.status === 200 && JSON.stringify(ready.body) === JSON.stringify({ status: 'degraded', checks: { database: 'up', redis: 'down' }, limiter: 'fallback' });
      }, 5_000, 100);
    }
    await sleep(1_000);
    const answers = await traffic.stop();
    console.info(`[faults] Redis down (load): ${summary(answers)}; degraded reported within ${Date.now() - killedAt} ms`);
    // Never an error, never a 429 caused by the outage, never a hang.
    expect(answers.filter((x) => x.status !== 200)).toEqual([]);
    expect(Math.max(...answers.map((x) => x.ms))).toBeLessThan(1_000);

    // The documented policy: each instance limits on its own, exactly.
    const starter = await createKey('STARTER');
    const perInstance = await hammer([a, b], starter, 40);
    expect(perInstance.map((statuses) => count(statuses, 200))).toEqual([25, 25]);
    expect(perInstance.map((statuses) => count(statuses, 429))).toEqual([15, 15]);

    // Month usage goes on from PostgreSQL's 30 in the fallback.
    expect((await hammer([a], state.growth, 4)).flat()).toEqual([200, 200, 200, 200]);

    // Writes work; webhooks do not wait for Redis (the fan-out commits without the bus).
    const published = await publish(a, 'Outage FC');
    expect(published.answer.status).toBe(200);
    expect(published.answer.ms).toBeLessThan(FAIL_FAST_MS);
    state.outagePick = published.id!;
    await waitUntil('the webhook of the pick published during the outage', () => deliveredPicks('/hooks/faults').has(state.outagePick), 10_000);
  });

  it('Redis restarted: full function returns without restarting the service; the missed event reaches the stream, limits are shared again, month usage re-seeded from PostgreSQL', async () => {
    const backOnRedis = (server: ServerProcess) =>
      waitUntil(`${server.name} back on Redis`, async () => {
        const ready = await readyz(server);
        return ready.status === 200 && (ready.body as { status: string; limiter: string }).limiter === 'redis' && (ready.body as { status: string }).status === 'ready';
      }, 10_000, 100);
    // B (with the open stream) is frozen while Redis comes back, so A's relay publishes the event
    // held back during the outage before B has re-subscribed: pub/sub alone would lose it for B.
    b.signal('SIGSTOP');
    const restartedAt = Date.now();
    try {
      await redis.start();
      await backOnRedis(a);
      await waitUntil('the held-back event published by A', async () => {
        const [row] = await sql.query<{ n: string }>('select count(*) as n from outbox_events where relayed_at is null');
        return Number(row!.n) === 0;
      }, 10_000, 100);
    } finally {
      b.signal('SIGCONT');
    }
    await backOnRedis(b);
    console.info(`[faults] Redis back: both instances ready in ${Date.now() - restartedAt} ms`);

    // The event committed while Redis was down reaches the stream that stayed open on B:
    // B caught up from the outbox once re-subscribed.
    await state.stream!.waitFor(state.outagePick, 5_000);
    // Events flow over pub/sub again, to streams on every instance.
    const onA = await connectSse(a.port, '/api/v1/picks/stream', { authorization: `Bearer ${state.enterprise}` });
    streams.push(onA);
    const started = Date.now();
    const fresh = await publish(a, 'Back FC');
    await Promise.all([state.stream!.waitFor(fresh.id!, 1_000), onA.waitFor(fresh.id!, 1_000)]);
    expect(Date.now() - started).toBeLessThan(1_000);
    onA.close();

    // One shared hourly limit again.
    const starter = await createKey('STARTER');
    const shared = await hammer([a, b], starter, 40);
    expect(count(shared.flat(), 200)).toBe(25);
    expect(count(shared.flat(), 429)).toBe(55);

    // The month: 30 before the outage (PostgreSQL) + 4 in the fallback (handed over) = 34 of 40.
    const month = (await hammer([a, b], state.growth, 10)).flat();
    expect(count(month, 200)).toBe(6);
    expect(count(month, 429)).toBe(14);
    await waitUntil('the month count of 40 in PostgreSQL', async () => (await monthlyUsage(state.growth)) === 40, 15_000, 250);
  });

  it('PostgreSQL restarted under load: JSON 503 service_unavailable within 2 s, never a hang or a 500; recovery by itself; no committed event or webhook delivery lost', async () => {
    const since = Number((await sql.query<{ seq: string }>('select coalesce(max(seq), 0) as seq from outbox_events'))[0]!.seq);
    const acknowledged: string[] = [];
    let n = 0;
    const publisher = (server: ServerProcess) => async () => {
      const { answer, id } = await publish(server, `Restart ${server.name} ${(n += 1)} FC`);
      if (id) acknowledged.push(id);
      return answer;
    };
    const traffic = load([
      () => get(a, '/api/v1/picks?limit=1', state.enterprise),
      () => get(b, '/api/v1/picks?limit=1', state.enterprise),
      () => get(a, '/api/v1/track-record?days_back=30', state.enterprise),
      publisher(a),
      publisher(b),
    ]);
    await sleep(1_000);
    const stoppedAt = Date.now();
    await pg.stop();
    // While it is down: /readyz says unavailable, within the bound.
    const ready = await readyz(b);
    expect(ready.status).toBe(503);
    expect(ready.body).toEqual({ status: 'unavailable', checks: { database: 'down', redis: 'up' }, limiter: 'redis' });
    await sleep(1_500);
    await pg.start();
    const startedAt = Date.now();
    await waitUntil('both instances ready again', async () => (await readyz(a)).status === 200 && (await readyz(b)).status === 200, 10_000, 100);
    const recoveredAt = Date.now();
    await sleep(1_500);
    const answers = await traffic.stop();
    console.info(`[faults] PostgreSQL down ${startedAt - stoppedAt} ms, ready again ${recoveredAt - startedAt} ms after its start; ${summary(answers)}`);

    // What callers saw: success, or a prompt JSON 503 service_unavailable with Retry-After.
    const failures = answers.filter((x) => x.status !== 200);
    expect(failures.length).toBeGreaterThan(0);
    for (const failure of failures) {
      expect(failure.status).toBe(503);
      expect(failure.headers!.get('retry-after')).toBe('1');
      const body = failure.body as { error?: string; errors?: { extensions: { code: string } }[] };
      const code = body.error ?? body.errors?.[0]?.extensions.code;
      expect(code).toBe('service_unavailable');
    }
    expect(Math.max(...answers.map((x) => x.ms))).toBeLessThan(FAIL_FAST_MS);
    // Recovered by itself: everything after readiness returned succeeded.
    expect(answers.filter((x) => x.at > recoveredAt + 200 && x.status !== 200)).toEqual([]);

    // Nothing committed is lost: every pick.published event since the start of the test (the
    // database is the truth; the acknowledged ones are among them) reaches the open stream and
    // the webhook receiver, and the outbox is relayed.
    const committed = (await sql.query<{ pick_id: string }>(`select payload->'pick'->>'id' as pick_id from outbox_events where type = 'pick.published' and seq > ? order by seq`, [since])).map(
      (row) => row.pick_id,
    );
    expect(committed).toEqual(expect.arrayContaining(acknowledged));
    console.info(`[faults] PostgreSQL restart: ${acknowledged.length} publishes acknowledged, ${committed.length} committed`);
    for (const pick of committed) await state.stream!.waitFor(pick, 10_000);
    await waitUntil('a webhook delivery of every committed event', () => committed.every((pick) => deliveredPicks('/hooks/faults').has(pick)), 15_000, 100);
    await waitUntil('every delivery succeeded and the outbox relayed', async () => {
      const [row] = await sql.query<{ pending: string; unrelayed: string }>(
        `select (select count(*) from webhook_deliveries where status <> 'succeeded') as pending, (select count(*) from outbox_events where relayed_at is null) as unrelayed`,
      );
      return Number(row!.pending) === 0 && Number(row!.unrelayed) === 0;
    }, 15_000, 200);
  });

  it('SIGTERM: a request in flight completes, open streams end cleanly, the webhook attempt in flight completes and nothing stays leased; exit code 0', async () => {
    const path = '/hooks/sigterm';
    responders.set(path, () => ({ status: 200, body: 'slow', delayMs: 1_500 }));
    const hook = await graphql(a, CREATE_HOOK, { input: { url: receiver.url('hooks.test', path), events: ['PICK_PUBLISHED'] } }, `Bearer ${state.enterprise}`);
    expect(hook.status).toBe(200);
    const streamA = await connectSse(a.port, '/api/v1/picks/stream', { authorization: `Bearer ${state.enterprise}` });
    const streamB = state.stream!;
    streams.push(streamA);

    // A webhook attempt in flight: the instance sending it is the one that gets SIGTERM.
    const inFlight = await publish(b, 'Drain FC');
    await waitUntil('the attempt in flight', () => requestsTo(path).length === 1, 10_000, 5);
    const pid = senderPid.get(requestsTo(path)[0]!);
    const [target, other] = pid === a.pid ? [a, b] : [b, a];
    expect(pid).toBe(target.pid);
    const targetStream = target === a ? streamA : streamB;
    await targetStream.waitFor(inFlight.id!, 5_000);

    // A request in flight: headers and part of the body sent before SIGTERM, the rest after.
    const body = JSON.stringify({ query: PUBLISH, variables: { input: pickInput({ homeTeam: 'Slow Upload FC', selection: 'Slow Upload FC' }) } });
    const head = `POST /graphql HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\nAuthorization: Bearer ${ADMIN_TOKEN}\r\nContent-Length: ${Buffer.byteLength(body)}\r\n\r\n`;
    const socket = net.connect(target.port, '127.0.0.1');
    let raw = '';
    socket.setEncoding('utf8');
    socket.on('data', (chunk: string) => (raw += chunk));
    const closed = new Promise<void>((resolve) => socket.on('close', () => resolve()));
    socket.on('error', () => undefined);
    await new Promise<void>((resolve) => socket.once('connect', () => resolve()));
    socket.write(head + body.slice(0, 100));
    await sleep(100);
    const signalledAt = Date.now();
    target.signal('SIGTERM');
    await sleep(400);
    socket.write(body.slice(100));
    // Answered in full, then the connection is closed (not kept alive on a draining instance).
    await closed;
    expect(raw).toMatch(/^HTTP\/1\.1 200 /);
    expect(raw.toLowerCase()).toContain('\r\nconnection: close\r\n');
    const slowPick = (JSON.parse(httpBody(raw)) as { data: { publishPick: { id: string } } }).data.publishPick.id;

    // The stream ends with a clean end of response after whole frames.
    const streamed = await targetStream.body();
    expect(streamed.endsWith('\n\n')).toBe(true);
    const status = await target.exited;
    expect(status).toEqual({ code: 0, signal: null });
    console.info(`[faults] SIGTERM: ${target.name} exited 0 after ${Date.now() - signalledAt} ms`);

    // The attempt in flight completed on the draining instance: sent once, succeeded, unleased.
    const [delivery] = await sql.query<{ status: string; attempt_count: number; locked_until: Date | null }>(
      `select d.status, d.attempt_count, d.locked_until from webhook_deliveries d join outbox_events e on e.id = d.event_id
        where e.payload->'pick'->>'id' = ? and d.subscription_id = (select id from webhook_subscriptions where url like ?)`,
      [inFlight.id, `%${path}`],
    );
    expect(delivery).toEqual({ status: 'succeeded', attempt_count: 1, locked_until: null });
    expect(requestsTo(path).filter((r) => (JSON.parse(r.body.toString()) as { data: { id: string } }).data.id === inFlight.id)).toHaveLength(1);
    // No completed delivery keeps a lease.
    expect(await sql.query(`select id from webhook_deliveries where status <> 'pending' and locked_until is not null`)).toEqual([]);

    // The pick committed by the request in flight is not lost: the other instance relays it.
    const otherStream = other === a ? streamA : streamB;
    await otherStream.waitFor(slowPick, 5_000);
    await waitUntil('its webhook delivery', () => deliveredPicks('/hooks/faults').has(slowPick), 10_000);
  });
});
