#!/usr/bin/env node
/**
 * A transparency-log witness for the picks service's ledger, that anyone can run with Node
 * (>= 20) alone: this file uses nothing but Node itself, so you can read all of it.
 *
 *   node docs/examples/witness.mjs --log-key <log verifier key> [--log-key ...] [--name <witness name>]
 *                                  [--state <dir>] [--port 7381] [--host 127.0.0.1]
 *
 * What a witness is for. The service signs a checkpoint of its ledger (the size and Merkle root
 * of the tree of its entries) and asks witnesses to cosign it. A witness cosigns a checkpoint only
 * if it can check, with a consistency proof, that the tree only grew since the last checkpoint it
 * cosigned for that log: no entry removed, changed or reordered. A checkpoint carrying the
 * cosignatures of witnesses you trust cannot show you one history while showing someone else
 * another (a fork), unless those witnesses lie too. Run one yourself, and the log's checkpoints
 * carrying your witness's cosignature are ones you checked.
 *
 * The log's verifier key (GET <service>/api/public/ledger/key) names the log: its name is the
 * log's origin, the first line of its checkpoints. Give --log-key once per log (or per key, when
 * a log rotates its key: any of an origin's keys is then accepted).
 *
 * On its first start the witness makes an Ed25519 key and keeps it in <state>/witness-key (mode
 * 0600; default state directory ./witness-state), in the signed-note private key format with the
 * cosignature algorithm byte: "PRIVATE+KEY+<name>+<key id hex>+<base64(0x04 || 32-byte seed)>".
 * Every start prints its verifier key, "<name>+<key id hex>+<base64(0x04 || public key)>": give it
 * to the log's operator (LEDGER_WITNESSES) and to whoever should trust your cosignatures. The
 * name (--name, default witness.local/<hostname>) is part of the key: it is fixed at the first
 * start.
 *
 * It speaks the C2SP witness protocol (https://c2sp.org/tlog-witness):
 *
 *   POST /add-checkpoint   body: "old <size>\n", one base64 consistency-proof hash a line, an empty
 *                          line, then the log's signed checkpoint. Answers
 *     200  the cosignature line "— <name> <base64(key id || uint64 time || signature)>\n"
 *          (c2sp.org/tlog-cosignature, cosignature/v1: Ed25519 over "cosignature/v1\ntime <t>\n"
 *          followed by the checkpoint body);
 *     400  a malformed body (or old larger than the checkpoint's size); 404 a log it does not
 *          know; 403 no valid signature by the log's key; 409 old is not the size it last cosigned
 *          for that log (Content-Type text/x.tlog.size, body "<that size>\n": ask again with it);
 *          422 the checkpoint is not consistent with the one it cosigned last (a fork, or a bad
 *          proof); 413 a body over 1 MiB.
 *   GET /<hex SHA-256 of the origin>/checkpoint   the latest checkpoint it cosigned for that log,
 *          with the log's signature and its own cosignature (404 before the first).
 *
 * Its state is <state>/<hex SHA-256 of the origin>/checkpoint for each log: the last checkpoint it
 * cosigned, written before it answers (to a temporary file, synced, then renamed over the old one,
 * so a crash leaves the old or the new, never a mix or nothing). Keep the directory: a witness that
 * loses it cosigns whatever the log shows it next. When a log, under its own valid signature,
 * shows a checkpoint that is not consistent with the last one cosigned, the request is kept
 * beside it in forks/ (one JSON file per distinct request), with the checkpoint it was checked
 * against: signed by the log itself, the pair may be evidence against it (or of a bad proof).
 * One witness process per state directory (<state>/lock holds its pid).
 *
 * Exit code: 2 when it cannot start (bad arguments, key or state); it runs until stopped
 * (SIGINT, SIGTERM).
 */
import { createHash, createPrivateKey, createPublicKey, randomBytes, sign, verify } from 'node:crypto';
import { closeSync, existsSync, fsyncSync, mkdirSync, openSync, readFileSync, realpathSync, renameSync, unlinkSync, writeSync } from 'node:fs';
import { createServer } from 'node:http';
import { hostname } from 'node:os';
import path from 'node:path';
import { pathToFileURL } from 'node:url';

