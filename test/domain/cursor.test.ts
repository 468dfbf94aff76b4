import { createHash } from 'node:crypto';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { InvalidCursorError, InvalidParameterError } from '../../src/domain/errors.js';
import { boundViolation } from '../../src/domain/bounds.js';
import { decodePickCursor, encodePickCursor, type PickCursor } from '../../src/domain/cursor.js';

const ID = '0190f5e4-7c2a-7b3d-9e8f-1a2b3c4d5e6f';
const KICKOFF = new Date('2026-11-22T10:00:00.000Z');

/** Builds a raw cursor the way an attacker or a future version might, checksum computed correctly. */
function forge(body: string, check?: string): string {
  const sum = check ?? createHash('sha256').update(body).digest('hex').slice(0, 8);
  return Buffer.from(`${body}:${sum}`, 'utf8').toString('base64url');
}

function expectInvalidCursor(s: string): void {
  try {
    decodePickCursor(s);
  } catch (error) {
    expect(error).toBeInstanceOf(InvalidCursorError);
    expect((error as InvalidCursorError).code).toBe('invalid_cursor');
    return;
  }
  expect.fail(`expected InvalidCursorError for ${JSON.stringify(s)}`);
}

const cursorArb: fc.Arbitrary<PickCursor> = fc.record({
  kickoffAt: fc.date({ min: new Date(-8.64e15), max: new Date(8.64e15), noInvalidDate: true }),
  id: fc.uuid(),
});

