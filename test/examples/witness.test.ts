/**
 * The standalone witness (docs/examples/witness.mjs) against a log built here: an independent
 * RFC 9162 tree (hashes, roots, consistency proofs) and checkpoints signed here with node:crypto,
 * as C2SP signed-note / tlog-checkpoint describe them. Cosignatures are checked here too, from the
 * message format of C2SP tlog-cosignature, not with the witness's own code. Over loopback HTTP:
 * cosigning the first checkpoint and a grown tree, 409 on a stale old size, 422 on a fork, 403 on
 * a foreign signature, 404 on an unknown log, 400 on garbage, and a restarted witness process
 * (the script itself, on the same state directory) still refusing a fork of what it cosigned.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { createHash, createPublicKey, generateKeyPairSync, sign, verify, type KeyObject } from 'node:crypto';
import { existsSync, mkdtempSync, readdirSync, readFileSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
// @ts-expect-error The example is plain JavaScript, as a customer would copy it.
import * as witnessModule from '../../docs/examples/witness.mjs';

const WITNESS = fileURLToPath(new URL('../../docs/examples/witness.mjs', import.meta.url));

interface WitnessKey { name: string; keyId: Buffer; text: string }
interface ParsedRequest {
  oldSize: bigint;
  proof: Buffer[];
  note: { body: string; signatures: { name: string; keyId: Buffer; signature: Buffer; line: string }[] };
  checkpoint: { origin: string; size: bigint; root: Buffer; extensions: string[] };
}
interface RunningWitness { port: number; url: string; verifierKey: string; keyCreated: boolean; close(): Promise<void> }
const w = witnessModule as {
  MAX_BODY_BYTES: number;
  parseAddCheckpoint(body: string | Buffer): ParsedRequest;
  parseNote(text: string): ParsedRequest['note'];
  verifyLogSignatures(note: ParsedRequest['note'], keys: WitnessKey[]): string[];
  verifyConsistency(size1: number | bigint, root1: Buffer, size2: number | bigint, root2: Buffer, proof: Buffer[]): boolean;
  cosign(body: string, key: WitnessKey, time: number): string;
  parseVerifierKey(text: string, type?: number): WitnessKey;
  parsePrivateKey(text: string): WitnessKey;
  generatePrivateKey(name: string): string;
  startWitness(options: { logKeys: string[]; name?: string; stateDir: string; port: number; host: string }): Promise<RunningWitness>;
};

// ---- An independent RFC 9162 Merkle tree (section 2.1)

const sha256 = (...parts: (Buffer | string)[]) => {
  const hash = createHash('sha256');
  for (const part of parts) hash.update(part);
  return hash.digest();
};
const leafHash = (leaf: Buffer) => sha256(Buffer.from([0x00]), leaf);
const nodeHash = (left: Buffer, right: Buffer) => sha256(Buffer.from([0x01]), left, right);
/** The largest power of two smaller than n (n > 1). */
const split = (n: number) => {
  let k = 1;
  while (k * 2 < n) k *= 2;
  return k;
};

type HashLeaf = (leaf: Buffer) => Buffer;

/** MTH(D[n]). (hashLeaf: see the test of sizes past 2^32.) */
function treeHash(leaves: Buffer[], hashLeaf: HashLeaf = leafHash): Buffer {
  if (leaves.length === 0) return sha256('');
  if (leaves.length === 1) return hashLeaf(leaves[0]!);
  const k = split(leaves.length);
  return nodeHash(treeHash(leaves.slice(0, k), hashLeaf), treeHash(leaves.slice(k), hashLeaf));
}

/** SUBPROOF(m, D[n], b) of RFC 9162 2.1.4.1. */
function subproof(m: number, leaves: Buffer[], complete: boolean, hashLeaf: HashLeaf): Buffer[] {
  const n = leaves.length;
  if (m === n) return complete ? [] : [treeHash(leaves, hashLeaf)];
  const k = split(n);
  if (m <= k) return [...subproof(m, leaves.slice(0, k), complete, hashLeaf), treeHash(leaves.slice(k), hashLeaf)];
  return [...subproof(m - k, leaves.slice(k), false, hashLeaf), treeHash(leaves.slice(0, k), hashLeaf)];
}

/** PROOF(m, D[n]); empty when m is 0 or n. */
const consistencyProof = (m: number, leaves: Buffer[], hashLeaf: HashLeaf = leafHash) => (m === 0 || m === leaves.length ? [] : subproof(m, leaves, true, hashLeaf));

/** n leaves (32-byte entry hashes, as the ledger's), named by `history`: two histories share no leaf. */
const entries = (history: string, n: number) => Array.from({ length: n }, (_, i) => sha256(`${history} entry ${i + 1}`));

