/**
 * The customer's verifier (docs/examples/verify-ledger.mjs) on the signed tree: RFC 9162 roots and
 * proofs, C2SP signed notes, checkpoints and cosignatures, receipts offline, and the online checks
 * against a tiny HTTP server on 127.0.0.1 serving the public endpoints from fabricated data.
 *
 * Everything the verifier is given is built here by a small implementation of our own (node:crypto
 * only: RFC 9162's MTH, PATH and SUBPROOF as the RFC defines them, Ed25519 notes and cosignatures as
 * C2SP writes them), anchored on published vectors: the Certificate Transparency tree heads and
 * proofs, and the Go sumdb note of golang.org/x/mod/sumdb/note.
 */
import { execFile } from 'node:child_process';
import { createHash, createPrivateKey, createPublicKey, randomBytes, sign, type KeyObject } from 'node:crypto';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
// @ts-expect-error The example is plain JavaScript, as a customer would copy it.
import * as verifier from '../../docs/examples/verify-ledger.mjs';

const VERIFIER = fileURLToPath(new URL('../../docs/examples/verify-ledger.mjs', import.meta.url));

interface Failure { seq: number; check: string; message: string }
interface Entry {
  seq: number; type: string; at: string; pick_id: string; reveal_after: string; commitment: string; prev_hash: string; hash: string;
  pick?: Record<string, unknown>; salt?: string;
}
interface Report {
  ok: boolean;
  failures: Failure[];
  received: { checked: number; skipped: number; unrevealed: number };
  tree: { key: string | null; pinned: boolean; archived: number; inclusion: { included: number; after: number }; checkpoint: null | { size: number; root: string; keyName: string; cosigned: number; witnesses: number; unverified?: boolean } };
}
interface ReceiptResult { ok: boolean; failures: Failure[]; notes: string[]; included: number; pending: number[]; checkpoint: { size: number; cosigned: number } | null }
const v = verifier as {
  treeRoot(leaves: Buffer[]): Buffer;
  leafHash(entryHashHex: string): Buffer;
  verifyInclusion(leafIndex: number, treeSize: number, leaf: Buffer, proof: Buffer[], root: Buffer): boolean;
  verifyConsistency(first: number, second: number, firstRoot: Buffer, secondRoot: Buffer, proof: Buffer[]): boolean;
  parseVerifierKey(text: string): { name: string; type: number; id: Buffer };
  parseNote(note: string): { text: string; signatures: { name: string; keyId: Buffer; signature: Buffer }[] };
  verifyNote(note: string, key: string): { text: string };
  parseCheckpoint(text: string): { origin: string; size: number; root: Buffer };
  openCheckpoint(note: string, key: string): { origin: string; size: number; root: Buffer };
  verifyCosignature(note: string, witnessKey: string): { timestamp: number };
  verifyReceipt(receipt: unknown, options: { key?: string; witnesses?: string[] }): ReceiptResult;
  verifyLedger(base: string, options: Record<string, unknown>): Promise<Report>;
  formatReport(base: string, report: Report): string;
};
const checks = (result: { failures: Failure[] }) => result.failures.map(({ seq, check }) => ({ seq, check }));

// ---- Our own RFC 9162 tree (section 2.1.1 MTH, 2.1.3.1 PATH, 2.1.4.1 SUBPROOF)

const sha = (...parts: Buffer[]) => createHash('sha256').update(Buffer.concat(parts)).digest();
const leafOfData = (data: Buffer) => sha(Buffer.of(0), data);
const leafOfEntry = (hashHex: string) => sha(Buffer.of(0), Buffer.from(hashHex, 'hex'));
const interior = (left: Buffer, right: Buffer) => sha(Buffer.of(1), left, right);
const largestPowerBelow = (n: number) => {
  let k = 1;
  while (k * 2 < n) k *= 2;
  return k;
};
function mth(leaves: Buffer[]): Buffer {
  if (leaves.length === 0) return sha();
  if (leaves.length === 1) return leaves[0]!;
  const k = largestPowerBelow(leaves.length);
  return interior(mth(leaves.slice(0, k)), mth(leaves.slice(k)));
}
function inclusionPath(m: number, leaves: Buffer[]): Buffer[] {
  if (leaves.length === 1) return [];
  const k = largestPowerBelow(leaves.length);
  return m < k ? [...inclusionPath(m, leaves.slice(0, k)), mth(leaves.slice(k))] : [...inclusionPath(m - k, leaves.slice(k)), mth(leaves.slice(0, k))];
}
function subproof(m: number, leaves: Buffer[], complete: boolean): Buffer[] {
  const n = leaves.length;
  if (m === n) return complete ? [] : [mth(leaves)];
  const k = largestPowerBelow(n);
  return m <= k ? [...subproof(m, leaves.slice(0, k), complete), mth(leaves.slice(k))] : [...subproof(m - k, leaves.slice(k), false), mth(leaves.slice(0, k))];
}
const consistencyProof = (m: number, leaves: Buffer[]) => subproof(m, leaves, true);
const b64 = (hashes: Buffer[]) => hashes.map((hash) => hash.toString('base64'));

// ---- Our own keys, notes and cosignatures (C2SP signed-note, tlog-checkpoint, tlog-cosignature)

