/**
 * Real processes for the multi-instance and fault suites (*.real.test.ts): the built server
 * (dist/), `npm run cluster`'s script, and private PostgreSQL and Redis servers that a test may
 * stop, kill and restart without touching the shared ones. Loopback only.
 *
 * Every process started here is killed when the test process exits, whatever happens.
 */
import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { chownSync, existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, readlinkSync, rmSync, statSync, writeFileSync } from 'node:fs';
import net from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { MikroORM } from '@mikro-orm/postgresql';

export const REPO_ROOT = fileURLToPath(new URL('../../', import.meta.url));
export const TEST_CA_FILE = path.join(REPO_ROOT, 'test/fixtures/tls/ca.pem');
const MAIN_JS = path.join(REPO_ROOT, 'dist/src/main.js');
const CLUSTER_JS = path.join(REPO_ROOT, 'dist/src/cli/cluster.js');
const MIGRATE_JS = path.join(REPO_ROOT, 'dist/src/cli/migrate.js');

export const sleep = (ms: number) => new Promise<void>((resolve) => setTimeout(resolve, ms));

/** Polls `check` until it returns a truthy value (returned) or the time is up (throws, naming `what`). */
export async function waitUntil<T>(what: string, check: () => Promise<T> | T, timeoutMs = 10_000, everyMs = 50): Promise<NonNullable<T>> {
  const deadline = Date.now() + timeoutMs;
  let last: unknown;
  for (;;) {
    try {
      const value = await check();
      if (value) return value as NonNullable<T>;
    } catch (error) {
      last = error;
    }
    if (Date.now() > deadline) throw new Error(`timed out after ${timeoutMs} ms waiting for ${what}${last ? ` (last error: ${(last as Error).message})` : ''}`);
    await sleep(everyMs);
  }
}

// ---------------------------------------------------------------------------------------------
// Cleanup: nothing outlives the test process.

const owned = new Set<ChildProcess>();
process.once('exit', () => {
  for (const child of owned) {
    try {
      child.kill('SIGKILL');
    } catch {
      // already gone
    }
  }
});

// ---------------------------------------------------------------------------------------------
// dist/: built once, when missing or older than the sources.

function newestSourceMtime(): number {
  let newest = 0;
  for (const dir of ['src', 'adapters', 'migrations']) {
    for (const entry of readdirSync(path.join(REPO_ROOT, dir), { recursive: true, withFileTypes: true })) {
      if (!entry.isFile()) continue;
      newest = Math.max(newest, statSync(path.join(entry.parentPath, entry.name)).mtimeMs);
    }
  }
  return newest;
}

function distIsFresh(): boolean {
  if (![MAIN_JS, CLUSTER_JS, MIGRATE_JS].every((file) => existsSync(file))) return false;
  return statSync(MAIN_JS).mtimeMs >= newestSourceMtime();
}

/**
 * Runs `npm run build` when dist/ is missing or stale (CI builds before its real-services
 * phase, so there this is a no-op). Suites running in parallel build once: a lock directory
 * serialises them.
 */
export async function ensureBuilt(): Promise<void> {
  if (distIsFresh()) return;
  const lock = path.join(os.tmpdir(), `picks-build-${Buffer.from(REPO_ROOT).toString('hex').slice(-24)}.lock`);
  const deadline = Date.now() + 180_000;
  for (;;) {
    try {
      mkdirSync(lock);
      writeFileSync(path.join(lock, 'pid'), String(process.pid));
      break;
    } catch {
      // Someone else builds; a lock left by a dead process is taken over.
      const holder = Number(readFileSafe(path.join(lock, 'pid')));
      if (holder && !processAlive(holder)) rmSync(lock, { recursive: true, force: true });
      if (Date.now() > deadline) throw new Error(`waited 180 s for the build lock ${lock}`);
      await sleep(250);
    }
  }
  try {
    if (distIsFresh()) return;
    const result = spawnSync('npm', ['run', 'build', '--silent'], { cwd: REPO_ROOT, encoding: 'utf8', timeout: 170_000 });
    if (result.status !== 0) throw new Error(`npm run build failed (${result.status ?? result.signal}):\n${result.stdout}\n${result.stderr}`);
  } finally {
    rmSync(lock, { recursive: true, force: true });
  }
}

