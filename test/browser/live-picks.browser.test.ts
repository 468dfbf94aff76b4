/**
 * The frontend example (docs/examples/live-picks/, docs/API.md "Frontends") in a real browser:
 * Debian's Chromium driven by playwright-core, headless. The API runs on one loopback origin,
 * the example's backend and page on a second; the backend mints a stream token for its page's
 * origin with an Enterprise key, and the page subscribes with EventSource, with graphql-sse's
 * browser client and with Apollo Client's GraphQLWsLink over /graphql/ws. A published pick is
 * rendered by all three; the same page from an origin the token does not name gets nothing (the
 * WebSocket is closed with 4403); an expired token is refused and the page says so.
 */
import { rmSync } from 'node:fs';
import type { AddressInfo } from 'node:net';
import type { BrowserContext, Page } from 'playwright-core';
import { launchChromium } from '../helpers/chromium.js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ManualClock } from '../../src/domain/clock.js';
import { createTestApp, type TestApp } from '../helpers/app.js';
import { CREATE_KEY, PUBLISH, pickInput } from '../helpers/fixtures.js';
// @ts-expect-error The example is plain JavaScript, as a customer would copy it.
import { startLivePicksExample } from '../../docs/examples/live-picks/server.mjs';


let t: TestApp;
let api: string;
let apiKey: string;
let example: { origin: string; close(): Promise<void> };
let context: BrowserContext;
let userDataDir: string;
const clock = new ManualClock(new Date());

beforeAll(async () => {
  t = await createTestApp({ clock });
  await t.app.listen({ port: 0, host: '127.0.0.1' });
  api = `http://127.0.0.1:${(t.app.server.address() as AddressInfo).port}`;
  apiKey = (await t.graphql<{ createApiKey: { key: string } }>(CREATE_KEY, { input: { tier: 'ENTERPRISE' } })).data!.createApiKey.key;
  example = await startLivePicksExample({ apiUrl: api, apiKey });
  ({ context, userDataDir } = await launchChromium('live-picks'));
  // Nothing but the two loopback servers.
  await context.route(/^(?!http:\/\/(127\.0\.0\.1|localhost):)/, (route) => route.abort());
});

afterAll(async () => {
  await context?.close();
  await example?.close();
  await t?.close();
  if (userDataDir) rmSync(userDataDir, { recursive: true, force: true });
});

async function publish(team: string): Promise<string> {
  const published = await t.graphql<{ publishPick: { id: string } }>(PUBLISH, { input: pickInput({ homeTeam: team, selection: team }) });
  expect(published.errors).toBeUndefined();
  return published.data!.publishPick.id;
}

const statusOf = (page: Page, id: string) => page.locator(`#${id}`).textContent();

/**
 * Published only once the page's three streams hold their slots (a slot is taken in the step that
 * starts listening): a pick before a subscription is not replayed.
 */
async function allThreeSubscribed(): Promise<void> {
  await expect.poll(() => t.runtime.services.streamSlots.held('token'), { timeout: 30_000 }).toBe(3);
}

/** Counts the page's WebSocket constructions (window.__webSockets), from before its scripts run. */
async function countWebSockets(page: Page): Promise<void> {
  await page.addInitScript(() => {
    const Native = window.WebSocket;
    const counted = window as unknown as { __webSockets: number };
    counted.__webSockets = 0;
    window.WebSocket = class extends Native {
      constructor(...args: ConstructorParameters<typeof WebSocket>) {
        super(...args);
        counted.__webSockets += 1;
      }
    };
  });
}
const webSocketsOf = (page: Page) => page.evaluate(() => (window as unknown as { __webSockets: number }).__webSockets);

