/**
 * The embedded demo's dashboard account (ensureDemoAccount, run by `npm start` in embedded demo
 * mode): created with the generated password, left alone on the next start, and given the new
 * password when its file was generated again, so the banner's sign-in always works. It owns the
 * demo key of its tier (attachDemoKeys, at every start): an account made before keys were given
 * (an older data directory) gets it at the next start, and signing in shows it with its usage;
 * there a webhook to a receiver on this machine can be added from the dashboard.
 */
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { embeddedDemoAccount } from '../../src/embedded.js';
import { attachDemoKeys, offeredDemoKeys, ensureDemoAccount } from '../../src/seed/demo-account.js';
import { createTestApp, type TestApp } from '../helpers/app.js';
import { DashboardClient } from '../helpers/dashboard.js';

let t: TestApp;
const dataDir = mkdtempSync(path.join(tmpdir(), 'picks-demo-account-'));
beforeAll(async () => {
  t = await createTestApp();
});
afterAll(async () => {
  await t?.close();
  rmSync(dataDir, { recursive: true, force: true });
});

const signIn = (email: string, password: string) => t.runtime.services.dashboardAuth.signIn({ email, password, ip: '127.0.0.1' });

describe('the demo account', () => {
  it('is created with the generated password (Enterprise), kept on the next start, and re-passworded when its file is generated again', async () => {
    const first = embeddedDemoAccount(dataDir);
    expect(await ensureDemoAccount(t.runtime.services, first)).toBe('created');
    expect((await signIn(first.email, first.password)).token).toEqual(expect.any(String));
    const account = await t.runtime.services.accounts.findByEmail('demo@example.com');
    expect(account?.tier).toBe('enterprise');

    expect(await ensureDemoAccount(t.runtime.services, embeddedDemoAccount(dataDir))).toBe('existing');
    expect((await signIn(first.email, first.password)).token).toEqual(expect.any(String));

    rmSync(path.join(dataDir, 'demo-account.json'));
    const again = embeddedDemoAccount(dataDir);
    expect(await ensureDemoAccount(t.runtime.services, again)).toBe('password_set');
    expect((await signIn(again.email, again.password)).token).toEqual(expect.any(String));
    await expect(signIn(first.email, first.password)).rejects.toMatchObject({ code: 'invalid_credentials' });
  });
});

