/**
 * The landing page (/) and GraphiQL (/graphql) in a real browser: Debian's Chromium
 * (/usr/bin/chromium) driven by playwright-core, headless, against the real app listening on
 * 127.0.0.1, offline: every request is recorded and any for another host is refused and fails
 * the test. The landing page renders under its Content-Security-Policy, and each of its links
 * (the API reference, the dashboard, the record, the public endpoint, GraphiQL) leads to a page
 * that renders. GraphiQL starts from the app's own assets (no CDN), a query typed into its editor
 * runs and its result shows the data, the admin token typed into its Headers editor is sent, and
 * its dialogs open; no Content-Security-Policy violation, console error or page error anywhere.
 *
 * Screenshots, desktop (1280 px) and phone (390 px), go to test-artifacts/home/ (git-ignored).
 * Run with `npm run test:browser -- test/browser/home.browser.test.ts`.
 */
import { mkdirSync, rmSync } from 'node:fs';
import path from 'node:path';
import type { AddressInfo } from 'node:net';
import type { BrowserContext, Page } from 'playwright-core';
import { DESKTOP, launchChromium, PHONE } from '../helpers/chromium.js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ADMIN_TOKEN, createTestApp, type TestApp } from '../helpers/app.js';
import { pickInput, PUBLISH } from '../helpers/fixtures.js';

const ARTIFACTS = path.resolve('test-artifacts/home');


let t: TestApp;
let base: string;
let context: BrowserContext;
let page: Page;
let userDataDir: string;
/** Requests for anything outside the app (refused, and a failure of the test). */
const outside: string[] = [];
/** Content-Security-Policy violations (reported by every document), console errors and uncaught errors. */
const violations: string[] = [];
const consoleErrors: string[] = [];
const pageErrors: string[] = [];
const published: string[] = [];

/** Desktop and phone screenshots (of the whole page unless told); nothing may overflow sideways on the phone. */
async function screenshots(name: string, { fullPage = true, checkOverflow = true } = {}): Promise<void> {
  await page.setViewportSize(DESKTOP);
  await page.screenshot({ path: path.join(ARTIFACTS, `${name}-desktop.png`), fullPage });
  await page.setViewportSize(PHONE);
  await page.screenshot({ path: path.join(ARTIFACTS, `${name}-phone.png`), fullPage });
  if (checkOverflow) {
    const overflow = await page.evaluate(() => document.documentElement.scrollWidth - document.documentElement.clientWidth);
    expect(overflow, `${name} scrolls sideways at 390 px`).toBeLessThanOrEqual(0);
  }
  await page.setViewportSize(DESKTOP);
}

/** Nothing from another host, no policy violation, no error so far. */
function expectClean(): void {
  expect(outside).toEqual([]);
  expect(violations).toEqual([]);
  expect(consoleErrors).toEqual([]);
  expect(pageErrors).toEqual([]);
}

/** The text of one of GraphiQL's Monaco editors, as shown (Monaco renders spaces as no-break spaces). */
function editorText(selector: string): Promise<string> {
  return page.locator(selector).first().evaluate((element) => (element.querySelector('.view-lines') as HTMLElement | null)?.innerText.replace(/\u00a0/g, ' ') ?? '');
}

/** Replaces the content of a Monaco editor by typing, as a person would. */
async function typeInto(selector: string, text: string): Promise<void> {
  await page.locator(`${selector} .monaco-editor .view-lines:visible`).first().click();
  await page.keyboard.press('Control+A');
  await page.keyboard.press('Delete');
  await page.keyboard.type(text, { delay: 15 });
  // Close the completion list, if any, so nothing else is inserted.
  await page.keyboard.press('Escape');
}

/**
 * Runs the operation in the editor: the answer GraphiQL received (and the request it sent), once
 * its result pane shows `shown`.
 */
async function run<T>(shown: string): Promise<{ body: T; headers: Record<string, string> }> {
  const [response] = await Promise.all([
    page.waitForResponse((candidate) => candidate.url() === `${base}/graphql` && candidate.request().method() === 'POST' && !/IntrospectionQuery/.test(candidate.request().postData() ?? '')),
    page.getByRole('button', { name: /^Execute query/ }).click(),
  ]);
  await expect.poll(() => editorText('.result-window'), { timeout: 30_000 }).toContain(shown);
  return { body: (await response.json()) as T, headers: response.request().headers() };
}

