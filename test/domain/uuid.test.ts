import { describe, expect, it } from 'vitest';
import { isUuid } from '../../src/domain/uuid.js';

describe('isUuid', () => {
  it('accepts a UUID in either case', () => {
    expect(isUuid('0190f5e4-7c2a-7b3d-9e8f-1a2b3c4d5e6f')).toBe(true);
    expect(isUuid('0190F5E4-7C2A-7B3D-9E8F-1A2B3C4D5E6F')).toBe(true);
  });

  it.each([
    ['empty', ''],
    ['misplaced dashes', '0190f5e47-c2a-7b3d-9e8f-1a2b3c4d5e6f'],
    ['not hex', 'zzzzzzzz-zzzz-zzzz-zzzz-zzzzzzzzzzzz'],
    ['surrounded', ' 0190f5e4-7c2a-7b3d-9e8f-1a2b3c4d5e6f'],
    ['trailing newline', '0190f5e4-7c2a-7b3d-9e8f-1a2b3c4d5e6f\n'],
  ])('refuses %s', (_name, value) => {
    expect(isUuid(value)).toBe(false);
  });
});
