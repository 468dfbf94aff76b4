import { createCipheriv, createDecipheriv, createHash, randomBytes, timingSafeEqual } from 'node:crypto';

/** The SHA-256 digest of a secret: what secretsEqual compares, and what API keys are stored as (hex). */
export function secretDigest(secret: string): Buffer {
  return createHash('sha256').update(secret, 'utf8').digest();
}

/** Constant-time string equality: both sides are hashed first so lengths leak nothing. */
export function secretsEqual(presented: string, expected: string): boolean {
  return digestsEqual(secretDigest(presented), secretDigest(expected));
}

/** Constant-time equality of two secretDigest values (one of them computed once, ahead). */
export function digestsEqual(a: Buffer, b: Buffer): boolean {
  return timingSafeEqual(a, b);
}

/**
 * Encryption at rest for webhook secrets: AES-256-GCM under a configured key, so a database
 * dump alone reveals nothing. Ciphertexts name their key (`v1.<key id>.<iv>.<tag>.<data>`,
 * base64url), so a rotation can keep earlier keys for decryption while new secrets use the
 * current one. The associated data binds a ciphertext to its row: copying it onto another
 * subscription does not decrypt.
 */
export interface SecretKeyring {
  currentId: string;
  keys: ReadonlyMap<string, Buffer>;
}

export class SecretDecryptionError extends Error {
  constructor(reason: string) {
    super(`Cannot decrypt a stored secret: ${reason}`);
    this.name = 'SecretDecryptionError';
  }
}

export function secretKeyId(key: Buffer): string {
  return createHash('sha256').update(key).digest('hex').slice(0, 12);
}

export function createKeyring(current: Buffer, previous: readonly Buffer[] = []): SecretKeyring {
  const keys = new Map<string, Buffer>();
  for (const key of [current, ...previous]) {
    if (key.length !== 32) throw new Error('secret keys are 32 bytes');
    keys.set(secretKeyId(key), key);
  }
  return { currentId: secretKeyId(current), keys };
}

export function encryptSecret(plaintext: string, keyring: SecretKeyring, associatedData: string): string {
  const key = keyring.keys.get(keyring.currentId)!;
  const iv = randomBytes(12);
  const cipher = createCipheriv('aes-256-gcm', key, iv);
  cipher.setAAD(Buffer.from(associatedData, 'utf8'));
  const data = Buffer.concat([cipher.update(plaintext, 'utf8'), cipher.final()]);
  return ['v1', keyring.currentId, iv.toString('base64url'), cipher.getAuthTag().toString('base64url'), data.toString('base64url')].join('.');
}

export function decryptSecret(ciphertext: string, keyring: SecretKeyring, associatedData: string): string {
  const [version, keyId, iv, tag, data, ...rest] = ciphertext.split('.');
  if (version !== 'v1' || !keyId || !iv || !tag || data === undefined || rest.length > 0) throw new SecretDecryptionError('unknown format');
  const key = keyring.keys.get(keyId);
  if (!key) throw new SecretDecryptionError(`key ${keyId} is not configured (WEBHOOK_SECRET_KEY / WEBHOOK_SECRET_KEY_PREVIOUS)`);
  try {
    const decipher = createDecipheriv('aes-256-gcm', key, Buffer.from(iv, 'base64url'));
    decipher.setAAD(Buffer.from(associatedData, 'utf8'));
    decipher.setAuthTag(Buffer.from(tag, 'base64url'));
    return Buffer.concat([decipher.update(Buffer.from(data, 'base64url')), decipher.final()]).toString('utf8');
  } catch {
    throw new SecretDecryptionError('authentication failed');
  }
}

/** True when the ciphertext was made with an earlier key (re-encrypt it after a rotation). */
export function needsReencryption(ciphertext: string, keyring: SecretKeyring): boolean {
  return ciphertext.split('.')[1] !== keyring.currentId;
}
