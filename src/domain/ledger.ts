/**
 * The public ledger (docs/API.md, "Verifying the record"): an append-only hash chain of every
 * change that makes a pick visible, hides, reschedules or settles it. An entry commits to the
 * pick as the REST API shows it, salted, so the chain can be public before kickoff without
 * giving paid picks away; after kickoff the pick and its salt are revealed and anyone can check
 * the commitment. Hashes are SHA-256 over RFC 8785 canonical JSON (JCS). Pure.
 */
import { createHash } from 'node:crypto';
import canonicalize from 'canonicalize';
import type { V1PickJson } from './pick-shape.js';

export const LEDGER_ENTRY_TYPES = ['pick.published', 'pick.held', 'pick.republished', 'pick.rescheduled', 'pick.settled'] as const;
export type LedgerEntryType = (typeof LEDGER_ENTRY_TYPES)[number];

/** prev_hash of the first entry. */
export const GENESIS_HASH = '0'.repeat(64);

/** The fields of the REST pick the ledger leaves out of a commitment: they point at the ledger itself. */
export const LEDGER_WITNESS_FIELDS = ['ledger_seq', 'ledger_hash'] as const;

/**
 * The fields of the REST pick that watch the market after publication (docs/API.md,
 * "Availability"): they change at every odds poll without a ledger entry, so no commitment
 * covers them, and commitments made before they existed still verify.
 */
export const MARKET_WATCH_FIELDS = ['availability', 'best_odds_since_published'] as const;

/** The pick as committed: the REST pick without the ledger's own fields and the market watch. */
export type CommittedPick = Omit<V1PickJson, (typeof LEDGER_WITNESS_FIELDS)[number] | (typeof MARKET_WATCH_FIELDS)[number]>;

/** What an entry shows in clear, and what its hash covers: exactly these seven fields. */
export interface LedgerEntryClear {
  seq: number;
  type: LedgerEntryType;
  /** Append time, ISO 8601 with milliseconds. */
  at: string;
  pick_id: string;
  /** The pick's kickoff when the entry was appended: from then on the entry is revealed. */
  reveal_after: string;
  commitment: string;
  prev_hash: string;
}

export interface LedgerEntry extends LedgerEntryClear {
  hash: string;
}

/** RFC 8785 canonical JSON of a JSON value. */
export function canonicalJson(value: unknown): string {
  const text = canonicalize(value);
  if (text === undefined) throw new TypeError('a ledger value must be JSON');
  return text;
}

export function sha256Hex(text: string): string {
  return createHash('sha256').update(text, 'utf8').digest('hex');
}

/** The REST pick JSON without the ledger's fields and the market watch. */
export function committedPick(pick: V1PickJson): CommittedPick {
  const committed: Record<string, unknown> = { ...pick };
  for (const field of [...LEDGER_WITNESS_FIELDS, ...MARKET_WATCH_FIELDS]) delete committed[field];
  return committed as CommittedPick;
}

/** hex SHA-256 of JCS({ pick, salt }). */
export function commitmentOf(pick: CommittedPick, salt: string): string {
  return sha256Hex(canonicalJson({ pick, salt }));
}

/** hex SHA-256 of JCS of the seven clear fields. */
export function entryHash(clear: LedgerEntryClear): string {
  const { seq, type, at, pick_id, reveal_after, commitment, prev_hash } = clear;
  return sha256Hex(canonicalJson({ seq, type, at, pick_id, reveal_after, commitment, prev_hash }));
}

/**
 * The next entry of a chain whose last entry is `previous` (null for the first). Its `at` is
 * never before the previous entry's: a change whose clock was read before another's may take
 * the lock after it (or run on an instance whose clock is behind), and `at` must not decrease.
 */
export function nextEntry(
  previous: { seq: number; hash: string; at: string } | null,
  fields: { type: LedgerEntryType; at: Date; pickId: string; revealAfter: Date; pick: CommittedPick; salt: string },
): LedgerEntry {
  const requested = fields.at.toISOString();
  const clear: LedgerEntryClear = {
    seq: (previous?.seq ?? 0) + 1,
    type: fields.type,
    // ISO 8601 strings of one form compare as their times do.
    at: previous !== null && previous.at > requested ? previous.at : requested,
    pick_id: fields.pickId,
    reveal_after: fields.revealAfter.toISOString(),
    commitment: commitmentOf(fields.pick, fields.salt),
    prev_hash: previous?.hash ?? GENESIS_HASH,
  };
  return { ...clear, hash: entryHash(clear) };
}

/** reveal_after is published on a quarter-hour grid (UTC). */
export const REVEAL_WINDOW_MS = 15 * 60_000;

/**
 * An entry's reveal_after for a pick kicking off at `kickoff`: the kickoff rounded up to the
 * quarter hour (UTC), never before it. Before kickoff an entry names only this time, so it does
 * not point at its match: it could be any match starting in that quarter hour.
 */
export function revealAfterOf(kickoff: Date): Date {
  return new Date(Math.ceil(kickoff.getTime() / REVEAL_WINDOW_MS) * REVEAL_WINDOW_MS);
}

/**
 * When an entry's pick and salt are shown: at its reveal_after, or at the pick's current kickoff
 * when that is later (a match moved later keeps its pick secret until the new kickoff; the
 * pick.rescheduled entry names it). The one statement of the reveal rule: isRevealed, the ledger's
 * pages and the time their kept bodies go stale (adapters/public/ledger.ts) all follow it.
 */
export function revealTime(revealAfter: Date, currentKickoff: Date): Date {
  return revealAfter.getTime() >= currentKickoff.getTime() ? revealAfter : currentKickoff;
}

/** Whether an entry's pick and salt may be shown at `now`: from its revealTime on. */
export function isRevealed(revealAfter: Date, currentKickoff: Date, now: Date): boolean {
  return now.getTime() >= revealTime(revealAfter, currentKickoff).getTime();
}

/** The midnights (00:00 UTC) after `first` up to `now`, oldest first: the checkpoints' times. */
export function checkpointTimes(first: Date, now: Date): Date[] {
  const times: Date[] = [];
  const day = new Date(Date.UTC(first.getUTCFullYear(), first.getUTCMonth(), first.getUTCDate() + 1));
  for (let at = day; at.getTime() <= now.getTime(); at = new Date(at.getTime() + 86_400_000)) times.push(at);
  return times;
}
