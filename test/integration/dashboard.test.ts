/**
 * The customer dashboard over HTTP (docs/DASHBOARD.md): accounts, sign-in and throttling,
 * sessions and their expiry, cookie attributes, CSRF, key management, usage, tier changes,
 * and that cookies never authenticate the customer API.
 */
import { readFileSync } from 'node:fs';
import https from 'node:https';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { CONTENT_SECURITY_POLICY } from '../../adapters/dashboard/setup.js';
import { ManualClock } from '../../src/domain/clock.js';
import { throttleSubject } from '../../src/domain/login-throttle.js';
import { newId } from '../../src/services/ids.js';
import { SESSION_ABSOLUTE_MS, SESSION_IDLE_MS } from '../../src/domain/session.js';
import { createTestApp, type TestApp } from '../helpers/app.js';
import { CREATE_ACCOUNT, csrfTokenOf, DashboardClient, PASSWORD, SET_ACCOUNT_TIER } from '../helpers/dashboard.js';
import { CREATE_KEY, PUBLISH, REVOKE_KEY, pickInput } from '../helpers/fixtures.js';

let t: TestApp;
const clock = new ManualClock('2026-11-22T12:00:00Z');
let accountCounter = 0;

async function createAccount(tier = 'STARTER', email = `customer${++accountCounter}@example.com`) {
  const result = await t.graphql<{ createAccount: { id: string; email: string; tier: string } }>(CREATE_ACCOUNT, { input: { email, password: PASSWORD, tier } });
  expect(result.errors).toBeUndefined();
  return result.data!.createAccount;
}

async function picksStatus(key: string, path = '/api/v1/picks?limit=1'): Promise<number> {
  const response = await t.app.inject({ method: 'GET', url: path, headers: { authorization: `Bearer ${key}` } });
  return response.statusCode;
}

/** Signs in and creates a key through the pages; returns the plaintext key and its id. */
async function createKeyThroughDashboard(client: DashboardClient, label: string): Promise<{ key: string; id: string }> {
  const page = await client.post('/dashboard/api-keys', { label });
  expect(page.statusCode).toBe(201);
  const key = /service_[0-9a-f]{64}/.exec(page.body)![0];
  const ids = [...page.body.matchAll(/\/dashboard\/api-keys\/([0-9a-f-]{36})\/revoke/g)].map((match) => match[1]!);
  const keys = await t.graphql<{ apiKeys: { id: string; prefix: string }[] }>('{ apiKeys { id prefix } }');
  const id = keys.data!.apiKeys.find((apiKey) => key.startsWith(apiKey.prefix) && ids.includes(apiKey.id))!.id;
  return { key, id };
}

beforeAll(async () => {
  // Webhook URLs on hooks.test resolve to loopback; nothing listens there (deliveries are only counted).
  t = await createTestApp({ clock, env: { WEBHOOK_HOST_OVERRIDES: 'hooks.test=127.0.0.1' } });
});
afterAll(async () => {
  await t?.close();
});