interface Signer { name: string; id: Buffer; privateKey: KeyObject; vkey: string }
const PKCS8_ED25519 = Buffer.from('302e020100300506032b657004220420', 'hex');
function signer(name: string, type: 0x01 | 0x04, seed: Buffer = randomBytes(32)): Signer {
  const privateKey = createPrivateKey({ key: Buffer.concat([PKCS8_ED25519, seed]), format: 'der', type: 'pkcs8' });
  const publicKey = createPublicKey(privateKey).export({ format: 'der', type: 'spki' }).subarray(-32);
  const id = sha(Buffer.from(`${name}\n`), Buffer.of(type), publicKey).subarray(0, 4);
  return { name, id, privateKey, vkey: `${name}+${id.toString('hex')}+${Buffer.concat([Buffer.of(type), publicKey]).toString('base64')}` };
}
const signatureLine = (s: Signer, text: string) => `— ${s.name} ${Buffer.concat([s.id, sign(null, Buffer.from(text), s.privateKey)]).toString('base64')}\n`;
function cosignatureLine(w: Signer, text: string, time: number, claimedTime = time): string {
  const timestamp = Buffer.alloc(8);
  timestamp.writeBigUInt64BE(BigInt(claimedTime));
  const signature = sign(null, Buffer.from(`cosignature/v1\ntime ${time}\n${text}`), w.privateKey);
  return `— ${w.name} ${Buffer.concat([w.id, timestamp, signature]).toString('base64')}\n`;
}
const checkpointText = (origin: string, size: number, root: Buffer) => `${origin}\n${size}\n${root.toString('base64')}\n`;
const note = (text: string, ...lines: string[]) => `${text}\n${lines.join('')}`;

// ---- Our own ledger entries (RFC 8785 for these flat objects: keys sorted, JSON.stringify's strings and numbers)

const jcs = (value: unknown): string =>
  value !== null && typeof value === 'object'
    ? Array.isArray(value)
      ? `[${value.map(jcs).join(',')}]`
      : `{${Object.keys(value).sort().map((key) => `${JSON.stringify(key)}:${jcs((value as Record<string, unknown>)[key])}`).join(',')}}`
    : JSON.stringify(value);
const hex256 = (text: string) => createHash('sha256').update(text).digest('hex');
const pickOf = (id: string, kickoff = '2099-01-01T15:00:00.000Z') => ({ id, home_team: 'Home FC', away_team: 'Away FC', market: 'h2h', selection: 'Home FC', odds: 2.1, kickoff_at: kickoff, status: 'published' });
const saltOf = (seq: number) => hex256(`salt ${seq}`);

interface Spec { type: string; pick: ReturnType<typeof pickOf>; at?: string }
/** A chain of hidden entries (reveal_after far ahead), each linked to the one before; picks and salts kept aside for receipts. */
function chain(specs: Spec[]): { entries: Entry[]; secrets: Map<number, { pick: ReturnType<typeof pickOf>; salt: string }> } {
  const entries: Entry[] = [];
  const secrets = new Map<number, { pick: ReturnType<typeof pickOf>; salt: string }>();
  specs.forEach((spec, i) => {
    const seq = i + 1;
    const salt = saltOf(seq);
    const fields = {
      seq,
      type: spec.type,
      at: spec.at ?? new Date(Date.UTC(2026, 10, 1) + seq * 60_000).toISOString(),
      pick_id: spec.pick.id,
      reveal_after: spec.pick.kickoff_at,
      commitment: hex256(jcs({ pick: spec.pick, salt })),
      prev_hash: entries.at(-1)?.hash ?? '0'.repeat(64),
    };
    entries.push({ ...fields, hash: hex256(jcs(fields)) });
    secrets.set(seq, { pick: spec.pick, salt });
  });
  return { entries, secrets };
}

/** 12 entries: picks 1 to 10 published, pick 3 rescheduled (seq 11), pick 11 published (seq 12). */
const SPECS: Spec[] = [
  ...Array.from({ length: 10 }, (_, i) => ({ type: 'pick.published', pick: pickOf(`pick-${i + 1}`) })),
  { type: 'pick.rescheduled', pick: pickOf('pick-3', '2099-01-02T15:00:00.000Z') },
  { type: 'pick.published', pick: pickOf('pick-11') },
];

const ORIGIN = 'picks.example/ledger';
const LOG = signer(ORIGIN, 0x01);
const IMPOSTOR = signer(ORIGIN, 0x01); // the log's name, another key
const W1 = signer('witness.example/w1', 0x04);
const W2 = signer('witness.example/w2', 0x04);
const NOW = new Date('2026-11-02T00:00:00Z');
/** Within the hour the verifier allows an entry to wait for a checkpoint (the entries are appended from 2026-11-01T00:01Z). */
const SOON = new Date('2026-11-01T00:30:00Z');

const honest = chain(SPECS);
const leavesOf = (entries: Entry[]) => entries.map((entry) => leafOfEntry(entry.hash));
const LEAVES = leavesOf(honest.entries);
/** The log's checkpoint of the first `size` entries, its signature first, then the cosignatures. */
function checkpointOf(size: number, { leaves = LEAVES, by = LOG, witnesses = [W1, W2] }: { leaves?: Buffer[]; by?: Signer; witnesses?: Signer[] } = {}) {
  const text = checkpointText(ORIGIN, size, mth(leaves.slice(0, size)));
  return note(text, signatureLine(by, text), ...witnesses.map((w, i) => cosignatureLine(w, text, 1_790_000_000 + i)));
}

// ---- A tiny service: the public ledger endpoints over loopback, from the state below

