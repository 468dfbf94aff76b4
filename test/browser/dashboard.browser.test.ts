/**
 * The customer dashboard in a real browser: Debian's Chromium (/usr/bin/chromium, installed by
 * .ci/run) driven by playwright-core, headless, against the real app listening on 127.0.0.1
 * (embedded PGlite in memory). Walks what a customer does, end to end:
 *
 *   admin creates the account (one mutation) -> sign-in (a wrong password first) -> create a
 *   key (shown once, copy button) -> call /api/v1/picks with it -> see usage and webhook
 *   deliveries -> manage a webhook endpoint (add it, the secret shown once, send a test,
 *   rotate the secret, delete it after a confirmation; a webhook form without a CSRF token is
 *   refused) -> revoke with confirmation -> the key gets 401 within 1 s -> a POST without
 *   a CSRF token is refused -> sign out.
 *
 * Screenshots of every page, desktop (1280 px) and phone (390 px), go to
 * test-artifacts/dashboard/ (git-ignored). Run with `npm run test:browser`.
 */
import { mkdirSync, rmSync } from 'node:fs';
import path from 'node:path';
import type { AddressInfo } from 'node:net';
import type { BrowserContext, Page } from 'playwright-core';
import { DESKTOP, launchChromium, PHONE } from '../helpers/chromium.js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ADMIN_TOKEN, createTestApp, type TestApp } from '../helpers/app.js';
import { CREATE_ACCOUNT, PASSWORD } from '../helpers/dashboard.js';
import { PUBLISH, pickInput } from '../helpers/fixtures.js';
import { startHttpsReceiver, type HttpsReceiver } from '../helpers/https-receiver.js';

const ARTIFACTS = path.resolve('test-artifacts/dashboard');
const EMAIL = 'dana@acme-analytics.example';


let t: TestApp;
let receiver: HttpsReceiver;
let base: string;
let context: BrowserContext;
let page: Page;
let userDataDir: string;

async function adminGraphql<T>(query: string, variables: Record<string, unknown> = {}, token = ADMIN_TOKEN): Promise<T> {
  const response = await fetch(`${base}/graphql`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', authorization: `Bearer ${token}` },
    body: JSON.stringify({ query, variables }),
  });
  const body = (await response.json()) as { data: T; errors?: unknown[] };
  if (body.errors) throw new Error(JSON.stringify(body.errors));
  return body.data;
}

async function picksStatus(key: string): Promise<number> {
  const response = await fetch(`${base}/api/v1/picks?limit=3`, { headers: { authorization: `Bearer ${key}` } });
  await response.arrayBuffer();
  return response.status;
}

/** Desktop and phone screenshots of the current page (full length). */
async function screenshots(name: string): Promise<void> {
  await page.setViewportSize(DESKTOP);
  await page.screenshot({ path: path.join(ARTIFACTS, `${name}-desktop.png`), fullPage: true });
  await page.setViewportSize(PHONE);
  await page.screenshot({ path: path.join(ARTIFACTS, `${name}-phone.png`), fullPage: true });
  // Nothing may overflow sideways at phone width.
  const overflow = await page.evaluate(() => document.documentElement.scrollWidth - document.documentElement.clientWidth);
  expect(overflow, `${name} scrolls sideways at 390 px`).toBeLessThanOrEqual(0);
  await page.setViewportSize(DESKTOP);
}

/** Every visible form control has an accessible label. */
async function expectLabelledControls(): Promise<void> {
  const unlabelled = await page.evaluate(() =>
    [...document.querySelectorAll<HTMLInputElement>('input:not([type=hidden]), select, textarea')]
      .filter((control) => control.labels?.length === 0 && !control.getAttribute('aria-label'))
      .map((control) => control.outerHTML),
  );
  expect(unlabelled).toEqual([]);
}

beforeAll(async () => {
  rmSync(ARTIFACTS, { recursive: true, force: true });
  mkdirSync(ARTIFACTS, { recursive: true });
  t = await createTestApp({ env: { WEBHOOK_HOST_OVERRIDES: 'hooks.test=127.0.0.1' } });
  await t.app.listen({ port: 0, host: '127.0.0.1' });
  base = `http://127.0.0.1:${(t.app.server.address() as AddressInfo).port}`;
  receiver = await startHttpsReceiver();
  ({ context, userDataDir } = await launchChromium('dashboard'));
  await context.grantPermissions(['clipboard-read', 'clipboard-write'], { origin: base });
  page = context.pages()[0] ?? (await context.newPage());
  // The pages must work with nothing from outside the app.
  await context.route(/^(?!http:\/\/127\.0\.0\.1:)/, (route) => route.abort());
});