describe('the demo account\'s keys', () => {
  let demo: TestApp;
  const keysDir = mkdtempSync(path.join(tmpdir(), 'picks-demo-keys-'));
  beforeAll(async () => {
    // The embedded demo's settings (no DATABASE_URL, DEMO_SEED on), the demo feed off.
    demo = await createTestApp({ env: { DEMO_SEED: 'true', DEMO_FEED: 'false', HOST: '127.0.0.1' } });
  });
  afterAll(async () => {
    await demo?.close();
    rmSync(keysDir, { recursive: true, force: true });
  });

  it('an account made before keys were given gets the Enterprise demo key at the next start, once; signing in shows it with its usage', async () => {
    // An older data directory: free-standing demo keys (one per tier, as the first start's seed
    // makes them) in demo-keys.json, and the account, made without keys.
    const made: Record<string, string> = {};
    for (const tier of ['starter', 'growth', 'enterprise'] as const) made[tier] = (await demo.runtime.services.apiKeys.create({ tier, label: `Demo ${tier} key` })).key;
    const keysFile = path.join(keysDir, 'demo-keys.json');
    writeFileSync(keysFile, JSON.stringify(made));
    const account = embeddedDemoAccount(keysDir);
    expect(await ensureDemoAccount(demo.runtime.services, account)).toBe('created');
    const keys = JSON.parse(readFileSync(keysFile, 'utf8')) as Record<string, string>;

    // The next start: the Enterprise key is given, the others stay free-standing (an account's keys carry its tier).
    expect(await attachDemoKeys(demo.runtime.services, account.email, keys)).toEqual({ starter: 'other_tier', growth: 'other_tier', enterprise: 'attached' });
    // And the one after: nothing changes.
    expect(await attachDemoKeys(demo.runtime.services, account.email, keys)).toEqual({ starter: 'other_tier', growth: 'other_tier', enterprise: 'owned' });

    // Two requests with the key, then the dashboard: the key is listed with them counted.
    for (let i = 0; i < 2; i += 1) {
      const res = await demo.app.inject({ method: 'GET', url: '/api/v1/picks?limit=1', headers: { authorization: `Bearer ${keys.enterprise}` } });
      expect(res.statusCode).toBe(200);
    }
    const client = new DashboardClient(demo.app);
    expect((await client.signIn(account.email, account.password)).statusCode).toBe(303);
    const page = (await client.get('/dashboard/api-keys')).body;
    expect(page).not.toContain('No API keys yet');
    // The list shows a key's first 12 characters (docs/DASHBOARD.md), never the key.
    expect(page).toContain(keys.enterprise!.slice(0, 12));
    expect(page).not.toContain(keys.enterprise);
    expect(page.match(/<tbody>[\s\S]*?<\/tbody>/)![0].match(/<tr\b/g)).toHaveLength(1);
    expect(page).toContain('aria-label="Requests this month: 2 of 1,000,000 requests"');
  });

  it('a webhook to a receiver on this machine is added from the dashboard and gets its test delivery', async () => {
    const received: string[] = [];
    const receiver = createServer((req, res) => {
      req.resume();
      req.on('end', () => {
        received.push(`${req.method} ${req.url} ${String(req.headers['x-service-test'])}`);
        res.writeHead(204).end();
      });
    });
    await new Promise<void>((resolve) => receiver.listen(0, '127.0.0.1', resolve));
    try {
      const port = (receiver.address() as AddressInfo).port;
      const account = embeddedDemoAccount(keysDir);
      const client = new DashboardClient(demo.app);
      await client.signIn(account.email, account.password);
      const page = (await client.get('/dashboard/api-keys')).body;
      expect(page).toContain('In this local demo, a receiver on this machine works too');
      const keyId = /<select id="webhook-key" name="apiKeyId"><option value="([0-9a-f-]{36})"/.exec(page)![1]!;
      const added = await client.post('/dashboard/webhooks', { url: `http://127.0.0.1:${port}/webhooks`, apiKeyId: keyId, events: 'PICK_PUBLISHED' });
      expect(added.statusCode, added.body).toBe(201);
      expect(added.body).toMatch(/whsec_[A-Za-z0-9+/=]+/);
      const subscriptionId = /\/dashboard\/webhooks\/([0-9a-f-]{36})\/test/.exec(added.body)![1]!;
      const tested = await client.post(`/dashboard/webhooks/${subscriptionId}/test`);
      expect(tested.statusCode, tested.body).toBe(200);
      expect(received).toEqual(['POST /webhooks true']);
    } finally {
      await new Promise((resolve) => receiver.close(resolve));
    }
  });

  it('a revoked demo key is no longer owned nor offered in the banner', async () => {
    const account = embeddedDemoAccount(keysDir);
    const keys = JSON.parse(readFileSync(path.join(keysDir, 'demo-keys.json'), 'utf8')) as Record<string, string>;
    const accountId = (await demo.runtime.services.accounts.findByEmail(account.email))!.id;
    const [owned] = await demo.runtime.services.apiKeys.listForAccount(accountId);
    await demo.runtime.services.apiKeys.revoke(owned!.id);
    const outcomes = await attachDemoKeys(demo.runtime.services, account.email, keys);
    expect(outcomes).toEqual({ starter: 'other_tier', growth: 'other_tier', enterprise: 'revoked' });
    expect(Object.keys(offeredDemoKeys(keys as never, outcomes))).toEqual(['starter', 'growth']);
  });
});
