/**
 * The public ledger's table (docs/API.md, "Verifying the record"). Appends run in the caller's
 * transaction under the outbox's write lock, so entries are numbered in commit order with no gap
 * (a rolled-back append takes no number) and one chain holds across instances.
 */
import { nextEntry, type CommittedPick, type LedgerEntry, type LedgerEntryType } from '../domain/ledger.js';
import { VISIBLE_STATUSES, type PickStatus } from '../domain/pick.js';
import { extendTree } from './ledger-tree-repository.js';
import { OUTBOX_WRITE_LOCK } from './outbox-repository.js';
import { dateOf, executeBound, jsonOf, numberOf, statusIn } from './sql.js';
import type { Em } from './orm.js';

type Row = Record<string, unknown>;

/** What one new entry records; the chain's numbering and hashes are added by appendLedgerEntries. */
export interface NewLedgerEntry {
  type: LedgerEntryType;
  at: Date;
  pickId: string;
  revealAfter: Date;
  pick: CommittedPick;
  salt: string;
}

/** Takes the ledger's write lock (the outbox's) for the caller's transaction: appends, the tree and checkpoints are serialized by it. */
export async function lockLedger(em: Em): Promise<void> {
  await em.execute('select pg_advisory_xact_lock(?)', [OUTBOX_WRITE_LOCK]);
}

/**
 * Appends entries after the chain's last, in order, in the caller's transaction (one lock, one
 * read of the last entry, one insert whatever the count); returns them.
 */
export async function appendLedgerEntries(em: Em, fields: readonly NewLedgerEntry[]): Promise<LedgerEntry[]> {
  if (fields.length === 0) return [];
  await lockLedger(em);
  const [last] = await executeBound<Row>(em, 'select seq, hash, at from ledger_entries order by seq desc limit 1', []);
  let previous = last ? { seq: numberOf(last.seq), hash: String(last.hash), at: dateOf(last.at).toISOString() } : null;
  const entries = fields.map((entryFields) => (previous = nextEntry(previous, entryFields)));
  await executeBound(
    em,
    `insert into ledger_entries (seq, type, at, pick_id, reveal_after, commitment, prev_hash, hash, pick, salt)
     select seq, type, at, pick_id, reveal_after, commitment, prev_hash, hash, pick, salt
       from jsonb_to_recordset($1::jsonb) as v (seq integer, type text, at timestamptz, pick_id uuid, reveal_after timestamptz,
                                                commitment text, prev_hash text, hash text, pick jsonb, salt text)`,
    [JSON.stringify(entries.map((entry, i) => ({ ...entry, pick: fields[i]!.pick, salt: fields[i]!.salt })))],
  );
  await extendTree(em, entries.at(-1)!.seq, entries);
  return entries;
}

/** A stored entry with what its reveal needs: the committed pick, the salt and the pick's current kickoff. */
export interface StoredLedgerEntry extends LedgerEntry {
  pick: CommittedPick;
  salt: string;
  currentKickoff: Date;
}

const ENTRY_COLUMNS = `e.seq, e.type, e.at, e.pick_id, e.reveal_after, e.commitment, e.prev_hash, e.hash, e.pick, e.salt, p.kickoff_at as current_kickoff`;

function entryFromRow(row: Row): StoredLedgerEntry {
  return {
    seq: numberOf(row.seq),
    type: String(row.type) as LedgerEntryType,
    at: dateOf(row.at).toISOString(),
    pick_id: String(row.pick_id),
    reveal_after: dateOf(row.reveal_after).toISOString(),
    commitment: String(row.commitment),
    prev_hash: String(row.prev_hash),
    hash: String(row.hash),
    pick: jsonOf<CommittedPick>(row.pick),
    salt: String(row.salt),
    currentKickoff: dateOf(row.current_kickoff),
  };
}

/** Entries after `after`, in seq order, at most `limit`. */
export async function ledgerEntriesAfter(em: Em, after: number, limit: number): Promise<StoredLedgerEntry[]> {
  const rows = await executeBound<Row>(
    em,
    `select ${ENTRY_COLUMNS} from ledger_entries e join picks p on p.id = e.pick_id where e.seq > $1 order by e.seq limit $2`,
    [after, limit],
  );
  return rows.map(entryFromRow);
}