beforeAll(async () => {
  rmSync(ARTIFACTS, { recursive: true, force: true });
  mkdirSync(ARTIFACTS, { recursive: true });
  t = await createTestApp();
  // Today's picks for the public endpoint and GraphiQL to show.
  for (const homeTeam of ['Offline United', 'Loopback Rovers']) {
    const result = await t.graphql<{ publishPick: { id: string } }>(PUBLISH, {
      input: pickInput({ homeTeam, selection: homeTeam, kickoffAt: new Date(Date.now() + 2 * 86_400_000).toISOString() }),
    });
    expect(result.errors).toBeUndefined();
    published.push(result.data!.publishPick.id);
  }
  await t.app.listen({ port: 0, host: '127.0.0.1' });
  base = `http://127.0.0.1:${(t.app.server.address() as AddressInfo).port}`;
  ({ context, userDataDir } = await launchChromium('home'));
  // Block and record anything not from the app: the pages must need nothing from another host.
  await context.route(/^(?!http:\/\/127\.0\.0\.1:)/, (route) => {
    const url = route.request().url();
    if (!/^(data|blob):/.test(url)) outside.push(url);
    return route.abort();
  });
  // Every document reports its violations here, whichever page it is.
  await context.exposeFunction('reportCspViolation', (violation: string) => void violations.push(violation));
  await context.addInitScript(() => {
    document.addEventListener('securitypolicyviolation', (event) => {
      void (window as unknown as { reportCspViolation(violation: string): Promise<void> }).reportCspViolation(`${location.pathname}: ${event.violatedDirective} ${event.blockedURI}`);
    });
  });
  page = context.pages()[0] ?? (await context.newPage());
  page.on('console', (message) => {
    if (message.type() === 'error') consoleErrors.push(message.text());
    if (/Content.Security.Policy/i.test(message.text())) violations.push(message.text());
  });
  page.on('pageerror', (error) => pageErrors.push(error.message));
}, 180_000);

afterAll(async () => {
  await context?.close();
  await t?.close();
  if (userDataDir) rmSync(userDataDir, { recursive: true, force: true });
});

