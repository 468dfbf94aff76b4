/**
 * Signed notes, checkpoints and cosignatures as the transparency logs write them (C2SP
 * signed-note, tlog-checkpoint, tlog-cosignature): the ledger's checkpoints are signed in these
 * formats so that any of those tools, and the customer's verifier, can check them. Ed25519 by
 * node:crypto. Pure.
 *
 * A key is named (the log's key by its origin), identified by the first 4 bytes of SHA-256(name
 * || "\n" || algorithm byte || public key), and written `<name>+<id hex>+<base64(algorithm ||
 * key)>` (the verifier key), or with `PRIVATE+KEY+` before it and the 32-byte seed instead of the
 * public key (the signer key). Algorithm 0x01 signs notes (the log); 0x04 signs cosignature/v1
 * (a witness).
 */
import { createHash, createPrivateKey, createPublicKey, randomBytes, sign, verify, type KeyObject } from 'node:crypto';

export const NOTE_ALGORITHM_ED25519 = 0x01;
export const COSIGNATURE_ALGORITHM_ED25519 = 0x04;
type Algorithm = typeof NOTE_ALGORITHM_ED25519 | typeof COSIGNATURE_ALGORITHM_ED25519;

export interface VerifierKey {
  name: string;
  algorithm: Algorithm;
  /** 4 bytes. */
  keyId: Buffer;
  publicKey: KeyObject;
  /** The key as written: `<name>+<id hex>+<base64>`. */
  text: string;
}

export interface SignerKey extends VerifierKey {
  privateKey: KeyObject;
}

/** A note's body and its signature lines. */
export interface ParsedNote {
  body: string;
  signatures: { name: string; keyId: Buffer; signature: Buffer; line: string }[];
}

export interface Checkpoint {
  origin: string;
  size: number;
  root: Buffer;
}

export class NoteFormatError extends Error {}

const SIGNATURE_PREFIX = '\u2014 ';
const PKCS8_ED25519 = Buffer.from('302e020100300506032b657004220420', 'hex');
const SPKI_ED25519 = Buffer.from('302a300506032b6570032100', 'hex');
const STRICT_BASE64 = /^[A-Za-z0-9+/]*={0,2}$/;

function base64(text: string, what: string): Buffer {
  if (!STRICT_BASE64.test(text) || text.length % 4 !== 0) throw new NoteFormatError(`${what} is not base64`);
  const bytes = Buffer.from(text, 'base64');
  // One encoding per byte string: stray bits in the padding would make a signature line malleable.
  if (bytes.toString('base64') !== text) throw new NoteFormatError(`${what} is not canonical base64`);
  return bytes;
}

/** A key name: non-empty, no "+", no whitespace (signed-note). */
function checkName(name: string): void {
  if (name.length === 0 || /[+\s]/u.test(name)) throw new NoteFormatError('a key name must be non-empty, without "+" or whitespace');
}

export function keyIdOf(name: string, algorithm: Algorithm, publicKey: Buffer): Buffer {
  return createHash('sha256')
    .update(Buffer.concat([Buffer.from(`${name}\n`, 'utf8'), Buffer.from([algorithm]), publicKey]))
    .digest()
    .subarray(0, 4);
}

function rawPublicKey(key: KeyObject): Buffer {
  return key.export({ format: 'der', type: 'spki' }).subarray(SPKI_ED25519.length);
}

function verifierText(name: string, algorithm: Algorithm, keyId: Buffer, publicKey: Buffer): string {
  return `${name}+${keyId.toString('hex')}+${Buffer.concat([Buffer.from([algorithm]), publicKey]).toString('base64')}`;
}

function algorithmOf(byte: number | undefined, allowed: readonly Algorithm[]): Algorithm {
  if (byte === undefined || !(allowed as readonly number[]).includes(byte)) throw new NoteFormatError(`the key's algorithm must be ${allowed.map((a) => `0x0${a}`).join(' or ')}`);
  return byte as Algorithm;
}

