import { createHmac } from 'node:crypto';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { InvalidParameterError } from '../../src/domain/errors.js';
import type { PickSnapshot } from '../../src/domain/pick-shape.js';
import {
  afterFailedAttempt,
  parseEventTypes,
  responseBodyText,
  storableText,
  storedResponseBody,
  WEBHOOK_RESPONSE_BODY_LIMIT,
  webhookBody,
  webhookHeaders,
} from '../../src/domain/webhook.js';

const SCHEDULE = [60_000, 300_000, 1_800_000, 7_200_000, 43_200_000];

describe('parseEventTypes', () => {
  it('accepts known types in any order and returns them in a stable order', () => {
    expect(parseEventTypes(['pick.settled', 'pick.published'])).toEqual(['pick.published', 'pick.settled']);
    expect(parseEventTypes(['pick.settled'])).toEqual(['pick.settled']);
  });

  it.each([[undefined], [null], ['pick.published'], [[]], [['pick.created']], [['PICK_PUBLISHED']], [[1]], [[null]], [['pick.published', 'pick.published']], [{}]])(
    'refuses %j with invalid_parameter events',
    (raw) => {
      try {
        parseEventTypes(raw);
        expect.unreachable();
      } catch (error) {
        expect(error).toBeInstanceOf(InvalidParameterError);
        expect((error as InvalidParameterError).extras).toEqual({ parameter: 'events' });
      }
    },
  );
});

describe('retry schedule', () => {
  it('retries after 1 min, 5 min, 30 min, 2 h, 12 h, then exhausts: six attempts in all', () => {
    const failedAt = new Date('2026-11-22T12:00:00Z');
    const delays = [1, 2, 3, 4, 5].map((attempt) => {
      const next = afterFailedAttempt(attempt, SCHEDULE, failedAt);
      if (next.kind !== 'retry') throw new Error('expected a retry');
      return next.at.getTime() - failedAt.getTime();
    });
    expect(delays).toEqual(SCHEDULE);
    expect(afterFailedAttempt(6, SCHEDULE, failedAt)).toEqual({ kind: 'exhausted' });
  });

  it('rejects attempt numbers below 1', () => {
    expect(() => afterFailedAttempt(0, SCHEDULE, new Date())).toThrow(RangeError);
    expect(() => afterFailedAttempt(1.5, SCHEDULE, new Date())).toThrow(RangeError);
  });
});

describe('delivery body and headers', () => {
  const pick = {
    id: '01930000-0000-7000-8000-000000000001',
    sport: 'soccer',
    league: 'Premier League',
    homeTeam: 'Arsenal',
    awayTeam: 'Chelsea',
    kickoffAt: '2026-12-01T15:00:00.000Z',
    description: 'Arsenal to win',
    odds: 2.2,
    edgePct: 10,
    confidence: 70,
    status: 'published',
    settledAt: null,
    result: null,
    publishedAt: '2026-11-22T12:00:00.000Z',
  } as unknown as PickSnapshot;
  const event = { id: '01930000-0000-7000-8000-0000000000e1', type: 'pick.published' as const, createdAt: '2026-11-22T12:00:00.000Z', pick };

  it('is the documented delivery body with the documented Pick, identical bytes every time', () => {
    const body = webhookBody(event);
    expect(webhookBody(event)).toBe(body);
    const parsed = JSON.parse(body);
    expect(Object.keys(parsed)).toEqual(['id', 'type', 'created_at', 'data']);
    expect(parsed).toMatchObject({ id: event.id, type: 'pick.published', created_at: event.createdAt, data: { id: pick.id, home_team: 'Arsenal', pick: 'Arsenal to win' } });
  });

  it('signs exactly the body bytes, and carries the delivery id in both header families', () => {
    const body = webhookBody(event);
    const headers = webhookHeaders({ deliveryId: 'd-1', eventType: 'pick.published', secret: 'whsec_c2VjcmV0', body, timestampSeconds: 1_700_000_000 });
    expect(headers['x-service-signature']).toBe(`sha256=${createHmac('sha256', 'whsec_c2VjcmV0').update(body).digest('hex')}`);
    expect(headers['x-service-delivery']).toBe('d-1');
    expect(headers['webhook-id']).toBe('d-1');
    expect(headers['webhook-timestamp']).toBe('1700000000');
    expect(headers['webhook-signature']).toBe(`v1,${createHmac('sha256', Buffer.from('c2VjcmV0', 'base64')).update(`d-1.1700000000.${body}`).digest('base64')}`);
    expect(headers['x-service-event']).toBe('pick.published');
    expect(headers['content-type']).toBe('application/json');
  });
});

/** True when `text` has no lone surrogate, i.e. encodes to UTF-8 and decodes back to itself. */
function isWellFormed(text: string): boolean {
  return new TextDecoder('utf-8', { fatal: true, ignoreBOM: true }).decode(new TextEncoder().encode(text)) === text;
}
const utf8Length = (text: string) => Buffer.byteLength(text, 'utf8');

/** Any UTF-16 unit sequence, NUL and surrogate halves (paired or not) made frequent. */
const anyUtf16 = (maxLength: number) =>
  fc.string({
    unit: fc.oneof(fc.integer({ min: 0, max: 0xffff }).map((code) => String.fromCharCode(code)), fc.constantFrom('\0', '\uD83D', '\uDE00', '\uDBFF', '\uDC00')),
    maxLength,
  });
