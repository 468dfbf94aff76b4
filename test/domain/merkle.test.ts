/**
 * The ledger's Merkle tree against transparency-dev/merkle's published RFC 9162 vectors
 * (test/fixtures/tlog/merkle.json names the commit), and proofs from stored nodes checked by an
 * independent verifier written here, not the service's.
 */
import { createHash } from 'node:crypto';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import {
  appendedNodes,
  consistencyProofRanges,
  EMPTY_ROOT,
  inclusionProofRanges,
  leafHash,
  leafHashOfData,
  nodeKey,
  nodesFor,
  nodesOfRange,
  proofHashes,
  rootOfLeaves,
  rootRange,
  verifyConsistency,
  verifyInclusion,
} from '../../src/domain/merkle.js';
import vectors from '../fixtures/tlog/merkle.json' with { type: 'json' };

const hex = (text: string) => Buffer.from(text, 'hex');
const LEAVES = vectors.leaves.map((data) => leafHashOfData(hex(data)));

/** Stores a tree of `leaves` the way the service does: appended in batches, as complete nodes. */
function storedTree(leaves: readonly Buffer[], batches: readonly number[] = [leaves.length]): Map<string, Buffer> {
  const stored = new Map<string, Buffer>();
  let size = 0;
  for (const batch of batches) {
    const frontier = new Map(nodesOfRange({ start: 0, end: size }).map((node) => [nodeKey(node), stored.get(nodeKey(node))!]));
    for (const node of appendedNodes(size, frontier, leaves.slice(size, size + batch))) stored.set(nodeKey(node), node.hash);
    size += batch;
  }
  return stored;
}

// An independent RFC 9162 reference: MTH and the proofs by the RFC's recursive definitions.
const sha = (...parts: Buffer[]) => createHash('sha256').update(Buffer.concat(parts)).digest();
const split = (n: number) => 2 ** Math.ceil(Math.log2(n) - 1);
function mth(leaves: readonly Buffer[]): Buffer {
  if (leaves.length === 0) return sha();
  if (leaves.length === 1) return leaves[0]!;
  const k = split(leaves.length);
  return sha(Buffer.from([1]), mth(leaves.slice(0, k)), mth(leaves.slice(k)));
}
function refPath(m: number, leaves: readonly Buffer[]): Buffer[] {
  if (leaves.length <= 1) return [];
  const k = split(leaves.length);
  return m < k ? [...refPath(m, leaves.slice(0, k)), mth(leaves.slice(k))] : [...refPath(m - k, leaves.slice(k)), mth(leaves.slice(0, k))];
}
function refSubproof(m: number, leaves: readonly Buffer[], whole: boolean): Buffer[] {
  const n = leaves.length;
  if (m === n) return whole ? [] : [mth(leaves)];
  const k = split(n);
  return m <= k ? [...refSubproof(m, leaves.slice(0, k), whole), mth(leaves.slice(k))] : [...refSubproof(m - k, leaves.slice(k), false), mth(leaves.slice(0, k))];
}

describe('RFC 9162 tree (transparency-dev/merkle vectors)', () => {
  it('gives the published leaf hashes and roots for sizes 0 to 8', () => {
    expect(LEAVES.map((leaf) => leaf.toString('hex'))).toEqual(vectors.leaf_hashes);
    for (const [sizeText, root] of Object.entries(vectors.roots)) {
      const size = Number(sizeText);
      expect(rootOfLeaves(LEAVES.slice(0, size)).toString('hex')).toBe(root);
      if (size === 0) continue;
      // Appended at once or one by one, the stored nodes give the published root.
      for (const batches of [[size], Array.from({ length: size }, () => 1)]) {
        expect(proofHashes(rootRange(size), storedTree(LEAVES.slice(0, size), batches))[0]!.toString('hex')).toBe(root);
      }
    }
    expect(EMPTY_ROOT.toString('hex')).toBe(vectors.roots['0']);
  });

  it('builds the proofs the vectors accept, and its verifier agrees with every published case', () => {
    const stored = storedTree(LEAVES, [3, 1, 4]);
    let accepted = 0;
    for (const test of vectors.inclusion) {
      const verdict = verifyInclusion(test.leaf_index, test.tree_size, hex(test.leaf_hash), test.proof.map(hex), hex(test.root));
      expect(verdict, `${test.file}`).toBe(!test.want_error);
      if (!test.want_error) {
        accepted++;
        const ranges = inclusionProofRanges(test.leaf_index, test.tree_size);
        expect(proofHashes(ranges, stored).map((hash) => hash.toString('hex')), test.file).toEqual(test.proof);
      }
    }
    for (const test of vectors.consistency) {
      const verdict = verifyConsistency(test.size1, test.size2, test.proof.map(hex), hex(test.root1), hex(test.root2));
      expect(verdict, `${test.file}`).toBe(!test.want_error);
      if (!test.want_error && test.size2 <= LEAVES.length && test.size1 > 0) {
        accepted++;
        expect(proofHashes(consistencyProofRanges(test.size1, test.size2), stored).map((hash) => hash.toString('hex')), test.file).toEqual(test.proof);
      }
    }
    expect(accepted).toBeGreaterThanOrEqual(8);
  });

  it('refuses entry hashes that are not 64 lowercase hex digits', () => {
    expect(() => leafHash('AB'.repeat(32))).toThrow(TypeError);
    expect(() => leafHash('ab'.repeat(31))).toThrow(TypeError);
    expect(leafHash('ab'.repeat(32))).toEqual(leafHashOfData(Buffer.alloc(32, 0xab)));
  });
});

