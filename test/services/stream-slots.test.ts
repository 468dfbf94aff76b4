import { describe, expect, it } from 'vitest';
import { MAX_STREAMS_PER_KEY, StreamSlots } from '../../src/services/stream-slots.js';

describe('StreamSlots', () => {
  it('gives a key at most MAX_STREAMS_PER_KEY slots, independently of other keys', () => {
    const slots = new StreamSlots();
    const taken = Array.from({ length: MAX_STREAMS_PER_KEY }, () => slots.reserve('a'));
    expect(taken.every((slot) => slot !== null)).toBe(true);
    expect(slots.reserve('a')).toBeNull();
    expect(slots.reserve('b')).not.toBeNull();
    expect(slots.count('a')).toBe(MAX_STREAMS_PER_KEY);
  });

  it('takes a released slot back once, however often it is released', () => {
    const slots = new StreamSlots();
    const taken = Array.from({ length: MAX_STREAMS_PER_KEY }, () => slots.reserve('a')!);
    taken[0]!.release();
    taken[0]!.release();
    expect(slots.count('a')).toBe(MAX_STREAMS_PER_KEY - 1);
    expect(slots.reserve('a')).not.toBeNull();
    expect(slots.reserve('a')).toBeNull();
    for (const slot of taken) slot.release();
    expect(slots.count('a')).toBe(1);
  });

  it("ends and marks a key's streams when its access changes, not other keys'", () => {
    const slots = new StreamSlots();
    const ended: string[] = [];
    const mine = slots.reserve('a')!;
    mine.end = () => ended.push('a');
    const other = slots.reserve('b')!;
    other.end = () => ended.push('b');
    slots.endStreamsOf('a');
    expect(ended).toEqual(['a']);
    expect(mine.revoked).toBe(true);
    expect(other.revoked).toBe(false);
  });

  it('knows which contexts a connection covers with its own slot', () => {
    const slots = new StreamSlots();
    const context = {};
    slots.cover(context, slots.reserve('a')!);
    expect(slots.isCovered(context)).toBe(true);
    expect(slots.isCovered({})).toBe(false);
  });
});
