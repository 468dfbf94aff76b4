/**
 * The embedded demo's local webhook receivers (docs/WEBHOOKS.md, "URL rule"; README, "Try
 * webhooks locally"): in embedded demo mode a subscription to http://127.0.0.1:<port>/... (or
 * localhost) is accepted at once, with no restart, setting or certificate, and its deliveries
 * arrive signed; the same URL is refused outside it (no demo, PostgreSQL, production, a listener
 * on every interface). The example receiver, docs/examples/webhook-receiver.mjs, verifies such a
 * delivery over plain HTTP, as the README's steps run it.
 *
 * Signatures are checked here with the `standardwebhooks` package and node:crypto, not with the
 * service's own signing code.
 */
import { spawn } from 'node:child_process';
import { createHmac, timingSafeEqual } from 'node:crypto';
import path from 'node:path';
import { Webhook } from 'standardwebhooks';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { loadConfig } from '../../src/config.js';
import { createTestApp, type TestApp, LEDGER_SIGNING_KEY } from '../helpers/app.js';
import { CREATE_KEY, PUBLISH, pickInput } from '../helpers/fixtures.js';
import { startHttpReceiver, type HttpReceiver, type Received } from '../helpers/http-receiver.js';
import { freePorts, manage, REPO_ROOT, type ManagedProcess } from '../helpers/processes.js';

/** Both signatures, as a customer checks them: Standard Webhooks (the package) and X-Service-Signature (HMAC of the raw body). */
function verify(request: Received, secret: string): { type: string; data: Record<string, unknown> } {
  const header = (name: string) => String(request.headers[name] ?? '');
  const event = new Webhook(secret).verify(request.body, {
    'webhook-id': header('webhook-id'),
    'webhook-timestamp': header('webhook-timestamp'),
    'webhook-signature': header('webhook-signature'),
  }) as { type: string; data: Record<string, unknown> };
  const expected = Buffer.from(`sha256=${createHmac('sha256', secret).update(request.body).digest('hex')}`);
  const presented = Buffer.from(header('x-service-signature'));
  expect(presented.length === expected.length && timingSafeEqual(presented, expected)).toBe(true);
  return event;
}

async function enterpriseKey(t: TestApp): Promise<string> {
  const created = await t.graphql<{ createApiKey: { key: string } }>(CREATE_KEY, { input: { tier: 'ENTERPRISE', label: 'demo webhooks' } });
  expect(created.errors).toBeUndefined();
  return created.data!.createApiKey.key;
}

async function subscribe(t: TestApp, key: string, url: string) {
  return t.app.inject({
    method: 'POST',
    url: '/api/v1/webhooks',
    headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' },
    payload: JSON.stringify({ url, events: ['pick.published'] }),
  });
}

async function sendTest(t: TestApp, key: string, id: string) {
  const res = await t.app.inject({ method: 'POST', url: `/api/v1/webhooks/${id}/test`, headers: { authorization: `Bearer ${key}` } });
  expect(res.statusCode, res.body).toBe(200);
  return res.json() as { succeeded: boolean; status_code: number | null; error: string | null };
}

/** The embedded demo's settings as `npm start` reads them with no DATABASE_URL (the demo feed off: no picks of its own). */
const DEMO_ENV = { DEMO_SEED: 'true', DEMO_FEED: 'false', HOST: '127.0.0.1' };

describe('which starts accept local receivers', () => {
  it('only the embedded demo, outside production, listening on loopback', () => {
    const postgres = { DATABASE_URL: 'postgres://picks@127.0.0.1:5432/picks', ADMIN_TOKEN: 'a'.repeat(32), WEBHOOK_SECRET_KEY: 'b'.repeat(64), LEDGER_SIGNING_KEY };
    expect(loadConfig({}).localWebhookReceivers).toBe(true);
    expect(loadConfig({ HOST: '::1' }).localWebhookReceivers).toBe(true);
    expect(loadConfig({ HOST: 'localhost' }).localWebhookReceivers).toBe(true);
    expect(loadConfig({ DEMO_SEED: 'false' }).localWebhookReceivers).toBe(false);
    expect(loadConfig({ NODE_ENV: 'production' }).localWebhookReceivers).toBe(false);
    // Spelt with a capital, production is still meant; behind a trusted proxy loopback is reachable from elsewhere.
    expect(loadConfig({ NODE_ENV: 'Production' }).localWebhookReceivers).toBe(false);
    expect(loadConfig({ TRUST_PROXY: 'loopback' }).localWebhookReceivers).toBe(false);
    expect(loadConfig({ TRUST_PROXY: '10.0.0.0/8' }).localWebhookReceivers).toBe(false);
    expect(loadConfig({ HOST: '0.0.0.0' }).localWebhookReceivers).toBe(false);
    expect(loadConfig({ HOST: '192.168.1.10' }).localWebhookReceivers).toBe(false);
    expect(loadConfig(postgres).localWebhookReceivers).toBe(false);
    expect(loadConfig({ ...postgres, DEMO_SEED: 'true' }).localWebhookReceivers).toBe(false);
  });
});

