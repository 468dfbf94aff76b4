/**
 * The pure rules behind the webhook tooling (src/domain/webhook.ts): the headers of an attempt
 * during a rotation overlap and of a test delivery, the test body and the sample pick, the
 * overlap's end, and the User-Agent.
 */
import { createHmac } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { Webhook } from 'standardwebhooks';
import { generateWebhookSecret, verifyWebhookSignature } from '../../src/domain/signature.js';
import {
  previousSecretExpiry,
  sampleWebhookPick,
  WEBHOOK_SECRET_OVERLAP_MS,
  WEBHOOK_USER_AGENT,
  webhookBody,
  webhookHeaders,
} from '../../src/domain/webhook.js';

const NOW = new Date('2026-11-22T12:34:56.789Z');
const ID = '01890000-0000-7000-8000-000000000001';

function event(now = NOW) {
  return { id: ID, type: 'pick.published' as const, createdAt: now.toISOString(), pick: sampleWebhookPick('01890000-0000-7000-8000-000000000002', now) };
}

describe('webhookHeaders', () => {
  it('signs with one secret: one webhook-signature value, no X-Service-Test', () => {
    const secret = generateWebhookSecret();
    const body = webhookBody(event());
    const headers = webhookHeaders({ deliveryId: ID, eventType: 'pick.published', secret, body, timestampSeconds: 1_800_000_000 });
    expect(headers['webhook-signature']!.split(' ')).toHaveLength(1);
    expect(headers['x-service-test']).toBeUndefined();
    expect(verifyWebhookSignature(secret, body, headers['x-service-signature']!)).toBe(true);
  });

  it('with a previous secret: webhook-signature is "v1,<new> v1,<old>", X-Service-Signature the new one alone', () => {
    const [secret, previousSecret] = [generateWebhookSecret(), generateWebhookSecret()];
    const body = webhookBody(event());
    const timestampSeconds = 1_800_000_000;
    const headers = webhookHeaders({ deliveryId: ID, eventType: 'pick.published', secret, previousSecret, body, timestampSeconds });
    const sign = (key: string) => `v1,${createHmac('sha256', Buffer.from(key.slice(6), 'base64')).update(`${ID}.${timestampSeconds}.${body}`).digest('base64')}`;
    expect(headers['webhook-signature']).toBe(`${sign(secret)} ${sign(previousSecret)}`);
    expect(headers['x-service-signature']).toBe(`sha256=${createHmac('sha256', secret).update(body).digest('hex')}`);
  });

  it('a Standard Webhooks receiver of either secret verifies the overlap headers (the standardwebhooks package)', () => {
    const [secret, previousSecret] = [generateWebhookSecret(), generateWebhookSecret()];
    const now = new Date();
    const body = webhookBody(event(now));
    const headers = webhookHeaders({ deliveryId: ID, eventType: 'pick.published', secret, previousSecret, body, timestampSeconds: Math.floor(now.getTime() / 1000) });
    for (const key of [secret, previousSecret]) expect(new Webhook(key).verify(body, headers)).toMatchObject({ id: ID });
    expect(() => new Webhook(generateWebhookSecret()).verify(body, headers)).toThrow();
  });

  it('a test delivery carries X-Service-Test: true and its body "test": true beside the usual fields', () => {
    const body = webhookBody(event(), { test: true });
    const headers = webhookHeaders({ deliveryId: ID, eventType: 'pick.published', secret: generateWebhookSecret(), body, timestampSeconds: 1_800_000_000, test: true });
    expect(headers['x-service-test']).toBe('true');
    const parsed = JSON.parse(body);
    expect(Object.keys(parsed)).toEqual(['id', 'type', 'created_at', 'data', 'test']);
    expect(parsed).toMatchObject({ type: 'pick.published', test: true, data: { status: 'published', sport: 'soccer', result: null } });
    expect(JSON.parse(webhookBody(event()))).not.toHaveProperty('test');
  });
});

describe('sample pick, overlap, User-Agent', () => {
  it('the sample pick kicks off about a day later, on the hour, and says it is a sample', () => {
    const pick = sampleWebhookPick('01890000-0000-7000-8000-000000000003', NOW);
    expect(pick.kickoffAt).toBe('2026-11-23T12:00:00.000Z');
    expect(`${pick.homeTeam} ${pick.awayTeam} ${pick.league}`).toMatch(/Sample/);
    // The documented Pick: confidence is an integer from 0 to 100.
    expect(Number.isInteger(pick.confidence) && pick.confidence >= 0 && pick.confidence <= 100).toBe(true);
  });

  it('the previous secret signs for exactly 24 h after the rotation', () => {
    expect(WEBHOOK_SECRET_OVERLAP_MS).toBe(86_400_000);
    expect(previousSecretExpiry(NOW).toISOString()).toBe('2026-11-23T12:34:56.789Z');
  });

  it('the User-Agent names the service and no placeholder URL', () => {
    expect(WEBHOOK_USER_AGENT).toBe('PicksAPI-Webhooks/1.0');
    expect(WEBHOOK_USER_AGENT).not.toMatch(/example|https?:/);
  });
});
