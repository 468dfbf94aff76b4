/**
 * `npm start` as a service manager or a terminal drives it: a real `npm start` on a loopback
 * port, stopped with SIGTERM or SIGINT sent to npm itself, must stop the server and free the
 * port (the start script execs node, so no shell in between swallows the signal). The start
 * output keeps the banner readable: no request lines at the default level in embedded mode, and
 * a warning when WEBHOOK_HOST_OVERRIDES, a test-only setting, is set. A first start with the demo
 * prints the dashboard's demo sign-in, which signs in.
 *
 * npm runs with --ignore-scripts, which skips only the prestart build: dist/ is built (when
 * stale) by ensureBuilt first, once for every suite that starts processes.
 */
import { spawn } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import net from 'node:net';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ensureBuilt, freePorts, manage, REPO_ROOT, serverEnv, waitUntil, type ManagedProcess } from '../helpers/processes.js';

/** An embedded start (PGlite, migrations) on a loaded machine, then the drain. */
const START_AND_STOP_MS = 240_000;
const dataDir = mkdtempSync(path.join(tmpdir(), 'picks-npm-start-'));
const started: ManagedProcess[] = [];

beforeAll(async () => {
  await ensureBuilt();
}, 600_000);
afterAll(async () => {
  await Promise.all(started.map((npm) => npm.stop('SIGKILL')));
  rmSync(dataDir, { recursive: true, force: true });
});

/** The processes npm started (Linux /proc): with the start script exec'ing, node itself. */
function childrenOf(pid: number): number[] {
  try {
    return readFileSync(`/proc/${pid}/task/${pid}/children`, 'utf8').trim().split(/\s+/).filter(Boolean).map(Number);
  } catch {
    return [];
  }
}

function alive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
}

function portFree(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const server = net.createServer();
    server.once('error', () => resolve(false));
    server.listen(port, '127.0.0.1', () => server.close(() => resolve(true)));
  });
}

async function npmStart(env: Record<string, string> = {}): Promise<{ npm: ManagedProcess; port: number; url: string }> {
  const [port] = await freePorts(1);
  const child = spawn('npm', ['start', '--ignore-scripts'], {
    cwd: REPO_ROOT,
    env: serverEnv({ PORT: String(port), DATA_DIR: dataDir, DEMO_SEED: 'false', LOG_LEVEL: 'info', ...env }),
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  const npm = manage('npm start', child);
  started.push(npm);
  const url = `http://127.0.0.1:${port}`;
  await npm.waitForLine(/Picks service listening on /, 120_000);
  return { npm, port: port!, url };
}

/** Sends `signal` to npm only (as a service manager does) and expects everything it started to end and the port to be free. */
async function stopsWith(npm: ManagedProcess, port: number, signal: NodeJS.Signals): Promise<void> {
  const servers = childrenOf(npm.pid);
  expect(servers.length).toBeGreaterThan(0);
  npm.signal(signal);
  const status = await Promise.race([npm.exited, new Promise<'still running'>((resolve) => setTimeout(() => resolve('still running'), 30_000))]);
  expect(status, npm.output()).toEqual({ code: 0, signal: null });
  await waitUntil(`every process npm started to end after ${signal}`, () => servers.every((pid) => !alive(pid)), 15_000);
  await waitUntil(`port ${port} to be free after ${signal}`, () => portFree(port), 15_000);
}

describe('npm start', () => {
  it('stops the server and frees the port on SIGTERM; warns about WEBHOOK_HOST_OVERRIDES; no request lines at the default level', async () => {
    const { npm, port, url } = await npmStart({ WEBHOOK_HOST_OVERRIDES: 'hooks.test=127.0.0.1' });
    expect(npm.output()).toContain('warning: WEBHOOK_HOST_OVERRIDES is a test-only setting: webhooks for hooks.test are delivered to loopback addresses.');
    expect(npm.lines.some((line) => line.includes('"level":40') && line.includes('WEBHOOK_HOST_OVERRIDES'))).toBe(true);
    for (const requestPath of ['/healthz', '/api/v1/picks', '/api/public/picks/today']) {
      const response = await fetch(`${url}${requestPath}`);
      await response.arrayBuffer();
    }
    expect((await fetch(`${url}/healthz`)).status).toBe(200);
    expect(npm.output()).not.toMatch(/incoming request|request completed/);
    await stopsWith(npm, port, 'SIGTERM');
    expect(npm.output()).toContain('draining');
  }, START_AND_STOP_MS);

  it('a first start with the demo prints the dashboard sign-in, and it signs in', async () => {
    const demoDataDir = mkdtempSync(path.join(tmpdir(), 'picks-npm-start-demo-'));
    try {
      const { npm, port, url } = await npmStart({ DATA_DIR: demoDataDir, DEMO_SEED: 'true', DEMO_FEED: 'false' });
      const line = /demo dashboard sign-in \(kept in (\S+)\): (\S+) \/ (\S+) +(\S+)/.exec(npm.output());
      expect(line, npm.output()).not.toBeNull();
      const [, file, email, password, loginUrl] = line!;
      expect(file).toBe(path.join(demoDataDir, 'demo-account.json'));
      expect(email).toBe('demo@example.com');
      expect(loginUrl).toBe(`${url}/dashboard/login`);
      expect(JSON.parse(readFileSync(file!, 'utf8'))).toEqual({ email, password });
      // Sign in as a browser does: the form's CSRF token and cookie, then the POST.
      const form = await fetch(loginUrl!);
      const cookies = form.headers.getSetCookie().map((cookie) => cookie.split(';')[0]).join('; ');
      const csrf = /name="_csrf" value="([^"]+)"/.exec(await form.text())![1]!;
      const signedIn = await fetch(loginUrl!, {
        method: 'POST',
        redirect: 'manual',
        headers: { 'content-type': 'application/x-www-form-urlencoded', cookie: cookies },
        body: new URLSearchParams({ email: email!, password: password!, _csrf: csrf }).toString(),
      });
      expect(signedIn.status).toBe(303);
      expect(signedIn.headers.get('location')).toBe('/dashboard/api-keys');
      await stopsWith(npm, port, 'SIGTERM');
    } finally {
      rmSync(demoDataDir, { recursive: true, force: true });
    }
  }, START_AND_STOP_MS);

  it('stops the server and frees the port on SIGINT', async () => {
    const { npm, port } = await npmStart();
    expect(npm.output()).not.toContain('WEBHOOK_HOST_OVERRIDES');
    await stopsWith(npm, port, 'SIGINT');
  }, START_AND_STOP_MS);
});
