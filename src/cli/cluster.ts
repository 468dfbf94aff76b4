/**
 * `npm run cluster`: N instances of the real server (dist/src/main.js, one child process each)
 * on consecutive ports, against one PostgreSQL (DATABASE_URL) and one Redis (REDIS_URL), for
 * trying scale-out and failover on one machine (docs/OPERATIONS.md).
 *
 * - Validates the environment the way every instance will (src/config.ts), plus REDIS_URL,
 *   which instances sharing limits and events need; then applies migrations (`npm run
 *   migrate` semantics) before starting anything.
 * - CLUSTER_INSTANCES (default 3, 1 to 32) instances named picks-1 .. picks-N listen on
 *   CLUSTER_BASE_PORT (default 3001) upwards; every other variable is passed through.
 * - Each line a child writes is prefixed with its name (`[picks-2] ...`); the cluster's own
 *   lines with `[cluster]`, including each child's pid and port, and one line once every
 *   instance answers /healthz.
 * - SIGTERM / SIGINT are forwarded to every child (a second one sends SIGKILL); the script
 *   exits once all children have exited: 0 when every child exited with code 0, else 1.
 *   A child that dies on its own (or is killed) is reported and not restarted; the others
 *   keep running, so failover can be watched.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { createInterface } from 'node:readline';
import type { Readable, Writable } from 'node:stream';
import { fileURLToPath } from 'node:url';
import { ConfigError, loadClusterConfig, loadConfig } from '../config.js';

const MAIN = fileURLToPath(new URL('../main.js', import.meta.url));
const MIGRATE = fileURLToPath(new URL('./migrate.js', import.meta.url));
const READY_TIMEOUT_MS = 60_000;

function log(message: string): void {
  process.stdout.write(`[cluster] ${message}\n`);
}

function fail(message: string): never {
  process.stderr.write(`[cluster] ${message}\n`);
  process.exit(1);
}

/** Copies a child's output line by line with its name in front. */
function prefixLines(stream: Readable | null, name: string, out: Writable): void {
  if (!stream) return;
  createInterface({ input: stream, crlfDelay: Infinity }).on('line', (line) => out.write(`[${name}] ${line}\n`));
}

function spawnNode(script: string, name: string, env: NodeJS.ProcessEnv): ChildProcess {
  const child = spawn(process.execPath, [script], { env, stdio: ['ignore', 'pipe', 'pipe'] });
  prefixLines(child.stdout, name, process.stdout);
  prefixLines(child.stderr, name, process.stderr);
  return child;
}

function exited(child: ChildProcess): Promise<{ code: number | null; signal: NodeJS.Signals | null }> {
  return new Promise((resolve) => {
    if (child.exitCode !== null || child.signalCode !== null) resolve({ code: child.exitCode, signal: child.signalCode });
    else child.once('exit', (code, signal) => resolve({ code, signal }));
  });
}

function describeExit({ code, signal }: { code: number | null; signal: NodeJS.Signals | null }): string {
  return signal ? `killed by ${signal}` : `exited with code ${code}`;
}

let instances: number;
let basePort: number;
try {
  ({ instances, basePort } = loadClusterConfig());
} catch (error) {
  fail(error instanceof ConfigError ? error.message : String(error));
}
let host: string;
let metricsBasePort: number | null;
try {
  if (!process.env.DATABASE_URL?.trim()) throw new ConfigError('DATABASE_URL', 'is required: every instance must use the same PostgreSQL');
  if (!process.env.REDIS_URL?.trim()) throw new ConfigError('REDIS_URL', 'is required: instances share limits and events through Redis');
  // The same validation every instance runs at start (ADMIN_TOKEN and WEBHOOK_SECRET_KEY included).
  const config = loadConfig({ ...process.env, PORT: String(basePort) });
  host = config.host;
  // Each instance has its own metrics listener: METRICS_PORT, METRICS_PORT + 1, ... (or off for all).
  metricsBasePort = config.metrics.port;
  if (metricsBasePort !== null && metricsBasePort !== 0) {
    const metricsLast = metricsBasePort + instances - 1;
    if (metricsLast > 65535) throw new ConfigError('METRICS_PORT', `plus ${instances - 1} (one port per instance) passes 65535`);
    if (metricsBasePort <= basePort + instances - 1 && basePort <= metricsLast) {
      throw new ConfigError('METRICS_PORT', `ports ${metricsBasePort}-${metricsLast} overlap the instances' ports ${basePort}-${basePort + instances - 1} (CLUSTER_BASE_PORT)`);
    }
  }
} catch (error) {
  fail(error instanceof ConfigError ? error.message : String(error));
}

