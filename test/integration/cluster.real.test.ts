/**
 * Three real server processes (`npm run cluster`'s script over dist/) on one PostgreSQL and one
 * Redis: shared limits, events on every instance, webhook attempts sent once, and failover of
 * the relay and the webhook dispatchers when an instance is killed with SIGKILL.
 *
 * A `.real.test.ts` suite: runs when DATABASE_URL and REDIS_URL are set. The database is a
 * scratch one on that server (dropped afterwards); Redis channels are per deployment, so the
 * shared Redis is safe. dist/ is built first when missing or stale.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ADMIN_TOKEN, LEDGER_SIGNING_KEY, WEBHOOK_SECRET_KEY } from '../helpers/app.js';
import { createTestDatabase, type TestDatabase } from '../helpers/database.js';
import { CREATE_KEY, pickInput, PUBLISH } from '../helpers/fixtures.js';
import { startHttpsReceiver, type HttpsReceiver, type ReceivedRequest, type ReceiverResponse } from '../helpers/https-receiver.js';
import {
  ensureBuilt,
  freePorts,
  openSql,
  pidOfConnection,
  sleep,
  startCluster,
  waitUntil,
  type ClusterInstance,
  type ClusterProcess,
  type Sql,
} from '../helpers/processes.js';
import { connectSse, type SseConnection } from '../helpers/sse.js';
import { RELAY_LOCK } from '../../src/persistence/outbox-repository.js';

const LEASE_SECONDS = 4;
const CREATE_HOOK = `mutation($input: CreateWebhookSubscriptionInput!) { createWebhookSubscription(input: $input) { subscription { id } } }`;

let db: TestDatabase;
let databaseUrl: string;
let receiver: HttpsReceiver;
let cluster: ClusterProcess;
let sql: Sql;
const streams: SseConnection[] = [];
/** Per receiver path: how to answer; the pid of the sending instance is noted per request. */
const responders = new Map<string, (request: ReceivedRequest) => ReceiverResponse>();
const senderPid = new Map<ReceivedRequest, number | null>();

beforeAll(async () => {
  await ensureBuilt();
  receiver = await startHttpsReceiver({
    response: (request) => {
      // While the connection is open: which instance sent this attempt.
      senderPid.set(request, pidOfConnection(request.remotePort, receiver.port, cluster?.instances.map((i) => i.pid) ?? []));
      return responders.get(request.path)?.(request) ?? { status: 200 };
    },
  });
  db = await createTestDatabase();
  if (db.target.kind !== 'postgres') throw new Error('cluster suite needs DATABASE_URL');
  databaseUrl = db.target.url;
  const [basePort] = await freePorts(3);
  cluster = await startCluster(3, basePort!, {
    DATABASE_URL: databaseUrl,
    REDIS_URL: process.env.REDIS_URL!.trim(),
    ADMIN_TOKEN,
    WEBHOOK_SECRET_KEY,
    LEDGER_SIGNING_KEY,
    TIER_LIMITS: '{"starter":{"hourly":25}}',
    WEBHOOK_HOST_OVERRIDES: 'hooks.test=127.0.0.1',
    WEBHOOK_RETRY_SCHEDULE: '1s,1s,1s,1s,1s',
    WEBHOOK_LEASE_SECONDS: String(LEASE_SECONDS),
  });
  sql = await openSql(databaseUrl);
}, 240_000);

afterAll(async () => {
  for (const stream of streams) stream.close();
  await cluster?.stop('SIGTERM', 15_000);
  await receiver?.close();
  await sql?.close();
  await db?.drop();
}, 60_000);

type GraphQLBody<T> = { data?: T; errors?: { message: string; extensions?: { code?: string } }[] };

async function gql<T>(instance: ClusterInstance, query: string, variables: Record<string, unknown> = {}, authorization = `Bearer ${ADMIN_TOKEN}`): Promise<GraphQLBody<T>> {
  const response = await fetch(`${instance.url}/graphql`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', authorization },
    body: JSON.stringify({ query, variables }),
    signal: AbortSignal.timeout(10_000),
  });
  return (await response.json()) as GraphQLBody<T>;
}

async function createKey(tier: 'STARTER' | 'GROWTH' | 'ENTERPRISE'): Promise<string> {
  const result = await gql<{ createApiKey: { key: string } }>(alive()[0]!, CREATE_KEY, { input: { tier } });
  return result.data!.createApiKey.key;
}

