/**
 * The public record page (/record) in a real browser: Debian's Chromium (/usr/bin/chromium)
 * driven by playwright-core, headless, against the real app listening on 127.0.0.1 with the
 * demo's data (the seed `npm start` runs when DEMO_SEED is on: 90 days of settled picks in every
 * sport, today's picks), one of today's picks withdrawn before its kickoff, and the clock moved
 * past that kickoff. Every request the page makes is recorded and none may leave 127.0.0.1; the
 * charts must render (sized, with their points and bars), the stylesheet must apply under the
 * page's Content-Security-Policy (no violation reported), a filter must re-render the page, and
 * /docs and the dashboard must link to it.
 *
 * Full-page screenshots, desktop (1280 px) and phone (390 px), go to test-artifacts/record/
 * (git-ignored). Run with `npm run test:browser -- test/browser/record.browser.test.ts`.
 */
import { mkdirSync, rmSync } from 'node:fs';
import path from 'node:path';
import type { AddressInfo } from 'node:net';
import type { BrowserContext, Page } from 'playwright-core';
import { DESKTOP, launchChromium, PHONE } from '../helpers/chromium.js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ManualClock } from '../../src/domain/clock.js';
import { seedDemo } from '../../src/seed/demo.js';
import { createTestApp, type TestApp } from '../helpers/app.js';

const ARTIFACTS = path.resolve('test-artifacts/record');


let t: TestApp;
let base: string;
let context: BrowserContext;
let page: Page;
let userDataDir: string;
let withdrawnId = '';
/** Requests for anything outside the app (refused, and a failure of the test). */
const outside: string[] = [];
const violations: string[] = [];
const consoleErrors: string[] = [];

/** Desktop and phone screenshots (of the whole page unless told); nothing may overflow sideways on the phone. */
async function screenshots(name: string, { fullPage = true } = {}): Promise<void> {
  await page.setViewportSize(DESKTOP);
  await page.screenshot({ path: path.join(ARTIFACTS, `${name}-desktop.png`), fullPage });
  await page.setViewportSize(PHONE);
  await page.screenshot({ path: path.join(ARTIFACTS, `${name}-phone.png`), fullPage });
  const overflow = await page.evaluate(() => document.documentElement.scrollWidth - document.documentElement.clientWidth);
  expect(overflow, `${name} scrolls sideways at 390 px`).toBeLessThanOrEqual(0);
  await page.setViewportSize(DESKTOP);
}

interface ChartFacts {
  width: number;
  height: number;
  dataPoints: string | null;
  linePoints: number;
  bars: number[];
  barHeights: number[];
  calibrationPoints: number;
  diagonalLength: number;
  lineStroke: string;
  positiveBarFill: string;
}

/** What the browser made of the three charts: rendered sizes, counts, and the stylesheet's colours. */
function chartFacts(): Promise<ChartFacts> {
  return page.evaluate(() => {
    const pnl = document.querySelector<SVGSVGElement>('svg#chart-pnl')!;
    const line = document.querySelector<SVGPolylineElement>('#chart-pnl-line')!;
    const bars = [...document.querySelectorAll<SVGRectElement>('svg#chart-clv rect.bar')];
    const diagonal = document.querySelector<SVGLineElement>('#chart-calibration-diagonal')!;
    const positive = document.querySelector<SVGRectElement>('svg#chart-clv rect.bar-positive')!;
    const box = pnl.getBoundingClientRect();
    const diagonalBox = diagonal.getBoundingClientRect();
    return {
      width: box.width,
      height: box.height,
      dataPoints: pnl.getAttribute('data-points'),
      linePoints: line.points.numberOfItems,
      bars: bars.map((bar) => Number(bar.dataset.picks)),
      barHeights: bars.map((bar) => bar.getBoundingClientRect().height),
      calibrationPoints: document.querySelectorAll('svg#chart-calibration circle.calibration-point').length,
      diagonalLength: Math.hypot(diagonalBox.width, diagonalBox.height),
      lineStroke: getComputedStyle(line).stroke,
      positiveBarFill: getComputedStyle(positive).fill,
    };
  });
}

