/**
 * The public ledger's use cases (docs/API.md, "Verifying the record"): entries appended in the
 * transaction of the change they record (PickService, the value engine), the public pages with
 * their reveal rule, the head and the daily checkpoints.
 */
import { randomBytes } from 'node:crypto';
import type { Clock } from '../domain/clock.js';
import { InvalidParameterError } from '../domain/errors.js';
import { validateMarket } from '../domain/market.js';
import { isSportSlug, SPORT_SLUGS } from '../domain/sports.js';
import { addDays } from '../domain/time.js';
import { checkpointTimes, committedPick, isRevealed, revealAfterOf, revealTime, type CommittedPick, type LedgerEntry, type LedgerEntryType } from '../domain/ledger.js';
import { toPickSnapshot, v1PickJson, type PickValues } from '../domain/pick-shape.js';
import type { PickEntity } from '../persistence/entities/pick.js';
import { findPicksForUpdate } from '../persistence/picks-repository.js';
import {
  appendLedgerEntries,
  ledgerEntriesAfter,
  ledgerHead,
  ledgerHeadsAt,
  ledgerStart,
  revealedPickEntries,
  unledgeredPickIds,
  type LedgerHeadRow,
  type StoredLedgerEntry,
} from '../persistence/ledger-repository.js';
import { checkpointsSignedBefore } from '../persistence/ledger-tree-repository.js';
import type { Em, Orm } from '../persistence/orm.js';
import { servedNote } from './ledger-log.js';

/** An entry as the public ledger serves it: the committed pick and its salt once revealed, else null. */
export interface PublicLedgerEntry extends LedgerEntry {
  pick: CommittedPick | null;
  salt: string | null;
}

export interface LedgerPage {
  entries: PublicLedgerEntry[];
  /** The last entry's seq when more may follow (ask again with after=next_after), else null. */
  nextAfter: number | null;
  /**
   * The earliest revealTime of the entries still hidden (null: every entry is revealed): until
   * then the page changes only with appends (docs/DECISIONS.md, "Ledger cache").
   */
  nextRevealAt: Date | null;
}

/** A pick kicked off, with its revealed entries (the public record page's list). */
export interface RevealedLedgerPick {
  pickId: string;
  /** Its last entry (revealed or not) is pick.held: withdrawn before kickoff, as the verifier counts it. */
  withdrawn: boolean;
  /** Its revealed entries in seq order, each with its pick and salt. */
  entries: PublicLedgerEntry[];
}

/** Visible picks older than the ledger are appended this many per transaction at start. */
const APPEND_MISSING_BATCH = 500;

/**
 * Appends the entries recording a change of each of `picks` (in that order) in `em`'s transaction
 * and stamps each pick with its entry (ledgerSeq, ledgerHash), so the change's outbox event,
 * appended after, carries both.
 */
export async function recordLedgerEntries(em: Em, type: LedgerEntryType, picks: readonly (PickEntity & PickValues)[], at: Date): Promise<void> {
  const entries = await appendLedgerEntries(
    em,
    picks.map((pick) => ({
      type,
      at,
      pickId: pick.id,
      revealAfter: revealAfterOf(pick.kickoffAt),
      pick: committedPick(v1PickJson(toPickSnapshot(pick))),
      salt: randomBytes(32).toString('hex'),
    })),
  );
  entries.forEach((entry, i) => {
    picks[i]!.ledgerSeq = entry.seq;
    picks[i]!.ledgerHash = entry.hash;
  });
}

export class LedgerService {
  constructor(
    private readonly orm: Orm,
    private readonly clock: Clock,
  ) {}

