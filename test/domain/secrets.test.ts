import { randomBytes } from 'node:crypto';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { createKeyring, decryptSecret, encryptSecret, needsReencryption, SecretDecryptionError, secretsEqual } from '../../src/domain/secrets.js';

const keyA = Buffer.alloc(32, 1);
const keyB = Buffer.alloc(32, 2);

describe('webhook secret encryption at rest', () => {
  it('round-trips any text and never contains the plaintext', () => {
    const keyring = createKeyring(keyA);
    fc.assert(
      fc.property(fc.string({ minLength: 1, maxLength: 200 }), fc.uuid(), (plaintext, rowId) => {
        const sealed = encryptSecret(plaintext, keyring, rowId);
        expect(decryptSecret(sealed, keyring, rowId)).toBe(plaintext);
        if (plaintext.length >= 8) expect(sealed).not.toContain(plaintext);
      }),
    );
  });

  it('uses a fresh IV each time', () => {
    const keyring = createKeyring(keyA);
    expect(encryptSecret('whsec_same', keyring, 'row')).not.toBe(encryptSecret('whsec_same', keyring, 'row'));
  });

  it('refuses another row id, a tampered ciphertext, an unknown key and unknown formats', () => {
    const keyring = createKeyring(keyA);
    const sealed = encryptSecret('whsec_secret', keyring, 'row-1');
    expect(() => decryptSecret(sealed, keyring, 'row-2')).toThrow(SecretDecryptionError);
    const parts = sealed.split('.');
    const flipped = Buffer.from(parts[4]!, 'base64url');
    flipped[0] = flipped[0]! ^ 1;
    expect(() => decryptSecret([...parts.slice(0, 4), flipped.toString('base64url')].join('.'), keyring, 'row-1')).toThrow(SecretDecryptionError);
    expect(() => decryptSecret(sealed, createKeyring(keyB), 'row-1')).toThrow(/not configured/);
    for (const bad of ['', 'v2.a.b.c.d', 'v1.a.b.c', 'v1.a.b.c.d.e', 'plain']) expect(() => decryptSecret(bad, keyring, 'row-1')).toThrow(SecretDecryptionError);
  });

  it('rotation: earlier keys still decrypt, new secrets use the current key, and re-encryption is detectable', () => {
    const old = createKeyring(keyA);
    const sealedOld = encryptSecret('whsec_old', old, 'row');
    const rotated = createKeyring(keyB, [keyA]);
    expect(decryptSecret(sealedOld, rotated, 'row')).toBe('whsec_old');
    expect(needsReencryption(sealedOld, rotated)).toBe(true);
    const sealedNew = encryptSecret('whsec_new', rotated, 'row');
    expect(needsReencryption(sealedNew, rotated)).toBe(false);
    expect(decryptSecret(sealedNew, createKeyring(keyB), 'row')).toBe('whsec_new');
  });

  it('only accepts 32-byte keys', () => {
    expect(() => createKeyring(randomBytes(16))).toThrow();
    expect(() => createKeyring(keyA, [randomBytes(31)])).toThrow();
  });

  it('secretsEqual compares in constant time without leaking length', () => {
    expect(secretsEqual('abc', 'abc')).toBe(true);
    expect(secretsEqual('abc', 'abd')).toBe(false);
    expect(secretsEqual('abc', 'abcd')).toBe(false);
  });
});
