/**
 * `npm run soak`: a chaos soak of the built service (dist/), NOT part of CI. Everything runs on
 * this machine and talks over 127.0.0.1 only.
 *
 * What it starts (all its own, all removed at the end, on failure and on Ctrl-C too):
 *   - a private PostgreSQL cluster (initdb into a temp dir; binaries from
 *     /usr/lib/postgresql/<newest>/bin, run as the postgres OS user when we are root);
 *   - a private Redis with `--appendonly yes --appendfsync always --save ''` and its data dir in
 *     a temp dir: a SIGKILLed Redis restarts from its AOF with every acknowledged write;
 *   - a local The Odds API v4 feed (odds and scores of soccer_epl) whose market keeps changing:
 *     new matches with one mispriced outcome appear every 6-14 s (some priced too good to be
 *     true, held for review), second edges and better prices on known outcomes, matches that
 *     kick off within minutes and are reported finished a minute later (the engine settles);
 *   - a local HTTPS webhook receiver (test/fixtures/tls certificate; hooks.test is mapped to
 *     127.0.0.1 by WEBHOOK_HOST_OVERRIDES) verifying every delivery: Standard Webhooks with the
 *     `standardwebhooks` package and X-Service-Signature with node:crypto; it answers a share of
 *     attempts 503 so retries happen too;
 *   - the migrations, then three instances `node dist/src/main.js` on consecutive free ports.
 *
 * Traffic for SOAK_MINUTES: REST loops (picks, track record, match analyses, usage, webhooks list,
 * bad cursors, bad parameters, unknown paths, the public endpoint) over many API keys of three
 * tiers with small TIER_LIMITS (so keys reach their hourly limits and, after outages, their monthly
 * caps), GraphQL loops with keys, an admin client publishing and settling picks through the admin
 * GraphQL mutations (every pick id it got back is kept), SSE streams (`GET /api/v1/picks/stream`)
 * that disconnect now and then and resume with `Last-Event-ID`, and webhook subscriptions.
 *
 * A seeded scheduler (SOAK_SEED, printed first) injects one fault at a time, every
 * SOAK_FAULT_EVERY_SECONDS: SIGKILL of Redis (restarted after SOAK_FAULT_DOWN_SECONDS), a fast
 * stop of PostgreSQL (started again likewise), SIGKILL of one instance (restarted on its port).
 * Every fault's start, restart and recovery goes into the timeline; every client call records
 * its key, its status (or `lost`: no answer, with the reason), when it was sent and answered.
 *
 * At the end the faults stop, everything recovers, the traffic stops, webhooks and streams drain,
 * the instances get SIGTERM (a clean stop flushes the month counters), and the invariants are
 * checked and printed (PASS/FAIL each, exit code 1 if any fails); the summary goes to
 * bench/soak-results.json:
 *   a. monthly_usage per key and month within [answered-counted, answered-counted + lost], where
 *      answered-counted = answers 2xx/4xx except the limiter's 429s (rate_limit_exceeded,
 *      monthly_quota_exceeded; any other 429 passed the limiter and counts) and except
 *      GET /api/v1/usage, which is not counted by design (docs/RATE_LIMITING.md); 503s count
 *      nothing; a 401 fails the key;
 *   b. admitted requests certainly inside a rolling 3600 s (sent at or after the window's
 *      start, answered by its end; one window per admitted request) <= the hourly limit, or
 *      (1 + P) x the limit when the window overlaps a Redis outage (P: instance processes alive
 *      during it, summed over the outages it overlaps, since each fallback starts empty); also,
 *      stricter, the requests touching no outage (decided by Redis) <= the limit in any window,
 *      and the requests inside one outage <= (1 + P) x the limit;
 *   c. every pick id the admin received exists;
 *   d. every webhook event fanned out to the receiver's subscriptions reached it with valid
 *      signatures, none pending at the end;
 *   e. no duplicate engine pick (event, generation, market, selection);
 *   f. SSE streams got every sequence after their Last-Event-ID without a gap;
 *   g. no 500 and no request that hung past its timeout while its instance was up;
 *   h. no process died that the scheduler did not kill, and every instance exited 0 on SIGTERM.
 *
 * Knobs: SOAK_MINUTES (20; fractions like 0.5 work), SOAK_SEED, SOAK_FAULT_EVERY_SECONDS ("20-60";
 * one number for a fixed interval; "off" for none), SOAK_FAULT_DOWN_SECONDS ("2-6"), SOAK_FAULTS
 * ("redis,postgres,instance"), SOAK_CLIENTS (10 REST loops), SOAK_GRAPHQL_CLIENTS (2),
 * SOAK_STREAMS (4), SOAK_KEYS (20), SOAK_CLIENT_SLEEP_MS ("100-400"), SOAK_PUBLISH_EVERY_MS
 * ("1000-3000"), SOAK_REQUEST_TIMEOUT_MS (10000), SOAK_DRAIN_SECONDS (120),
 * SOAK_RECEIVER_FAIL_SHARE (0.02), SOAK_TIER_LIMITS (JSON, merged over the soak's small limits).
 */