describe('accounts (admin GraphQL)', () => {
  it('createAccount normalises the email, refuses duplicates, short passwords and non-admins', async () => {
    const created = await t.graphql<{ createAccount: { email: string; tier: string } }>(CREATE_ACCOUNT, {
      input: { email: '  Mixed.Case@Example.COM ', password: PASSWORD, tier: 'GROWTH' },
    });
    expect(created.data!.createAccount).toMatchObject({ email: 'mixed.case@example.com', tier: 'GROWTH' });
    const duplicate = await t.graphql(CREATE_ACCOUNT, { input: { email: 'mixed.case@example.com', password: PASSWORD, tier: 'GROWTH' } });
    expect(duplicate.errors?.[0]?.extensions).toMatchObject({ code: 'duplicate_email' });
    const short = await t.graphql(CREATE_ACCOUNT, { input: { email: 'short@example.com', password: 'short', tier: 'GROWTH' } });
    expect(short.errors?.[0]?.extensions).toMatchObject({ code: 'invalid_parameter', parameter: 'password' });
    const badEmail = await t.graphql(CREATE_ACCOUNT, { input: { email: 'not-an-email', password: PASSWORD, tier: 'GROWTH' } });
    expect(badEmail.errors?.[0]?.extensions).toMatchObject({ code: 'invalid_parameter', parameter: 'email' });
    const key = await t.graphql<{ createApiKey: { key: string } }>(CREATE_KEY, { input: { tier: 'ENTERPRISE' } });
    const asKey = await t.graphql(CREATE_ACCOUNT, { input: { email: 'x@example.com', password: PASSWORD, tier: 'GROWTH' } }, `Bearer ${key.data!.createApiKey.key}`);
    expect(asKey.errors?.[0]?.extensions).toMatchObject({ code: 'admin_required' });
    // The hash is scrypt with its parameters, never the password.
    const rows = await t.runtime.orm.em.fork().execute<{ password_hash: string }[]>("select password_hash from accounts where email = 'mixed.case@example.com'");
    expect(rows[0]!.password_hash).toMatch(/^scrypt\$ln=15,r=8,p=3\$/);
    expect(rows[0]!.password_hash).not.toContain(PASSWORD);
  });

  it('createApiKey with accountId gives the key the account tier; free-standing keys still need a tier', async () => {
    const account = await createAccount('GROWTH');
    const owned = await t.graphql<{ createApiKey: { apiKey: { tier: string; accountId: string } } }>(
      'mutation($input: CreateApiKeyInput!) { createApiKey(input: $input) { apiKey { tier accountId } } }',
      { input: { accountId: account.id, label: 'ops' } },
    );
    expect(owned.data!.createApiKey.apiKey).toEqual({ tier: 'GROWTH', accountId: account.id });
    const mismatch = await t.graphql(CREATE_KEY, { input: { accountId: account.id, tier: 'STARTER' } });
    expect(mismatch.errors?.[0]?.extensions).toMatchObject({ code: 'invalid_parameter', parameter: 'tier' });
    const noTier = await t.graphql(CREATE_KEY, { input: { label: 'loose' } });
    expect(noTier.errors?.[0]?.extensions).toMatchObject({ code: 'invalid_parameter', parameter: 'tier' });
    const unknown = await t.graphql(CREATE_KEY, { input: { accountId: '01890000-0000-7000-8000-000000000000' } });
    expect(unknown.errors?.[0]?.extensions).toMatchObject({ code: 'not_found' });
    const loose = await t.graphql<{ createApiKey: { apiKey: { tier: string } } }>(CREATE_KEY, { input: { tier: 'STARTER' } });
    expect(loose.data!.createApiKey.apiKey.tier).toBe('STARTER');
  });

  it('setAccountTier moves every key of the account to the new tier at once (auth cache evicted)', async () => {
    const account = await createAccount('STARTER');
    const created = await t.graphql<{ createApiKey: { key: string } }>(CREATE_KEY, { input: { accountId: account.id } });
    const key = created.data!.createApiKey.key;
    expect(await picksStatus(key, '/api/v1/track-record')).toBe(403); // cached as starter now
    const changed = await t.graphql<{ setAccountTier: { tier: string; apiKeys: { tier: string }[] } }>(SET_ACCOUNT_TIER, { id: account.id, tier: 'GROWTH' });
    expect(changed.data!.setAccountTier.tier).toBe('GROWTH');
    expect(changed.data!.setAccountTier.apiKeys.map((apiKey) => apiKey.tier)).toEqual(['GROWTH']);
    expect(await picksStatus(key, '/api/v1/track-record')).toBe(200);
    const response = await t.app.inject({ method: 'GET', url: '/api/v1/picks', headers: { authorization: `Bearer ${key}` } });
    expect(response.headers['x-ratelimit-limit']).toBe(String(t.config.tierLimits.growth.hourly));
  });

  it('keeps at most 10 active keys per account', async () => {
    const account = await createAccount('STARTER');
    for (let i = 0; i < 10; i += 1) {
      const created = await t.graphql(CREATE_KEY, { input: { accountId: account.id } });
      expect(created.errors).toBeUndefined();
    }
    const eleventh = await t.graphql(CREATE_KEY, { input: { accountId: account.id } });
    expect(eleventh.errors?.[0]?.extensions).toMatchObject({ code: 'api_key_limit', limit: 10 });
  });
});

