import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import {
  perUtcPeriod,
  addDays,
  parseIsoTimestamp,
  startOfNextUtcMonth,
  startOfUtcDay,
  utcDateString,
  utcMonthKey,
} from '../../src/domain/time.js';

const iso = (value: string): string | undefined => parseIsoTimestamp(value)?.toISOString();

describe('parseIsoTimestamp', () => {
  it.each([
    ['2026-11-22T10:00:00Z', '2026-11-22T10:00:00.000Z'],
    ['2026-11-22T10:00:00.123+02:00', '2026-11-22T08:00:00.123Z'],
    ['2026-11-22T10:00:00-05:30', '2026-11-22T15:30:00.000Z'],
    ['2026-11-22T10:00:00+00:00', '2026-11-22T10:00:00.000Z'],
    ['2026-11-22T10:00:00-00:00', '2026-11-22T10:00:00.000Z'],
    ['2026-11-22T10:00Z', '2026-11-22T10:00:00.000Z'],
    ['2026-11-22T10:00:00.1Z', '2026-11-22T10:00:00.100Z'],
    ['2026-11-22T10:00:00.123456789Z', '2026-11-22T10:00:00.123Z'],
    ['2026-11-22T10:00:00.999999Z', '2026-11-22T10:00:00.999Z'],
    ['2026-11-22T00:30:00+01:00', '2026-11-21T23:30:00.000Z'],
    ['2026-12-31T23:00:00-02:00', '2027-01-01T01:00:00.000Z'],
    ['2024-02-29T12:00:00Z', '2024-02-29T12:00:00.000Z'],
    ['2000-02-29T12:00:00Z', '2000-02-29T12:00:00.000Z'],
    ['1970-01-01T00:00:00Z', '1970-01-01T00:00:00.000Z'],
    ['9999-12-31T23:59:59.999Z', '9999-12-31T23:59:59.999Z'],
    ['2026-01-31T23:59:59Z', '2026-01-31T23:59:59.000Z'],
  ])('parses %s', (input, expected) => {
    expect(iso(input)).toBe(expected);
  });

  it.each([
    '',
    'garbage',
    '2026-11-22',
    '2026-11-22T10:00:00',
    '2026-11-22T10:00',
    '2026-11-22 10:00:00Z',
    '2026-11-22t10:00:00Z',
    '2026-11-22T10:00:00z',
    '2026-02-30T10:00:00Z',
    '2026-02-29T10:00:00Z',
    '1900-02-29T10:00:00Z',
    '2026-04-31T10:00:00Z',
    '2026-13-01T10:00:00Z',
    '2026-00-10T10:00:00Z',
    '2026-11-00T10:00:00Z',
    '2026-11-22T24:00:00Z',
    '2026-11-22T23:60:00Z',
    '2026-11-22T23:59:60Z',
    '2026-11-22T10:00:00+24:00',
    '2026-11-22T10:00:00+02:60',
    '2026-11-22T10:00:00+0200',
    '2026-11-22T10:00:00+02',
    '2026-11-22T10:00:00.Z',
    '2026-11-22T10:00:00.1234567890Z',
    '2026-11-22T10:00:00ZZ',
    ' 2026-11-22T10:00:00Z',
    '2026-11-22T10:00:00Z ',
    '2026-11-22T10:00:00Z\n',
    '1969-12-31T23:59:59Z',
    '0000-01-01T00:00:00Z',
    '+2026-11-22T10:00:00Z',
    '-002026-11-22T10:00:00Z',
    '10000-01-01T00:00:00Z',
    '2026-1-22T10:00:00Z',
    '2026-11-22T1:00:00Z',
    '２０２６-11-22T10:00:00Z',
    '1763805600000',
    'Sun, 22 Nov 2026 10:00:00 GMT',
    '2026-11-22T10:00:00.123+02:00' + '0'.repeat(100),
  ])('rejects %j', (input) => {
    expect(parseIsoTimestamp(input)).toBeNull();
  });

  it('round-trips every Date.toISOString() in range', () => {
    fc.assert(
      fc.property(
        fc.date({ min: new Date('1970-01-01T00:00:00.000Z'), max: new Date('9999-12-31T23:59:59.999Z'), noInvalidDate: true }),
        (d) => {
          expect(parseIsoTimestamp(d.toISOString())?.getTime()).toBe(d.getTime());
        },
      ),
    );
  });

  it('applies offsets exactly', () => {
    fc.assert(
      fc.property(
        fc.date({ min: new Date('1971-01-01T00:00:00.000Z'), max: new Date('9998-12-31T00:00:00.000Z'), noInvalidDate: true }),
        fc.integer({ min: -23 * 60 - 59, max: 23 * 60 + 59 }),
        (d, offsetMinutes) => {
          // Render the same instant as local time at the offset.
          const local = new Date(d.getTime() + offsetMinutes * 60_000).toISOString().slice(0, 23);
          const abs = Math.abs(offsetMinutes);
          const zone = `${offsetMinutes < 0 ? '-' : '+'}${String(Math.floor(abs / 60)).padStart(2, '0')}:${String(abs % 60).padStart(2, '0')}`;
          expect(parseIsoTimestamp(local + zone)?.getTime()).toBe(d.getTime());
        },
      ),
    );
  });

  it('returns null (never throws) on arbitrary strings', () => {
    fc.assert(
      fc.property(fc.string({ unit: 'binary', maxLength: 60 }), (s) => {
        const parsed = parseIsoTimestamp(s);
        if (parsed !== null) expect(Number.isNaN(parsed.getTime())).toBe(false);
      }),
    );
  });
});