// ---- The log's key and checkpoints (signed-note, tlog-checkpoint)

interface LogKey { name: string; keyId: Buffer; privateKey: KeyObject; vkey: string }

function makeLogKey(name: string): LogKey {
  const { privateKey, publicKey } = generateKeyPairSync('ed25519');
  const raw = Buffer.from(publicKey.export({ format: 'jwk' }).x!, 'base64url');
  const keyId = sha256(`${name}\n`, Buffer.from([0x01]), raw).subarray(0, 4);
  return { name, keyId, privateKey, vkey: `${name}+${keyId.toString('hex')}+${Buffer.concat([Buffer.from([0x01]), raw]).toString('base64')}` };
}

const signatureLine = (key: LogKey, body: string) => `— ${key.name} ${Buffer.concat([key.keyId, sign(null, Buffer.from(body), key.privateKey)]).toString('base64')}\n`;

/** The checkpoint of `leaves` for `origin`, signed by `key`. */
function checkpoint(key: LogKey, leaves: Buffer[], origin = key.name) {
  const body = `${origin}\n${leaves.length}\n${treeHash(leaves).toString('base64')}\n`;
  return { body, note: `${body}\n${signatureLine(key, body)}` };
}

const addCheckpointBody = (old: number, proof: Buffer[], note: string) => `old ${old}\n${proof.map((hash) => `${hash.toString('base64')}\n`).join('')}\n${note}`;

async function post(url: string, body: string | Buffer) {
  const response = await fetch(`${url}/add-checkpoint`, { method: 'POST', body: typeof body === 'string' ? body : new Uint8Array(body) });
  return { status: response.status, type: response.headers.get('content-type'), text: await response.text() };
}

/** Checks a cosignature line by the tlog-cosignature spec (cosignature/v1, Ed25519); returns its time. */
function verifyCosignature(line: string, body: string, witnessVkey: string): number {
  const match = /^— (\S+) (\S+)\n$/u.exec(line);
  expect(match, line).not.toBeNull();
  // The name and key id hold no "+"; the base64 key may.
  const [, name, idHex, keyText] = /^([^+]+)\+([0-9a-f]{8})\+(\S+)$/.exec(witnessVkey)! as unknown as [string, string, string, string];
  expect(match![1]).toBe(name);
  const keyBytes = Buffer.from(keyText, 'base64');
  expect(keyBytes.length).toBe(33);
  expect(keyBytes[0]).toBe(0x04);
  const raw = keyBytes.subarray(1);
  expect(sha256(`${name}\n`, Buffer.from([0x04]), raw).subarray(0, 4).toString('hex')).toBe(idHex);
  const bytes = Buffer.from(match![2]!, 'base64');
  expect(bytes.length).toBe(4 + 8 + 64);
  expect(bytes.subarray(0, 4).toString('hex')).toBe(idHex);
  const time = bytes.readBigUInt64BE(4);
  const publicKey = createPublicKey({ key: { kty: 'OKP', crv: 'Ed25519', x: raw.toString('base64url') }, format: 'jwk' });
  expect(verify(null, Buffer.from(`cosignature/v1\ntime ${time}\n${body}`), publicKey, bytes.subarray(12))).toBe(true);
  return Number(time);
}

const originHash = (origin: string) => sha256(origin).toString('hex');

// ---- The pure functions

