/**
 * `npm start` as a service manager or a terminal drives it: a real `npm start` on a loopback
 * port, stopped with SIGTERM or SIGINT sent to npm itself, must stop the server and free the
 * port (the start script execs node, so no shell in between swallows the signal). The start
 * output keeps the banner readable: nothing at info before it, no request lines and no routine
 * engine lines at the default level in embedded mode, and a warning when WEBHOOK_HOST_OVERRIDES,
 * a test-only setting, is set. A first start with the demo prints the dashboard's demo sign-in,
 * which signs in and shows the demo Enterprise key; a restart says the demo data were reused
 * (since when, how many picks) and gives the key to an account made before keys were given.
 *
 * npm runs with --ignore-scripts, which skips only the prestart build: dist/ is built (when
 * stale) by ensureBuilt first, once for every suite that starts processes.
 */
import { spawn } from 'node:child_process';
import { PGlite } from '@electric-sql/pglite';
import { mkdtempSync, readFileSync, rmSync, statSync } from 'node:fs';
import net from 'node:net';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it, onTestFinished } from 'vitest';
import { parseSignerKey } from '../../src/domain/signed-note.js';
// @ts-expect-error The examples are plain JavaScript, as a customer would copy them.
import { verifyLedger } from '../../docs/examples/verify-ledger.mjs';
// @ts-expect-error The examples are plain JavaScript, as a customer would copy them.
import { startWitness } from '../../docs/examples/witness.mjs';
import { ensureBuilt, freePorts, manage, REPO_ROOT, serverEnv, waitUntil, type ManagedProcess } from '../helpers/processes.js';

/** An embedded start (PGlite, migrations) on a loaded machine, then the drain. */
const START_AND_STOP_MS = 240_000;
const dataDir = mkdtempSync(path.join(tmpdir(), 'picks-npm-start-'));
const started: ManagedProcess[] = [];

beforeAll(async () => {
  await ensureBuilt();
}, 600_000);
afterAll(async () => {
  // The servers first: SIGKILL to npm alone would leave the node it started running (a test
  // that failed before stopping its server would otherwise leave one behind).
  for (const npm of started) {
    for (const pid of childrenOf(npm.pid)) {
      try {
        process.kill(pid, 'SIGKILL');
      } catch {
        // already gone
      }
    }
  }
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

/** The JSON log lines printed before the banner's first line. */
function logLinesBeforeBanner(npm: ManagedProcess): { level: number; msg: string }[] {
  const banner = npm.lines.findIndex((line) => line.startsWith('Picks service listening on '));
  expect(banner, npm.output()).toBeGreaterThan(-1);
  return npm.lines
    .slice(0, banner)
    .filter((line) => line.startsWith('{'))
    .map((line) => {
      try {
        return JSON.parse(line) as { level: number; msg: string };
      } catch {
        throw new Error(`not JSON: ${line}`);
      }
    });
}

/** Signs in as a browser does (the form's CSRF token and cookie, then the POST) and answers the keys page. */
async function keysPageOf(url: string, email: string, password: string): Promise<string> {
  const loginUrl = `${url}/dashboard/login`;
  const form = await fetch(loginUrl);
  const cookies = form.headers.getSetCookie().map((cookie) => cookie.split(';')[0]).join('; ');
  const csrf = /name="_csrf" value="([^"]+)"/.exec(await form.text())![1]!;
  const signedIn = await fetch(loginUrl, {
    method: 'POST',
    redirect: 'manual',
    headers: { 'content-type': 'application/x-www-form-urlencoded', cookie: cookies },
    body: new URLSearchParams({ email, password, _csrf: csrf }).toString(),
  });
  expect(signedIn.status).toBe(303);
  expect(signedIn.headers.get('location')).toBe('/dashboard/api-keys');
  const session = signedIn.headers.getSetCookie().map((cookie) => cookie.split(';')[0]).join('; ');
  const page = await fetch(`${url}/dashboard/api-keys`, { headers: { cookie: `${cookies}; ${session}` } });
  expect(page.status).toBe(200);
  return page.text();
}

