/**
 * Webhook management in the dashboard (docs/DASHBOARD.md "Webhooks"): add an endpoint (secret
 * shown once), send a test, rotate the secret, reactivate, delete after a confirmation; CSRF on
 * every form; another account's endpoint is not found; Starter accounts cannot manage webhooks.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Webhook } from 'standardwebhooks';
import { verifyWebhookSignature } from '../../src/domain/signature.js';
import { createTestApp, type TestApp } from '../helpers/app.js';
import { CREATE_ACCOUNT, csrfTokenOf, DashboardClient, PASSWORD } from '../helpers/dashboard.js';
import { CREATE_KEY } from '../helpers/fixtures.js';
import { startHttpsReceiver, type HttpsReceiver, type ReceivedRequest } from '../helpers/https-receiver.js';

let t: TestApp;
let hooks: HttpsReceiver;
let accountCounter = 0;

beforeAll(async () => {
  t = await createTestApp({ env: { WEBHOOK_HOST_OVERRIDES: 'hooks.test=127.0.0.1' }, runtime: { startDispatcher: false } });
  hooks = await startHttpsReceiver({ response: { status: 200, body: 'ok' } });
});
afterAll(async () => {
  await hooks?.close();
  await t?.close();
});

/** A signed-in client of a new account with one key; returns the client and the key's id. */
async function signedIn(tier = 'GROWTH'): Promise<{ client: DashboardClient; keyId: string; accountId: string }> {
  const email = `webhooks${++accountCounter}@example.com`;
  const account = await t.graphql<{ createAccount: { id: string } }>(CREATE_ACCOUNT, { input: { email, password: PASSWORD, tier } });
  const accountId = account.data!.createAccount.id;
  const key = await t.graphql<{ createApiKey: { apiKey: { id: string } } }>(CREATE_KEY, { input: { accountId, label: 'prod' } });
  const client = new DashboardClient(t.app);
  expect((await client.signIn(email)).statusCode).toBe(303);
  expect((await client.get('/dashboard/api-keys')).statusCode).toBe(200);
  return { client, keyId: key.data!.createApiKey.apiKey.id, accountId };
}

function header(request: ReceivedRequest, name: string): string {
  const value = request.headers[name];
  return Array.isArray(value) ? value.join(',') : (value ?? '');
}

function secretOn(page: string): string {
  return /whsec_[A-Za-z0-9+/=]+/.exec(page)![0];
}

async function addEndpoint(client: DashboardClient, keyId: string, path: string) {
  const page = await client.post('/dashboard/webhooks', { url: hooks.url('hooks.test', path), apiKeyId: keyId, events: 'PICK_PUBLISHED' });
  expect(page.statusCode, page.body).toBe(201);
  const id = /\/dashboard\/webhooks\/([0-9a-f-]{36})\/test/.exec(page.body)![1]!;
  return { page, id, secret: secretOn(page.body) };
}

