import { DAYS_BACK, LEDGER_AFTER, LEDGER_PAGE, REVEALED_PICKS_PAGE } from '../../domain/bounds.js';
import { canonicalJson } from '../../domain/ledger.js';
import { boundedInt } from '../argument-guard.js';
import { builder } from '../builder.js';
import { ITEMS_OF_PAGE, pageComplexity } from '../limits.js';
import type { LedgerPage, PublicLedgerEntry, RevealedLedgerPick } from '../../services/ledger.js';

/**
 * Entries of one pick counted for the cost: published, settled and a reschedule, or a hold and a
 * republication. More are possible but rare; the list is never cut.
 */
const ENTRIES_PER_PICK = 4;

const LedgerEntryRef = builder.objectRef<PublicLedgerEntry>('LedgerEntry').implement({
  description: 'One entry of the public ledger (docs/API.md, "Verifying the record"). Anonymous.',
  fields: (t) => ({
    seq: t.exposeInt('seq', { description: '1, 2, 3, ... without gaps.' }),
    type: t.exposeString('type', { description: 'pick.published, pick.held, pick.republished, pick.rescheduled or pick.settled.' }),
    at: t.exposeString('at', { description: 'Append time, ISO 8601 with milliseconds, exactly as hashed.' }),
    pickId: t.exposeString('pick_id'),
    revealAfter: t.exposeString('reveal_after', { description: "The pick's kickoff when the entry was appended, rounded up to the quarter hour (UTC), exactly as hashed." }),
    commitment: t.exposeString('commitment', { description: 'hex SHA-256 of the JCS of {pick, salt}.' }),
    prevHash: t.exposeString('prev_hash'),
    hash: t.exposeString('hash', { description: 'hex SHA-256 of the JCS of the seven fields above.' }),
    pick: t.string({
      nullable: true,
      description: 'The committed pick as canonical JSON (the REST Pick without ledger_seq and ledger_hash); null until revealed.',
      resolve: (entry) => (entry.pick === null ? null : canonicalJson(entry.pick)),
    }),
    salt: t.exposeString('salt', { nullable: true, description: '32 random bytes, hex; null until revealed.' }),
  }),
});

const LedgerPageRef = builder.objectRef<LedgerPage>('LedgerPage').implement({
  fields: (t) => ({
    // The page size is counted on `ledger` itself.
    entries: t.field({ type: [LedgerEntryRef], complexity: ITEMS_OF_PAGE, resolve: (page) => page.entries }),
    nextAfter: t.exposeInt('nextAfter', { nullable: true, description: 'Ask again with after = this; null at the end of the chain.' }),
    nextRevealAt: t.field({
      type: 'DateTime',
      nullable: true,
      description:
        "When the next of this page's hidden entries is revealed (its revealAfter, or its pick's current kickoff when later); null when every entry is revealed. " +
        'Until then only an append can change the page: a cache may keep it that long.',
      resolve: (page) => page.nextRevealAt,
    }),
  }),
});

const RevealedLedgerPickRef = builder.objectRef<RevealedLedgerPick>('RevealedLedgerPick').implement({
  description: 'A pick whose kickoff has passed, with its revealed ledger entries. Anonymous.',
  fields: (t) => ({
    pickId: t.exposeString('pickId'),
    withdrawn: t.exposeBoolean('withdrawn', { description: 'Its last entry is pick.held: withdrawn before kickoff (the verifier lists it as withdrawn).' }),
    entries: t.field({
      type: [LedgerEntryRef],
      description: 'Its revealed entries in seq order, each with its pick and salt.',
      complexity: { field: 1, multiplier: ENTRIES_PER_PICK },
      resolve: (pick) => pick.entries,
    }),
  }),
});

const LedgerHeadRef = builder.objectRef<{ seq: number; hash: string; at: Date; checkpoint?: Date }>('LedgerHead').implement({
  fields: (t) => ({
    seq: t.exposeInt('seq'),
    hash: t.exposeString('hash'),
    at: t.field({ type: 'DateTime', resolve: (head) => head.at }),
    checkpoint: t.field({ type: 'DateTime', nullable: true, description: 'For a checkpoint: the midnight (00:00 UTC) it is the head at.', resolve: (head) => head.checkpoint ?? null }),
  }),
});

builder.queryFields((t) => ({
  ledger: t.field({
    type: LedgerPageRef,
    description: 'The public ledger in seq order, revealed entries with their pick and salt. Anonymous.',
    complexity: (args) => pageComplexity(args.limit, LEDGER_PAGE),
    args: {
      after: boundedInt(t.arg, LEDGER_AFTER, 'Entries after this seq (0: from the start),'),
      limit: boundedInt(t.arg, LEDGER_PAGE, 'Entries per page,'),
    },
    resolve: (_root, args, context) => context.services.ledger.page(args.after ?? LEDGER_AFTER.default, args.limit ?? LEDGER_PAGE.default),
  }),
  revealedLedgerPicks: t.field({
    type: [RevealedLedgerPickRef],
    description:
      'The picks kicked off in the last daysBack days that are on the ledger (withdrawn ones included), newest kickoff first, with their revealed entries. ' +
      'A pick before its kickoff is never listed. Anonymous.',
    complexity: (args) => pageComplexity(args.limit, REVEALED_PICKS_PAGE),
    args: {
      sport: t.arg.string(),
      market: t.arg.string({ description: 'One market: h2h, spreads or totals.' }),
      daysBack: boundedInt(t.arg, DAYS_BACK, 'Kickoffs in the last this many days,'),
      limit: boundedInt(t.arg, REVEALED_PICKS_PAGE, 'Picks,'),
    },
    resolve: (_root, args, context) =>
      context.services.ledger.revealedPicks({
        sport: args.sport,
        market: args.market,
        daysBack: args.daysBack ?? DAYS_BACK.default,
        limit: args.limit ?? REVEALED_PICKS_PAGE.default,
      }),
  }),
  ledgerHead: t.field({
    type: LedgerHeadRef,
    nullable: true,
    description: "The ledger's last entry; null while it is empty. Anonymous.",
    resolve: (_root, _args, context) => context.services.ledger.head(),
  }),
  ledgerCheckpoints: t.field({
    type: [LedgerHeadRef],
    description: 'The head at every 00:00 UTC since the first entry, oldest first. Anonymous.',
    resolve: (_root, _args, context) => context.services.ledger.checkpoints(),
  }),
}));
