/**
 * Traces on PostgreSQL and Redis (a `.real.test.ts` suite: runs when DATABASE_URL and REDIS_URL
 * are set, as in CI's second phase). test/integration/tracing.test.ts covers embedded mode; here
 * the SQL spans come from OpenTelemetry's pg instrumentation (MikroORM imports `pg` as ESM: the
 * loader hook must have wrapped it), and request lines are at info.
 */
import { randomBytes } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ADMIN_TOKEN, LEDGER_SIGNING_KEY, WEBHOOK_SECRET_KEY } from '../helpers/app.js';
import { createTestDatabase, type TestDatabase } from '../helpers/database.js';
import { CREATE_KEY } from '../helpers/fixtures.js';
import { SPAN_KIND, startOtlpReceiver, type OtlpReceiver, type ReceivedSpan } from '../helpers/otlp-receiver.js';
import { ensureBuilt, freePorts, migrate, startServer, waitUntil, type ServerProcess } from '../helpers/processes.js';

let db: TestDatabase;
let otlp: OtlpReceiver;
let server: ServerProcess;

beforeAll(async () => {
  await ensureBuilt();
  db = await createTestDatabase();
  if (db.target.kind !== 'postgres') throw new Error('this suite needs DATABASE_URL');
  const env = { DATABASE_URL: db.target.url, REDIS_URL: process.env.REDIS_URL!.trim(), ADMIN_TOKEN, WEBHOOK_SECRET_KEY, LEDGER_SIGNING_KEY };
  await migrate(env);
  otlp = await startOtlpReceiver();
  const [port] = await freePorts(1);
  server = await startServer('traced-postgres', port!, {
    ...env,
    LOG_LEVEL: 'info',
    OTEL_EXPORTER_OTLP_ENDPOINT: otlp.endpoint,
    OTEL_EXPORTER_OTLP_PROTOCOL: 'http/json',
    OTEL_BSP_SCHEDULE_DELAY: '100',
  });
}, 180_000);

afterAll(async () => {
  await server?.stop('SIGTERM', 15_000);
  await otlp?.close();
  await db?.drop();
}, 60_000);

function ancestorsOf(span: ReceivedSpan, spans: readonly ReceivedSpan[]): ReceivedSpan[] {
  const byId = new Map(spans.map((candidate) => [candidate.spanId, candidate]));
  const chain: ReceivedSpan[] = [];
  for (let parent = span.parentSpanId && byId.get(span.parentSpanId); parent; parent = parent.parentSpanId && byId.get(parent.parentSpanId)) chain.push(parent);
  return chain;
}

describe('the built server on PostgreSQL and Redis with an OTLP endpoint', () => {
  it("GET /api/v1/picks continues the caller's trace with the GraphQL operation, pg's SQL spans (no values in their text) and Redis commands; its info line carries the trace", async () => {
    const created = await fetch(`${server.url}/graphql`, {
      method: 'POST',
      headers: { authorization: `Bearer ${ADMIN_TOKEN}`, 'content-type': 'application/json' },
      body: JSON.stringify({ query: CREATE_KEY, variables: { input: { tier: 'ENTERPRISE', label: 'tracing' } } }),
    });
    const key = ((await created.json()) as { data: { createApiKey: { key: string } } }).data.createApiKey.key;
    const traceId = randomBytes(16).toString('hex');
    const callerSpanId = randomBytes(8).toString('hex');
    const answer = await fetch(`${server.url}/api/v1/picks`, { headers: { authorization: `Bearer ${key}`, traceparent: `00-${traceId}-${callerSpanId}-01` } });
    expect(answer.status).toBe(200);
    await answer.arrayBuffer();

    const spans = await waitUntil('the request trace with HTTP, GraphQL, SQL and Redis spans', () => {
      const found = otlp.spansOf(traceId);
      const complete = ['@fastify/otel', 'picks-service.graphql', '@opentelemetry/instrumentation-pg', '@opentelemetry/instrumentation-ioredis'].every((scope) => found.some((span) => span.scope === scope));
      return complete ? found : null;
    }, 20_000);
    const http = spans.find((span) => span.kind === SPAN_KIND.SERVER)!;
    expect(http.parentSpanId).toBe(callerSpanId);
    const operation = spans.find((span) => span.scope === 'picks-service.graphql')!;
    const sql = spans.filter((span) => span.scope === '@opentelemetry/instrumentation-pg' && span.attributes['db.query.text'] !== undefined);
    expect(sql.length).toBeGreaterThan(0);
    expect(sql.some((span) => ancestorsOf(span, spans).includes(operation))).toBe(true);
    for (const span of sql) {
      expect(span.attributes['db.system.name']).toBe('postgresql');
      expect(String(span.attributes['db.query.text'])).not.toMatch(/'[^']*'|[0-9a-f]{32}/);
    }
    for (const span of spans) if (span !== http) expect(ancestorsOf(span, spans), span.name).toContain(http);

    const completed = await waitUntil('the request line', () =>
      server.lines.filter((line) => line.startsWith('{')).map((line) => JSON.parse(line) as Record<string, unknown>).find((record) => record.msg === 'request completed' && record.trace_id === traceId),
    );
    expect(completed).toMatchObject({ level: 30, span_id: http.spanId });
  });
});
