/**
 * Keyset cursor for picks ordered by kickoff_at desc, id desc (docs/API.md, "Lists and cursors").
 * The cursor names the last row of a page, so pages stay stable under concurrent inserts.
 * It is opaque to clients but not secret: the checksum only catches accidental edits.
 */
import { createHash } from 'node:crypto';
import { InvalidCursorError } from './errors.js';
import { isUuid } from './uuid.js';

export interface PickCursor {
  kickoffAt: Date;
  id: string;
}

/** Each list has its own cursor kind, so one list's cursor is invalid_cursor on another. */
export const CursorKind = { picks: 'p1', webhookDeliveries: 'd1', reviewQueue: 'r1' } as const;
export type CursorKind = (typeof CursorKind)[keyof typeof CursorKind];

/** A position in a list ordered by a timestamp, then id (both descending or both ascending). */
export interface KeysetPosition {
  at: Date;
  id: string;
}
const MAX_CURSOR_LENGTH = 200;
/** Largest |ms| a JS Date can hold. */
const MAX_TIME_MS = 8.64e15;
const BASE64URL = /^[A-Za-z0-9_-]+$/;
// Canonical integers only (no leading zeros, no "-0"), so a decoded cursor re-encodes identically.
const PAYLOAD = /^([a-z][0-9]):(0|-?[1-9][0-9]{0,15}):([0-9a-f-]{36}):([0-9a-f]{8})$/;

function checksum(body: string): string {
  return createHash('sha256').update(body).digest('hex').slice(0, 8);
}

/** Encodes a cursor. Bad input here is a programming error, hence RangeError, not a client error. */
export function encodePickCursor(c: PickCursor): string {
  return encodeKeysetCursor(CursorKind.picks, { at: c.kickoffAt, id: c.id });
}

export function encodeKeysetCursor(kind: CursorKind, position: KeysetPosition): string {
  const ms = position.at.getTime();
  if (!Number.isInteger(ms) || Math.abs(ms) > MAX_TIME_MS) {
    throw new RangeError('encodeKeysetCursor: the position time is not a valid date');
  }
  const id = position.id.toLowerCase();
  if (!isUuid(id)) {
    throw new RangeError(`encodeKeysetCursor: id ${position.id} is not a UUID`);
  }
  const body = `${kind}:${ms}:${id}`;
  return Buffer.from(`${body}:${checksum(body)}`, 'utf8').toString('base64url');
}

/** Decodes a client-supplied cursor; anything but a cursor this module produced throws InvalidCursorError. */
export function decodePickCursor(s: string): PickCursor {
  const position = decodeKeysetCursor(CursorKind.picks, s);
  return { kickoffAt: position.at, id: position.id };
}

export function decodeKeysetCursor(kind: CursorKind, s: string): KeysetPosition {
  try {
    return decodeOrThrow(kind, s);
  } catch (error) {
    if (error instanceof InvalidCursorError) throw error;
    // Whatever else went wrong, the client only ever sees invalid_cursor.
    throw new InvalidCursorError();
  }
}

function decodeOrThrow(kind: CursorKind, s: string): KeysetPosition {
  if (typeof s !== 'string' || s.length === 0 || s.length > MAX_CURSOR_LENGTH || !BASE64URL.test(s)) {
    throw new InvalidCursorError();
  }
  const bytes = Buffer.from(s, 'base64url');
  // Node's decoder is lenient (ignores stray bits, stops early); only the canonical form is accepted.
  if (bytes.toString('base64url') !== s) throw new InvalidCursorError();
  const match = PAYLOAD.exec(bytes.toString('latin1'));
  if (!match) throw new InvalidCursorError();
  const [, version, msText, id, check] = match as unknown as [string, string, string, string, string];
  if (version !== kind) throw new InvalidCursorError();
  if (checksum(`${version}:${msText}:${id}`) !== check) throw new InvalidCursorError();
  if (!isUuid(id)) throw new InvalidCursorError();
  const ms = Number(msText);
  if (!Number.isSafeInteger(ms) || Math.abs(ms) > MAX_TIME_MS) throw new InvalidCursorError();
  return { at: new Date(ms), id };
}