afterAll(async () => {
  await context?.close();
  await receiver?.close();
  await t?.close();
  if (userDataDir) rmSync(userDataDir, { recursive: true, force: true });
});

describe('customer dashboard in Chromium', () => {
  let key = '';

  it('an admin creates the account with one mutation; the customer signs in (a wrong password first)', async () => {
    const created = await adminGraphql<{ createAccount: { id: string; email: string; tier: string } }>(CREATE_ACCOUNT, {
      input: { email: EMAIL, password: PASSWORD, tier: 'GROWTH' },
    });
    expect(created.createAccount).toMatchObject({ email: EMAIL, tier: 'GROWTH' });
    // Something to read: a few published picks.
    for (const [home, away] of [['Arsenal', 'Chelsea'], ['Real Madrid', 'Sevilla'], ['Celtics', 'Lakers']] as const) {
      await adminGraphql(PUBLISH, { input: pickInput({ homeTeam: home, awayTeam: away, selection: home, sport: home === 'Celtics' ? 'basketball' : 'soccer', league: home === 'Celtics' ? 'NBA' : 'Premier League' }) });
    }

    const landing = await page.goto(`${base}/dashboard`);
    expect(landing!.status()).toBe(200);
    expect(page.url()).toBe(`${base}/dashboard/login`);
    await expect(page.getByRole('heading', { name: 'Sign in' }).isVisible()).resolves.toBe(true);
    await expectLabelledControls();
    // Keyboard: the email field has focus; Tab walks password then the button; the skip link comes first in order.
    expect(await page.evaluate(() => document.activeElement?.id)).toBe('email');
    await page.keyboard.press('Tab');
    expect(await page.evaluate(() => document.activeElement?.id)).toBe('password');
    await page.keyboard.press('Tab');
    expect(await page.evaluate(() => document.activeElement?.textContent)).toBe('Sign in');
    expect(await page.evaluate(() => document.querySelector('a, button, input:not([type=hidden])')?.textContent)).toBe('Skip to content');
    await screenshots('01-sign-in');

    await page.getByLabel('Email').fill(EMAIL);
    await page.getByLabel('Password').fill('not my password at all');
    const [refused] = await Promise.all([page.waitForResponse((response) => response.url().endsWith('/dashboard/login') && response.request().method() === 'POST'), page.getByRole('button', { name: 'Sign in' }).click()]);
    expect(refused.status()).toBe(401);
    await expect(page.getByRole('alert').textContent()).resolves.toContain('Incorrect email or password.');
    expect(await page.getByLabel('Email').inputValue()).toBe(EMAIL);
    await screenshots('02-sign-in-wrong-password');

    await page.getByLabel('Password').fill(PASSWORD);
    await Promise.all([page.waitForURL(`${base}/dashboard/api-keys`), page.getByLabel('Password').press('Enter')]);
    await expect(page.getByRole('heading', { name: 'API keys', level: 1 }).isVisible()).resolves.toBe(true);
    await expect(page.getByText('No API keys yet.').isVisible()).resolves.toBe(true);
    const cookies = await context.cookies(`${base}/dashboard/api-keys`);
    expect(cookies.find((cookie) => cookie.name === 'dashboard_session')).toMatchObject({ httpOnly: true, sameSite: 'Strict', path: '/dashboard' });
    await screenshots('03-api-keys-empty');
  });

  it('creates a key, shown once with a copy button, that works on /api/v1/picks', async () => {
    await page.getByLabel('Label (optional)').fill('Production server');
    await Promise.all([page.waitForLoadState('load'), page.getByRole('button', { name: 'Create key' }).click()]);
    await page.waitForSelector('#new-key-value');
    key = await page.locator('#new-key-value').inputValue();
    expect(key).toMatch(/^service_[0-9a-f]{64}$/);
    await expect(page.getByText('It will not be shown again').isVisible()).resolves.toBe(true);
    const copy = page.getByRole('button', { name: 'Copy' });
    await expect(copy.isVisible()).resolves.toBe(true);
    await copy.click();
    await page.getByRole('button', { name: 'Copied' }).waitFor();
    expect(await page.evaluate(() => navigator.clipboard.readText())).toBe(key);
    await expectLabelledControls();
    await screenshots('04-key-created');

    for (let i = 0; i < 7; i += 1) expect(await picksStatus(key)).toBe(200);
    // A second key, used by nobody yet, and a webhook endpoint on the first one.
    await page.goto(`${base}/dashboard/api-keys`);
    expect(await page.content()).not.toContain(key);
    await page.getByLabel('Label (optional)').fill('Staging');
    await Promise.all([page.waitForLoadState('load'), page.getByRole('button', { name: 'Create key' }).click()]);
    await page.waitForSelector('#new-key-value');
  });

  it('shows usage per key and the webhook subscription with its latest deliveries', async () => {
    const subscription = await adminGraphql<{ createWebhookSubscription: { subscription: { id: string } } }>(
      'mutation($input: CreateWebhookSubscriptionInput!) { createWebhookSubscription(input: $input) { subscription { id } } }',
      { input: { url: receiver.url('hooks.test', '/picks-webhook'), events: ['PICK_PUBLISHED', 'PICK_SETTLED'] } },
      key,
    );
    expect(subscription.createWebhookSubscription.subscription.id).toBeTruthy();
    await adminGraphql(PUBLISH, { input: pickInput({ homeTeam: 'Liverpool', awayTeam: 'Everton', selection: 'Liverpool' }) });
    await receiver.waitForRequests(1, 10_000);
    // The attempt is logged right after the receiver answers.
    const deadline = Date.now() + 5_000;
    for (;;) {
      await page.goto(`${base}/dashboard/api-keys`);
      if ((await page.locator('.delivery-ok').count()) > 0 || Date.now() > deadline) break;
      await new Promise((resolve) => setTimeout(resolve, 200));
    }
    const production = page.locator('tr', { hasText: 'Production server' });
    // 7 calls to /api/v1/picks and the GraphQL call that created the subscription.
    await expect(production.locator('td[data-label="This month"] .usage-used').textContent()).resolves.toBe('8');
    await expect(production.locator('td[data-label="Last hour"] .usage-used').textContent()).resolves.toBe('8');
    await expect(production.locator('td[data-label="Last hour"] .usage-limit').textContent()).resolves.toContain('1,000');
    const webhooks = page.locator('section', { has: page.getByRole('heading', { name: 'Webhooks' }) });
    await expect(webhooks.getByText(receiver.url('hooks.test', '/picks-webhook')).isVisible()).resolves.toBe(true);
    await expect(webhooks.locator('.delivery-ok').first().textContent()).resolves.toContain('Delivered');
    await screenshots('05-api-keys-usage-webhooks');
  });

  it('manages a webhook endpoint: add (secret shown once, copied), send a test, rotate the secret, delete after a confirmation', async () => {
    const url = receiver.url('hooks.test', '/managed');
    await page.goto(`${base}/dashboard/api-keys`);
    await expectLabelledControls();
    await page.getByLabel('Endpoint URL').fill(url);
    await page.getByLabel('API key').selectOption({ label: (await page.locator('#webhook-key option', { hasText: 'Production server' }).textContent())! });
    await page.getByLabel('pick.settled').check();
    const [created] = await Promise.all([
      page.waitForResponse((response) => response.url() === `${base}/dashboard/webhooks` && response.request().method() === 'POST'),
      page.getByRole('button', { name: 'Add endpoint' }).click(),
    ]);
    expect(created.status()).toBe(201);
    await page.waitForSelector('#webhook-secret-value');
    const secret = await page.locator('#webhook-secret-value').inputValue();
    expect(secret).toMatch(/^whsec_/);
    await page.getByRole('button', { name: 'Copy' }).click();
    await page.getByRole('button', { name: 'Copied' }).waitFor();
    expect(await page.evaluate(() => navigator.clipboard.readText())).toBe(secret);
    await screenshots('05a-webhook-added');

    const before = receiver.requests.length;
    await Promise.all([page.waitForURL(/\/test$/), page.getByRole('button', { name: 'Send a test delivery' }).click()]);
    await expect(page.getByRole('status').first().textContent()).resolves.toContain('Test delivered.');
    const sample = receiver.requests.slice(before).find((request) => request.path === '/managed')!;
    expect(sample.headers['x-service-test']).toBe('true');
    expect(JSON.parse(sample.body.toString()).test).toBe(true);
    await screenshots('05b-webhook-test');

    await page.goto(`${base}/dashboard/api-keys`);
    expect(await page.content()).not.toContain(secret);
    await Promise.all([page.waitForURL(/\/rotate-secret$/), page.getByRole('button', { name: `Rotate secret: ${url}` }).click()]);
    const rotated = await page.locator('#webhook-secret-value').inputValue();
    expect(rotated).toMatch(/^whsec_/);
    expect(rotated).not.toBe(secret);
    await expect(page.getByText('For the next 24 hours the previous secret still signs too').isVisible()).resolves.toBe(true);
    await screenshots('05c-webhook-rotated');

    // A webhook form without its CSRF token is refused, and nothing is sent.
    const sent = receiver.requests.length;
    await page.goto(`${base}/dashboard/api-keys`);
    const subscriptionId = (await page.locator('li.subscription', { hasText: url }).getAttribute('id'))!.replace('webhook-', '');
    const [refused] = await Promise.all([
      page.waitForResponse((candidate) => candidate.url().endsWith(`/dashboard/webhooks/${subscriptionId}/test`)),
      page.evaluate((id) => {
        const form = document.createElement('form');
        form.method = 'post';
        form.action = `/dashboard/webhooks/${id}/test`;
        document.body.append(form);
        form.submit();
      }, subscriptionId),
    ]);
    expect(refused.status()).toBe(403);
    expect(refused.headers()['x-error-code']).toBe('invalid_csrf_token');
    await page.getByRole('heading', { name: 'This form has expired' }).waitFor();
    expect(receiver.requests.length).toBe(sent);

    await page.goto(`${base}/dashboard/api-keys`);
    await Promise.all([page.waitForURL(/\/delete$/), page.getByRole('link', { name: `Delete: ${url}` }).click()]);
    await expect(page.getByRole('heading', { name: 'Delete this webhook endpoint?' }).isVisible()).resolves.toBe(true);
    await screenshots('05d-webhook-delete-confirm');
    await Promise.all([page.waitForURL(/webhook=deleted/), page.getByRole('button', { name: 'Delete endpoint' }).click()]);
    await expect(page.getByText('Webhook endpoint deleted.').isVisible()).resolves.toBe(true);
    expect(await page.locator('li.subscription', { hasText: url }).count()).toBe(0);
  });

  it('revokes the key after a confirmation step; the key gets 401 within 1 s', async () => {
    const production = page.locator('tr', { hasText: 'Production server' });
    await Promise.all([page.waitForURL(/\/revoke$/), production.getByRole('link', { name: /Revoke/ }).click()]);
    await expect(page.getByRole('heading', { name: 'Revoke this API key?' }).isVisible()).resolves.toBe(true);
    await screenshots('06-revoke-confirm');
    // Cancel keeps it.
    await Promise.all([page.waitForURL(`${base}/dashboard/api-keys`), page.getByRole('link', { name: 'Cancel' }).click()]);
    expect(await picksStatus(key)).toBe(200);
    await Promise.all([page.waitForURL(/\/revoke$/), page.locator('tr', { hasText: 'Production server' }).getByRole('link', { name: /Revoke/ }).click()]);

    await Promise.all([page.waitForURL(/\/dashboard\/api-keys\?revoked=/), page.getByRole('button', { name: 'Revoke key' }).click()]);
    const revokedAt = Date.now();
    let status = await picksStatus(key);
    while (status !== 401 && Date.now() - revokedAt < 1_000) status = await picksStatus(key);
    expect(status).toBe(401);
    expect(Date.now() - revokedAt).toBeLessThan(1_000);
    await expect(page.getByRole('status').first().textContent()).resolves.toContain('Key revoked.');
    await expect(page.locator('tr', { hasText: 'Production server' }).getByText('Revoked').isVisible()).resolves.toBe(true);
    // Its webhook endpoint receives nothing more, and says so.
    await expect(page.getByText('Stopped: key revoked').isVisible()).resolves.toBe(true);
    await screenshots('07-api-keys-after-revoke');
  });

  it('refuses a state change without a CSRF token (403 page)', async () => {
    // A form like the page's, minus the token, posted by the browser with the session cookie.
    const [response] = await Promise.all([
      page.waitForResponse((candidate) => candidate.url() === `${base}/dashboard/api-keys` && candidate.request().method() === 'POST'),
      page.evaluate(() => {
        const form = document.createElement('form');
        form.method = 'post';
        form.action = '/dashboard/api-keys';
        const label = document.createElement('input');
        label.name = 'label';
        label.value = 'no token';
        form.append(label);
        document.body.append(form);
        form.submit();
      }),
    ]);
    expect(response.status()).toBe(403);
    expect(response.headers()['x-error-code']).toBe('invalid_csrf_token');
    await page.getByRole('heading', { name: 'This form has expired' }).waitFor();
    await screenshots('08-csrf-refused');
    await page.goto(`${base}/dashboard/api-keys`);
    expect(await page.locator('tr', { hasText: 'no token' }).count()).toBe(0);
  });

  it('signs out', async () => {
    await Promise.all([page.waitForURL(`${base}/dashboard/login?signed_out=1`), page.getByRole('button', { name: 'Sign out' }).click()]);
    await expect(page.getByText('You have been signed out.').isVisible()).resolves.toBe(true);
    const again = await page.goto(`${base}/dashboard/api-keys`);
    expect(again!.url()).toBe(`${base}/dashboard/login`);
    await screenshots('09-signed-out');
  });
});
