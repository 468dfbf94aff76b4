/**
 * The embedded demo's dashboard account (ensureDemoAccount, run by `npm start` in embedded demo
 * mode): created with the generated password, left alone on the next start, and given the new
 * password when its file was generated again, so the banner's sign-in always works.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { embeddedDemoAccount } from '../../src/embedded.js';
import { ensureDemoAccount } from '../../src/seed/demo-account.js';
import { createTestApp, type TestApp } from '../helpers/app.js';

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