describe('encodePickCursor / decodePickCursor', () => {
  it('round-trips a concrete cursor', () => {
    const encoded = encodePickCursor({ kickoffAt: KICKOFF, id: ID });
    expect(encoded).toMatch(/^[A-Za-z0-9_-]+$/);
    expect(encoded).not.toContain('=');
    expect(decodePickCursor(encoded)).toEqual({ kickoffAt: KICKOFF, id: ID });
  });

  it('encodes a versioned payload with kickoff milliseconds, id and checksum', () => {
    const encoded = encodePickCursor({ kickoffAt: KICKOFF, id: ID });
    const body = `p1:${KICKOFF.getTime()}:${ID}`;
    const check = createHash('sha256').update(body).digest('hex').slice(0, 8);
    expect(Buffer.from(encoded, 'base64url').toString('utf8')).toBe(`${body}:${check}`);
    expect(encoded).toBe(forge(body));
  });

  it('is deterministic and lowercases the id', () => {
    const upper = encodePickCursor({ kickoffAt: KICKOFF, id: ID.toUpperCase() });
    expect(upper).toBe(encodePickCursor({ kickoffAt: KICKOFF, id: ID }));
    expect(decodePickCursor(upper).id).toBe(ID);
  });

  it('round-trips any valid cursor', () => {
    fc.assert(
      fc.property(cursorArb, (c) => {
        const encoded = encodePickCursor(c);
        expect(encoded.length).toBeLessThanOrEqual(200);
        const decoded = decodePickCursor(encoded);
        expect(decoded.kickoffAt.getTime()).toBe(c.kickoffAt.getTime());
        expect(decoded.id).toBe(c.id.toLowerCase());
        expect(encodePickCursor(decoded)).toBe(encoded);
      }),
    );
  });

  it('refuses to encode garbage (a programming error)', () => {
    expect(() => encodePickCursor({ kickoffAt: new Date(Number.NaN), id: ID })).toThrow(RangeError);
    expect(() => encodePickCursor({ kickoffAt: KICKOFF, id: 'not-a-uuid' })).toThrow(RangeError);
  });

  describe('rejects with InvalidCursorError', () => {
    const valid = encodePickCursor({ kickoffAt: KICKOFF, id: ID });
    const body = `p1:${KICKOFF.getTime()}:${ID}`;

    it.each([
      ['empty string', ''],
      ['over 200 characters', 'A'.repeat(201)],
      ['padding', `${valid}==`],
      ['standard base64 characters', `${valid.slice(0, -1)}+`],
      ['whitespace', ` ${valid}`],
      ['non-ASCII', `${valid}é`],
      ['one base64 character too many', `${valid}A`],
      ['truncated', valid.slice(0, -4)],
      ['plain text', 'hello'],
      ['a UUID', ID],
      ['base64 of JSON', Buffer.from(JSON.stringify({ kickoffAt: KICKOFF, id: ID })).toString('base64url')],
      ['wrong version', forge(`p2:${KICKOFF.getTime()}:${ID}`)],
      ['no version', forge(`${KICKOFF.getTime()}:${ID}`)],
      ['bad checksum', forge(body, '00000000')],
      ['upper-case checksum', forge(body, createHash('sha256').update(body).digest('hex').slice(0, 8).toUpperCase())],
      ['non-UUID id', forge(`p1:${KICKOFF.getTime()}:zzzzzzzz-zzzz-zzzz-zzzz-zzzzzzzzzzzz`)],
      ['UUID with misplaced dashes', forge(`p1:${KICKOFF.getTime()}:0190f5e47-c2a-7b3d-9e8f-1a2b3c4d5e6f`)],
      ['upper-case UUID', forge(`p1:${KICKOFF.getTime()}:${ID.toUpperCase()}`)],
      ['time beyond the Date range', forge(`p1:8640000000000001:${ID}`)],
      ['time with 17 digits', forge(`p1:12345678901234567:${ID}`)],
      ['leading zero', forge(`p1:0${KICKOFF.getTime()}:${ID}`)],
      ['negative zero', forge(`p1:-0:${ID}`)],
      ['fractional time', forge(`p1:1.5:${ID}`)],
      ['NaN time', forge(`p1:NaN:${ID}`)],
      ['Infinity time', forge(`p1:Infinity:${ID}`)],
      ['exponent time', forge(`p1:1e12:${ID}`)],
      ['extra field', forge(`p1:${KICKOFF.getTime()}:${ID}:x`)],
      ['trailing newline in payload', Buffer.from(`${Buffer.from(valid, 'base64url').toString()}\n`).toString('base64url')],
    ])('%s', (_label, input) => {
      expectInvalidCursor(input);
    });

    it('a non-canonical encoding of a valid payload', () => {
      // The last character of an unpadded base64url string carries spare bits; flipping one
      // keeps Node's decoder happy but is not what we issued.
      const payload = Buffer.from(valid, 'base64url');
      const alphabet = 'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_';
      const last = valid.at(-1)!;
      const twin = alphabet[alphabet.indexOf(last) ^ 1]!;
      const tampered = valid.slice(0, -1) + twin;
      // 62-byte payload: the final character has two unused bits, so both strings decode alike.
      expect(payload).toHaveLength(62);
      expect(Buffer.from(tampered, 'base64url').equals(payload)).toBe(true);
      expectInvalidCursor(tampered);
    });

    it('accepts the extreme times it can encode', () => {
      for (const ms of [-8.64e15, 0, 8.64e15]) {
        const encoded = forge(`p1:${ms}:${ID}`);
        expect(decodePickCursor(encoded).kickoffAt.getTime()).toBe(ms);
      }
    });
  });

  it('never throws anything but InvalidCursorError on arbitrary strings', () => {
    fc.assert(
      fc.property(
        fc.oneof(
          fc.string({ unit: 'binary', maxLength: 250 }),
          fc.string({ unit: fc.constantFrom(...'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_='), maxLength: 120 }),
          fc.base64String({ maxLength: 120 }),
        ),
        (s) => {
          try {
            const decoded = decodePickCursor(s);
            expect(encodePickCursor(decoded)).toBe(s);
          } catch (error) {
            expect(error).toBeInstanceOf(InvalidCursorError);
          }
        },
      ),
      { numRuns: 2000 },
    );
  });

  it('detects single-character edits of valid cursors', () => {
    const alphabet = 'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_';
    fc.assert(
      fc.property(cursorArb, fc.nat(), fc.constantFrom(...alphabet), (c, pos, ch) => {
        const encoded = encodePickCursor(c);
        const i = pos % encoded.length;
        fc.pre(encoded[i] !== ch);
        const edited = encoded.slice(0, i) + ch + encoded.slice(i + 1);
        try {
          const decoded = decodePickCursor(edited);
          // Only an edit that still yields a canonical, checksummed cursor may decode.
          expect(encodePickCursor(decoded)).toBe(edited);
        } catch (error) {
          expect(error).toBeInstanceOf(InvalidCursorError);
        }
      }),
      { numRuns: 1000 },
    );
  });
});

describe('boundViolation', () => {
  const PAGE = { default: 50, max: 200 };
  it.each([1, 50, 200])('accepts %d with max 200', (value) => {
    expect(boundViolation(PAGE, 'limit', value)).toBeNull();
  });

  it.each([0, -1, 201, 1.5, Number.NaN, Number.POSITIVE_INFINITY])('rejects %d with max 200', (value) => {
    const error = boundViolation(PAGE, 'limit', value);
    expect(error).toBeInstanceOf(InvalidParameterError);
    expect(error!.extras).toEqual({ parameter: 'limit' });
    expect(error!.message).toBe('limit must be an integer between 1 and 200');
  });

  it('uses the given maximum', () => {
    expect(boundViolation({ default: 20, max: 50 }, 'limit', 50)).toBeNull();
    expect(boundViolation({ default: 20, max: 50 }, 'limit', 51)?.message).toBe('limit must be an integer between 1 and 50');
  });
});