describe('UTC calendar helpers', () => {
  const at = new Date('2026-11-22T15:45:12.345Z');

  it('startOfUtcDay truncates to midnight UTC', () => {
    expect(startOfUtcDay(at).toISOString()).toBe('2026-11-22T00:00:00.000Z');
    expect(startOfUtcDay(new Date('2026-11-22T00:00:00.000Z')).toISOString()).toBe('2026-11-22T00:00:00.000Z');
    expect(startOfUtcDay(new Date('2026-11-22T23:59:59.999Z')).toISOString()).toBe('2026-11-22T00:00:00.000Z');
  });

  it('addDays moves in whole 24 h steps', () => {
    expect(addDays(at, 1).toISOString()).toBe('2026-11-23T15:45:12.345Z');
    expect(addDays(at, -30).toISOString()).toBe('2026-10-23T15:45:12.345Z');
    expect(addDays(new Date('2024-02-28T12:00:00Z'), 1).toISOString()).toBe('2024-02-29T12:00:00.000Z');
    expect(addDays(new Date('2026-12-31T12:00:00Z'), 1).toISOString()).toBe('2027-01-01T12:00:00.000Z');
    expect(addDays(at, 0).getTime()).toBe(at.getTime());
    expect(addDays(at, 0)).not.toBe(at);
  });

  it('utcDateString is the UTC date, not the local one', () => {
    expect(utcDateString(at)).toBe('2026-11-22');
    expect(utcDateString(new Date('2026-11-22T23:59:59.999Z'))).toBe('2026-11-22');
    expect(utcDateString(new Date('2026-11-22T00:30:00+01:00'))).toBe('2026-11-21');
    expect(utcDateString(new Date('1970-01-01T00:00:00Z'))).toBe('1970-01-01');
  });

  it('month helpers', () => {
    expect(startOfNextUtcMonth(at).toISOString()).toBe('2026-12-01T00:00:00.000Z');
    expect(startOfNextUtcMonth(new Date('2026-12-31T23:59:59.999Z')).toISOString()).toBe('2027-01-01T00:00:00.000Z');
    expect(startOfNextUtcMonth(new Date('2026-01-31T10:00:00Z')).toISOString()).toBe('2026-02-01T00:00:00.000Z');
    expect(utcMonthKey(at)).toBe('2026-11');
    expect(utcMonthKey(new Date('2027-01-01T00:00:00.000Z'))).toBe('2027-01');
    expect(utcMonthKey(new Date('2026-12-31T23:59:59.999Z'))).toBe('2026-12');
  });

  it('month boundaries bracket every instant', () => {
    fc.assert(
      fc.property(
        fc.date({ min: new Date('1970-01-01T00:00:00.000Z'), max: new Date('9999-11-30T00:00:00.000Z'), noInvalidDate: true }),
        (d) => {
          const next = startOfNextUtcMonth(d);
          expect(next.getTime()).toBeGreaterThan(d.getTime());
          expect(utcMonthKey(new Date(next.getTime() - 1))).toBe(utcMonthKey(d));
          expect(next.getUTCDate()).toBe(1);
          const day = startOfUtcDay(d);
          expect(utcDateString(day)).toBe(utcDateString(d));
          expect(d.getTime() - day.getTime()).toBeLessThan(86_400_000);
        },
      ),
    );
  });
});

describe('perUtcPeriod', () => {
  it('gives the value of the instant asked, in any order, around day boundaries too', () => {
    const dayOf = perUtcPeriod('day', (at) => at.toISOString().slice(0, 10));
    fc.assert(
      fc.property(fc.array(fc.integer({ min: Date.UTC(1990, 0, 1), max: Date.UTC(2100, 0, 1) }), { maxLength: 20 }), (instants) => {
        for (const ms of instants) {
          for (const at of [ms, ms - 1, Math.floor(ms / 86_400_000) * 86_400_000, Math.floor(ms / 86_400_000) * 86_400_000 - 1]) {
            expect(dayOf(at)).toBe(new Date(at).toISOString().slice(0, 10));
          }
        }
      }),
    );
  });
});