describe('in embedded demo mode', () => {
  let t: TestApp;
  let receiver: HttpReceiver;
  let key: string;

  beforeAll(async () => {
    t = await createTestApp({ env: DEMO_ENV });
    receiver = await startHttpReceiver();
    key = await enterpriseKey(t);
  });
  afterAll(async () => {
    await t?.close();
    await receiver?.close();
  });

  it('a subscription to http://127.0.0.1:<port>/... gets a signed test delivery and then the published picks', async () => {
    expect(t.config.localWebhookReceivers).toBe(true);
    const url = `http://127.0.0.1:${receiver.port}/webhooks`;
    const created = await subscribe(t, key, url);
    expect(created.statusCode, created.body).toBe(201);
    const { subscription_id: id, hmac_secret: secret, url: stored } = created.json() as { subscription_id: string; hmac_secret: string; url: string };
    expect(stored).toBe(url);

    expect(await sendTest(t, key, id)).toMatchObject({ succeeded: true, status_code: 204, error: null });
    const test = await receiver.next((r) => r.path === '/webhooks' && r.headers['x-service-test'] === 'true');
    expect(verify(test, secret).type).toBe('pick.published');

    const published = await t.graphql<{ publishPick: { id: string } }>(PUBLISH, { input: pickInput({ homeTeam: 'Loopback Rovers', selection: 'Loopback Rovers' }) });
    expect(published.errors).toBeUndefined();
    const pickId = published.data!.publishPick.id;
    const delivery = await receiver.next((r) => r.path === '/webhooks' && r.headers['x-service-test'] === undefined && r.body.includes(pickId));
    const event = verify(delivery, secret);
    expect(event.type).toBe('pick.published');
    expect(event.data).toMatchObject({ id: pickId, home_team: 'Loopback Rovers' });
  });

  it('localhost works too (pinned to 127.0.0.1); other private and plain-http targets stay refused', async () => {
    const created = await subscribe(t, key, `http://localhost:${receiver.port}/by-name`);
    expect(created.statusCode, created.body).toBe(201);
    const { subscription_id: id, hmac_secret: secret } = created.json() as { subscription_id: string; hmac_secret: string };
    expect(await sendTest(t, key, id)).toMatchObject({ succeeded: true, status_code: 204 });
    verify(await receiver.next((r) => r.path === '/by-name'), secret);

    for (const url of ['http://10.0.0.1/hooks', 'http://hooks.example.com/hooks', `http://127.0.0.2:${receiver.port}/hooks`, 'https://169.254.169.254/latest']) {
      const refused = await subscribe(t, key, url);
      expect(refused.statusCode, url).toBe(400);
      expect(refused.json().error).toBe('invalid_url');
    }
  });

  it('the example receiver (docs/examples/webhook-receiver.mjs) verifies a delivery over plain HTTP', async () => {
    const [port] = await freePorts(1);
    const created = await subscribe(t, key, `http://127.0.0.1:${port}/webhooks`);
    expect(created.statusCode, created.body).toBe(201);
    const { subscription_id: id, hmac_secret: secret } = created.json() as { subscription_id: string; hmac_secret: string };
    const example: ManagedProcess = manage(
      'webhook-receiver',
      spawn(process.execPath, [path.join(REPO_ROOT, 'docs/examples/webhook-receiver.mjs')], {
        cwd: REPO_ROOT,
        env: { PATH: process.env.PATH ?? '/usr/bin:/bin', WEBHOOK_SECRET: secret, PORT: String(port) },
        stdio: ['ignore', 'pipe', 'pipe'],
      }),
    );
    try {
      await example.waitForLine(new RegExp(`^Webhook receiver on http://127\\.0\\.0\\.1:${port}/`));
      expect(await sendTest(t, key, id)).toMatchObject({ succeeded: true, status_code: 204 });
      await example.waitForLine(/^verified pick\.published \[test\] delivery [0-9a-f-]{36}: Sample Home FC v Sample Away FC/);
    } finally {
      await example.stop();
    }
  });
});

describe('outside embedded demo mode', () => {
  it('the same loopback URLs are refused: https on a public host only', async () => {
    const t = await createTestApp();
    const receiver = await startHttpReceiver();
    try {
      expect(t.config.localWebhookReceivers).toBe(false);
      const key = await enterpriseKey(t);
      for (const url of [`http://127.0.0.1:${receiver.port}/webhooks`, `http://localhost:${receiver.port}/webhooks`]) {
        const refused = await subscribe(t, key, url);
        expect(refused.statusCode).toBe(400);
        expect(refused.json()).toMatchObject({ error: 'invalid_url', message: expect.stringContaining('https') });
      }
      const literal = await subscribe(t, key, `https://127.0.0.1:${receiver.port}/webhooks`);
      expect(literal.statusCode).toBe(400);
      expect(literal.json().error).toBe('invalid_url');
      expect(receiver.received).toEqual([]);
    } finally {
      await t.close();
      await receiver.close();
    }
  });

  it('a demo listening on every interface refuses them too', async () => {
    const t = await createTestApp({ env: { ...DEMO_ENV, HOST: '0.0.0.0' } });
    try {
      expect(t.config.localWebhookReceivers).toBe(false);
      const refused = await subscribe(t, await enterpriseKey(t), 'http://127.0.0.1:4000/webhooks');
      expect(refused.statusCode).toBe(400);
      expect(refused.json().error).toBe('invalid_url');
    } finally {
      await t.close();
    }
  });
});