let stopping = false;
let signalsSeen = 0;
const running = new Set<ChildProcess>();

function forward(signal: NodeJS.Signals): void {
  signalsSeen += 1;
  stopping = true;
  const sent: NodeJS.Signals = signalsSeen > 1 ? 'SIGKILL' : signal;
  log(`${signal}: sending ${sent} to ${running.size} process(es)`);
  for (const child of running) child.kill(sent);
  if (running.size === 0) process.exit(1);
}
process.on('SIGTERM', () => forward('SIGTERM'));
process.on('SIGINT', () => forward('SIGINT'));

log(`applying migrations to DATABASE_URL`);
const migrateChild = spawnNode(MIGRATE, 'migrate', process.env);
running.add(migrateChild);
const migration = await exited(migrateChild);
running.delete(migrateChild);
if (stopping) process.exit(1);
if (migration.code !== 0) fail(`migrations failed (${describeExit(migration)}); no instance started`);

const probeHost = host === '0.0.0.0' ? '127.0.0.1' : host === '::' ? '[::1]' : host.includes(':') ? `[${host}]` : host;
let failures = 0;
const children = Array.from({ length: instances }, (_, index) => {
  const name = `picks-${index + 1}`;
  const port = basePort + index;
  const metricsPort = metricsBasePort === null ? 'off' : metricsBasePort === 0 ? '0' : String(metricsBasePort + index);
  const child = spawnNode(MAIN, name, { ...process.env, PORT: String(port), METRICS_PORT: metricsPort });
  running.add(child);
  log(`${name} started: pid ${child.pid}, port ${port}, metrics port ${metricsPort}`);
  const done = exited(child).then((result) => {
    running.delete(child);
    // Only a clean exit after a forwarded signal counts as success.
    if (result.code !== 0 || !stopping) failures += 1;
    log(`${name} ${describeExit(result)}${stopping ? '' : ' (not restarted; the other instances keep running)'}`);
  });
  return { name, port, child, done };
});

async function healthy(port: number, child: ChildProcess): Promise<boolean> {
  const deadline = Date.now() + READY_TIMEOUT_MS;
  while (Date.now() < deadline && running.has(child) && !stopping) {
    try {
      const response = await fetch(`http://${probeHost}:${port}/healthz`, { signal: AbortSignal.timeout(1_000) });
      if (response.ok) return true;
    } catch {
      // not listening yet
    }
    await new Promise((resolve) => setTimeout(resolve, 200));
  }
  return false;
}

void Promise.all(children.map(({ port, child }) => healthy(port, child))).then((results) => {
  if (stopping) return;
  if (results.every(Boolean)) log(`all ${instances} instances answer: ${children.map(({ port }) => `http://${probeHost}:${port}`).join(' ')}`);
  else log(`not every instance answered /healthz: ${children.filter((_, i) => !results[i]).map(({ name }) => name).join(', ')}`);
});

await Promise.all(children.map(({ done }) => done));
log(failures === 0 ? 'every instance stopped cleanly' : `${failures} instance(s) did not stop cleanly`);
process.exit(failures === 0 ? 0 : 1);
