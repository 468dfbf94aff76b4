/**
 * The ledger's Merkle tree, checkpoints and cosignatures (docs/API.md, "Verifying the record").
 * The tree is stored as its complete subtrees (src/domain/merkle.ts): extended in the
 * transaction that appends entries, under the same lock, so the tree always covers a prefix of
 * the chain, and catches up with entries appended without it (before this table, or by an older
 * instance during a rolling deploy) at the next append. Hashes travel as hex text, the same on
 * PostgreSQL and PGlite.
 */
import { appendedNodes, leafHash, nodeKey, nodesOfRange, type NodeId } from '../domain/merkle.js';
import { executeBound, dateOf, numberOf } from './sql.js';
import type { Em } from './orm.js';

type Row = Record<string, unknown>;

/** Entries a catch-up reads at once (32 bytes of hash each). */
const CATCH_UP_BATCH = 5_000;

/** The number of leaves the tree holds: one more than its last level-0 node's index (an index lookup). */
export async function treeSize(em: Em): Promise<number> {
  const [row] = await executeBound<Row>(em, 'select coalesce(max(idx) + 1, 0) as size from ledger_tree_nodes where level = 0', []);
  return numberOf(row!.size);
}

/** The stored nodes named, keyed "level/index"; a node not stored is absent. */
export async function readTreeNodes(em: Em, nodes: readonly NodeId[]): Promise<Map<string, Buffer>> {
  const found = new Map<string, Buffer>();
  if (nodes.length === 0) return found;
  const rows = await executeBound<Row>(
    em,
    `select n.level, n.idx, encode(n.hash, 'hex') as hash
       from jsonb_to_recordset($1::jsonb) as w (level smallint, idx bigint)
       join ledger_tree_nodes n on n.level = w.level and n.idx = w.idx`,
    [JSON.stringify(nodes.map((node) => ({ level: node.level, idx: node.index })))],
  );
  for (const row of rows) found.set(nodeKey({ level: numberOf(row.level), index: numberOf(row.idx) }), Buffer.from(String(row.hash), 'hex'));
  return found;
}

/** Inserts nodes computed by appendedNodes. */
async function insertNodes(em: Em, nodes: readonly (NodeId & { hash: Buffer })[]): Promise<void> {
  await executeBound(
    em,
    `insert into ledger_tree_nodes (level, idx, hash)
     select level, idx, decode(hash, 'hex') from jsonb_to_recordset($1::jsonb) as v (level smallint, idx bigint, hash text)`,
    [JSON.stringify(nodes.map((node) => ({ level: node.level, idx: node.index, hash: node.hash.toString('hex') })))],
  );
}

/**
 * Extends the tree to the first `chainSize` entries, in the caller's transaction, which holds the
 * ledger's write lock (entries are inserted before the tree is extended over them). `appended`,
 * the entries just inserted (consecutive, ending at chainSize), are taken as given: when the tree
 * covers every entry before them, which one read of the frontier shows, the append costs that
 * read and one insert. Otherwise the missing entries are read from the chain first.
 */
export async function extendTree(em: Em, chainSize: number, appended: readonly { seq: number; hash: string }[] = []): Promise<void> {
  if (appended.length > 0 && appended.at(-1)!.seq === chainSize) {
    const before = appended[0]!.seq - 1;
    const frontier = nodesOfRange({ start: 0, end: before });
    const next = { level: 0, index: before };
    const read = await readTreeNodes(em, [...frontier, next]);
    // Level-0 nodes are written in order: the frontier present and leaf `before` absent means the tree has exactly `before` leaves.
    if (frontier.every((node) => read.has(nodeKey(node))) && !read.has(nodeKey(next))) {
      read.delete(nodeKey(next));
      await insertNodes(em, appendedNodes(before, read, appended.map((entry) => leafHash(entry.hash))));
      return;
    }
  }
  let size = await treeSize(em);
  while (size < chainSize) {
    const upTo = Math.min(chainSize, size + CATCH_UP_BATCH);
    const hashes: string[] = [];
    const stored = new Map(
      (
        await executeBound<Row>(em, 'select seq, hash from ledger_entries where seq > $1 and seq <= $2 order by seq', [size, upTo])
      ).map((row) => [numberOf(row.seq), String(row.hash)]),
    );
    for (let seq = size + 1; seq <= upTo; seq++) {
      const hash = stored.get(seq);
      if (hash === undefined) throw new Error(`ledger entry ${seq} is missing: the tree cannot cover it`);
      hashes.push(hash);
    }
    const frontier = await readTreeNodes(em, nodesOfRange({ start: 0, end: size }));
    await insertNodes(em, appendedNodes(size, frontier, hashes.map(leafHash)));
    size = upTo;
  }
}