/** Signature type bytes (c2sp.org/signed-note): a log's Ed25519 note signature, a witness's cosignature/v1. */
export const NOTE_ED25519 = 0x01;
export const COSIGNATURE_ED25519 = 0x04;
export const MAX_BODY_BYTES = 1024 * 1024;
/** tlog-witness: a client MUST NOT send more than 63 proof lines. */
export const MAX_PROOF_LINES = 63;
/** signed-note: verifiers must accept at least 16 signatures; a ceiling keeps the work bounded. */
export const MAX_SIGNATURES = 100;
export const DEFAULT_PORT = 7381;
export const DEFAULT_STATE_DIR = './witness-state';

const SIGNATURE_PREFIX = '\u2014 ';
const PKCS8_ED25519 = Buffer.from('302e020100300506032b657004220420', 'hex');
const SPKI_ED25519 = Buffer.from('302a300506032b6570032100', 'hex');
const STRICT_BASE64 = /^[A-Za-z0-9+/]*={0,2}$/;
const DECIMAL = /^(0|[1-9][0-9]*)$/;
const UINT64_MAX = 2n ** 64n - 1n;
const INT64_MAX = 2n ** 63n - 1n;

const sha256 = (...parts) => {
  const hash = createHash('sha256');
  for (const part of parts) hash.update(part);
  return hash.digest();
};

/** RFC 9162 2.1.1: the root of the empty tree is the hash of the empty string. */
export const EMPTY_ROOT = sha256(Buffer.alloc(0));

/** An error the witness answers with an HTTP status. */
export class WitnessError extends Error {
  constructor(status, message, { headers = {}, body } = {}) {
    super(message);
    this.status = status;
    this.headers = headers;
    this.body = body ?? `${message}\n`;
  }
}
const malformed = (message) => new WitnessError(400, message);

// ---- Encodings

/** Standard base64 (RFC 4648 section 4) with padding, and nothing else: the only encoding that round-trips. */
export function decodeBase64(text, what) {
  const bytes = STRICT_BASE64.test(text) && text.length % 4 === 0 ? Buffer.from(text, 'base64') : null;
  if (bytes === null || bytes.toString('base64') !== text) throw malformed(`${what} is not base64`);
  return bytes;
}

function decodeHash(text, what) {
  const hash = decodeBase64(text, what);
  if (hash.length !== 32) throw malformed(`${what} is not a 32-byte hash`);
  return hash;
}

/** A size: decimal without leading zeros, at most 2^64 - 1. BigInt, so any uint64 size is exact. */
function parseSize(text, what) {
  if (!DECIMAL.test(text) || text.length > 20) throw malformed(`${what} is not a decimal size`);
  const size = BigInt(text);
  if (size > UINT64_MAX) throw malformed(`${what} is larger than 2^64 - 1`);
  return size;
}

// ---- Keys (c2sp.org/signed-note, c2sp.org/tlog-cosignature)

/** Key names are non-empty, without Unicode spaces or "+". */
function checkKeyName(name) {
  if (typeof name !== 'string' || name.length === 0 || /[\s+]/u.test(name)) throw new Error(`the key name ${JSON.stringify(name)} is empty or holds a space or "+"`);
}

/** SHA-256(name || "\n" || type || public key)[:4]. */
export function keyIdOf(name, type, publicKey) {
  return sha256(Buffer.from(`${name}\n`, 'utf8'), Buffer.from([type]), publicKey).subarray(0, 4);
}

const rawPublicKey = (keyObject) => keyObject.export({ format: 'der', type: 'spki' }).subarray(SPKI_ED25519.length);
const verifierText = (name, type, keyId, publicKey) => `${name}+${keyId.toString('hex')}+${Buffer.concat([Buffer.from([type]), publicKey]).toString('base64')}`;

/** "<name>+<key id hex>+<base64 key>": the name and id hold no "+", the base64 may. */
function splitKey(text, what) {
  const match = /^([^+]*)\+([^+]*)\+(.*)$/su.exec(text);
  if (!match) throw new Error(`a ${what} is <name>+<key id>+<base64 key>`);
  const [, name, idHex, keyText] = match;
  checkKeyName(name);
  if (!/^[0-9a-f]{8}$/.test(idHex)) throw new Error(`${what}: the key id is not 8 lowercase hex digits`);
  let bytes;
  try {
    bytes = decodeBase64(keyText, 'the key');
  } catch {
    throw new Error(`${what}: the key is not base64`);
  }
  return { name, idHex, type: bytes[0], material: bytes.subarray(1) };
}