describe('witness.mjs functions', () => {
  it('verifies every RFC 9162 consistency proof of the independent tree, and none tampered with', () => {
    const leaves = entries('honest', 33);
    const long = entries('honest', 66);
    const forked = entries('forked', 33);
    const roots = Array.from({ length: leaves.length + 1 }, (_, i) => treeHash(leaves.slice(0, i)));
    const forkedRoots = Array.from({ length: forked.length + 1 }, (_, i) => treeHash(forked.slice(0, i)));
    const lengths = new Map<string, number>();
    const proofLength = (m: number, n: number) => {
      const key = `${m} ${n}`;
      if (!lengths.has(key)) lengths.set(key, consistencyProof(m, long.slice(0, n)).length);
      return lengths.get(key)!;
    };
    for (let n = 1; n <= leaves.length; n += 1) {
      const second = leaves.slice(0, n);
      for (let m = 0; m <= n; m += 1) {
        const proof = consistencyProof(m, second);
        expect(w.verifyConsistency(m, roots[m]!, n, roots[n]!, proof), `${m} -> ${n}`).toBe(true);
        if (m === 0) continue;
        // Another history of the same sizes.
        expect(w.verifyConsistency(m, forkedRoots[m]!, n, roots[n]!, proof), `forked first ${m} -> ${n}`).toBe(false);
        if (m < n) {
          expect(w.verifyConsistency(m, roots[m]!, n, forkedRoots[n]!, proof), `forked second ${m} -> ${n}`).toBe(false);
          proof.forEach((_, i) => {
            const tampered = proof.map((hash, j) => (i === j ? Buffer.from(hash.map((byte, b) => (b === 0 ? byte ^ 1 : byte))) : hash));
            expect(w.verifyConsistency(m, roots[m]!, n, roots[n]!, tampered), `tampered ${m} -> ${n} at ${i}`).toBe(false);
          });
          expect(w.verifyConsistency(m, roots[m]!, n, roots[n]!, proof.slice(0, -1)), `short ${m} -> ${n}`).toBe(false);
          expect(w.verifyConsistency(m, roots[m]!, n, roots[n]!, [...proof, proof[0]!]), `long ${m} -> ${n}`).toBe(false);
          if (n < leaves.length) expect(w.verifyConsistency(m, roots[m]!, n + 1, roots[n + 1]!, proof), `${m} -> ${n} as ${n + 1}`).toBe(false);
          // The same proof and roots, another second size claimed: a proof from m to `claimed` has
          // its own length, and one of another length must fail (RFC 9162's checks that sn is not 0
          // before the end, and is 0 at the end). (One of the same length may verify: the verifier
          // cannot tell a leaf hash from a subtree hash.)
          for (let claimed = m + 1; claimed <= 2 * n; claimed += 1) {
            if (claimed === n || proofLength(m, claimed) === proof.length) continue;
            expect(w.verifyConsistency(m, roots[m]!, claimed, roots[n]!, proof), `${m} -> ${n} claimed as ${claimed}`).toBe(false);
          }
        } else {
          expect(w.verifyConsistency(m, roots[m]!, n, roots[n]!, [roots[m]!]), `${m} -> ${m} with a proof`).toBe(false);
        }
      }
    }
    // Sizes past 2^32, where bit operations on JavaScript numbers would wrap: the tree of n * 2^s
    // leaves is the tree of n perfect subtrees of 2^s leaves (every split falls between them), so
    // with the subtrees' hashes standing for leaf hashes, the proofs from m to n are those from
    // m * 2^s to n * 2^s.
    const subtrees = entries('subtree', 12);
    const asIs: HashLeaf = (hash) => hash;
    for (const shift of [32n, 40n, 60n]) {
      for (let n = 2; n <= subtrees.length; n += 1) {
        for (let m = 1; m < n; m += 1) {
          const [first, second] = [subtrees.slice(0, m), subtrees.slice(0, n)];
          const proof = consistencyProof(m, second, asIs);
          const [size1, size2] = [BigInt(m) << shift, BigInt(n) << shift];
          expect(w.verifyConsistency(size1, treeHash(first, asIs), size2, treeHash(second, asIs), proof), `${size1} -> ${size2}`).toBe(true);
          expect(w.verifyConsistency(size1 + 1n, treeHash(first, asIs), size2, treeHash(second, asIs), proof), `${size1 + 1n} -> ${size2}`).toBe(false);
        }
      }
    }
    expect(w.verifyConsistency(5, sha256('a'), 3, sha256('b'), [])).toBe(false);
  });

  it('parses the request body of the tlog-witness example', () => {
    const example = [
      'old 20852014',
      'PlRNCrwHpqhGrupue0L7gxbjbMiKA9temvuZZDDpkaw=',
      'jrJZDmY8Y7SyJE0MWLpLozkIVMSMZcD5kvuKxPC3swk=',
      '5+pKlUdi2LeF/BcMHBn+Ku6yhPGNCswZZD1X/6QgPd8=',
      '/6WVhPs2CwSsb5rYBH5cjHV/wSmA79abXAwhXw3Kj/0=',
      '',
      'example.com/behind-the-sofa',
      '20852163',
      'CsUYapGGPo4dkMgIAUqom/Xajj7h2fB2MPA3j2jxq2I=',
      '',
      '— example.com/behind-the-sofa Az3grlgtzPICa5OS8npVmf1Myq/5IZniMp+ZJurmRDeOoRDe4URYN7u5/Zhcyv2q1gGzGku9nTo+zyWE+xeMcTOAYQ8=',
      '— example.com/behind-the-sofa opLqBQsREYCgu6xQkYQwJr9fo45a62DN9EdmHXnZdXNqlcVGlCum2Wks+49/V6267UEjw6QUXTS5Rovnzv++qbSzm9Q=',
      '',
    ].join('\n');
    const parsed = w.parseAddCheckpoint(Buffer.from(example));
    expect(parsed.oldSize).toBe(20852014n);
    expect(parsed.proof.map((hash) => hash.toString('base64'))).toEqual(example.split('\n').slice(1, 5));
    expect(parsed.checkpoint).toMatchObject({ origin: 'example.com/behind-the-sofa', size: 20852163n, extensions: [] });
    expect(parsed.checkpoint.root.toString('base64')).toBe('CsUYapGGPo4dkMgIAUqom/Xajj7h2fB2MPA3j2jxq2I=');
    expect(parsed.note.body).toBe('example.com/behind-the-sofa\n20852163\nCsUYapGGPo4dkMgIAUqom/Xajj7h2fB2MPA3j2jxq2I=\n');
    expect(parsed.note.signatures.map((s) => s.name)).toEqual(['example.com/behind-the-sofa', 'example.com/behind-the-sofa']);
  });

  it('verifies the signed-note example with its verifier key, and refuses it altered', () => {
    const key = w.parseVerifierKey('example.com/foo+530d903a+AekyeRrm56hApGFkyQR4ZCbV54Id2LKaANYcrnKv3U2k');
    const note = 'This is an example message.\n\n— example.com/foo Uw2QOkn8srV1yJGh2VYRlL1Tnagv1YEq6TfXppzi2ONncAlTgK7Ztg1ERYNZXsYjOBH3mFXmRKuwHjG1Yu72IneyaQM=\n';
    expect(w.verifyLogSignatures(w.parseNote(note), [key])).toHaveLength(1);
    expect(() => w.verifyLogSignatures(w.parseNote(note.replace('example message', 'exemplary message')), [key])).toThrow(/does not verify/);
    expect(() => w.verifyLogSignatures(w.parseNote(note), [w.parseVerifierKey(makeLogKey('example.com/foo').vkey)])).toThrow(/no signature by a known key/);
  });

  it('reads and writes keys in the signed-note formats, checking the key id', () => {
    const text = w.generatePrivateKey('witness.example/w1');
    expect(text).toMatch(/^PRIVATE\+KEY\+witness\.example\/w1\+[0-9a-f]{8}\+[A-Za-z0-9+/]{44}$/);
    expect(Buffer.from(text.slice(-44), 'base64')[0]).toBe(0x04);
    const key = w.parsePrivateKey(text);
    expect(key.text).toMatch(/^witness\.example\/w1\+[0-9a-f]{8}\+[A-Za-z0-9+/]{44}$/);
    expect(w.parseVerifierKey(key.text, 0x04).keyId).toEqual(key.keyId);
    const log = makeLogKey('example.test/log');
    expect(w.parseVerifierKey(log.vkey).text).toBe(log.vkey);
    expect(() => w.parseVerifierKey(key.text)).toThrow(/type 0x04/); // a witness key is no log key
    expect(() => w.parseVerifierKey(log.vkey.replace(/\+[0-9a-f]{8}\+/, '+00000000+'))).toThrow(/key id/);
    expect(() => w.parseVerifierKey(`other.example/log+${log.vkey.split('+').slice(1).join('+')}`)).toThrow(/key id/);
    // About half the keys have a "+" in their base64: it is no separator there.
    let withPlus = 0;
    for (let i = 0; i < 200 && withPlus < 5; i += 1) {
      const generated = w.generatePrivateKey('witness.example/w2');
      const logKey = makeLogKey('example.test/log');
      if (!generated.slice(-44).includes('+') || !logKey.vkey.slice(-44).includes('+')) continue;
      withPlus += 1;
      expect(w.parseVerifierKey(w.parsePrivateKey(generated).text, 0x04).text).toBe(w.parsePrivateKey(generated).text);
      expect(w.parseVerifierKey(logKey.vkey).text).toBe(logKey.vkey);
    }
    expect(withPlus).toBe(5);
    for (const bad of ['', 'no-plus', 'a b+00000000+AQ==', 'name+0000000+AQ==', `${log.vkey}+extra`]) expect(() => w.parseVerifierKey(bad), bad).toThrow();
  });

  it('cosigns in the cosignature/v1 format', () => {
    const key = w.parsePrivateKey(w.generatePrivateKey('witness.example/w1'));
    const body = 'example.com/behind-the-sofa\n20852163\nCsUYapGGPo4dkMgIAUqom/Xajj7h2fB2MPA3j2jxq2I=\n';
    expect(verifyCosignature(w.cosign(body, key, 1679315147), body, key.text)).toBe(1679315147);
    expect(() => w.cosign(body, key, 0)).toThrow();
  });
});

