import { createHmac } from 'node:crypto';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import {
  generateWebhookSecret,
  signWebhookBody,
  standardWebhookSignature,
  verifyWebhookSignature,
} from '../../src/domain/signature.js';

const SECRET = 'whsec_c2VjcmV0LXNlY3JldC1zZWNyZXQtc2VjcmV0LTAxMjM0NTY3OA==';
const BODY = '{"id":"6a1b","type":"pick.published","data":{"odds":2.1}}';

describe('generateWebhookSecret', () => {
  it("is 'whsec_' + base64 of 32 random bytes", () => {
    const requested: number[] = [];
    const secret = generateWebhookSecret((n) => {
      requested.push(n);
      return Buffer.alloc(n, 0xff);
    });
    expect(requested).toEqual([32]);
    expect(secret).toBe(`whsec_${Buffer.alloc(32, 0xff).toString('base64')}`);
    expect(secret).toBe('whsec_//////////////////////////////////////////8=');
  });

  it('is random by default and decodes to 32 bytes', () => {
    const a = generateWebhookSecret();
    const b = generateWebhookSecret();
    expect(a).not.toBe(b);
    expect(a).toMatch(/^whsec_[A-Za-z0-9+/]{43}=$/);
    expect(Buffer.from(a.slice(6), 'base64')).toHaveLength(32);
  });

  it('refuses a random source that returns the wrong length', () => {
    expect(() => generateWebhookSecret(() => Buffer.alloc(31))).toThrow(RangeError);
  });
});

describe('signWebhookBody', () => {
  it('matches the well-known HMAC-SHA256 example', () => {
    expect(signWebhookBody('key', 'The quick brown fox jumps over the lazy dog')).toBe(
      'sha256=f7bc83f430538424b13298e6aa6fb143ef4d59a14946175997479dbc2d1a3cd8',
    );
  });

  it('is what a receiver computes with createHmac(sha256, hmac_secret)', () => {
    const expected = `sha256=${createHmac('sha256', SECRET).update(BODY).digest('hex')}`;
    expect(signWebhookBody(SECRET, BODY)).toBe(expected);
    // Keyed with the secret string itself, not its base64-decoded bytes.
    const decodedKey = Buffer.from(SECRET.slice(6), 'base64');
    expect(signWebhookBody(SECRET, BODY)).not.toBe(`sha256=${createHmac('sha256', decodedKey).update(BODY).digest('hex')}`);
  });

  it('signs the raw bytes: string and Buffer bodies agree, UTF-8 included', () => {
    const body = '{"home":"Borussia Mönchengladbach","away":"Málaga ⚽"}';
    expect(signWebhookBody(SECRET, Buffer.from(body, 'utf8'))).toBe(signWebhookBody(SECRET, body));
    expect(signWebhookBody(SECRET, body)).toBe(
      `sha256=${createHmac('sha256', Buffer.from(SECRET, 'utf8')).update(Buffer.from(body, 'utf8')).digest('hex')}`,
    );
  });

  it('changes with the body and with the secret', () => {
    expect(signWebhookBody(SECRET, BODY)).not.toBe(signWebhookBody(SECRET, `${BODY} `));
    expect(signWebhookBody(SECRET, BODY)).not.toBe(signWebhookBody(`${SECRET}x`, BODY));
  });
});

describe('verifyWebhookSignature', () => {
  const header = `sha256=${createHmac('sha256', SECRET).update(BODY).digest('hex')}`;

  it('accepts the correct signature', () => {
    expect(verifyWebhookSignature(SECRET, BODY, header)).toBe(true);
    expect(verifyWebhookSignature(SECRET, Buffer.from(BODY), header)).toBe(true);
  });

  it.each([
    ['another body', SECRET, `${BODY}\n`, header],
    ['another secret', 'whsec_other', BODY, header],
    ['a flipped hex digit', SECRET, BODY, header.slice(0, -1) + (header.endsWith('0') ? '1' : '0')],
    ['upper-case hex', SECRET, BODY, `sha256=${header.slice(7).toUpperCase()}`],
    ['missing scheme', SECRET, BODY, header.slice(7)],
    ['other scheme', SECRET, BODY, header.replace('sha256=', 'sha512=')],
    ['shorter value', SECRET, BODY, header.slice(0, -2)],
    ['longer value', SECRET, BODY, `${header}00`],
    ['empty header', SECRET, BODY, ''],
    ['non-ASCII of equal length', SECRET, BODY, `${header.slice(0, -1)}é`],
  ])('rejects %s', (_label, secret, body, value) => {
    expect(verifyWebhookSignature(secret, body, value)).toBe(false);
  });

  it('never throws, even on values outside the type', () => {
    expect(verifyWebhookSignature(SECRET, BODY, undefined as unknown as string)).toBe(false);
    expect(verifyWebhookSignature(SECRET, BODY, 42 as unknown as string)).toBe(false);
    expect(verifyWebhookSignature(undefined as unknown as string, BODY, header)).toBe(false);
  });

  it('verifies its own signatures and nothing else', () => {
    fc.assert(
      fc.property(fc.string(), fc.string({ unit: 'binary' }), fc.string(), (secret, body, other) => {
        const signature = signWebhookBody(secret, body);
        expect(verifyWebhookSignature(secret, body, signature)).toBe(true);
        if (other !== signature) expect(verifyWebhookSignature(secret, body, other)).toBe(false);
      }),
    );
  });
});

describe('standardWebhookSignature', () => {
  it('reproduces the published Standard Webhooks test vector', () => {
    expect(
      standardWebhookSignature(
        'whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw',
        'msg_p5jXN8AQM9LWM0D4loKWxJek',
        1614265330,
        '{"test": 2432232314}',
      ),
    ).toBe('v1,g0hM9SsE+OTPJTGt/tmIKtSyZlE3uFJELVlNIOLJ1OE=');
  });

  it('is HMAC-SHA256 keyed with the decoded secret over id.timestamp.body', () => {
    const key = Buffer.from(SECRET.slice('whsec_'.length), 'base64');
    const expected = createHmac('sha256', key).update(`evt_1.1700000000.${BODY}`).digest('base64');
    expect(standardWebhookSignature(SECRET, 'evt_1', 1700000000, BODY)).toBe(`v1,${expected}`);
    expect(standardWebhookSignature(SECRET, 'evt_1', 1700000000, Buffer.from(BODY))).toBe(`v1,${expected}`);
  });

  it('accepts a secret without the whsec_ prefix, like the reference libraries', () => {
    expect(standardWebhookSignature('MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw', 'msg_p5jXN8AQM9LWM0D4loKWxJek', 1614265330, '{"test": 2432232314}')).toBe(
      'v1,g0hM9SsE+OTPJTGt/tmIKtSyZlE3uFJELVlNIOLJ1OE=',
    );
  });

  it('depends on id, timestamp and body', () => {
    const base = standardWebhookSignature(SECRET, 'evt_1', 1700000000, BODY);
    expect(standardWebhookSignature(SECRET, 'evt_2', 1700000000, BODY)).not.toBe(base);
    expect(standardWebhookSignature(SECRET, 'evt_1', 1700000001, BODY)).not.toBe(base);
    expect(standardWebhookSignature(SECRET, 'evt_1', 1700000000, `${BODY} `)).not.toBe(base);
  });

  it('rejects a timestamp that is not whole seconds', () => {
    expect(() => standardWebhookSignature(SECRET, 'evt_1', 1700000000.5, BODY)).toThrow(RangeError);
    expect(() => standardWebhookSignature(SECRET, 'evt_1', Number.NaN, BODY)).toThrow(RangeError);
  });
});