/**
 * A verifier key "<name>+<key id hex>+<base64(type || 32-byte Ed25519 public key)>" of the given
 * type (0x01 a log's key, 0x04 a witness's). Throws unless the key id is the one the name and key give.
 */
export function parseVerifierKey(text, type = NOTE_ED25519) {
  const { name, idHex, type: keyType, material } = splitKey(String(text).trim(), 'verifier key');
  if (keyType !== type) throw new Error(`the verifier key of ${name} is of type 0x${(keyType ?? 0).toString(16).padStart(2, '0')}, not 0x0${type}`);
  if (material.length !== 32) throw new Error(`the verifier key of ${name} is not a 32-byte Ed25519 key`);
  const keyId = keyIdOf(name, type, material);
  if (keyId.toString('hex') !== idHex) throw new Error(`the verifier key of ${name}: its key id ${idHex} is not the one its name and key give (${keyId.toString('hex')})`);
  const publicKey = createPublicKey({ key: Buffer.concat([SPKI_ED25519, material]), format: 'der', type: 'spki' });
  return { name, type, keyId, publicKey, text: verifierText(name, type, keyId, material) };
}

/** A witness's private key "PRIVATE+KEY+<name>+<key id hex>+<base64(0x04 || 32-byte seed)>". */
export function parsePrivateKey(text, type = COSIGNATURE_ED25519) {
  const trimmed = String(text).trim();
  if (!trimmed.startsWith('PRIVATE+KEY+')) throw new Error('a private key is PRIVATE+KEY+<name>+<key id>+<base64 key>');
  const { name, idHex, type: keyType, material: seed } = splitKey(trimmed.slice('PRIVATE+KEY+'.length), 'private key');
  if (keyType !== type) throw new Error(`the private key of ${name} is not of type 0x0${type}`);
  if (seed.length !== 32) throw new Error(`the private key of ${name} is not a 32-byte Ed25519 seed`);
  const privateKey = createPrivateKey({ key: Buffer.concat([PKCS8_ED25519, seed]), format: 'der', type: 'pkcs8' });
  const publicKey = createPublicKey(privateKey);
  const raw = rawPublicKey(publicKey);
  const keyId = keyIdOf(name, type, raw);
  if (keyId.toString('hex') !== idHex) throw new Error(`the private key of ${name}: its key id ${idHex} is not the one its name and key give`);
  return { name, type, keyId, publicKey, privateKey, text: verifierText(name, type, keyId, raw) };
}

/** A new witness key, as the private key text (parse it with parsePrivateKey). */
export function generatePrivateKey(name, type = COSIGNATURE_ED25519) {
  checkKeyName(name);
  const seed = randomBytes(32);
  const privateKey = createPrivateKey({ key: Buffer.concat([PKCS8_ED25519, seed]), format: 'der', type: 'pkcs8' });
  const keyId = keyIdOf(name, type, rawPublicKey(createPublicKey(privateKey)));
  return `PRIVATE+KEY+${name}+${keyId.toString('hex')}+${Buffer.concat([Buffer.from([type]), seed]).toString('base64')}`;
}

// ---- The request (c2sp.org/tlog-witness, signed-note, tlog-checkpoint)

/** A signed note: its body (up to the last empty line) and its signature lines. */
export function parseNote(text) {
  if (!text.endsWith('\n')) throw malformed('the note does not end in a newline');
  const split = text.lastIndexOf('\n\n');
  if (split < 0) throw malformed('the note has no empty line before its signatures');
  const body = text.slice(0, split + 1);
  const lines = text.slice(split + 2, -1).split('\n');
  if (lines.length > MAX_SIGNATURES) throw malformed(`the note has more than ${MAX_SIGNATURES} signatures`);
  const signatures = lines.map((line) => {
    const match = /^\u2014 ([^\s+]+) ([^\s]+)$/u.exec(line);
    if (!match) throw malformed('a signature line is not "— <key name> <base64 signature>"');
    const bytes = decodeBase64(match[2], 'a signature');
    if (bytes.length < 5) throw malformed('a signature is shorter than a key id and one byte');
    return { name: match[1], keyId: bytes.subarray(0, 4), signature: bytes.subarray(4), line: `${line}\n` };
  });
  return { body, signatures };
}

