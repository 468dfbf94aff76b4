/** Webhook signing (docs/API.md, "Delivery"): X-Service-Signature plus Standard Webhooks v1 headers. */
import { createHmac, randomBytes as cryptoRandomBytes, timingSafeEqual } from 'node:crypto';

const SECRET_PREFIX = 'whsec_';
const SECRET_BYTES = 32;

/**
 * 'whsec_' + base64 of 32 random bytes. The same string works for both schemes: X-Service-Signature
 * keys HMAC with its UTF-8 bytes, Standard Webhooks with the base64-decoded part.
 */
export function generateWebhookSecret(randomBytes: (n: number) => Buffer = cryptoRandomBytes): string {
  const bytes = randomBytes(SECRET_BYTES);
  if (bytes.length !== SECRET_BYTES) {
    throw new RangeError(`generateWebhookSecret: expected ${SECRET_BYTES} random bytes, got ${bytes.length}`);
  }
  return SECRET_PREFIX + bytes.toString('base64');
}

/** 'sha256=' + hex HMAC-SHA256 of the raw body, keyed with the secret string as given. */
export function signWebhookBody(secret: string, body: string | Buffer): string {
  return `sha256=${createHmac('sha256', secret).update(body).digest('hex')}`;
}

/** Constant-time check of an X-Service-Signature value; false (never an exception) on any mismatch. */
export function verifyWebhookSignature(secret: string, body: string | Buffer, header: string): boolean {
  try {
    if (typeof header !== 'string') return false;
    const expected = Buffer.from(signWebhookBody(secret, body), 'utf8');
    const actual = Buffer.from(header, 'utf8');
    // timingSafeEqual requires equal lengths; a length difference reveals nothing secret.
    if (expected.length !== actual.length) return false;
    return timingSafeEqual(expected, actual);
  } catch {
    return false;
  }
}

/**
 * Standard Webhooks v1 signature ('webhook-signature' header value): HMAC-SHA256 keyed
 * with the base64-decoded secret over "<id>.<timestamp>.<body>", as 'v1,<base64>'.
 */
export function standardWebhookSignature(
  secret: string,
  messageId: string,
  timestampSeconds: number,
  body: string | Buffer,
): string {
  if (!Number.isSafeInteger(timestampSeconds)) {
    throw new RangeError(`standardWebhookSignature: timestamp must be integer seconds, got ${timestampSeconds}`);
  }
  const encoded = secret.startsWith(SECRET_PREFIX) ? secret.slice(SECRET_PREFIX.length) : secret;
  const key = Buffer.from(encoded, 'base64');
  const mac = createHmac('sha256', key)
    .update(`${messageId}.${timestampSeconds}.`, 'utf8')
    .update(body)
    .digest('base64');
  return `v1,${mac}`;
}
