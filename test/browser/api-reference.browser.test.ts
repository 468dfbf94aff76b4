/**
 * The API reference page (/docs) in a real browser: Debian's Chromium (/usr/bin/chromium)
 * driven by playwright-core, headless, against the real app listening on 127.0.0.1. Scalar
 * renders the served OpenAPI document with nothing from outside the service: every request
 * the page makes is recorded and none may leave 127.0.0.1, and the page's strict
 * Content-Security-Policy must not block anything it needs (no violation reported). Reached
 * from the dashboard's footer link.
 *
 * Screenshots, desktop (1280 px) and phone (390 px), go to test-artifacts/api-reference/
 * (git-ignored). Run with `npm run test:browser`.
 */
import { mkdirSync, rmSync } from 'node:fs';
import path from 'node:path';
import type { AddressInfo } from 'node:net';
import type { BrowserContext, Page } from 'playwright-core';
import { DESKTOP, launchChromium, PHONE } from '../helpers/chromium.js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestApp, type TestApp } from '../helpers/app.js';

const ARTIFACTS = path.resolve('test-artifacts/api-reference');


let t: TestApp;
let base: string;
let context: BrowserContext;
let page: Page;
let userDataDir: string;
/** Requests for anything outside the app (refused, and a failure of the test). */
const outside: string[] = [];
/** Content-Security-Policy violations and console errors the page reports. */
const violations: string[] = [];
const consoleErrors: string[] = [];

beforeAll(async () => {
  rmSync(ARTIFACTS, { recursive: true, force: true });
  mkdirSync(ARTIFACTS, { recursive: true });
  t = await createTestApp();
  await t.app.listen({ port: 0, host: '127.0.0.1' });
  base = `http://127.0.0.1:${(t.app.server.address() as AddressInfo).port}`;
  ({ context, userDataDir } = await launchChromium('api-reference'));
  await context.route(/^(?!http:\/\/127\.0\.0\.1:)/, (route) => {
    // data: and blob: URLs never reach the network; everything else outside the app would.
    const url = route.request().url();
    if (!/^(data|blob):/.test(url)) outside.push(url);
    return route.abort();
  });
  await context.addInitScript(() => {
    document.addEventListener('securitypolicyviolation', (event) => {
      (window as unknown as { cspViolations: string[] }).cspViolations ??= [];
      (window as unknown as { cspViolations: string[] }).cspViolations.push(`${event.violatedDirective} ${event.blockedURI}`);
    });
  });
  page = context.pages()[0] ?? (await context.newPage());
  page.on('console', (message) => {
    if (message.type() === 'error') consoleErrors.push(message.text());
    if (/Content.Security.Policy/i.test(message.text())) violations.push(message.text());
  });
});

afterAll(async () => {
  await context?.close();
  await t?.close();
  if (userDataDir) rmSync(userDataDir, { recursive: true, force: true });
});

async function screenshots(name: string): Promise<void> {
  await page.setViewportSize(DESKTOP);
  await page.screenshot({ path: path.join(ARTIFACTS, `${name}-desktop.png`), fullPage: false });
  await page.setViewportSize(PHONE);
  await page.screenshot({ path: path.join(ARTIFACTS, `${name}-phone.png`), fullPage: false });
  await page.setViewportSize(DESKTOP);
}

describe('API reference in Chromium', () => {
  it('the dashboard links to it; it renders the served document with nothing from outside and no CSP violation', async () => {
    await page.goto(`${base}/dashboard/login`);
    const link = page.getByRole('link', { name: 'API reference' });
    await expect(link.getAttribute('href')).resolves.toBe('/docs/');
    const [response, bundle] = await Promise.all([
      page.waitForResponse((candidate) => candidate.url() === `${base}/docs/`),
      page.waitForResponse((candidate) => candidate.url() === `${base}/docs/js/scalar.js`),
      link.click(),
    ]);
    expect(response.status()).toBe(200);
    expect(response.headers()['content-security-policy']).toMatch(/default-src 'none'/);
    // Chromium asks for brotli and gets it: Scalar's 4.9 MB bundle arrives as about 1.2 MB, revalidated by its ETag.
    expect(bundle.headers()).toMatchObject({ 'content-encoding': 'br', vary: 'Accept-Encoding', 'cache-control': 'public, no-cache' });
    expect(Number(bundle.headers()['content-length'])).toBeLessThan(2_000_000);

    // Scalar has fetched the document and rendered it: the title, an operation, a webhook, a schema.
    await page.getByRole('heading', { name: 'Sports-Betting Picks Service API' }).first().waitFor({ timeout: 60_000 });
    await page.getByText('List published and settled picks').first().waitFor({ timeout: 30_000 });
    await expect(page.title()).resolves.toBe('Picks Service API reference');
    const text = await page.evaluate(() => document.body.innerText);
    expect(text).toContain('Server-Sent Events stream of new published picks');
    expect(text).toContain('Checks run in this order');
    await screenshots('01-reference');

    // The Webhooks group: the subscription operations and the deliveries the service sends.
    await page.getByText('Webhooks', { exact: true }).first().click();
    await page.getByText('Create a webhook subscription').first().waitFor({ timeout: 30_000 });
    await page.getByText('pick.published delivery').first().waitFor({ timeout: 30_000 });
    await screenshots('02-webhooks');

    // An operation's detail: the documented error codes.
    await page.getByText('Create a webhook subscription').first().click();
    await page.getByText('duplicate_url').first().waitFor({ timeout: 30_000 });
    await screenshots('03-create-webhook');

    expect(outside).toEqual([]);
    expect(violations).toEqual([]);
    // Scalar's schema library probes whether eval works (`try { Function('') }`) and does without it.
    const reported = await page.evaluate(() => (window as unknown as { cspViolations?: string[] }).cspViolations ?? []);
    expect(reported.filter((violation) => violation !== 'script-src eval')).toEqual([]);
    expect(consoleErrors.filter((message) => !/favicon/.test(message))).toEqual([]);
    // Nothing overflows sideways at phone width.
    await page.setViewportSize(PHONE);
    const overflow = await page.evaluate(() => document.documentElement.scrollWidth - document.documentElement.clientWidth);
    expect(overflow).toBeLessThanOrEqual(0);
  });
});