describe('proofs from stored nodes', () => {
  const leavesOf = (n: number) => Array.from({ length: n }, (_, i) => sha(Buffer.from(`leaf ${i}`)));

  it('match the RFC definitions and verify independently, for random sizes and batches', () => {
    fc.assert(
      fc.property(fc.integer({ min: 1, max: 300 }), fc.array(fc.integer({ min: 1, max: 40 }), { minLength: 1, maxLength: 12 }), fc.nat(), fc.nat(), (size, batchSeeds, a, b) => {
        const leaves = leavesOf(size);
        const batches: number[] = [];
        let left = size;
        for (const seed of batchSeeds) if (left > 0) left -= batches[batches.push(Math.min(seed, left)) - 1]!;
        if (left > 0) batches.push(left);
        const stored = storedTree(leaves, batches);
        const index = a % size;
        const inclusion = proofHashes(inclusionProofRanges(index, size), stored);
        expect(inclusion).toEqual(refPath(index, leaves));
        expect(independentInclusion(index, size, leaves[index]!, inclusion, mth(leaves))).toBe(true);
        const from = 1 + (b % size);
        const consistency = proofHashes(consistencyProofRanges(from, size), stored);
        expect(consistency).toEqual(from === size ? [] : refSubproof(from, leaves, true));
        expect(independentConsistency(from, size, consistency, mth(leaves.slice(0, from)), mth(leaves))).toBe(true);
        // Only O(log n) nodes are read for a proof.
        expect(nodesFor(consistencyProofRanges(from, size)).length).toBeLessThanOrEqual(2 * Math.ceil(Math.log2(size + 1)) + 2);
      }),
      { numRuns: 150 },
    );
  });

  it('reject a tampered proof, leaf or root', () => {
    const leaves = leavesOf(13);
    const stored = storedTree(leaves);
    const proof = proofHashes(inclusionProofRanges(5, 13), stored);
    const root = mth(leaves);
    expect(verifyInclusion(5, 13, leaves[5]!, proof, root)).toBe(true);
    expect(verifyInclusion(5, 13, leaves[6]!, proof, root)).toBe(false);
    expect(verifyInclusion(5, 13, leaves[5]!, proof.toReversed(), root)).toBe(false);
    expect(verifyInclusion(5, 8, leaves[5]!, proof, root)).toBe(false);
    const consistency = proofHashes(consistencyProofRanges(6, 13), stored);
    expect(verifyConsistency(6, 13, consistency, mth(leaves.slice(0, 6)), root)).toBe(true);
    const forked = [...leaves.slice(0, 5), sha(Buffer.from('forged')), ...leaves.slice(6)];
    expect(verifyConsistency(6, 13, consistency, mth(forked.slice(0, 6)), root)).toBe(false);
  });
});

/** RFC 9162 2.1.3.2, written again here: the test does not trust the service's verifier. */
function independentInclusion(index: number, size: number, leaf: Buffer, proof: Buffer[], root: Buffer): boolean {
  if (index >= size) return false;
  let fn = BigInt(index);
  let sn = BigInt(size - 1);
  let r = leaf;
  for (const p of proof) {
    if (sn === 0n) return false;
    if ((fn & 1n) === 1n || fn === sn) {
      r = sha(Buffer.from([1]), p, r);
      while ((fn & 1n) === 0n && fn !== 0n) {
        fn >>= 1n;
        sn >>= 1n;
      }
    } else {
      r = sha(Buffer.from([1]), r, p);
    }
    fn >>= 1n;
    sn >>= 1n;
  }
  return sn === 0n && r.equals(root);
}

/** RFC 9162 2.1.4.2, written again here. */
function independentConsistency(first: number, second: number, proof: Buffer[], firstRoot: Buffer, secondRoot: Buffer): boolean {
  if (first === second) return proof.length === 0 && firstRoot.equals(secondRoot);
  const path = (first & (first - 1)) === 0 ? [firstRoot, ...proof] : [...proof];
  let fn = BigInt(first - 1);
  let sn = BigInt(second - 1);
  while ((fn & 1n) === 1n) {
    fn >>= 1n;
    sn >>= 1n;
  }
  let fr = path[0]!;
  let sr = path[0]!;
  for (const c of path.slice(1)) {
    if (sn === 0n) return false;
    if ((fn & 1n) === 1n || fn === sn) {
      fr = sha(Buffer.from([1]), c, fr);
      sr = sha(Buffer.from([1]), c, sr);
      while ((fn & 1n) === 0n && fn !== 0n) {
        fn >>= 1n;
        sn >>= 1n;
      }
    } else {
      sr = sha(Buffer.from([1]), sr, c);
    }
    fn >>= 1n;
    sn >>= 1n;
  }
  return fr.equals(firstRoot) && sr.equals(secondRoot) && sn === 0n;
}