interface Served { entries: Entry[]; checkpoint: string | null; key: string | null; proofLeaves: Buffer[] }
const served: Served = { entries: [], checkpoint: null, key: null, proofLeaves: [] };
function serveHonest(size = 12): void {
  served.entries = honest.entries;
  served.checkpoint = checkpointOf(size);
  served.key = LOG.vkey;
  served.proofLeaves = LEAVES;
}
let base = '';
let requests: string[] = [];
let close: () => Promise<void> = async () => {};

beforeAll(async () => {
  const server = createServer((request, response) => {
    const url = new URL(request.url ?? '/', 'http://127.0.0.1');
    requests.push(`${url.pathname}${url.search}`);
    const json = (body: unknown, status = 200) => {
      response.writeHead(status, { 'content-type': 'application/json' });
      response.end(JSON.stringify(body));
    };
    const text = (body: string | null) => {
      if (body === null) return json({ error: { code: 'not_found', message: 'none' } }, 404);
      response.writeHead(200, { 'content-type': 'text/plain; charset=utf-8' });
      response.end(body);
    };
    const number = (name: string) => Number(url.searchParams.get(name));
    switch (url.pathname) {
      case '/api/public/ledger': {
        const after = number('after');
        const page = served.entries.filter((entry) => entry.seq > after).slice(0, number('limit'));
        const last = page.at(-1);
        return json({ entries: page, next_after: last && last.seq < served.entries.at(-1)!.seq ? last.seq : null });
      }
      case '/api/public/ledger/head': {
        const last = served.entries.at(-1);
        return json({ seq: last?.seq ?? 0, hash: last?.hash ?? '0'.repeat(64) });
      }
      case '/api/public/ledger/checkpoints':
        return json({ checkpoints: [] });
      case '/api/public/ledger/checkpoint':
        return text(served.checkpoint);
      case '/api/public/ledger/key':
        return text(served.key === null ? null : `${served.key}\n`);
      case '/api/public/ledger/proof/inclusion': {
        const [seq, size] = [number('seq'), number('tree_size')];
        if (!(seq >= 1 && seq <= size && size <= served.proofLeaves.length)) return json({ error: { code: 'invalid_parameter' } }, 400);
        return json({ seq, leaf_index: seq - 1, tree_size: size, hashes: b64(inclusionPath(seq - 1, served.proofLeaves.slice(0, size))) });
      }
      case '/api/public/ledger/proof/consistency': {
        const [from, to] = [number('from'), number('to')];
        if (!(from >= 1 && from <= to && to <= served.proofLeaves.length)) return json({ error: { code: 'invalid_parameter' } }, 400);
        return json({ from, to, hashes: b64(consistencyProof(from, served.proofLeaves.slice(0, to))) });
      }
      default:
        return json({ error: { code: 'not_found' } }, 404);
    }
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  close = () => new Promise((resolve) => server.close(() => resolve()));
});
afterAll(() => close());

const verify = (options: Record<string, unknown> = {}) => verifier.verifyLedger(base, { now: NOW, ...options }) as Promise<Report>;

function cli(...args: string[]): Promise<{ code: number; stdout: string; stderr: string }> {
  return new Promise((resolve) => {
    execFile(process.execPath, [VERIFIER, ...args], (error, stdout, stderr) => resolve({ code: error ? Number(error.code) : 0, stdout, stderr }));
  });
}

// ---- The tree

// Certificate Transparency's reference leaves and tree heads (RFC 6962; transparency-dev/merkle testonly).
const CT_LEAVES = ['', '00', '10', '2021', '3031', '40414243', '5051525354555657', '606162636465666768696a6b6c6d6e6f'].map((data) => leafOfData(Buffer.from(data, 'hex')));
const CT_ROOTS = [
  'e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855',
  '6e340b9cffb37a989ca544e6bb780a2c78901d3fb33738768511a30617afa01d',
  'fac54203e7cc696cf0dfcb42c92a1d9dbaf70ad9e621f4bd8d98662f00e3c125',
  'aeb6bcfe274b70a14fb067a5e5578264db0fa9b51af5e0ba159158f329e06e77',
  'd37ee418976dd95753c1c73862b9398fa2a2cf9b4ff0fdfe8b30cd95209614b7',
  '4e3bbb1f7b478dcfe71fb631631519a3bca12c9aefca1612bfce4c13a86264d4',
  '76e67dadbcdf1e10e1b74ddc608abd2f98dfb16fbce75277b5232a127f2087ef',
  'ddb89be403809e325750d3d263cd78929c2942b7942a34b77e122c9594a74c8c',
  '5dc9da79a70659a9ad559cb701ded9a2ab9d823aad2f4960cfe370eff4604328',
];
const h = (hexText: string) => Buffer.from(hexText, 'hex');

describe('the tree (RFC 9162, section 2.1)', () => {
  it('computes the reference roots, and accepts the reference proofs', () => {
    for (let n = 0; n <= 8; n += 1) expect(v.treeRoot(CT_LEAVES.slice(0, n)).toString('hex')).toBe(CT_ROOTS[n]);
    for (let n = 0; n <= 8; n += 1) expect(mth(CT_LEAVES.slice(0, n)).toString('hex')).toBe(CT_ROOTS[n]); // ours too
    const root8 = h(CT_ROOTS[8]!);
    const proof0 = ['96a296d224f285c67bee93c30f8a309157f0daa35dc5b87e410b78630a09cfc7', '5f083f0a1a33ca076a95279832580db3e0ef4584bdff1f54c8a360f50de3031e', '6b47aaf29ee3c2af9af889bc1fb9254dabd31177f16232dd6aab035ca39bf6e4'].map(h);
    expect(v.verifyInclusion(0, 8, CT_LEAVES[0]!, proof0, root8)).toBe(true);
    expect(inclusionPath(0, CT_LEAVES)).toEqual(proof0);
    const proof5 = ['bc1a0643b12e4d2d7c77918f44e0f4f79a838b6cf9ec5b5c283e1f4d88599e6b', 'ca854ea128ed050b41b35ffc1b87b8eb2bde461e9e3b5596ece6b9d5975a0ae0', 'd37ee418976dd95753c1c73862b9398fa2a2cf9b4ff0fdfe8b30cd95209614b7'].map(h);
    expect(v.verifyInclusion(5, 8, CT_LEAVES[5]!, proof5, root8)).toBe(true);
    const consistency2to8 = ['5f083f0a1a33ca076a95279832580db3e0ef4584bdff1f54c8a360f50de3031e', '6b47aaf29ee3c2af9af889bc1fb9254dabd31177f16232dd6aab035ca39bf6e4'].map(h);
    expect(v.verifyConsistency(2, 8, h(CT_ROOTS[2]!), root8, consistency2to8)).toBe(true);
    expect(consistencyProof(2, CT_LEAVES)).toEqual(consistency2to8);
  });

  it('the leaf of an entry is SHA-256(0x00 || its hash as 32 bytes)', () => {
    const entry = honest.entries[0]!;
    expect(v.leafHash(entry.hash)).toEqual(leafOfEntry(entry.hash));
    expect(() => v.leafHash('not hex')).toThrow();
  });

  const many = Array.from({ length: 22 }, (_, i) => leafOfData(Buffer.of(i, i * 7))); // trees up to 21, and one leaf more

  it('accepts every inclusion proof of every tree up to 21 leaves, and rejects a wrong index, size, leaf, root or path', () => {
    for (let n = 1; n < many.length; n += 1) {
      const leaves = many.slice(0, n);
      const root = mth(leaves);
      for (let i = 0; i < n; i += 1) {
        const proof = inclusionPath(i, leaves);
        expect(v.verifyInclusion(i, n, leaves[i]!, proof, root), `leaf ${i} of ${n}`).toBe(true);
        if (n > 1) expect(v.verifyInclusion((i + 1) % n, n, leaves[i]!, proof, root)).toBe(false);
        // (Another tree size with the same path can verify: the root binds the size, and the signed checkpoint the root.)
        expect(v.verifyInclusion(i, n + 1, leaves[i]!, proof, mth(many.slice(0, n + 1)))).toBe(false);
        expect(v.verifyInclusion(i, n, many[n]!, proof, root)).toBe(false);
        expect(v.verifyInclusion(i, n, leaves[i]!, proof, mth(many.slice(0, n + 1)))).toBe(false);
        expect(v.verifyInclusion(i, n, leaves[i]!, [...proof, root], root)).toBe(false);
        if (proof.length > 0) {
          expect(v.verifyInclusion(i, n, leaves[i]!, proof.slice(1), root)).toBe(false);
          expect(v.verifyInclusion(i, n, leaves[i]!, [many[20]!, ...proof.slice(1)], root)).toBe(false);
        }
      }
      expect(v.verifyInclusion(n, n, many[n]!, [], root)).toBe(false);
    }
  });

  it('rejects a reordered pair: the leaves swapped give another root, and neither is at the other\'s index', () => {
    const leaves = many.slice(0, 11);
    const swapped = [...leaves];
    [swapped[4], swapped[5]] = [leaves[5]!, leaves[4]!];
    expect(v.treeRoot(swapped)).not.toEqual(mth(leaves));
    expect(v.verifyInclusion(5, 11, leaves[4]!, inclusionPath(4, leaves), mth(leaves))).toBe(false);
    expect(v.verifyInclusion(4, 11, leaves[5]!, inclusionPath(5, leaves), mth(leaves))).toBe(false);
    expect(v.verifyInclusion(4, 11, leaves[5]!, inclusionPath(4, swapped), mth(leaves))).toBe(false);
  });

  it('accepts every consistency proof between trees up to 21 leaves, and rejects a fork, wrong sizes or a tampered path', () => {
    for (let second = 1; second < many.length; second += 1) {
      const leaves = many.slice(0, second);
      const secondRoot = mth(leaves);
      expect(v.verifyConsistency(second, second, secondRoot, secondRoot, [])).toBe(true);
      expect(v.verifyConsistency(0, second, sha(), secondRoot, [])).toBe(true);
      for (let first = 1; first < second; first += 1) {
        const firstRoot = mth(leaves.slice(0, first));
        const proof = consistencyProof(first, leaves);
        expect(v.verifyConsistency(first, second, firstRoot, secondRoot, proof), `${first} to ${second}`).toBe(true);
        // A fork: the first tree's last leaf is another.
        const forked = mth([...leaves.slice(0, first - 1), leafOfData(Buffer.from('fork'))]);
        expect(v.verifyConsistency(first, second, forked, secondRoot, proof)).toBe(false);
        expect(v.verifyConsistency(first, second, firstRoot, mth(many.slice(0, second + 1)), proof)).toBe(false);
        expect(v.verifyConsistency(first, second, firstRoot, secondRoot, [])).toBe(false);
        expect(v.verifyConsistency(second, first, secondRoot, firstRoot, proof)).toBe(false);
        expect(v.verifyConsistency(first, second, firstRoot, secondRoot, proof.slice(1))).toBe(false);
        expect(v.verifyConsistency(first, second, firstRoot, secondRoot, [...proof, secondRoot])).toBe(false);
        for (let i = 0; i < proof.length; i += 1) {
          const tampered = proof.map((hash, j) => (j === i ? sha(hash) : hash));
          expect(v.verifyConsistency(first, second, firstRoot, secondRoot, tampered)).toBe(false);
        }
      }
      if (second > 1) expect(v.verifyConsistency(second - 1, second - 1, mth(leaves.slice(0, second - 1)), secondRoot, [])).toBe(false);
    }
  });
});

// ---- Notes, checkpoints, cosignatures

describe('signed notes (golang.org/x/mod/sumdb/note vector) and checkpoints', () => {
  const VKEY = 'PeterNeumann+c74f20a3+ARpc2QcUPDhMQegwxbzhKqiBfsVkmqq/LDE4izWy10TW';
  const SKEY = 'PRIVATE+KEY+PeterNeumann+c74f20a3+AYEKFALVFGyNhPJEMzD1QIDr+Y7hfZx09iUvxdXHKDFz';
  const TEXT = "If you think cryptography is the answer to your problem,\nthen you don't know what your problem is.\n";
  const NOTE = `${TEXT}\n— PeterNeumann x08go/ZJkuBS9UG/SffcvIAQxVBtiFupLLr8pAcElZInNIuGUgYN1FFYC2pZSNXgKvqfqdngotpRZb6KE6RyyBwJnAM=\n`;

  it('our signer reproduces the Go vector from its private key, and the verifier opens it', () => {
    const seed = Buffer.from(SKEY.split('+').slice(4).join('+'), 'base64');
    expect(seed[0]).toBe(0x01);
    const peter = signer('PeterNeumann', 0x01, seed.subarray(1));
    expect(peter.vkey).toBe(VKEY);
    expect(note(TEXT, signatureLine(peter, TEXT))).toBe(NOTE);

    expect(v.parseVerifierKey(VKEY)).toMatchObject({ name: 'PeterNeumann', type: 1, id: h('c74f20a3') });
    expect(v.verifyNote(NOTE, VKEY).text).toBe(TEXT);
    expect(v.parseNote(NOTE).signatures).toEqual([{ name: 'PeterNeumann', keyId: h('c74f20a3'), signature: expect.any(Buffer) }]);
  });

  it('rejects a changed text, another key, a key whose id is not its own, and malformed notes', () => {
    expect(() => v.verifyNote(NOTE.replace('cryptography', 'cryptographY'), VKEY)).toThrow(/does not verify/);
    expect(() => v.verifyNote(NOTE, signer('PeterNeumann', 0x01).vkey)).toThrow(/another key/);
    expect(() => v.verifyNote(NOTE, LOG.vkey)).toThrow(/no signature by the key/);
    expect(() => v.parseVerifierKey(VKEY.replace('c74f20a3', 'c74f20a4'))).toThrow(/is not the id/);
    expect(() => v.verifyNote(TEXT, VKEY)).toThrow();
    expect(() => v.verifyNote(`${TEXT}\n— PeterNeumann !!!\n`, VKEY)).toThrow(/not a signature line/);
    // The same signature spelt with stray padding bits is not taken: one spelling per signature.
    expect(() => v.verifyNote(NOTE.replace('nAM=\n', 'nAN=\n'), VKEY)).toThrow();
    expect(() => v.verifyNote(NOTE.replace('\n\n', '\r\n\n'), VKEY)).toThrow(/control characters/);
    // A witness key cannot sign as the log, nor the log's key cosign.
    expect(() => v.verifyNote(NOTE, W1.vkey)).toThrow(/not a log key/);
  });

  it('opens a checkpoint: origin, size and root, signed by the log whose name is the origin', () => {
    const cp = v.openCheckpoint(checkpointOf(12), LOG.vkey);
    expect(cp).toMatchObject({ origin: ORIGIN, size: 12, root: mth(LEAVES) });
    expect(() => v.openCheckpoint(checkpointOf(12, { by: IMPOSTOR }), LOG.vkey)).toThrow(/another key/);
    const other = signer('other.example/log', 0x01);
    const text = checkpointText(ORIGIN, 12, mth(LEAVES));
    expect(() => v.openCheckpoint(note(text, signatureLine(other, text)), other.vkey)).toThrow(/is of the log picks.example\/ledger/);
    expect(() => v.parseCheckpoint(`${ORIGIN}\n012\n${mth(LEAVES).toString('base64')}\n`)).toThrow(/tree size/);
    expect(() => v.parseCheckpoint(`${ORIGIN}\n12\nAAAA\n`)).toThrow(/root/);
  });

  it('verifies cosignature/v1, and names the witness whose cosignature is missing, by another key or invalid', () => {
    const cp = checkpointOf(12);
    expect(v.verifyCosignature(cp, W1.vkey)).toEqual({ timestamp: 1_790_000_000 });
    expect(v.verifyCosignature(cp, W2.vkey)).toEqual({ timestamp: 1_790_000_001 });
    expect(() => v.verifyCosignature(cp, signer('witness.example/w1', 0x04).vkey)).toThrow(/witness.example\/w1 is by the key id .*another key/);
    expect(() => v.verifyCosignature(cp, signer('witness.example/w3', 0x04).vkey)).toThrow(/no cosignature by witness.example\/w3/);
    const text = checkpointText(ORIGIN, 12, mth(LEAVES));
    expect(() => v.verifyCosignature(note(text, signatureLine(LOG, text), cosignatureLine(W1, text, 100, 101)), W1.vkey)).toThrow(/does not verify/);
    expect(() => v.verifyCosignature(cp.replace('\n12\n', '\n13\n'), W1.vkey)).toThrow(/does not verify/);
    expect(() => v.verifyCosignature(cp, LOG.vkey)).toThrow(/not a witness key/);
  });
});

// ---- Receipts, offline

describe('receipts, checked offline with the key given', () => {
  /** pick-3's receipt at the checkpoint of size 10: seq 3 included, seq 11 (its reschedule) pending. */
  function receipt() {
    return {
      pick_id: 'pick-3',
      key: LOG.vkey,
      tree_size: 10,
      checkpoint: checkpointOf(10, { witnesses: [W1] }),
      entries: [3, 11].map((seq) => ({
        ...honest.entries[seq - 1]!,
        ...honest.secrets.get(seq)!,
        leaf_index: seq - 1,
        inclusion: seq <= 10 ? b64(inclusionPath(seq - 1, LEAVES.slice(0, 10))) : [],
      })),
      pending: [11],
    };
  }

  it('accepts an honest receipt, and lists the entry appended after its checkpoint as pending', () => {
    const result = v.verifyReceipt(receipt(), { key: LOG.vkey, witnesses: [W1.vkey] });
    expect(result.failures).toEqual([]);
    expect(result).toMatchObject({ ok: true, included: 1, pending: [11], checkpoint: { size: 10, cosigned: 1 } });
    expect(result.notes).toEqual([expect.stringMatching(/^seq 11: appended after the checkpoint \(size 10\)/)]);
  });

  it('requires the key: the one a receipt carries proves nothing', () => {
    expect(() => v.verifyReceipt(receipt(), {})).toThrow(/log key you trust/);
  });

  it('fails a tampered receipt at the right check', () => {
    const cases: [string, (r: ReturnType<typeof receipt>) => void, { seq: number; check: string }[]][] = [
      ['a changed pick', (r) => { r.entries[0]!.pick = { ...r.entries[0]!.pick, odds: 9.99 }; }, [{ seq: 3, check: 'commitment' }]],
      ['a changed proof hash', (r) => { r.entries[0]!.inclusion[1] = sha(Buffer.from('x')).toString('base64'); }, [{ seq: 3, check: 'inclusion' }]],
      ['a proof for another leaf', (r) => { r.entries[0]!.leaf_index = 3; }, [{ seq: 3, check: 'inclusion' }]],
      ['a wrong tree size', (r) => { r.tree_size = 11; }, [{ seq: 10, check: 'tree_size' }]],
      ['a changed entry', (r) => { r.entries[0]!.at = '2026-11-01T00:00:00.000Z'; }, [{ seq: 3, check: 'hash' }]],
      ['a checkpoint signed with another key', (r) => { r.checkpoint = checkpointOf(10, { by: IMPOSTOR, witnesses: [W1] }); r.key = IMPOSTOR.vkey; }, [{ seq: 0, check: 'key' }, { seq: 10, check: 'signature' }]],
      ['a checkpoint of another tree', (r) => { r.checkpoint = checkpointOf(10, { leaves: leavesOf(chain(SPECS.slice().reverse()).entries), witnesses: [W1] }); }, [{ seq: 3, check: 'inclusion' }]],
      ['a checkpoint without the witness', (r) => { r.checkpoint = checkpointOf(10, { witnesses: [] }); }, [{ seq: 10, check: 'witness' }]],
    ];
    for (const [name, tamper, expected] of cases) {
      const r = receipt();
      tamper(r);
      expect(checks(v.verifyReceipt(r, { key: LOG.vkey, witnesses: [W1.vkey] })), name).toEqual(expected);
    }
  });

  it('names the witness whose key does not match', () => {
    const impostor = signer('witness.example/w1', 0x04);
    const result = v.verifyReceipt(receipt(), { key: LOG.vkey, witnesses: [impostor.vkey] });
    expect(checks(result)).toEqual([{ seq: 10, check: 'witness' }]);
    expect(result.failures[0]!.message).toMatch(/^witness witness.example\/w1: .*another key/);
  });

  it('runs from the command line without a service, and without --key exits 2', async () => {
    const dir = mkdtempSync(path.join(tmpdir(), 'verify-receipt-'));
    try {
      const good = path.join(dir, 'good.json');
      const bad = path.join(dir, 'bad.json');
      writeFileSync(good, JSON.stringify(receipt()));
      const tampered = receipt();
      tampered.entries[0]!.pick = { ...tampered.entries[0]!.pick, selection: 'Away FC' };
      writeFileSync(bad, JSON.stringify(tampered));

      const noKey = await cli('--receipt', good);
      expect(noKey.code).toBe(2);
      expect(noKey.stderr).toContain('--receipt needs --key');

      const ok = await cli('--receipt', good, '--key', LOG.vkey, '--witness', W1.vkey);
      expect(ok.stdout).toContain(`Receipt ${good} (pick pick-3)\n  Result       OK: every check holds.\n`);
      expect(ok.stdout).toContain(`  Checkpoint   size 10, root ${mth(LEAVES.slice(0, 10)).toString('base64')}, signed by ${ORIGIN} (key given); cosigned by 1 of the 1 given witness\n`);
      expect(ok.stdout).toContain('  Entries      2: 1 proved included in the checkpoint, 1 pending (appended after it)');
      expect(ok.code).toBe(0);

      const failed = await cli('--receipt', good, '--receipt', bad, '--key', LOG.vkey);
      expect(failed.code).toBe(1);
      expect(failed.stdout).toContain('seq 3  commitment: ');
      expect(await cli('--receipt', good, '--key', W1.vkey)).toMatchObject({ code: 2 });
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});

// ---- Online: the latest checkpoint, archived checkpoints, received hashes

describe('the ledger online: checkpoint, witnesses, archived checkpoints and received hashes', () => {
  it('accepts an honest log: signature, root, witnesses, consistency with archived checkpoints, inclusion of received hashes', async () => {
    serveHonest();
    const archived = [1, 4, 7, 10, 12].map((size) => checkpointOf(size, { witnesses: [] }));
    const received = [2, 5, 5, 12].map((seq) => ({ id: `w${seq}`, data: { ledger_seq: seq, ledger_hash: honest.entries[seq - 1]!.hash } }));
    requests = [];
    const report = await verify({ key: LOG.vkey, witnesses: [W1.vkey, W2.vkey], archived, received });
    expect(report.failures).toEqual([]);
    expect(report.tree).toMatchObject({ pinned: true, archived: 5, checkpoint: { size: 12, root: mth(LEAVES).toString('base64'), keyName: ORIGIN, witnesses: 2, cosigned: 2 } });
    expect(report.received).toEqual({ checked: 4, skipped: 0, unrevealed: 4 });
    expect(report.tree.inclusion).toEqual({ included: 4, after: 0 });
    // Consistency asked for the sizes below the latest, inclusion once per received hash.
    expect(requests.filter((r) => r.includes('/proof/'))).toEqual([
      '/api/public/ledger/proof/consistency?from=1&to=12',
      '/api/public/ledger/proof/consistency?from=4&to=12',
      '/api/public/ledger/proof/consistency?from=7&to=12',
      '/api/public/ledger/proof/consistency?from=10&to=12',
      '/api/public/ledger/proof/inclusion?seq=2&tree_size=12',
      '/api/public/ledger/proof/inclusion?seq=5&tree_size=12',
      '/api/public/ledger/proof/inclusion?seq=12&tree_size=12',
    ]);
    expect(verifier.formatReport(base, report)).toContain(`  Checkpoint   size 12, root ${mth(LEAVES).toString('base64')}, signed by ${ORIGIN} (key pinned); cosigned by 2 of the 2 given witnesses\n`);
  });

  it('an older checkpoint than the chain: entries after it are not covered, received hashes after it are counted apart', async () => {
    serveHonest(9);
    const received = [3, 11].map((seq) => ({ id: `w${seq}`, data: { ledger_seq: seq, ledger_hash: honest.entries[seq - 1]!.hash } }));
    const report = await verify({ received, now: SOON });
    expect(report.failures).toEqual([]);
    expect(report.tree).toMatchObject({ pinned: false, key: LOG.vkey, checkpoint: { size: 9 } });
    // A day later the entries after it are still in no checkpoint: an old checkpoint served for
    // good would leave them open to a fork, so that fails at the first of them.
    expect(checks(await verify({ received }))).toEqual([{ seq: 10, check: 'checkpoint_age' }]);
    expect(checks(await verify({ received, maxCheckpointAgeSeconds: 2 * 86_400 }))).toEqual([]);
    expect(report.tree.inclusion).toEqual({ included: 1, after: 1 });
    expect(verifier.formatReport(base, report)).toContain('signed by picks.example/ledger (served key); 2 cosignatures, none checked (no --witness given)');
  });

  it('an empty ledger has no checkpoint: said in the summary, not a failure', async () => {
    Object.assign(served, { entries: [], checkpoint: null, key: LOG.vkey, proofLeaves: [] });
    const report = await verify({ key: LOG.vkey });
    expect(report.failures).toEqual([]);
    expect(report.tree.checkpoint).toBeNull();
    expect(verifier.formatReport(base, report)).toContain('  Checkpoint   none yet: the ledger is empty\n');
  });

  it('fails a changed entry (the chain re-forged after it) at checkpoint_root', async () => {
    serveHonest();
    const forged = chain(SPECS.map((spec, i) => (i === 4 ? { ...spec, at: '2026-11-01T00:05:30.000Z' } : spec)));
    served.entries = forged.entries; // every hash and link recomputed: the chain alone looks fine
    const report = await verify({ key: LOG.vkey });
    expect(checks(report)).toEqual([{ seq: 12, check: 'checkpoint_root' }]);
  });

  it('fails a reordered pair (the chain re-forged) at checkpoint_root, and its received hashes at inclusion', async () => {
    serveHonest();
    const swapped = [...SPECS];
    [swapped[5], swapped[6]] = [SPECS[6]!, SPECS[5]!];
    served.entries = chain(swapped).entries;
    served.proofLeaves = leavesOf(served.entries);
    const received = [6, 7].map((seq) => ({ id: `w${seq}`, data: { ledger_seq: seq, ledger_hash: honest.entries[seq - 1]!.hash } }));
    const report = await verify({ key: LOG.vkey, received });
    expect(checks(report)).toEqual([
      { seq: 6, check: 'received' },
      { seq: 7, check: 'received' },
      { seq: 12, check: 'checkpoint_root' },
      { seq: 6, check: 'inclusion' },
      { seq: 7, check: 'inclusion' },
    ]);
  });

  it('fails a checkpoint signed with another key: signature, and key when the key is pinned', async () => {
    serveHonest();
    served.checkpoint = checkpointOf(12, { by: IMPOSTOR });
    const unpinned = await verify();
    expect(checks(unpinned)).toEqual([{ seq: 12, check: 'signature' }]);
    expect(unpinned.failures[0]!.message).toMatch(/another key/);
    served.key = IMPOSTOR.vkey; // the service now serves the impostor's key too
    expect(checks(await verify())).toEqual([]);
    const pinned = await verify({ key: LOG.vkey });
    expect(checks(pinned)).toEqual([{ seq: 12, check: 'key' }, { seq: 12, check: 'signature' }]);
    expect(verifier.formatReport(base, pinned)).toContain('  Checkpoint   size 12 claimed, but not signed by the key (see the failures)\n');
  });

  it('fails a forked history: an archived checkpoint inconsistent with the latest, caught by the root and by the proof', async () => {
    serveHonest();
    const fork = leavesOf(chain(SPECS.map((spec, i) => (i === 5 ? { ...spec, pick: pickOf('pick-other') } : spec))).entries);
    const archived = checkpointOf(7, { leaves: fork, witnesses: [] });
    const report = await verify({ key: LOG.vkey, archived: [archived] });
    expect(checks(report)).toEqual([{ seq: 7, check: 'consistency' }, { seq: 7, check: 'consistency' }]);
    expect(report.failures.map((f) => f.message)).toEqual([expect.stringMatching(/history was rewritten/), expect.stringMatching(/forked history/)]);
    // A log that shrank, and one that shows another root at the same size.
    expect(checks(await verify({ key: LOG.vkey, archived: [checkpointOf(12, { leaves: fork })] }))).toEqual([{ seq: 12, check: 'consistency' }, { seq: 12, check: 'consistency' }]);
    served.checkpoint = checkpointOf(6);
    expect(checks(await verify({ key: LOG.vkey, archived: [checkpointOf(7)], now: SOON }))).toEqual([{ seq: 7, check: 'consistency' }]);
    // An archived note not signed by the key.
    serveHonest();
    expect(checks(await verify({ key: LOG.vkey, archived: [checkpointOf(7, { by: IMPOSTOR })] }))).toEqual([{ seq: 7, check: 'signature' }]);
    // Unless that key is the one the log had before (a replaced key), named as such.
    expect(checks(await verify({ key: LOG.vkey, archived: [checkpointOf(7, { by: IMPOSTOR })], previousKeys: [IMPOSTOR.vkey] }))).toEqual([]);
  });

  it('fails a served consistency proof that does not prove, even when the archived root is the chain\'s', async () => {
    serveHonest();
    served.proofLeaves = leavesOf(chain(SPECS.slice().reverse()).entries);
    expect(checks(await verify({ key: LOG.vkey, archived: [checkpointOf(5)] }))).toEqual([{ seq: 5, check: 'consistency' }]);
  });

  it('names each witness whose cosignature is missing, by another key, or invalid', async () => {
    serveHonest();
    const text = checkpointText(ORIGIN, 12, mth(LEAVES));
    served.checkpoint = note(text, signatureLine(LOG, text), cosignatureLine(W1, text, 100), cosignatureLine(W2, text, 100, 200));
    const impostor = signer('witness.example/w1', 0x04);
    const w3 = signer('witness.example/w3', 0x04);
    const report = await verify({ key: LOG.vkey, witnesses: [impostor.vkey, W2.vkey, w3.vkey] });
    expect(checks(report)).toEqual([{ seq: 12, check: 'witness' }, { seq: 12, check: 'witness' }, { seq: 12, check: 'witness' }]);
    expect(report.failures.map((f) => f.message)).toEqual([
      expect.stringMatching(/^witness witness.example\/w1: the cosignature named witness.example\/w1 is by the key id [0-9a-f]{8}, not [0-9a-f]{8}: another key/),
      expect.stringMatching(/^witness witness.example\/w2: the cosignature by witness.example\/w2 does not verify/),
      'witness witness.example/w3: no cosignature by witness.example/w3',
    ]);
    expect(report.tree.checkpoint).toMatchObject({ witnesses: 3, cosigned: 0 });
  });

  it('from the command line: the summary line, a pinned key the service does not serve, a malformed key (exit 2)', async () => {
    serveHonest();
    const dir = mkdtempSync(path.join(tmpdir(), 'verify-tlog-'));
    try {
      const archived = path.join(dir, 'checkpoint.txt');
      writeFileSync(archived, checkpointOf(8));
      const ok = await cli(base, '--key', LOG.vkey, '--witness', W1.vkey, '--witness', W2.vkey, '--checkpoint', archived);
      expect(ok.stdout).toContain(`  Checkpoint   size 12, root ${mth(LEAVES).toString('base64')}, signed by ${ORIGIN} (key pinned); cosigned by 2 of the 2 given witnesses\n`);
      expect(ok.stdout).toContain('  Archived     1 checkpoint checked');
      expect(ok.code).toBe(0);

      const other = await cli(base, '--key', IMPOSTOR.vkey);
      expect(other.code).toBe(1);
      expect(other.stdout).toContain('seq 12  key: the service serves the key');
      expect(other.stdout).toContain('seq 12  signature: ');

      expect((await cli(base, '--key', 'not-a-key')).code).toBe(2);
      expect((await cli(base, '--witness', LOG.vkey)).code).toBe(2); // a log key is no witness key
      expect((await cli('--checkpoint', archived)).code).toBe(2); // nothing to check it against
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});
