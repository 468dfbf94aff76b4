/**
 * Webhook secrets at rest: stored encrypted (a database dump alone reveals nothing) and a key
 * rotation re-encrypts every secret under the new key.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { systemClock } from '../../src/domain/clock.js';
import { createKeyring, decryptSecret } from '../../src/domain/secrets.js';
import { WebhookService } from '../../src/services/webhooks/subscriptions.js';
import { WebhookUrlGuard } from '../../src/services/webhooks/url-guard.js';
import { createTestApp, WEBHOOK_SECRET_KEY, type TestApp } from '../helpers/app.js';
import { CREATE_KEY } from '../helpers/fixtures.js';

const CREATE = `mutation($input: CreateWebhookSubscriptionInput!) { createWebhookSubscription(input: $input) { secret subscription { id } } }`;
const ROTATE = `mutation($id: ID!) { rotateWebhookSecret(id: $id) { secret subscription { id } } }`;

describe('webhook secrets at rest', () => {
  let testApp: TestApp;
  beforeAll(async () => {
    testApp = await createTestApp({ env: { WEBHOOK_HOST_OVERRIDES: 'hooks.test=127.0.0.1' }, runtime: { startDispatcher: false } });
  });
  afterAll(async () => {
    await testApp?.close();
  });

  async function stored(id: string): Promise<string> {
    const rows = await testApp.runtime.orm.em.fork().execute<{ secret_ciphertext: string }[]>('select secret_ciphertext from webhook_subscriptions where id = ?', [id]);
    return rows[0]!.secret_ciphertext;
  }

  it('stores only ciphertext; rotation replaces it; re-encryption moves every secret to the new key', async () => {
    const key = (await testApp.graphql<{ createApiKey: { key: string } }>(CREATE_KEY, { input: { tier: 'GROWTH' } })).data!.createApiKey.key;
    const created = await testApp.graphql<{ createWebhookSubscription: { secret: string; subscription: { id: string } } }>(
      CREATE,
      { input: { url: 'https://hooks.test/rotation', events: ['PICK_PUBLISHED'] } },
      `Bearer ${key}`,
    );
    const { secret, subscription } = created.data!.createWebhookSubscription;
    const sealed = await stored(subscription.id);
    expect(sealed).not.toContain(secret);
    expect(sealed).not.toContain(secret.slice('whsec_'.length));
    const dump = JSON.stringify(await testApp.runtime.orm.em.fork().execute('select * from webhook_subscriptions'));
    expect(dump).not.toContain(secret.slice('whsec_'.length, 20));

    const rotated = await testApp.graphql<{ rotateWebhookSecret: { secret: string } }>(ROTATE, { id: subscription.id }, `Bearer ${key}`);
    const newSecret = rotated.data!.rotateWebhookSecret.secret;
    expect(newSecret).not.toBe(secret);
    expect(decryptSecret(await stored(subscription.id), createKeyring(Buffer.from(WEBHOOK_SECRET_KEY, 'hex')), subscription.id)).toBe(newSecret);

    // Key rotation: a new current key, the old one kept as previous until re-encryption ran.
    const newKey = Buffer.alloc(32, 7);
    const service = new WebhookService(
      testApp.runtime.orm,
      systemClock,
      new WebhookUrlGuard({ hostOverrides: new Map() }),
      createKeyring(newKey, [Buffer.from(WEBHOOK_SECRET_KEY, 'hex')]),
    );
    expect(await service.reencryptSecrets()).toBe(1);
    expect(await service.reencryptSecrets()).toBe(0);
    expect(decryptSecret(await stored(subscription.id), createKeyring(newKey), subscription.id)).toBe(newSecret);
    // A ciphertext made under the old key is unreadable once that key is gone.
    expect(() => decryptSecret(sealed, createKeyring(newKey), subscription.id)).toThrow(/not configured/);
  });
});
