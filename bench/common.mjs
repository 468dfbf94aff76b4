/**
 * Helpers shared by the webhook benchmark (bench/webhooks-*.mjs): forked children answering
 * { id, cmd, args } over IPC, loopback-only URL checks, machine pressure readings and
 * percentile summaries. The older harnesses (run.mjs, streams-*.mjs) keep their own copies.
 */
import { fork } from 'node:child_process';
import { readdirSync, readFileSync } from 'node:fs';
import os from 'node:os';

export const sleep = (ms) => new Promise((resolve) => setTimeout(resolve, ms));

/** Wall clock with sub-millisecond resolution; every bench process uses the same expression. */
export const wallNow = () => performance.timeOrigin + performance.now();

export const r1 = (v) => (v === null || v === undefined || Number.isNaN(v) ? null : Math.round(v * 10) / 10);
export const r2 = (v) => (v === null || v === undefined || Number.isNaN(v) ? null : Math.round(v * 100) / 100);

export function intEnv(name, fallback, min, max) {
  const raw = process.env[name]?.trim();
  if (!raw) return fallback;
  const value = Number(raw);
  if (!Number.isInteger(value) || value < min || value > max) throw new Error(`${name} must be an integer ${min}..${max}, got "${raw}"`);
  return value;
}

export function percentile(sorted, p) {
  if (sorted.length === 0) return null;
  const index = Math.min(sorted.length - 1, Math.max(0, Math.ceil((p / 100) * sorted.length) - 1));
  return sorted[index];
}

export function summarise(values) {
  const sorted = Float64Array.from(values).sort();
  let sum = 0;
  for (const v of sorted) sum += v;
  return {
    n: sorted.length,
    min: r1(sorted.length ? sorted[0] : null),
    mean: r1(sorted.length ? sum / sorted.length : null),
    p50: r1(percentile(sorted, 50)),
    p90: r1(percentile(sorted, 90)),
    p99: r1(percentile(sorted, 99)),
    max: r1(sorted.length ? sorted[sorted.length - 1] : null),
  };
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

/** Linux PSI `cpu some` total (µs): time some runnable task waited for a core. */
export function cpuStallUs() {
  try {
    const line = readFileSync('/proc/pressure/cpu', 'utf8').split('\n').find((l) => l.startsWith('some'));
    return Number(/total=(\d+)/.exec(line)[1]);
  } catch {
    return null;
  }
}

export function loadAverage() {
  return os.loadavg().map((v) => Math.round(v * 100) / 100);
}

export function machine() {
  return { cpus: `${os.cpus().length} x ${os.cpus()[0]?.model ?? 'cpu'}`, memGiB: Math.round(os.totalmem() / 2 ** 30), node: process.versions.node };
}

/**
 * Forks `file` and resolves once it sends { type: 'ready' }. `call(cmd, args, timeoutMs)`
 * sends a command and resolves with its result. Every child is registered in `children`
 * so that the caller can kill them all on any exit.
 */
export async function startChild({ file, cwd, env, execArgv = [], name, startTimeoutMs, children }) {
  const child = fork(file, [], {
    cwd,
    env: { ...process.env, ...env },
    execArgv,
    stdio: ['ignore', 'pipe', 'pipe', 'ipc'],
    serialization: 'advanced',
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
  const info = await withTimeout(readyPromise, startTimeoutMs, `${name} start-up`);
  const call = (cmd, args = {}, timeoutMs = 60_000) =>
    withTimeout(
      new Promise((resolve, reject) => {
        const id = nextId++;
        pending.set(id, { resolve, reject });
        child.send({ id, cmd, args });
      }),
      timeoutMs,
      `${name} command ${cmd}`,
    );
  return { child, info, call, exited, stderrTail: () => tail };
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