describe('sign-in', () => {
  it('serves the sign-in page with a strict CSP and a signed, httpOnly, SameSite=Strict CSRF cookie', async () => {
    const client = new DashboardClient(t.app);
    const response = await client.get('/dashboard/login');
    expect(response.statusCode).toBe(200);
    expect(response.headers['content-type']).toBe('text/html; charset=utf-8');
    expect(response.headers['content-security-policy']).toBe(CONTENT_SECURITY_POLICY);
    expect(CONTENT_SECURITY_POLICY).toContain("default-src 'self'");
    expect(response.headers['x-frame-options']).toBe('DENY');
    expect(response.headers['cache-control']).toBe('no-store');
    const csrf = (response.cookies as { name: string; httpOnly?: boolean; sameSite?: string; path?: string; value: string }[]).find((cookie) => cookie.name === 'dashboard_csrf')!;
    expect(csrf).toMatchObject({ httpOnly: true, sameSite: 'Strict', path: '/dashboard' });
    expect(csrf.value).toMatch(/\./); // signed
    expect(response.body).toContain('<label for="email">Email</label>');
    expect(response.body).not.toMatch(/<script>|style="|https?:\/\/(?!127)/); // nothing inline, nothing external
  });

  it('signs in with a session cookie: httpOnly, SameSite=Strict, Path=/dashboard, not Secure over plain HTTP', async () => {
    const account = await createAccount('GROWTH');
    const client = new DashboardClient(t.app);
    const response = await client.signIn(account.email);
    expect(response.statusCode).toBe(303);
    expect(response.headers.location).toBe('/dashboard/api-keys');
    const session = (response.cookies as { name: string; value: string; httpOnly?: boolean; sameSite?: string; path?: string; secure?: boolean; maxAge?: number }[]).find(
      (cookie) => cookie.name === 'dashboard_session',
    )!;
    expect(session).toMatchObject({ httpOnly: true, sameSite: 'Strict', path: '/dashboard', maxAge: SESSION_ABSOLUTE_MS / 1000 });
    expect(session.secure).toBeFalsy();
    expect(session.value).toMatch(/^[A-Za-z0-9_-]{43}$/);
    // Only the SHA-256 is stored.
    const rows = await t.runtime.orm.em.fork().execute<{ token_hash: string }[]>('select token_hash from dashboard_sessions');
    expect(rows.map((row) => row.token_hash)).not.toContain(session.value);
    const page = await client.get('/dashboard/api-keys');
    expect(page.statusCode).toBe(200);
    expect(page.body).toContain(account.email);
    expect(page.body).toContain('Growth');
  });

  it('sets Secure on the session cookie when the request came over TLS', async () => {
    const account = await createAccount();
    // The same app behind a real TLS listener on loopback (the test CA is trusted through NODE_EXTRA_CA_CERTS).
    const tlsDir = new URL('../fixtures/tls/', import.meta.url);
    const server = https.createServer(
      { key: readFileSync(new URL('server-key.pem', tlsDir)), cert: readFileSync(new URL('server.pem', tlsDir)) },
      (req, res) => t.app.routing(req, res),
    );
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    try {
      const base = `https://127.0.0.1:${(server.address() as AddressInfo).port}`;
      const login = await fetch(`${base}/dashboard/login`);
      const cookie = login.headers.getSetCookie().map((line) => line.split(';')[0]).join('; ');
      const form = new URLSearchParams({ email: account.email, password: PASSWORD, _csrf: csrfTokenOf(await login.text()) });
      const signedIn = await fetch(`${base}/dashboard/login`, {
        method: 'POST',
        redirect: 'manual',
        headers: { cookie, 'content-type': 'application/x-www-form-urlencoded' },
        body: form.toString(),
      });
      expect(signedIn.status).toBe(303);
      const session = signedIn.headers.getSetCookie().find((line) => line.startsWith('dashboard_session='));
      const attributes = session!.split(';').map((part) => part.trim().toLowerCase());
      expect(attributes).toEqual(expect.arrayContaining(['secure', 'httponly', 'samesite=strict', 'path=/dashboard']));
    } finally {
      await new Promise((resolve) => server.close(resolve));
    }
  });

  it('refuses a wrong password and an unknown email with the same generic message', async () => {
    const account = await createAccount();
    const wrong = await new DashboardClient(t.app, '10.0.0.1').signIn(account.email, 'not the right password');
    const unknown = await new DashboardClient(t.app, '10.0.0.1').signIn('nobody@example.com', PASSWORD);
    const malformed = await new DashboardClient(t.app, '10.0.0.1').signIn('not an email', PASSWORD);
    for (const response of [wrong, unknown, malformed]) {
      expect(response.statusCode).toBe(401);
      expect(response.headers['x-error-code']).toBe('invalid_credentials');
      expect(response.body).toContain('Incorrect email or password.');
      expect(response.cookies.some((cookie: { name: string }) => cookie.name === 'dashboard_session')).toBe(false);
    }
  });

  /** Earlier failures written straight into the table (each real attempt costs a scrypt hash). */
  async function seedFailures(scope: 'account' | 'ip', value: string, count: number) {
    const em = t.runtime.orm.em.fork();
    for (let i = 0; i < count; i += 1) {
      await em.execute('insert into login_failures (id, scope, subject, failed_at) values (?, ?, ?, ?)', [
        newId(), scope, throttleSubject(scope, value), new Date(clock.now().getTime() - (count - i) * 1_000),
      ]);
    }
  }

  it('throttles an account after 5 failures (even the right password), whatever the address', async () => {
    const account = await createAccount();
    await seedFailures('account', account.email, 4);
    expect((await new DashboardClient(t.app, '10.1.0.1').signIn(account.email, 'wrong password!')).statusCode).toBe(401);
    const refused = await new DashboardClient(t.app, '10.1.0.99').signIn(account.email);
    expect(refused.statusCode).toBe(429);
    expect(refused.headers['x-error-code']).toBe('login_throttled');
    expect(Number(refused.headers['retry-after'])).toBeGreaterThan(0);
    expect(Number(refused.headers['retry-after'])).toBeLessThanOrEqual(15 * 60);
    expect(refused.body).toContain('Too many failed sign-in attempts');
    // Typed in another case, it is the same account.
    expect((await new DashboardClient(t.app, '10.1.0.98').signIn(account.email.toUpperCase())).statusCode).toBe(429);
    // Another account is unaffected; after the window the right password works again.
    const other = await createAccount();
    expect((await new DashboardClient(t.app, '10.1.0.99').signIn(other.email)).statusCode).toBe(303);
    clock.advance(15 * 60_000 + 1_000);
    expect((await new DashboardClient(t.app, '10.1.0.99').signIn(account.email)).statusCode).toBe(303);
  });

  it('counts concurrent attempts: never more than 5 wrong guesses per account get through', async () => {
    const account = await createAccount();
    const attempts = Array.from({ length: 8 }, (_, i) => new DashboardClient(t.app, `10.3.0.${i}`).signIn(account.email, `wrong password ${i}`));
    const statuses = (await Promise.all(attempts)).map((response) => response.statusCode);
    const guessed = statuses.filter((status) => status === 401).length;
    // Each attempt sees the others' records: at most 5 are judged, the rest refused (possibly all of them).
    expect(guessed).toBeLessThanOrEqual(5);
    expect(statuses.filter((status) => status !== 401).every((status) => status === 429)).toBe(true);
    const recorded = await t.runtime.orm.em.fork().execute<{ n: string }[]>("select count(*) as n from login_failures where scope = 'account' and subject = ?", [
      throttleSubject('account', account.email),
    ]);
    expect(Number(recorded[0]!.n)).toBe(guessed);
    clock.advance(15 * 60_000 + 1_000);
  });

  it('throttles an address after 20 failures across accounts; other addresses still sign in', async () => {
    const account = await createAccount();
    await seedFailures('ip', '10.2.0.1', 19);
    expect((await new DashboardClient(t.app, '10.2.0.1').signIn('guess@example.com', 'wrong password!')).statusCode).toBe(401);
    expect((await new DashboardClient(t.app, '10.2.0.1').signIn(account.email)).statusCode).toBe(429);
    expect((await new DashboardClient(t.app, '10.2.0.2').signIn(account.email)).statusCode).toBe(303);
    clock.advance(15 * 60_000 + 1_000);
    expect((await new DashboardClient(t.app, '10.2.0.1').signIn(account.email)).statusCode).toBe(303);
  });

  it('counts an IPv6 client by its /64: another address of the same /64 is throttled, another /64 is not', async () => {
    const account = await createAccount();
    await seedFailures('ip', '2001:db8:5:6::/64', 19);
    expect((await new DashboardClient(t.app, '2001:db8:5:6::1').signIn('guess@example.com', 'wrong password!')).statusCode).toBe(401);
    expect((await new DashboardClient(t.app, '2001:db8:5:6:ffff::9').signIn(account.email)).statusCode).toBe(429);
    expect((await new DashboardClient(t.app, '2001:db8:5:7::1').signIn(account.email)).statusCode).toBe(303);
  });
});

describe('CSRF', () => {
  it('refuses every state change without a valid token with a clear 403 page', async () => {
    const account = await createAccount();
    const client = new DashboardClient(t.app);
    const noTokenLogin = await client.post('/dashboard/login', { email: account.email, password: PASSWORD }, null);
    expect(noTokenLogin.statusCode).toBe(403);
    expect(await client.signIn(account.email)).toHaveProperty('statusCode', 303);
    await client.get('/dashboard/api-keys');
    for (const token of [null, '', 'forged-token']) {
      const response = await client.post('/dashboard/api-keys', { label: 'sneaky' }, token);
      expect(response.statusCode).toBe(403);
      expect(response.headers['x-error-code']).toBe('invalid_csrf_token');
      expect(response.headers['content-type']).toBe('text/html; charset=utf-8');
      expect(response.body).toContain('This form has expired');
    }
    expect((await client.post('/dashboard/logout', {}, null)).statusCode).toBe(403);
    // A token issued to another session does not work with this one.
    const other = new DashboardClient(t.app);
    await other.signIn((await createAccount()).email);
    const page = await other.get('/dashboard/api-keys');
    const foreignToken = /name="_csrf" value="([^"]+)"/.exec(page.body)![1]!;
    expect((await client.post('/dashboard/api-keys', { label: 'sneaky' }, foreignToken)).statusCode).toBe(403);
    const keys = await t.graphql<{ accounts: { email: string; apiKeys: { id: string }[] }[] }>('{ accounts { email apiKeys { id } } }');
    expect(keys.data!.accounts.find((a) => a.email === account.email)!.apiKeys).toEqual([]);
  });
});

