#!/usr/bin/env node
/**
 * Verifies the public ledger of a picks service (docs/API.md, "Verifying the record"), as a
 * customer would: this file uses nothing but Node (>= 20) itself, so you can read all of it.
 *
 *   node docs/examples/verify-ledger.mjs <base_url> [--key <log key>] [--previous-key <log key>]...
 *       [--witness <witness key>]... [--checkpoint <file>]... [--max-checkpoint-age <seconds>]
 *       [--anchor <seq>:<hash>]... [--received <file.jsonl>] [--verbose]
 *   node docs/examples/verify-ledger.mjs --receipt <file.json>... --key <log key> [--witness <witness key>]...
 *   npm run verify-ledger -- <base_url> ...
 *
 * It prints a summary first (the result, or the first check that fails; entries; picks, imported
 * and withdrawn; settlements and their mean CLV), then every failure. --verbose also lists the ids
 * of the imported and withdrawn picks, every settled pick with its recomputed result and CLV, and
 * the notes.
 *
 * It downloads the whole chain (GET <base_url>/api/public/ledger, 500 entries a page) and checks,
 * reporting each failure with the entry's seq and the check's name:
 *
 *  1. hash, prev_hash  every hash is the SHA-256 of the RFC 8785 canonical JSON of the entry's
 *     seven clear fields; every prev_hash is the previous entry's hash (64 zeros for seq 1);
 *  2. seq  seq runs 1, 2, 3, ... without gaps or repeats;
 *  3. at_order  append times never go backwards;
 *  4. commitment  every revealed entry's commitment is the SHA-256 of the canonical JSON of
 *     {"pick": pick, "salt": salt}: the pick shown now is the pick committed then. (The salt is 32
 *     random bytes: nobody could guess a hidden pick by hashing the few plausible ones.) An entry
 *     failing this is not read any further;
 *  5. reveal  no entry is still hidden 5 minutes after its reveal_after (the kickoff rounded up to
 *     the quarter hour), unless a later pick.rescheduled entry of the pick moved the kickoff and
 *     that is not 5 minutes past;
 *  6. imported  a pick whose pick.published came at or after its kickoff (once revealed; before,
 *     at or after its reveal_after) is "imported" (published before the ledger existed) and
 *     listed apart, not failed: the ledger proves nothing about when it was published. (A pick
 *     whose entry says it came earlier than it did breaks check 8, which ties reveal_after to the
 *     revealed kickoff, or check 1.);
 *  7. one_published  exactly one pick.published per pick, and no entry of the pick before it;
 *  8. pick_fields  a pick's revealed entries agree on every field but status, settled_at, result,
 *     closing_odds, final_score, warnings and kickoff_at, and kickoff_at changes only at a
 *     pick.rescheduled entry; a revealed pick has its entry's pick_id, and its entry's reveal_after
 *     is its kickoff rounded up to the quarter hour (UTC; entries appended before that rule name
 *     the kickoff itself, which is also accepted). A field the earlier entry lacks is no change: the Pick gains fields
 *     (docs/API.md, "Versioning"), and an entry commits the Pick as it was shown then;
 *  9. settlement  a settled pick with a final score has the result the rules of docs/API.md
 *     ("Settlement of lines") give for that score; the closing-line value (CLV) is printed;
 *  and head, checkpoint: the service's head and daily checkpoints are entries of the chain.
 *
 * The service also keeps a Merkle tree over the entries (RFC 9162, section 2.1: the leaves are the
 * entries in seq order, the leaf of an entry is SHA-256(0x00 || its hash as 32 bytes)) and signs
 * its root in a checkpoint, a signed note of the transparency logs (c2sp.org/signed-note,
 * c2sp.org/tlog-checkpoint: "<origin>\n<tree size>\n<base64 root>\n", then "— <key name>
 * <base64 signature>" lines). It fetches the latest (GET /api/public/ledger/checkpoint) and the
 * log's key (GET /api/public/ledger/key), and checks (a failure about a checkpoint is reported at
 * its tree size, the last seq it covers):
 *
 * 10. key, signature  the checkpoint is signed (Ed25519) by the log's key: the key you pin with
 *     --key <name>+<id>+<key> (a service serving another key fails `key`), else the key it
 *     serves, which proves only that the checkpoint and the key came from the same place;
 * 11. checkpoint_root  its root is the root of the tree of the first <tree size> entries
 *     downloaded: the checkpoint and the chain tell the same history; checkpoint_age  no entry
 *     appended over an hour ago (--max-checkpoint-age <seconds>) is beyond it: the entries after a
 *     checkpoint are covered by no signature and no witness, so a service showing an old one for
 *     good could show you another history after it;
 * 12. witness  every witness named with --witness <name>+<id>+<key> (repeatable) cosigned it
 *     (c2sp.org/tlog-cosignature, cosignature/v1): a witness cosigns only a checkpoint consistent
 *     with every one it saw before, so a history forked for you alone lacks its cosignature;
 * 13. consistency  every checkpoint you archived earlier (--checkpoint <file>, repeatable: the
 *     note as served) is signed by the key (or by a key the log had before, when the service
 *     replaced its key: --previous-key, repeatable), its root is the root of the chain served now at its
 *     size, and the service proves it consistent with the latest (RFC 9162 consistency proof,
 *     GET /api/public/ledger/proof/consistency): the log only ever grew;
 * 14. inclusion  with --received, each ledger_hash received for an entry the checkpoint covers
 *     is proved to be that entry of its tree (RFC 9162 inclusion proof, GET
 *     /api/public/ledger/proof/inclusion), one request at a time.
 * An empty ledger has no checkpoint yet: the summary says so, nothing fails.
 *
 * A receipt (the JSON of GET /api/v1/picks/:id/receipt, saved as a file; GraphQL's Pick.receipt
 * carries the same facts under GraphQL's names and is not read here) is checked offline, without the
 * service: --receipt <file.json> (repeatable) with --key, which it requires (the key a receipt
 * carries proves nothing). Its checkpoint must be signed by that key (signature), and cosigned by
 * every --witness (witness); its tree_size must be the checkpoint's (tree_size); each entry's
 * hash is recomputed from its seven clear fields (hash), its commitment from its pick and salt
 * (commitment), and each entry the checkpoint covers is proved included at leaf seq - 1
 * (inclusion). Entries appended after the checkpoint are pending: listed as notes, checked by a
 * later receipt; a seq listed as pending that the checkpoint covers fails (pending), and a receipt
 * that proves no entry at all (every one pending, or no checkpoint yet) fails (receipt): it is not
 * worth archiving yet. A receipt proves that its entries are in the log; that they are all of the
 * pick's entries only the whole chain shows.
 *
 * The pieces are exported for your own tools: verifyLedger, formatReport, verifyReceipt,
 * formatReceipt; treeRoot, leafHash, verifyInclusion, verifyConsistency (RFC 9162); and
 * parseVerifierKey, parseNote, verifyNote, parseCheckpoint, openCheckpoint, verifyCosignature (C2SP).
 *
 * With --anchor seq:hash (repeatable) the chain's entry at seq must still have that hash: give it
 * the heads (GET /api/public/ledger/head) you archived earlier. With --received file.jsonl (one
 * webhook body per line) each body's data.ledger_seq / data.ledger_hash must be in the chain, and
 * once revealed, the pick you received must be the pick committed.
 *
 * What this proves: the record was not changed after the fact. A pick's commitment was public
 * before kickoff and its reveal matches it, so odds, selection or line cannot have been edited
 * once the result was known; entries cannot be removed, reordered or rewritten without breaking
 * every later hash. Against an operator rewriting the whole chain, only a head kept outside the
 * service protects you: an archived head (--anchor), the ledger_hash of a webhook you received
 * (--received), an archived checkpoint or receipt (--checkpoint, --receipt: a checkpoint commits
 * to every entry before it), or someone else's copy. Witnesses are such copies kept by others:
 * with their cosignatures required (--witness), the operator cannot show you a history it does
 * not show them. The times in the chain are the operator's own word, backed only by such outside
 * copies.
 *
 * What it cannot prove: that the operator published every pick it found (a pick it never
 * published is not in the ledger, so a record can still be flattered by picks it chose not to
 * publish), that final scores and closing odds are the real ones (compare them with a source you
 * trust), or anything about the timing of imported picks.
 *
 * Exit code: 0 when every check holds, 1 when one fails, 2 when the ledger or a file could not be
 * read or the arguments are wrong (a --receipt without --key among them).
 */
