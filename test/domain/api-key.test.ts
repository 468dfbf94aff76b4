import { createHash } from 'node:crypto';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import {
  API_KEY_PREFIX,
  apiKeyDisplayPrefix,
  generateApiKey,
  hashApiKey,
  isApiKeyShape,
  isTier,
  parseBearerToken,
  type Tier,
  tierAtLeast,
  tierRank,
  TIERS,
} from '../../src/domain/api-key.js';

const SAMPLE_KEY = `service_${'0123456789abcdef'.repeat(4)}`;

describe('generateApiKey', () => {
  it('is the prefix plus the hex of 32 random bytes', () => {
    const requested: number[] = [];
    const key = generateApiKey((n) => {
      requested.push(n);
      return Buffer.alloc(n, 0xab);
    });
    expect(requested).toEqual([32]);
    expect(key).toBe(`service_${'ab'.repeat(32)}`);
    expect(API_KEY_PREFIX).toBe('service_');
  });

  it('uses lowercase hex', () => {
    const key = generateApiKey(() => Buffer.from(Array.from({ length: 32 }, (_, i) => i * 8)));
    expect(key).toBe(`service_${Array.from({ length: 32 }, (_, i) => (i * 8).toString(16).padStart(2, '0')).join('')}`);
    expect(isApiKeyShape(key)).toBe(true);
  });

  it('produces distinct, well-shaped keys by default', () => {
    const keys = new Set(Array.from({ length: 50 }, () => generateApiKey()));
    expect(keys.size).toBe(50);
    for (const key of keys) expect(isApiKeyShape(key)).toBe(true);
  });

  it('refuses a random source that returns the wrong length', () => {
    expect(() => generateApiKey(() => Buffer.alloc(16))).toThrow(RangeError);
  });
});

describe('isApiKeyShape', () => {
  it('accepts prefix + 64 lowercase hex', () => {
    expect(isApiKeyShape(SAMPLE_KEY)).toBe(true);
  });

  it.each([
    ['', 'empty'],
    ['service_', 'prefix only'],
    [SAMPLE_KEY.slice(0, -1), '63 hex'],
    [`${SAMPLE_KEY}0`, '65 hex'],
    [SAMPLE_KEY.toUpperCase(), 'upper case'],
    [`service_${'0123456789ABCDEF'.repeat(4)}`, 'upper-case hex'],
    [`Service_${'0'.repeat(64)}`, 'capitalised prefix'],
    [`svc_${'0'.repeat(64)}`, 'other prefix'],
    [`service_${'g'.repeat(64)}`, 'non-hex'],
    [`${SAMPLE_KEY}\n`, 'trailing newline'],
    [` ${SAMPLE_KEY}`, 'leading space'],
    ['0'.repeat(64), 'no prefix'],
  ])('rejects %j (%s)', (value) => {
    expect(isApiKeyShape(value)).toBe(false);
  });

  it('accepts exactly the regex language', () => {
    fc.assert(
      fc.property(fc.string({ maxLength: 80 }), (s) => {
        expect(isApiKeyShape(s)).toBe(/^service_[0-9a-f]{64}$/.test(s));
      }),
    );
  });
});

describe('hashApiKey', () => {
  it('is lowercase hex SHA-256', () => {
    expect(hashApiKey('abc')).toBe('ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad');
    expect(hashApiKey(SAMPLE_KEY)).toBe(createHash('sha256').update(SAMPLE_KEY).digest('hex'));
    expect(hashApiKey(SAMPLE_KEY)).toMatch(/^[0-9a-f]{64}$/);
    expect(hashApiKey(SAMPLE_KEY)).not.toBe(hashApiKey(SAMPLE_KEY.replace(/f$/, 'e')));
  });
});

describe('apiKeyDisplayPrefix', () => {
  it('keeps the first 12 characters', () => {
    expect(apiKeyDisplayPrefix(SAMPLE_KEY)).toBe('service_0123');
    expect(apiKeyDisplayPrefix(`service_1a2b${'0'.repeat(60)}`)).toBe('service_1a2b');
  });
});

describe('parseBearerToken', () => {
  it.each([
    [`Bearer ${SAMPLE_KEY}`, SAMPLE_KEY],
    [`bearer ${SAMPLE_KEY}`, SAMPLE_KEY],
    [`BEARER ${SAMPLE_KEY}`, SAMPLE_KEY],
    [`bEaReR abc`, 'abc'],
    // The token itself is returned as is; shape checks come later.
    ['Bearer not-a-key', 'not-a-key'],
  ])('%j -> %j', (header, token) => {
    expect(parseBearerToken(header)).toBe(token);
  });

  it.each([
    undefined,
    '',
    'Bearer',
    'Bearer ',
    `Bearer  ${SAMPLE_KEY}`,
    `Bearer ${SAMPLE_KEY} extra`,
    `Bearer ${SAMPLE_KEY} `,
    ` Bearer ${SAMPLE_KEY}`,
    `Bearer\t${SAMPLE_KEY}`,
    `Basic ${SAMPLE_KEY}`,
    `Token ${SAMPLE_KEY}`,
    `Bearer${SAMPLE_KEY}`,
    SAMPLE_KEY,
    `Bearer ${SAMPLE_KEY}\n`,
  ])('%j -> null', (header) => {
    expect(parseBearerToken(header)).toBeNull();
  });
});

describe('tiers', () => {
  it('are ordered starter < growth < enterprise', () => {
    expect(TIERS).toEqual(['starter', 'growth', 'enterprise']);
    expect(tierRank('starter')).toBe(0);
    expect(tierRank('growth')).toBe(1);
    expect(tierRank('enterprise')).toBe(2);
  });

  it.each([
    ['starter', 'starter', true],
    ['starter', 'growth', false],
    ['starter', 'enterprise', false],
    ['growth', 'starter', true],
    ['growth', 'growth', true],
    ['growth', 'enterprise', false],
    ['enterprise', 'starter', true],
    ['enterprise', 'growth', true],
    ['enterprise', 'enterprise', true],
  ] as [Tier, Tier, boolean][])('tierAtLeast(%s, %s) = %s', (tier, min, expected) => {
    expect(tierAtLeast(tier, min)).toBe(expected);
  });

  it('isTier accepts the three lowercase names only', () => {
    for (const t of TIERS) expect(isTier(t)).toBe(true);
    expect(isTier('GROWTH')).toBe(false);
    expect(isTier('free')).toBe(false);
  });

  it('tierRank throws on an unknown tier', () => {
    expect(() => tierRank('platinum' as Tier)).toThrow(RangeError);
  });
});