describe('key management', () => {
  it('creates a key shown once, which works on /api/v1, counts usage, and is revoked after confirmation (401)', async () => {
    const account = await createAccount('GROWTH');
    const client = new DashboardClient(t.app);
    await client.signIn(account.email);
    await client.get('/dashboard/api-keys');
    const { key, id } = await createKeyThroughDashboard(client, 'Production <server>');
    expect(client.lastPage).toContain('It will not be shown again');
    expect(client.lastPage).toContain('data-copy-target="new-key-value"');
    expect(client.lastPage).toContain('Production &lt;server&gt;'); // escaped
    expect(await picksStatus(key)).toBe(200);
    expect(await picksStatus(key)).toBe(200);
    const again = await client.get('/dashboard/api-keys');
    expect(again.body).not.toContain(key);
    expect(again.body).toMatch(/data-label="Last used"><time [^>]+>just now<\/time>/); // not waiting for the batched write
    expect(again.body).toContain(key.slice(0, 12));
    // Usage: read, not counted; the same numbers through GraphQL.
    expect(again.body).toMatch(/<span class="usage-used">2<\/span><span class="usage-limit"> \/ 100,000<\/span>/);
    expect(again.body).toMatch(/<span class="usage-used">2<\/span><span class="usage-limit"> \/ 1,000<\/span>/);
    const usage = await t.graphql<{ apiKeys: { id: string; usage: { hourly: { used: number; limit: number }; monthly: { used: number } } }[] }>(
      '{ apiKeys { id usage { hourly { used limit } monthly { used } } } }',
    );
    expect(usage.data!.apiKeys.find((apiKey) => apiKey.id === id)!.usage).toEqual({ hourly: { used: 2, limit: 1000 }, monthly: { used: 2 } });

    const confirm = await client.get(`/dashboard/api-keys/${id}/revoke`);
    expect(confirm.statusCode).toBe(200);
    expect(confirm.body).toContain('Revoke this API key?');
    const revoked = await client.post(`/dashboard/api-keys/${id}/revoke`);
    expect(revoked.statusCode).toBe(303);
    expect(revoked.headers.location).toBe(`/dashboard/api-keys?revoked=${id}`);
    expect(await picksStatus(key)).toBe(401);
    const after = await client.get(revoked.headers.location as string);
    expect(after.body).toContain('Key revoked.');
    expect(after.body).toContain('Revoked');
  });

  it("cannot see or revoke another account's key", async () => {
    const owner = new DashboardClient(t.app);
    await owner.signIn((await createAccount()).email);
    await owner.get('/dashboard/api-keys');
    const { key, id } = await createKeyThroughDashboard(owner, 'mine');
    const intruder = new DashboardClient(t.app);
    await intruder.signIn((await createAccount()).email);
    await intruder.get('/dashboard/api-keys');
    expect((await intruder.get(`/dashboard/api-keys/${id}/revoke`)).statusCode).toBe(404);
    await intruder.get('/dashboard/api-keys');
    const refused = await intruder.post(`/dashboard/api-keys/${id}/revoke`);
    expect(refused.statusCode).toBe(404);
    expect(refused.headers['x-error-code']).toBe('not_found');
    expect(await picksStatus(key)).toBe(200);
    expect((await intruder.get('/dashboard/api-keys')).body).not.toContain(key.slice(0, 12));
  });

  it('reports a bad label on the page', async () => {
    const client = new DashboardClient(t.app);
    await client.signIn((await createAccount()).email);
    await client.get('/dashboard/api-keys');
    const response = await client.post('/dashboard/api-keys', { label: 'x'.repeat(101) });
    expect(response.statusCode).toBe(400);
    expect(response.body).toContain('label must be 1 to 100 characters');
    const control = await client.post('/dashboard/api-keys', { label: 'tab\there\u0000' });
    expect(control.statusCode).toBe(400);
    expect(control.headers['x-error-code']).toBe('invalid_parameter');
  });
});