import { execFile, spawn, spawnSync } from 'node:child_process';
import { createHmac, randomBytes, timingSafeEqual } from 'node:crypto';
import { chownSync, existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import http from 'node:http';
import https from 'node:https';
import net from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';
import { Webhook } from 'standardwebhooks';
import { BENCH_DIR, HOST, ROOT, intEnv, log, machine, rng, sleep } from './common.mjs';

const execFileAsync = promisify(execFile);
const MAIN_JS = path.join(ROOT, 'dist/src/main.js');
const MIGRATE_JS = path.join(ROOT, 'dist/src/cli/migrate.js');
const TLS_DIR = path.join(ROOT, 'test/fixtures/tls');
const CA_FILE = path.join(TLS_DIR, 'ca.pem');
const RESULTS_FILE = path.join(BENCH_DIR, 'soak-results.json');
const INSTANCES = 3;
const DATABASE = 'picks_soak';
const SPORT_KEY = 'soccer_epl';
const TAX = 0.053;
/** The tiers' defaults (docs/API.md), under the soak's own small limits. */
const DEFAULT_TIER_LIMITS = { starter: { hourly: 100, monthly: 10_000 }, growth: { hourly: 1_000, monthly: 100_000 }, enterprise: { hourly: 10_000, monthly: 1_000_000 } };
const SOAK_TIER_LIMITS = { starter: { hourly: 60, monthly: 400 }, growth: { hourly: 200, monthly: 1_500 }, enterprise: { hourly: 1_000, monthly: 8_000 } };
/** 429 codes of the limiter: such a request counted nothing. Any other 429 passed the limiter. */
const LIMIT_CODES = new Set(['rate_limit_exceeded', 'monthly_quota_exceeded']);

// ---------------------------------------------------------------- settings

function floatEnv(name, fallback, min, max) {
  const raw = process.env[name]?.trim();
  if (!raw) return fallback;
  const value = Number(raw);
  if (!Number.isFinite(value) || value < min || value > max) throw new Error(`${name} must be a number ${min}..${max}, got "${raw}"`);
  return value;
}

/** "a-b" (uniform between) or "a" (always a). */
function rangeEnv(name, fallback, min, max) {
  const raw = process.env[name]?.trim();
  if (!raw) return fallback;
  const match = /^(\d+(?:\.\d+)?)(?:\s*-\s*(\d+(?:\.\d+)?))?$/.exec(raw);
  const lo = match ? Number(match[1]) : NaN;
  const hi = match ? Number(match[2] ?? match[1]) : NaN;
  if (!match || lo < min || hi > max || lo > hi) throw new Error(`${name} must be "a-b" or "a" with ${min} <= a <= b <= ${max}, got "${raw}"`);
  return [lo, hi];
}

function seedEnv() {
  const raw = process.env.SOAK_SEED?.trim();
  if (!raw) return randomBytes(4).readUInt32BE(0);
  const value = Number(raw);
  if (!Number.isInteger(value) || value < 0 || value > 0xffffffff) throw new Error(`SOAK_SEED must be an integer 0..4294967295, got "${raw}"`);
  return value;
}

function tierLimitsEnv() {
  const limits = structuredClone(DEFAULT_TIER_LIMITS);
  const raw = process.env.SOAK_TIER_LIMITS?.trim();
  const overrides = raw ? JSON.parse(raw) : {};
  for (const source of [SOAK_TIER_LIMITS, overrides]) {
    for (const [tier, values] of Object.entries(source)) {
      if (!limits[tier]) throw new Error(`SOAK_TIER_LIMITS: unknown tier ${tier}`);
      Object.assign(limits[tier], values);
    }
  }
  return limits;
}

function faultKindsEnv() {
  const raw = process.env.SOAK_FAULTS?.trim();
  const kinds = (raw || 'redis,postgres,instance').split(',').map((s) => s.trim()).filter(Boolean);
  for (const kind of kinds) if (!['redis', 'postgres', 'instance'].includes(kind)) throw new Error(`SOAK_FAULTS: unknown fault ${kind} (redis, postgres, instance)`);
  return kinds;
}

const faultsOff = ['off', '0', 'none'].includes(process.env.SOAK_FAULT_EVERY_SECONDS?.trim() ?? '');
const settings = {
  seed: seedEnv(),
  minutes: floatEnv('SOAK_MINUTES', 20, 0.1, 24 * 60),
  faultEverySeconds: faultsOff ? null : rangeEnv('SOAK_FAULT_EVERY_SECONDS', [20, 60], 1, 3600),
  faultDownSeconds: rangeEnv('SOAK_FAULT_DOWN_SECONDS', [2, 6], 0, 300),
  faultKinds: faultKindsEnv(),
  clients: intEnv('SOAK_CLIENTS', 10, 1, 64),
  graphqlClients: intEnv('SOAK_GRAPHQL_CLIENTS', 2, 0, 16),
  streams: intEnv('SOAK_STREAMS', 4, 0, 16),
  keys: intEnv('SOAK_KEYS', 20, 8, 200),
  clientSleepMs: rangeEnv('SOAK_CLIENT_SLEEP_MS', [100, 400], 0, 60_000),
  publishEveryMs: rangeEnv('SOAK_PUBLISH_EVERY_MS', [1000, 3000], 100, 600_000),
  requestTimeoutMs: intEnv('SOAK_REQUEST_TIMEOUT_MS', 10_000, 1_000, 120_000),
  drainSeconds: intEnv('SOAK_DRAIN_SECONDS', 120, 10, 3_600),
  receiverFailShare: floatEnv('SOAK_RECEIVER_FAIL_SHARE', 0.02, 0, 0.5),
  tierLimits: tierLimitsEnv(),
  instances: INSTANCES,
};

// ---------------------------------------------------------------- small helpers

const between = (r, lo, hi) => lo + r() * (hi - lo);
const choose = (r, items) => items[Math.floor(r() * items.length)];
const floor2 = (x) => Math.floor(x * 100 + 1e-9) / 100;
const round3 = (x) => Math.round(x * 1000) / 1000;
const monthOf = (ms) => new Date(ms).toISOString().slice(0, 7);
const fmtS = (ms) => `${(ms / 1000).toFixed(1)} s`;
const pad = (s, n) => String(s).padEnd(n);
const lpad = (s, n) => String(s).padStart(n);

let runStartedAt = Date.now();
const rel = (ms) => (ms === null || ms === undefined ? null : Math.round((ms - runStartedAt) / 100) / 10);

async function waitUntil(what, check, timeoutMs = 10_000, everyMs = 100) {
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
async function freePorts(count) {
  for (let attempt = 0; attempt < 100; attempt += 1) {
    const base = 20_000 + Math.floor(Math.random() * (32_000 - 20_000 - count));
    const ports = Array.from({ length: count }, (_, i) => base + i);
    if ((await Promise.all(ports.map(portFree))).every(Boolean)) return ports;
  }
  throw new Error(`no ${count} consecutive free ports found between 20000 and 32000`);
}

// ---------------------------------------------------------------- processes and cleanup

const managed = new Set();
const tempDirs = new Set();

/** A child process with the tail of its output kept and its pino error lines counted. */
function manage(name, child) {
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
      managed.delete(m);
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
  managed.add(m);
  return m;
}

/** Last resort (process exit): nothing we started outlives us. */
function killEverythingSync() {
  for (const m of managed) {
    try {
      m.child.kill(m.name === 'postgres' ? 'SIGQUIT' : 'SIGKILL');
    } catch {
      // gone
    }
  }
  for (const dir of tempDirs) rmSync(dir, { recursive: true, force: true });
}
process.on('exit', killEverythingSync);

/** Kills every process the soak started (PostgreSQL with SIGQUIT: its fast stop), waits up to 5 s, and exits. */
async function stopEverythingAndExit(code) {
  for (const m of [...managed]) {
    try {
      m.child.kill(m.name === 'postgres' ? 'SIGQUIT' : 'SIGKILL');
    } catch {
      // gone
    }
  }
  await Promise.race([Promise.all([...managed].map((m) => m.exited)), sleep(5_000)]);
  killEverythingSync();
  process.exit(code);
}

let interrupted = false;
for (const signal of ['SIGINT', 'SIGTERM', 'SIGHUP']) {
  process.on(signal, () => {
    if (interrupted) {
      killEverythingSync();
      process.exit(130);
    }
    interrupted = true;
    log(`\nsoak: ${signal}, stopping everything`);
    void stopEverythingAndExit(130);
  });
}

/** The environment of a child: explicit, nothing inherited but PATH and HOME. */
function childEnv(env) {
  return { PATH: process.env.PATH ?? '/usr/bin:/bin', HOME: process.env.HOME ?? os.tmpdir(), HOST, LOG_LEVEL: 'warn', NODE_EXTRA_CA_CERTS: CA_FILE, ...env };
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

class Postgres {
  constructor(port) {
    this.port = port;
    this.bin = findPostgresBin();
    this.root = mkdtempSync(path.join(os.tmpdir(), 'picks-soak-pg-'));
    tempDirs.add(this.root);
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
    if (interrupted) throw new Error('interrupted');
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
async function openSql(url) {
  const { MikroORM } = await import('@mikro-orm/postgresql');
  const orm = await MikroORM.init({ clientUrl: url, entities: [], discovery: { warnWhenNoEntities: false }, pool: { min: 0, max: 2 } });
  return {
    query: (sql, params = []) => orm.em.getConnection().execute(sql, params),
    close: () => orm.close(true),
  };
}

// ---------------------------------------------------------------- Redis

function redisCommand(port, command) {
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

class Redis {
  constructor(port) {
    this.port = port;
    this.binary = which('redis-server');
    if (!this.binary) throw new Error('redis-server not found on PATH (apt-get install redis-server)');
    this.dir = mkdtempSync(path.join(os.tmpdir(), 'picks-soak-redis-'));
    tempDirs.add(this.dir);
    this.url = `redis://${HOST}:${port}`;
    this.proc = null;
  }

  async start() {
    if (interrupted) throw new Error('interrupted');
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

// ---------------------------------------------------------------- the odds feed (The Odds API v4)

/**
 * Matches of soccer_epl priced by pinnacle (the reference: power prices of known probabilities,
 * so its no-vig price is known) and two soft books. A soft book's market either carries a margin
 * on every outcome, or prices one outcome at a post-tax edge over the fair price and the others
 * with enough margin that the book's implied probabilities still sum above 1 (the engine drops a
 * book with a negative margin).
 */
function startFeed(r) {
  const BOOKS = [['pinnacle', 'Pinnacle'], ['williamhill', 'William Hill'], ['unibet_eu', 'Unibet']];
  const K = 1.04;
  const matches = [];
  const stats = { matches: 0, valueOffers: 0, reviewOffers: 0, betterPrices: 0, oddsRequests: 0, scoresRequests: 0 };
  let open = false;
  let frozenAt = null;
  let nextNewAt = 0;
  let nextChangeAt = 0;
  let count = 0;
  const now = () => frozenAt ?? Date.now();

  function bookPrices(m, b) {
    const book = m.books[b];
    if (book.value === null) return m.p.map((p) => Math.max(1.01, floor2(1 / (p * 1.06))));
    const v = book.value;
    const priceV = floor2(((1 / m.p[v]) * (1 + book.edge)) / (1 - TAX));
    const scale = (1.06 - 1 / priceV) / (1 - m.p[v]);
    return m.p.map((p, o) => (o === v ? priceV : Math.max(1.01, floor2(1 / (p * scale)))));
  }

  function offerValue(m, b) {
    const candidates = [0, 1, 2].filter((o) => m.p[o] >= 0.15 && !m.books.some((book) => book && book.value === o));
    if (candidates.length === 0) return false;
    const review = r() < 0.1;
    m.books[b] = { value: choose(r, candidates), edge: review ? between(r, 0.3, 0.4) : between(r, 0.04, 0.12) };
    m.changedAt = Date.now();
    stats.valueOffers += 1;
    if (review) stats.reviewOffers += 1;
    return true;
  }

  function newMatch() {
    count += 1;
    const pHome = between(r, 0.25, 0.6);
    const pDraw = between(r, 0.22, 0.3);
    const pAway = 1 - pHome - pDraw;
    const soon = r() < 0.35;
    const commence = Date.now() + (soon ? between(r, 150, 360) * 1000 : between(r, 2, 40) * 3_600_000);
    const m = {
      id: `soak${settings.seed.toString(16)}e${count}`,
      home: `Home ${count} FC`,
      away: `Away ${count} FC`,
      // v4 order: home, away, Draw.
      p: [pHome, Math.max(0.1, pAway), pDraw],
      commence: Math.floor(commence / 1000) * 1000,
      books: [null, { value: null }, { value: null }],
      final: [Math.floor(r() * 4), Math.floor(r() * 4)],
      changedAt: Date.now(),
    };
    const sum = m.p.reduce((a, b) => a + b, 0);
    m.p = m.p.map((p) => p / sum);
    m.reference = m.p.map((p) => round3(1 / p ** (1 / K)));
    offerValue(m, 1);
    matches.push(m);
    stats.matches += 1;
  }

  /** Every second: a new match every 6-14 s, and now and then a second edge or a better price. */
  function tick() {
    if (!open || frozenAt !== null) return;
    const t = Date.now();
    if (t >= nextNewAt) {
      newMatch();
      nextNewAt = t + between(r, 6_000, 14_000);
    }
    if (t >= nextChangeAt) {
      nextChangeAt = t + between(r, 3_000, 8_000);
      const upcoming = matches.filter((m) => m.commence > t + 60_000);
      if (upcoming.length === 0) return;
      const m = choose(r, upcoming);
      if (r() < 0.5) {
        if (m.books[2].value === null) offerValue(m, 2);
      } else if (m.books[1].value !== null) {
        // A better price for an outcome that already has a pick: no second pick may follow.
        m.books[1].edge += 0.01;
        m.changedAt = t;
        stats.betterPrices += 1;
      }
    }
  }
  const timer = setInterval(tick, 1_000);

  function oddsBody() {
    const t = now();
    const refreshed = Math.floor(t / 30_000) * 30_000;
    return matches
      .filter((m) => m.commence > t)
      .map((m) => {
        const at = new Date(Math.min(t, Math.max(m.changedAt, refreshed))).toISOString();
        return {
          id: m.id,
          sport_key: SPORT_KEY,
          sport_title: 'EPL',
          commence_time: new Date(m.commence).toISOString(),
          home_team: m.home,
          away_team: m.away,
          bookmakers: BOOKS.map(([key, title], b) => {
            const prices = b === 0 ? m.reference : bookPrices(m, b);
            return {
              key,
              title,
              last_update: at,
              markets: [{ key: 'h2h', last_update: at, outcomes: [{ name: m.home, price: prices[0] }, { name: m.away, price: prices[1] }, { name: 'Draw', price: prices[2] }] }],
            };
          }),
        };
      });
  }

  function scoresBody() {
    const t = now();
    return matches
      .filter((m) => m.commence <= t)
      .map((m) => {
        const completed = t >= m.commence + 60_000;
        return {
          id: m.id,
          sport_key: SPORT_KEY,
          sport_title: 'EPL',
          commence_time: new Date(m.commence).toISOString(),
          completed,
          home_team: m.home,
          away_team: m.away,
          scores: completed ? [{ name: m.home, score: String(m.final[0]) }, { name: m.away, score: String(m.final[1]) }] : null,
          last_update: completed ? new Date(m.commence + 60_000).toISOString() : null,
        };
      });
  }

  const server = http.createServer((req, res) => {
    const url = new URL(req.url ?? '/', `http://${HOST}`);
    let body;
    if (url.pathname === `/v4/sports/${SPORT_KEY}/odds`) {
      stats.oddsRequests += 1;
      body = open ? oddsBody() : [];
    } else if (url.pathname === `/v4/sports/${SPORT_KEY}/scores`) {
      stats.scoresRequests += 1;
      body = open ? scoresBody() : [];
    } else {
      res.writeHead(404, { 'content-type': 'application/json' }).end('{"message":"Unknown sport"}');
      return;
    }
    res.writeHead(200, { 'content-type': 'application/json', 'x-requests-remaining': '19000', 'x-requests-used': '1000' });
    res.end(JSON.stringify(body));
  });
  return new Promise((resolve, reject) => {
    server.once('error', reject);
    server.listen(0, HOST, () => {
      resolve({
        url: `http://${HOST}:${server.address().port}`,
        stats,
        open() {
          open = true;
          nextNewAt = Date.now();
          nextChangeAt = Date.now() + 5_000;
        },
        /** No more changes: odds and scores stay as they are now. */
        freeze() {
          frozenAt = Date.now();
        },
        close() {
          clearInterval(timer);
          server.closeAllConnections();
          return new Promise((done) => server.close(() => done()));
        },
      });
    });
  });
}

// ---------------------------------------------------------------- the webhook receiver

function startReceiver(r) {
  const subscriptions = new Map();
  const arrivals = [];
  const unverified = [];
  const verify = (arrival, raw, sub) => {
    try {
      sub.standard.verify(raw.toString('utf8'), { 'webhook-id': arrival.webhookId, 'webhook-timestamp': arrival.timestamp, 'webhook-signature': arrival.signature });
      arrival.standardOk = true;
    } catch {
      arrival.standardOk = false;
    }
    const expected = Buffer.from(`sha256=${createHmac('sha256', sub.secret).update(raw).digest('hex')}`);
    const presented = Buffer.from(arrival.serviceSignature);
    arrival.serviceOk = expected.length === presented.length && timingSafeEqual(expected, presented);
  };
  const server = https.createServer({ cert: readFileSync(path.join(TLS_DIR, 'server.pem')), key: readFileSync(path.join(TLS_DIR, 'server-key.pem')) }, (req, res) => {
    const at = Date.now();
    const chunks = [];
    req.on('data', (chunk) => chunks.push(chunk));
    req.on('end', () => {
      const raw = Buffer.concat(chunks);
      const header = (name) => String(req.headers[name] ?? '');
      const arrival = {
        at,
        path: req.url ?? '',
        method: req.method,
        delivery: header('x-service-delivery'),
        webhookId: header('webhook-id'),
        timestamp: header('webhook-timestamp'),
        signature: header('webhook-signature'),
        serviceSignature: header('x-service-signature'),
        eventType: header('x-service-event'),
        eventId: null,
        standardOk: null,
        serviceOk: null,
        answered: null,
      };
      try {
        arrival.eventId = JSON.parse(raw.toString('utf8')).id ?? null;
      } catch {
        // counted as unverifiable below
      }
      const sub = subscriptions.get(arrival.path);
      if (sub) verify(arrival, raw, sub);
      else unverified.push({ arrival, raw });
      arrivals.push(arrival);
      arrival.answered = r() < settings.receiverFailShare ? 503 : 200;
      res.on('error', () => {});
      res.writeHead(arrival.answered, { 'content-type': 'text/plain' });
      res.end(arrival.answered === 200 ? 'ok' : 'soak: injected failure, retry please');
    });
  });
  server.on('tlsClientError', () => {});
  return new Promise((resolve, reject) => {
    server.once('error', reject);
    server.listen(0, HOST, () => {
      resolve({
        port: server.address().port,
        arrivals,
        subscriptions,
        register(subPath, secret, info) {
          const sub = { ...info, path: subPath, secret, standard: new Webhook(secret) };
          subscriptions.set(subPath, sub);
          // A delivery that beat the registration (none should): verified now.
          for (let i = unverified.length - 1; i >= 0; i -= 1) {
            if (unverified[i].arrival.path !== subPath) continue;
            verify(unverified[i].arrival, unverified[i].raw, sub);
            unverified.splice(i, 1);
          }
        },
        close() {
          server.closeAllConnections();
          return new Promise((done) => server.close(() => done()));
        },
      });
    });
  });
}

// ---------------------------------------------------------------- the instances

const instances = [];
/** Every instance process ever started: its port, pid, when it was spawned, ready, exited, and why. */
const lives = [];

async function httpOk(url) {
  try {
    const response = await fetch(url, { signal: AbortSignal.timeout(1_000) });
    await response.arrayBuffer();
    return response.ok;
  } catch {
    return false;
  }
}

async function readyz(instance) {
  try {
    const response = await fetch(`http://${HOST}:${instance.port}/readyz`, { signal: AbortSignal.timeout(2_000) });
    return { status: response.status, body: await response.json() };
  } catch {
    return null;
  }
}

async function startInstance(instance, env) {
  if (interrupted) throw new Error('interrupted');
  const child = spawn(process.execPath, [MAIN_JS], { cwd: ROOT, env: childEnv({ ...env, PORT: String(instance.port) }), stdio: ['ignore', 'pipe', 'pipe'] });
  const proc = manage(instance.name, child);
  const life = { name: instance.name, port: instance.port, pid: child.pid, spawnedAt: Date.now(), readyAt: null, killedAt: null, exitedAt: null, exit: null, killedByUs: false, stoppedByUs: false, proc };
  lives.push(life);
  instance.proc = proc;
  instance.life = life;
  proc.exited.then((exit) => {
    life.exitedAt = Date.now();
    life.exit = exit;
    if (!life.killedByUs && !life.stoppedByUs && !interrupted) log(`  [+${rel(life.exitedAt)} s] UNEXPECTED: ${instance.name} (pid ${life.pid}) exited ${JSON.stringify(exit)}; its last lines:\n${proc.tail(12)}`);
  });
  await waitUntil(`${instance.name} to answer /healthz`, async () => {
    if (!proc.running()) throw new Error(`${instance.name} exited ${JSON.stringify(proc.exit)}:\n${proc.tail()}`);
    return httpOk(`http://${HOST}:${instance.port}/healthz`);
  }, 90_000, 200);
  life.readyAt = Date.now();
  return life;
}

async function migrate(env) {
  const child = spawn(process.execPath, [MIGRATE_JS], { cwd: ROOT, env: childEnv(env), stdio: ['ignore', 'pipe', 'pipe'] });
  const proc = manage('migrate', child);
  const exit = await proc.exited;
  if (exit.code !== 0) throw new Error(`migrate failed (${JSON.stringify(exit)}):\n${proc.tail()}`);
}

/** When a process stopped serving: the signal we sent (its clients may see the reset before we see the exit), or its exit. */
const lifeEnd = (life) => life.killedAt ?? life.exitedAt;

/** Whether a process of `port` was up (ready, not yet signalled or exited) for the whole of [from, to]. */
function instanceUpThroughout(port, from, to) {
  return lives.some((life) => life.port === port && life.readyAt !== null && life.readyAt <= from && (lifeEnd(life) === null || lifeEnd(life) >= to));
}

// ---------------------------------------------------------------- client calls

/** Every client call: key, kind, endpoint, port, status ('lost' when no answer), code, sent, answered. */
const calls = [];

function lostKind(error) {
  if (error?.name === 'TimeoutError' || error?.name === 'AbortError') return 'timeout';
  const cause = error?.cause ?? error;
  const code = cause?.code ?? '';
  if (code === 'ECONNREFUSED') return 'refused';
  if (code === 'ECONNRESET' || code === 'EPIPE' || code === 'UND_ERR_SOCKET' || /other side closed|socket hang up/i.test(String(cause?.message))) return 'reset';
  return `error:${code || String(cause?.message ?? error).slice(0, 60)}`;
}

function errorCode(json) {
  if (!json || typeof json !== 'object') return null;
  if (typeof json.error === 'string') return json.error;
  return json.errors?.[0]?.extensions?.code ?? null;
}

/** One HTTP call, recorded. `key`: { label, key } or null (public) or 'admin'. */
async function call({ key, kind, ep, port, method = 'GET', path: urlPath, headers = {}, body }) {
  const rec = { key: key === 'admin' ? 'admin' : key ? key.label : null, kind, ep, port, sent: Date.now(), answered: null, status: null, code: null, lost: null, internal: false };
  calls.push(rec);
  const auth = key === 'admin' ? { authorization: `Bearer ${adminToken}` } : key ? { authorization: `Bearer ${key.key}` } : {};
  try {
    const response = await fetch(`http://${HOST}:${port}${urlPath}`, {
      method,
      headers: { ...auth, ...(body === undefined ? {} : { 'content-type': 'application/json' }), ...headers },
      body: body === undefined ? undefined : JSON.stringify(body),
      signal: AbortSignal.timeout(settings.requestTimeoutMs),
    });
    const text = await response.text();
    rec.answered = Date.now();
    rec.status = response.status;
    let json = null;
    try {
      json = JSON.parse(text);
    } catch {
      // not JSON
    }
    rec.code = errorCode(json);
    if (Array.isArray(json?.errors) && json.errors.some((e) => e?.extensions?.code === 'internal_error')) rec.internal = true;
    return { rec, status: response.status, json };
  } catch (error) {
    rec.answered = Date.now();
    rec.status = 'lost';
    rec.lost = lostKind(error);
    return { rec, status: 'lost', json: null };
  }
}

const graphql = (key, port, query, variables = {}, kind = 'graphql', ep = 'graphql') => call({ key, kind, ep, port, method: 'POST', path: '/graphql', body: { query, variables } });

// ---------------------------------------------------------------- run state

let adminToken = '';
const keys = [];
const knownPickIds = [];
const adminPicks = { published: [], settled: new Set(), publishAnswers: 0 };
const timeline = [];
const streamClients = [];
const streamConnections = [];
const activeStreams = new Map();
let trafficStop = false;
let streamsStop = false;
let schedulerStop = false;

function rememberPick(id) {
  if (!id) return;
  knownPickIds.push(id);
  if (knownPickIds.length > 300) knownPickIds.splice(0, knownPickIds.length - 300);
}

const ports = () => instances.map((i) => i.port);

// ---------------------------------------------------------------- traffic loops

async function restLoop(r) {
  const trafficKeys = keys.filter((k) => !k.streamOnly);
  while (!trafficStop) {
    const key = choose(r, trafficKeys);
    const port = choose(r, ports());
    const x = r();
    let request;
    if (x < 0.34) request = { ep: 'picks', path: `/api/v1/picks?limit=${1 + Math.floor(r() * 20)}${r() < 0.3 ? '&sport=soccer' : ''}` };
    else if (x < 0.5) request = { ep: 'track-record', path: `/api/v1/track-record?days_back=${1 + Math.floor(r() * 60)}` };
    else if (x < 0.6) request = { ep: 'match-analysis', path: `/api/v1/match-analyses/${knownPickIds.length && r() < 0.8 ? choose(r, knownPickIds) : '00000000-0000-7000-8000-000000000000'}` };
    else if (x < 0.63) request = { ep: 'usage', kind: 'usage', path: '/api/v1/usage' };
    else if (x < 0.7) request = { ep: 'webhooks-list', path: '/api/v1/webhooks' };
    else if (x < 0.75) request = { ep: 'bad-cursor', path: '/api/v1/picks?cursor=not-a-cursor' };
    else if (x < 0.78) request = { ep: 'bad-param', path: '/api/v1/picks?limit=0' };
    else if (x < 0.81) request = { ep: 'unknown-path', path: '/api/v1/no-such-thing' };
    else if (x < 0.86) request = { ep: 'public', public: true, path: `/api/public/picks/today?limit=${1 + Math.floor(r() * 20)}` };
    else request = { ep: 'picks-page', path: `/api/v1/picks?limit=5&since=${encodeURIComponent(new Date(Date.now() - 86_400_000).toISOString())}` };
    const { json } = await call({ key: request.public ? null : key, kind: request.kind ?? (request.public ? 'public' : 'rest'), ep: request.ep, port, path: request.path });
    if (request.ep === 'picks' && Array.isArray(json?.data)) for (const pick of json.data.slice(0, 3)) rememberPick(pick.id);
    await sleep(between(r, ...settings.clientSleepMs));
  }
}

const GQL_PICKS = 'query { picks(first: 5) { nodes { id status } } }';
const GQL_USAGE = 'query { apiKeyUsage { tier hourly { used limit remaining } monthly { used limit remaining } } }';
const GQL_PICK = 'query($id: ID!) { pick(id: $id) { id status } }';
const GQL_TRACK = 'query { trackRecord(daysBack: 30) { overall { totalSettled roiPct } } }';

async function graphqlLoop(r) {
  const trafficKeys = keys.filter((k) => !k.streamOnly);
  while (!trafficStop) {
    const key = choose(r, trafficKeys);
    const port = choose(r, ports());
    const x = r();
    if (x < 0.4) {
      const { json } = await graphql(key, port, GQL_PICKS, {}, 'graphql', 'gql-picks');
      for (const node of json?.data?.picks?.nodes?.slice(0, 2) ?? []) rememberPick(node.id);
    } else if (x < 0.6) await graphql(key, port, GQL_USAGE, {}, 'graphql', 'gql-usage');
    else if (x < 0.8) await graphql(key, port, GQL_PICK, { id: knownPickIds.length ? choose(r, knownPickIds) : '00000000-0000-7000-8000-000000000000' }, 'graphql', 'gql-pick');
    else await graphql(key, port, GQL_TRACK, {}, 'graphql', 'gql-track-record');
    await sleep(between(r, ...settings.clientSleepMs));
  }
}

const PUBLISH = 'mutation($input: PublishPickInput!) { publishPick(input: $input) { id status } }';
const SETTLE = 'mutation($input: SettlePickInput!) { settlePick(input: $input) { id status } }';
const CREATE_KEY = 'mutation($input: CreateApiKeyInput!) { createApiKey(input: $input) { key apiKey { id tier } } }';

async function adminLoop(r) {
  let n = 0;
  while (!trafficStop) {
    const port = choose(r, ports());
    const unsettled = adminPicks.published.filter((id) => !adminPicks.settled.has(id));
    if (r() < 0.2 && unsettled.length > 3) {
      const id = choose(r, unsettled.slice(0, -2));
      const { json } = await graphql('admin', port, SETTLE, { input: { id, result: choose(r, ['WON', 'LOST', 'VOID', 'HALF_WON']), closingOdds: 2.05 } }, 'admin', 'settle');
      // Settled now, or already (a lost answer earlier): either way it is done.
      if (json?.data?.settlePick || json?.errors?.[0]?.extensions?.code === 'invalid_transition') adminPicks.settled.add(id);
    } else {
      n += 1;
      const team = `Soak ${settings.seed.toString(16)} ${n}`;
      const input = {
        sport: 'soccer',
        league: 'Soak League',
        homeTeam: `${team} Home`,
        awayTeam: `${team} Away`,
        kickoffAt: new Date(Date.now() + between(r, 1, 48) * 3_600_000).toISOString(),
        selection: `${team} Home`,
        bookmaker: { name: 'Bet365', slug: 'bet365' },
        odds: round3(between(r, 1.8, 3.2)),
        referenceFairOdds: 1.7,
        confidence: 50 + Math.floor(r() * 40),
      };
      const { json } = await graphql('admin', port, PUBLISH, { input }, 'admin', 'publish');
      const id = json?.data?.publishPick?.id;
      if (id) {
        adminPicks.published.push(id);
        adminPicks.publishAnswers += 1;
        rememberPick(id);
      }
    }
    await sleep(between(r, ...settings.publishEveryMs));
  }
}

// ---------------------------------------------------------------- SSE streams

function handleFrame(client, conn, frame) {
  let id = null;
  let event = 'message';
  const data = [];
  for (const line of frame.split('\n')) {
    if (line === '' || line.startsWith(':')) continue;
    const colon = line.indexOf(':');
    const field = colon === -1 ? line : line.slice(0, colon);
    const value = colon === -1 ? '' : line.slice(colon + 1).replace(/^ /, '');
    if (field === 'id') id = value;
    else if (field === 'event') event = value;
    else if (field === 'data') data.push(value);
  }
  if (id === null || event !== 'pick.published') return;
  const seq = Number(id);
  let pickId = null;
  try {
    pickId = JSON.parse(data.join('\n')).id ?? null;
  } catch {
    conn.badFrames += 1;
  }
  const last = conn.seqs.at(-1);
  if (last !== undefined && seq <= last) {
    if (seq === last || conn.seqs.includes(seq)) conn.duplicates += 1;
    else conn.outOfOrder += 1;
    return;
  }
  conn.seqs.push(seq);
  conn.pickIds.push(pickId);
  client.lastSeq = seq;
}

function openStream(client, port, resumeFrom, plannedMs) {
  return new Promise((resolve) => {
    const rec = { key: client.key.label, kind: 'sse', ep: 'stream', port, sent: Date.now(), answered: null, status: null, code: null, lost: null, internal: false };
    calls.push(rec);
    const conn = { client: client.index, key: client.key.label, port, resumeFrom, sent: rec.sent, headersAt: null, status: null, endedAt: null, end: null, seqs: [], pickIds: [], duplicates: 0, outOfOrder: 0, badFrames: 0, closing: false };
    streamConnections.push(conn);
    const headers = { authorization: `Bearer ${client.key.key}`, accept: 'text/event-stream' };
    if (resumeFrom !== null) headers['last-event-id'] = String(resumeFrom);
    let finished = false;
    let planned = null;
    const req = http.request({ host: HOST, port, path: '/api/v1/picks/stream', headers, agent: false });
    const headerTimer = setTimeout(() => {
      if (rec.status !== null) return;
      rec.status = 'lost';
      rec.lost = 'timeout';
      rec.answered = Date.now();
      req.destroy();
    }, settings.requestTimeoutMs);
    const finish = (end) => {
      if (finished) return;
      finished = true;
      clearTimeout(headerTimer);
      clearTimeout(planned);
      conn.endedAt = Date.now();
      conn.end = end;
      activeStreams.delete(req);
      resolve(conn);
    };
    activeStreams.set(req, conn);
    req.on('response', (res) => {
      clearTimeout(headerTimer);
      rec.answered = conn.headersAt = Date.now();
      rec.status = conn.status = res.statusCode;
      res.setEncoding('utf8');
      if (res.statusCode !== 200) {
        let body = '';
        res.on('data', (chunk) => (body += chunk));
        res.on('end', () => {
          try {
            rec.code = errorCode(JSON.parse(body));
          } catch {
            // not JSON
          }
          finish('refused');
        });
        res.on('error', () => finish('refused'));
        return;
      }
      let buffer = '';
      res.on('data', (chunk) => {
        buffer += chunk;
        let at;
        while ((at = buffer.indexOf('\n\n')) !== -1) {
          handleFrame(client, conn, buffer.slice(0, at));
          buffer = buffer.slice(at + 2);
        }
      });
      res.on('end', () => finish(conn.closing ? 'client-closed' : 'server-ended'));
      res.on('error', () => finish(conn.closing ? 'client-closed' : 'reset'));
      res.on('close', () => finish(conn.closing ? 'client-closed' : 'closed'));
      planned = setTimeout(() => {
        conn.closing = true;
        req.destroy();
      }, plannedMs);
    });
    req.on('error', (error) => {
      if (rec.status === null) {
        rec.status = 'lost';
        rec.lost = lostKind(error);
        rec.answered = Date.now();
      }
      finish(conn.closing ? 'client-closed' : 'error');
    });
    req.end();
  });
}

async function streamLoop(client, r) {
  while (!streamsStop) {
    const conn = await openStream(client, choose(r, ports()), client.lastSeq, between(r, 10_000, 40_000));
    if (streamsStop) break;
    await sleep(conn.status === 200 ? between(r, 300, 2_000) : between(r, 1_000, 3_000));
  }
}

function stopStreams() {
  streamsStop = true;
  for (const [req, conn] of activeStreams) {
    conn.closing = true;
    req.destroy();
  }
}

// ---------------------------------------------------------------- the fault scheduler

let redis;
let pg;
let serverEnv;

async function waitInstancesReady(what, predicate, timeoutMs = 30_000) {
  return waitUntil(what, async () => {
    const running = instances.filter((i) => i.proc?.running());
    const answers = await Promise.all(running.map((i) => readyz(i)));
    return answers.every((a) => a && predicate(a));
  }, timeoutMs, 200).then(() => true, () => false);
}

async function runFault(kind, targetIndex, downMs) {
  const fault = { kind, target: kind === 'instance' ? instances[targetIndex].name : kind, startedAt: Date.now(), restartedAt: null, recoveredAt: null, plannedDownMs: Math.round(downMs), recovered: false, note: null };
  timeline.push(fault);
  try {
    if (kind === 'redis') {
      fault.redisKeysBefore = await redis.dbsize();
      fault.startedAt = Date.now();
      await redis.kill();
      log(`  [+${rel(fault.startedAt)} s] fault: SIGKILL Redis (${fault.redisKeysBefore} keys); restart in ${fmtS(downMs)}`);
      await sleep(downMs);
      await redis.start();
      fault.restartedAt = Date.now();
      fault.redisKeysAfter = await redis.dbsize();
      fault.recovered = await waitInstancesReady('every instance back on Redis', (a) => a.status === 200 && a.body?.limiter === 'redis' && a.body?.status === 'ready');
    } else if (kind === 'postgres') {
      fault.startedAt = Date.now();
      const exit = await pg.stop();
      log(`  [+${rel(fault.startedAt)} s] fault: PostgreSQL fast stop (exit ${JSON.stringify(exit)}); start in ${fmtS(downMs)}`);
      await sleep(downMs);
      await pg.start();
      fault.restartedAt = Date.now();
      fault.recovered = await waitInstancesReady('every instance ready again', (a) => a.status === 200);
    } else {
      const instance = instances[targetIndex];
      fault.startedAt = Date.now();
      fault.pid = instance.life.pid;
      instance.life.killedByUs = true;
      instance.life.killedAt = Date.now();
      await instance.proc.stop('SIGKILL', 5_000);
      log(`  [+${rel(fault.startedAt)} s] fault: SIGKILL ${instance.name} (pid ${fault.pid}); restart in ${fmtS(downMs)}`);
      await sleep(downMs);
      const life = await startInstance(instance, serverEnv);
      fault.restartedAt = Date.now();
      fault.newPid = life.pid;
      fault.recovered = await waitInstancesReady(`${instance.name} ready`, (a) => a.status === 200);
    }
  } catch (error) {
    fault.note = String(error?.message ?? error).slice(0, 2_000);
    log(`  [+${rel(Date.now())} s] fault ${kind} went wrong: ${fault.note}`);
  }
  fault.recoveredAt = Date.now();
  log(`  [+${rel(fault.recoveredAt)} s] ${fault.target} ${fault.recovered ? 'recovered' : 'NOT recovered'}: down ${fmtS((fault.restartedAt ?? fault.recoveredAt) - fault.startedAt)}, service back ${fmtS(fault.recoveredAt - (fault.restartedAt ?? fault.startedAt))} after the restart${kind === 'redis' ? `; AOF kept ${fault.redisKeysAfter} of ${fault.redisKeysBefore} keys` : ''}`);
  return fault;
}

async function scheduler(r, endAt) {
  if (!settings.faultEverySeconds || settings.faultKinds.length === 0) return;
  while (!schedulerStop) {
    // Every draw happens in every round, whatever the branch, so one seed gives one schedule.
    const waitMs = between(r, ...settings.faultEverySeconds) * 1000;
    const kind = choose(r, settings.faultKinds);
    const target = Math.floor(r() * INSTANCES);
    const downMs = between(r, ...settings.faultDownSeconds) * 1000;
    const at = Date.now() + waitMs;
    if (at >= endAt) break;
    while (Date.now() < at && !schedulerStop) await sleep(Math.min(250, at - Date.now()));
    if (schedulerStop) break;
    await runFault(kind, target, downMs);
  }
}

// ---------------------------------------------------------------- invariants

function classify(rec) {
  if (rec.kind === 'usage') return 'uncounted-endpoint';
  if (rec.status === 'lost') return 'lost';
  if (rec.status === 401) return 'unauthorized';
  if (rec.status === 429) return LIMIT_CODES.has(rec.code) ? 'refused' : 'counted';
  if (rec.status === 503) return 'unavailable';
  if (rec.status >= 500) return 'error';
  if (rec.status >= 200 && rec.status < 500) return 'counted';
  return 'other';
}

function checkMonthlyUsage(db) {
  const rows = [];
  const byKey = new Map(keys.map((k) => [k.label, k]));
  const stored = new Map(db.monthlyUsage.map((u) => [`${u.api_key_id}|${u.month}`, Number(u.request_count)]));
  const perKeyMonth = new Map();
  const bucket = (label, month) => {
    const id = `${label}|${month}`;
    if (!perKeyMonth.has(id)) perKeyMonth.set(id, { key: label, month, counted: 0, lost: 0, uncertain: 0, unavailable: 0, refused: 0, unauthorized: 0, errors: 0, usageReads: 0 });
    return perKeyMonth.get(id);
  };
  for (const k of keys) bucket(k.label, monthOf(runStartedAt));
  for (const rec of calls) {
    if (!rec.key || rec.key === 'admin' || !byKey.has(rec.key)) continue;
    const cls = classify(rec);
    const m1 = monthOf(rec.sent);
    const m2 = monthOf(rec.answered ?? rec.sent);
    const b = bucket(rec.key, m1);
    if (cls === 'uncounted-endpoint') b.usageReads += 1;
    else if (cls === 'lost') {
      b.lost += 1;
      if (m2 !== m1) bucket(rec.key, m2).lost += 1;
    } else if (cls === 'counted') {
      if (m1 === m2) b.counted += 1;
      else {
        b.uncertain += 1;
        bucket(rec.key, m2).uncertain += 1;
      }
    } else if (cls === 'error') {
      b.errors += 1;
      b.uncertain += 1;
    } else if (cls === 'unavailable') b.unavailable += 1;
    else if (cls === 'refused') b.refused += 1;
    else if (cls === 'unauthorized') b.unauthorized += 1;
  }
  for (const b of perKeyMonth.values()) {
    const key = byKey.get(b.key);
    b.tier = key.tier;
    b.stored = stored.get(`${key.id}|${b.month}`) ?? 0;
    b.upper = b.counted + b.lost + b.uncertain;
    b.pass = b.stored >= b.counted && b.stored <= b.upper && b.unauthorized === 0;
    b.verdict =
      b.unauthorized > 0
        ? '401 answers'
        : b.stored < b.counted
          ? `${b.counted - b.stored} answered requests missing`
          : b.stored > b.upper
            ? `${b.stored - b.upper} more than answered + lost${b.stored - b.upper <= b.unavailable ? `, within its ${b.unavailable} answers 503: were they counted?` : ''}`
            : 'ok';
    rows.push(b);
  }
  rows.sort((a, b) => a.key.localeCompare(b.key) || a.month.localeCompare(b.month));
  const failing = rows.filter((row) => !row.pass);
  return {
    id: 'a',
    title: 'monthly_usage per key within [answered-counted, answered-counted + lost]',
    pass: failing.length === 0,
    headline: `${rows.length - failing.length}/${rows.length} key-months within bounds${failing.length ? `; failing: ${failing.map((f) => `${f.key} (${f.verdict})`).join(', ')}` : ''}`,
    rows,
  };
}

function redisOutages() {
  return timeline
    .filter((f) => f.kind === 'redis')
    .map((f) => {
      const start = f.startedAt;
      const end = f.recoveredAt ?? Date.now();
      const processes = lives.filter((life) => life.spawnedAt <= end && (life.exitedAt === null || life.exitedAt >= start));
      return { start, end, processes: processes.length };
    });
}

function checkHourly() {
  const outages = redisOutages();
  const rows = [];
  for (const key of keys) {
    const limit = settings.tierLimits[key.tier].hourly;
    const admitted = calls.filter((rec) => rec.key === key.label && classify(rec) === 'counted').sort((a, b) => a.sent - b.sent);
    // Requests whose [sent, answered] touches no Redis outage were decided by Redis, whose hourly
    // window counts its own decisions only (the fallback's admissions reach the month counters):
    // at most the limit of them in any window, outages or not.
    const outside = (rec) => !outages.some((o) => rec.sent <= o.end && rec.answered >= o.start);
    let worst = { count: 0, bound: limit, start: null, outages: 0, processes: 0, ratio: 0 };
    let maxOutside = 0;
    let violations = 0;
    let outsideViolations = 0;
    for (let i = 0; i < admitted.length; i += 1) {
      const start = admitted[i].sent;
      const end = start + 3_600_000;
      // Only requests certainly decided inside the window: sent at or after its start, answered by its end.
      let count = 0;
      let countOutside = 0;
      for (let j = i; j < admitted.length && admitted[j].sent <= end; j += 1) {
        if (admitted[j].answered > end) continue;
        count += 1;
        if (outside(admitted[j])) countOutside += 1;
      }
      const overlapping = outages.filter((o) => o.start <= end && o.end >= start);
      const processes = overlapping.reduce((sum, o) => sum + o.processes, 0);
      const bound = limit * (1 + processes);
      if (count > bound) violations += 1;
      if (countOutside > limit) outsideViolations += 1;
      maxOutside = Math.max(maxOutside, countOutside);
      const ratio = count / bound;
      if (ratio > worst.ratio || (worst.start === null && i === 0)) worst = { count, bound, start, outages: overlapping.length, processes, ratio };
    }
    // Per outage, the brief's formula as it stands: requests sent and answered inside one outage
    // were decided by the fallbacks (at most the limit per process) or by Redis once it was back
    // (at most the limit in the hour).
    let maxInOutage = 0;
    let outageViolations = 0;
    for (const o of outages) {
      const inside = admitted.filter((rec) => rec.sent >= o.start && rec.answered <= o.end).length;
      maxInOutage = Math.max(maxInOutage, inside);
      if (inside > limit * (1 + o.processes)) outageViolations += 1;
    }
    rows.push({
      key: key.label,
      tier: key.tier,
      limit,
      admitted: admitted.length,
      maxInOneOutage: maxInOutage,
      violatingOutages: outageViolations,
      maxInWindow: worst.count,
      bound: worst.bound,
      windowStart: rel(worst.start),
      outagesInWindow: worst.outages,
      processesInOutages: worst.processes,
      violatingWindows: violations,
      maxOutsideOutagesInWindow: maxOutside,
      outsideViolatingWindows: outsideViolations,
      pass: violations === 0 && outsideViolations === 0 && outageViolations === 0,
    });
  }
  const failing = rows.filter((row) => !row.pass);
  return {
    id: 'b',
    title: 'admitted per rolling 3600 s <= hourly limit (x (1 + P) when the window overlaps a Redis outage)',
    pass: failing.length === 0,
    headline: `${rows.length - failing.length}/${rows.length} keys within bounds; ${outages.length} Redis outage(s)${outages.length ? ` (P = ${outages.map((o) => o.processes).join(', ')})` : ''}${failing.length ? `; failing: ${failing.map((f) => (f.violatingWindows ? `${f.key} ${f.maxInWindow} > ${f.bound}` : f.outsideViolatingWindows ? `${f.key} ${f.maxOutsideOutagesInWindow} > ${f.limit} outside outages` : `${f.key} ${f.maxInOneOutage} in one outage`)).join(', ')}` : ''}`,
    rows,
    outages: outages.map((o) => ({ start: rel(o.start), end: rel(o.end), processes: o.processes })),
  };
}

function checkAdminPicks(db) {
  const visible = new Map(db.picks.map((p) => [p.id, p.status]));
  const missing = adminPicks.published.filter((id) => !visible.has(id));
  const invisible = adminPicks.published.filter((id) => visible.has(id) && !['published', 'settled'].includes(visible.get(id)));
  const settledMismatch = [...adminPicks.settled].filter((id) => visible.get(id) !== 'settled');
  return {
    id: 'c',
    title: 'every pick id the admin received exists',
    pass: missing.length === 0 && invisible.length === 0,
    headline: `${adminPicks.published.length - missing.length}/${adminPicks.published.length} published picks found${invisible.length ? `, ${invisible.length} not visible` : ''}; ${adminPicks.settled.size} settled by the admin (${settledMismatch.length} not settled in PostgreSQL)`,
    missing,
    invisible,
    settledMismatch,
  };
}

function checkWebhooks(db, receiver, drain) {
  const subsById = new Map(db.subscriptions.map((s) => [s.id, s]));
  const ourSubs = db.subscriptions.filter((s) => receiver.subscriptions.has(new URL(s.url).pathname));
  const deliveries = new Map(db.deliveries.map((d) => [`${d.subscription_id}|${d.event_id}`, d]));
  // What the receiver saw, by (path, event id): verified arrivals.
  const verified = new Map();
  let badSignatures = 0;
  let unknownPaths = 0;
  let deliveryIdMismatch = 0;
  const arrivalsByDelivery = new Map();
  for (const a of receiver.arrivals) {
    if (!receiver.subscriptions.has(a.path)) {
      unknownPaths += 1;
      continue;
    }
    if (!(a.standardOk && a.serviceOk)) {
      badSignatures += 1;
      continue;
    }
    const id = `${a.path}|${a.eventId}`;
    verified.set(id, (verified.get(id) ?? 0) + 1);
    arrivalsByDelivery.set(a.delivery, (arrivalsByDelivery.get(a.delivery) ?? 0) + 1);
  }
  let expected = 0;
  let notFannedOut = 0;
  let notReceived = 0;
  let notSucceeded = 0;
  const samples = [];
  const statuses = {};
  for (const s of ourSubs) {
    const subPath = new URL(s.url).pathname;
    const events = typeof s.events === 'string' ? JSON.parse(s.events) : s.events;
    for (const e of db.outbox) {
      if (!events.includes(e.type) || new Date(e.created_at) < new Date(s.created_at)) continue;
      expected += 1;
      const d = deliveries.get(`${s.id}|${e.id}`);
      if (!d) {
        notFannedOut += 1;
        if (samples.length < 10) samples.push({ problem: 'no delivery row', subscription: subPath, event: e.id, seq: e.seq });
        continue;
      }
      statuses[d.status] = (statuses[d.status] ?? 0) + 1;
      if (d.status !== 'succeeded') {
        notSucceeded += 1;
        if (samples.length < 10) samples.push({ problem: `delivery ${d.status}`, subscription: subPath, event: e.id, attempts: d.attempt_count });
      }
      if (!verified.has(`${subPath}|${e.id}`)) {
        notReceived += 1;
        if (samples.length < 10) samples.push({ problem: 'never reached the receiver with valid signatures', subscription: subPath, event: e.id, delivery: d.id });
      } else if (!arrivalsByDelivery.has(d.id)) deliveryIdMismatch += 1;
    }
  }
  const pendingAnywhere = db.deliveries.filter((d) => d.status === 'pending').length;
  const duplicates = [...arrivalsByDelivery.values()].filter((n) => n > 1).length;
  const pass = ourSubs.length > 0 && notFannedOut === 0 && notReceived === 0 && notSucceeded === 0 && badSignatures === 0 && unknownPaths === 0 && pendingAnywhere === 0;
  return {
    id: 'd',
    title: 'every webhook event reached the receiver with valid signatures; none pending',
    pass,
    headline: `${expected} (event x subscription) over ${ourSubs.length} subscriptions: ${expected - notReceived} received verified, ${notFannedOut} without a delivery row, ${notSucceeded} not succeeded (${JSON.stringify(statuses)}); ${receiver.arrivals.length} attempts arrived, ${badSignatures} with a bad signature, ${unknownPaths} to unknown paths, ${duplicates} deliveries received more than once (at least once: allowed), ${pendingAnywhere} pending at the end${drain.timedOut ? ' (the drain timed out)' : ''}`,
    expected,
    notFannedOut,
    notReceived,
    notSucceeded,
    badSignatures,
    unknownPaths,
    deliveryIdMismatch,
    pendingAnywhere,
    attempts: receiver.arrivals.length,
    injectedFailures: receiver.arrivals.filter((a) => a.answered !== 200).length,
    samples,
    subscriptions: subsById.size,
  };
}

function checkEnginePicks(db, feed) {
  const engine = db.picks.filter((p) => p.event_id !== null);
  const slots = new Map();
  for (const p of engine) {
    const slot = `${p.event_id}|${p.event_generation}|${p.market}|${p.selection}`;
    slots.set(slot, (slots.get(slot) ?? 0) + 1);
  }
  const duplicates = [...slots.entries()].filter(([, n]) => n > 1);
  // Also per (event, market, selection) across generations: the feed never reuses an id, so any repeat is suspect.
  const loose = new Map();
  for (const p of engine) {
    const slot = `${p.event_id}|${p.market}|${p.selection}`;
    loose.set(slot, (loose.get(slot) ?? 0) + 1);
  }
  const looseDuplicates = [...loose.entries()].filter(([, n]) => n > 1);
  const byStatus = {};
  for (const p of engine) byStatus[p.status] = (byStatus[p.status] ?? 0) + 1;
  return {
    id: 'e',
    title: 'no duplicate engine pick (event, generation, market, selection)',
    pass: duplicates.length === 0 && looseDuplicates.length === 0,
    headline: `${engine.length} engine picks ${JSON.stringify(byStatus)} from ${feed.stats.valueOffers} value offers (${feed.stats.reviewOffers} priced to be held for review, ${feed.stats.betterPrices} better prices on picked outcomes); ${duplicates.length} duplicate slots${looseDuplicates.length ? `, ${looseDuplicates.length} across generations` : ''}`,
    duplicates: duplicates.slice(0, 20),
    looseDuplicates: looseDuplicates.slice(0, 20),
  };
}

function checkStreams(db) {
  const hidden = new Set(db.picks.filter((p) => !['published', 'settled'].includes(p.status)).map((p) => p.id));
  const published = db.outbox.filter((e) => e.type === 'pick.published' && !hidden.has(e.pick_id)).map((e) => ({ seq: Number(e.seq), pickId: e.pick_id })).sort((a, b) => a.seq - b.seq);
  const pickOfSeq = new Map(published.map((e) => [e.seq, e.pickId]));
  const maxSeq = published.length ? published.at(-1).seq : null;
  const inRange = (lo, hi) => published.filter((e) => e.seq > lo && e.seq <= hi).map((e) => e.seq);
  let resumed = 0;
  let resumedChecked = 0;
  let checkedEvents = 0;
  let gaps = 0;
  let duplicates = 0;
  let outOfOrder = 0;
  let wrongPick = 0;
  const samples = [];
  const opened = streamConnections.filter((c) => c.status === 200);
  for (const c of opened) {
    duplicates += c.duplicates;
    outOfOrder += c.outOfOrder;
    c.seqs.forEach((seq, i) => {
      if (pickOfSeq.has(seq) && c.pickIds[i] !== pickOfSeq.get(seq)) wrongPick += 1;
    });
    if (c.resumeFrom !== null) resumed += 1;
    if (c.seqs.length === 0) continue;
    const from = c.resumeFrom !== null ? c.resumeFrom : c.seqs[0] - 1;
    const expected = inRange(from, c.seqs.at(-1));
    const got = new Set(c.seqs);
    const missing = expected.filter((seq) => !got.has(seq));
    checkedEvents += expected.length;
    if (c.resumeFrom !== null) resumedChecked += 1;
    if (missing.length) {
      gaps += missing.length;
      if (samples.length < 10) samples.push({ client: c.client, port: c.port, resumeFrom: c.resumeFrom, opened: rel(c.headersAt), ended: rel(c.endedAt), end: c.end, missing: missing.slice(0, 10), received: c.seqs.length });
    }
  }
  // Each client's stream reached the newest event by the end of the drain.
  const behind = streamClients.filter((client) => maxSeq !== null && client.lastSeq !== maxSeq).map((client) => ({ client: client.index, lastSeq: client.lastSeq, maxSeq }));
  const resumedRefused = streamConnections.filter((c) => c.resumeFrom !== null && c.status !== 200).length;
  return {
    id: 'f',
    title: 'SSE streams resumed with Last-Event-ID got every sequence after it, without a gap',
    pass: gaps === 0 && duplicates === 0 && outOfOrder === 0 && wrongPick === 0 && behind.length === 0 && (streamClients.length === 0 || resumedChecked > 0),
    headline: `${opened.length} connections (${resumed} resumed with Last-Event-ID, ${resumedChecked} of them received events; ${resumedRefused} resume attempts refused or lost), ${checkedEvents} sequence numbers checked against outbox_events: ${gaps} missing, ${duplicates} duplicated, ${outOfOrder} out of order, ${wrongPick} with another pick; ${streamClients.length - behind.length}/${streamClients.length} clients reached the newest seq ${maxSeq}`,
    samples,
    behind,
  };
}

function checkErrorsAndHangs() {
  const errors = calls.filter((rec) => (typeof rec.status === 'number' && rec.status >= 500 && rec.status !== 503) || rec.internal);
  const timeouts = calls.filter((rec) => rec.lost === 'timeout');
  const hung = timeouts.filter((rec) => instanceUpThroughout(rec.port, rec.sent, rec.answered));
  const lostWhileUp = calls.filter((rec) => rec.status === 'lost' && rec.lost !== 'timeout' && instanceUpThroughout(rec.port, rec.sent, rec.answered));
  const byKind = {};
  for (const rec of lostWhileUp) byKind[rec.lost] = (byKind[rec.lost] ?? 0) + 1;
  const sample = (rec) => ({ key: rec.key, kind: rec.kind, ep: rec.ep, port: rec.port, status: rec.status, code: rec.code, lost: rec.lost, sent: rel(rec.sent), ms: rec.answered - rec.sent });
  return {
    id: 'g',
    title: 'no 500 and no request hung past its timeout while its instance was up',
    pass: errors.length === 0 && hung.length === 0,
    headline: `${errors.length} answers 5xx other than 503 (or GraphQL internal_error), ${timeouts.length} timeouts of which ${hung.length} while the instance was up; for information, ${lostWhileUp.length} other lost answers while the instance was up ${JSON.stringify(byKind)}`,
    errors: errors.slice(0, 20).map(sample),
    hung: hung.slice(0, 20).map(sample),
    lostWhileUp: lostWhileUp.slice(0, 20).map(sample),
  };
}

function checkProcesses(stopExits, infra) {
  const unexpected = lives.filter((life) => life.exitedAt !== null && !life.killedByUs && !life.stoppedByUs).map((life) => ({ name: life.name, pid: life.pid, exit: life.exit, at: rel(life.exitedAt) }));
  const badStops = stopExits.filter((s) => !(s.exit && s.exit.code === 0)).map((s) => ({ name: s.name, exit: s.exit }));
  const notRecovered = timeline.filter((f) => !f.recovered).map((f) => ({ kind: f.kind, target: f.target, at: rel(f.startedAt), note: f.note }));
  const pass = unexpected.length === 0 && badStops.length === 0 && notRecovered.length === 0 && infra.unexpected.length === 0;
  return {
    id: 'h',
    title: 'no process died that the scheduler did not kill; every fault recovered; SIGTERM exits 0',
    pass,
    headline: `${lives.length} instance processes over the run, ${unexpected.length} unexpected exits, ${notRecovered.length} faults not recovered, SIGTERM exits ${stopExits.map((s) => `${s.name} ${s.exit?.code ?? s.exit?.signal ?? 'none'}${s.ms !== undefined ? ` in ${fmtS(s.ms)}` : ''}`).join(', ')}${infra.unexpected.length ? `; PostgreSQL/Redis died on their own: ${infra.unexpected.join(', ')}` : ''}`,
    unexpected,
    badStops,
    notRecovered,
  };
}

// ---------------------------------------------------------------- main

async function main() {
  const { seed } = settings;
  log(`soak: seed ${seed} (SOAK_SEED=${seed} replays this fault schedule)`);
  // The instances run on this very Node (process.execPath): npm scripts give Node 22 (the `node` package).
  if (Number(process.versions.node.split('.')[0]) < 22) throw new Error(`Node ${process.versions.node}: run the soak with \`npm run soak\` (Node 22 from the \`node\` package), not a system node`);
  if (!existsSync(MAIN_JS) || !existsSync(MIGRATE_JS)) throw new Error('dist/ is missing: run `npm run soak` (it builds first) or `npm run build`');
  const faultText = settings.faultEverySeconds ? `one fault every ${settings.faultEverySeconds.join('-')} s (${settings.faultKinds.join(', ')}), down ${settings.faultDownSeconds.join('-')} s` : 'no faults';
  log(`soak: ${settings.minutes} min, ${INSTANCES} instances, ${settings.keys} API keys, ${settings.clients} REST + ${settings.graphqlClients} GraphQL client loops, ${settings.streams} SSE streams, 1 admin publisher; ${faultText}`);
  log(`soak: tier limits ${JSON.stringify(settings.tierLimits)}`);

  const schedRandom = rng(seed);
  const trafficSeed = (seed ^ 0x5bd1e995) >>> 0;
  const [pgPort, redisPort, ...instancePorts] = await freePorts(2 + INSTANCES);

  const setupStarted = Date.now();
  pg = new Postgres(pgPort);
  pg.init();
  await pg.start();
  pg.createDatabase(DATABASE);
  log(`  PostgreSQL ${path.basename(path.dirname(pg.bin))} on ${HOST}:${pgPort} (private cluster in ${pg.root})`);
  redis = new Redis(redisPort);
  await redis.start();
  log(`  Redis on ${HOST}:${redisPort} with appendonly yes, appendfsync always, no RDB snapshots (data in ${redis.dir}): a SIGKILLed Redis restarts with every acknowledged write`);
  const feed = await startFeed(rng(trafficSeed + 1));
  const receiver = await startReceiver(rng(trafficSeed + 2));
  log(`  odds feed ${feed.url} (v4, ${SPORT_KEY}); webhook receiver https://hooks.test:${receiver.port} (127.0.0.1, test certificate)`);

  adminToken = `soak-admin-${randomBytes(16).toString('hex')}`;
  serverEnv = {
    DATABASE_URL: pg.url(DATABASE),
    REDIS_URL: redis.url,
    ADMIN_TOKEN: adminToken,
    WEBHOOK_SECRET_KEY: randomBytes(32).toString('hex'),
    DEMO_SEED: 'false',
    TIER_LIMITS: JSON.stringify(settings.tierLimits),
    WEBHOOK_HOST_OVERRIDES: 'hooks.test=127.0.0.1',
    WEBHOOK_RETRY_SCHEDULE: '1s,2s,3s,5s,8s',
    WEBHOOK_LEASE_SECONDS: '5',
    ODDS_FEED_URL: feed.url,
    ODDS_FEED_API_KEY: 'soak-feed-key',
    ODDS_FEED_SPORTS: SPORT_KEY,
    ODDS_POLL_SECONDS: '2',
    SCORES_POLL_SECONDS: '4',
    MATCH_MIN_MINUTES: '0',
  };
  await migrate(serverEnv);
  for (let i = 0; i < INSTANCES; i += 1) instances.push({ name: `picks-${i + 1}`, index: i, port: instancePorts[i], proc: null, life: null });
  await Promise.all(instances.map((instance) => startInstance(instance, serverEnv)));
  log(`  instances ${instances.map((i) => `${i.name} :${i.port} (pid ${i.life.pid})`).join(', ')}; migrated and up in ${fmtS(Date.now() - setupStarted)}`);

  // API keys: two Enterprise keys only for the streams; the others for traffic, of three tiers.
  const rest = settings.keys - 2;
  const starter = Math.round(rest * 0.45);
  const growth = Math.round(rest * 0.35);
  const tiers = [...Array(starter).fill('starter'), ...Array(growth).fill('growth'), ...Array(rest - starter - growth).fill('enterprise'), 'enterprise', 'enterprise'];
  for (const [i, tier] of tiers.entries()) {
    const label = `k${String(i + 1).padStart(2, '0')}`;
    let created = null;
    for (let attempt = 0; attempt < 5 && !created; attempt += 1) {
      const { json } = await graphql('admin', instances[attempt % INSTANCES].port, CREATE_KEY, { input: { tier: tier.toUpperCase(), label: `soak ${label}` } }, 'admin', 'create-key');
      created = json?.data?.createApiKey ?? null;
      if (!created) await sleep(500);
    }
    if (!created) throw new Error(`could not create API key ${label}`);
    keys.push({ label, tier, key: created.key, id: created.apiKey.id, streamOnly: i >= rest });
  }
  // Webhook subscriptions (REST, counted like any request): two per key for four Growth/Enterprise keys.
  const hookKeys = keys.filter((k) => !k.streamOnly && k.tier !== 'starter').slice(0, 4);
  for (const key of hookKeys) {
    for (let j = 1; j <= 2; j += 1) {
      const subPath = `/${key.label}/s${j}`;
      const { status, json } = await call({ key, kind: 'rest', ep: 'webhook-create', port: instances[j % INSTANCES].port, method: 'POST', path: '/api/v1/webhooks', body: { url: `https://hooks.test:${receiver.port}${subPath}`, events: ['pick.published', 'pick.settled'] } });
      if (status !== 201) throw new Error(`webhook subscription ${subPath}: ${status} ${JSON.stringify(json)}`);
      receiver.register(subPath, json.hmac_secret, { id: json.subscription_id, key: key.label });
    }
  }
  log(`  ${keys.length} keys (${tiers.filter((t) => t === 'starter').length} starter, ${tiers.filter((t) => t === 'growth').length} growth, ${tiers.filter((t) => t === 'enterprise').length} enterprise, 2 of them for the streams only), ${receiver.subscriptions.size} webhook subscriptions`);

  // ---- the run
  runStartedAt = Date.now();
  const endAt = runStartedAt + settings.minutes * 60_000;
  feed.open();
  log(`soak: running until +${(settings.minutes * 60).toFixed(0)} s`);
  const loops = [];
  for (let i = 0; i < settings.clients; i += 1) loops.push(restLoop(rng(trafficSeed + 100 + i)));
  for (let i = 0; i < settings.graphqlClients; i += 1) loops.push(graphqlLoop(rng(trafficSeed + 200 + i)));
  loops.push(adminLoop(rng(trafficSeed + 300)));
  const streamKeys = keys.filter((k) => k.streamOnly);
  const streamLoops = [];
  for (let i = 0; i < settings.streams; i += 1) {
    const client = { index: i, key: streamKeys[i % streamKeys.length], lastSeq: null };
    streamClients.push(client);
    streamLoops.push(streamLoop(client, rng(trafficSeed + 400 + i)));
  }
  const schedulerDone = scheduler(schedRandom, endAt);
  const progress = setInterval(() => {
    const statuses = {};
    for (const rec of calls) statuses[rec.status ?? 'in flight'] = (statuses[rec.status ?? 'in flight'] ?? 0) + 1;
    log(`  [+${rel(Date.now())} s] ${calls.length} requests ${JSON.stringify(statuses)}; ${timeline.length} faults; ${adminPicks.published.length} picks published by the admin; ${receiver.arrivals.length} webhook attempts; load ${os.loadavg().map((v) => v.toFixed(2)).join(' ')}`);
  }, 30_000);
  while (Date.now() < endAt && !interrupted) await sleep(250);
  // Ctrl-C: the signal handler stops everything and exits; nothing more to do here.
  if (interrupted) await new Promise(() => {});

  // ---- the end: no more faults, recovery, traffic stops, drain, SIGTERM
  schedulerStop = true;
  log(`soak: +${rel(Date.now())} s: time is up; waiting for the fault in progress, then for every instance to be ready on Redis`);
  await schedulerDone;
  const recovered = await waitInstancesReady('every instance ready on Redis', (a) => a.status === 200 && a.body?.status === 'ready' && a.body?.limiter === 'redis', 60_000);
  trafficStop = true;
  await Promise.all(loops);
  feed.freeze();
  clearInterval(progress);
  log(`soak: traffic stopped at +${rel(Date.now())} s (${recovered ? 'all instances ready' : 'NOT all instances ready'}); draining the outbox, webhooks and streams (up to ${settings.drainSeconds} s)`);

  const sql = await openSql(pg.url(DATABASE));
  const drain = { startedAt: Date.now(), timedOut: false, last: null };
  const drainDeadline = Date.now() + settings.drainSeconds * 1000;
  let lastMax = null;
  let stableSince = Date.now();
  for (;;) {
    const [row] = await sql.query(
      `select (select count(*) from outbox_events where relayed_at is null) as unrelayed,
              (select count(*) from webhook_deliveries where status = 'pending') as pending,
              (select coalesce(max(seq), 0) from outbox_events) as max_seq,
              (select coalesce(max(e.seq), 0) from outbox_events e join picks p on p.id = e.pick_id where e.type = 'pick.published' and p.status in ('published', 'settled')) as max_published`,
    );
    const state = { unrelayed: Number(row.unrelayed), pending: Number(row.pending), maxSeq: Number(row.max_seq), maxPublished: Number(row.max_published) };
    drain.last = state;
    if (state.maxSeq !== lastMax) {
      lastMax = state.maxSeq;
      stableSince = Date.now();
    }
    const streamsCaughtUp = streamClients.every((c) => (state.maxPublished === 0 ? true : c.lastSeq === state.maxPublished));
    if (state.unrelayed === 0 && state.pending === 0 && streamsCaughtUp && Date.now() - stableSince > 8_000) break;
    if (Date.now() > drainDeadline) {
      drain.timedOut = true;
      break;
    }
    await sleep(500);
  }
  drain.seconds = Math.round((Date.now() - drain.startedAt) / 100) / 10;
  stopStreams();
  await Promise.all(streamLoops);
  log(`soak: drained in ${drain.seconds} s${drain.timedOut ? ' (TIMED OUT)' : ''}: ${JSON.stringify(drain.last)}; stopping the instances with SIGTERM`);

  const stopExits = await Promise.all(
    instances.map(async (instance) => {
      if (!instance.proc?.running()) return { name: instance.name, exit: instance.life?.exit ?? null };
      instance.life.stoppedByUs = true;
      instance.life.killedAt = Date.now();
      const t = Date.now();
      const exit = await instance.proc.stop('SIGTERM', 30_000);
      return { name: instance.name, exit, ms: Date.now() - t };
    }),
  );

  const db = {
    monthlyUsage: await sql.query('select api_key_id, month, request_count from monthly_usage'),
    picks: await sql.query('select id, status, event_id, event_generation, market, selection from picks'),
    outbox: await sql.query('select id, seq, type, pick_id, created_at, relayed_at from outbox_events order by seq'),
    subscriptions: await sql.query('select id, url, events, status, created_at from webhook_subscriptions'),
    deliveries: await sql.query('select id, subscription_id, event_id, status, attempt_count from webhook_deliveries'),
  };
  await sql.close();

  const infra = { unexpected: [] };
  if (!redis.proc?.running()) infra.unexpected.push('redis');
  if (!pg.proc?.running()) infra.unexpected.push('postgres');
  await redis.stop();
  await pg.stop();
  await receiver.close();
  await feed.close();
  for (const dir of tempDirs) rmSync(dir, { recursive: true, force: true });
  tempDirs.clear();

  // ---- the invariants
  const invariants = [
    checkMonthlyUsage(db),
    checkHourly(),
    checkAdminPicks(db),
    checkWebhooks(db, receiver, drain),
    checkEnginePicks(db, feed),
    checkStreams(db),
    checkErrorsAndHangs(),
    checkProcesses(stopExits, infra),
  ];
  report({ invariants, db, drain, feed, receiver, stopExits });
  return invariants.every((inv) => inv.pass);
}

function report({ invariants, drain, feed, receiver }) {
  const statuses = {};
  const lost = {};
  for (const rec of calls) {
    statuses[rec.status] = (statuses[rec.status] ?? 0) + 1;
    if (rec.status === 'lost') lost[rec.lost] = (lost[rec.lost] ?? 0) + 1;
  }
  const byKind = {};
  for (const rec of calls) {
    byKind[rec.kind] ??= {};
    byKind[rec.kind][rec.status] = (byKind[rec.kind][rec.status] ?? 0) + 1;
  }
  const faults = {};
  for (const f of timeline) {
    faults[f.kind] ??= { count: 0, downMs: [], backMs: [], notRecovered: 0 };
    faults[f.kind].count += 1;
    faults[f.kind].downMs.push((f.restartedAt ?? f.recoveredAt) - f.startedAt);
    faults[f.kind].backMs.push(f.recoveredAt - (f.restartedAt ?? f.startedAt));
    if (!f.recovered) faults[f.kind].notRecovered += 1;
  }
  const mean = (xs) => (xs.length ? xs.reduce((a, b) => a + b, 0) / xs.length : 0);
  const faultSummary = Object.fromEntries(Object.entries(faults).map(([kind, f]) => [kind, { count: f.count, meanDownS: Math.round(mean(f.downMs) / 100) / 10, meanBackAfterRestartS: Math.round(mean(f.backMs) / 100) / 10, notRecovered: f.notRecovered }]));
  const ranMinutes = Math.round(((Date.now() - runStartedAt) / 60_000) * 10) / 10;

  const [a, b] = invariants;
  log('\n== per key: monthly usage (a) and hourly window (b)');
  log(`  ${pad('key', 4)} ${pad('tier', 10)} ${lpad('counted', 8)} ${lpad('lost', 5)} ${lpad('stored', 7)} ${lpad('503', 4)} ${lpad('429', 5)} ${lpad('usage', 5)}  a     | ${lpad('hour', 5)} ${lpad('max/win', 8)} ${lpad('bound', 6)} ${lpad('P', 3)} ${lpad('outside', 7)} ${lpad('1 outage', 8)}  b`);
  for (const row of a.rows) {
    const h = b.rows.find((x) => x.key === row.key);
    log(
      `  ${pad(row.key, 4)} ${pad(row.tier, 10)} ${lpad(row.counted, 8)} ${lpad(row.lost, 5)} ${lpad(row.stored, 7)} ${lpad(row.unavailable, 4)} ${lpad(row.refused, 5)} ${lpad(row.usageReads, 5)}  ${row.pass ? 'PASS' : 'FAIL'}  | ${lpad(h.limit, 5)} ${lpad(h.maxInWindow, 8)} ${lpad(h.bound, 6)} ${lpad(h.processesInOutages, 3)} ${lpad(h.maxOutsideOutagesInWindow, 7)} ${lpad(h.maxInOneOutage, 8)}  ${h.pass ? 'PASS' : 'FAIL'}${row.pass ? '' : `  (a: ${row.verdict})`}`,
    );
  }
  log('  counted: answers 2xx/4xx other than the limiter\'s 429 (GET /api/v1/usage excluded: not counted by design); lost: no answer; stored: monthly_usage.request_count');
  log('  max/win: admitted requests certainly inside one rolling 3600 s; bound: hourly limit x (1 + P), P = instance processes alive during the Redis outages the window overlaps (summed: the fallback starts empty at each outage)');
  log('  outside: the most admitted in one window that touched no Redis outage (decided by Redis): must stay <= the hourly limit too');
  log('  1 outage: the most admitted sent and answered within one Redis outage: must stay <= hourly limit x (1 + P of that outage)');

  log('\n== fault timeline');
  for (const f of timeline) {
    log(`  +${lpad(rel(f.startedAt), 6)} s  ${pad(f.kind, 8)} ${pad(f.target, 8)} down ${fmtS((f.restartedAt ?? f.recoveredAt) - f.startedAt)}, back ${fmtS(f.recoveredAt - (f.restartedAt ?? f.startedAt))} after restart${f.recovered ? '' : ' NOT RECOVERED'}${f.kind === 'redis' ? ` (AOF: ${f.redisKeysAfter}/${f.redisKeysBefore} keys)` : ''}${f.note ? ` (${f.note.split('\n')[0]})` : ''}`);
  }
  if (timeline.length === 0) log('  (none)');

  const lines = [
    '',
    '== soak summary',
    `seed            ${settings.seed} (SOAK_SEED=${settings.seed} to replay the fault schedule)`,
    `minutes         ${settings.minutes} planned, ${ranMinutes} run; ${INSTANCES} instances; Redis appendonly yes + appendfsync always (SIGKILLed Redis restarts with every acknowledged write)`,
    `faults          ${timeline.length ? Object.entries(faultSummary).map(([kind, f]) => `${kind} x${f.count} (mean down ${f.meanDownS} s, back ${f.meanBackAfterRestartS} s after restart${f.notRecovered ? `, ${f.notRecovered} not recovered` : ''})`).join('; ') : 'none'}`,
    `requests        ${calls.length}: ${Object.entries(statuses).sort().map(([s, n]) => `${s} x${n}`).join(', ')}${Object.keys(lost).length ? `; lost: ${Object.entries(lost).map(([k, n]) => `${k} x${n}`).join(', ')}` : ''}`,
    `by kind         ${Object.entries(byKind).map(([kind, s]) => `${kind} {${Object.entries(s).sort().map(([k, n]) => `${k}:${n}`).join(' ')}}`).join('; ')}`,
    `picks           ${adminPicks.published.length} published and ${adminPicks.settled.size} settled by the admin; feed: ${feed.stats.matches} matches, ${feed.stats.valueOffers} value offers, ${feed.stats.oddsRequests} odds polls`,
    `webhooks        ${receiver.arrivals.length} attempts at the receiver (${receiver.arrivals.filter((x) => x.answered !== 200).length} answered 503 on purpose); drain ${drain.seconds} s${drain.timedOut ? ' TIMED OUT' : ''}`,
    ...invariants.map((inv) => `${inv.id}. ${inv.pass ? 'PASS' : 'FAIL'}  ${inv.title}: ${inv.headline}`),
    `result          ${invariants.every((inv) => inv.pass) ? 'PASS' : `FAIL (${invariants.filter((inv) => !inv.pass).map((inv) => inv.id).join(', ')})`}`,
  ];
  log(lines.join('\n'));

  const failedDetails = invariants.filter((inv) => !inv.pass && inv.id !== 'a' && inv.id !== 'b');
  for (const inv of failedDetails) {
    const { id, title, pass, headline, rows, ...details } = inv;
    log(`\n-- ${id} details: ${JSON.stringify(details).slice(0, 3_000)}`);
  }
  const errorLogs = lives.filter((life) => life.proc.errors > 0).map((life) => ({ name: life.name, pid: life.pid, errors: life.proc.errors, warns: life.proc.warns, samples: life.proc.errorSamples.slice(0, 5) }));
  if (errorLogs.length) {
    log(`\n-- instance error-level log lines (information): ${errorLogs.map((e) => `${e.name}/${e.pid}: ${e.errors}`).join(', ')}`);
    for (const e of errorLogs) for (const line of e.samples.slice(0, 2)) log(`   ${e.name}/${e.pid}: ${line.slice(0, 400)}`);
  }

  const results = {
    ranAt: new Date(runStartedAt).toISOString(),
    finishedAt: new Date().toISOString(),
    machine: machine(),
    seed: settings.seed,
    settings,
    minutesRun: ranMinutes,
    summary: lines.slice(2),
    faults: faultSummary,
    timeline: timeline.map((f) => ({ ...f, startedAt: rel(f.startedAt), restartedAt: rel(f.restartedAt), recoveredAt: rel(f.recoveredAt) })),
    processes: lives.map((life) => ({ name: life.name, port: life.port, pid: life.pid, spawnedAt: rel(life.spawnedAt), readyAt: rel(life.readyAt), exitedAt: rel(life.exitedAt), exit: life.exit, killedByUs: life.killedByUs, stoppedByUs: life.stoppedByUs, errorLogLines: life.proc.errors, warnLogLines: life.proc.warns })),
    requests: { total: calls.length, byStatus: statuses, lost, byKind },
    drain,
    instanceErrorLogs: errorLogs,
    invariants: invariants.map((inv) => ({ ...inv })),
    pass: invariants.every((inv) => inv.pass),
  };
  writeFileSync(RESULTS_FILE, `${JSON.stringify(results, null, 2)}\n`);
  log(`\nwrote ${path.relative(ROOT, RESULTS_FILE)}`);
}

main().then(
  (pass) => {
    killEverythingSync();
    process.exit(pass ? 0 : 1);
  },
  async (error) => {
    process.stderr.write(`soak failed: ${error?.stack ?? error}\n`);
    for (const m of [...managed]) {
      if (m.name.startsWith('picks-') || m.name === 'postgres' || m.name === 'redis') process.stderr.write(`--- ${m.name} (last lines)\n${m.tail(15)}\n`);
    }
    await stopEverythingAndExit(1);
  },
);
