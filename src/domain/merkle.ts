/**
 * The ledger's Merkle tree (RFC 9162, section 2.1): the entries in seq order are its leaves, the
 * leaf of an entry is SHA-256(0x00 || the 32 bytes of its hash), an interior node SHA-256(0x01 ||
 * left || right), split at the largest power of two below the size. Pure.
 *
 * The tree is stored as its complete subtrees (docs/API.md, "Verifying the record"): the node (level, index) is the hash of the leaves
 * [index * 2^level, (index + 1) * 2^level), written once when its last leaf is appended and never
 * changed. Any subtree a proof names is a run of leaves [start, end) whose hash folds the complete
 * nodes of end - start's binary form, so a proof is computed from O(log n) stored nodes: the
 * functions below name the nodes a proof needs (nodesFor), the caller reads them, and the proof is
 * assembled from what was read.
 */
import { createHash } from 'node:crypto';

/** A complete subtree: the leaves [index * 2^level, (index + 1) * 2^level). */
export interface NodeId {
  level: number;
  index: number;
}

/** A run of leaves [start, end) whose RFC 9162 subtree hash a proof carries. */
export interface LeafRange {
  start: number;
  end: number;
}

export type NodeReader = (node: NodeId) => Buffer;

const sha256 = (...parts: Buffer[]) => createHash('sha256').update(Buffer.concat(parts)).digest();
const LEAF_PREFIX = Buffer.from([0]);
const NODE_PREFIX = Buffer.from([1]);

/** The leaf of an entry: SHA-256(0x00 || the entry's hash as 32 bytes). */
export function leafHash(entryHashHex: string): Buffer {
  if (!/^[0-9a-f]{64}$/.test(entryHashHex)) throw new TypeError('an entry hash is 64 lowercase hex digits');
  return sha256(LEAF_PREFIX, Buffer.from(entryHashHex, 'hex'));
}

/** The leaf of raw data: SHA-256(0x00 || data) (the RFC's vectors hash data, not entry hashes). */
export function leafHashOfData(data: Buffer): Buffer {
  return sha256(LEAF_PREFIX, data);
}

export function nodeHash(left: Buffer, right: Buffer): Buffer {
  return sha256(NODE_PREFIX, left, right);
}

/** SHA-256 of nothing: the root of the empty tree. */
export const EMPTY_ROOT: Buffer = createHash('sha256').digest();

/** The largest power of two strictly below n (n >= 2). */
function splitPoint(n: number): number {
  let k = 1;
  while (k * 2 < n) k *= 2;
  return k;
}

function isPowerOfTwo(n: number): boolean {
  let k = 1;
  while (k < n) k *= 2;
  return k === n;
}

function checkSize(name: string, value: number, min: number): void {
  if (!Number.isSafeInteger(value) || value < min) throw new RangeError(`${name} must be an integer >= ${min}`);
}

/**
 * The complete nodes whose fold is the hash of the leaves [start, end), left to right: the binary
 * form of end - start from its largest power of two down. Every range a proof names starts on a
 * multiple of its first node's width, so each of them is a stored node.
 */
export function nodesOfRange(range: LeafRange): NodeId[] {
  const nodes: NodeId[] = [];
  let start = range.start;
  let remaining = range.end - range.start;
  while (remaining > 0) {
    let level = 0;
    while (2 ** (level + 1) <= remaining) level++;
    const width = 2 ** level;
    nodes.push({ level, index: start / width });
    start += width;
    remaining -= width;
  }
  return nodes;
}

/** The RFC 9162 hash of the leaves [start, end), from stored complete nodes. */
export function rangeHash(range: LeafRange, node: NodeReader): Buffer {
  const nodes = nodesOfRange(range).map(node);
  // The split puts the largest power of two on the left: fold from the right.
  let hash = nodes.at(-1)!;
  for (let i = nodes.length - 2; i >= 0; i--) hash = nodeHash(nodes[i]!, hash);
  return hash;
}

/** The ranges of an inclusion proof of leaf `index` in a tree of `size` leaves, leaf-side first (RFC 9162 2.1.3.1). */
export function inclusionProofRanges(index: number, size: number): LeafRange[] {
  checkSize('size', size, 1);
  checkSize('index', index, 0);
  if (index >= size) throw new RangeError('index must be below size');
  const path: LeafRange[] = [];
  const walk = (m: number, start: number, n: number): void => {
    if (n === 1) return;
    const k = splitPoint(n);
    if (m < k) {
      walk(m, start, k);
      path.push({ start: start + k, end: start + n });
    } else {
      walk(m - k, start + k, n - k);
      path.push({ start, end: start + k });
    }
  };
  walk(index, 0, size);
  return path;
}

/** The ranges of a consistency proof from `from` leaves to `to` leaves (RFC 9162 2.1.4.1); none when from is 0 or equal to to. */
export function consistencyProofRanges(from: number, to: number): LeafRange[] {
  checkSize('from', from, 0);
  checkSize('to', to, from);
  if (from === 0 || from === to) return [];
  const proof: LeafRange[] = [];
  // SUBPROOF(m, D[start:start+n], b)
  const subproof = (m: number, start: number, n: number, whole: boolean): void => {
    if (m === n) {
      if (!whole) proof.push({ start, end: start + n });
      return;
    }
    const k = splitPoint(n);
    if (m <= k) {
      subproof(m, start, k, whole);
      proof.push({ start: start + k, end: start + n });
    } else {
      subproof(m - k, start + k, n - k, false);
      proof.push({ start, end: start + k });
    }
  };
  subproof(from, 0, to, true);
  return proof;
}

