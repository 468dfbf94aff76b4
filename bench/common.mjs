/**
 * Helpers shared by the three benchmark harnesses (run.mjs, streams-run.mjs, webhooks-run.mjs)
 * and their children: the orchestrator's bookkeeping (env knobs, forked children answering
 * { id, cmd, args } over IPC, cleanup on any exit, loopback-only service URLs, results file
 * and docs block), the child side of the IPC protocol and machine pressure readings.
 * Statistics are in lib/stats.mjs, the seeded PRNG in lib/prng.mjs. What the bench server processes share is in server-common.mjs.
 */
import { fork } from 'node:child_process';
import { existsSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { r2 } from './lib/stats.mjs';

/** bench/ and the repository root: children are forked from here, with the root as cwd. */
export const BENCH_DIR = path.dirname(fileURLToPath(import.meta.url));
export const ROOT = path.resolve(BENCH_DIR, '..');

/** The only address the bench listens on or sends traffic to. */
export const HOST = '127.0.0.1';

export function log(line) {
  process.stdout.write(`${line}\n`);
}

export const sleep = (ms) => new Promise((resolve) => setTimeout(resolve, ms));

/** Wall clock with sub-millisecond resolution; every bench process uses the same expression. */
export const wallNow = () => performance.timeOrigin + performance.now();

export function intEnv(name, fallback, min, max) {
  const raw = process.env[name]?.trim();
  if (!raw) return fallback;
  const value = Number(raw);
  if (!Number.isInteger(value) || value < min || value > max) throw new Error(`${name} must be an integer ${min}..${max}, got "${raw}"`);
  return value;
}

export function withTimeout(promise, ms, what) {
  let timer;
  return Promise.race([
    promise,
    new Promise((_, reject) => {
      timer = setTimeout(() => reject(new Error(`${what}: no answer within ${Math.round(ms / 1000)} s`)), ms);
    }),
  ]).finally(() => clearTimeout(timer));
}

/** Refuses anything but loopback: the bench never sends traffic elsewhere. */
export function assertLoopbackUrl(name, raw) {
  const { hostname } = new URL(raw);
  const host = hostname.replace(/^\[|\]$/g, '');
  if (!(host === 'localhost' || host === '::1' || /^127\.\d+\.\d+\.\d+$/.test(host))) {
    throw new Error(`${name} must point at a loopback address (127.0.0.1, localhost, ::1): the bench never sends traffic elsewhere`);
  }
}

/**
 * Services-mode URLs. The database: `dbVar` used as given (its tables are truncated), else
 * the server of the first of `baseVars` that is set with database `dbName`, so that no bench
 * truncates someone else's database. Redis: BENCH_REDIS_URL or REDIS_URL. With
 * `checkLoopback`, URLs that are not loopback are refused here.
 */
export function servicesUrls({ dbVar, baseVars, dbName, checkLoopback = true }) {
  let db = process.env[dbVar]?.trim() || null;
  const base = baseVars.map((name) => process.env[name]?.trim()).find(Boolean) || null;
  if (!db && base) {
    const url = new URL(base);
    url.pathname = `/${dbName}`;
    db = url.toString();
  }
  const redis = process.env.BENCH_REDIS_URL?.trim() || process.env.REDIS_URL?.trim() || null;
  if (checkLoopback && db) assertLoopbackUrl('database URL', db);
  if (checkLoopback && redis) assertLoopbackUrl('Redis URL', redis);
  return { db, redis };
}

/** Linux PSI `cpu some` total (µs): time some runnable task waited for a core. */
export function cpuStallUs() {
  try {
    const line = readFileSync('/proc/pressure/cpu', 'utf8').split('\n').find((l) => l.startsWith('some'));
    return Number(/total=(\d+)/.exec(line)[1]);
  } catch {
    return null;
  }
}

/** Starts a window; the function returned gives the share of it in which some task waited for a core (PSI), or null. */
export function cpuStallWindow() {
  const us0 = cpuStallUs();
  const t0 = performance.now();
  return () => {
    const us1 = cpuStallUs();
    return us0 === null || us1 === null ? null : r2((us1 - us0) / 1000 / (performance.now() - t0));
  };
}

export function loadAverage() {
  return os.loadavg().map((v) => Math.round(v * 100) / 100);
}

export function machine() {
  return { cpus: `${os.cpus().length} x ${os.cpus()[0]?.model ?? 'cpu'}`, memGiB: Math.round(os.totalmem() / 2 ** 30), node: process.versions.node };
}

/**
 * The environment of a mode's server child. Embedded: a fresh temp directory (`tmpPrefix`...,
 * registered in `tempDirs`) as <prefix>_DATA_DIR. Services: the servicesUrls(database) result
 * `urls` as <prefix>_DB_URL and <prefix>_REDIS_URL (logged; both are required).
 */
export function modeEnv(mode, { prefix, tmpPrefix, urls, database, tempDirs }) {
  if (mode === 'embedded') {
    const dir = mkdtempSync(path.join(os.tmpdir(), tmpPrefix));
    tempDirs.add(dir);
    return { [`${prefix}_DATA_DIR`]: dir };
  }
  if (mode === 'services') {
    const dbVars = [database.dbVar, ...database.baseVars];
    if (!urls.db || !urls.redis) throw new Error(`services mode needs a database URL (${dbVars.slice(0, -1).join(', ')} or ${dbVars.at(-1)}) and a Redis URL (BENCH_REDIS_URL or REDIS_URL)`);
    log(`  database ${new URL(urls.db).pathname.slice(1)} on ${new URL(urls.db).host}, Redis ${new URL(urls.redis).host}`);
    return { [`${prefix}_DB_URL`]: urls.db, [`${prefix}_REDIS_URL`]: urls.redis };
  }
  throw new Error(`unknown mode ${mode}`);
}

/**
 * A mode's clock: phase(what) logs `  [<mode> +<s> s] what`; past `budgetMs` the run is stopped
 * (`<label>: mode <mode> exceeded its <s> s budget; stopping`, cleanup, exit 1) unless done()
 * was called first.
 */
export function modeClock({ label, mode, budgetMs, cleanup }) {
  const started = Date.now();
  const budget = setTimeout(() => {
    log(`${label}: mode ${mode} exceeded its ${budgetMs / 1000} s budget; stopping`);
    cleanup();
    process.exit(1);
  }, budgetMs);
  return {
    started,
    phase: (what) => log(`  [${mode} +${((Date.now() - started) / 1000).toFixed(1)} s] ${what}`),
    done: () => clearTimeout(budget),
  };
}

/**
 * The orchestrator's children and temp directories, all removed on any exit: normal, error
 * or SIGINT/SIGTERM/SIGHUP (reported as `<label>: <signal>, stopping`, exit code 130).
 */
export function exitCleanup(label) {
  const children = new Set();
  const tempDirs = new Set();
  const cleanup = () => {
    for (const child of children) if (child.exitCode === null && child.signalCode === null) child.kill('SIGKILL');
    for (const dir of tempDirs) rmSync(dir, { recursive: true, force: true });
  };
  process.on('exit', cleanup);
  for (const signal of ['SIGINT', 'SIGTERM', 'SIGHUP']) {
    process.on(signal, () => {
      log(`\n${label}: ${signal}, stopping`);
      cleanup();
      process.exit(130);
    });
  }
  return { children, tempDirs, cleanup };
}

/**
 * Forks `file` (relative to bench/, or absolute) with an IPC channel, its output kept (the
 * last 4000 characters) for error messages, and registers it in `children` until it exits.
 * `exited` resolves with { code, signal, stderr }.
 */
export function forkChild({ file, cwd = ROOT, env = {}, execArgv = [], serialization = 'advanced', children }) {
  const child = fork(path.resolve(BENCH_DIR, file), [], {
    cwd,
    env: { ...process.env, ...env },
    execArgv,
    stdio: ['ignore', 'pipe', 'pipe', 'ipc'],
    serialization,
  });
  children.add(child);
  let tail = '';
  const keep = (chunk) => {
    tail = (tail + chunk.toString()).slice(-4000);
  };
  child.stdout.on('data', keep);
  child.stderr.on('data', keep);
  const exited = new Promise((resolve) => {
    child.once('exit', (code, signal) => {
      children.delete(child);
      resolve({ code, signal, stderr: tail });
    });
  });
  return { child, exited, stderrTail: () => tail };
}

/**
 * Forks `file` (see forkChild) and resolves once it sends { type: 'ready' }.
 * `call(cmd, args, timeoutMs = callTimeoutMs)` sends a command and resolves with its result.
 */
export async function startChild({ name, startTimeoutMs, startLabel = `${name} start-up`, callTimeoutMs = 60_000, ...forkOptions }) {
  const { child, exited, stderrTail } = forkChild(forkOptions);
  let nextId = 1;
  const pending = new Map();
  let ready;
  const readyPromise = new Promise((resolve, reject) => {
    ready = resolve;
    exited.then((exit) => reject(new Error(`${name} exited (${exit.code ?? exit.signal}) during start-up:\n${exit.stderr}`)));
  });
  child.on('message', (message) => {
    if (message.type === 'ready') return ready(message);
    const waiter = pending.get(message.id);
    if (!waiter) return;
    pending.delete(message.id);
    if (message.ok) waiter.resolve(message.result);
    else waiter.reject(new Error(`${name}: ${message.error}`));
  });
  exited.then((exit) => {
    for (const waiter of pending.values()) waiter.reject(new Error(`${name} exited (${exit.code ?? exit.signal}):\n${exit.stderr}`));
    pending.clear();
  });
  const info = await withTimeout(readyPromise, startTimeoutMs, startLabel);
  const call = (cmd, args = {}, timeoutMs = callTimeoutMs) =>
    withTimeout(
      new Promise((resolve, reject) => {
        const id = nextId++;
        pending.set(id, { resolve, reject });
        child.send({ id, cmd, args });
      }),
      timeoutMs,
      `${name} command ${cmd}`,
    );
  return { child, info, call, exited, stderrTail };
}

/**
 * Asks a server child started with startChild to stop (its `stop` command), waits up to 30 s
 * for it to exit, else kills it; a non-zero exit is logged as a warning. A child that has
 * already exited is left alone.
 */
export async function stopChild({ child, call, exited }, name) {
  if (child.exitCode !== null || child.signalCode !== null) return;
  await call('stop', {}, 10_000).catch(() => undefined);
  const exit = await withTimeout(exited, 30_000, `${name} shutdown`).catch(() => null);
  if (!exit) child.kill('SIGKILL');
  else if (exit.code !== 0) log(`  warning: ${name} exited ${exit.code ?? exit.signal}: ${exit.stderr.slice(-500)}`);
}

/** The child side: answers { id, cmd, args } with commands[cmd](args); exits when the parent goes. */
export function serveCommands(commands) {
  process.on('message', async (message) => {
    const { id, cmd, args } = message;
    try {
      const command = commands[cmd];
      if (!command) throw new Error(`unknown command ${cmd}`);
      process.send({ id, ok: true, result: await command(args ?? {}) });
    } catch (error) {
      process.send({ id, ok: false, error: String(error?.stack ?? error) });
    }
  });
  process.on('disconnect', () => process.exit(0));
}

/** CPU, event-loop utilisation and loop delay of this process over a window. */
export function windowMeter(loopDelay) {
  return {
    mark() {
      loopDelay.reset();
      return { cpu: process.cpuUsage(), elu: performance.eventLoopUtilization(), t: performance.now() };
    },
    since(mark) {
      const cpu = process.cpuUsage(mark.cpu);
      const elu = performance.eventLoopUtilization(mark.elu);
      const seconds = (performance.now() - mark.t) / 1000;
      return {
        seconds,
        cpuS: (cpu.user + cpu.system) / 1e6,
        cpuShare: (cpu.user + cpu.system) / 1e6 / seconds,
        elu: elu.utilization,
        loopDelayMs: { p50: loopDelay.percentile(50) / 1e6, p99: loopDelay.percentile(99) / 1e6, max: loopDelay.max / 1e6 },
        rss: process.memoryUsage().rss,
        // Peak RSS of the process so far (kernel ru_maxrss, KiB).
        maxRss: process.resourceUsage().maxRSS * 1024,
      };
    },
  };
}

/** utime + stime (clock ticks) of every process but `exclude`, by pid. */
function processTicks(exclude) {
  const ticks = new Map();
  let pids = [];
  try {
    pids = readdirSync('/proc').filter((name) => /^\d+$/.test(name));
  } catch {
    return null;
  }
  for (const pid of pids) {
    if (exclude.has(Number(pid))) continue;
    try {
      const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
      // Fields after the command name (which may hold spaces) in parentheses.
      const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
      ticks.set(pid, { ticks: Number(fields[11]) + Number(fields[12]), name: stat.slice(stat.indexOf('(') + 1, stat.lastIndexOf(')')) });
    } catch {
      // gone meanwhile
    }
  }
  return ticks;
}

/**
 * Samples the CPU used by processes outside the benchmark (other engineers' tests, builds)
 * while it runs: start() begins, stop() returns the mean cores they used and the busiest.
 */
export function othersCpuMeter(excludePids, intervalMs = 1_000, separateNames = new Set()) {
  const TICK = 100; // USER_HZ on Linux
  let last = null;
  let lastT = 0;
  let timer = null;
  const samples = [];
  const separateSamples = [];
  const byName = new Map();
  const sample = () => {
    const now = processTicks(excludePids());
    const t = performance.now();
    if (now && last) {
      let used = 0;
      let separate = 0;
      for (const [pid, cur] of now) {
        const prev = last.get(pid);
        const delta = cur.ticks - (prev ? prev.ticks : cur.ticks);
        if (delta <= 0) continue;
        if (separateNames.has(cur.name)) {
          separate += delta;
          continue;
        }
        used += delta;
        byName.set(cur.name, (byName.get(cur.name) ?? 0) + delta);
      }
      samples.push(used / TICK / ((t - lastT) / 1000));
      separateSamples.push(separate / TICK / ((t - lastT) / 1000));
    }
    last = now;
    lastT = t;
  };
  return {
    start() {
      sample();
      timer = setInterval(sample, intervalMs);
    },
    stop() {
      clearInterval(timer);
      sample();
      const mean = samples.length ? samples.reduce((a, b) => a + b, 0) / samples.length : null;
      const separateMean = separateSamples.length ? separateSamples.reduce((a, b) => a + b, 0) / separateSamples.length : null;
      const total = [...byName.values()].reduce((a, b) => a + b, 0);
      return {
        meanCores: mean === null ? null : Math.round(mean * 100) / 100,
        maxCores: samples.length ? Math.round(Math.max(...samples) * 100) / 100 : null,
        // Processes named in separateNames (PostgreSQL, Redis in services mode: they mostly serve the bench).
        separateMeanCores: separateMean === null ? null : Math.round(separateMean * 100) / 100,
        busiest: [...byName.entries()]
          .sort((a, b) => b[1] - a[1])
          .slice(0, 3)
          .map(([name, t]) => `${name} ${Math.round((100 * t) / Math.max(1, total))}%`),
      };
    },
  };
}

/** Mean cores used by processes outside the benchmark over `ms`. */
export async function othersCpuNow(excludePids, ms = 1_000, separateNames = new Set()) {
  const meter = othersCpuMeter(excludePids, ms, separateNames);
  meter.start();
  await sleep(ms);
  return meter.stop();
}

// ---------------------------------------------------------------- results file and docs block

/** The modes of a run: <envVar> (comma-separated), else embedded, plus services when both service URLs are set. */
export function selectModes(envVar, urls) {
  const modes = process.env[envVar]?.split(',').map((m) => m.trim()).filter(Boolean);
  return modes ?? ['embedded', ...(urls.db && urls.redis ? ['services'] : [])];
}

/**
 * With <envVar>=1: prints the docs block rendered by `markdown` from `resultsFile`, writes it
 * with `writeDoc` and returns true (nothing is measured); else false.
 */
export function reportOnly(envVar, { resultsFile, docFile, markdown, writeDoc, what }) {
  if (process.env[envVar] !== '1') return false;
  const results = JSON.parse(readFileSync(resultsFile, 'utf8'));
  log(`${markdown(results)}\n${writeDoc(results) ? `\nwrote ${what} of ${path.relative(ROOT, docFile)}` : ''}`);
  return true;
}

/**
 * Results of modes (keys) not run this time are kept from the previous results file, marked
 * fromPreviousRun (their own start, or the previous run's end); a corrupt file is replaced.
 */
export function keepPreviousModes(results, file) {
  if (!existsSync(file)) return;
  try {
    const previous = JSON.parse(readFileSync(file, 'utf8'));
    for (const [mode, r] of Object.entries(previous.modes ?? {})) if (!results.modes[mode]) results.modes[mode] = { ...r, fromPreviousRun: r.fromPreviousRun ?? r.startedAt ?? previous.finishedAt };
  } catch {
    // a corrupt previous file is simply replaced
  }
}

/**
 * Replaces the text between `begin` and `end` (markers included; `block` carries them) in
 * `file`. Without `createWith`, a missing file or missing markers leave everything as it is
 * (false); with it, a missing file starts as `createWith` and missing markers append the block.
 */
export function writeDocBlock(file, begin, end, block, createWith = null) {
  if (!existsSync(file) && createWith === null) return false;
  let doc = existsSync(file) ? readFileSync(file, 'utf8') : createWith;
  const start = doc.indexOf(begin);
  const stop = doc.indexOf(end);
  if (start !== -1 && stop > start) doc = doc.slice(0, start) + block + doc.slice(stop + end.length);
  else if (createWith === null) return false;
  else doc = `${doc.trimEnd()}\n\n${block}\n`;
  writeFileSync(file, doc);
  return true;
}
