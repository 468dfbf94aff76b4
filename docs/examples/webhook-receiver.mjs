#!/usr/bin/env node
/**
 * A small webhook receiver for trying webhooks on this machine (README "Try webhooks locally",
 * docs/WEBHOOKS.md "Trying webhooks on this machine"), on 127.0.0.1, offline:
 *
 * - plain HTTP by default (http://127.0.0.1:4000/), which the embedded demo (`npm start` with no
 *   DATABASE_URL) accepts as a webhook URL;
 * - HTTPS with TLS=1, with the repository's test certificate (test/fixtures/tls: valid for
 *   hooks.test and localhost, signed by test/fixtures/tls/ca.pem), for a service that accepts
 *   https only (WEBHOOK_HOST_OVERRIDES and the test CA, docs/WEBHOOKS.md).
 *
 * Every POST is verified twice, as a customer would:
 *
 * - Standard Webhooks (webhook-id, webhook-timestamp, webhook-signature) with the
 *   `standardwebhooks` package: signature and timestamp (5 minutes of tolerance). During the
 *   24 h after a rotation webhook-signature carries two signatures; the package accepts the
 *   request when either matches the secret it was given.
 * - X-Service-Signature (`sha256=<hex>` HMAC of the raw body keyed with the secret string)
 *   with node:crypto, compared in constant time. It is signed with the current secret only, so
 *   right after a rotation it stops matching the old secret: this receiver decides on the
 *   Standard Webhooks signature (which also rejects old timestamps) and prints whether
 *   X-Service-Signature matched. Set STRICT_SERVICE_SIGNATURE=1 to refuse a mismatch too.
 *
 * A delivery that verifies is answered 204 and printed; anything else 401 with the reason.
 * Repeated X-Service-Delivery ids (retries after a lost answer) are printed as such.
 *
 * Usage (from the repository root):
 *   WEBHOOK_SECRET=whsec_... node docs/examples/webhook-receiver.mjs
 * Environment: WEBHOOK_SECRET (required; the hmac_secret of the subscription), PORT (4000, or
 * 4443 with TLS=1), TLS (1: HTTPS), TLS_CERT / TLS_KEY (PEM files, HTTPS; default
 * test/fixtures/tls/server.pem and server-key.pem), STRICT_SERVICE_SIGNATURE (1: also refuse
 * when X-Service-Signature does not match).
 */
import { createHmac, timingSafeEqual } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { createServer as createHttpServer } from 'node:http';
import { createServer as createHttpsServer } from 'node:https';
import { fileURLToPath } from 'node:url';
import { Webhook, WebhookVerificationError } from 'standardwebhooks';

const TLS_DIR = fileURLToPath(new URL('../../test/fixtures/tls/', import.meta.url));
const secret = process.env.WEBHOOK_SECRET ?? '';
const tls = process.env.TLS === '1' || process.env.TLS_CERT !== undefined;
const port = Number(process.env.PORT ?? (tls ? 4443 : 4000));
const strictServiceSignature = process.env.STRICT_SERVICE_SIGNATURE === '1';

if (!/^whsec_[A-Za-z0-9+/]+=*$/.test(secret)) {
  process.stderr.write('Set WEBHOOK_SECRET to the subscription\'s hmac_secret (whsec_...), shown when it was created or rotated.\n');
  process.exit(2);
}

const standard = new Webhook(secret);
const seen = new Set();

/** X-Service-Signature: sha256= + hex HMAC-SHA256 of the raw body, keyed with the secret string. */
function serviceSignatureMatches(body, header) {
  if (typeof header !== 'string') return false;
  const expected = Buffer.from(`sha256=${createHmac('sha256', secret).update(body).digest('hex')}`);
  const presented = Buffer.from(header);
  return presented.length === expected.length && timingSafeEqual(presented, expected);
}

function answer(res, status, text) {
  res.writeHead(status, { 'content-type': 'text/plain; charset=utf-8' });
  res.end(text);
}

function receive(req, res) {
  const chunks = [];
  req.on('data', (chunk) => chunks.push(chunk));
  req.on('end', () => {
    if (req.method !== 'POST') return answer(res, 405, 'POST only\n');
    const body = Buffer.concat(chunks);
    let event;
    try {
      event = standard.verify(body.toString('utf8'), {
        'webhook-id': String(req.headers['webhook-id'] ?? ''),
        'webhook-timestamp': String(req.headers['webhook-timestamp'] ?? ''),
        'webhook-signature': String(req.headers['webhook-signature'] ?? ''),
      });
    } catch (error) {
      const reason = error instanceof WebhookVerificationError ? error.message : 'unreadable body';
      process.stdout.write(`refused ${req.url}: Standard Webhooks verification failed (${reason})\n`);
      return answer(res, 401, `${reason}\n`);
    }
    const serviceSignature = serviceSignatureMatches(body, req.headers['x-service-signature']);
    if (!serviceSignature && strictServiceSignature) {
      process.stdout.write(`refused ${req.url}: X-Service-Signature does not match\n`);
      return answer(res, 401, 'X-Service-Signature does not match\n');
    }
    const delivery = String(req.headers['x-service-delivery'] ?? '');
    const repeat = seen.has(delivery) ? ' (again: already received, a receiver would skip it)' : '';
    seen.add(delivery);
    const test = req.headers['x-service-test'] === 'true' ? ' [test]' : '';
    const signatures = String(req.headers['webhook-signature']).split(' ').length;
    const pick = event?.data ?? {};
    process.stdout.write(
      `verified ${req.headers['x-service-event']}${test} delivery ${delivery}${repeat}: ` +
        `${pick.home_team} v ${pick.away_team}: ${pick.pick} (${pick.status})` +
        `${signatures > 1 ? `; ${signatures} signatures (secret rotated in the last 24 h)` : ''}` +
        `; X-Service-Signature ${serviceSignature ? 'matches' : 'does not match this secret (signed with a newer one: switch WEBHOOK_SECRET)'}\n`,
    );
    return answer(res, 204, '');
  });
}

const server = tls
  ? createHttpsServer({ cert: readFileSync(process.env.TLS_CERT ?? `${TLS_DIR}server.pem`), key: readFileSync(process.env.TLS_KEY ?? `${TLS_DIR}server-key.pem`) }, receive)
  : createHttpServer(receive);

server.listen(port, '127.0.0.1', () => {
  const bound = server.address().port;
  process.stdout.write(
    tls
      ? `Webhook receiver on https://hooks.test:${bound}/ (127.0.0.1; map hooks.test with WEBHOOK_HOST_OVERRIDES=hooks.test=127.0.0.1)\n`
      : `Webhook receiver on http://127.0.0.1:${bound}/ (any path; the embedded demo accepts http://127.0.0.1:${bound}/webhooks as a webhook URL)\n`,
  );
});

for (const signal of ['SIGINT', 'SIGTERM']) process.on(signal, () => server.close(() => process.exit(0)));