/** A checkpoint body: origin, size, base64 root hash, then optional non-empty extension lines. */
export function parseCheckpoint(body) {
  const lines = body.slice(0, -1).split('\n');
  if (!body.endsWith('\n') || lines.length < 3 || lines.some((line) => line === '')) {
    throw malformed('the checkpoint is not an origin, a size and a root hash on non-empty lines');
  }
  const [origin, sizeText, rootText] = lines;
  return { origin, size: parseSize(sizeText, "the checkpoint's size"), root: decodeHash(rootText, "the checkpoint's root hash"), extensions: lines.slice(3) };
}

/**
 * The body of POST /add-checkpoint (bytes or text): "old <size>\n", up to 63 base64 proof hashes
 * a line, an empty line, the signed checkpoint. Returns { oldSize (BigInt), proof: [Buffer],
 * note: { body, signatures }, checkpoint: { origin, size (BigInt), root, extensions } }; throws a
 * WitnessError with status 400 when malformed.
 */
export function parseAddCheckpoint(input) {
  let text = input;
  if (typeof input !== 'string') {
    try {
      text = new TextDecoder('utf-8', { fatal: true, ignoreBOM: true }).decode(input);
    } catch {
      throw malformed('the body is not UTF-8');
    }
  }
  // signed-note: no ASCII control characters but the newline (a carriage return is one).
  if (/[\u0000-\u0009\u000b-\u001f]/u.test(text)) throw malformed('the body holds a control character other than a newline');
  const firstNewline = text.indexOf('\n');
  const oldMatch = firstNewline < 0 ? null : /^old (\S+)$/.exec(text.slice(0, firstNewline));
  if (!oldMatch) throw malformed('the body does not start with "old <size>"');
  const oldSize = parseSize(oldMatch[1], 'old');
  const proof = [];
  let position = firstNewline + 1;
  for (;;) {
    const end = text.indexOf('\n', position);
    if (end < 0) throw malformed('no empty line ends the consistency proof');
    const line = text.slice(position, end);
    position = end + 1;
    if (line === '') break;
    if (proof.length === MAX_PROOF_LINES) throw malformed(`the consistency proof has more than ${MAX_PROOF_LINES} lines`);
    proof.push(decodeHash(line, 'a consistency proof line'));
  }
  const note = parseNote(text.slice(position));
  return { oldSize, proof, note, checkpoint: parseCheckpoint(note.body) };
}

/**
 * Checks the note's signatures by the log's keys: a signature line whose name and key id are
 * those of a known key must verify, and at least one must. Others (other witnesses, unknown keys)
 * are ignored. Returns the verified lines; throws a 403 WitnessError otherwise.
 */
export function verifyLogSignatures(note, keys) {
  const verified = [];
  const message = Buffer.from(note.body, 'utf8');
  for (const signature of note.signatures) {
    const key = keys.find((k) => k.name === signature.name && k.keyId.equals(signature.keyId));
    if (!key) continue;
    if (signature.signature.length !== 64 || !verify(null, message, key.publicKey, signature.signature)) {
      throw new WitnessError(403, `the signature of ${key.name} (key id ${key.keyId.toString('hex')}) does not verify`);
    }
    verified.push(signature.line);
  }
  if (verified.length === 0) throw new WitnessError(403, 'the checkpoint carries no signature by a known key of its log');
  return verified;
}

// ---- Merkle tree consistency (RFC 9162 section 2.1.4.2)

const nodeHash = (left, right) => sha256(Buffer.from([0x01]), left, right);

/**
 * Whether `proof` (an array of 32-byte hashes) proves that the tree of size `size1` and root
 * `root1` is a prefix of the tree of size `size2` and root `root2` (sizes as numbers or BigInts).
 * RFC 9162 2.1.4.2 covers 0 < size1 < size2; an empty tree is consistent with any tree given no
 * proof, and a tree with itself given no proof.
 */
export function verifyConsistency(size1, root1, size2, root2, proof) {
  const first = BigInt(size1);
  const second = BigInt(size2);
  if (first < 0n || first > second) return false;
  if (first === second) return proof.length === 0 && Buffer.from(root1).equals(Buffer.from(root2));
  if (first === 0n) return proof.length === 0;
  // 1. An empty proof fails.
  if (proof.length === 0) return false;
  // 2. When first is an exact power of 2, its root is the first node of the path.
  const path = (first & (first - 1n)) === 0n ? [root1, ...proof] : proof;
  // 3, 4.
  let fn = first - 1n;
  let sn = second - 1n;
  while ((fn & 1n) === 1n) {
    fn >>= 1n;
    sn >>= 1n;
  }
  // 5.
  let fr = path[0];
  let sr = path[0];
  // 6.
  for (const c of path.slice(1)) {
    if (sn === 0n) return false;
    if ((fn & 1n) === 1n || fn === sn) {
      fr = nodeHash(c, fr);
      sr = nodeHash(c, sr);
      while ((fn & 1n) === 0n && fn !== 0n) {
        fn >>= 1n;
        sn >>= 1n;
      }
    } else {
      sr = nodeHash(sr, c);
    }
    fn >>= 1n;
    sn >>= 1n;
  }
  // 7.
  return Buffer.from(fr).equals(Buffer.from(root1)) && Buffer.from(sr).equals(Buffer.from(root2)) && sn === 0n;
}