beforeAll(async () => {
  rmSync(ARTIFACTS, { recursive: true, force: true });
  mkdirSync(ARTIFACTS, { recursive: true });
  // The demo as `npm start` seeds it, without its simulated feed (which would publish as the test runs).
  const clock = new ManualClock(new Date());
  t = await createTestApp({ clock, env: { DEMO_SEED: 'true', DEMO_FEED: 'false' } });
  expect(t.config.demoSeed).toBe(true);
  expect(await seedDemo(t.runtime.services, t.runtime.orm, t.runtime.clock)).not.toBeNull();
  // One of today's picks withdrawn before its kickoff, then the kickoff passes: it is revealed, marked.
  const [first] = (await t.runtime.services.picks.today({ limit: 50 })).sort((a, b) => a.kickoffAt.getTime() - b.kickoffAt.getTime());
  withdrawnId = first!.id;
  await t.runtime.services.picks.hold(withdrawnId);
  clock.set(new Date(first!.kickoffAt.getTime() + 60_000));

  await t.app.listen({ port: 0, host: '127.0.0.1' });
  base = `http://127.0.0.1:${(t.app.server.address() as AddressInfo).port}`;
  ({ context, userDataDir } = await launchChromium('record'));
  // Block and record anything not from the app: the page must need nothing from another host.
  await context.route(/^(?!http:\/\/127\.0\.0\.1:)/, (route) => {
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
}, 180_000);

afterAll(async () => {
  await context?.close();
  await t?.close();
  if (userDataDir) rmSync(userDataDir, { recursive: true, force: true });
});

describe('the public record page in Chromium', () => {
  it('renders the demo record: figures, significance, the three charts, the tables, the revealed picks and how to verify', async () => {
    const response = await page.goto(`${base}/record`);
    expect(response!.status()).toBe(200);
    expect(response!.headers()['content-security-policy']).toMatch(/^default-src 'none'/);
    await expect(page.title()).resolves.toBe('Track record · Picks API');
    await page.getByRole('heading', { name: 'Track record', level: 1 }).waitFor();

    // The significance in words, and the figures (the demo settles dozens of picks a month).
    await expect(page.locator('#significance-sentence').textContent()).resolves.toMatch(/^If the picks had no edge, a record at least this good would happen (about \d+ times? in [\d,]+|fewer than 1 time in 1,000|more than 99 times in 100)\.$/);
    const settled = Number(await page.locator('[data-figure="total_settled"]').getAttribute('data-value'));
    expect(settled).toBeGreaterThan(20);
    await expect(page.locator('.figure').count()).resolves.toBe(14);

    // The charts rendered, sized, with a point per day, twelve bars and the calibration's points.
    const charts = await chartFacts();
    expect(charts.width).toBeGreaterThan(600);
    expect(charts.height).toBeGreaterThan(150);
    expect(charts.dataPoints).toBe('31');
    expect(charts.linePoints).toBe(31);
    expect(charts.bars).toHaveLength(12);
    expect(charts.bars.reduce((sum, picks) => sum + picks, 0)).toBeGreaterThan(20);
    // A bar is as tall as its count: the fullest is the tallest, an empty one is flat.
    const fullest = charts.bars.indexOf(Math.max(...charts.bars));
    expect(charts.barHeights[fullest]).toBe(Math.max(...charts.barHeights));
    expect(charts.barHeights[fullest]).toBeGreaterThan(50);
    charts.bars.forEach((picks, bin) => expect(charts.barHeights[bin]! > 0, `bar ${bin}`).toBe(picks > 0));
    expect(charts.calibrationPoints).toBeGreaterThanOrEqual(3);
    await expect(page.locator('svg#chart-calibration').getAttribute('data-rows')).resolves.toBe('10');
    await expect(page.locator('svg#chart-calibration').getAttribute('data-points')).resolves.toBe(String(charts.calibrationPoints));
    expect(charts.diagonalLength).toBeGreaterThan(200);
    // The stylesheet applied: the line and bars have the page's colours, not the browser's defaults.
    expect(charts.lineStroke).toBe('rgb(67, 56, 202)');
    expect(charts.positiveBarFill).toBe('rgb(15, 122, 69)');
    for (const id of ['chart-pnl', 'chart-clv', 'chart-calibration']) {
      await expect(page.getByRole('img', { name: await page.locator(`#${id}-title`).textContent() ?? '' }).count(), id).resolves.toBe(1);
    }

    // Per sport and per market.
    expect(await page.locator('#per-sport tbody tr').count()).toBeGreaterThanOrEqual(5);
    expect(await page.locator('#per-market tbody tr').count()).toBeGreaterThanOrEqual(1);

    // The revealed picks: newest kickoff first, the withdrawn one first (it kicked off a minute ago) and marked.
    const rows = page.locator('#revealed-picks tbody tr');
    const count = await rows.count();
    expect(count).toBeGreaterThan(20);
    expect(count).toBeLessThanOrEqual(50);
    await expect(rows.first().getAttribute('data-pick-id')).resolves.toBe(withdrawnId);
    await expect(rows.first().getAttribute('data-withdrawn')).resolves.toBe('true');
    await expect(rows.first().locator('.badge').textContent()).resolves.toBe('Withdrawn');
    await expect(page.locator('#revealed-picks tr[data-withdrawn="true"]').count()).resolves.toBe(1);
    const kickoffs = await page.locator('#revealed-picks time').evaluateAll((times) => times.map((time) => time.getAttribute('datetime')!));
    expect(kickoffs).toEqual([...kickoffs].sort().reverse());
    // Each row carries its ledger entries; every link leads to the public ledger.
    await expect(rows.first().locator('.entries li').count()).resolves.toBe(2);
    const hrefs = await page.locator('a').evaluateAll((links) => links.map((link) => link.getAttribute('href') ?? ''));
    expect(hrefs.filter((href) => !href.startsWith('/') && !href.startsWith('#'))).toEqual([]);

    // How to verify.
    await expect(page.locator('#verify').textContent()).resolves.toContain('npm run verify-ledger -- <base_url>');
    await expect(page.locator('#ledger-head-hash').textContent()).resolves.toMatch(/^[0-9a-f]{64}$/);
    await screenshots('01-record');

    expect(outside).toEqual([]);
    expect(violations).toEqual([]);
    await expect(page.evaluate(() => (window as unknown as { cspViolations?: string[] }).cspViolations ?? [])).resolves.toEqual([]);
    expect(consoleErrors).toEqual([]);
  });

  it('re-renders with a filter chosen in the form', async () => {
    await page.getByLabel('Sport', { exact: true }).selectOption('soccer');
    await page.getByLabel('Window', { exact: true }).selectOption('90');
    await Promise.all([page.waitForURL(/\/record\?sport=soccer&market=&days_back=90$/), page.getByRole('button', { name: 'Apply' }).click()]);
    await expect(page.locator('#scope').textContent()).resolves.toBe('Soccer · all markets · settled in the last 90 days');
    await expect(page.getByLabel('Sport', { exact: true }).inputValue()).resolves.toBe('soccer');
    const charts = await chartFacts();
    expect(charts.linePoints).toBe(91);
    expect(charts.width).toBeGreaterThan(600);
    await expect(page.locator('#per-sport tbody tr').count()).resolves.toBe(1);
    const sports = await page.locator('#revealed-picks .sub').evaluateAll((subs) => subs.map((sub) => sub.textContent ?? '').filter((text) => text.includes(' · ')));
    expect(sports.length).toBeGreaterThan(0);
    for (const sport of sports) expect(sport).toMatch(/· Soccer$/);
    await screenshots('02-soccer-90-days');

    // A bad value typed into the address: the page says what is wrong, with the API's message.
    const refused = await page.goto(`${base}/record?days_back=400`);
    expect(refused!.status()).toBe(400);
    await expect(page.locator('#record-error').textContent()).resolves.toContain('days_back must be an integer between 1 and 365');
    await screenshots('03-bad-filter');
    expect(outside).toEqual([]);
  });

  it('is linked from /docs and from the dashboard', async () => {
    await page.goto(`${base}/docs/`);
    const fromDocs = page.getByRole('link', { name: 'track record' });
    await expect(fromDocs.getAttribute('href')).resolves.toBe('/record');
    await page.getByRole('heading', { name: 'Sports-Betting Picks Service API' }).first().waitFor({ timeout: 60_000 });
    // The reference is long: its first screen shows the link.
    await screenshots('04-docs-link', { fullPage: false });
    await Promise.all([page.waitForURL(`${base}/record`), fromDocs.click()]);
    await page.locator('svg#chart-pnl').waitFor();

    await page.goto(`${base}/dashboard/login`);
    const fromDashboard = page.getByRole('link', { name: 'Track record' });
    await expect(fromDashboard.getAttribute('href')).resolves.toBe('/record');
    await Promise.all([page.waitForURL(`${base}/record`), fromDashboard.click()]);
    await expect(page.locator('svg#chart-clv rect.bar').count()).resolves.toBe(12);
    expect(outside).toEqual([]);
  });
});