  /** Entries after `after` in seq order; a pick and its salt only once revealed (revealTime). */
  async page(after: number, limit: number): Promise<LedgerPage> {
    const now = this.clock.now().getTime();
    const stored = await ledgerEntriesAfter(this.orm.em.fork(), after, limit);
    let nextRevealAt: Date | null = null;
    const entries = stored.map(({ pick, salt, currentKickoff, ...entry }) => {
      const revealsAt = revealTime(new Date(entry.reveal_after), currentKickoff);
      if (now >= revealsAt.getTime()) return { ...entry, pick, salt };
      if (nextRevealAt === null || revealsAt.getTime() < nextRevealAt.getTime()) nextRevealAt = revealsAt;
      return { ...entry, pick: null, salt: null };
    });
    return { entries, nextAfter: entries.length === limit ? entries.at(-1)!.seq : null, nextRevealAt };
  }

  /**
   * The picks kicked off in the last daysBack days (optionally one sport, one market) that have
   * entries, newest kickoff first, each with its revealed entries: what the ledger shows of them
   * now, and nothing more (a pick before its kickoff is not listed). daysBack and limit arrive
   * valid (the GraphQL arguments' bounds).
   */
  async revealedPicks(query: { sport?: string | null; market?: string | null; daysBack: number; limit: number }): Promise<RevealedLedgerPick[]> {
    if (query.sport != null && !isSportSlug(query.sport)) {
      throw new InvalidParameterError('sport', `sport must be one of: ${SPORT_SLUGS.join(', ')}`);
    }
    const market = query.market == null ? null : validateMarket(query.market);
    const now = this.clock.now();
    const stored = await revealedPickEntries(this.orm.em.fork(), { now, since: addDays(now, -query.daysBack), sport: query.sport ?? null, market, limit: query.limit });
    const byPick = new Map<string, StoredLedgerEntry[]>();
    for (const entry of stored) {
      const entries = byPick.get(entry.pick_id);
      if (entries) entries.push(entry);
      else byPick.set(entry.pick_id, [entry]);
    }
    const picks: RevealedLedgerPick[] = [];
    for (const [pickId, entries] of byPick) {
      const revealed = entries
        .filter((entry) => isRevealed(new Date(entry.reveal_after), entry.currentKickoff, now))
        .map(({ currentKickoff: _kickoff, ...entry }) => entry);
      if (revealed.length > 0) picks.push({ pickId, withdrawn: entries.at(-1)!.type === 'pick.held', entries: revealed });
    }
    return picks;
  }

  async head(): Promise<LedgerHeadRow | null> {
    return ledgerHead(this.orm.em.fork());
  }

  /**
   * The head at every 00:00 UTC since the first entry (none before the first midnight), each
   * with the latest checkpoint signed before that midnight.
   */
  async checkpoints(): Promise<(LedgerHeadRow & { checkpoint: Date; treeSize: number | null; note: string | null })[]> {
    const em = this.orm.em.fork();
    const start = await ledgerStart(em);
    if (start === null) return [];
    const heads = await ledgerHeadsAt(em, checkpointTimes(start, this.clock.now()));
    // With each midnight's head, the last checkpoint signed before that midnight.
    const signed = await checkpointsSignedBefore(em, heads.map((head) => head.checkpoint));
    return heads.map((head, i) => {
      const checkpoint = signed[i];
      return { ...head, treeSize: checkpoint?.treeSize ?? null, note: checkpoint ? servedNote(checkpoint).note : null };
    });
  }

  /**
   * Visible picks without an entry (published before the ledger existed) are appended as
   * pick.published, in published_at order, at the current time: after their kickoff for past
   * picks, which is how a verifier tells them apart as imported. Safe to run on every start and
   * on several instances at once (the pick rows are locked and re-checked).
   */
  async appendMissing(): Promise<number> {
    let appended = 0;
    for (;;) {
      const ids = await unledgeredPickIds(this.orm.em.fork(), APPEND_MISSING_BATCH);
      if (ids.length === 0) return appended;
      appended += await this.orm.em.fork().transactional(async (em) => {
        const picks = (await findPicksForUpdate(em, ids)).filter((pick) => pick.ledgerSeq == null && (pick.status === 'published' || pick.status === 'settled'));
        await recordLedgerEntries(em, 'pick.published', picks, this.clock.now());
        return picks.length;
      });
    }
  }
}