import { createHash, createPublicKey, verify } from 'node:crypto';
import { readFileSync, realpathSync } from 'node:fs';
import { pathToFileURL } from 'node:url';

const GENESIS_HASH = '0'.repeat(64);
const PAGE_LIMIT = 500;
const REVEAL_GRACE_MS = 5 * 60 * 1000;
/** reveal_after is the kickoff rounded up to the quarter hour (UTC); entries appended before that rule name the kickoff itself. */
const REVEAL_WINDOW_MS = 15 * 60 * 1000;
const revealAfterOf = (kickoffMs) => Math.ceil(kickoffMs / REVEAL_WINDOW_MS) * REVEAL_WINDOW_MS;
/** The pick fields that may change between a pick's entries (kickoff_at: only when rescheduled). */
const CHANGING_FIELDS = new Set(['status', 'settled_at', 'result', 'closing_odds', 'final_score', 'warnings']);
const HEX_256 = /^[0-9a-f]{64}$/;

// ---- RFC 8785 (JCS) canonical JSON and hashes

/**
 * RFC 8785 canonical JSON of a JSON value: no whitespace, object keys sorted by UTF-16 code
 * units (JavaScript's default sort), strings as JSON.stringify escapes them and numbers in
 * ECMAScript's shortest round-trip form, which is what RFC 8785 prescribes.
 */
export function canonicalJson(value) {
  if (value === null || typeof value === 'boolean' || typeof value === 'string') return JSON.stringify(value);
  if (typeof value === 'number') {
    if (!Number.isFinite(value)) throw new TypeError('canonical JSON has no NaN or Infinity');
    return JSON.stringify(value);
  }
  if (Array.isArray(value)) return `[${value.map(canonicalJson).join(',')}]`;
  if (typeof value === 'object') {
    const members = Object.keys(value)
      .sort()
      .map((key) => `${JSON.stringify(key)}:${canonicalJson(value[key])}`);
    return `{${members.join(',')}}`;
  }
  throw new TypeError(`not a JSON value: ${typeof value}`);
}

export function sha256Hex(text) {
  return createHash('sha256').update(text, 'utf8').digest('hex');
}

/** The hash of an entry: over exactly these seven fields. */
export function entryHash({ seq, type, at, pick_id, reveal_after, commitment, prev_hash }) {
  return sha256Hex(canonicalJson({ seq, type, at, pick_id, reveal_after, commitment, prev_hash }));
}

export function commitmentOf(pick, salt) {
  return sha256Hex(canonicalJson({ pick, salt }));
}

// ---- Settlement rules (docs/API.md, "Settlement of lines")

/** One whole or half line: above it wins, on it is void (a push), below it loses. */
const marginResult = (margin) => (margin > 0 ? 'won' : margin < 0 ? 'lost' : 'void');

/** A line bet; a quarter line is half the stake on each neighbouring half and whole line. */
function lineResult(point, marginAt) {
  if (typeof point !== 'number' || !Number.isInteger(point * 4)) return null;
  if (Number.isInteger(point * 2)) return marginResult(marginAt(point));
  const lower = marginResult(marginAt(point - 0.25));
  const upper = marginResult(marginAt(point + 0.25));
  if (lower === upper) return lower;
  if (lower !== 'void' && upper !== 'void') return null;
  return lower === 'won' || upper === 'won' ? 'half_won' : 'half_lost';
}

/**
 * The results a final score allows for a pick: usually one; for an h2h team pick on a level score
 * `lost` (three-way market) or `void` (two-way market). Null when the rules do not cover the pick.
 */
export function resultsFromScore(pick, home, away) {
  const { market, selection, line, home_team: homeTeam, away_team: awayTeam } = pick;
  const isHome = selection === homeTeam;
  const isAway = selection === awayTeam;
  if (market === 'h2h') {
    if (selection === 'Draw') return [home === away ? 'won' : 'lost'];
    if (!isHome && !isAway) return null;
    if (home === away) return ['lost', 'void'];
    return [(home > away) === isHome ? 'won' : 'lost'];
  }
  let result = null;
  if (market === 'spreads' && (isHome || isAway)) {
    const [own, other] = isHome ? [home, away] : [away, home];
    result = lineResult(line, (point) => own + point - other);
  } else if (market === 'totals' && (selection === 'Over' || selection === 'Under')) {
    const total = home + away;
    result = lineResult(line, (point) => (selection === 'Over' ? total - point : point - total));
  }
  return result === null ? null : [result];
}

// ---- The Merkle tree (RFC 9162, section 2.1)

const sha256 = (...parts) => createHash('sha256').update(Buffer.concat(parts)).digest();
const half = (n) => Math.floor(n / 2);
const isOdd = (n) => n % 2 === 1;
function isPowerOfTwo(n) {
  let k = 1;
  while (k < n) k *= 2;
  return k === n;
}

/** The leaf of an entry: SHA-256(0x00 || the entry's hash as 32 bytes). */
export function leafHash(entryHashHex) {
  if (typeof entryHashHex !== 'string' || !HEX_256.test(entryHashHex)) throw new TypeError('an entry hash is 64 lower-case hex digits');
  return sha256(Buffer.from([0x00]), Buffer.from(entryHashHex, 'hex'));
}

/** An interior node: SHA-256(0x01 || left || right). */
export function nodeHash(left, right) {
  return sha256(Buffer.from([0x01]), left, right);
}

/**
 * The root of the tree over these leaf hashes: the left subtree holds the largest power of two
 * of leaves below their number, the right one the rest. The empty tree's root is SHA-256 of nothing.
 */
export function treeRoot(leaves, start = 0, end = leaves.length) {
  const n = end - start;
  if (n === 0) return sha256();
  if (n === 1) return leaves[start];
  let split = 1;
  while (split * 2 < n) split *= 2;
  return nodeHash(treeRoot(leaves, start, start + split), treeRoot(leaves, start + split, end));
}

/** The root of the tree of the first `size` entries; null when one of their hashes is malformed (its hash check fails). */
function rootOfEntries(entries, size) {
  try {
    return treeRoot(entries.slice(0, size).map((entry) => leafHash(entry.hash)));
  } catch {
    return null;
  }
}

/**
 * RFC 9162, 2.1.3.2: does `proof` (the sibling hashes, bottom up) prove the leaf hash `leaf` to
 * be the leaf at `leafIndex` of the tree of `treeSize` leaves whose root is `root`?
 */
export function verifyInclusion(leafIndex, treeSize, leaf, proof, root) {
  if (!Number.isSafeInteger(leafIndex) || !Number.isSafeInteger(treeSize) || leafIndex < 0 || leafIndex >= treeSize) return false;
  let fn = leafIndex;
  let sn = treeSize - 1;
  let r = leaf;
  for (const p of proof) {
    if (sn === 0) return false; // a longer path than the tree is deep
    if (isOdd(fn) || fn === sn) {
      r = nodeHash(p, r);
      // The last node of its level has no right sibling: climb to where it is a right child.
      while (fn !== 0 && !isOdd(fn)) [fn, sn] = [half(fn), half(sn)];
    } else {
      r = nodeHash(r, p);
    }
    [fn, sn] = [half(fn), half(sn)];
  }
  return sn === 0 && r.equals(root);
}

/**
 * RFC 9162, 2.1.4.2: does `proof` show the tree of `first` leaves with root `firstRoot` to be the
 * beginning of the tree of `second` leaves with root `secondRoot`? A tree is consistent with
 * itself (same root, empty proof), and the empty tree with every tree.
 */
