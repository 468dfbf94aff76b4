/**
 * The one launcher of the benches and the soak: private PostgreSQL clusters and Redis servers,
 * `node dist/src/main.js` instances and the migrations, all on 127.0.0.1, all registered here
 * and killed (temp directories removed) when this process exits, whatever the reason.
 *
 *   - manage(name, child): a child process with the tail of its output kept and its pino
 *     error/warn lines counted; stop(signal, graceMs) escalates to SIGKILL;
 *   - Postgres: initdb into a temp dir (binaries from /usr/lib/postgresql/<newest>/bin, run as
 *     the postgres OS user when we are root), start / fast stop, createdb;
 *   - Redis: `--appendonly yes --appendfsync always --save ''` in a temp dir, so a SIGKILLed
 *     Redis restarts from its AOF with every acknowledged write; kill / stop / dbsize;
 *   - startInstance / migrate: the built service with an explicit environment;
 *   - freePort / freePorts, waitUntil, openSql.
 *
 * `launcher.interrupted` (set by a signal handler) makes every later start refuse.
 */
import { execFile, spawn, spawnSync } from 'node:child_process';
import { chownSync, existsSync, mkdirSync, mkdtempSync, readdirSync, rmSync } from 'node:fs';
import net from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';
import { HOST, ROOT, sleep } from '../common.mjs';

const execFileAsync = promisify(execFile);
export const MAIN_JS = path.join(ROOT, 'dist/src/main.js');
export const MIGRATE_JS = path.join(ROOT, 'dist/src/cli/migrate.js');
export const CA_FILE = path.join(ROOT, 'test/fixtures/tls/ca.pem');

/** What this process started: killed and removed on exit. */
export const launcher = { managed: new Set(), tempDirs: new Set(), interrupted: false };

/** A temp directory removed on exit. */
export function tempDir(prefix) {
  const dir = mkdtempSync(path.join(os.tmpdir(), prefix));
  launcher.tempDirs.add(dir);
  return dir;
}

export async function waitUntil(what, check, timeoutMs = 10_000, everyMs = 100) {
  const deadline = Date.now() + timeoutMs;
  let last;
  for (;;) {
    try {
      const value = await check();
      if (value) return value;
    } catch (error) {
      last = error;
    }
    if (Date.now() > deadline) throw new Error(`timed out after ${timeoutMs} ms waiting for ${what}${last ? ` (last error: ${last.message})` : ''}`);
    await sleep(everyMs);
  }
}

function which(binary) {
  const result = spawnSync('sh', ['-c', `command -v ${binary}`], { encoding: 'utf8' });
  return result.status === 0 ? result.stdout.trim() : null;
}

function portFree(port) {
  return new Promise((resolve) => {
    const server = net.createServer();
    server.once('error', () => resolve(false));
    server.listen(port, HOST, () => server.close(() => resolve(true)));
  });
}

/** Consecutive free loopback ports below the ephemeral range (as test/helpers/processes.ts). */
export async function freePorts(count) {
  for (let attempt = 0; attempt < 100; attempt += 1) {
    const base = 20_000 + Math.floor(Math.random() * (32_000 - 20_000 - count));
    const ports = Array.from({ length: count }, (_, i) => base + i);
    if ((await Promise.all(ports.map(portFree))).every(Boolean)) return ports;
  }
  throw new Error(`no ${count} consecutive free ports found between 20000 and 32000`);
}

/** One free loopback port chosen by the kernel. */
export function freePort() {
  return new Promise((resolve, reject) => {
    const probe = net.createServer();
    probe.once('error', reject);
    probe.listen(0, HOST, () => {
      const { port } = probe.address();
      probe.close(() => resolve(port));
    });
  });
}

// ---------------------------------------------------------------- processes and cleanup

