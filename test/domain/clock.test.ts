import { describe, expect, it } from 'vitest';
import { ManualClock, systemClock } from '../../src/domain/clock.js';

describe('systemClock', () => {
  it('returns the current wall-clock time', () => {
    const before = Date.now();
    const now = systemClock.now().getTime();
    const after = Date.now();
    expect(now).toBeGreaterThanOrEqual(before);
    expect(now).toBeLessThanOrEqual(after);
  });
});

describe('ManualClock', () => {
  it('starts at the given ISO string or Date', () => {
    expect(new ManualClock('2026-11-22T10:00:00Z').now().toISOString()).toBe('2026-11-22T10:00:00.000Z');
    const start = new Date('2026-01-01T00:00:00.000Z');
    expect(new ManualClock(start).now().toISOString()).toBe('2026-01-01T00:00:00.000Z');
  });

  it('does not alias the Date it was given', () => {
    const start = new Date('2026-01-01T00:00:00.000Z');
    const clock = new ManualClock(start);
    start.setUTCFullYear(2000);
    expect(clock.now().toISOString()).toBe('2026-01-01T00:00:00.000Z');
  });

  it('hands out a fresh copy on every call', () => {
    const clock = new ManualClock('2026-11-22T10:00:00Z');
    const a = clock.now();
    a.setUTCFullYear(1999);
    const b = clock.now();
    expect(b).not.toBe(a);
    expect(b.toISOString()).toBe('2026-11-22T10:00:00.000Z');
  });

  it('advances by milliseconds, including backwards', () => {
    const clock = new ManualClock('2026-11-22T10:00:00Z');
    clock.advance(1500);
    expect(clock.now().toISOString()).toBe('2026-11-22T10:00:01.500Z');
    clock.advance(3_600_000 * 14);
    expect(clock.now().toISOString()).toBe('2026-11-23T00:00:01.500Z');
    clock.advance(-1500);
    expect(clock.now().toISOString()).toBe('2026-11-23T00:00:00.000Z');
  });

  it('sets an absolute time', () => {
    const clock = new ManualClock('2026-11-22T10:00:00Z');
    clock.set('2027-01-31T23:59:59.999Z');
    expect(clock.now().toISOString()).toBe('2027-01-31T23:59:59.999Z');
    clock.set(new Date('2025-05-05T05:05:05.000Z'));
    expect(clock.now().toISOString()).toBe('2025-05-05T05:05:05.000Z');
  });

  it('rejects invalid times and advances', () => {
    expect(() => new ManualClock('not a date')).toThrow(RangeError);
    expect(() => new ManualClock(new Date(Number.NaN))).toThrow(RangeError);
    const clock = new ManualClock('2026-11-22T10:00:00Z');
    expect(() => clock.set('garbage')).toThrow(RangeError);
    expect(() => clock.advance(Number.NaN)).toThrow(RangeError);
    expect(() => clock.advance(Number.POSITIVE_INFINITY)).toThrow(RangeError);
    expect(() => clock.advance(9e15)).toThrow(RangeError);
    // A failed call leaves the clock untouched.
    expect(clock.now().toISOString()).toBe('2026-11-22T10:00:00.000Z');
  });
});
