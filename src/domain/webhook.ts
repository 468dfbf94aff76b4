/**
 * Webhook rules that need no I/O: event types, the subscription limit, the retry schedule,
 * the delivery body (docs/API.md, "Webhooks") and the headers of one attempt (docs/API.md, "Delivery"; Standard Webhooks).
 */
import { InvalidParameterError } from './errors.js';
import { priceEdges } from './odds.js';
import { v1PickJson, withNulls, type PickSnapshot } from './pick-shape.js';
import { signWebhookBody, standardWebhookSignature } from './signature.js';

/**
 * pick.availability_changed is sent only to subscriptions that name it (docs/API.md,
 * "Availability"): subscriptions made before it existed receive nothing new.
 */
export const WEBHOOK_EVENT_TYPES = ['pick.published', 'pick.settled', 'pick.availability_changed'] as const;
export type WebhookEventType = (typeof WEBHOOK_EVENT_TYPES)[number];

export const MAX_SUBSCRIPTIONS_PER_KEY = 5;
/** Attempt timeout: success is a 2xx within this time (docs/API.md, "Success and retries"). */
export const WEBHOOK_TIMEOUT_MS = 10_000;
/** Stored per attempt: the first bytes (UTF-8) of the receiver's answer. */
export const WEBHOOK_RESPONSE_BODY_LIMIT = 4_096;
/** Stored per delivery: the last error, in UTF-8 bytes (it may quote the receiver, e.g. a Location). */
export const WEBHOOK_ERROR_TEXT_LIMIT = 500;
/** Names the service and the delivery format's version; no URL, since the service has no fixed public address. */
export const WEBHOOK_USER_AGENT = 'PicksAPI-Webhooks/1.0';
/**
 * After a secret rotation the previous secret still signs (beside the new one, in
 * webhook-signature only) for this long, so Standard Webhooks receivers switch without losing
 * deliveries.
 */
export const WEBHOOK_SECRET_OVERLAP_MS = 24 * 60 * 60 * 1000;
/** A test delivery (POST /api/v1/webhooks/:id/test) is always this type, with a sample pick. */
export const WEBHOOK_TEST_EVENT_TYPE = 'pick.published' satisfies WebhookEventType;

/** The statuses of subscriptions and deliveries: the one list the database checks, GraphQL enums and OpenAPI read. */
export const WEBHOOK_SUBSCRIPTION_STATUSES = ['active', 'exhausted'] as const;
export type WebhookSubscriptionStatus = (typeof WEBHOOK_SUBSCRIPTION_STATUSES)[number];
export const WEBHOOK_DELIVERY_STATUSES = ['pending', 'succeeded', 'failed', 'cancelled'] as const;
export type WebhookDeliveryStatus = (typeof WEBHOOK_DELIVERY_STATUSES)[number];

/** A non-empty list of distinct known event types, in a stable order. */
export function parseEventTypes(raw: unknown): WebhookEventType[] {
  if (!Array.isArray(raw) || raw.length === 0) {
    throw new InvalidParameterError('events', `events must be a non-empty array of ${WEBHOOK_EVENT_TYPES.join(', ')}`);
  }
  const chosen = new Set<WebhookEventType>();
  for (const item of raw) {
    if (typeof item !== 'string' || !(WEBHOOK_EVENT_TYPES as readonly string[]).includes(item)) {
      throw new InvalidParameterError('events', `unknown event type ${JSON.stringify(item)}; use ${WEBHOOK_EVENT_TYPES.join(', ')}`);
    }
    if (chosen.has(item as WebhookEventType)) throw new InvalidParameterError('events', `event type ${item} is listed twice`);
    chosen.add(item as WebhookEventType);
  }
  return WEBHOOK_EVENT_TYPES.filter((type) => chosen.has(type));
}

/**
 * What follows a failed attempt. Attempt 1 runs at once; attempt n + 1 runs schedule[n - 1]
 * after attempt n failed; when the last retry (attempt schedule.length + 1) fails, the
 * subscription is exhausted.
 */
export type AfterFailure = { kind: 'retry'; at: Date } | { kind: 'exhausted' };

export function afterFailedAttempt(attemptNumber: number, scheduleMs: readonly number[], failedAt: Date): AfterFailure {
  if (!Number.isInteger(attemptNumber) || attemptNumber < 1) throw new RangeError(`attempt numbers start at 1, got ${attemptNumber}`);
  const delay = scheduleMs[attemptNumber - 1];
  if (delay === undefined) return { kind: 'exhausted' };
  return { kind: 'retry', at: new Date(failedAt.getTime() + delay) };
}

export interface WebhookEvent {
  id: string;
  type: WebhookEventType;
  createdAt: string;
  pick: PickSnapshot;
}

/** The delivery body: the same bytes on every attempt of a delivery. A test delivery adds `"test": true`. */
export function webhookBody(event: WebhookEvent, options: { test?: boolean } = {}): string {
  const body = { id: event.id, type: event.type, created_at: event.createdAt, data: v1PickJson(event.pick) };
  return JSON.stringify(options.test ? { ...body, test: true } : body);
}

/**
 * The pick a test delivery carries: obviously a sample (teams and league say so), published,
 * kicking off a day after `now`, with the fields of a real pick so receivers parse it as one.
 */