/** A child process with the tail of its output kept and its pino error lines counted. */
export function manage(name, child) {
  const m = { name, child, pid: child.pid, lines: [], errors: 0, warns: 0, errorSamples: [], done: false, exit: null };
  const onLine = (line) => {
    m.lines.push(line);
    if (m.lines.length > 300) m.lines.shift();
    const level = /"level":(\d+)/.exec(line);
    if (!level) return;
    if (Number(level[1]) >= 50) {
      m.errors += 1;
      if (m.errorSamples.length < 20) m.errorSamples.push(line.slice(0, 800));
    } else if (Number(level[1]) >= 40) {
      m.warns += 1;
    }
  };
  for (const stream of [child.stdout, child.stderr]) {
    if (!stream) continue;
    let partial = '';
    stream.setEncoding('utf8');
    stream.on('data', (chunk) => {
      const parts = (partial + chunk).split('\n');
      partial = parts.pop() ?? '';
      for (const line of parts) onLine(line);
    });
  }
  m.exited = new Promise((resolve) => {
    const done = (exit) => {
      if (m.done) return;
      m.done = true;
      m.exit = exit;
      launcher.managed.delete(m);
      resolve(exit);
    };
    child.once('exit', (code, signal) => done({ code, signal }));
    child.once('error', (error) => done({ code: null, signal: null, error: String(error) }));
  });
  m.running = () => !m.done;
  m.tail = (n = 40) => m.lines.slice(-n).join('\n');
  m.stop = async (signal = 'SIGTERM', graceMs = 10_000) => {
    if (m.done) return m.exit;
    child.kill(signal);
    const timer = setTimeout(() => child.kill('SIGKILL'), graceMs);
    await m.exited;
    clearTimeout(timer);
    return m.exit;
  };
  launcher.managed.add(m);
  return m;
}

/** PostgreSQL gets SIGQUIT (its immediate stop, which takes its backends along), the rest SIGKILL. */
function killOne(m) {
  try {
    m.child.kill(m.name === 'postgres' ? 'SIGQUIT' : 'SIGKILL');
  } catch {
    // gone
  }
}

/** Last resort (process exit): nothing we started outlives us. */
export function killEverythingSync() {
  for (const m of launcher.managed) killOne(m);
  for (const dir of launcher.tempDirs) rmSync(dir, { recursive: true, force: true });
  launcher.tempDirs.clear();
}
process.on('exit', killEverythingSync);

/** Kills every process started here, waits up to 5 s for them, and removes the temp dirs. */
export async function killEverything() {
  for (const m of [...launcher.managed]) killOne(m);
  await Promise.race([Promise.all([...launcher.managed].map((m) => m.exited)), sleep(5_000)]);
  killEverythingSync();
}

/** The environment of a child: explicit, nothing inherited but PATH and HOME. */
export function childEnv(env) {
  // Several instances run at once: each would take the default metrics port (a run that measures them sets one).
  return { PATH: process.env.PATH ?? '/usr/bin:/bin', HOME: process.env.HOME ?? os.tmpdir(), HOST, LOG_LEVEL: 'warn', NODE_EXTRA_CA_CERTS: CA_FILE, METRICS_PORT: 'off', ...env };
}

// ---------------------------------------------------------------- PostgreSQL

function findPostgresBin() {
  const base = '/usr/lib/postgresql';
  const versions = existsSync(base) ? readdirSync(base).filter((v) => existsSync(path.join(base, v, 'bin/postgres'))) : [];
  versions.sort((a, b) => Number(a) - Number(b));
  const newest = versions.pop();
  if (!newest) throw new Error('PostgreSQL server binaries not found under /usr/lib/postgresql/*/bin (apt-get install postgresql)');
  return path.join(base, newest, 'bin');
}

