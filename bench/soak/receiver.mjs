/**
 * The soak's webhook receiver on the shared one (bench/lib/webhook-receiver.mjs: HTTPS, test
 * certificate; hooks.test is mapped to 127.0.0.1 by WEBHOOK_HOST_OVERRIDES). It verifies every
 * delivery, Standard Webhooks with the `standardwebhooks` package and X-Service-Signature with
 * node:crypto, and answers a share of attempts (SOAK_RECEIVER_FAIL_SHARE, drawn from its
 * seeded generator) 503 so retries happen too.
 */
import { createHmac, timingSafeEqual } from 'node:crypto';
import { Webhook } from 'standardwebhooks';
import { startWebhookReceiver } from '../lib/webhook-receiver.mjs';
import { settings } from './settings.mjs';

export async function startReceiver(r) {
  const subscriptions = new Map();
  const arrivals = [];
  const unverified = [];
  const verify = (arrival, raw, sub) => {
    try {
      sub.standard.verify(raw.toString('utf8'), { 'webhook-id': arrival.webhookId, 'webhook-timestamp': arrival.timestamp, 'webhook-signature': arrival.signature });
      arrival.standardOk = true;
    } catch {
      arrival.standardOk = false;
    }
    const expected = Buffer.from(`sha256=${createHmac('sha256', sub.secret).update(raw).digest('hex')}`);
    const presented = Buffer.from(arrival.serviceSignature);
    arrival.serviceOk = expected.length === presented.length && timingSafeEqual(expected, presented);
  };
  const server = await startWebhookReceiver({
    clock: Date.now,
    onDelivery({ req, raw, at }) {
      const header = (name) => String(req.headers[name] ?? '');
      const arrival = {
        at,
        path: req.url ?? '',
        method: req.method,
        delivery: header('x-service-delivery'),
        webhookId: header('webhook-id'),
        timestamp: header('webhook-timestamp'),
        signature: header('webhook-signature'),
        serviceSignature: header('x-service-signature'),
        eventType: header('x-service-event'),
        eventId: null,
        standardOk: null,
        serviceOk: null,
        answered: null,
      };
      try {
        arrival.eventId = JSON.parse(raw.toString('utf8')).id ?? null;
      } catch {
        // counted as unverifiable below
      }
      const sub = subscriptions.get(arrival.path);
      if (sub) verify(arrival, raw, sub);
      else unverified.push({ arrival, raw });
      arrivals.push(arrival);
      arrival.answered = r() < settings.receiverFailShare ? 503 : 200;
      return { status: arrival.answered, body: arrival.answered === 200 ? 'ok' : 'soak: injected failure, retry please' };
    },
  });
  return {
    port: server.port,
    arrivals,
    subscriptions,
    register(subPath, secret, info) {
      const sub = { ...info, path: subPath, secret, standard: new Webhook(secret) };
      subscriptions.set(subPath, sub);
      // A delivery that beat the registration (none should): verified now.
      for (let i = unverified.length - 1; i >= 0; i -= 1) {
        if (unverified[i].arrival.path !== subPath) continue;
        verify(unverified[i].arrival, unverified[i].raw, sub);
        unverified.splice(i, 1);
      }
    },
    close: server.close,
  };
}