// ---- Cosignature (c2sp.org/tlog-cosignature, cosignature/v1)

/** The message an Ed25519 cosignature signs: "cosignature/v1\ntime <t>\n" then the checkpoint body. */
export function cosignatureMessage(body, time) {
  return Buffer.from(`cosignature/v1\ntime ${BigInt(time)}\n${body}`, 'utf8');
}

/** The cosignature line of `witnessKey` (from parsePrivateKey) on a checkpoint body at `time` (POSIX seconds). */
export function cosign(body, witnessKey, time) {
  const seconds = BigInt(time);
  if (seconds <= 0n || seconds > INT64_MAX) throw new RangeError('a cosignature time is 1 to 2^63 - 1 seconds');
  const timestamp = Buffer.alloc(8);
  timestamp.writeBigUInt64BE(seconds);
  const signature = sign(null, cosignatureMessage(body, seconds), witnessKey.privateKey);
  return `${SIGNATURE_PREFIX}${witnessKey.name} ${Buffer.concat([witnessKey.keyId, timestamp, signature]).toString('base64')}\n`;
}

// ---- The witness: decisions and state

/** The name of a log's state directory, and of its monitoring URL: hex SHA-256 of the origin. */
export const originHash = (origin) => sha256(Buffer.from(origin, 'utf8')).toString('hex');

/** Writes `data` to `file` so that a crash leaves either the old file or the new one: temp file, fsync, rename, fsync of the directory. */
export function writeFileAtomically(file, data, mode = 0o644) {
  const dir = path.dirname(file);
  mkdirSync(dir, { recursive: true });
  const temporary = `${file}.${process.pid}.${randomBytes(6).toString('hex')}.tmp`;
  const bytes = Buffer.from(data);
  const fd = openSync(temporary, 'wx', mode);
  try {
    for (let written = 0; written < bytes.length; ) written += writeSync(fd, bytes, written, bytes.length - written);
    fsyncSync(fd);
  } finally {
    closeSync(fd);
  }
  try {
    renameSync(temporary, file);
  } catch (error) {
    try {
      unlinkSync(temporary);
    } catch {
      // nothing to remove
    }
    throw error;
  }
  try {
    const dirFd = openSync(dir, 'r');
    try {
      fsyncSync(dirFd);
    } finally {
      closeSync(dirFd);
    }
  } catch {
    // Some systems (Windows) cannot sync a directory; the rename is still atomic.
  }
}

/**
 * A witness over a state directory: { key, logs, add(body, now?) -> { status, headers, body },
 * latest(originHash) -> note text or null }. `logKeys`: verifier key texts (type 0x01), each
 * naming its log's origin. `add` checks and stores synchronously: two requests never interleave
 * between the check of old and the store of the new checkpoint.
 */