function readFileSafe(file: string): string {
  try {
    return readFileSync(file, 'utf8');
  } catch {
    return '';
  }
}

function processAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
}

// ---------------------------------------------------------------------------------------------
// Ports: consecutive free loopback ports below the ephemeral range.

function portFree(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const server = net.createServer();
    server.once('error', () => resolve(false));
    server.listen(port, '127.0.0.1', () => server.close(() => resolve(true)));
  });
}

export async function freePorts(count: number): Promise<number[]> {
  for (let attempt = 0; attempt < 100; attempt += 1) {
    const base = 20_000 + Math.floor(Math.random() * (32_000 - 20_000 - count));
    const ports = Array.from({ length: count }, (_, i) => base + i);
    if ((await Promise.all(ports.map(portFree))).every(Boolean)) return ports;
  }
  throw new Error(`no ${count} consecutive free ports found between 20000 and 32000`);
}

// ---------------------------------------------------------------------------------------------
// Child processes with their output kept.

export interface ExitStatus {
  code: number | null;
  signal: NodeJS.Signals | null;
}

export interface ManagedProcess {
  name: string;
  child: ChildProcess;
  pid: number;
  /** Every line written to stdout or stderr so far. */
  lines: string[];
  output(): string;
  waitForLine(pattern: RegExp, timeoutMs?: number): Promise<RegExpMatchArray>;
  exited: Promise<ExitStatus>;
  /** True until the process has exited. */
  running(): boolean;
  signal(signal: NodeJS.Signals): void;
  /** SIGTERM (or the given signal), then SIGKILL after `graceMs`; resolves with how it exited. */
  stop(signal?: NodeJS.Signals, graceMs?: number): Promise<ExitStatus>;
}

export function manage(name: string, child: ChildProcess): ManagedProcess {
  owned.add(child);
  const lines: string[] = [];
  const waiters = new Set<() => void>();
  let done = false;
  for (const stream of [child.stdout, child.stderr]) {
    if (!stream) continue;
    let partial = '';
    stream.setEncoding('utf8');
    stream.on('data', (chunk: string) => {
      const parts = (partial + chunk).split('\n');
      partial = parts.pop() ?? '';
      lines.push(...parts);
      for (const wake of [...waiters]) wake();
    });
    stream.on('end', () => {
      if (partial) lines.push(partial);
      partial = '';
    });
  }
  const exited = new Promise<ExitStatus>((resolve) => {
    child.once('exit', (code, signal) => {
      done = true;
      owned.delete(child);
      for (const wake of [...waiters]) wake();
      resolve({ code, signal });
    });
  });
  const managed: ManagedProcess = {
    name,
    child,
    pid: child.pid ?? 0,
    lines,
    output: () => lines.join('\n'),
    waitForLine(pattern, timeoutMs = 30_000) {
      return new Promise((resolve, reject) => {
        const check = () => {
          for (const line of lines) {
            const match = line.match(pattern);
            if (match) {
              cleanup();
              resolve(match);
              return;
            }
          }
          if (done) {
            cleanup();
            reject(new Error(`${name} exited before printing ${pattern}; output:\n${tail(lines)}`));
          }
        };
        const timer = setTimeout(() => {
          cleanup();
          reject(new Error(`${name} did not print ${pattern} within ${timeoutMs} ms; output:\n${tail(lines)}`));
        }, timeoutMs);
        const cleanup = () => {
          clearTimeout(timer);
          waiters.delete(check);
        };
        waiters.add(check);
        check();
      });
    },
    exited,
    running: () => !done,
    signal(signal) {
      if (!done) child.kill(signal);
    },
    async stop(signal = 'SIGTERM', graceMs = 10_000) {
      if (done) return exited;
      child.kill(signal);
      const timer = setTimeout(() => child.kill('SIGKILL'), graceMs);
      const status = await exited;
      clearTimeout(timer);
      return status;
    },
  };
  return managed;
}

function tail(lines: string[], count = 60): string {
  return lines.slice(-count).join('\n');
}