describe('dashboard webhooks', () => {
  it('adds an endpoint (secret shown once), sends a signed test, rotates (both Standard Webhooks signatures for 24 h), reactivates, deletes after a confirmation', async () => {
    const { client, keyId } = await signedIn();
    expect(client.lastPage).toContain('Add an endpoint');

    const { page, id, secret } = await addEndpoint(client, keyId, '/dash');
    expect(page.body).toContain('Copy this signing secret now');
    const listed = await client.get('/dashboard/api-keys');
    expect(listed.body).toContain(hooks.url('hooks.test', '/dash'));
    expect(listed.body).not.toContain(secret); // shown once

    const before = hooks.requests.length;
    const tested = await client.post(`/dashboard/webhooks/${id}/test`);
    expect(tested.statusCode).toBe(200);
    expect(tested.body).toContain('Test delivered.');
    expect(tested.body).toContain('answered HTTP 200');
    expect(hooks.requests).toHaveLength(before + 1);
    const sample = hooks.requests.at(-1)!;
    expect(header(sample, 'x-service-test')).toBe('true');
    expect(verifyWebhookSignature(secret, sample.body, header(sample, 'x-service-signature'))).toBe(true);

    const rotated = await client.post(`/dashboard/webhooks/${id}/rotate-secret`);
    expect(rotated.statusCode).toBe(200);
    expect(rotated.body).toContain('New signing secret');
    const newSecret = secretOn(rotated.body);
    expect(newSecret).not.toBe(secret);
    await client.post(`/dashboard/webhooks/${id}/test`);
    const afterRotation = hooks.requests.at(-1)!;
    const standard = {
      'webhook-id': header(afterRotation, 'webhook-id'),
      'webhook-timestamp': header(afterRotation, 'webhook-timestamp'),
      'webhook-signature': header(afterRotation, 'webhook-signature'),
    };
    expect(new Webhook(newSecret).verify(afterRotation.body.toString(), standard)).toBeTruthy();
    expect(new Webhook(secret).verify(afterRotation.body.toString(), standard)).toBeTruthy();

    // Exhausted (as the dispatcher leaves it): the page offers Reactivate, which works.
    await t.runtime.orm.em.fork().execute(`update webhook_subscriptions set status = 'exhausted' where id = ?`, [id]);
    const exhausted = await client.get('/dashboard/api-keys');
    expect(exhausted.body).toContain(`/dashboard/webhooks/${id}/reactivate`);
    const reactivated = await client.post(`/dashboard/webhooks/${id}/reactivate`);
    expect(reactivated.statusCode).toBe(303);
    expect(reactivated.headers.location).toBe('/dashboard/api-keys?webhook=reactivated');
    const active = await client.get(reactivated.headers.location as string);
    expect(active.body).toContain('Webhook endpoint reactivated');
    expect(active.body).not.toContain(`/dashboard/webhooks/${id}/reactivate`);

    const confirm = await client.get(`/dashboard/webhooks/${id}/delete`);
    expect(confirm.statusCode).toBe(200);
    expect(confirm.body).toContain('Delete this webhook endpoint?');
    const deleted = await client.post(`/dashboard/webhooks/${id}/delete`);
    expect(deleted.statusCode).toBe(303);
    const after = await client.get(deleted.headers.location as string);
    expect(after.body).toContain('Webhook endpoint deleted.');
    expect(after.body).not.toContain(hooks.url('hooks.test', '/dash'));
    expect((await client.get(`/dashboard/webhooks/${id}/delete`)).statusCode).toBe(404);
  });

  it('refusals of the add form are shown beside it with what was typed (invalid url, no event, duplicate, limit)', async () => {
    const { client, keyId } = await signedIn();
    const badUrl = await client.post('/dashboard/webhooks', { url: 'http://hooks.test/plain', apiKeyId: keyId, events: 'PICK_PUBLISHED' });
    expect(badUrl.statusCode).toBe(400);
    expect(badUrl.headers['x-error-code']).toBe('invalid_url');
    expect(badUrl.body).toContain('id="webhook-error"');
    expect(badUrl.body).toContain('value="http://hooks.test/plain"');
    // What was chosen stays chosen; the availability events are offered, and opt-in.
    expect(badUrl.body).toContain('<input type="checkbox" name="events" value="PICK_PUBLISHED" checked>');
    expect(badUrl.body).toContain('<input type="checkbox" name="events" value="PICK_AVAILABILITY_CHANGED"> <code>pick.availability_changed</code>');

    const noEvent = await client.post('/dashboard/webhooks', { url: hooks.url('hooks.test', '/none'), apiKeyId: keyId });
    expect(noEvent.statusCode).toBe(400);
    expect(noEvent.body).toContain('Choose at least one event.');
    const unknownEvent = await client.post('/dashboard/webhooks', { url: hooks.url('hooks.test', '/none'), apiKeyId: keyId, events: 'PICK_DELETED' });
    expect(unknownEvent.statusCode).toBe(400);

    await addEndpoint(client, keyId, '/dup');
    await client.get('/dashboard/api-keys');
    const duplicate = await client.post('/dashboard/webhooks', { url: hooks.url('hooks.test', '/dup'), apiKeyId: keyId, events: 'PICK_SETTLED' });
    expect(duplicate.statusCode).toBe(409);
    expect(duplicate.headers['x-error-code']).toBe('duplicate_url');
    for (let index = 2; index <= 5; index += 1) {
      await addEndpoint(client, keyId, `/n${index}`);
      await client.get('/dashboard/api-keys');
    }
    const sixth = await client.post('/dashboard/webhooks', { url: hooks.url('hooks.test', '/n6'), apiKeyId: keyId, events: 'PICK_PUBLISHED' });
    expect(sixth.statusCode).toBe(429);
    expect(sixth.headers['x-error-code']).toBe('subscription_limit');
  });

  it('every webhook form needs the CSRF token of this session', async () => {
    const { client, keyId } = await signedIn();
    const { id } = await addEndpoint(client, keyId, '/csrf');
    await client.get('/dashboard/api-keys');
    const forms: [string, Record<string, string>][] = [
      ['/dashboard/webhooks', { url: hooks.url('hooks.test', '/csrf2'), apiKeyId: keyId, events: 'PICK_PUBLISHED' }],
      [`/dashboard/webhooks/${id}/test`, {}],
      [`/dashboard/webhooks/${id}/rotate-secret`, {}],
      [`/dashboard/webhooks/${id}/reactivate`, {}],
      [`/dashboard/webhooks/${id}/delete`, {}],
    ];
    const other = await signedIn();
    const foreignToken = csrfTokenOf(other.client.lastPage);
    const sent = hooks.requests.length;
    for (const [url, fields] of forms) {
      for (const token of [null, 'forged', foreignToken]) {
        const refused = await client.post(url, fields, token);
        expect(refused.statusCode, `${url} ${token}`).toBe(403);
        expect(refused.headers['x-error-code']).toBe('invalid_csrf_token');
      }
    }
    expect(hooks.requests).toHaveLength(sent);
    await client.get('/dashboard/api-keys');
    expect(client.lastPage).toContain(hooks.url('hooks.test', '/csrf'));
    expect(client.lastPage).not.toContain(hooks.url('hooks.test', '/csrf2'));
  });

  it("another account's endpoint and key are not found; a revoked key gets no new endpoint; Starter accounts cannot add one", async () => {
    const owner = await signedIn();
    const { id } = await addEndpoint(owner.client, owner.keyId, '/owned');
    const stranger = await signedIn();
    for (const path of ['test', 'rotate-secret', 'reactivate', 'delete']) {
      const refused = await stranger.client.post(`/dashboard/webhooks/${id}/${path}`);
      expect(refused.statusCode, path).toBe(404);
      await stranger.client.get('/dashboard/api-keys');
    }
    expect((await stranger.client.get(`/dashboard/webhooks/${id}/delete`)).statusCode).toBe(404);
    await stranger.client.get('/dashboard/api-keys');
    const foreignKey = await stranger.client.post('/dashboard/webhooks', { url: hooks.url('hooks.test', '/theirs'), apiKeyId: owner.keyId, events: 'PICK_PUBLISHED' });
    expect(foreignKey.statusCode).toBe(404);

    await t.graphql('mutation($id: ID!) { revokeApiKey(id: $id) { id } }', { id: owner.keyId });
    await owner.client.get('/dashboard/api-keys');
    const revoked = await owner.client.post('/dashboard/webhooks', { url: hooks.url('hooks.test', '/revoked'), apiKeyId: owner.keyId, events: 'PICK_PUBLISHED' });
    expect(revoked.statusCode).toBe(400);
    expect(revoked.headers['x-error-code']).toBe('invalid_parameter');

    const starter = await signedIn('STARTER');
    expect(starter.client.lastPage).not.toContain('Add an endpoint');
    const refused = await starter.client.post('/dashboard/webhooks', { url: hooks.url('hooks.test', '/starter'), apiKeyId: starter.keyId, events: 'PICK_PUBLISHED' });
    expect(refused.statusCode).toBe(403);
    expect(refused.headers['x-error-code']).toBe('tier_upgrade_required');
  });

  it('the GraphQL endpoint ignores the session cookie for webhook mutations too', async () => {
    const { client, keyId } = await signedIn();
    const cookie = [...client.jar].map(([name, value]) => `${name}=${value}`).join('; ');
    const response = await t.app.inject({
      method: 'POST',
      url: '/graphql',
      headers: { 'content-type': 'application/json', cookie },
      payload: JSON.stringify({ query: 'mutation($input: CreateWebhookSubscriptionInput!) { createWebhookSubscription(input: $input) { secret } }', variables: { input: { url: hooks.url('hooks.test', '/cookie'), events: ['PICK_PUBLISHED'], apiKeyId: keyId } } }),
    });
    expect(response.json().errors[0].extensions.code).toBe('invalid_api_key');
  });
});