/** A private PostgreSQL cluster on `port`: init(), start(), createDatabase(name), stop() (fast). */
export class Postgres {
  constructor(port, tmpPrefix = 'picks-bench-pg-') {
    this.port = port;
    this.bin = findPostgresBin();
    this.root = tempDir(tmpPrefix);
    this.dataDir = path.join(this.root, 'data');
    this.socketDir = path.join(this.root, 'sock');
    mkdirSync(this.socketDir);
    this.proc = null;
    // PostgreSQL refuses to run as root: run it as the postgres user then.
    if (process.getuid?.() === 0) {
      const uid = Number(spawnSync('id', ['-u', 'postgres'], { encoding: 'utf8' }).stdout.trim());
      const gid = Number(spawnSync('id', ['-g', 'postgres'], { encoding: 'utf8' }).stdout.trim());
      if (!uid) throw new Error('running as root but there is no postgres OS user to run a private PostgreSQL as');
      for (const dir of [this.root, this.socketDir]) chownSync(dir, uid, gid);
      this.prefix = which('setpriv') ? ['setpriv', '--reuid=postgres', '--regid=postgres', '--init-groups', '--'] : ['runuser', '-u', 'postgres', '--'];
    } else {
      this.prefix = [];
    }
  }

  url(database) {
    return `postgres://postgres@${HOST}:${this.port}/${database}`;
  }

  command(binary, args) {
    const full = path.join(this.bin, binary);
    return this.prefix.length > 0 ? [this.prefix[0], [...this.prefix.slice(1), full, ...args]] : [full, args];
  }

  init() {
    const [cmd, args] = this.command('initdb', ['-D', this.dataDir, '-U', 'postgres', '--auth=trust', '-E', 'UTF8', '--locale=C', '--no-sync']);
    const result = spawnSync(cmd, args, { encoding: 'utf8', cwd: '/' });
    if (result.status !== 0) throw new Error(`initdb failed: ${result.stdout}\n${result.stderr}`);
  }

  async start() {
    if (launcher.interrupted) throw new Error('interrupted');
    const [cmd, args] = this.command('postgres', [
      '-D', this.dataDir, '-p', String(this.port), '-k', this.socketDir,
      '-c', `listen_addresses=${HOST}`, '-c', 'fsync=off', '-c', 'synchronous_commit=off', '-c', 'full_page_writes=off', '-c', 'max_connections=100',
    ]);
    // setpriv execs in place, so the child is the postmaster and gets our signals directly.
    const child = spawn(cmd, args, { stdio: ['ignore', 'pipe', 'pipe'], cwd: '/' });
    this.proc = manage('postgres', child);
    await waitUntil(`PostgreSQL on ${this.port}`, async () => {
      if (!this.proc.running()) throw new Error(`postgres exited:\n${this.proc.tail()}`);
      return this.ready();
    }, 60_000, 100);
  }

  async ready() {
    try {
      await execFileAsync(path.join(this.bin, 'pg_isready'), ['-q', '-h', HOST, '-p', String(this.port), '-U', 'postgres'], { timeout: 3_000 });
      return true;
    } catch {
      return false;
    }
  }

  /** Fast shutdown (SIGINT: what `pg_ctl stop -m fast` does): sessions get 57P01. */
  async stop() {
    const exit = await this.proc?.stop('SIGINT', 30_000);
    this.proc = null;
    return exit;
  }

  createDatabase(name) {
    const result = spawnSync(path.join(this.bin, 'createdb'), ['-h', HOST, '-p', String(this.port), '-U', 'postgres', name], { encoding: 'utf8' });
    if (result.status !== 0) throw new Error(`createdb failed: ${result.stderr}`);
  }
}

/** A tiny SQL client (MikroORM's connection, as bench/server-common.mjs uses it). */
export async function openSql(url) {
  const { MikroORM } = await import('@mikro-orm/postgresql');
  const orm = await MikroORM.init({ clientUrl: url, entities: [], discovery: { warnWhenNoEntities: false }, pool: { min: 0, max: 2 } });
  return {
    query: (sql, params = []) => orm.em.getConnection().execute(sql, params),
    close: () => orm.close(true),
  };
}

// ---------------------------------------------------------------- Redis