/** The environment of a child server: explicit, nothing inherited from the test runner but PATH. */
export function serverEnv(env: Record<string, string>): NodeJS.ProcessEnv {
  return {
    PATH: process.env.PATH ?? '/usr/bin:/bin',
    HOME: process.env.HOME ?? os.tmpdir(),
    HOST: '127.0.0.1',
    LOG_LEVEL: 'warn',
    NODE_EXTRA_CA_CERTS: TEST_CA_FILE,
    // Servers of parallel test files would all take the default metrics port; a test that scrapes sets one.
    METRICS_PORT: 'off',
    ...env,
  };
}

async function httpOk(url: string): Promise<boolean> {
  try {
    const response = await fetch(url, { signal: AbortSignal.timeout(1_000) });
    await response.arrayBuffer();
    return response.ok;
  } catch {
    return false;
  }
}

export interface ServerProcess extends ManagedProcess {
  port: number;
  url: string;
}

/** dist/src/main.js on `port`; resolves once /healthz answers. */
export async function startServer(name: string, port: number, env: Record<string, string>): Promise<ServerProcess> {
  const child = spawn(process.execPath, [MAIN_JS], { cwd: REPO_ROOT, env: serverEnv({ ...env, PORT: String(port) }), stdio: ['ignore', 'pipe', 'pipe'] });
  const server = Object.assign(manage(name, child), { port, url: `http://127.0.0.1:${port}` });
  await waitUntil(`${name} to answer /healthz`, async () => {
    if (!server.running()) throw new Error(`${name} exited: ${JSON.stringify(await server.exited)}\n${tail(server.lines)}`);
    return httpOk(`${server.url}/healthz`);
  }, 60_000, 100).catch((error: Error) => {
    server.signal('SIGKILL');
    throw new Error(`${error.message}\n${tail(server.lines)}`);
  });
  return server;
}

/** `npm run migrate` semantics against DATABASE_URL in `env`. */
export async function migrate(env: Record<string, string>): Promise<void> {
  const child = spawn(process.execPath, [MIGRATE_JS], { cwd: REPO_ROOT, env: serverEnv(env), stdio: ['ignore', 'pipe', 'pipe'] });
  const managed = manage('migrate', child);
  const status = await managed.exited;
  if (status.code !== 0) throw new Error(`migrate failed (${JSON.stringify(status)}):\n${managed.output()}`);
}

export interface ClusterInstance {
  name: string;
  pid: number;
  port: number;
  url: string;
}

export interface ClusterProcess extends ManagedProcess {
  instances: ClusterInstance[];
}

