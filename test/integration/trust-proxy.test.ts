/**
 * TRUST_PROXY: X-Forwarded-For counts only from the listed proxies. Observed through the
 * dashboard's per-address sign-in throttle (docs/DASHBOARD.md), the one place the client
 * address decides anything.
 */
import { afterEach, describe, expect, it } from 'vitest';
import { ManualClock } from '../../src/domain/clock.js';
import { throttleSubject } from '../../src/domain/login-throttle.js';
import { newId } from '../../src/services/ids.js';
import { createTestApp, type TestApp } from '../helpers/app.js';
import { CREATE_ACCOUNT, DashboardClient, PASSWORD } from '../helpers/dashboard.js';

const PROXY = '10.9.0.1';
let t: TestApp | null = null;
afterEach(async () => {
  await t?.close();
  t = null;
});

async function appWith(env: Record<string, string>): Promise<TestApp> {
  t = await createTestApp({ clock: new ManualClock('2026-11-22T12:00:00Z'), env });
  return t;
}

/** An address that has used up its 20 failures (written straight into the table). */
async function exhaust(app: TestApp, address: string): Promise<void> {
  const em = app.runtime.orm.em.fork();
  for (let i = 0; i < 20; i += 1) {
    await em.execute('insert into login_failures (id, scope, subject, failed_at) values (?, ?, ?, ?)', [
      newId(), 'ip', throttleSubject('ip', address), new Date(Date.parse('2026-11-22T12:00:00Z') - (20 - i) * 1_000),
    ]);
  }
}

async function account(app: TestApp): Promise<string> {
  const email = `proxy-${newId()}@example.com`;
  const result = await app.graphql(CREATE_ACCOUNT, { input: { email, password: PASSWORD, tier: 'STARTER' } });
  expect(result.errors).toBeUndefined();
  return email;
}

const signIn = (app: TestApp, socketAddress: string, forwardedFor: string | null, email: string) =>
  new DashboardClient(app.app, socketAddress, forwardedFor ? { 'x-forwarded-for': forwardedFor } : {}).signIn(email);

describe('TRUST_PROXY', () => {
  it('unset: X-Forwarded-For is ignored, the socket peer is the client (a forged header does not escape the throttle)', async () => {
    const app = await appWith({});
    const email = await account(app);
    await exhaust(app, '10.9.0.50');
    expect((await signIn(app, '10.9.0.50', '203.0.113.7', email)).statusCode).toBe(429);
  });

  it('listed: the forwarded client address is throttled, not the proxy, so other customers behind it still sign in', async () => {
    const app = await appWith({ TRUST_PROXY: `${PROXY},loopback` });
    const email = await account(app);
    await exhaust(app, '203.0.113.7');
    expect((await signIn(app, PROXY, '203.0.113.7', email)).statusCode).toBe(429);
    expect((await signIn(app, PROXY, '203.0.113.8', email)).statusCode).toBe(303);
  });

  it('listed as a range: a header from outside it is ignored', async () => {
    const app = await appWith({ TRUST_PROXY: '10.9.0.0/24' });
    const email = await account(app);
    await exhaust(app, '192.0.2.10');
    await exhaust(app, '203.0.113.9');
    // 192.0.2.10 is no proxy: its own address counts, whatever it claims.
    expect((await signIn(app, '192.0.2.10', '203.0.113.20', email)).statusCode).toBe(429);
    // A proxy in the range: the address it forwards counts.
    expect((await signIn(app, '10.9.0.77', '203.0.113.9', email)).statusCode).toBe(429);
    expect((await signIn(app, '10.9.0.77', '203.0.113.20', email)).statusCode).toBe(303);
  });
});