export interface StoredCheckpoint {
  treeSize: number;
  root: Buffer;
  /** The signed note, the log's signature only. */
  note: string;
  signedAt: Date;
  /** The cosignature lines received for it, by witness (its verifier key). */
  cosignatures: { witness: string; line: string }[];
}

async function withCosignatures(em: Em, rows: Row[]): Promise<StoredCheckpoint[]> {
  if (rows.length === 0) return [];
  const sizes = rows.map((row) => numberOf(row.tree_size));
  const lines = await executeBound<Row>(
    em,
    `select tree_size, witness, line from ledger_cosignatures
      where tree_size in (select value::bigint from jsonb_array_elements_text($1::jsonb)) order by tree_size, witness`,
    [JSON.stringify(sizes)],
  );
  return rows.map((row) => {
    const size = numberOf(row.tree_size);
    return {
      treeSize: size,
      root: Buffer.from(String(row.root_hash), 'hex'),
      note: String(row.note),
      signedAt: dateOf(row.signed_at),
      cosignatures: lines.filter((line) => numberOf(line.tree_size) === size).map((line) => ({ witness: String(line.witness), line: String(line.line) })),
    };
  });
}

const CHECKPOINT_COLUMNS = `tree_size, encode(root_hash, 'hex') as root_hash, note, signed_at`;

/** The latest signed checkpoint; null before the first. */
export async function latestCheckpoint(em: Em): Promise<StoredCheckpoint | null> {
  const rows = await executeBound<Row>(em, `select ${CHECKPOINT_COLUMNS} from ledger_checkpoints order by tree_size desc limit 1`, []);
  return (await withCosignatures(em, rows))[0] ?? null;
}

/** For each of `times`, the latest checkpoint signed before it (null when none was). */
export async function checkpointsSignedBefore(em: Em, times: readonly Date[]): Promise<(StoredCheckpoint | null)[]> {
  if (times.length === 0) return [];
  const rows = await executeBound<Row>(
    em,
    `select t.ord, c.tree_size, encode(c.root_hash, 'hex') as root_hash, c.note, c.signed_at
       from jsonb_array_elements_text($1::jsonb) with ordinality as t (value, ord)
       cross join lateral (select * from ledger_checkpoints where signed_at < t.value::timestamptz order by signed_at desc, tree_size desc limit 1) c`,
    [JSON.stringify(times.map((time) => time.toISOString()))],
  );
  const checkpoints = await withCosignatures(em, rows);
  const byOrdinal = new Map(rows.map((row, i) => [numberOf(row.ord), checkpoints[i]!]));
  return times.map((_time, i) => byOrdinal.get(i + 1) ?? null);
}

/** Records a signed checkpoint; false when one of that size exists already. */
export async function insertCheckpoint(em: Em, checkpoint: Omit<StoredCheckpoint, 'cosignatures'>): Promise<boolean> {
  const rows = await executeBound<Row>(
    em,
    `insert into ledger_checkpoints (tree_size, root_hash, note, signed_at) values ($1, decode($2, 'hex'), $3, $4)
     on conflict (tree_size) do nothing returning tree_size`,
    [checkpoint.treeSize, checkpoint.root.toString('hex'), checkpoint.note, checkpoint.signedAt],
  );
  return rows.length === 1;
}

/** Replaces the signed note of the checkpoint of `size` (the same body signed again by a new key). */
export async function replaceCheckpointNote(em: Em, size: number, note: string): Promise<void> {
  await executeBound(em, 'update ledger_checkpoints set note = $2 where tree_size = $1', [size, note]);
}

/** Keeps a witness's (named by its verifier key) cosignature line of the checkpoint of `size` (the first one received). */
export async function insertCosignature(em: Em, size: number, witness: string, line: string, receivedAt: Date): Promise<void> {
  await executeBound(
    em,
    `insert into ledger_cosignatures (tree_size, witness, line, received_at) values ($1, $2, $3, $4) on conflict (tree_size, witness) do nothing`,
    [size, witness, line, receivedAt],
  );
}

/** The largest size the witness (its verifier key) cosigned for us; 0 when none. */
export async function lastCosignedSize(em: Em, witness: string): Promise<number> {
  const [row] = await executeBound<Row>(em, 'select coalesce(max(tree_size), 0) as size from ledger_cosignatures where witness = $1', [witness]);
  return numberOf(row!.size);
}