describe('webhooks of revoked or downgraded keys', () => {
  it('stop receiving events', async () => {
    const account = await createAccount('GROWTH');
    const keys: { key: string; id: string }[] = [];
    for (const label of ['kept', 'revoked']) {
      const created = await t.graphql<{ createApiKey: { key: string; apiKey: { id: string } } }>(CREATE_KEY, { input: { accountId: account.id, label } });
      keys.push({ key: created.data!.createApiKey.key, id: created.data!.createApiKey.apiKey.id });
    }
    const subscriptions: string[] = [];
    for (const { key } of keys) {
      const created = await t.graphql<{ createWebhookSubscription: { subscription: { id: string } } }>(
        'mutation($input: CreateWebhookSubscriptionInput!) { createWebhookSubscription(input: $input) { subscription { id } } }',
        { input: { url: 'https://hooks.test:9/hook', events: ['PICK_PUBLISHED'] } },
        `Bearer ${key}`,
      );
      expect(created.errors).toBeUndefined();
      subscriptions.push(created.data!.createWebhookSubscription.subscription.id);
    }
    await t.graphql(REVOKE_KEY, { id: keys[1]!.id });
    const deliveries = async (subscriptionId: string) =>
      Number((await t.runtime.orm.em.fork().execute<{ n: string }[]>('select count(*) as n from webhook_deliveries where subscription_id = ?', [subscriptionId]))[0]!.n);
    const published = async (home: string) => {
      const before = await deliveries(subscriptions[0]!);
      await t.graphql(PUBLISH, { input: pickInput({ homeTeam: home, selection: home }) });
      for (let i = 0; i < 100 && (await deliveries(subscriptions[0]!)) === before; i += 1) await new Promise((resolve) => setTimeout(resolve, 50));
      return (await deliveries(subscriptions[0]!)) - before;
    };
    expect(await published('Fulham')).toBe(1);
    expect(await deliveries(subscriptions[1]!)).toBe(0);
    // Downgraded below Growth: no more deliveries for any key of the account.
    await t.graphql(SET_ACCOUNT_TIER, { id: account.id, tier: 'STARTER' });
    await t.graphql(PUBLISH, { input: pickInput({ homeTeam: 'Brentford', selection: 'Brentford' }) });
    await new Promise((resolve) => setTimeout(resolve, 500));
    expect(await deliveries(subscriptions[0]!)).toBe(1);
  });
});