// ---- The server

describe('witness.mjs over HTTP', () => {
  const stateDir = mkdtempSync(path.join(tmpdir(), 'witness-'));
  const log = makeLogKey('example.test/ledger');
  const other = makeLogKey('example.test/other-ledger');
  const honest = entries('honest', 40);
  const forked = [...honest.slice(0, 10), ...entries('forked', 30)];
  let witness: RunningWitness;
  let url: string;
  const children = new Set<ChildProcess>();

  beforeAll(async () => {
    witness = await w.startWitness({ logKeys: [log.vkey, other.vkey], stateDir, port: 0, host: '127.0.0.1' });
    url = witness.url;
  });
  afterAll(async () => {
    await witness?.close();
    for (const child of children) child.kill('SIGKILL');
    rmSync(stateDir, { recursive: true, force: true });
  });

  /** Posts the honest tree grown from `from` to `to` leaves. */
  const grow = (from: number, to: number) => post(url, addCheckpointBody(from, consistencyProof(from, honest.slice(0, to)), checkpoint(log, honest.slice(0, to)).note));

  it('makes its key on the first start, in <state>/witness-key, mode 0600', () => {
    expect(witness.keyCreated).toBe(true);
    const file = path.join(stateDir, 'witness-key');
    expect(statSync(file).mode & 0o777).toBe(0o600);
    const text = readFileSync(file, 'utf8');
    expect(text).toMatch(/^PRIVATE\+KEY\+witness\.local\/[^\s+]+\+[0-9a-f]{8}\+[A-Za-z0-9+/]{44}\n$/);
    expect(w.parsePrivateKey(text).text).toBe(witness.verifierKey);
  });

  it('cosigns the first checkpoint (old 0), stored before it answers and served to monitors', async () => {
    const { body, note } = checkpoint(log, honest.slice(0, 5));
    const before = Math.floor(Date.now() / 1000);
    const answer = await post(url, addCheckpointBody(0, [], note));
    expect(answer.status, answer.text).toBe(200);
    const time = verifyCosignature(answer.text, body, witness.verifierKey);
    expect(time).toBeGreaterThanOrEqual(before);
    expect(time).toBeLessThanOrEqual(Math.floor(Date.now() / 1000));
    const stored = readFileSync(path.join(stateDir, originHash(log.name), 'checkpoint'), 'utf8');
    expect(stored).toBe(`${note}${answer.text}`);
    const monitored = await fetch(`${url}/${originHash(log.name)}/checkpoint`);
    expect(monitored.status).toBe(200);
    expect(await monitored.text()).toBe(stored);
    expect((await fetch(`${url}/${originHash(other.name)}/checkpoint`)).status).toBe(404);
  });

  it('cosigns the grown tree given a consistency proof, and the same tree again', async () => {
    for (const [from, to] of [[5, 13], [13, 16], [16, 16]] as const) {
      const answer = await grow(from, to);
      expect(answer.status, `${from} -> ${to}: ${answer.text}`).toBe(200);
      verifyCosignature(answer.text, checkpoint(log, honest.slice(0, to)).body, witness.verifierKey);
    }
  });

  it('answers 409 with its size when old is not the size it cosigned last', async () => {
    for (const old of [0, 5, 13]) {
      const answer = await post(url, addCheckpointBody(old, consistencyProof(old, honest.slice(0, 20)), checkpoint(log, honest.slice(0, 20)).note));
      expect(answer.status).toBe(409);
      expect(answer.type).toBe('text/x.tlog.size');
      expect(answer.text).toBe('16\n');
    }
  });

  it('refuses a fork with 422, at the same size or larger, and stays where it was', async () => {
    // The same size, another root.
    let answer = await post(url, addCheckpointBody(16, [], checkpoint(log, forked.slice(0, 16)).note));
    expect(answer.status, answer.text).toBe(422);
    // Larger, with a proof that is valid within the forked history.
    answer = await post(url, addCheckpointBody(16, consistencyProof(16, forked.slice(0, 24)), checkpoint(log, forked.slice(0, 24)).note));
    expect(answer.status, answer.text).toBe(422);
    // Larger, with the honest proof: it does not lead to the forked root.
    answer = await post(url, addCheckpointBody(16, consistencyProof(16, honest.slice(0, 24)), checkpoint(log, forked.slice(0, 24)).note));
    expect(answer.status, answer.text).toBe(422);
    // The honest tree with a proof from another size, or none.
    answer = await post(url, addCheckpointBody(16, consistencyProof(13, honest.slice(0, 24)), checkpoint(log, honest.slice(0, 24)).note));
    expect(answer.status, answer.text).toBe(422);
    answer = await post(url, addCheckpointBody(16, [], checkpoint(log, honest.slice(0, 24)).note));
    expect(answer.status, answer.text).toBe(422);
    // The same tree with a (needless) proof.
    answer = await post(url, addCheckpointBody(16, [treeHash(honest.slice(0, 16))], checkpoint(log, honest.slice(0, 16)).note));
    expect(answer.status, answer.text).toBe(422);
    // Each refusal, signed by the log, is kept as possible evidence.
    expect(readdirSync(path.join(stateDir, originHash(log.name), 'forks')).length).toBe(6);
    // Nothing moved: 16 is still the size, and the honest growth is cosigned.
    expect((await grow(0, 24)).text).toBe('16\n');
    expect((await grow(16, 24)).status).toBe(200);
  });

  it('answers 403 without a valid signature by the log key, and ignores unknown signatures', async () => {
    const { body, note } = checkpoint(log, honest.slice(0, 24));
    // Signed by another key named after the log: another key id, ignored, so no known signature.
    const impostor = makeLogKey(log.name);
    let answer = await post(url, addCheckpointBody(24, [], checkpoint(impostor, honest.slice(0, 24)).note));
    expect(answer.status, answer.text).toBe(403);
    // The log's name and key id, but a signature that does not verify.
    const signature = Buffer.from(/ (\S+)\n$/.exec(note)![1]!, 'base64');
    signature[10] = signature[10]! ^ 1;
    answer = await post(url, addCheckpointBody(24, [], `${body}\n— ${log.name} ${signature.toString('base64')}\n`));
    expect(answer.status, answer.text).toBe(403);
    // The log's signature beside unknown ones (another witness's cosignature, the impostor's): cosigned.
    const unknown = makeLogKey('witness.example/someone');
    answer = await post(url, addCheckpointBody(24, [], `${note}${signatureLine(unknown, body)}${signatureLine(impostor, body)}`));
    expect(answer.status, answer.text).toBe(200);
    verifyCosignature(answer.text, body, witness.verifierKey);
  });

  it('answers 404 for a log it does not know', async () => {
    const stranger = makeLogKey('example.test/unknown');
    const answer = await post(url, addCheckpointBody(0, [], checkpoint(stranger, honest.slice(0, 3)).note));
    expect(answer.status, answer.text).toBe(404);
    // A known key's signature on a checkpoint of another origin does not make it known.
    expect((await post(url, addCheckpointBody(0, [], checkpoint(log, honest.slice(0, 3), 'example.test/unknown').note))).status).toBe(404);
  });

  it('checks the empty tree and old 0 of a second log', async () => {
    const empty = checkpoint(other, []);
    expect(empty.body).toBe(`${other.name}\n0\n${sha256('').toString('base64')}\n`);
    let answer = await post(url, addCheckpointBody(0, [], empty.note));
    expect(answer.status, answer.text).toBe(200);
    verifyCosignature(answer.text, empty.body, witness.verifierKey);
    // Size 0 with another root than the empty tree's.
    const bogusBody = `${other.name}\n0\n${sha256('x').toString('base64')}\n`;
    answer = await post(url, addCheckpointBody(0, [], `${bogusBody}\n${signatureLine(other, bogusBody)}`));
    expect(answer.status, answer.text).toBe(422);
    // From old 0 no proof is needed, and one is refused.
    const three = honest.slice(0, 3);
    answer = await post(url, addCheckpointBody(0, [treeHash(three)], checkpoint(other, three).note));
    expect(answer.status, answer.text).toBe(422);
    answer = await post(url, addCheckpointBody(0, [], checkpoint(other, three).note));
    expect(answer.status, answer.text).toBe(200);
    // The first log is untouched.
    expect((await grow(0, 24)).text).toBe('24\n');
  });

  it('answers 400 to malformed bodies, and keeps working', async () => {
    const { body, note } = checkpoint(log, honest.slice(0, 30));
    const proof = consistencyProof(24, honest.slice(0, 30));
    const good = addCheckpointBody(24, proof, note);
    const garbage: (string | Buffer)[] = [
      '',
      'hello',
      '\n\n\n',
      'old 24',
      'old 24\n',
      'old\n\n' + note,
      'old 024\n' + good.slice('old 24\n'.length),
      'old -1\n\n' + note,
      'old 24.0\n\n' + note,
      'old 99999999999999999999999\n\n' + note,
      'OLD 24\n' + good.slice('old 24\n'.length),
      'old  24\n' + good.slice('old 24\n'.length),
      good.replace('\n', '\r\n'),
      good.replaceAll('\n', '\r\n'),
      good.replace(proof[0]!.toString('base64'), 'not base64!'),
      good.replace(proof[0]!.toString('base64'), proof[0]!.toString('base64').replace('=', '')),
      good.replace(proof[0]!.toString('base64'), proof[0]!.subarray(0, 31).toString('base64')),
      addCheckpointBody(24, Array.from({ length: 64 }, () => proof[0]!), note),
      `old 24\n${proof.map((h) => `${h.toString('base64')}\n`).join('')}${note}`, // no empty line after the proof
      addCheckpointBody(24, proof, body), // no signature
      addCheckpointBody(24, proof, `${body}\n`), // an empty signature block
      addCheckpointBody(24, proof, note.slice(0, -1)), // no final newline
      addCheckpointBody(24, proof, note.replace('— ', '- ')),
      addCheckpointBody(24, proof, note.replace('— ', '—')),
      addCheckpointBody(24, proof, `${note}— ${log.name}\n`),
      addCheckpointBody(24, proof, `${note}— a+b AAAAAAA=\n`),
      addCheckpointBody(24, proof, `${note}— ${log.name} AAAA\n`), // shorter than a key id and a byte
      addCheckpointBody(24, proof, note.replace('\n30\n', '\nthirty\n')),
      addCheckpointBody(24, proof, note.replace('\n30\n', '\n030\n')),
      addCheckpointBody(24, proof, note.replace('\n30\n', '\n\n')),
      addCheckpointBody(24, proof, note.replace(treeHash(honest.slice(0, 30)).toString('base64'), 'AAAA')),
      addCheckpointBody(24, proof, `${log.name}\n30\n\n${note.slice(note.indexOf('\n\n') + 2)}`), // two lines
      addCheckpointBody(24, proof, `\n30\n${treeHash(honest.slice(0, 30)).toString('base64')}\n\n${signatureLine(log, `\n30\n${treeHash(honest.slice(0, 30)).toString('base64')}\n`)}`), // no origin
      Buffer.concat([Buffer.from('old 24\n\n'), Buffer.from([0xff, 0xfe, 0x0a]), Buffer.from(note)]), // not UTF-8
      good.replace(log.name, `${log.name}\u0007`),
      Buffer.alloc(1000, 0),
    ];
    for (const bad of garbage) {
      const answer = await post(url, bad);
      expect(answer.status, `${JSON.stringify(bad.toString()).slice(0, 120)} -> ${answer.text}`).toBe(400);
    }
    // Old larger than the checkpoint's size (validly signed): 400, not a conflict.
    const answer = await post(url, addCheckpointBody(31, [], note));
    expect(answer.status, answer.text).toBe(400);
    expect((await post(url, good)).status).toBe(200);
  });

  it('answers 413 to a body over 1 MiB, 404 elsewhere, 405 to other methods', async () => {
    expect(w.MAX_BODY_BYTES).toBe(1024 * 1024);
    expect((await post(url, Buffer.alloc(w.MAX_BODY_BYTES + 1, 0x61))).status).toBe(413);
    // Without a Content-Length (chunked): counted as it comes.
    const stream = new ReadableStream<Uint8Array>({
      start(controller) {
        for (let i = 0; i < 20; i += 1) controller.enqueue(new Uint8Array(64 * 1024).fill(0x61));
        controller.close();
      },
    });
    const chunked = await fetch(`${url}/add-checkpoint`, { method: 'POST', body: stream, duplex: 'half' } as RequestInit);
    expect(chunked.status).toBe(413);
    // 1 MiB itself is read (and is garbage).
    expect((await post(url, Buffer.alloc(w.MAX_BODY_BYTES, 0x61))).status).toBe(400);
    for (const target of ['/', '/add-checkpoint/', '/add-checkpoints', `/${originHash(log.name).toUpperCase()}/checkpoint`, '/witness-key', '/../witness-key']) {
      expect((await fetch(`${url}${target}`, { method: 'POST', body: 'x' })).status, target).toBe(404);
    }
    for (const method of ['GET', 'PUT', 'DELETE', 'PATCH']) {
      const response = await fetch(`${url}/add-checkpoint`, { method });
      expect(response.status, method).toBe(405);
      expect(response.headers.get('allow')).toBe('POST');
    }
    expect((await fetch(`${url}/${originHash(log.name)}/checkpoint`, { method: 'POST', body: 'x' })).status).toBe(405);
    // Still there.
    expect((await grow(0, 30)).text).toBe('30\n');
  });

  it('checks and stores atomically: of two requests from the same old size, one is cosigned, the other gets 409', async () => {
    const answers = await Promise.all([grow(30, 33), grow(30, 35)]);
    expect(answers.map((a) => a.status).sort()).toEqual([200, 409]);
    const conflict = answers.find((a) => a.status === 409)!;
    const winner = answers[0]!.status === 200 ? 33 : 35;
    expect(conflict.text).toBe(`${winner}\n`);
    expect((await grow(winner, 36)).status).toBe(200);
  });

  /** Starts the script itself; resolves with its output once it listens. */
  function spawnWitness(args: string[]): Promise<{ child: ChildProcess; url: string; stdout: () => string }> {
    const child = spawn(process.execPath, [WITNESS, ...args], { stdio: ['ignore', 'pipe', 'pipe'] });
    children.add(child);
    let stdout = '';
    let stderr = '';
    return new Promise((resolve, reject) => {
      child.stdout!.on('data', (chunk: Buffer) => {
        stdout += chunk.toString();
        const listening = /^listening on (http:\/\/127\.0\.0\.1:\d+)$/m.exec(stdout);
        if (listening) resolve({ child, url: listening[1]!, stdout: () => stdout });
      });
      child.stderr!.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
      child.once('exit', (code) => reject(new Error(`the witness exited (${code}) before listening: ${stderr}${stdout}`)));
    });
  }
  const exited = (child: ChildProcess) => new Promise<number | null>((resolve) => (child.exitCode !== null ? resolve(child.exitCode) : child.once('exit', (code) => resolve(code))));

  it('keeps its state across a restart: a new witness process on the same state refuses a fork of what the first cosigned', async () => {
    await witness.close();
    const { child, url: restarted, stdout } = await spawnWitness(['--log-key', log.vkey, '--log-key', other.vkey, '--state', stateDir, '--port', '0', '--host', '127.0.0.1']);
    // The same key: printed for the operator to hand out.
    expect(stdout().split('\n')).toContain(witness.verifierKey);
    expect(stdout()).not.toContain('(new key)');
    // A second witness on the same state directory is refused while this one runs.
    const second = spawn(process.execPath, [WITNESS, '--log-key', log.vkey, '--state', stateDir, '--port', '0'], { stdio: 'ignore' });
    children.add(second);
    expect(await exited(second)).toBe(2);

    let answer = await post(restarted, addCheckpointBody(0, [], checkpoint(log, honest.slice(0, 36)).note));
    expect([answer.status, answer.type, answer.text]).toEqual([409, 'text/x.tlog.size', '36\n']);
    answer = await post(restarted, addCheckpointBody(36, [], checkpoint(log, forked.slice(0, 36)).note));
    expect(answer.status, answer.text).toBe(422);
    answer = await post(restarted, addCheckpointBody(36, consistencyProof(36, forked.slice(0, 40)), checkpoint(log, forked.slice(0, 40)).note));
    expect(answer.status, answer.text).toBe(422);
    answer = await post(restarted, addCheckpointBody(36, consistencyProof(36, honest.slice(0, 40)), checkpoint(log, honest.slice(0, 40)).note));
    expect(answer.status, answer.text).toBe(200);
    verifyCosignature(answer.text, checkpoint(log, honest.slice(0, 40)).body, witness.verifierKey);
    // The second log's state too.
    answer = await post(restarted, addCheckpointBody(0, [], checkpoint(other, honest.slice(0, 5)).note));
    expect([answer.status, answer.text]).toEqual([409, '3\n']);

    child.kill('SIGTERM');
    expect(await exited(child)).toBe(0);
    // No temporary file left behind, no lock.
    const files = readdirSync(stateDir, { recursive: true }).map(String);
    expect(files.filter((file) => file.endsWith('.tmp') || file === 'lock')).toEqual([]);
    expect(existsSync(path.join(stateDir, originHash(log.name), 'checkpoint'))).toBe(true);
  });

  it('refuses to start with another name than its key, or without a log key', async () => {
    const renamed = spawn(process.execPath, [WITNESS, '--log-key', log.vkey, '--state', stateDir, '--port', '0', '--name', 'witness.example/renamed'], { stdio: 'ignore' });
    children.add(renamed);
    expect(await exited(renamed)).toBe(2);
    const bare = spawn(process.execPath, [WITNESS, '--state', stateDir, '--port', '0'], { stdio: 'ignore' });
    children.add(bare);
    expect(await exited(bare)).toBe(2);
    const badKey = spawn(process.execPath, [WITNESS, '--log-key', `${log.vkey}x`, '--state', stateDir, '--port', '0'], { stdio: 'ignore' });
    children.add(badKey);
    expect(await exited(badKey)).toBe(2);
  });
});