/** The parts of a key text `<name>+<id hex>+<base64(algorithm || 32 bytes)>` (after `prefix`), checked but the id. */
function keyParts(text: string, prefix: string, allowed: readonly Algorithm[], form: string): { name: string; idHex: string; algorithm: Algorithm; bytes: Buffer } {
  const trimmed = text.trim();
  // The base64 key may hold "+" itself: only the name and the id are split off.
  const match = trimmed.startsWith(prefix) ? /^([^+]+)\+([^+]*)\+(.*)$/s.exec(trimmed.slice(prefix.length)) : null;
  if (!match) throw new NoteFormatError(`a ${form} is ${prefix}<name>+<key id>+<key>`);
  const [, name, idHex, keyText] = match as unknown as [string, string, string, string];
  checkName(name);
  if (!/^[0-9a-f]{8}$/.test(idHex)) throw new NoteFormatError('a key id is 8 lowercase hex digits');
  const decoded = base64(keyText, 'the key');
  const algorithm = algorithmOf(decoded[0], allowed);
  const bytes = decoded.subarray(1);
  if (bytes.length !== 32) throw new NoteFormatError(`an Ed25519 ${form} holds 32 bytes`);
  return { name, idHex, algorithm, bytes };
}

function checkedKeyId(name: string, algorithm: Algorithm, raw: Buffer, idHex: string): Buffer {
  const keyId = keyIdOf(name, algorithm, raw);
  if (keyId.toString('hex') !== idHex) throw new NoteFormatError('the key id does not match the name and key');
  return keyId;
}

const ALL_ALGORITHMS: readonly Algorithm[] = [NOTE_ALGORITHM_ED25519, COSIGNATURE_ALGORITHM_ED25519];

/** Parses `<name>+<id hex>+<base64(algorithm || 32-byte key)>`, checking the id. */
export function parseVerifierKey(text: string, allowed: readonly Algorithm[] = ALL_ALGORITHMS): VerifierKey {
  const { name, idHex, algorithm, bytes: raw } = keyParts(text, '', allowed, 'verifier key');
  const keyId = checkedKeyId(name, algorithm, raw, idHex);
  return { name, algorithm, keyId, publicKey: createPublicKey({ key: Buffer.concat([SPKI_ED25519, raw]), format: 'der', type: 'spki' }), text: verifierText(name, algorithm, keyId, raw) };
}

/** Parses `PRIVATE+KEY+<name>+<id hex>+<base64(algorithm || 32-byte seed)>`, checking the id. */
export function parseSignerKey(text: string, allowed: readonly Algorithm[] = ALL_ALGORITHMS): SignerKey {
  const { name, idHex, algorithm, bytes: seed } = keyParts(text, 'PRIVATE+KEY+', allowed, 'signer key');
  const privateKey = createPrivateKey({ key: Buffer.concat([PKCS8_ED25519, seed]), format: 'der', type: 'pkcs8' });
  const publicKey = createPublicKey(privateKey);
  const raw = rawPublicKey(publicKey);
  const keyId = checkedKeyId(name, algorithm, raw, idHex);
  return { name, algorithm, keyId, publicKey, privateKey, text: verifierText(name, algorithm, keyId, raw) };
}

/** A new signer key in the signed-note private key format. */
export function generateSignerKey(name: string, algorithm: Algorithm = NOTE_ALGORITHM_ED25519): string {
  checkName(name);
  const seed = randomBytes(32);
  const privateKey = createPrivateKey({ key: Buffer.concat([PKCS8_ED25519, seed]), format: 'der', type: 'pkcs8' });
  const keyId = keyIdOf(name, algorithm, rawPublicKey(createPublicKey(privateKey)));
  return `PRIVATE+KEY+${name}+${keyId.toString('hex')}+${Buffer.concat([Buffer.from([algorithm]), seed]).toString('base64')}`;
}

function signatureLine(name: string, bytes: Buffer): string {
  return `${SIGNATURE_PREFIX}${name} ${bytes.toString('base64')}\n`;
}

/** The note: the body (ending in a newline), a blank line, the signer's signature line. */
export function signNote(body: string, signer: SignerKey): string {
  if (signer.algorithm !== NOTE_ALGORITHM_ED25519) throw new NoteFormatError('a note is signed by a 0x01 key');
  checkBody(body);
  const signature = sign(null, Buffer.from(body, 'utf8'), signer.privateKey);
  return `${body}\n${signatureLine(signer.name, Buffer.concat([signer.keyId, signature]))}`;
}

function checkBody(body: string): void {
  if (!body.endsWith('\n') || body.includes('\n\n') || body.length === 0) throw new NoteFormatError('a note body is non-empty lines, each ending in a newline, none blank');
}