/** Every entry of a pick, in seq order. */
export async function ledgerEntriesOfPick(em: Em, pickId: string): Promise<StoredLedgerEntry[]> {
  const rows = await executeBound<Row>(em, `select ${ENTRY_COLUMNS} from ledger_entries e join picks p on p.id = e.pick_id where e.pick_id = $1 order by e.seq`, [pickId]);
  return rows.map(entryFromRow);
}

/** Which revealed picks revealedPickEntries reads: kicked off between `since` and `now`, optionally one sport and one market. */
export interface RevealedPicksQuery {
  now: Date;
  since: Date;
  sport: string | null;
  market: string | null;
  limit: number;
}

/**
 * Every entry of the `limit` picks with the latest kickoffs at or before `now` (and from `since`)
 * that have entries, newest kickoff first (then id), each pick's entries in seq order. A pick
 * with entries is visible (published, settled) or held again (admin_review; a held pick is never
 * discarded): each is read in kickoff order (the visible ones along picks_visible_kickoff_idx,
 * the review queue is short), so a page costs about `limit` rows whatever the size of the history.
 */
export async function revealedPickEntries(em: Em, query: RevealedPicksQuery): Promise<StoredLedgerEntry[]> {
  const candidates = (statuses: readonly PickStatus[]) => `(select id, kickoff_at from picks
      where ${statusIn(statuses)} and ledger_seq is not null and kickoff_at <= $1 and kickoff_at >= $2
        and ($3::text is null or sport = $3) and ($4::text is null or market = $4)
      order by kickoff_at desc, id desc limit $5)`;
  const rows = await executeBound<Row>(
    em,
    `with chosen as (
       ${candidates(VISIBLE_STATUSES)}
       union all
       ${candidates(['admin_review'])}
       order by kickoff_at desc, id desc limit $5
     )
     select ${ENTRY_COLUMNS} from chosen c join ledger_entries e on e.pick_id = c.id join picks p on p.id = c.id
      order by c.kickoff_at desc, c.id desc, e.seq`,
    [query.now, query.since, query.sport, query.market, query.limit],
  );
  return rows.map(entryFromRow);
}

export interface LedgerHeadRow {
  seq: number;
  hash: string;
  at: Date;
}

/** The chain's last entry; null when there is none. */
export async function ledgerHead(em: Em): Promise<LedgerHeadRow | null> {
  const [row] = await executeBound<Row>(em, 'select seq, hash, at from ledger_entries order by seq desc limit 1', []);
  return row ? { seq: numberOf(row.seq), hash: String(row.hash), at: dateOf(row.at) } : null;
}

/** The head as it stood at each of `times` (the last entry appended before it); times before the first entry are left out. */
export async function ledgerHeadsAt(em: Em, times: readonly Date[]): Promise<(LedgerHeadRow & { checkpoint: Date })[]> {
  if (times.length === 0) return [];
  const rows = await executeBound<Row>(
    em,
    `select t.at as checkpoint, h.seq, h.hash, h.at
       from jsonb_array_elements_text($1::jsonb) as c (value) cross join lateral (select c.value::timestamptz as at) t
       cross join lateral (select seq, hash, at from ledger_entries where at < t.at order by seq desc limit 1) h
      order by t.at`,
    [JSON.stringify(times.map((time) => time.toISOString()))],
  );
  return rows.map((row) => ({ checkpoint: dateOf(row.checkpoint), seq: numberOf(row.seq), hash: String(row.hash), at: dateOf(row.at) }));
}

/** The first entry's time; null for an empty ledger. */
export async function ledgerStart(em: Em): Promise<Date | null> {
  const [row] = await executeBound<Row>(em, 'select at from ledger_entries where seq = 1', []);
  return row ? dateOf(row.at) : null;
}

/** Visible picks without a ledger entry (older than the ledger), oldest publication first. */
export async function unledgeredPickIds(em: Em, limit: number): Promise<string[]> {
  const rows = await executeBound<Row>(
    em,
    `select id from picks where status in ('published', 'settled') and ledger_seq is null order by published_at, created_at, id limit $1`,
    [limit],
  );
  return rows.map((row) => String(row.id));
}
