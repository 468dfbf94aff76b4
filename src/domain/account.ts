/**
 * Customer accounts (docs/DASHBOARD.md): email and password rules, pure. An account owns API
 * keys, which carry the account's tier.
 */
import { InvalidParameterError } from './errors.js';

export const EMAIL_MAX_LENGTH = 254;
/** NIST SP 800-63B: at least 8; we ask 12 of a paid API's customers. No composition rules. */
export const PASSWORD_MIN_LENGTH = 12;
/** Bounds the hashing work one request can ask for. */
export const PASSWORD_MAX_LENGTH = 256;
/** Active keys per account: enough for environments and rotation, bounded against abuse. */
export const MAX_ACTIVE_KEYS_PER_ACCOUNT = 10;

// Deliberately simple: one @, something on each side, a dot in the domain, no spaces or controls.
const EMAIL_SHAPE = /^[^\s@\p{Cc}]+@[^\s@\p{Cc}]+\.[^\s@\p{Cc}]+$/u;

/** Trimmed and lower-cased (the whole address: customers do not expect case to matter). */
export function normalizeEmail(raw: unknown): string {
  if (typeof raw !== 'string') throw new InvalidParameterError('email', 'email must be a string');
  const email = raw.trim().toLowerCase();
  if (email.length === 0 || email.length > EMAIL_MAX_LENGTH || !EMAIL_SHAPE.test(email)) {
    throw new InvalidParameterError('email', `email must be an address like name@example.com, at most ${EMAIL_MAX_LENGTH} characters`);
  }
  return email;
}

/** The password as given (never trimmed); length counted in code points. */
export function validateNewPassword(raw: unknown): string {
  if (typeof raw !== 'string') throw new InvalidParameterError('password', 'password must be a string');
  const length = [...raw].length;
  if (length < PASSWORD_MIN_LENGTH || length > PASSWORD_MAX_LENGTH) {
    throw new InvalidParameterError('password', `password must be ${PASSWORD_MIN_LENGTH} to ${PASSWORD_MAX_LENGTH} characters`);
  }
  return raw;
}