/** Every stored node the given ranges need, once each. */
export function nodesFor(ranges: readonly LeafRange[]): NodeId[] {
  const seen = new Map<string, NodeId>();
  for (const range of ranges) for (const node of nodesOfRange(range)) seen.set(`${node.level}/${node.index}`, node);
  return [...seen.values()];
}

/** The hashes of `ranges`, from the nodes read (a map keyed "level/index"). */
export function proofHashes(ranges: readonly LeafRange[], nodes: ReadonlyMap<string, Buffer>): Buffer[] {
  const read: NodeReader = (node) => {
    const hash = nodes.get(nodeKey(node));
    if (!hash) throw new Error(`merkle node ${nodeKey(node)} was not read`);
    return hash;
  };
  return ranges.map((range) => rangeHash(range, read));
}

export function nodeKey(node: NodeId): string {
  return `${node.level}/${node.index}`;
}

/** The root of a tree of `size` leaves: the hash of [0, size), or EMPTY_ROOT. */
export function rootRange(size: number): LeafRange[] {
  checkSize('size', size, 0);
  return size === 0 ? [] : [{ start: 0, end: size }];
}

/**
 * The nodes to write when leaves are appended to a tree of `size` leaves: each new leaf, and
 * each complete node its arrival completes. `frontier` holds the nodes of [0, size) (nodesOfRange),
 * the only older nodes a new one can need.
 */
export function appendedNodes(size: number, frontier: ReadonlyMap<string, Buffer>, leaves: readonly Buffer[]): (NodeId & { hash: Buffer })[] {
  const known = new Map(frontier);
  const written: (NodeId & { hash: Buffer })[] = [];
  leaves.forEach((leaf, i) => {
    let index = size + i;
    let level = 0;
    let hash = leaf;
    for (;;) {
      known.set(nodeKey({ level, index }), hash);
      written.push({ level, index, hash });
      if (index % 2 === 0) break;
      const left = known.get(nodeKey({ level, index: index - 1 }));
      if (!left) throw new Error(`merkle node ${level}/${index - 1} is missing from the frontier`);
      hash = nodeHash(left, hash);
      index = (index - 1) / 2;
      level++;
    }
  });
  return written;
}

/** The RFC 9162 root of a list of leaf hashes, computed directly (the reference for small trees and tests). */
export function rootOfLeaves(leaves: readonly Buffer[]): Buffer {
  if (leaves.length === 0) return EMPTY_ROOT;
  if (leaves.length === 1) return leaves[0]!;
  const k = splitPoint(leaves.length);
  return nodeHash(rootOfLeaves(leaves.slice(0, k)), rootOfLeaves(leaves.slice(k)));
}

const allHashes = (hashes: readonly Buffer[]) => hashes.every((hash) => hash.length === 32);

/** RFC 9162 2.1.3.2: whether `proof` shows `leaf` at `index` in the tree of `size` leaves with `root`. */
export function verifyInclusion(index: number, size: number, leaf: Buffer, proof: readonly Buffer[], root: Buffer): boolean {
  if (!Number.isSafeInteger(index) || !Number.isSafeInteger(size) || index < 0 || index >= size) return false;
  if (!allHashes([leaf, root, ...proof])) return false;
  let fn = index;
  let sn = size - 1;
  let r = leaf;
  for (const p of proof) {
    if (sn === 0) return false;
    if (fn % 2 === 1 || fn === sn) {
      r = nodeHash(p, r);
      if (fn % 2 === 0) {
        while (fn % 2 === 0 && fn !== 0) {
          fn = Math.floor(fn / 2);
          sn = Math.floor(sn / 2);
        }
      }
    } else {
      r = nodeHash(r, p);
    }
    fn = Math.floor(fn / 2);
    sn = Math.floor(sn / 2);
  }
  return sn === 0 && r.equals(root);
}

/** RFC 9162 2.1.4.2: whether `proof` shows the tree of `from` leaves with `fromRoot` is a prefix of the tree of `to` leaves with `toRoot`. */
export function verifyConsistency(from: number, to: number, proof: readonly Buffer[], fromRoot: Buffer, toRoot: Buffer): boolean {
  // A tree of no entries is consistent with anything: there is nothing to prove (nor accept).
  if (!Number.isSafeInteger(from) || !Number.isSafeInteger(to) || from < 1 || to < from) return false;
  if (from === to) return proof.length === 0 && fromRoot.equals(toRoot);
  if (proof.length === 0 || !allHashes(proof)) return false;
  let path = [...proof];
  if (isPowerOfTwo(from)) path = [fromRoot, ...path];
  let fn = from - 1;
  let sn = to - 1;
  while (fn % 2 === 1) {
    fn = Math.floor(fn / 2);
    sn = Math.floor(sn / 2);
  }
  let fr = path[0]!;
  let sr = path[0]!;
  for (const c of path.slice(1)) {
    if (sn === 0) return false;
    if (fn % 2 === 1 || fn === sn) {
      fr = nodeHash(c, fr);
      sr = nodeHash(c, sr);
      if (fn % 2 === 0) {
        while (fn % 2 === 0 && fn !== 0) {
          fn = Math.floor(fn / 2);
          sn = Math.floor(sn / 2);
        }
      }
    } else {
      sr = nodeHash(sr, c);
    }
    fn = Math.floor(fn / 2);
    sn = Math.floor(sn / 2);
  }
  return fr.equals(fromRoot) && sr.equals(toRoot) && sn === 0;
}