describe('sessions', () => {
  it('end after 30 idle minutes, and after 12 hours however active', async () => {
    const account = await createAccount();
    const client = new DashboardClient(t.app);
    await client.signIn(account.email);
    clock.advance(SESSION_IDLE_MS - 60_000);
    expect((await client.get('/dashboard/api-keys')).statusCode).toBe(200);
    clock.advance(SESSION_IDLE_MS + 1_000);
    const idle = await client.get('/dashboard/api-keys');
    expect(idle.statusCode).toBe(303);
    expect(idle.headers.location).toBe('/dashboard/login?expired=1');
    expect(client.jar.has('dashboard_session')).toBe(false);

    await client.signIn(account.email);
    for (let elapsed = 0; elapsed < SESSION_ABSOLUTE_MS - 20 * 60_000; elapsed += 20 * 60_000) {
      clock.advance(20 * 60_000);
      expect((await client.get('/dashboard/api-keys')).statusCode).toBe(200);
    }
    clock.advance(20 * 60_000);
    expect((await client.get('/dashboard/api-keys')).headers.location).toBe('/dashboard/login?expired=1');
  });

  it('sign-out ends the session on the server, not just in the browser', async () => {
    const client = new DashboardClient(t.app);
    await client.signIn((await createAccount()).email);
    await client.get('/dashboard/api-keys');
    const cookie = client.jar.get('dashboard_session')!;
    const out = await client.post('/dashboard/logout');
    expect(out.statusCode).toBe(303);
    expect(out.headers.location).toBe('/dashboard/login?signed_out=1');
    const replay = await t.app.inject({ method: 'GET', url: '/dashboard/api-keys', headers: { cookie: `dashboard_session=${cookie}` } });
    expect(replay.statusCode).toBe(303);
  });

  it('unauthenticated pages redirect to sign-in; /dashboard redirects to the keys', async () => {
    expect((await t.app.inject({ method: 'GET', url: '/dashboard' })).headers.location).toBe('/dashboard/api-keys');
    const keys = await t.app.inject({ method: 'GET', url: '/dashboard/api-keys' });
    expect(keys.statusCode).toBe(303);
    expect(keys.headers.location).toBe('/dashboard/login');
    const missing = await t.app.inject({ method: 'GET', url: '/dashboard/nope' });
    expect(missing.statusCode).toBe(404);
    expect(missing.headers['content-type']).toBe('text/html; charset=utf-8');
  });

  it('serves only its own assets: names inherited from Object.prototype are 404 pages, not 500s', async () => {
    const css = await t.app.inject({ method: 'GET', url: '/dashboard/assets/dashboard.css' });
    expect(css.statusCode).toBe(200);
    expect(css.headers['content-type']).toBe('text/css; charset=utf-8');
    for (const name of ['constructor', '__proto__', 'toString', 'valueOf', 'hasOwnProperty', 'isPrototypeOf']) {
      const response = await t.app.inject({ method: 'GET', url: `/dashboard/assets/${name}` });
      expect(response.statusCode, name).toBe(404);
      expect(response.headers['content-type'], name).toBe('text/html; charset=utf-8');
    }
  });

  it('a session cookie never authenticates /graphql or /api/v1', async () => {
    const client = new DashboardClient(t.app);
    await client.signIn((await createAccount('ENTERPRISE')).email);
    const cookie = `dashboard_session=${client.jar.get('dashboard_session')}`;
    const graphql = await t.app.inject({ method: 'POST', url: '/graphql', headers: { cookie, 'content-type': 'application/json' }, payload: { query: '{ myApiKeys { id } }' } });
    expect(graphql.json().errors[0].extensions.code).toBe('session_required');
    const rest = await t.app.inject({ method: 'GET', url: '/api/v1/picks', headers: { cookie } });
    expect(rest.statusCode).toBe(401);
  });
});