export function openWitness({ key, logKeys, stateDir, log = () => {} }) {
  const logs = new Map();
  for (const text of logKeys) {
    const logKey = parseVerifierKey(text, NOTE_ED25519);
    const keys = logs.get(logKey.name) ?? [];
    if (!keys.some((k) => k.text === logKey.text)) keys.push(logKey);
    logs.set(logKey.name, keys);
  }
  if (logs.size === 0) throw new Error('no log key: give --log-key at least once');

  /** origin -> { size, root, note } of the last checkpoint cosigned. */
  const latest = new Map();
  const byHash = new Map();
  for (const origin of logs.keys()) {
    byHash.set(originHash(origin), origin);
    const file = path.join(stateDir, originHash(origin), 'checkpoint');
    if (!existsSync(file)) continue;
    const note = readFileSync(file, 'utf8');
    try {
      const checkpoint = parseCheckpoint(parseNote(note).body);
      if (checkpoint.origin !== origin) throw new Error(`it is a checkpoint of ${checkpoint.origin}`);
      latest.set(origin, { size: checkpoint.size, root: checkpoint.root, note });
    } catch (error) {
      throw new Error(`the state file ${file} is not a checkpoint of ${origin}: ${error.message}`);
    }
  }

  function keepEvidence(origin, body, reason, now) {
    try {
      const record = { received_at: new Date(now).toISOString(), reason, request: body, latest_cosigned: latest.get(origin)?.note ?? null };
      const name = `${createHash('sha256').update(body).digest('hex')}.json`;
      writeFileAtomically(path.join(stateDir, originHash(origin), 'forks', name), `${JSON.stringify(record, null, 2)}\n`);
    } catch (error) {
      log(`could not keep the evidence of ${origin}: ${error.message}`);
    }
  }

  function decide(bodyBytes, now) {
    const request = parseAddCheckpoint(bodyBytes);
    const { oldSize, proof, note, checkpoint } = request;
    const keys = logs.get(checkpoint.origin);
    if (!keys) throw new WitnessError(404, `unknown log ${JSON.stringify(checkpoint.origin)}`);
    const logLines = verifyLogSignatures(note, keys);
    if (oldSize > checkpoint.size) throw malformed(`old ${oldSize} is larger than the checkpoint's size ${checkpoint.size}`);
    const current = latest.get(checkpoint.origin) ?? { size: 0n, root: null, note: null };
    if (oldSize !== current.size) {
      throw new WitnessError(409, `old ${oldSize} is not ${current.size}, the size last cosigned`, {
        headers: { 'content-type': 'text/x.tlog.size' },
        body: `${current.size}\n`,
      });
    }
    const inconsistent = (reason) => {
      keepEvidence(checkpoint.origin, typeof bodyBytes === 'string' ? bodyBytes : Buffer.from(bodyBytes).toString('utf8'), reason, now);
      return new WitnessError(422, reason);
    };
    if (checkpoint.size === 0n && !checkpoint.root.equals(EMPTY_ROOT)) throw inconsistent('a checkpoint of size 0 must have the root of the empty tree');
    if (oldSize === 0n) {
      if (proof.length > 0) throw inconsistent('from old 0 the consistency proof must be empty');
    } else if (oldSize === checkpoint.size && !checkpoint.root.equals(current.root)) {
      throw inconsistent(`the root hash at size ${oldSize} is not the one cosigned: a fork`);
    } else if (!verifyConsistency(current.size, current.root, checkpoint.size, checkpoint.root, proof)) {
      throw inconsistent(`the consistency proof from size ${current.size} to ${checkpoint.size} does not verify`);
    }
    const cosignature = cosign(note.body, key, Math.max(1, Math.floor(now / 1000)));
    const stored = `${note.body}\n${logLines.join('')}${cosignature}`;
    // Stored before answering: a crash after this answer cannot roll the witness back.
    writeFileAtomically(path.join(stateDir, originHash(checkpoint.origin), 'checkpoint'), stored);
    latest.set(checkpoint.origin, { size: checkpoint.size, root: checkpoint.root, note: stored });
    return { checkpoint, oldSize, cosignature };
  }

  function add(bodyBytes, now = Date.now()) {
    try {
      const { checkpoint, oldSize, cosignature } = decide(bodyBytes, now);
      log(`200 cosigned ${checkpoint.origin} at size ${checkpoint.size} (old ${oldSize})`);
      return { status: 200, headers: { 'content-type': 'text/plain; charset=utf-8' }, body: cosignature };
    } catch (error) {
      if (!(error instanceof WitnessError)) {
        log(`500 ${error.stack ?? error}`);
        return { status: 500, headers: { 'content-type': 'text/plain; charset=utf-8' }, body: 'internal error: the checkpoint was not cosigned\n' };
      }
      log(`${error.status} ${error.message}`);
      return { status: error.status, headers: { 'content-type': 'text/plain; charset=utf-8', ...error.headers }, body: error.body };
    }
  }

  return {
    key,
    logs,
    add,
    latest: (hash) => {
      const origin = byHash.get(hash);
      return origin === undefined ? null : (latest.get(origin)?.note ?? null);
    },
  };
}

// ---- State directory: key and lock