export function verifyConsistency(first, second, firstRoot, secondRoot, proof) {
  if (!Number.isSafeInteger(first) || !Number.isSafeInteger(second) || first < 0 || first > second) return false;
  if (first === second) return proof.length === 0 && firstRoot.equals(secondRoot);
  if (first === 0) return proof.length === 0;
  if (proof.length === 0) return false;
  // A first tree of a power of two leaves is a node of the second: its root starts the path.
  const path = isPowerOfTwo(first) ? [firstRoot, ...proof] : proof;
  let fn = first - 1;
  let sn = second - 1;
  while (isOdd(fn)) [fn, sn] = [half(fn), half(sn)];
  let fr = path[0];
  let sr = path[0];
  for (const c of path.slice(1)) {
    if (sn === 0) return false;
    if (isOdd(fn) || fn === sn) {
      fr = nodeHash(c, fr);
      sr = nodeHash(c, sr);
      while (fn !== 0 && !isOdd(fn)) [fn, sn] = [half(fn), half(sn)];
    } else {
      sr = nodeHash(sr, c);
    }
    [fn, sn] = [half(fn), half(sn)];
  }
  return sn === 0 && fr.equals(firstRoot) && sr.equals(secondRoot);
}

const BASE64 = /^(?:[A-Za-z0-9+/]{4})*(?:[A-Za-z0-9+/]{2}==|[A-Za-z0-9+/]{3}=)?$/;

/** Standard base64 (with padding) to bytes; null when it is not, or not the one encoding of its bytes (no stray padding bits). */
function fromBase64(text) {
  if (typeof text !== 'string' || !BASE64.test(text)) return null;
  const bytes = Buffer.from(text, 'base64');
  return bytes.toString('base64') === text ? bytes : null;
}

/** A hash on the wire: 32 bytes in base64; null when it is not. */
export function hashFromBase64(text) {
  const bytes = fromBase64(text);
  return bytes !== null && bytes.length === 32 ? bytes : null;
}

/** A proof's hashes; null when one is not a hash. */
function proofFromBase64(hashes) {
  if (!Array.isArray(hashes)) return null;
  const proof = hashes.map(hashFromBase64);
  return proof.includes(null) ? null : proof;
}

// ---- Signed notes, checkpoints and cosignatures (c2sp.org/signed-note, tlog-checkpoint, tlog-cosignature)

/** The signature types this verifier knows: Ed25519 over the note (a log), timestamped Ed25519 cosignature/v1 (a witness). */
export const NOTE_ED25519 = 0x01;
export const COSIGNATURE_ED25519 = 0x04;

/**
 * A verifier key, "<name>+<key id, 8 hex digits>+<base64(type || 32-byte Ed25519 public key)>".
 * The key id must be the first 4 bytes of SHA-256(name || "\n" || type || public key).
 */
export function parseVerifierKey(text) {
  const match = /^([^+\s]+)\+([0-9a-fA-F]{8})\+(\S+)$/.exec(typeof text === 'string' ? text.trim() : '');
  if (!match) throw new Error(`not a verifier key <name>+<key id>+<base64 key>: ${text}`);
  const [, name, idHex, material] = match;
  const bytes = fromBase64(material);
  if (bytes === null || bytes.length !== 33 || (bytes[0] !== NOTE_ED25519 && bytes[0] !== COSIGNATURE_ED25519)) {
    throw new Error(`not an Ed25519 key (type 0x01, a log's, or 0x04, a witness's): ${text}`);
  }
  const [type, raw] = [bytes[0], bytes.subarray(1)];
  const id = sha256(Buffer.from(`${name}\n`, 'utf8'), Buffer.from([type]), raw).subarray(0, 4);
  if (id.toString('hex') !== idHex.toLowerCase()) throw new Error(`the key id ${idHex} is not the id of ${name}'s key (${id.toString('hex')}): ${text}`);
  const publicKey = createPublicKey({ key: { kty: 'OKP', crv: 'Ed25519', x: raw.toString('base64url') }, format: 'jwk' });
  return { text: match[0], name, id, type, raw, publicKey };
}

const asKey = (key) => (typeof key === 'string' ? parseVerifierKey(key) : key);
const sameKey = (a, b) => a.name === b.name && a.type === b.type && a.raw.equals(b.raw);
const idHex = (id) => id.toString('hex');

/**
 * A signed note's text (up to and with the newline before the last blank line) and its
 * signature lines "— <key name> <base64(4-byte key id || signature)>". Throws when malformed.
 */
export function parseNote(note) {
  if (typeof note !== 'string') throw new Error('a note is text');
  if (/[\u0000-\u0009\u000b-\u001f]/.test(note)) throw new Error('a note has no control characters but newlines');
  const split = note.lastIndexOf('\n\n');
  if (split < 0 || !note.endsWith('\n')) throw new Error('a note is a text, a blank line and signature lines, each ending in a newline');
  const text = note.slice(0, split + 1);
  const signatures = note
    .slice(split + 2, -1)
    .split('\n')
    .map((line) => {
      const match = /^\u2014 ([^\s+]+) (\S+)$/.exec(line);
      const bytes = match ? fromBase64(match[2]) : null;
      if (bytes === null || bytes.length < 5) throw new Error(`not a signature line "— <key name> <base64 signature>": ${line}`);
      return { name: match[1], keyId: bytes.subarray(0, 4), signature: bytes.subarray(4) };
    });
  return { text, signatures };
}

/**
 * The note's text and signatures when it carries a valid signature by this log key (type 0x01;
 * Ed25519 over the text). Throws, saying why, when it does not: no signature by the key (a line
 * with the key's name but another key id was made by another key), or one that does not verify.
 */