/** dist/src/cli/cluster.js (what `npm run cluster` runs after building); resolves once every instance answers. */
export async function startCluster(instances: number, basePort: number, env: Record<string, string>): Promise<ClusterProcess> {
  const child = spawn(process.execPath, [CLUSTER_JS], {
    cwd: REPO_ROOT,
    env: serverEnv({ ...env, CLUSTER_INSTANCES: String(instances), CLUSTER_BASE_PORT: String(basePort) }),
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  const managed = manage('cluster', child);
  await managed.waitForLine(/^\[cluster\] all \d+ instances answer/, 90_000).catch((error: Error) => {
    managed.signal('SIGKILL');
    throw error;
  });
  const started = managed.lines
    .map((line) => /^\[cluster\] (picks-\d+) started: pid (\d+), port (\d+), metrics port \S+$/.exec(line))
    .filter((match): match is RegExpExecArray => match !== null)
    .map((match) => ({ name: match[1]!, pid: Number(match[2]), port: Number(match[3]), url: `http://127.0.0.1:${match[3]}` }));
  return Object.assign(managed, { instances: started });
}

// ---------------------------------------------------------------------------------------------
// Which process owns a loopback TCP connection (Linux /proc): tells which instance sent a
// webhook attempt, from the client port the receiver saw.

function socketInode(localPort: number, remotePort: number): string | null {
  for (const table of ['/proc/net/tcp', '/proc/net/tcp6']) {
    const text = readFileSafe(table);
    for (const line of text.split('\n').slice(1)) {
      const fields = line.trim().split(/\s+/);
      if (fields.length < 10) continue;
      const local = parseInt(fields[1]!.split(':').pop()!, 16);
      const remote = parseInt(fields[2]!.split(':').pop()!, 16);
      if (local === localPort && remote === remotePort) return fields[9]!;
    }
  }
  return null;
}

/** The pid among `candidates` holding the connection from local port `clientPort` to `serverPort`, or null. */
export function pidOfConnection(clientPort: number, serverPort: number, candidates: readonly number[]): number | null {
  if (!existsSync('/proc/net/tcp')) throw new Error('/proc/net/tcp is not available: these suites need Linux');
  const inode = socketInode(clientPort, serverPort);
  if (!inode) return null;
  const target = `socket:[${inode}]`;
  for (const pid of candidates) {
    let fds: string[];
    try {
      fds = readdirSync(`/proc/${pid}/fd`);
    } catch {
      continue;
    }
    for (const fd of fds) {
      try {
        if (readlinkSync(`/proc/${pid}/fd/${fd}`) === target) return pid;
      } catch {
        // closed meanwhile
      }
    }
  }
  return null;
}

// ---------------------------------------------------------------------------------------------
// SQL from tests (a tiny pool of its own).

export interface Sql {
  query<T = Record<string, unknown>>(sql: string, params?: unknown[]): Promise<T[]>;
  close(): Promise<void>;
}

export async function openSql(url: string): Promise<Sql> {
  const orm = await MikroORM.init({ clientUrl: url, entities: [], discovery: { warnWhenNoEntities: false }, pool: { min: 0, max: 2 } });
  return {
    query: <T>(sql: string, params: unknown[] = []) => orm.em.getConnection().execute<T[]>(sql, params),
    close: () => orm.close(true),
  };
}

// ---------------------------------------------------------------------------------------------
// Private engines. The suites that need them fail loudly when the binaries are missing.

function which(binary: string): string | null {
  const result = spawnSync('sh', ['-c', `command -v ${binary}`], { encoding: 'utf8' });
  return result.status === 0 ? result.stdout.trim() : null;
}

export function findPostgresBin(): string {
  const base = '/usr/lib/postgresql';
  const versions = existsSync(base) ? readdirSync(base).filter((v) => existsSync(path.join(base, v, 'bin/postgres'))) : [];
  versions.sort((a, b) => Number(a) - Number(b));
  const newest = versions.pop();
  if (!newest) throw new Error('PostgreSQL server binaries not found under /usr/lib/postgresql/*/bin (apt-get install postgresql): the fault suite needs a private server');
  return path.join(base, newest, 'bin');
}

export function findRedisServer(): string {
  const found = which('redis-server');
  if (!found) throw new Error('redis-server not found on PATH (apt-get install redis-server): the fault suite needs a private server');
  return found;
}

/** A Redis server of this test alone (no persistence): stop, kill and start it at will. */
export class PrivateRedis {
  private process: ManagedProcess | null = null;
  readonly url: string;

  constructor(
    readonly port: number,
    private readonly binary = findRedisServer(),
  ) {
    this.url = `redis://127.0.0.1:${port}`;
  }

  async start(): Promise<void> {
    const child = spawn(this.binary, ['--port', String(this.port), '--bind', '127.0.0.1', '--save', '', '--appendonly', 'no', '--protected-mode', 'yes', '--daemonize', 'no'], {
      stdio: ['ignore', 'pipe', 'pipe'],
      cwd: os.tmpdir(),
    });
    this.process = manage(`redis:${this.port}`, child);
    await waitUntil(`private Redis on ${this.port}`, () => this.ping(), 10_000);
  }

  /** Sends `signal` (SIGKILL: a crash; SIGTERM: a clean stop) and waits until it is gone. */
  async stop(signal: NodeJS.Signals = 'SIGKILL'): Promise<void> {
    await this.process?.stop(signal, 5_000);
    this.process = null;
  }

  ping(): Promise<boolean> {
    return new Promise((resolve) => {
      const socket = net.connect(this.port, '127.0.0.1');
      socket.setTimeout(500);
      socket.once('connect', () => socket.write('PING\r\n'));
      socket.once('data', (data) => {
        resolve(data.toString().startsWith('+PONG'));
        socket.destroy();
      });
      socket.once('timeout', () => {
        resolve(false);
        socket.destroy();
      });
      socket.once('error', () => resolve(false));
    });
  }
}

/** A PostgreSQL cluster of this test alone (initdb into a temp dir), stopped and started at will. */
export class PrivatePostgres {
  private process: ManagedProcess | null = null;
  private readonly root: string;
  private readonly dataDir: string;
  private readonly socketDir: string;
  private readonly bin: string;
  private readonly asPostgres: string[];

  constructor(readonly port: number) {
    this.bin = findPostgresBin();
    this.root = mkdtempSync(path.join(os.tmpdir(), 'picks-pg-'));
    this.dataDir = path.join(this.root, 'data');
    this.socketDir = path.join(this.root, 'sock');
    mkdirSync(this.socketDir);
    // PostgreSQL refuses to run as root: run it as the postgres user then.
    if (process.getuid?.() === 0) {
      const uid = Number(spawnSync('id', ['-u', 'postgres'], { encoding: 'utf8' }).stdout.trim());
      const gid = Number(spawnSync('id', ['-g', 'postgres'], { encoding: 'utf8' }).stdout.trim());
      if (!uid) throw new Error('running as root but there is no postgres OS user to run a private PostgreSQL as');
      for (const dir of [this.root, this.socketDir]) chownSync(dir, uid, gid);
      this.asPostgres = [which('setpriv') ? 'setpriv' : 'runuser', ...(which('setpriv') ? ['--reuid=postgres', '--regid=postgres', '--init-groups', '--'] : ['-u', 'postgres', '--'])];
    } else {
      this.asPostgres = [];
    }
  }

  url(database = 'postgres'): string {
    return `postgres://postgres@127.0.0.1:${this.port}/${database}`;
  }

  private command(binary: string, args: string[]): [string, string[]] {
    const full = path.join(this.bin, binary);
    return this.asPostgres.length > 0 ? [this.asPostgres[0]!, [...this.asPostgres.slice(1), full, ...args]] : [full, args];
  }

  async init(): Promise<void> {
    const [cmd, args] = this.command('initdb', ['-D', this.dataDir, '-U', 'postgres', '--auth=trust', '-E', 'UTF8', '--locale=C', '--no-sync']);
    const result = spawnSync(cmd, args, { encoding: 'utf8', cwd: '/' });
    if (result.status !== 0) throw new Error(`initdb failed: ${result.stdout}\n${result.stderr}`);
  }

  async start(): Promise<void> {
    const [cmd, args] = this.command('postgres', [
      '-D', this.dataDir, '-p', String(this.port), '-k', this.socketDir,
      '-c', 'listen_addresses=127.0.0.1', '-c', 'fsync=off', '-c', 'synchronous_commit=off', '-c', 'full_page_writes=off', '-c', 'max_connections=100',
    ]);
    // setpriv execs in place, so the child is the postmaster and gets our signals directly.
    const child = spawn(cmd, args, { stdio: ['ignore', 'pipe', 'pipe'], cwd: '/' });
    this.process = manage(`postgres:${this.port}`, child);
    await waitUntil(`private PostgreSQL on ${this.port}`, () => {
      if (!this.process?.running()) throw new Error(`postgres exited:\n${this.process?.output()}`);
      return spawnSync(path.join(this.bin, 'pg_isready'), ['-q', '-h', '127.0.0.1', '-p', String(this.port), '-U', 'postgres']).status === 0;
    }, 30_000, 100);
  }

  /** Fast shutdown (SIGINT: what `pg_ctl stop -m fast` and a restart do): sessions get 57P01. */
  async stop(): Promise<void> {
    await this.process?.stop('SIGINT', 20_000);
    this.process = null;
  }

  async createDatabase(name: string): Promise<void> {
    const result = spawnSync(path.join(this.bin, 'createdb'), ['-h', '127.0.0.1', '-p', String(this.port), '-U', 'postgres', name], { encoding: 'utf8' });
    if (result.status !== 0) throw new Error(`createdb failed: ${result.stderr}`);
  }

  async destroy(): Promise<void> {
    await this.process?.stop('SIGQUIT', 5_000);
    this.process = null;
    rmSync(this.root, { recursive: true, force: true });
  }
}
