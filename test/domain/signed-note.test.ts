/**
 * Signed notes, checkpoints and cosignatures on the published vectors: Go's sumdb/note keys and
 * signatures, transparency-dev/formats' keys, the C2SP examples (test/fixtures/tlog/*.json name
 * their sources). No cosignature/v1 vector with a published key exists, so cosignatures are
 * checked against the spec's message layout, verified here with node:crypto directly.
 */
import { createHash, createPublicKey, verify } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import {
  checkpointBody,
  cosign,
  cosignedAt,
  COSIGNATURE_ALGORITHM_ED25519,
  generateSignerKey,
  noteSignedBy,
  NoteFormatError,
  parseCheckpointBody,
  parseNote,
  parseSignerKey,
  parseVerifierKey,
  signNote,
} from '../../src/domain/signed-note.js';
import notes from '../fixtures/tlog/note.json' with { type: 'json' };
import cosignatures from '../fixtures/tlog/cosignature.json' with { type: 'json' };
import checkpoints from '../fixtures/tlog/checkpoint.json' with { type: 'json' };

const PETER = notes.keys.find((key) => key.name === 'PeterNeumann')!;
const GO_TEXT = "If you think cryptography is the answer to your problem,\nthen you don't know what your problem is.\n";

describe('signed-note keys (sumdb/note and transparency-dev/formats vectors)', () => {
  it('parses every published key pair, and each private key gives its public key', () => {
    for (const key of notes.keys) {
      const verifier = parseVerifierKey(key.vkey);
      expect(verifier.name).toBe(key.name);
      expect(verifier.keyId.toString('hex')).toBe(key.key_id);
      expect(verifier.text).toBe(key.vkey);
      if (key.skey) expect(parseSignerKey(key.skey).text).toBe(key.vkey);
    }
  });

  it("reproduces Go's signature of its test note byte for byte, and verifies it", () => {
    const signed = signNote(GO_TEXT, parseSignerKey(PETER.skey!));
    expect(signed).toBe(`${GO_TEXT}\n\u2014 PeterNeumann x08go/ZJkuBS9UG/SffcvIAQxVBtiFupLLr8pAcElZInNIuGUgYN1FFYC2pZSNXgKvqfqdngotpRZb6KE6RyyBwJnAM=\n`);
    const note = parseNote(signed);
    expect(note.body).toBe(GO_TEXT);
    expect(noteSignedBy(note, parseVerifierKey(PETER.vkey))).toBe(true);
    const enoch = parseVerifierKey(notes.keys.find((key) => key.name === 'EnochRoot')!.vkey);
    expect(noteSignedBy(note, enoch)).toBe(false);
    // The same bytes in another base64 spelling (stray padding bits) are refused: one line per signature.
    const malleable = signed.replace('nAM=\n', 'nAN=\n');
    expect(Buffer.from('nAN=', 'base64')).toEqual(Buffer.from('nAM=', 'base64'));
    expect(() => parseNote(malleable)).toThrow(/canonical/);
    // One changed byte of the text fails.
    expect(noteSignedBy(parseNote(signed.replace('answer', 'Answer')), parseVerifierKey(PETER.vkey))).toBe(false);
  });

  it('refuses keys of the wrong form: id mismatch, wrong algorithm, short key, "+" in the name', () => {
    const [name, id, key] = [PETER.name, PETER.key_id, PETER.vkey.split('+').slice(2).join('+')];
    expect(() => parseVerifierKey(`${name}+${id.replace(/^./, (c) => (c === '0' ? '1' : '0'))}+${key}`)).toThrow(NoteFormatError);
    expect(() => parseVerifierKey(`Other+${id}+${key}`)).toThrow(/does not match/);
    expect(() => parseVerifierKey(`${name}+${id}+${Buffer.alloc(33, 0x02).toString('base64')}`)).toThrow(/algorithm/);
    expect(() => parseVerifierKey(`${name}+${id}+${Buffer.from([1, 2, 3]).toString('base64')}`)).toThrow(/32 bytes/);
    expect(() => parseVerifierKey(`${name}+${id}+not base64!`)).toThrow(/base64/);
    expect(() => parseVerifierKey(`${name}+${id}`)).toThrow(NoteFormatError);
    expect(() => parseSignerKey(PETER.vkey)).toThrow(/PRIVATE\+KEY/);
    expect(() => generateSignerKey('a b')).toThrow(NoteFormatError);
    expect(() => parseVerifierKey(PETER.vkey, [COSIGNATURE_ALGORITHM_ED25519])).toThrow(/algorithm/);
  });

  it('round-trips generated keys, including the half whose base64 holds a "+"', () => {
    let withPlus = 0;
    for (let i = 0; i < 40; i++) {
      const text = generateSignerKey('picks.example/ledger');
      const signer = parseSignerKey(text);
      if (text.split('+').length > 5) withPlus++;
      expect(parseVerifierKey(signer.text).keyId).toEqual(signer.keyId);
    }
    expect(withPlus).toBeGreaterThan(0);
  });
});