async function publish(instance: ClusterInstance, team: string): Promise<string> {
  const result = await gql<{ publishPick: { id: string } }>(instance, PUBLISH, { input: pickInput({ homeTeam: team, selection: team }) });
  if (!result.data) throw new Error(`publish failed: ${JSON.stringify(result.errors)}`);
  return result.data.publishPick.id;
}

async function subscribeHook(instance: ClusterInstance, key: string, path: string): Promise<string> {
  const result = await gql<{ createWebhookSubscription: { subscription: { id: string } } }>(
    instance,
    CREATE_HOOK,
    { input: { url: receiver.url('hooks.test', path), events: ['PICK_PUBLISHED'] } },
    `Bearer ${key}`,
  );
  if (!result.data) throw new Error(`subscription failed: ${JSON.stringify(result.errors)}`);
  return result.data.createWebhookSubscription.subscription.id;
}

function alive(): ClusterInstance[] {
  return cluster.instances.filter((instance) => {
    try {
      process.kill(instance.pid, 0);
      return true;
    } catch {
      return false;
    }
  });
}

function requestsTo(path: string): ReceivedRequest[] {
  return receiver.requests.filter((request) => request.path === path);
}

const header = (request: ReceivedRequest, name: string) => String(request.headers[name]);

describe('three instances started by npm run cluster on one PostgreSQL and one Redis', () => {
  it('migrates first, starts the instances on consecutive ports and prefixes every line with its source', async () => {
    const { instances } = cluster;
    expect(instances.map((i) => i.name)).toEqual(['picks-1', 'picks-2', 'picks-3']);
    expect(instances.map((i) => i.port - instances[0]!.port)).toEqual([0, 1, 2]);
    expect(new Set(instances.map((i) => i.pid)).size).toBe(3);
    const migrated = cluster.lines.findIndex((line) => /^\[migrate\] Applied: /.test(line));
    const firstStart = cluster.lines.findIndex((line) => /^\[cluster\] picks-1 started/.test(line));
    expect(migrated).toBeGreaterThanOrEqual(0);
    expect(migrated).toBeLessThan(firstStart);
    for (const instance of instances) {
      expect(cluster.lines).toContain(`[${instance.name}] Picks service listening on ${instance.url}`);
      const ready = await fetch(`${instance.url}/readyz`);
      expect(ready.status).toBe(200);
      expect(await ready.json()).toEqual({ status: 'ready', checks: { database: 'up', redis: 'up' }, limiter: 'redis' });
    }
    for (const line of cluster.lines.filter((l) => l.trim() !== '')) expect(line).toMatch(/^\[(cluster|migrate|picks-[1-3])\] /);
  });

  it('shares the hourly limit exactly: 75 parallel requests over 3 instances on a 25/h key admit 25', async () => {
    const key = await createKey('STARTER');
    const responses = await Promise.all(
      Array.from({ length: 75 }, async (_, i) => {
        const response = await fetch(`${cluster.instances[i % 3]!.url}/api/v1/picks?limit=1`, { headers: { authorization: `Bearer ${key}` } });
        await response.arrayBuffer();
        return { status: response.status, remaining: response.headers.get('x-ratelimit-remaining'), instance: i % 3 };
      }),
    );
    const admitted = responses.filter((r) => r.status === 200);
    expect(admitted).toHaveLength(25);
    expect(responses.filter((r) => r.status === 429)).toHaveLength(50);
    // One counter: the admitted requests saw every remaining value once.
    expect(admitted.map((r) => Number(r.remaining)).sort((a, b) => a - b)).toEqual(Array.from({ length: 25 }, (_, i) => i));
  });

  it('a pick published through one instance reaches the SSE streams on every instance within 1 s', async () => {
    const key = await createKey('ENTERPRISE');
    const connections = await Promise.all(cluster.instances.map((i) => connectSse(i.port, '/api/v1/picks/stream', { authorization: `Bearer ${key}` })));
    streams.push(...connections);
    expect(connections.map((c) => c.status)).toEqual([200, 200, 200]);
    const started = Date.now();
    const id = await publish(cluster.instances[0]!, 'Everywhere FC');
    const latencies = await Promise.all(connections.map(async (c) => (await c.waitFor(id, 1_000), Date.now() - started)));
    console.info(`[cluster] publish -> stream latency per instance (ms): ${latencies.join(', ')}`);
    for (const latency of latencies) expect(latency).toBeLessThan(1_000);
    for (const c of connections) c.close();
  });

  it('with three dispatchers, each delivery is sent exactly once per attempt (first attempt 500, retry 200)', async () => {
    const key = await createKey('GROWTH');
    const path = '/hooks/once-per-attempt';
    responders.set(path, (request) => {
      const seen = requestsTo(path).filter((r) => header(r, 'x-service-delivery') === header(request, 'x-service-delivery'));
      return seen.length === 1 ? { status: 500, body: 'try again' } : { status: 200, body: 'ok' };
    });
    const subscriptionId = await subscribeHook(cluster.instances[1]!, key, path);
    const picks = await Promise.all(Array.from({ length: 9 }, (_, i) => publish(cluster.instances[i % 3]!, `Once ${i} FC`)));
    await waitUntil('18 attempts at the receiver', () => requestsTo(path).length >= 18, 20_000);
    // Give any duplicate time to show up: dispatchers poll every 250 ms.
    await sleep(1_500);
    const requests = requestsTo(path);
    expect(requests).toHaveLength(18);
    const byDelivery = new Map<string, ReceivedRequest[]>();
    for (const r of requests) byDelivery.set(header(r, 'x-service-delivery'), [...(byDelivery.get(header(r, 'x-service-delivery')) ?? []), r]);
    expect(byDelivery.size).toBe(9);
    for (const attempts of byDelivery.values()) {
      expect(attempts).toHaveLength(2);
      // Standard Webhooks timestamp is the attempt time: the retry waited the 1 s schedule.
      expect(Number(header(attempts[1]!, 'webhook-timestamp'))).toBeGreaterThanOrEqual(Number(header(attempts[0]!, 'webhook-timestamp')));
      expect(attempts[1]!.receivedAt.getTime() - attempts[0]!.receivedAt.getTime()).toBeGreaterThanOrEqual(900);
    }
    const events = new Set(requests.map((r) => (JSON.parse(r.body.toString()) as { data: { id: string } }).data.id));
    expect([...events].sort()).toEqual([...picks].sort());
    const rows = await sql.query<{ status: string; attempt_count: number; locked_until: Date | null; attempts: string }>(
      `select d.status, d.attempt_count, d.locked_until, (select count(*) from webhook_delivery_attempts a where a.delivery_id = d.id) as attempts
         from webhook_deliveries d where d.subscription_id = ?`,
      [subscriptionId],
    );
    expect(rows).toHaveLength(9);
    for (const row of rows) expect({ ...row, attempts: Number(row.attempts) }).toEqual({ status: 'succeeded', attempt_count: 2, locked_until: null, attempts: 2 });
    const senders = new Set(requests.map((r) => senderPid.get(r)));
    console.info(`[cluster] attempts sent by ${senders.size} distinct instance(s)`);
    expect(senders.has(null)).toBe(false);
    expect(senders.size).toBeGreaterThanOrEqual(2);
  });

  it('SIGKILL of the instance relaying, caught holding the relay lock mid-batch: the survivors relay what it held up, every committed event reaches their streams and the receiver', async () => {
    const enterprise = await createKey('ENTERPRISE');
    const growth = await createKey('GROWTH');
    const path = '/hooks/relay-failover';
    await subscribeHook(cluster.instances[0]!, growth, path);
    const connections = new Map(
      await Promise.all(cluster.instances.map(async (i) => [i.pid, await connectSse(i.port, '/api/v1/picks/stream', { authorization: `Bearer ${enterprise}` })] as const)),
    );
    streams.push(...connections.values());
    const since = (await sql.query<{ seq: string }>('select coalesce(max(seq), 0) as seq from outbox_events'))[0]!.seq;

    // Freeze every instance at once and look who holds the relay lock (pg_locks -> its
    // connection -> its process); keep that one frozen inside its relay transaction, let the
    // others go. Relay transactions are short (a few ms every 100 ms), so this takes some tries.
    const databasePort = Number(new URL(databaseUrl).port || 5432);
    const pids = cluster.instances.map((i) => i.pid);
    const holderQuery = `select l.pid, a.client_port from pg_locks l join pg_stat_activity a on a.pid = l.pid
                          where l.locktype = 'advisory' and l.classid = 0 and l.objid = ? and l.granted`;
    let victim: ClusterInstance | null = null;
    let tries = 0;
    const deadline = Date.now() + 40_000;
    while (!victim && Date.now() < deadline) {
      tries += 1;
      for (const pid of pids) process.kill(pid, 'SIGSTOP');
      let holderPid: number | null = null;
      try {
        const [holder] = await sql.query<{ pid: number; client_port: number }>(holderQuery, [RELAY_LOCK]);
        if (holder) {
          // A COMMIT sent just before the freeze may still release it: look again a moment later.
          await sleep(50);
          const [still] = await sql.query<{ pid: number; client_port: number }>(`${holderQuery} and l.pid = ?`, [RELAY_LOCK, holder.pid]);
          holderPid = still ? pidOfConnection(still.client_port, databasePort, pids) : null;
        }
      } finally {
        for (const pid of pids) if (pid !== holderPid) process.kill(pid, 'SIGCONT');
      }
      victim = cluster.instances.find((i) => i.pid === holderPid) ?? null;
      if (!victim) await sleep(20 + Math.random() * 30);
    }
    if (!victim) throw new Error(`no instance caught holding the relay lock in ${tries} tries`);
    const frozen = victim as unknown as ClusterInstance;
    const survivors = cluster.instances.filter((i) => i !== frozen);

    // Picks committed through the survivors now cannot be relayed by anyone.
    const published = await Promise.all(Array.from({ length: 6 }, (_, i) => publish(survivors[i % 2]!, `Held ${i} FC`)));
    await sleep(500);
    const [held] = await sql.query<{ n: string }>('select count(*) as n from outbox_events where relayed_at is null and seq > ?', [since]);
    expect(Number(held!.n)).toBe(6);
    for (const pid of survivors.map((i) => i.pid)) expect(connections.get(pid)!.raw()).not.toContain(published[0]);

    const killedAt = Date.now();
    process.kill(frozen.pid, 'SIGKILL');
    await cluster.waitForLine(new RegExp(`^\\[cluster\\] ${frozen.name} killed by SIGKILL \\(not restarted`), 5_000);

    // The database is the truth: every committed pick.published event since the start.
    const committed = await sql.query<{ id: string; pick_id: string }>(
      `select id, payload->'pick'->>'id' as pick_id from outbox_events where type = 'pick.published' and seq > ? order by seq`,
      [since],
    );
    expect(committed.map((row) => row.pick_id).sort()).toEqual([...published].sort());
    for (const pid of survivors.map((i) => i.pid)) {
      for (const pick of published) await connections.get(pid)!.waitFor(pick, 5_000);
    }
    console.info(`[cluster] relay failover: ${frozen.name} frozen holding the relay lock after ${tries} look(s); 6 held events reached both survivors' streams ${Date.now() - killedAt} ms after its SIGKILL`);
    await waitUntil('a delivery of every committed event', () => {
      const delivered = new Set(requestsTo(path).map((r) => (JSON.parse(r.body.toString()) as { id: string }).id));
      return committed.every((row) => delivered.has(row.id));
    }, 10_000);
    await waitUntil('the outbox relayed', async () => Number((await sql.query<{ n: string }>('select count(*) as n from outbox_events where relayed_at is null'))[0]!.n) === 0, 5_000);
    for (const c of connections.values()) c.close();
  }, 90_000);

  it('SIGKILL of the instance in the middle of a webhook attempt: a survivor takes the delivery over when the lease ends, same delivery id', async () => {
    const survivors = alive();
    expect(survivors).toHaveLength(2);
    const key = await createKey('GROWTH');
    const path = '/hooks/lease-takeover';
    // The first attempt of each delivery never gets an answer; the next one does.
    responders.set(path, (request) => (requestsTo(path).filter((r) => header(r, 'x-service-delivery') === header(request, 'x-service-delivery')).length === 1 ? 'hang' : { status: 200 }));
    const subscriptionId = await subscribeHook(survivors[0]!, key, path);
    await publish(survivors[0]!, 'Lease FC');
    const [first] = await waitUntil('the first attempt', () => (requestsTo(path).length > 0 ? requestsTo(path) : null), 10_000, 5);
    const victimPid = senderPid.get(first!);
    expect(survivors.map((i) => i.pid)).toContain(victimPid);
    process.kill(victimPid!, 'SIGKILL');
    const [leased] = await sql.query<{ locked_until: Date; status: string }>('select locked_until, status from webhook_deliveries where subscription_id = ?', [subscriptionId]);
    expect(leased!.status).toBe('pending');
    expect(new Date(leased!.locked_until).getTime()).toBeGreaterThan(Date.now());

    await waitUntil('the takeover attempt', () => requestsTo(path).length >= 2, (LEASE_SECONDS + 5) * 1000);
    const second = requestsTo(path)[1]!;
    expect(header(second, 'x-service-delivery')).toBe(header(first!, 'x-service-delivery'));
    expect(second.body.equals(first!.body)).toBe(true);
    const survivor = survivors.find((i) => i.pid !== victimPid)!;
    expect(senderPid.get(second)).toBe(survivor.pid);
    const waited = second.receivedAt.getTime() - first!.receivedAt.getTime();
    console.info(`[cluster] lease takeover after ${waited} ms (lease ${LEASE_SECONDS} s)`);
    expect(waited).toBeGreaterThanOrEqual(LEASE_SECONDS * 1000 - 500);
    expect(waited).toBeLessThan(LEASE_SECONDS * 1000 + 3_000);
    await waitUntil('the delivery to succeed', async () => {
      const [row] = await sql.query<{ status: string }>('select status from webhook_deliveries where subscription_id = ?', [subscriptionId]);
      return row?.status === 'succeeded';
    }, 5_000);
    const [row] = await sql.query<{ attempt_count: number; locked_until: Date | null; attempts: string }>(
      `select d.attempt_count, d.locked_until, (select count(*) from webhook_delivery_attempts a where a.delivery_id = d.id) as attempts
         from webhook_deliveries d where d.subscription_id = ?`,
      [subscriptionId],
    );
    // The orphaned attempt never completed, so the log holds the takeover alone.
    expect({ ...row, attempts: Number(row!.attempts) }).toEqual({ attempt_count: 1, locked_until: null, attempts: 1 });
    expect(requestsTo(path)).toHaveLength(2);
  });

  it('SIGTERM to the cluster is forwarded; the survivor finishes its attempt in flight, exits 0 and leaves nothing leased', async () => {
    const [survivor] = alive();
    // Let the orphans of the kills above settle first (their leases are LEASE_SECONDS long).
    await waitUntil('orphaned leases to be taken over', async () => {
      const rows = await sql.query('select id from webhook_deliveries where locked_until > now()');
      return rows.length === 0;
    }, (LEASE_SECONDS + 6) * 1000, 200);
    const key = await createKey('GROWTH');
    const path = '/hooks/drain';
    responders.set(path, () => ({ status: 200, body: 'slow but fine', delayMs: 1_500 }));
    const subscriptionId = await subscribeHook(survivor!, key, path);
    await publish(survivor!, 'Drain FC');
    await waitUntil('the attempt in flight', () => requestsTo(path).length === 1, 10_000, 5);
    cluster.signal('SIGTERM');
    const status = await cluster.exited;
    const [delivery] = await sql.query<{ status: string; locked_until: Date | null }>('select status, locked_until from webhook_deliveries where subscription_id = ?', [subscriptionId]);
    expect(delivery).toEqual({ status: 'succeeded', locked_until: null });
    expect(cluster.lines).toContain('[cluster] SIGTERM: sending SIGTERM to 1 process(es)');
    expect(cluster.lines).toContain(`[cluster] ${survivor!.name} exited with code 0`);
    expect(cluster.lines).toContain('[cluster] 2 instance(s) did not stop cleanly');
    expect(status).toEqual({ code: 1, signal: null });
    const leased = await sql.query('select id from webhook_deliveries where locked_until is not null and (status <> ? or locked_until > now())', ['pending']);
    expect(leased).toEqual([]);
  });

  it('a second cluster on the same database: migrations are a no-op, and SIGINT stops every instance with code 0', async () => {
    const [basePort] = await freePorts(2);
    const second = await startCluster(2, basePort!, { DATABASE_URL: databaseUrl, REDIS_URL: process.env.REDIS_URL!.trim(), ADMIN_TOKEN, WEBHOOK_SECRET_KEY, LEDGER_SIGNING_KEY });
    try {
      expect(second.lines).toContain('[migrate] Database is up to date.');
      second.signal('SIGINT');
      expect(await second.exited).toEqual({ code: 0, signal: null });
      expect(second.lines).toContain('[cluster] every instance stopped cleanly');
      expect(second.lines.filter((line) => / exited with code 0$/.test(line))).toHaveLength(2);
    } finally {
      await second.stop('SIGKILL');
    }
  }, 60_000);
});
