/**
 * Embedded mode's files (DATA_DIR): the database, the admin token and the webhook secret key
 * are readable by the service's own user only, and the start banner never prints a credential
 * in production.
 */
import { chmodSync, mkdirSync, mkdtempSync, readdirSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { loadConfig } from '../../src/config.js';
import { embeddedAdminToken, embeddedDemoAccount, embeddedWebhookSecretKey, saveDemoKeys, secureDataDir } from '../../src/embedded.js';
import { initORM } from '../../src/persistence/orm.js';
import { startBanner } from '../../src/server/banner.js';

function everyEntry(dir: string): string[] {
  return readdirSync(dir, { recursive: true, encoding: 'utf8' }).map((entry) => path.join(dir, entry));
}

const root = mkdtempSync(path.join(tmpdir(), 'picks-data-dir-'));
let umaskBefore = 0;
beforeAll(() => {
  umaskBefore = process.umask();
});
afterEach(() => {
  process.umask(umaskBefore);
});
afterAll(() => {
  rmSync(root, { recursive: true, force: true });
});

describe('DATA_DIR permissions', () => {
  it('creates the folder 0700 and everything in it, the database included, without group or other access', async () => {
    process.umask(0o022); // the usual default, under which files come out world-readable
    const dataDir = path.join(root, 'fresh', 'data');
    secureDataDir(dataDir);
    embeddedAdminToken(dataDir);
    embeddedWebhookSecretKey(dataDir);
    saveDemoKeys(dataDir, { growth: 'service_x' });
    embeddedDemoAccount(dataDir);
    const orm = await initORM({ kind: 'pglite', dataDir: path.join(dataDir, 'db') }, { migrate: true });
    await orm.close(true);
    const entries = [dataDir, ...everyEntry(dataDir)];
    expect(entries.length).toBeGreaterThan(100); // the PostgreSQL cluster's files are there
    expect(statSync(dataDir).mode & 0o777).toBe(0o700);
    const open = entries.filter((entry) => (statSync(entry).mode & 0o077) !== 0);
    expect(open).toEqual([]);
  });

  it('tightens what an earlier version left readable to others', () => {
    process.umask(0o022);
    const dataDir = path.join(root, 'old');
    mkdirSync(path.join(dataDir, 'db', 'base'), { recursive: true, mode: 0o755 });
    chmodSync(dataDir, 0o755);
    writeFileSync(path.join(dataDir, 'admin-token'), 'token\n', { mode: 0o644 });
    writeFileSync(path.join(dataDir, 'db', 'base', 'file'), 'x', { mode: 0o664 });
    secureDataDir(dataDir);
    expect(statSync(dataDir).mode & 0o777).toBe(0o700);
    expect(statSync(path.join(dataDir, 'db', 'base')).mode & 0o777).toBe(0o700);
    expect(statSync(path.join(dataDir, 'admin-token')).mode & 0o777).toBe(0o600);
    expect(statSync(path.join(dataDir, 'db', 'base', 'file')).mode & 0o777).toBe(0o600);
  });
});

describe('the demo account file', () => {
  it('is generated once (0600) and read back the same on the next start; an unreadable one is replaced', () => {
    const dataDir = path.join(root, 'demo-account');
    const first = embeddedDemoAccount(dataDir);
    expect(first).toMatchObject({ email: 'demo@example.com', generated: true });
    expect(first.password.length).toBeGreaterThanOrEqual(20);
    expect(statSync(path.join(dataDir, 'demo-account.json')).mode & 0o777).toBe(0o600);
    expect(embeddedDemoAccount(dataDir)).toEqual({ ...first, generated: false });
    writeFileSync(path.join(dataDir, 'demo-account.json'), '{not json');
    const replaced = embeddedDemoAccount(dataDir);
    expect(replaced.generated).toBe(true);
    expect(replaced.password).not.toBe(first.password);
  });
});

describe('start banner', () => {
  const adminToken = 'generated-admin-token-value-123';
  const demoKeys = { starter: `service_${'1'.repeat(64)}`, growth: `service_${'2'.repeat(64)}` };

  it('prints the generated admin token and demo keys outside production, with a try line', () => {
    const banner = startBanner(loadConfig({ DATA_DIR: '/srv/picks' }), 'http://127.0.0.1:3000', adminToken, demoKeys);
    expect(banner).toContain(adminToken);
    expect(banner).toContain(demoKeys.starter);
    expect(banner).toContain(`Bearer ${demoKeys.growth}`);
  });

  it('names where they are kept in production, never the values', () => {
    const banner = startBanner(loadConfig({ DATA_DIR: '/srv/picks', NODE_ENV: 'production' }), 'http://127.0.0.1:3000', adminToken, demoKeys);
    expect(banner).not.toContain(adminToken);
    expect(banner).not.toMatch(/service_[0-9a-f]{64}/);
    expect(banner).toContain('admin token: kept in /srv/picks/admin-token');
    expect(banner).toContain('demo API keys: kept in /srv/picks/demo-keys.json');
  });
});