/** One inline command over a raw socket; the first line of the answer, or null. */
export function redisCommand(port, command) {
  return new Promise((resolve) => {
    const socket = net.connect(port, HOST);
    let data = '';
    socket.setTimeout(1_000);
    socket.once('connect', () => socket.write(`${command}\r\n`));
    socket.on('data', (chunk) => {
      data += chunk.toString();
      if (data.includes('\r\n')) {
        resolve(data.split('\r\n')[0]);
        socket.destroy();
      }
    });
    socket.once('timeout', () => {
      resolve(null);
      socket.destroy();
    });
    socket.once('error', () => resolve(null));
  });
}

/** A private Redis on `port` with an always-fsynced AOF: start(), kill() (SIGKILL), stop(), dbsize(). */
export class Redis {
  constructor(port, tmpPrefix = 'picks-bench-redis-') {
    this.port = port;
    this.binary = which('redis-server');
    if (!this.binary) throw new Error('redis-server not found on PATH (apt-get install redis-server)');
    this.dir = tempDir(tmpPrefix);
    this.url = `redis://${HOST}:${port}`;
    this.proc = null;
  }

  async start() {
    if (launcher.interrupted) throw new Error('interrupted');
    const child = spawn(
      this.binary,
      ['--port', String(this.port), '--bind', HOST, '--protected-mode', 'yes', '--daemonize', 'no', '--dir', this.dir, '--appendonly', 'yes', '--appendfsync', 'always', '--save', ''],
      { stdio: ['ignore', 'pipe', 'pipe'], cwd: this.dir },
    );
    this.proc = manage('redis', child);
    await waitUntil(`Redis on ${this.port}`, async () => {
      if (!this.proc.running()) throw new Error(`redis exited:\n${this.proc.tail()}`);
      return (await redisCommand(this.port, 'PING')) === '+PONG';
    }, 30_000, 50);
  }

  async dbsize() {
    const answer = await redisCommand(this.port, 'DBSIZE');
    return answer?.startsWith(':') ? Number(answer.slice(1)) : null;
  }

  async kill() {
    const exit = await this.proc?.stop('SIGKILL', 5_000);
    this.proc = null;
    return exit;
  }

  async stop() {
    const exit = await this.proc?.stop('SIGTERM', 10_000);
    this.proc = null;
    return exit;
  }
}

// ---------------------------------------------------------------- the service

/** Whether GET `url` answers 2xx within `timeoutMs`. */
export async function httpOk(url, timeoutMs = 1_000) {
  try {
    const response = await fetch(url, { signal: AbortSignal.timeout(timeoutMs) });
    await response.arrayBuffer();
    return response.ok;
  } catch {
    return false;
  }
}

/**
 * Spawns `node dist/src/main.js` as `name` on `port` with `env` over `baseEnv` (default
 * childEnv: nothing inherited but PATH and HOME) and waits up to `timeoutMs` until `probe`
 * (/healthz, or /readyz) answers 2xx. Returns the managed process.
 */
export async function startInstance({ name, port, env, baseEnv = childEnv({}), probe = '/healthz', timeoutMs = 90_000 }) {
  if (launcher.interrupted) throw new Error('interrupted');
  const child = spawn(process.execPath, [MAIN_JS], { cwd: ROOT, env: { ...baseEnv, ...env, PORT: String(port) }, stdio: ['ignore', 'pipe', 'pipe'] });
  const proc = manage(name, child);
  proc.ready = waitUntil(`${name} to answer ${probe}`, async () => {
    if (!proc.running()) throw new Error(`${name} exited ${JSON.stringify(proc.exit)}:\n${proc.tail()}`);
    return httpOk(`http://${HOST}:${port}${probe}`);
  }, timeoutMs, 200);
  return proc;
}

/** Runs the migrations (dist/src/cli/migrate.js) with `env`; throws with its last lines on failure. */
export async function migrate(env) {
  const child = spawn(process.execPath, [MIGRATE_JS], { cwd: ROOT, env: childEnv(env), stdio: ['ignore', 'pipe', 'pipe'] });
  const proc = manage('migrate', child);
  const exit = await proc.exited;
  if (exit.code !== 0) throw new Error(`migrate failed (${JSON.stringify(exit)}):\n${proc.tail()}`);
}
