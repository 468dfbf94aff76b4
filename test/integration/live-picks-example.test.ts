/**
 * The live-picks example's backend (docs/examples/live-picks/server.mjs) as the README runs it
 * right after `npm start`: no key and no URL given, it finds the service at the port `npm start`
 * reads (PORT) and uses the demo Enterprise key kept in DATA_DIR/demo-keys.json, and mints a
 * stream token for its page there. The page itself is walked in a browser by
 * test/browser/live-picks.browser.test.ts.
 */
import { spawn } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestApp, type TestApp } from '../helpers/app.js';
import { CREATE_KEY } from '../helpers/fixtures.js';
import { freePorts, manage, REPO_ROOT } from '../helpers/processes.js';

let t: TestApp;
let apiPort: number;
const dataDir = mkdtempSync(path.join(tmpdir(), 'picks-live-example-'));

beforeAll(async () => {
  t = await createTestApp();
  await t.app.listen({ port: 0, host: '127.0.0.1' });
  apiPort = (t.app.server.address() as AddressInfo).port;
});
afterAll(async () => {
  await t?.close();
  rmSync(dataDir, { recursive: true, force: true });
});

describe('the live-picks example after npm start', () => {
  it('takes the service from PORT and the demo Enterprise key from DATA_DIR/demo-keys.json', async () => {
    const key = (await t.graphql<{ createApiKey: { key: string } }>(CREATE_KEY, { input: { tier: 'ENTERPRISE' } })).data!.createApiKey.key;
    writeFileSync(path.join(dataDir, 'demo-keys.json'), JSON.stringify({ enterprise: key }));
    const [examplePort] = await freePorts(1);
    const example = manage(
      'live-picks example',
      spawn(process.execPath, [path.join(REPO_ROOT, 'docs/examples/live-picks/server.mjs')], {
        cwd: REPO_ROOT,
        env: { PATH: process.env.PATH ?? '/usr/bin:/bin', PORT: String(apiPort), DATA_DIR: dataDir, EXAMPLE_PORT: String(examplePort) },
        stdio: ['ignore', 'pipe', 'pipe'],
      }),
    );
    try {
      const origin = `http://127.0.0.1:${examplePort}`;
      await example.waitForLine(new RegExp(`^live picks example: open ${origin}/ \\(picks from http://127\\.0\\.0\\.1:${apiPort}, with the demo Enterprise key\\)$`));
      const minted = await fetch(`${origin}/stream-token`);
      const body = (await minted.json()) as { token?: string; api?: string };
      expect(minted.status, JSON.stringify(body)).toBe(201);
      expect(body.token).toMatch(/^sst_/);
      expect(body.api).toBe(`http://127.0.0.1:${apiPort}`);
      // The page names an icon, so a browser does not ask for /favicon.ico (which would be a 404).
      expect(await (await fetch(`${origin}/`)).text()).toContain('<link rel="icon" href="data:,">');
      // The page's Apollo Client module, bundled for the browser: one module, no bare import left.
      const apolloFeed = await fetch(`${origin}/apollo-feed.js`);
      expect(apolloFeed.status).toBe(200);
      expect(apolloFeed.headers.get('content-type')).toBe('text/javascript; charset=utf-8');
      const bundled = await apolloFeed.text();
      expect(bundled).toMatch(/export\s*\{[^}]*\bas subscribeWithApollo\b[^}]*\}/);
      // A bundle's imports would come first.
      expect(bundled.trimStart().startsWith('import')).toBe(false);
    } finally {
      await example.stop();
    }
  });
});
