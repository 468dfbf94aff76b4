/**
 * Password hashing with node:crypto scrypt: a random 16-byte salt per password, parameters
 * stored with the hash (so they can be raised later), constant-time comparison.
 *
 * Cost: N = 2^15, r = 8, p = 3 is one of OWASP's equivalent scrypt settings (32 MiB per
 * hash, about 0.5 s on a small CI machine); memory stays at 32 MiB per concurrent hash.
 * Format: `scrypt$ln=15,r=8,p=3$<salt base64url>$<hash base64url>`.
 */
import { randomBytes, scrypt as scryptCallback, timingSafeEqual, type ScryptOptions } from 'node:crypto';

export interface ScryptParams {
  /** log2 of N. */
  ln: number;
  r: number;
  p: number;
}

export const DEFAULT_SCRYPT_PARAMS: Readonly<ScryptParams> = Object.freeze({ ln: 15, r: 8, p: 3 });
const SALT_BYTES = 16;
const HASH_BYTES = 32;
const FORMAT = /^scrypt\$ln=(\d{1,2}),r=(\d{1,2}),p=(\d{1,2})\$([A-Za-z0-9_-]{16,})\$([A-Za-z0-9_-]{40,})$/;

function scrypt(password: string, salt: Buffer, params: ScryptParams): Promise<Buffer> {
  const options: ScryptOptions = { N: 2 ** params.ln, r: params.r, p: params.p, maxmem: 2 * 128 * 2 ** params.ln * params.r + 1024 * 1024 };
  return new Promise((resolve, reject) => {
    scryptCallback(password.normalize('NFC'), salt, HASH_BYTES, options, (error, key) => (error ? reject(error) : resolve(key)));
  });
}

export async function hashPassword(password: string, params: ScryptParams = DEFAULT_SCRYPT_PARAMS): Promise<string> {
  const salt = randomBytes(SALT_BYTES);
  const hash = await scrypt(password, salt, params);
  return `scrypt$ln=${params.ln},r=${params.r},p=${params.p}$${salt.toString('base64url')}$${hash.toString('base64url')}`;
}

export function parsePasswordHash(stored: string): { params: ScryptParams; salt: Buffer; hash: Buffer } | null {
  const match = FORMAT.exec(stored);
  if (!match) return null;
  const params = { ln: Number(match[1]), r: Number(match[2]), p: Number(match[3]) };
  if (params.ln < 10 || params.ln > 20 || params.r < 1 || params.r > 32 || params.p < 1 || params.p > 16) return null;
  return { params, salt: Buffer.from(match[4]!, 'base64url'), hash: Buffer.from(match[5]!, 'base64url') };
}

/** True when the password matches; a malformed stored hash never matches. Constant time in the hash comparison. */
export async function verifyPassword(password: string, stored: string): Promise<boolean> {
  const parsed = parsePasswordHash(stored);
  if (!parsed || parsed.hash.length !== HASH_BYTES) return false;
  const candidate = await scrypt(password, parsed.salt, parsed.params);
  return timingSafeEqual(candidate, parsed.hash);
}