/** The demo keys as the first start wrote them (DATA_DIR/demo-keys.json), and the key list's rows. */
function demoKeysOf(dir: string): Record<string, string> {
  return JSON.parse(readFileSync(path.join(dir, 'demo-keys.json'), 'utf8')) as Record<string, string>;
}
function keyRows(page: string): number {
  return (page.match(/<tbody>[\s\S]*?<\/tbody>/)?.[0].match(/<tr\b/g) ?? []).length;
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

  describe('with the demo', () => {
    const demoDataDir = mkdtempSync(path.join(tmpdir(), 'picks-npm-start-demo-'));
    let signIn: { email: string; password: string } | null = null;
    afterAll(() => rmSync(demoDataDir, { recursive: true, force: true }));

    it('a first start logs nothing at info before the banner, prints the dashboard sign-in, which signs in and shows the demo Enterprise key', async () => {
      const { npm, port, url } = await npmStart({ DATA_DIR: demoDataDir, DEMO_SEED: 'true', DEMO_FEED: 'false' });
      expect(logLinesBeforeBanner(npm).filter((line) => line.level === 30)).toEqual([]);
      // Fastify's own listening line (written through pino, so it may land on either side of the
      // banner) is below the default level: the banner says the same.
      expect(npm.output()).not.toContain('Server listening at');
      const seededLine = npm.lines.find((line) => line.startsWith(`  data: a new demo seeded in ${demoDataDir} (`));
      expect(seededLine, npm.output()).toMatch(/\(\d[\d,]* picks\)$/);
      const line = /demo dashboard sign-in \(kept in (\S+)\): (\S+) \/ (\S+) +(\S+)/.exec(npm.output());
      expect(line, npm.output()).not.toBeNull();
      const [, file, email, password, loginUrl] = line!;
      expect(file).toBe(path.join(demoDataDir, 'demo-account.json'));
      expect(email).toBe('demo@example.com');
      expect(loginUrl).toBe(`${url}/dashboard/login`);
      expect(JSON.parse(readFileSync(file!, 'utf8'))).toEqual({ email, password });
      signIn = { email: email!, password: password! };
      // The keys page lists the demo Enterprise key (its first 12 characters), the account's only key.
      const keys = demoKeysOf(demoDataDir);
      const page = await keysPageOf(url, email!, password!);
      expect(page).toContain(keys.enterprise!.slice(0, 12));
      expect(keyRows(page)).toBe(1);
      // The demo's ledger is signed within seconds, with the key generated in DATA_DIR (0600),
      // and the customer's verifier, pinning the served key, finds it sound.
      const key = (await (await fetch(`${url}/api/public/ledger/key`)).text()).trim();
      expect(key).toMatch(/^localhost\/picks-ledger\+[0-9a-f]{8}\+/);
      expect(statSync(path.join(demoDataDir, 'ledger-signing-key')).mode & 0o777).toBe(0o600);
      await waitUntil('the first signed checkpoint', async () => (await fetch(`${url}/api/public/ledger/checkpoint`)).ok, 60_000, 250);
      const report = await verifyLedger(url, { key });
      expect(report.failures).toEqual([]);
      await stopsWith(npm, port, 'SIGTERM');
    }, START_AND_STOP_MS);

    it('a restart says the demo data were reused (since when, how many picks), gives an older account its key, logs engine polls at debug', async () => {
      expect(signIn, 'the first start ran').not.toBeNull();
      // Read with PGlite itself, and made into an older data directory: the account without keys.
      const db = new PGlite(demoDataDir);
      const picks = (await db.query<{ n: number }>('select count(*)::int as n from picks')).rows[0]!.n;
      const createdAt = (await db.query<{ created_at: Date }>('select created_at from deployment')).rows[0]!.created_at;
      await db.query('update api_keys set account_id = null');
      await db.close();
      const created = `${createdAt.toISOString().slice(0, 10)} ${createdAt.toISOString().slice(11, 16)} UTC`;

      // A witness anyone could run, given the demo's key: the restart submits the checkpoint to it.
      const logKey = parseSignerKey(readFileSync(path.join(demoDataDir, 'ledger-signing-key'), 'utf8')).text;
      const witnessState = mkdtempSync(path.join(tmpdir(), 'picks-npm-start-witness-'));
      const witness = (await startWitness({ logKeys: [logKey], name: 'witness.test/npm-start', stateDir: witnessState, port: 0, host: '127.0.0.1' })) as { url: string; verifierKey: string; close(): Promise<void> };
      onTestFinished(async () => {
        await witness.close();
        rmSync(witnessState, { recursive: true, force: true });
      });
      const { npm, port, url } = await npmStart({ DATA_DIR: demoDataDir, DEMO_SEED: 'true', DEMO_FEED: 'true', LOG_LEVEL: 'debug', LEDGER_WITNESSES: `${witness.verifierKey} ${witness.url}` });
      // Debug lines may come first (Fastify's listening line is one); nothing at info.
      expect(logLinesBeforeBanner(npm).filter((line) => line.level === 30)).toEqual([]);
      const [listening] = await npm.waitForLine(/^\{.*"msg":"Server listening at http:\/\/127\.0\.0\.1:\d+".*$/);
      expect(JSON.parse(listening!).level).toBe(20);
      expect(npm.lines).toContain(`  data: reusing the demo data in ${demoDataDir} (created ${created}, ${picks.toLocaleString('en-US')} picks); another DATA_DIR starts a new demo`);
      const page = await keysPageOf(url, signIn!.email, signIn!.password);
      expect(page).toContain(demoKeysOf(demoDataDir).enterprise!.slice(0, 12));
      expect(keyRows(page)).toBe(1);
      // The demo feed's first pick: its "poll processed" line is at debug (20) in embedded mode.
      const [processed] = await npm.waitForLine(/^\{.*"msg":"value engine: poll processed".*$/, 240_000);
      expect(JSON.parse(processed!).level).toBe(20);
      // The witness cosigned the demo's checkpoint: served with it, and the verifier requiring it agrees.
      await waitUntil('the witness cosignature', async () => (await (await fetch(`${url}/api/public/ledger/checkpoint`)).text()).includes('\u2014 witness.test/npm-start '), 60_000, 250);
      const report = await verifyLedger(url, { key: logKey, witnesses: [witness.verifierKey] });
      expect(report.failures).toEqual([]);
      await stopsWith(npm, port, 'SIGTERM');
    }, START_AND_STOP_MS + 240_000);
  });

  it('stops the server and frees the port on SIGINT', async () => {
    const { npm, port } = await npmStart();
    expect(npm.output()).not.toContain('WEBHOOK_HOST_OVERRIDES');
    await stopsWith(npm, port, 'SIGINT');
  }, START_AND_STOP_MS);
});
