import { Migration } from '@mikro-orm/migrations';

/**
 * The public ledger (docs/API.md, "Verifying the record"): ledger_entries is an append-only hash
 * chain, one row per change that made a pick visible, hid, republished, rescheduled or settled
 * it; `seq` is taken under the outbox's write lock (no sequence: a rolled-back append leaves no
 * gap). The committed pick and its salt are kept to be revealed after kickoff. Picks carry their
 * latest entry's seq and hash (what customers' own logs witness) and, once the engine settles
 * them, the final score. Visible picks older than the ledger are appended at the next start
 * (LedgerService.appendMissing), in published_at order.
 */
export class Migration20261204000000Ledger extends Migration {
  override async up(): Promise<void> {
    this.addSql(`
      create table ledger_entries (
        seq integer primary key check (seq >= 1),
        type text not null check (type in ('pick.published', 'pick.held', 'pick.republished', 'pick.rescheduled', 'pick.settled')),
        at timestamptz not null,
        pick_id uuid not null references picks (id),
        reveal_after timestamptz not null,
        commitment text not null check (commitment ~ '^[0-9a-f]{64}$'),
        prev_hash text not null check (prev_hash ~ '^[0-9a-f]{64}$'),
        hash text not null unique check (hash ~ '^[0-9a-f]{64}$'),
        pick jsonb not null,
        salt text not null check (salt ~ '^[0-9a-f]{64}$')
      )`);
    this.addSql('create index ledger_entries_pick_idx on ledger_entries (pick_id, seq)');
    this.addSql('alter table picks add column final_home_score smallint, add column final_away_score smallint, add column ledger_seq integer, add column ledger_hash text');
  }

  override async down(): Promise<void> {
    this.addSql('alter table picks drop column final_home_score, drop column final_away_score, drop column ledger_seq, drop column ledger_hash');
    this.addSql('drop table ledger_entries');
  }
}
