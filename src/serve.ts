/**
 * The service as `npm start` runs it (through src/main.ts): configuration, runtime, demo seed
 * (embedded first start), HTTP server, graceful shutdown on SIGTERM/SIGINT.
 */
import { pino, type Logger } from 'pino';
import { buildApp } from './app.js';
import { ConfigError, loadConfig, type Config } from './config.js';
import {
  embeddedAdminToken,
  embeddedDatabaseExists,
  embeddedDemoAccount,
  embeddedLedgerSigningKey,
  embeddedWebhookSecretKey,
  loadDemoKeys,
  saveDemoKeys,
  secureDataDir,
  type DemoKeys,
} from './embedded.js';
import { dataSummary } from './persistence/data-summary.js';
import { createRuntime } from './runtime.js';
import { seedDemo } from './seed/demo.js';
import { attachDemoKeys, ensureDemoAccount, offeredDemoKeys, ownedDemoKeyTiers } from './seed/demo-account.js';
import { hostOverridesWarning, startBanner, type DataDirState, type DemoSignIn } from './server/banner.js';
import { DebugRequestLogs, listeningText, serviceLoggerOptions } from './server/logging.js';
import { startMetricsListener, type MetricsListener } from './server/metrics-listener.js';
import type { ServiceMetrics } from './services/metrics/metrics.js';
import { flushTracing } from './server/tracing-switch.js';

/** How long SIGTERM waits for requests in flight before closing their connections. */
const DRAIN_TIMEOUT_MS = 10_000;