/** Well-formed text over the full code point range (astral included), NUL possible. */
const anyCodePoints = (maxLength: number) => fc.string({ unit: 'binary', maxLength });
/** Text PostgreSQL stores as is: well-formed, no NUL. */
const cleanText = (maxLength: number) => anyCodePoints(maxLength).map((text) => text.replaceAll('\0', ''));

function expectStorable(text: string, maxBytes: number): void {
  expect(isWellFormed(text)).toBe(true);
  expect(text).not.toContain('\0');
  expect(utf8Length(text)).toBeLessThanOrEqual(maxBytes);
}

describe('stored response bodies and error texts', () => {
  it('replaces NUL and lone surrogates with U+FFFD and keeps everything else', () => {
    expect(storedResponseBody('a\0b')).toBe('a\uFFFDb');
    expect(storedResponseBody('x\uD800y\uDC00z')).toBe('x\uFFFDy\uFFFDz');
    expect(storedResponseBody('tab\tline\n\u00e9\u{1F600}\uFEFF')).toBe('tab\tline\n\u00e9\u{1F600}\uFEFF');
  });

  it('cuts at 4 KiB of UTF-8 between characters, never inside a multi-byte character or a surrogate pair', () => {
    expect(storedResponseBody('x'.repeat(10_000))).toBe('x'.repeat(4_096));
    // 4,095 ASCII bytes leave 1 byte: the 2-, 3- and 4-byte character after them is left out whole.
    for (const wide of ['\u00e9', '\u20ac', '\u{1F600}']) expect(storedResponseBody(`${'x'.repeat(4_095)}${wide}`)).toBe('x'.repeat(4_095));
    expect(storedResponseBody('\u{1F600}'.repeat(2_000))).toBe('\u{1F600}'.repeat(1_024));
    // A replaced NUL counts as the 3 bytes of U+FFFD.
    expect(utf8Length(storedResponseBody('\0'.repeat(4_096)))).toBe(4_095);
    expect(storableText('\u00e9\u00e9\u00e9', 5)).toBe('\u00e9\u00e9');
  });

  it('decodes the bytes read with replacement; a cut answer loses its incomplete last character instead', () => {
    expect(responseBodyText(Buffer.from([0x61, 0x00, 0x62]), { truncated: false })).toBe('a\uFFFDb');
    expect(responseBodyText(Buffer.from([0x61, 0xff, 0xc3, 0x28, 0x62]), { truncated: false })).toBe('a\uFFFD\uFFFD(b');
    // An encoded surrogate (CESU) is invalid UTF-8, not a way to smuggle one in.
    expect(responseBodyText(Buffer.from([0xed, 0xa0, 0x80]), { truncated: false })).toBe('\uFFFD\uFFFD\uFFFD');
    const euro = Buffer.from('ok\u20ac', 'utf8');
    expect(responseBodyText(euro.subarray(0, 4), { truncated: true })).toBe('ok');
    expect(responseBodyText(euro.subarray(0, 4), { truncated: false })).toBe('ok\uFFFD');
    expect(responseBodyText(Buffer.from('\uFEFFhi', 'utf8'), { truncated: false })).toBe('\uFEFFhi');
    expect(responseBodyText(Buffer.from('abcdef'), { truncated: true, maxBytes: 4 })).toBe('abcd');
  });

  it('property: any string becomes well-formed text without NUL within the limit, a prefix of the replaced text', () => {
    fc.assert(
      fc.property(fc.oneof(anyUtf16(6_000), anyCodePoints(3_000)), fc.integer({ min: 0, max: 5_000 }), (text, maxBytes) => {
        const stored = storableText(text, maxBytes);
        expectStorable(stored, maxBytes);
        expect(storableText(text, Number.MAX_SAFE_INTEGER).startsWith(stored)).toBe(true);
        expectStorable(storedResponseBody(text), WEBHOOK_RESPONSE_BODY_LIMIT);
      }),
    );
  });

  it('property: clean text within the limit is stored unchanged, and storing is idempotent', () => {
    fc.assert(
      fc.property(cleanText(1_500), (text) => {
        fc.pre(utf8Length(text) <= WEBHOOK_RESPONSE_BODY_LIMIT);
        expect(storedResponseBody(text)).toBe(text);
        expect(responseBodyText(Buffer.from(text, 'utf8'), { truncated: false })).toBe(text);
      }),
    );
    fc.assert(
      fc.property(anyUtf16(6_000), (text) => {
        expect(storedResponseBody(storedResponseBody(text))).toBe(storedResponseBody(text));
      }),
    );
  });

  it('property: any bytes decode to well-formed text without NUL within the limit', () => {
    fc.assert(
      fc.property(fc.uint8Array({ maxLength: 6_000 }), fc.boolean(), (bytes, truncated) => {
        expectStorable(responseBodyText(bytes, { truncated }), WEBHOOK_RESPONSE_BODY_LIMIT);
      }),
    );
  });

  it('property: the first n bytes of clean text, read as a cut answer, give a prefix of it with no replacement added', () => {
    fc.assert(
      fc.property(cleanText(400), fc.nat(), (text, cut) => {
        const bytes = Buffer.from(text, 'utf8');
        const length = cut % (bytes.length + 1);
        const read = responseBodyText(bytes.subarray(0, length), { truncated: true });
        expect(text.startsWith(read)).toBe(true);
        // Only the cut character is lost: at most its first 3 bytes.
        expect(utf8Length(read)).toBeGreaterThanOrEqual(length - 3);
      }),
    );
  });
});