const SAMPLE_PRICE = { odds: 2.1, referenceFairOdds: 2.01, taxRate: 0 } as const;
/** The sample's edges and stake, computed as a real pick's are: a receiver checking them finds them consistent. */
const samplePricing = priceEdges(SAMPLE_PRICE);

export function sampleWebhookPick(id: string, now: Date): PickSnapshot {
  const kickoff = new Date(now.getTime() + 24 * 60 * 60 * 1000);
  kickoff.setUTCMinutes(0, 0, 0);
  return withNulls({
    id,
    sport: 'soccer',
    league: 'Sample League',
    homeTeam: 'Sample Home FC',
    awayTeam: 'Sample Away FC',
    kickoffAt: kickoff.toISOString(),
    description: 'Sample Home FC to win (test delivery)',
    odds: SAMPLE_PRICE.odds,
    edgePct: samplePricing.edgePct,
    confidence: 62,
    status: 'published',
    settledAt: null,
    result: null,
    market: 'h2h',
    selection: 'Sample Home FC',
    bookmakerName: 'Sample Bookmaker',
    bookmakerSlug: 'sample',
    referenceFairOdds: SAMPLE_PRICE.referenceFairOdds,
    taxRate: SAMPLE_PRICE.taxRate,
    edgePctPostTax: samplePricing.edgePctPostTax,
    kellyFraction: samplePricing.kellyFraction,
    edgeTier: samplePricing.edgeTier,
    stakePct: samplePricing.stakePct,
    publishedAt: now.toISOString(),
    warnings: [],
  });
}

/** Until when the secret replaced by a rotation at `rotatedAt` still signs (beside the new one). */
export function previousSecretExpiry(rotatedAt: Date): Date {
  return new Date(rotatedAt.getTime() + WEBHOOK_SECRET_OVERLAP_MS);
}

export interface AttemptHeaderInput {
  deliveryId: string;
  eventType: WebhookEventType;
  secret: string;
  /**
   * The secret before the last rotation, while its overlap lasts: webhook-signature then carries
   * both signatures, new first, space-separated (Standard Webhooks). X-Service-Signature keeps
   * the one documented value, under the new secret.
   */
  previousSecret?: string | null;
  body: string;
  timestampSeconds: number;
  /** A test delivery: X-Service-Test: true. */
  test?: boolean;
}

/** Headers of one attempt; signatures cover exactly `body` as sent. */
export function webhookHeaders(input: AttemptHeaderInput): Record<string, string> {
  const secrets = input.previousSecret ? [input.secret, input.previousSecret] : [input.secret];
  return {
    'content-type': 'application/json',
    'user-agent': WEBHOOK_USER_AGENT,
    'x-service-signature': signWebhookBody(input.secret, input.body),
    'x-service-event': input.eventType,
    'x-service-delivery': input.deliveryId,
    ...(input.test ? { 'x-service-test': 'true' } : {}),
    'webhook-id': input.deliveryId,
    'webhook-timestamp': String(input.timestampSeconds),
    'webhook-signature': secrets.map((secret) => standardWebhookSignature(secret, input.deliveryId, input.timestampSeconds, input.body)).join(' '),
  };
}

const LONE_SURROGATE = /[\uD800-\uDBFF](?![\uDC00-\uDFFF])|(?<![\uD800-\uDBFF])[\uDC00-\uDFFF]/g;
const REPLACEMENT = '\uFFFD';

/** The longest prefix of `text` that is at most `maxBytes` in UTF-8, cut between characters. */
function capUtf8(text: string, maxBytes: number): string {
  // Every UTF-16 unit is at most 3 UTF-8 bytes: short text needs no counting.
  if (text.length * 3 <= maxBytes) return text;
  let bytes = 0;
  for (let index = 0; index < text.length; ) {
    const code = text.codePointAt(index)!;
    const size = code < 0x80 ? 1 : code < 0x800 ? 2 : code < 0x10000 ? 3 : 4;
    if (bytes + size > maxBytes) return text.slice(0, index);
    bytes += size;
    index += code > 0xffff ? 2 : 1;
  }
  return text;
}

/**
 * Receiver-controlled text made storable in a PostgreSQL text column: NUL (which PostgreSQL
 * text cannot hold) and lone surrogates (not encodable as UTF-8) become U+FFFD, then the text
 * is cut to at most `maxBytes` of UTF-8 between two characters, never inside one. Clean text
 * within the limit comes back unchanged.
 */
export function storableText(text: string, maxBytes: number): string {
  return capUtf8(text.replace(LONE_SURROGATE, REPLACEMENT).replaceAll('\0', REPLACEMENT), maxBytes);
}

/** A response body as stored in the deliveries log (an already decoded string). */
export function storedResponseBody(text: string): string {
  return storableText(text, WEBHOOK_RESPONSE_BODY_LIMIT);
}

/**
 * The bytes read of a receiver's answer as stored text: invalid UTF-8 becomes U+FFFD (as a
 * browser decodes it; a leading BOM is kept as a character), then storableText. `truncated`:
 * the bytes are only the first part of the answer, so a character cut at their end is left out
 * rather than replaced.
 */
export function responseBodyText(bytes: Uint8Array, options: { truncated: boolean; maxBytes?: number }): string {
  // stream: true holds back an incomplete last sequence instead of replacing it.
  const text = new TextDecoder('utf-8', { ignoreBOM: true }).decode(bytes, { stream: options.truncated });
  return storableText(text, options.maxBytes ?? WEBHOOK_RESPONSE_BODY_LIMIT);
}