describe('the landing page in Chromium', () => {
  it('says what the service is, under its Content-Security-Policy, on desktop and phone', async () => {
    const response = await page.goto(`${base}/`);
    expect(response!.status()).toBe(200);
    expect(response!.headers()['content-security-policy']).toMatch(/^default-src 'none'; style-src 'sha256-/);
    await expect(page.title()).resolves.toBe('Picks API');
    await page.getByRole('heading', { level: 1 }).waitFor();
    const text = await page.evaluate(() => document.body.innerText);
    expect(text).toMatch(/sharp bookmakers' prices \(devigging\)/);
    expect(text).toMatch(/public ledger/);
    await expect(page.locator('.destination').count()).resolves.toBe(5);
    // The inline stylesheet applied (allowed by its hash): the cards have the page's look.
    const card = await page.locator('.destination').first().evaluate((element) => ({ background: getComputedStyle(element).backgroundColor, radius: getComputedStyle(element).borderTopLeftRadius }));
    expect(card).toEqual({ background: 'rgb(255, 255, 255)', radius: '12px' });
    await expect(page.evaluate(() => getComputedStyle(document.body).backgroundColor)).resolves.toBe('rgb(244, 246, 251)');
    await expect(page.evaluate(() => document.scripts.length)).resolves.toBe(0);
    await screenshots('01-home');
    expectClean();
  });

  it('leads to the API reference, the dashboard, the record and the public endpoint, each rendering', async () => {
    const follow = async (name: string, url: string | RegExp) => {
      await page.goto(`${base}/`);
      await Promise.all([page.waitForURL(url), page.getByRole('link', { name, exact: true }).click()]);
    };

    await follow('API reference', `${base}/docs/`);
    await page.getByRole('heading', { name: 'Sports-Betting Picks Service API' }).first().waitFor({ timeout: 60_000 });
    await screenshots('02-docs', { fullPage: false, checkOverflow: false });

    // Signed out, the dashboard's front door is its sign-in page.
    await follow('Dashboard', `${base}/dashboard/login`);
    await page.getByRole('heading', { name: 'Sign in', level: 1 }).waitFor();

    await follow('Track record', `${base}/record`);
    await page.getByRole('heading', { name: 'Track record', level: 1 }).waitFor();
    await page.locator('svg#chart-pnl').waitFor();

    await follow("Today's picks", `${base}/api/public/picks/today`);
    const body = JSON.parse(await page.evaluate(() => document.body.innerText)) as { count: number; picks: { id: string }[] };
    expect(body.count).toBe(2);
    expect(body.picks.map((pick) => pick.id).sort()).toEqual([...published].sort());

    // The docs' one fixed probe for eval (see test/browser/api-reference.browser.test.ts) is theirs, not ours.
    violations.splice(0, violations.length, ...violations.filter((violation) => !/^\/docs\/: script-src eval|^\/docs\/: eval/.test(violation)));
    expectClean();
  });
});

describe('GraphiQL in Chromium, offline', () => {
  it('starts from the app\'s own assets, linked from the landing page', async () => {
    await page.goto(`${base}/`);
    const [response, bundle] = await Promise.all([
      page.waitForResponse((candidate) => candidate.url() === `${base}/graphql`),
      page.waitForResponse((candidate) => /\/graphql\/assets\/graphiql\.[0-9a-f]{16}\.js$/.test(candidate.url())),
      page.getByRole('link', { name: 'GraphiQL', exact: true }).click(),
    ]);
    expect(response.status()).toBe(200);
    expect(response.headers()['content-security-policy']).toMatch(/^default-src 'none'; script-src 'self';/);
    // GraphiQL's 5.3 MB bundle, under its hashed name: brotli (about 1.3 MB) and kept a year.
    expect(bundle.headers()).toMatchObject({ 'content-encoding': 'br', vary: 'Accept-Encoding', 'cache-control': 'public, max-age=31536000, immutable' });
    expect(Number(bundle.headers()['content-length'])).toBeLessThan(2_000_000);
    await page.getByRole('button', { name: /^Execute query/ }).waitFor({ timeout: 60_000 });
    await expect(page.title()).resolves.toBe('Picks Service GraphiQL');
    await expect(page.locator('#root').textContent()).resolves.not.toMatch(/^Loading/);
    // GraphiQL fetched the schema (introspection) from /graphql: the query editor knows the fields.
    await expect.poll(() => editorText('.graphiql-query-editor'), { timeout: 30_000 }).toContain('todayPicks');
    await screenshots('03-graphiql', { fullPage: false, checkOverflow: false });
    expectClean();
  });

  it('runs a query typed into the editor and shows the data', async () => {
    await typeInto('.graphiql-query-editor', '{ todayPicks { id homeTeam } }');
    await expect(editorText('.graphiql-query-editor')).resolves.toBe('{ todayPicks { id homeTeam } }');
    const { body } = await run<{ data: { todayPicks: { id: string; homeTeam: string }[] } }>('Loopback Rovers');
    expect(body.data.todayPicks.map((pick) => pick.id).sort()).toEqual([...published].sort());
    const shown = await editorText('.result-window');
    for (const pick of body.data.todayPicks) {
      expect(shown).toContain(`"id": "${pick.id}"`);
      expect(shown).toContain(`"homeTeam": "${pick.homeTeam}"`);
    }
    await screenshots('04-graphiql-result', { fullPage: false, checkOverflow: false });
    expectClean();
  });

  it('sends the admin token typed into the Headers editor', async () => {
    // Without it, an operator's field is refused.
    await typeInto('.graphiql-query-editor', '{ reviewQueue { count } }');
    const refused = await run<{ errors: { extensions: { code: string } }[] }>('"errors"');
    expect(refused.headers.authorization).toBeUndefined();
    expect(await editorText('.result-window')).toContain(`"code": "${refused.body.errors[0]!.extensions.code}"`);

    await page.getByRole('button', { name: 'Headers', exact: true }).click();
    await typeInto('.graphiql-editor-tool', `{"Authorization": "Bearer ${ADMIN_TOKEN}"}`);
    const allowed = await run<{ data: { reviewQueue: { count: number } } }>('"count": 0');
    expect(allowed.headers.authorization).toBe(`Bearer ${ADMIN_TOKEN}`);
    expect(allowed.body).toEqual({ data: { reviewQueue: { count: 0 } } });
    await screenshots('05-graphiql-admin', { fullPage: false, checkOverflow: false });
    expectClean();
  });

  it('opens its dialogs and the documentation under the policy', async () => {
    await page.getByRole('button', { name: 'Open settings dialog' }).click();
    await page.getByRole('dialog').waitFor();
    await screenshots('06-graphiql-settings', { fullPage: false, checkOverflow: false });
    await page.keyboard.press('Escape');
    await page.getByRole('dialog').waitFor({ state: 'detached' });
    await page.getByRole('button', { name: 'Show Documentation Explorer' }).click();
    await page.getByText('Root Types').first().waitFor({ timeout: 30_000 });
    expectClean();
  });
});