describe('notes', () => {
  it('verifies the published checkpoints with extra signatures (formats, sum.golang.org)', () => {
    let checked = 0;
    for (const example of checkpoints.signed_checkpoints) {
      const note = parseNote(example.signed_note);
      expect(noteSignedBy(note, parseVerifierKey(example.vkey)), example.desc).toBe(true);
      expect(parseCheckpointBody(note.body)).toMatchObject({ origin: example.origin, size: example.size });
      checked++;
    }
    expect(checked).toBeGreaterThan(0);
  });

  it('refuses malformed notes', () => {
    for (const text of ['', 'body\n', 'body\n\n', 'body\n\nno dash here\n', 'body\n\n\u2014 name !!!\n', 'body\n\n\u2014 name AAAA\n', 'body\n\n\u2014 name AAAAAAAA']) {
      expect(() => parseNote(text), JSON.stringify(text)).toThrow(NoteFormatError);
    }
  });
});

describe('checkpoints (tlog-checkpoint)', () => {
  it('writes origin, size and base64 root, and parses the spec example', () => {
    const root = Buffer.alloc(32, 7);
    const body = checkpointBody({ origin: 'picks.example/ledger', size: 1042, root });
    expect(body).toBe(`picks.example/ledger\n1042\n${root.toString('base64')}\n`);
    expect(parseCheckpointBody(body)).toEqual({ origin: 'picks.example/ledger', size: 1042, root });
    const example = parseCheckpointBody(cosignatures.spec_example.checkpoint_body);
    expect(example).toMatchObject({ origin: 'example.com/behind-the-sofa', size: 20852163 });
  });

  it('refuses a size that is not a decimal integer, a root that is not 32 bytes, a missing line', () => {
    const root = Buffer.alloc(32).toString('base64');
    for (const body of [`o\n01\n${root}\n`, `o\n-1\n${root}\n`, `o\n1e3\n${root}\n`, `o\n1\nAAAA\n`, `o\n1\n`, `\n1\n${root}\n`, `o\n1\n${root}`]) {
      expect(() => parseCheckpointBody(body), JSON.stringify(body)).toThrow(NoteFormatError);
    }
  });
});

describe('cosignatures (tlog-cosignature, cosignature/v1)', () => {
  const witness = parseSignerKey(generateSignerKey('witness.example/w1', COSIGNATURE_ALGORITHM_ED25519));
  const body = checkpointBody({ origin: 'picks.example/ledger', size: 5, root: Buffer.alloc(32, 1) });

  it('signs "cosignature/v1\\ntime <t>\\n" + the body, with the key id and the time before the signature', () => {
    const line = cosign(body, witness, 1_700_000_000);
    const bytes = Buffer.from(/^\u2014 witness\.example\/w1 (\S+)\n$/u.exec(line)![1]!, 'base64');
    expect(bytes.length).toBe(76);
    // The key as its verifier text writes it, read here without the module's parser.
    const raw = Buffer.from(witness.text.split('+').slice(2).join('+'), 'base64');
    expect(raw[0]).toBe(0x04);
    expect(bytes.subarray(0, 4)).toEqual(createHash('sha256').update(Buffer.concat([Buffer.from('witness.example/w1\n'), raw])).digest().subarray(0, 4));
    expect(bytes.readBigUInt64BE(4)).toBe(1_700_000_000n);
    const publicKey = createPublicKey({ key: Buffer.concat([Buffer.from('302a300506032b6570032100', 'hex'), raw.subarray(1)]), format: 'der', type: 'spki' });
    expect(verify(null, Buffer.from(`cosignature/v1\ntime 1700000000\n${body}`), publicKey, bytes.subarray(12))).toBe(true);
    const note = parseNote(`${body}\n${line}`);
    expect(cosignedAt(note, parseVerifierKey(witness.text))).toBe(1_700_000_000);
  });

  it("computes the published witness key's id (remora) and reads the spec example's time", () => {
    const remora = cosignatures.key_id_vectors.find((key) => key.vkey?.startsWith('remora'))!;
    expect(parseVerifierKey(remora.vkey!, [COSIGNATURE_ALGORITHM_ED25519]).keyId.toString('hex')).toBe(remora.key_id);
    const example = parseNote(cosignatures.spec_example.signed_note);
    const cosig = example.signatures.find((signature) => signature.signature.length === 72)!;
    expect(cosig.keyId.toString('hex')).toBe('8d66cf3f');
    expect(Number(cosig.signature.readBigUInt64BE(0))).toBe(1679315147);
  });

  it('rejects a cosignature by another key, on another body, or mislabelled', () => {
    const line = cosign(body, witness, 1_700_000_000);
    const other = parseSignerKey(generateSignerKey('witness.example/w1', COSIGNATURE_ALGORITHM_ED25519));
    expect(cosignedAt(parseNote(`${body}\n${line}`), parseVerifierKey(other.text))).toBeNull();
    const otherBody = checkpointBody({ origin: 'picks.example/ledger', size: 6, root: Buffer.alloc(32, 1) });
    expect(cosignedAt(parseNote(`${otherBody}\n${line}`), parseVerifierKey(witness.text))).toBeNull();
    // A time of 0 is no cosignature (tlog-cosignature), however well signed.
    expect(cosignedAt(parseNote(`${body}\n${cosign(body, witness, 0)}`), parseVerifierKey(witness.text))).toBeNull();
    // A log (0x01) signature is no cosignature, and a 0x01 key cannot cosign.
    expect(() => cosign(body, parseSignerKey(generateSignerKey('log')), 1)).toThrow(NoteFormatError);
  });
});
