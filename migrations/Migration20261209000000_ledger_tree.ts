import { Migration } from '@mikro-orm/migrations';

/**
 * The ledger as a transparency log (docs/API.md, "Verifying the record"): the RFC 9162 Merkle
 * tree over the entries, stored as its complete subtrees (node (level, idx) hashes the leaves
 * [idx * 2^level, (idx + 1) * 2^level), written once when its last leaf is appended: about two
 * rows an entry, and any proof reads O(log n) of them); the signed checkpoints (C2SP
 * tlog-checkpoint notes, log signature only) and the witnesses' cosignatures of them. The tree of
 * the entries appended before this migration is built by the next append, or at start.
 */
export class Migration20261209000000LedgerTree extends Migration {
  override async up(): Promise<void> {
    this.addSql(`
      create table ledger_tree_nodes (
        level smallint not null check (level >= 0 and level < 63),
        idx bigint not null check (idx >= 0),
        hash bytea not null check (length(hash) = 32),
        primary key (level, idx)
      )`);
    this.addSql(`
      create table ledger_checkpoints (
        tree_size bigint primary key check (tree_size > 0),
        root_hash bytea not null check (length(root_hash) = 32),
        note text not null,
        signed_at timestamptz not null
      )`);
    this.addSql('create index ledger_checkpoints_signed_at_idx on ledger_checkpoints (signed_at)');
    this.addSql(`
      create table ledger_cosignatures (
        tree_size bigint not null references ledger_checkpoints (tree_size),
        witness text not null, -- the witness's verifier key: a key changed is another witness
        line text not null,
        received_at timestamptz not null,
        primary key (tree_size, witness)
      )`);
  }

  override async down(): Promise<void> {
    this.addSql('drop table ledger_cosignatures');
    this.addSql('drop table ledger_checkpoints');
    this.addSql('drop table ledger_tree_nodes');
  }
}