/** The witness key of the state directory, made on the first start. Returns { key, created }. */
export function loadOrCreateKey(stateDir, name) {
  const file = path.join(stateDir, 'witness-key');
  if (existsSync(file)) {
    const key = parsePrivateKey(readFileSync(file, 'utf8'));
    if (name !== undefined && name !== key.name) {
      throw new Error(`the witness key in ${file} is named ${key.name}, not ${name}: the name is part of the key (drop --name, or use another --state)`);
    }
    return { key, created: false };
  }
  const text = generatePrivateKey(name ?? defaultName());
  mkdirSync(stateDir, { recursive: true, mode: 0o700 });
  writeFileAtomically(file, `${text}\n`, 0o600);
  return { key: parsePrivateKey(text), created: true };
}

function defaultName() {
  const host = hostname().replace(/[\s+/]+/gu, '-') || 'localhost';
  return `witness.local/${host}`;
}

function processAlive(pid) {
  try {
    process.kill(pid, 0);
    return true;
  } catch (error) {
    return error.code === 'EPERM';
  }
}

/** <state>/lock with this process's pid: one witness per state directory. Returns its release function. */
function lockStateDir(stateDir) {
  const file = path.join(stateDir, 'lock');
  for (let attempt = 0; ; attempt += 1) {
    try {
      const fd = openSync(file, 'wx', 0o644);
      writeSync(fd, `${process.pid}\n`);
      closeSync(fd);
      break;
    } catch (error) {
      if (error.code !== 'EEXIST' || attempt > 0) throw error;
      const pid = Number.parseInt(readFileSync(file, 'utf8'), 10);
      if (Number.isInteger(pid) && pid > 0 && processAlive(pid)) {
        throw new Error(`another witness (pid ${pid}) runs on ${stateDir}: two would not check and store atomically (remove ${file} if it is not a witness)`);
      }
      unlinkSync(file); // left by a witness that died
    }
  }
  let released = false;
  return () => {
    if (released) return;
    released = true;
    try {
      unlinkSync(file);
    } catch {
      // already gone
    }
  };
}

// ---- HTTP

function send(res, status, headers, body) {
  const bytes = Buffer.from(body, 'utf8');
  res.writeHead(status, { ...headers, 'content-length': bytes.length });
  res.end(bytes);
}
const text = (res, status, message, headers = {}) => send(res, status, { 'content-type': 'text/plain; charset=utf-8', ...headers }, `${message}\n`);

/** Reads the request body up to `limit` bytes; null when it is larger (the 413 is then answered). */
function readBody(req, res, limit) {
  return new Promise((resolve) => {
    const tooLarge = () => {
      text(res, 413, `the body is larger than ${limit} bytes`, { connection: 'close' });
      req.resume(); // drain what the client still sends; the connection closes after it
      resolve(null);
    };
    if (Number(req.headers['content-length']) > limit) return tooLarge();
    const chunks = [];
    let size = 0;
    let done = false;
    req.on('data', (chunk) => {
      if (done) return;
      size += chunk.length;
      if (size > limit) {
        done = true;
        chunks.length = 0;
        tooLarge();
      } else {
        chunks.push(chunk);
      }
    });
    req.on('end', () => {
      if (!done) resolve(Buffer.concat(chunks));
    });
    req.on('error', () => {
      if (!done) resolve(null);
      done = true;
    });
  });
}

function handle(witness, req, res) {
  let pathname;
  try {
    pathname = new URL(req.url ?? '/', 'http://witness').pathname;
  } catch {
    return text(res, 400, 'bad request target');
  }
  if (pathname === '/add-checkpoint') {
    if (req.method !== 'POST') return text(res, 405, 'add-checkpoint takes POST', { allow: 'POST' });
    return readBody(req, res, MAX_BODY_BYTES).then((body) => {
      if (body === null || res.headersSent) return;
      const answer = witness.add(body);
      send(res, answer.status, answer.headers, answer.body);
    });
  }
  const monitoring = /^\/([0-9a-f]{64})\/checkpoint$/.exec(pathname);
  if (monitoring) {
    if (req.method !== 'GET' && req.method !== 'HEAD') return text(res, 405, 'the checkpoint takes GET', { allow: 'GET, HEAD' });
    const note = witness.latest(monitoring[1]);
    if (note === null) return text(res, 404, 'no checkpoint cosigned for that log');
    return send(res, 200, { 'content-type': 'text/plain; charset=utf-8' }, note);
  }
  return text(res, 404, 'not found: POST /add-checkpoint');
}

/**
 * Starts a witness: { logKeys: [verifier key text], name?, stateDir?, port?, host?, log? }.
 * Resolves, once it listens, to { server, port, url, verifierKey, keyCreated, close() }.
 */