/** Splits a note at its last blank line into its body and signature lines. */
export function parseNote(text: string): ParsedNote {
  const split = text.lastIndexOf('\n\n');
  if (split < 0 || !text.endsWith('\n')) throw new NoteFormatError('a note is a body, a blank line and signature lines, each ending in a newline');
  // The body may hold blank lines of its own: the signatures follow the last one.
  const body = text.slice(0, split + 1);
  const signatures = text
    .slice(split + 2)
    .split(/(?<=\n)/)
    .map((line) => {
      const match = /^\u2014 (\S+) (\S+)\n$/u.exec(line);
      if (!match) throw new NoteFormatError('a signature line is "— <name> <base64>"');
      const bytes = base64(match[2]!, 'a signature');
      if (bytes.length < 5) throw new NoteFormatError('a signature is a key id and at least one byte');
      return { name: match[1]!, keyId: bytes.subarray(0, 4), signature: bytes.subarray(4), line };
    });
  if (signatures.length === 0) throw new NoteFormatError('a note has at least one signature');
  return { body, signatures };
}

/** Whether the note carries a valid signature by `key` (a 0x01 key). */
export function noteSignedBy(note: ParsedNote, key: VerifierKey): boolean {
  if (key.algorithm !== NOTE_ALGORITHM_ED25519) return false;
  return note.signatures.some((s) => s.name === key.name && s.keyId.equals(key.keyId) && s.signature.length === 64 && verify(null, Buffer.from(note.body, 'utf8'), key.publicKey, s.signature));
}

/** The checkpoint body (tlog-checkpoint): origin, size and base64 root, one per line. */
export function checkpointBody(checkpoint: Checkpoint): string {
  return `${checkpoint.origin}\n${checkpoint.size}\n${checkpoint.root.toString('base64')}\n`;
}

export function parseCheckpointBody(body: string): Checkpoint {
  const lines = body.split('\n');
  if (lines.length < 4 || lines.at(-1) !== '') throw new NoteFormatError('a checkpoint is an origin, a size and a root hash, one per line');
  const [origin, sizeText, rootText] = lines as [string, string, string];
  if (origin.length === 0) throw new NoteFormatError("a checkpoint's origin is not empty");
  if (!/^(0|[1-9][0-9]*)$/.test(sizeText) || !Number.isSafeInteger(Number(sizeText))) throw new NoteFormatError("a checkpoint's size is a decimal integer");
  const root = base64(rootText, "a checkpoint's root");
  if (root.length !== 32) throw new NoteFormatError("a checkpoint's root is 32 bytes");
  return { origin, size: Number(sizeText), root };
}

/** The message a witness signs (cosignature/v1): its header, the time, then the checkpoint body. */
export function cosignatureMessage(body: string, timeSeconds: number | bigint): Buffer {
  return Buffer.from(`cosignature/v1\ntime ${timeSeconds}\n${body}`, 'utf8');
}

/** A witness's cosignature line on a checkpoint body at `timeSeconds`. */
export function cosign(body: string, witness: SignerKey, timeSeconds: number): string {
  if (witness.algorithm !== COSIGNATURE_ALGORITHM_ED25519) throw new NoteFormatError('a cosignature is made by a 0x04 key');
  const time = Buffer.alloc(8);
  time.writeBigUInt64BE(BigInt(timeSeconds));
  return signatureLine(witness.name, Buffer.concat([witness.keyId, time, sign(null, cosignatureMessage(body, timeSeconds), witness.privateKey)]));
}

/** The time of a valid cosignature by `witness` (a 0x04 key) on the note, or null. */
export function cosignedAt(note: ParsedNote, witness: VerifierKey): number | null {
  if (witness.algorithm !== COSIGNATURE_ALGORITHM_ED25519) return null;
  for (const s of note.signatures) {
    if (s.name !== witness.name || !s.keyId.equals(witness.keyId) || s.signature.length !== 72) continue;
    // tlog-cosignature: a time of 0 or above 2^63 - 1 is not a cosignature.
    const time = s.signature.readBigUInt64BE(0);
    if (time === 0n || time > 2n ** 63n - 1n) continue;
    if (verify(null, cosignatureMessage(note.body, time), witness.publicKey, s.signature.subarray(8))) return Number(time);
  }
  return null;
}
