/**
 * The browser tests' Chromium: Debian's (/usr/bin/chromium, installed by .ci/run; CHROMIUM_PATH
 * overrides it) driven by playwright-core, headless, with a fresh profile and no background
 * traffic, so the only requests are the ones the page makes.
 */
import { existsSync, mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { chromium, type BrowserContext } from 'playwright-core';

export const CHROMIUM = process.env.CHROMIUM_PATH ?? '/usr/bin/chromium';
export const DESKTOP = { width: 1280, height: 900 };
export const PHONE = { width: 390, height: 844 };

/** No background traffic, no sandbox (tests run as root), a fresh profile. */
export const CHROMIUM_ARGS = [
  '--headless',
  '--no-sandbox',
  '--disable-gpu',
  '--disable-quic',
  '--no-first-run',
  '--disable-background-networking',
  '--disable-component-update',
  '--disable-sync',
];

/** A headless Chromium on a new profile folder (the caller removes `userDataDir` when done), desktop-sized, UTC, en-GB. */
export async function launchChromium(name: string): Promise<{ context: BrowserContext; userDataDir: string }> {
  if (!existsSync(CHROMIUM)) throw new Error(`${CHROMIUM} is missing: apt-get install -y chromium (.ci/run does this)`);
  const userDataDir = mkdtempSync(path.join(tmpdir(), `${name}-chromium-`));
  const context = await chromium.launchPersistentContext(userDataDir, {
    executablePath: CHROMIUM,
    headless: true,
    args: CHROMIUM_ARGS,
    viewport: DESKTOP,
    locale: 'en-GB',
    timezoneId: 'UTC',
  });
  return { context, userDataDir };
}
