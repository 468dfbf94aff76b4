/**
 * `npm run webhooks:reencrypt`: step 2 of a webhook secret key rotation (docs/WEBHOOKS.md).
 * With the new key in WEBHOOK_SECRET_KEY and the old one in WEBHOOK_SECRET_KEY_PREVIOUS,
 * re-encrypts every stored secret under the new key; afterwards the old key can be removed.
 */
import { ConfigError, loadConfig } from '../config.js';
import { createKeyring } from '../domain/secrets.js';
import { embeddedWebhookSecretKey } from '../embedded.js';
import { initORM } from '../persistence/orm.js';
import { databaseTargetFor } from '../runtime.js';
import { WebhookService } from '../services/webhooks/subscriptions.js';
import { WebhookUrlGuard } from '../services/webhooks/url-guard.js';
import { systemClock } from '../domain/clock.js';

try {
  const config = loadConfig(process.env, { requireAdminToken: false });
  const key = config.webhookSecretKey ?? (config.databaseUrl ? null : embeddedWebhookSecretKey(config.dataDir));
  if (!key) throw new ConfigError('WEBHOOK_SECRET_KEY', 'is required: it is the key to re-encrypt under');
  const orm = await initORM(databaseTargetFor(config));
  const webhooks = new WebhookService(orm, systemClock, new WebhookUrlGuard({ hostOverrides: new Map() }), createKeyring(key, config.webhookSecretKeysPrevious));
  const changed = await webhooks.reencryptSecrets();
  await orm.close();
  process.stdout.write(`Re-encrypted ${changed} webhook secret(s) under the current key.\n`);
} catch (error) {
  process.stderr.write(`${error instanceof ConfigError ? error.message : `Re-encryption failed: ${(error as Error).message}`}\n`);
  process.exit(1);
}