export async function serve(): Promise<void> {
  let config: Config;
  try {
    config = loadConfig();
  } catch (error) {
    if (error instanceof ConfigError) {
      process.stderr.write(`${error.message}\n`);
      process.exit(1);
    }
    throw error;
  }
  const embedded = !config.databaseUrl;
  if (embedded) secureDataDir(config.dataDir);
  // Read before the runtime opens (and creates) the database: the banner says the data were reused.
  const hadDatabase = embedded && embeddedDatabaseExists(config.dataDir);
  const adminToken = config.adminToken ?? embeddedAdminToken(config.dataDir);
  // Embedded mode is a developer's machine: nothing at info comes before the start banner.
  const logger = pino(serviceLoggerOptions(config.logLevel, { quietListening: embedded }));
  const hostOverrides = hostOverridesWarning(config);
  if (hostOverrides) logger.warn({ setting: 'WEBHOOK_HOST_OVERRIDES' }, hostOverrides);
  const webhookSecretKey = config.webhookSecretKey ?? (config.databaseUrl ? undefined : embeddedWebhookSecretKey(config.dataDir));
  let ledgerSigningKey = config.ledger.signingKey ?? undefined;
  if (!ledgerSigningKey && !config.databaseUrl) {
    try {
      ledgerSigningKey = embeddedLedgerSigningKey(config.dataDir, config.ledger.origin);
    } catch (error) {
      process.stderr.write(`${(error as Error).message}\n`);
      process.exit(1);
    }
  }
  // The feed poller and the checkpointer start after the banner: their first log lines follow it.
  // The engine's routine "poll processed" line goes to debug there too; operators keep it at info.
  const runtime = await createRuntime(config, { adminToken, log: logger, webhookSecretKey, ledgerSigningKey, startPoller: false, startCheckpointer: false, routineLogLevel: embedded ? 'debug' : 'info' });

  let demoKeys: DemoKeys | null = embedded ? loadDemoKeys(config.dataDir) : null;
  let demoAccount: DemoSignIn | null = null;
  let seededNow = false;
  if (config.demoSeed) {
    const seeded = await seedDemo(runtime.services, runtime.orm, runtime.clock, { reviewEdge: config.valueEngine.detection.reviewEdge });
    if (seeded) {
      seededNow = true;
      demoKeys = seeded.keys;
      if (embedded) saveDemoKeys(config.dataDir, seeded.keys);
    }
    // The dashboard's demo sign-in, kept in DATA_DIR like the admin token (embedded mode only).
    // It owns the demo key of its tier, given at every start, so an account made before keys
    // were given gets it too.
    if (embedded) {
      const account = embeddedDemoAccount(config.dataDir);
      await ensureDemoAccount(runtime.services, account);
      const outcomes = demoKeys ? await attachDemoKeys(runtime.services, account.email, demoKeys) : {};
      if (demoKeys) demoKeys = offeredDemoKeys(demoKeys, outcomes);
      const keyTiers = ownedDemoKeyTiers(outcomes);
      demoAccount = { email: account.email, password: account.password, keyTiers };
    }
  }
  // What this start found: a new demo, or data from an earlier start (embedded mode).
  let data: DataDirState | null = null;
  if (embedded && (seededNow || hadDatabase)) data = { kind: seededNow ? 'seeded' : 'reused', ...(await dataSummary(runtime.orm)) };

  const app = await buildApp(runtime, {
    loggerInstance: logger,
    // Embedded mode is a developer's machine: a line per request at the default level would bury
    // the start banner, so they are logged at debug there; PostgreSQL mode keeps them at info.
    ...(config.databaseUrl ? {} : { logController: new DebugRequestLogs() }),
  });

  // Before the public port: an instance whose metrics cannot be served does not start half-seen.
  const metrics = config.metrics.port === null ? null : await listenForMetrics(runtime.metrics, config.metrics.host, config.metrics.port, logger);

  let stopping = false;
  const stop = async (signal: string) => {
    if (stopping) return;
    stopping = true;
    app.log.info({ signal }, 'draining: no new connections, finishing in-flight requests');
    // A client that never finishes its request cannot hold the drain forever.
    const cutOff = setTimeout(() => {
      app.log.warn({ afterMs: DRAIN_TIMEOUT_MS }, 'draining: closing the connections still open');
      app.server.closeAllConnections();
    }, DRAIN_TIMEOUT_MS);
    cutOff.unref();
    try {
      await app.close();
      clearTimeout(cutOff);
      // Then the engines: the relay stops, webhook attempts in flight complete and release their lease.
      await runtime.close();
      await metrics?.close();
      // The spans of the drain itself included (nothing when tracing is off).
      await flushTracing();
      process.exit(0);
    } catch (error) {
      app.log.error({ err: error }, 'shutdown failed');
      process.exit(1);
    }
  };
  process.on('SIGTERM', () => void stop('SIGTERM'));
  process.on('SIGINT', () => void stop('SIGINT'));

  await app.listen({ port: config.port, host: config.host, listenTextResolver: listeningText });
  const address = app.server.address();
  const port = typeof address === 'object' && address ? address.port : config.port;
  const host = config.host.includes(':') ? `[${config.host}]` : config.host;
  // With a credit budget the banner shows the plan: the events lists are read first (free of credits).
  const credits = await runtime.poller?.prepareBudget();
  process.stdout.write(
    startBanner(config, `http://${host === '0.0.0.0' ? '127.0.0.1' : host}:${port}`, adminToken, demoKeys, demoAccount, data, credits ? { view: credits, now: runtime.clock.now() } : null),
  );
  if (metrics) logger.info({ url: `http://${urlHost(config.metrics.host)}:${metrics.address.port}/metrics` }, 'metrics: serving the Prometheus text format');
  if (!stopping) {
    runtime.poller?.start();
    runtime.services.ledgerLog.start();
  }
}

const urlHost = (host: string): string => (host.includes(':') ? `[${host}]` : host);

/** The metrics listener, or a start refused in one line naming the variables to change. */
async function listenForMetrics(metrics: ServiceMetrics, host: string, port: number, log: Logger): Promise<MetricsListener> {
  try {
    return await startMetricsListener(metrics, host, port, log);
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code;
    const why = code === 'EADDRINUSE' ? 'is in use' : code === 'EADDRNOTAVAIL' ? 'is not an address of this machine' : `cannot be listened on (${(error as Error).message})`;
    throw new Error(`the metrics listener ${urlHost(host)}:${port} ${why}: set METRICS_PORT (or METRICS_HOST), or METRICS_PORT=off`);
  }
}