export async function startWitness({ logKeys, name, stateDir = DEFAULT_STATE_DIR, port = DEFAULT_PORT, host = '127.0.0.1', log = () => {} }) {
  mkdirSync(stateDir, { recursive: true, mode: 0o700 });
  const release = lockStateDir(stateDir);
  try {
    const { key, created } = loadOrCreateKey(stateDir, name);
    const witness = openWitness({ key, logKeys, stateDir, log });
    const server = createServer((req, res) => {
      try {
        const pending = handle(witness, req, res);
        if (pending) pending.catch((error) => fail(res, error));
      } catch (error) {
        fail(res, error);
      }
    });
    const fail = (res, error) => {
      log(`500 ${error?.stack ?? error}`);
      if (!res.headersSent) text(res, 500, 'internal error');
      else res.destroy();
    };
    await new Promise((resolve, reject) => {
      server.once('error', reject);
      server.listen(port, host, () => {
        server.off('error', reject);
        resolve();
      });
    });
    const address = server.address();
    const shownHost = address.family === 'IPv6' ? `[${address.address}]` : address.address;
    let closing = null;
    const close = () => {
      closing ??= new Promise((resolve) => {
        server.close(() => {
          release();
          resolve();
        });
        server.closeAllConnections();
      });
      return closing;
    };
    return { server, witness, port: address.port, url: `http://${shownHost}:${address.port}`, verifierKey: key.text, keyCreated: created, close };
  } catch (error) {
    release();
    throw error;
  }
}

// ---- The command line

const USAGE = 'Usage: node witness.mjs --log-key <log verifier key> [--log-key ...] [--name <witness name>] [--state <dir>] [--port 7381] [--host 127.0.0.1]';

export function parseArguments(args) {
  const options = { logKeys: [], name: undefined, stateDir: DEFAULT_STATE_DIR, port: DEFAULT_PORT, host: '127.0.0.1' };
  for (let i = 0; i < args.length; i += 1) {
    const arg = args[i];
    const value = () => {
      const next = args[++i];
      if (next === undefined) throw new Error(`${arg} takes a value`);
      return next;
    };
    if (arg === '--log-key') options.logKeys.push(value());
    else if (arg === '--name') options.name = value();
    else if (arg === '--state') options.stateDir = value();
    else if (arg === '--host') options.host = value();
    else if (arg === '--port') {
      const port = value();
      if (!/^\d{1,5}$/.test(port) || Number(port) > 65535) throw new Error(`--port ${port} is not a port`);
      options.port = Number(port);
    } else throw new Error(`unexpected argument ${arg}`);
  }
  if (options.logKeys.length === 0) throw new Error('--log-key is missing (the log\'s verifier key: GET <service>/api/public/ledger/key)');
  if (options.name !== undefined) checkKeyName(options.name);
  for (const key of options.logKeys) parseVerifierKey(key, NOTE_ED25519);
  return options;
}

async function main(args) {
  if (args.includes('--help') || args.includes('-h')) {
    process.stdout.write(`${USAGE}\n`);
    return;
  }
  let witness;
  try {
    const options = parseArguments(args);
    witness = await startWitness({ ...options, log: (line) => process.stdout.write(`${new Date().toISOString()} ${line}\n`) });
  } catch (error) {
    process.stderr.write(`${error.message}\n${USAGE}\n`);
    process.exitCode = 2;
    return;
  }
  const out = (line) => process.stdout.write(`${line}\n`);
  out(`witness ${witness.witness.key.name}${witness.keyCreated ? ' (new key)' : ''}`);
  out(`verifier key (give it to the log's operator and to whoever trusts your cosignatures):`);
  out(witness.verifierKey);
  for (const [origin, keys] of witness.witness.logs) out(`log ${origin}: ${keys.length} key${keys.length === 1 ? '' : 's'}, state ${originHash(origin)}/`);
  out(`listening on ${witness.url}`);
  const stop = () => {
    witness.close().then(() => process.exit(0));
  };
  process.once('SIGINT', stop);
  process.once('SIGTERM', stop);
}

/** Run as a program (not imported): this file is the script node was started with. */
function isMainModule() {
  try {
    return process.argv[1] !== undefined && import.meta.url === pathToFileURL(realpathSync(process.argv[1])).href;
  } catch {
    return false;
  }
}
if (isMainModule()) await main(process.argv.slice(2));