export function verifyNote(note, key) {
  const logKey = asKey(key);
  if (logKey.type !== NOTE_ED25519) throw new Error(`${logKey.name}'s key is not a log key (type 0x01)`);
  const { text, signatures } = parseNote(note);
  const named = signatures.filter((s) => s.name === logKey.name);
  const mine = named.filter((s) => s.keyId.equals(logKey.id));
  if (mine.length === 0) {
    const others = named.map((s) => idHex(s.keyId)).join(', ');
    throw new Error(`no signature by the key ${logKey.name}+${idHex(logKey.id)}${others ? ` (the note's signature named ${logKey.name} is by the key id ${others}: another key)` : ''}`);
  }
  for (const s of mine) {
    if (s.signature.length !== 64 || !verify(null, Buffer.from(text, 'utf8'), logKey.publicKey, s.signature)) {
      throw new Error(`the signature by ${logKey.name} does not verify: the note was changed after it was signed`);
    }
  }
  return { text, signatures };
}

/** A checkpoint's text: origin, tree size (decimal), root (base64), then optional extension lines. Throws when malformed. */
export function parseCheckpoint(text) {
  const lines = text.split('\n');
  const [origin, size, root] = lines;
  if (lines.length < 4 || lines.at(-1) !== '' || lines.slice(0, -1).includes('')) throw new Error('a checkpoint is at least three non-empty lines: origin, tree size, root hash');
  if (!/^(0|[1-9][0-9]*)$/.test(size) || !Number.isSafeInteger(Number(size))) throw new Error(`the tree size ${size} is not a decimal number`);
  const rootHash = hashFromBase64(root);
  if (rootHash === null) throw new Error(`the root ${root} is not a base64 SHA-256 hash`);
  return { origin, size: Number(size), root: rootHash };
}

/** A checkpoint signed by the log key, parsed: { origin, size, root, text, signatures }. Its origin must be the key's name. */
export function openCheckpoint(note, key) {
  const logKey = asKey(key);
  const { text, signatures } = verifyNote(note, logKey);
  const checkpoint = parseCheckpoint(text);
  if (checkpoint.origin !== logKey.name) throw new Error(`the checkpoint is of the log ${checkpoint.origin}, the key is ${logKey.name}'s`);
  return { ...checkpoint, text, signatures };
}

/** The tree size a note claims, unverified: only to name a failure. 0 when there is none. */
function claimedSize(note) {
  try {
    return parseCheckpoint(parseNote(note).text).size;
  } catch {
    return 0;
  }
}

/**
 * The witness's cosignature/v1 on the checkpoint `note`: a line "— <witness name>
 * <base64(key id || 8-byte big-endian time || Ed25519 signature)>" whose signature is over
 * "cosignature/v1\ntime <time>\n" followed by the checkpoint's text. Returns { timestamp } (Unix
 * seconds); throws, saying why, when there is none, it was made by another key, or it does not verify.
 */
export function verifyCosignature(note, witnessKey) {
  const witness = asKey(witnessKey);
  if (witness.type !== COSIGNATURE_ED25519) throw new Error(`${witness.name}'s key is not a witness key (type 0x04)`);
  const { text, signatures } = parseNote(note);
  const named = signatures.filter((s) => s.name === witness.name);
  const mine = named.filter((s) => s.keyId.equals(witness.id));
  if (mine.length === 0) {
    if (named.length === 0) throw new Error(`no cosignature by ${witness.name}`);
    throw new Error(`the cosignature named ${witness.name} is by the key id ${named.map((s) => idHex(s.keyId)).join(', ')}, not ${idHex(witness.id)}: another key`);
  }
  let timestamp = 0;
  for (const s of mine) {
    if (s.signature.length !== 8 + 64) throw new Error(`the cosignature by ${witness.name} is not a time and an Ed25519 signature`);
    const time = s.signature.readBigUInt64BE(0);
    // tlog-cosignature: the time is not 0 and at most 2^63 - 1.
    if (time === 0n || time > 2n ** 63n - 1n) throw new Error(`the cosignature by ${witness.name} carries the time ${time}, which no cosignature may`);
    const message = Buffer.from(`cosignature/v1\ntime ${time}\n${text}`, 'utf8');
    if (!verify(null, message, witness.publicKey, s.signature.subarray(8))) throw new Error(`the cosignature by ${witness.name} does not verify: the checkpoint or its time was changed`);
    timestamp = Number(time);
  }
  return { timestamp };
}

/** How old an entry may be and still be in no checkpoint: the service signs every minute by default. */
const DEFAULT_MAX_CHECKPOINT_AGE_SECONDS = 3_600;

/** An archived checkpoint opened with the log's key, or one it had before (a replaced key). */
function openWithAnyKey(note, keys) {
  let firstError = null;
  for (const key of keys) {
    try {
      return openCheckpoint(note, key);
    } catch (error) {
      firstError ??= error;
    }
  }
  throw firstError;
}

/** Each witness's cosignature on a verified checkpoint: the failures (check `witness`), and how many cosigned. */
function checkWitnesses(note, size, witnesses, fail) {
  let cosigned = 0;
  for (const witness of witnesses) {
    try {
      verifyCosignature(note, witness);
      cosigned += 1;
    } catch (error) {
      fail(size, 'witness', `witness ${witness.name}: ${error.message}`);
    }
  }
  return cosigned;
}

// ---- Receipts, checked offline

/**
 * Checks a receipt (GET /api/v1/picks/:id/receipt) with the log key you trust, and no service:
 * its checkpoint's signature and, for each witness key given, cosignature; its tree_size; each
 * entry's hash and commitment; and the inclusion of each entry the checkpoint covers. Returns
 * { ok, failures, notes, pickId, checkpoint, entries, included, pending }.
 */
export function verifyReceipt(receipt, { key, witnesses = [] } = {}) {
  if (!key) throw new TypeError('a receipt is checked with the log key you trust: the key it carries proves nothing');
  const logKey = asKey(key);
  const witnessKeys = witnesses.map(asKey);
  const failures = [];
  const notes = [];
  const fail = (seq, check, message) => failures.push({ seq, check, message });
  const entries = Array.isArray(receipt?.entries) ? receipt.entries : [];
  if (!Array.isArray(receipt?.entries)) fail(0, 'receipt', 'the receipt has no entries');

  let servedKey = null;
  try {
    servedKey = parseVerifierKey(receipt?.key);
  } catch {
    // A receipt without a readable key: the key you gave decides anyway.
  }
  if (servedKey === null || !sameKey(servedKey, logKey)) fail(0, 'key', `the receipt names the key ${receipt?.key}, not the key you gave ${logKey.text}`);

  let checkpoint = null;
  let cosigned = 0;
  if (receipt?.checkpoint === null || receipt?.checkpoint === undefined) {
    if (receipt?.tree_size !== null && receipt?.tree_size !== undefined) fail(0, 'tree_size', `the receipt says tree_size ${receipt.tree_size} but carries no checkpoint`);
    if (entries.length > 0) notes.push('no checkpoint yet: no entry is covered by a signed tree; a later receipt will be');
  } else {
    try {
      checkpoint = openCheckpoint(receipt.checkpoint, logKey);
    } catch (error) {
      fail(claimedSize(receipt.checkpoint), 'signature', `the receipt's checkpoint: ${error.message}`);
    }
    if (checkpoint !== null) {
      if (receipt.tree_size !== checkpoint.size) fail(checkpoint.size, 'tree_size', `the receipt says tree_size ${receipt.tree_size}, its signed checkpoint ${checkpoint.size}`);
      cosigned = checkWitnesses(receipt.checkpoint, checkpoint.size, witnessKeys, fail);
    }
  }

  let included = 0;
  const pending = [];
  for (const entry of entries) {
    const seq = entry?.seq;
    if (entry?.hash !== hashOrNull(entry)) fail(seq, 'hash', 'the hash is not the hash of the entry\'s fields: the entry was changed');
    const { pick, salt } = entry ?? {};
    if (typeof salt !== 'string' || !HEX_256.test(salt) || pick === null || typeof pick !== 'object' || commitmentOf(pick, salt) !== entry.commitment) {
      fail(seq, 'commitment', 'the pick and salt do not give the commitment: the pick shown is not the pick committed');
    } else if (pick.id !== entry.pick_id || entry.pick_id !== receipt.pick_id) {
      fail(seq, 'pick_fields', `the entry is about ${entry.pick_id}, its pick is ${pick.id}, the receipt is for ${receipt.pick_id}`);
    }
    if (checkpoint === null) continue;
    if (!Number.isSafeInteger(seq) || seq < 1) {
      fail(seq, 'inclusion', `seq ${seq} is not a position in the tree`);
    } else if (seq > checkpoint.size) {
      pending.push(seq);
    } else {
      const proof = proofFromBase64(entry.inclusion);
      const proved = entry.leaf_index === seq - 1 && proof !== null && HEX_256.test(entry.hash) && verifyInclusion(seq - 1, checkpoint.size, leafHash(entry.hash), proof, checkpoint.root);
      if (proved) included += 1;
      else fail(seq, 'inclusion', `the inclusion proof does not prove the entry to be leaf ${seq - 1} of the checkpoint of size ${checkpoint.size}`);
    }
  }
  // The entries the service lists as pending: appended after the checkpoint, so beyond its size.
  const listed = Array.isArray(receipt?.pending) ? receipt.pending : [];
  for (const seq of listed) {
    if (!Number.isSafeInteger(seq) || seq < 1) fail(0, 'pending', `pending lists ${JSON.stringify(seq)}, which is no seq`);
    else if (checkpoint !== null && seq <= checkpoint.size) fail(seq, 'pending', `seq ${seq} is listed as pending, yet the checkpoint (size ${checkpoint.size}) covers it: its entry and proof are missing`);
    else if (!pending.includes(seq)) pending.push(seq);
  }
  pending.sort((a, b) => a - b);
  for (const seq of pending) notes.push(`seq ${seq}: appended after the checkpoint${checkpoint === null ? '' : ` (size ${checkpoint.size})`}, not covered yet: a later receipt covers it`);
  // A receipt is worth archiving only when it proves something.
  if (included === 0 && failures.length === 0) {
    fail(0, 'receipt', `the receipt proves no entry yet${pending.length > 0 ? ` (${pending.length} pending)` : ''}: fetch it again after the next checkpoint`);
  }

  return {
    ok: failures.length === 0,
    failures,
    notes,
    pickId: receipt?.pick_id ?? null,
    checkpoint: checkpoint === null ? null : { origin: checkpoint.origin, size: checkpoint.size, root: checkpoint.root.toString('base64'), keyName: logKey.name, cosignatures: checkpoint.signatures.length - 1, witnesses: witnessKeys.length, cosigned },
    entries: entries.length,
    included,
    pending,
  };
}

// ---- Reading the ledger

async function getJson(url) {
  const response = await fetch(url, { headers: { accept: 'application/json' } });
  if (!response.ok) throw new Error(`GET ${url} answered HTTP ${response.status}`);
  return response.json();
}

/** The text at `url`; null when the service answers 404: nothing there (an empty ledger has no checkpoint). */
async function getText(url) {
  const response = await fetch(url, { headers: { accept: 'text/plain' } });
  if (response.status === 404) {
    await response.body?.cancel();
    return null;
  }
  if (!response.ok) throw new Error(`GET ${url} answered HTTP ${response.status}`);
  return response.text();
}

/** A proof the service owes: { proof } or, when it answers an HTTP error, { error } (a failure of the check, not of the download). */
async function getProof(url) {
  const response = await fetch(url, { headers: { accept: 'application/json' } });
  if (!response.ok) {
    await response.body?.cancel();
    return { error: `GET ${url} answered HTTP ${response.status}` };
  }
  return { proof: await response.json() };
}

/** Every entry, in seq order, page by page. */
async function fetchChain(base) {
  const entries = [];
  let after = 0;
  for (;;) {
    const page = await getJson(`${base}/api/public/ledger?after=${after}&limit=${PAGE_LIMIT}`);
    entries.push(...page.entries);
    if (page.next_after === null || page.next_after === undefined) return entries;
    if (!(page.next_after > after)) throw new Error(`the ledger's next_after ${page.next_after} does not move past ${after}`);
    after = page.next_after;
  }
}

/** An entry's hash; null when a field is missing, so the hash check fails. */
function hashOrNull(entry) {
  try {
    return entryHash(entry);
  } catch {
    return null;
  }
}

const isRevealed = (entry) => entry.pick !== undefined && entry.pick !== null;
const time = (iso) => Date.parse(iso);

// ---- The checks

/**
 * Downloads and checks the ledger of the service at `baseUrl`. anchors: [{ seq, hash }] heads
 * archived earlier; received: webhook bodies (objects or JSON text); now: the time check 5 uses;
 * key: the log's verifier key you pin (text); witnesses: witness verifier keys (text); archived:
 * signed checkpoints (note text) archived earlier.
 */
export async function verifyLedger(baseUrl, { anchors = [], received = [], now = new Date(), key = null, witnesses = [], archived = [], previousKeys = [], maxCheckpointAgeSeconds = DEFAULT_MAX_CHECKPOINT_AGE_SECONDS } = {}) {
  const base = baseUrl.replace(/\/+$/, '');
  // The head and checkpoints first: the chain fetched after them must contain them.
  const servedKey = await getText(`${base}/api/public/ledger/key`);
  const signed = await getText(`${base}/api/public/ledger/checkpoint`);
  const head = await getJson(`${base}/api/public/ledger/head`);
  const { checkpoints } = await getJson(`${base}/api/public/ledger/checkpoints`);
  const entries = await fetchChain(base);

  const failures = [];
  const notes = [];
  const fail = (seq, check, message) => failures.push({ seq, check, message });
  const bySeq = new Map(entries.map((entry) => [entry.seq, entry]));
  /** Revealed entries whose pick and salt match their commitment: the only picks worth reading. */
  const trusted = new Set();

  // 1-4: the chain itself.
  let previous = null;
  for (const entry of entries) {
    const expectedSeq = previous === null ? 1 : previous.seq + 1;
    if (entry.seq > expectedSeq) {
      const missing = entry.seq - 1 === expectedSeq ? `seq ${expectedSeq} is missing` : `seqs ${expectedSeq} to ${entry.seq - 1} are missing`;
      fail(expectedSeq, 'seq', `${missing}: ${previous === null ? 'the chain starts' : `seq ${previous.seq} is followed`} at ${entry.seq}`);
    } else if (entry.seq < expectedSeq) {
      fail(entry.seq, 'seq', `seq ${entry.seq} comes after seq ${previous.seq}: repeated or out of order`);
    }
    if (entry.hash !== hashOrNull(entry)) fail(entry.seq, 'hash', 'the hash is not the hash of the entry\'s fields: the entry was changed');
    const expectedPrev = previous === null ? GENESIS_HASH : previous.hash;
    if (entry.prev_hash !== expectedPrev) {
      fail(entry.seq, 'prev_hash', previous === null ? 'the first entry does not link to 64 zeros' : `prev_hash is not the hash of seq ${previous.seq}: an entry was removed, added or moved`);
    }
    if (previous !== null && !(time(entry.at) >= time(previous.at))) fail(entry.seq, 'at_order', `appended at ${entry.at}, before seq ${previous.seq} (${previous.at})`);
    if (isRevealed(entry)) {
      if (typeof entry.salt === 'string' && HEX_256.test(entry.salt) && commitmentOf(entry.pick, entry.salt) === entry.commitment) trusted.add(entry);
      else fail(entry.seq, 'commitment', 'the revealed pick and salt do not give the commitment: the pick shown is not the pick committed');
    }
    previous = entry;
  }

  // Per pick, in seq order.
  const picks = new Map();
  for (const entry of entries) {
    if (!picks.has(entry.pick_id)) picks.set(entry.pick_id, []);
    picks.get(entry.pick_id).push(entry);
  }

  const imported = [];
  const withdrawn = [];
  const settlements = [];
  for (const [pickId, pickEntries] of picks) {
    // A pick whose last entry is a hold was withdrawn before kickoff: it stays on the record.
    if (pickEntries.at(-1).type === 'pick.held') withdrawn.push(pickId);
    // 5: hidden too long, unless a later reschedule moved the kickoff (postponed).
    pickEntries.forEach((entry, i) => {
      if (isRevealed(entry) || now.getTime() < time(entry.reveal_after) + REVEAL_GRACE_MS) return;
      const postponed = pickEntries.slice(i + 1).some((later) => later.type === 'pick.rescheduled' && now.getTime() < time(later.reveal_after) + REVEAL_GRACE_MS);
      if (!postponed) fail(entry.seq, 'reveal', `still not revealed more than 5 minutes after its reveal_after ${entry.reveal_after}`);
    });

    // 7: one pick.published, first.
    const published = pickEntries.filter((entry) => entry.type === 'pick.published');
    if (pickEntries[0].type !== 'pick.published') fail(pickEntries[0].seq, 'one_published', `pick ${pickId} has a ${pickEntries[0].type} entry before any pick.published`);
    for (const extra of published.slice(1)) fail(extra.seq, 'one_published', `a second pick.published of pick ${pickId} (the first is seq ${published[0].seq})`);

    // 6: published before kickoff, or imported.
    if (published.length > 0) {
      const first = published[0];
      // reveal_after may be up to 15 minutes after the kickoff: once revealed, the kickoff itself decides.
      const kickoff = trusted.has(first) ? time(first.pick.kickoff_at) : time(first.reveal_after);
      if (time(first.at) >= kickoff) imported.push(pickId);
    }

    // 8: the revealed picks agree with each other and with their entries.
    let before = null;
    for (const entry of pickEntries.filter((e) => trusted.has(e))) {
      const { pick } = entry;
      if (pick.id !== entry.pick_id) fail(entry.seq, 'pick_fields', `the revealed pick is ${pick.id}, the entry is about ${entry.pick_id}`);
      const kickoffMs = time(pick.kickoff_at);
      if (time(entry.reveal_after) !== revealAfterOf(kickoffMs) && time(entry.reveal_after) !== kickoffMs) {
        fail(entry.seq, 'pick_fields', `reveal_after ${entry.reveal_after} is not the pick's kickoff ${pick.kickoff_at} rounded up to the quarter hour`);
      }
      if (before !== null) {
        for (const field of new Set([...Object.keys(before.pick), ...Object.keys(pick)])) {
          if (CHANGING_FIELDS.has(field) || (field === 'kickoff_at' && entry.type === 'pick.rescheduled')) continue;
          // Added to the Pick after the earlier entry was committed; a field that disappears is still a change.
          if (!Object.hasOwn(before.pick, field)) continue;
          const [was, is] = [canonicalJson(before.pick[field] ?? null), canonicalJson(pick[field] ?? null)];
          if (was !== is) fail(entry.seq, 'pick_fields', `${field} changed from ${was} (seq ${before.seq}) to ${is}`);
        }
      }
      before = entry;
    }

    // 9: settlements.
    for (const entry of pickEntries.filter((e) => e.type === 'pick.settled' && trusted.has(e))) {
      const { pick } = entry;
      const settlement = { seq: entry.seq, pickId, pick, result: pick.result, byHand: false, recomputed: null, clv: null };
      const { home, away } = pick.final_score ?? {};
      if (typeof home === 'number' && typeof away === 'number') {
        const allowed = resultsFromScore(pick, home, away);
        settlement.recomputed = allowed === null ? null : allowed.join(' or ');
        if (allowed === null) notes.push(`seq ${entry.seq}: ${pick.market} ${pick.selection} ${pick.line ?? ''} is not covered by the settlement rules, not recomputed`);
        else if (!allowed.includes(pick.result)) fail(entry.seq, 'settlement', `settled ${pick.result}, but the final ${home}-${away} gives ${settlement.recomputed}`);
      } else {
        settlement.byHand = true; // settled by hand, not recomputable: no final score
      }
      if (typeof pick.closing_odds === 'number' && pick.closing_odds > 0) settlement.clv = 100 * (pick.odds / pick.closing_odds - 1);
      settlements.push(settlement);
    }
  }

  // The service's own head and checkpoints must be entries of the chain.
  if (head.seq > 0 && bySeq.get(head.seq)?.hash !== head.hash) fail(head.seq, 'head', `the head (seq ${head.seq}, ${head.hash}) is not in the chain served`);
  for (const checkpoint of checkpoints) {
    if (bySeq.get(checkpoint.seq)?.hash !== checkpoint.hash) fail(checkpoint.seq, 'checkpoint', `the checkpoint of ${checkpoint.checkpoint} is not in the chain served`);
  }

  // --anchor: heads archived earlier.
  for (const anchor of anchors) {
    const entry = bySeq.get(anchor.seq);
    if (!entry) fail(anchor.seq, 'anchor', `the archived head ${anchor.seq}:${anchor.hash} is not in the chain (it ends at ${entries.at(-1)?.seq ?? 0})`);
    else if (entry.hash !== anchor.hash) fail(anchor.seq, 'anchor', `the archived hash ${anchor.hash} is now ${entry.hash}: history was rewritten`);
  }

  // --received: webhook bodies.
  const receivedSummary = { checked: 0, skipped: 0, unrevealed: 0 };
  const receivedHashes = [];
  for (const item of received) {
    const body = typeof item === 'string' ? JSON.parse(item) : item;
    const data = body?.data;
    if (!Number.isInteger(data?.ledger_seq) || typeof data?.ledger_hash !== 'string') {
      receivedSummary.skipped += 1;
      continue;
    }
    receivedSummary.checked += 1;
    receivedHashes.push({ seq: data.ledger_seq, hash: data.ledger_hash });
    const entry = bySeq.get(data.ledger_seq);
    if (!entry || entry.hash !== data.ledger_hash) {
      fail(data.ledger_seq, 'received', `webhook ${body.id} names ${data.ledger_seq}:${data.ledger_hash}, the chain has ${entry ? entry.hash : 'no such entry'}`);
    } else if (!trusted.has(entry)) {
      receivedSummary.unrevealed += 1;
    } else {
      // The fields the entry committed must be those received. Others are not committed: the
      // ledger's own, the market watch (availability, best_odds_since_published: they change after
      // publication without an entry), and any the Pick gained after the entry was made.
      const differs = Object.keys(entry.pick).some((field) => canonicalJson(data[field] ?? null) !== canonicalJson(entry.pick[field] ?? null));
      if (differs) fail(entry.seq, 'received', `webhook ${body.id} carried a pick that differs from the one committed at seq ${entry.seq}`);
    }
  }

  // 10-14: the signed tree.
  const tree = await checkTree(base, { entries, servedKey, signed, key, witnesses, archived, receivedHashes, fail, now, previousKeys, maxCheckpointAgeSeconds });

  const counts = {};
  for (const entry of entries) counts[entry.type] = (counts[entry.type] ?? 0) + 1;
  const clvs = settlements.map((s) => s.clv).filter((clv) => clv !== null);
  return {
    ok: failures.length === 0,
    failures,
    notes,
    entries,
    head,
    counts,
    picks: picks.size,
    imported,
    withdrawn,
    settlements,
    meanClv: clvs.length === 0 ? null : clvs.reduce((sum, clv) => sum + clv, 0) / clvs.length,
    anchors: anchors.length,
    received: receivedSummary,
    tree,
  };
}

/**
 * Checks 10 to 14: the latest signed checkpoint against the key, the chain and the witnesses; the
 * archived checkpoints against it; the received hashes' inclusion in it. Returns what the summary
 * prints: { key, pinned, checkpoint, archived, inclusion: the received hashes proved included, and those after the checkpoint }.
 */
async function checkTree(base, { entries, servedKey, signed, key, witnesses, archived, receivedHashes, fail, now, previousKeys, maxCheckpointAgeSeconds }) {
  const pinned = key === null ? null : asKey(key);
  const witnessKeys = witnesses.map(asKey);
  const size = signed === null ? 0 : claimedSize(signed);

  // 10: which key. A pinned key decides; the served key only when none is pinned.
  let served = null;
  try {
    served = servedKey === null ? null : parseVerifierKey(servedKey);
  } catch (error) {
    fail(size, 'key', `the key the service serves is not a verifier key: ${error.message}`);
  }
  if (pinned !== null && served === null && servedKey === null) fail(size, 'key', 'the service serves no key (GET /api/public/ledger/key answered 404)');
  if (pinned !== null && served !== null && !sameKey(pinned, served)) fail(size, 'key', `the service serves the key ${served.text}, not the key you pinned ${pinned.text}`);
  const logKey = pinned ?? served;
  const summary = { key: served?.text ?? null, pinned: pinned !== null, checkpoint: null, archived: archived.length, inclusion: { included: 0, after: 0 } };

  let latest = null;
  if (signed === null) {
    // An empty ledger has no checkpoint. One with entries should: witnesses then cannot have cosigned anything.
    if (entries.length > 0) for (const witness of witnessKeys) fail(0, 'witness', `witness ${witness.name}: the service serves no checkpoint to cosign`);
  } else if (logKey === null) {
    fail(size, 'signature', 'no key to check the checkpoint with: the service serves none, give it with --key');
  } else {
    try {
      latest = openCheckpoint(signed, logKey);
    } catch (error) {
      fail(size, 'signature', `the latest checkpoint: ${error.message}`);
    }
  }

  if (latest !== null) {
    // 11: the checkpoint's root is the chain's.
    const root = latest.size > entries.length ? null : rootOfEntries(entries, latest.size);
    if (latest.size > entries.length) fail(latest.size, 'checkpoint_root', `the checkpoint covers ${latest.size} entries, the chain served has ${entries.length}`);
    else if (root === null) fail(latest.size, 'checkpoint_root', `an entry among the first ${latest.size} has a malformed hash: no tree can be computed`);
    else if (!root.equals(latest.root)) fail(latest.size, 'checkpoint_root', `the checkpoint's root ${latest.root.toString('base64')} is not the root of the first ${latest.size} entries served (${root.toString('base64')})`);
    // 11 (continued): the checkpoint is recent. Entries beyond it are covered by no signature and
    // no witness: an old checkpoint served for good would leave every later entry open to a fork.
    const stale = entries.slice(latest.size).find((entry) => time(entry.at) < now.getTime() - maxCheckpointAgeSeconds * 1000);
    if (stale) {
      fail(stale.seq, 'checkpoint_age', `appended at ${stale.at}, over ${maxCheckpointAgeSeconds} s ago, and still in no checkpoint (the latest covers ${latest.size} entries): the service stopped signing, or shows you an old one`);
    }
    // 12: the witnesses.
    const cosigned = checkWitnesses(signed, latest.size, witnessKeys, fail);
    const cosignatures = latest.signatures.length - latest.signatures.filter((s) => s.name === logKey.name && s.keyId.equals(logKey.id)).length;
    summary.checkpoint = { origin: latest.origin, size: latest.size, root: latest.root.toString('base64'), keyName: logKey.name, cosignatures, witnesses: witnessKeys.length, cosigned };
  } else if (signed !== null) {
    summary.checkpoint = { size, unverified: true };
  }

  // 13: the checkpoints archived earlier.
  for (const note of archived) {
    let old;
    try {
      if (logKey === null) throw new Error('no key to check it with: the service serves none, give it with --key');
      old = openWithAnyKey(note, [logKey, ...previousKeys]);
    } catch (error) {
      fail(claimedSize(note), 'signature', `an archived checkpoint: ${error.message}`);
      continue;
    }
    const root = old.size > entries.length ? null : rootOfEntries(entries, old.size);
    if (old.size > entries.length) fail(old.size, 'consistency', `the archived checkpoint covers ${old.size} entries, the chain served now has ${entries.length}: entries were removed`);
    else if (root !== null && !root.equals(old.root)) fail(old.size, 'consistency', `the archived root ${old.root.toString('base64')} is not the root of the first ${old.size} entries served now: history was rewritten`);
    if (signed === null) {
      if (old.size > 0) fail(old.size, 'consistency', `the service serves no checkpoint now, you archived one of size ${old.size}`);
    } else if (latest !== null) {
      if (old.size > latest.size) {
        fail(old.size, 'consistency', `the archived checkpoint (size ${old.size}) is larger than the latest (size ${latest.size}): the log shrank`);
      } else if (old.size === latest.size || old.size === 0) {
        if (!verifyConsistency(old.size, latest.size, old.root, latest.root, [])) fail(old.size, 'consistency', `the archived checkpoint and the latest have the same size ${old.size} and different roots: a fork`);
      } else {
        const { proof, error } = await getProof(`${base}/api/public/ledger/proof/consistency?from=${old.size}&to=${latest.size}`);
        const hashes = proof && proof.from === old.size && proof.to === latest.size ? proofFromBase64(proof.hashes) : null;
        if (error) fail(old.size, 'consistency', `no consistency proof from the archived checkpoint to the latest: ${error}`);
        else if (hashes === null || !verifyConsistency(old.size, latest.size, old.root, latest.root, hashes)) {
          fail(old.size, 'consistency', `the service does not prove the archived checkpoint (size ${old.size}) consistent with the latest (size ${latest.size}): a forked history`);
        }
      }
    }
  }

  // 14: the hashes received, proved to be in the latest tree.
  if (latest !== null) {
    const proveIncluded = async (seq, hash) => {
      const { proof, error } = await getProof(`${base}/api/public/ledger/proof/inclusion?seq=${seq}&tree_size=${latest.size}`);
      if (error) return `no inclusion proof for the hash received: ${error}`;
      const hashes = proof.leaf_index === seq - 1 && proof.tree_size === latest.size ? proofFromBase64(proof.hashes) : null;
      if (hashes === null || !HEX_256.test(hash) || !verifyInclusion(seq - 1, latest.size, leafHash(hash), hashes, latest.root)) {
        return `the hash ${hash} received for seq ${seq} is not proved to be that entry of the checkpoint of size ${latest.size}`;
      }
      return null;
    };
    const outcomes = new Map(); // "seq:hash" -> the failure's message, or null: each asked once, one request at a time
    for (const { seq, hash } of receivedHashes) {
      if (seq < 1) continue; // no such entry: the received check failed already
      if (seq > latest.size) {
        summary.inclusion.after += 1;
        continue;
      }
      const id = `${seq}:${hash}`;
      if (!outcomes.has(id)) {
        outcomes.set(id, await proveIncluded(seq, hash));
        if (outcomes.get(id) !== null) fail(seq, 'inclusion', outcomes.get(id));
      }
      if (outcomes.get(id) === null) summary.inclusion.included += 1;
    }
  }
  return summary;
}

// ---- The command line

const USAGE = `Usage: node verify-ledger.mjs <base_url> [--key <log key>] [--previous-key <log key>]... [--witness <witness key>]... [--checkpoint <file>]... [--max-checkpoint-age <seconds>] [--anchor <seq>:<hash>]... [--received <file.jsonl>] [--verbose]
       node verify-ledger.mjs --receipt <file.json>... --key <log key> [--witness <witness key>]... [--verbose]
A key is a verifier key, <name>+<key id>+<base64 key>: the log's from GET <base_url>/api/public/ledger/key, a witness's from its operator.`;

function parseArguments(args) {
  const options = { baseUrl: null, anchors: [], received: [], key: null, previousKeys: [], witnesses: [], archived: [], receipts: [], verbose: false, maxCheckpointAgeSeconds: DEFAULT_MAX_CHECKPOINT_AGE_SECONDS };
  for (let i = 0; i < args.length; i += 1) {
    const arg = args[i];
    if (arg === '--verbose' || arg === '-v') {
      options.verbose = true;
    } else if (arg === '--anchor') {
      const match = /^(\d+):([0-9a-f]{64})$/.exec(args[++i] ?? '');
      if (!match) throw new Error('--anchor takes <seq>:<hash>, the hash in 64 lower-case hex digits');
      options.anchors.push({ seq: Number(match[1]), hash: match[2] });
    } else if (arg === '--received') {
      const file = args[++i];
      if (!file) throw new Error('--received takes a file of webhook bodies, one JSON body a line');
      options.received.push(...readReceived(file));
    } else if (arg === '--key') {
      if (options.key !== null) throw new Error('--key is given once: the log has one key');
      options.key = parseVerifierKey(args[++i] ?? '');
      if (options.key.type !== NOTE_ED25519) throw new Error(`--key takes the log's key (type 0x01), not a witness's: ${options.key.text}`);
    } else if (arg === '--previous-key') {
      const previous = parseVerifierKey(args[++i] ?? '');
      if (previous.type !== NOTE_ED25519) throw new Error(`--previous-key takes a log key (type 0x01): ${previous.text}`);
      options.previousKeys.push(previous);
    } else if (arg === '--max-checkpoint-age') {
      const seconds = Number(args[++i]);
      if (!Number.isSafeInteger(seconds) || seconds < 1) throw new Error('--max-checkpoint-age takes a number of seconds');
      options.maxCheckpointAgeSeconds = seconds;
    } else if (arg === '--witness') {
      const witness = parseVerifierKey(args[++i] ?? '');
      if (witness.type !== COSIGNATURE_ED25519) throw new Error(`--witness takes a witness's cosignature key (type 0x04): ${witness.text}`);
      options.witnesses.push(witness);
    } else if (arg === '--checkpoint') {
      const file = args[++i];
      if (!file) throw new Error('--checkpoint takes a file holding a signed checkpoint you archived');
      options.archived.push(readFileSync(file, 'utf8'));
    } else if (arg === '--receipt') {
      const file = args[++i];
      if (!file) throw new Error('--receipt takes a file holding a receipt (JSON)');
      options.receipts.push({ file, receipt: JSON.parse(readFileSync(file, 'utf8')) });
    } else if (options.baseUrl === null && !arg.startsWith('--')) {
      options.baseUrl = arg;
    } else {
      throw new Error(`unexpected argument ${arg}`);
    }
  }
  if (options.receipts.length > 0 && options.key === null) throw new Error('--receipt needs --key: the key a receipt carries proves nothing, the log key you trust does');
  if (options.baseUrl === null && options.receipts.length === 0) throw new Error('the service\'s base URL is missing');
  if (options.baseUrl === null && options.anchors.length + options.received.length + options.archived.length > 0) {
    throw new Error('--anchor, --received and --checkpoint are checked against the service: give its base URL');
  }
  return options;
}

/** The bodies of a JSON-lines file; a line that is not JSON is kept as null (skipped, counted). */
function readReceived(file) {
  return readFileSync(file, 'utf8')
    .split('\n')
    .filter((line) => line.trim() !== '')
    .map((line) => {
      try {
        return JSON.parse(line);
      } catch {
        return null;
      }
    });
}

/** Failures listed without --verbose: enough to act on; a rewritten chain can fail at every entry. */
const FAILURES_SHOWN = 20;

const signedPercent = (value) => `${value >= 0 ? '+' : ''}${value.toFixed(2)} %`;
const plural = (count, one, many = `${one}s`) => `${count} ${count === 1 ? one : many}`;

const resultLine = (failures) =>
  failures.length === 0
    ? '  Result       OK: every check holds.'
    : `  Result       FAILED: ${plural(failures.length, 'check')} do${failures.length === 1 ? 'es' : ''} not hold; the first at seq ${failures[0].seq} (${failures[0].check}): ${failures[0].message}`;

/** The failures, the first 20 of them unless verbose. */
function outFailures(out, failures, verbose) {
  if (failures.length === 0) return;
  const shown = verbose ? failures : failures.slice(0, FAILURES_SHOWN);
  out(`FAILED: ${plural(failures.length, 'check')} do${failures.length === 1 ? 'es' : ''} not hold:`);
  for (const failure of shown) out(`  seq ${failure.seq}  ${failure.check}: ${failure.message}`);
  if (shown.length < failures.length) out(`  ... and ${failures.length - shown.length} more (--verbose lists them all)`);
}

/** "size N, root R, signed by <name> (key pinned|served key); cosigned by k of the n given witnesses". */
function checkpointLine(checkpoint, keyLabel, none) {
  if (checkpoint === null) return none;
  if (checkpoint.unverified) return `size ${checkpoint.size} claimed, but not signed by the key (see the failures)`;
  const witnesses =
    checkpoint.witnesses > 0
      ? `cosigned by ${checkpoint.cosigned} of the ${plural(checkpoint.witnesses, 'given witness', 'given witnesses')}`
      : `${plural(checkpoint.cosignatures, 'cosignature')}, none checked (no --witness given)`;
  return `size ${checkpoint.size}, root ${checkpoint.root}, signed by ${checkpoint.keyName} (${keyLabel}); ${witnesses}`;
}

/** The summary, then every failure; with `verbose` the ids of imported and withdrawn picks, the settlements and the notes. */
export function formatReport(baseUrl, report, { verbose = false } = {}) {
  const lines = [];
  const out = (line = '') => lines.push(line);
  const last = report.entries.at(-1);
  const settlements = report.settlements;
  const recomputed = settlements.filter((s) => s.recomputed !== null).length;
  const byHand = settlements.filter((s) => s.byHand).length;
  const withClv = settlements.filter((s) => s.clv !== null).length;

  out(`Ledger of ${baseUrl}`);
  out(resultLine(report.failures));
  out(`  Entries      ${report.entries.length}${last ? ` (seq 1 to ${last.seq}; last hash ${last.hash})` : ''}`);
  out(`  Picks        ${report.picks}: ${report.imported.length} imported, ${report.withdrawn.length} withdrawn`);
  out(
    `  Settlements  ${settlements.length}: ${recomputed} recomputed from the final score, ${byHand} settled by hand, ${settlements.length - recomputed - byHand} not covered by the rules` +
      (report.meanClv === null ? '' : `; mean CLV ${signedPercent(report.meanClv)} over ${withClv} with closing odds`),
  );
  const empty = report.entries.length === 0;
  out(`  Checkpoint   ${checkpointLine(report.tree.checkpoint, report.tree.pinned ? 'key pinned' : 'served key', empty ? 'none yet: the ledger is empty' : 'none served: the service has signed no checkpoint yet')}`);
  if (report.tree.archived > 0) out(`  Archived     ${plural(report.tree.archived, 'checkpoint')} checked against the chain and the latest checkpoint`);
  if (report.anchors > 0) out(`  Anchors      ${report.anchors} checked`);
  const { checked, skipped, unrevealed } = report.received;
  const { included, after } = report.tree.inclusion;
  const proved = report.tree.checkpoint !== null && !report.tree.checkpoint.unverified ? `; ${included} proved included in the checkpoint, ${after} appended after it` : '';
  if (checked + skipped > 0) out(`  Webhooks     ${checked} bodies checked (${unrevealed} not revealed yet: hash only), ${skipped} skipped without ledger_seq/ledger_hash${proved}`);
  if (report.notes.length > 0) out(`  Notes        ${report.notes.length}${verbose ? '' : ' (--verbose lists them)'}`);
  out(`  By type      ${Object.entries(report.counts).map(([type, count]) => `${type} ${count}`).join(', ') || 'none'}`);
  if (report.imported.length > 0) out('Imported picks were published at or after their kickoff, before the ledger existed: the ledger says nothing about their timing.');
  if (report.withdrawn.length > 0) out('Withdrawn picks were held before kickoff and not shown again; they are revealed like the others.');
  if (!verbose && report.imported.length + report.withdrawn.length + settlements.length > 0) out('--verbose lists the imported and withdrawn picks by id, and every settled pick.');

  outFailures(out, report.failures, verbose);
  if (!verbose) return `${lines.join('\n')}\n`;

  if (report.tree.key !== null) out(`Log key: ${report.tree.key}${report.tree.pinned ? '' : ' (as served: pin it with --key once you trust it)'}`);

  if (report.imported.length > 0) {
    out(`Imported picks: ${report.imported.length}`);
    for (const id of report.imported) out(`  ${id}`);
  }
  if (report.withdrawn.length > 0) {
    out(`Withdrawn picks: ${report.withdrawn.length}`);
    for (const id of report.withdrawn) out(`  ${id}`);
  }
  if (settlements.length > 0) {
    out(`Settled picks: ${settlements.length}`);
    for (const s of [...settlements].sort((a, b) => a.seq - b.seq)) {
      const score = s.byHand
        ? 'settled by hand, not recomputable'
        : s.recomputed === null
          ? 'not covered by the settlement rules'
          : `final ${s.pick.final_score.home}-${s.pick.final_score.away} gives ${s.recomputed}`;
      const clv = s.clv === null ? 'no closing odds' : `CLV ${signedPercent(s.clv)} (odds ${s.pick.odds}, closing odds ${s.pick.closing_odds})`;
      out(`  seq ${s.seq}  ${s.pick.home_team} v ${s.pick.away_team}: ${s.pick.pick}  ${s.result}  (${score}; ${clv})`);
    }
  }
  for (const note of report.notes) out(`Note: ${note}`);
  return `${lines.join('\n')}\n`;
}

/** A receipt's summary, then its failures; with `verbose` the notes. */
export function formatReceipt(file, result, { verbose = false } = {}) {
  const lines = [];
  const out = (line = '') => lines.push(line);
  out(`Receipt ${file} (pick ${result.pickId})`);
  out(resultLine(result.failures));
  out(`  Checkpoint   ${checkpointLine(result.checkpoint, 'key given', 'none in the receipt, or not signed by the key')}`);
  out(`  Entries      ${result.entries}: ${result.included} proved included in the checkpoint, ${result.pending.length} pending (appended after it)`);
  if (result.notes.length > 0) out(`  Notes        ${result.notes.length}${verbose ? '' : ' (--verbose lists them)'}`);
  outFailures(out, result.failures, verbose);
  if (verbose) for (const note of result.notes) out(`Note: ${note}`);
  return `${lines.join('\n')}\n`;
}

async function main(args) {
  let options;
  try {
    options = parseArguments(args);
  } catch (error) {
    process.stderr.write(`${error.message}\n${USAGE}\n`);
    return 2;
  }
  let ok = true;
  if (options.baseUrl !== null) {
    let report;
    try {
      const { anchors, received, key, witnesses, archived } = options;
      report = await verifyLedger(options.baseUrl, { anchors, received, key, witnesses, archived, previousKeys: options.previousKeys, maxCheckpointAgeSeconds: options.maxCheckpointAgeSeconds });
    } catch (error) {
      process.stderr.write(`Could not read the ledger: ${error.message}\n`);
      return 2;
    }
    process.stdout.write(formatReport(options.baseUrl, report, { verbose: options.verbose }));
    ok = report.ok;
  }
  // Receipts: offline, with the key you gave.
  for (const { file, receipt } of options.receipts) {
    const result = verifyReceipt(receipt, { key: options.key, witnesses: options.witnesses });
    process.stdout.write(formatReceipt(file, result, { verbose: options.verbose }));
    ok = ok && result.ok;
  }
  return ok ? 0 : 1;
}

/** Run as a program (not imported): this file is the script node was started with. */
function isMainModule() {
  try {
    return process.argv[1] !== undefined && import.meta.url === pathToFileURL(realpathSync(process.argv[1])).href;
  } catch {
    return false;
  }
}
if (isMainModule()) process.exitCode = await main(process.argv.slice(2));