describe('live picks in a browser page with a stream token', () => {
  it('renders a published pick through EventSource, graphql-sse and Apollo Client, with nothing failing in the console', async () => {
    const page = await context.newPage();
    // Every console error and every answer of 400 or more (a missing icon or asset would be one).
    const consoleErrors: string[] = [];
    const failedRequests: string[] = [];
    page.on('console', (message) => {
      if (message.type() === 'error') consoleErrors.push(message.text());
    });
    page.on('response', (response) => {
      if (response.status() >= 400) failedRequests.push(`${response.status()} ${response.url()}`);
    });
    await page.goto(`${example.origin}/`);
    await expect.poll(() => statusOf(page, 'es-status'), { timeout: 30_000 }).toBe('live');
    // 'live' is graphql-ws's connected event (the socket acknowledged), not yet the subscription.
    await expect.poll(() => statusOf(page, 'apollo-status'), { timeout: 30_000 }).toBe('live');
    await allThreeSubscribed();
    const id = await publish('Browser Wanderers');
    await page.waitForSelector(`#es-picks [data-pick-id="${id}"]`, { timeout: 30_000 });
    await page.waitForSelector(`#gql-picks [data-pick-id="${id}"]`, { timeout: 30_000 });
    await page.waitForSelector(`#apollo-picks [data-pick-id="${id}"]`, { timeout: 30_000 });
    expect(await page.locator(`#apollo-picks [data-pick-id="${id}"]`).textContent()).toContain('Browser Wanderers');
    expect(await page.locator(`#es-picks [data-pick-id="${id}"]`).textContent()).toContain('Browser Wanderers');
    // The page never saw the key.
    expect(await page.content()).not.toContain(apiKey);
    expect(failedRequests).toEqual([]);
    expect(consoleErrors).toEqual([]);
    // A browser asks for /favicon.ico unless the page names an icon, and the example serves none: a 404
    // in the console of a desktop browser (headless Chromium never asks, so the page is checked instead).
    expect(await page.locator('link[rel="icon"]').count()).toBe(1);
    await page.close();
  });

  it('gets nothing on an origin the token does not name: the WebSocket is closed with 4403 and not retried', async () => {
    const page = await context.newPage();
    await countWebSockets(page);
    // The page's timers are the test's to move: graphql-ws waits on setTimeout before a retry.
    await page.clock.install();
    // Same page, another origin: localhost is not 127.0.0.1 to a browser.
    await page.goto(`${example.origin.replace('127.0.0.1', 'localhost')}/`);
    await expect.poll(() => statusOf(page, 'es-status'), { timeout: 30_000 }).toMatch(/^refused/);
    await expect.poll(() => statusOf(page, 'gql-status'), { timeout: 30_000 }).toMatch(/^refused/);
    await expect.poll(() => statusOf(page, 'apollo-status'), { timeout: 30_000 }).toMatch(/^refused \(4403\)/);
    // Two minutes of the page's time pass: graphql-ws would have retried a 4403 several times.
    await page.clock.runFor(120_000);
    expect(await webSocketsOf(page)).toBe(1);
    expect(await statusOf(page, 'apollo-status')).toMatch(/^refused \(4403\)/);
    // The same page on the token's own origin receives the next pick; this one does not.
    const control = await context.newPage();
    await control.goto(`${example.origin}/`);
    await allThreeSubscribed();
    const id = await publish('Elsewhere Town');
    await control.waitForSelector(`#apollo-picks [data-pick-id="${id}"]`, { timeout: 30_000 });
    await control.waitForSelector(`#gql-picks [data-pick-id="${id}"]`, { timeout: 30_000 });
    await control.waitForSelector(`#es-picks [data-pick-id="${id}"]`, { timeout: 30_000 });
    expect(await page.locator('#es-picks li').count()).toBe(0);
    expect(await page.locator('#gql-picks li').count()).toBe(0);
    expect(await page.locator('#apollo-picks li').count()).toBe(0);
    await control.close();
    await page.close();
  });

  it('resumes Apollo\'s subscription after a dropped connection with the pick published meanwhile', async () => {
    const page = await context.newPage();
    await page.clock.install();
    await page.goto(`${example.origin}/`);
    await expect.poll(() => statusOf(page, 'apollo-status'), { timeout: 30_000 }).toBe('live');
    await allThreeSubscribed();
    const before = await publish('Before Drop United');
    await page.waitForSelector(`#apollo-picks [data-pick-id="${before}"]`, { timeout: 30_000 });
    // The page's clock stops: graphql-ws cannot come back before the test lets it.
    await page.clock.pauseAt(Date.now() + 1_000);
    // The server drops every WebSocket, as a restart would (1006 to the page).
    for (const socket of t.app.websocketServer.clients) socket.terminate();
    await expect.poll(() => statusOf(page, 'apollo-status'), { timeout: 30_000 }).toBe('reconnecting…');
    const during = await publish('During Drop Rovers');
    // Time moves on: the retry connects and resubscribes after the last pick seen.
    await page.clock.runFor(60_000);
    await page.waitForSelector(`#apollo-picks [data-pick-id="${during}"]`, { timeout: 30_000 });
    expect(await statusOf(page, 'apollo-status')).toBe('live');
    expect(await page.locator(`#apollo-picks [data-pick-id="${before}"]`).count()).toBe(1);
    await page.close();
  });

  it('shows an expired token refused', async () => {
    const minted = await t.app.inject({
      method: 'POST',
      url: '/api/v1/stream-tokens',
      headers: { authorization: `Bearer ${apiKey}`, 'content-type': 'application/json' },
      payload: JSON.stringify({ ttl_seconds: 60, origins: [example.origin] }),
    });
    expect(minted.statusCode).toBe(201);
    clock.advance(61_000);
    const page = await context.newPage();
    await page.goto(`${example.origin}/?api=${encodeURIComponent(api)}&token=${encodeURIComponent(minted.json().token)}`);
    await expect.poll(() => statusOf(page, 'es-status'), { timeout: 30_000 }).toMatch(/^refused/);
    await expect.poll(() => statusOf(page, 'gql-status'), { timeout: 30_000 }).toMatch(/^refused/);
    await expect.poll(() => statusOf(page, 'apollo-status'), { timeout: 30_000 }).toMatch(/^refused \(4401\)/);
    await page.close();
  });
});
