import { DAYS_BACK, LEDGER_AFTER, LEDGER_PAGE as LEDGER_PAGE_SIZE, LEDGER_SIZE, REVEALED_PICKS_PAGE } from '../../domain/bounds.js';
import { canonicalJson } from '../../domain/ledger.js';
import {
  LEDGER_CONSISTENCY_PROOF,
  LEDGER_ENTRY,
  LEDGER_HEAD,
  LEDGER_INCLUSION_PROOF,
  LEDGER_PAGE,
  LEDGER_SIGNED_CHECKPOINT,
  PICK_RECEIPT,
  type LedgerEntryRecord,
} from '../../domain/ledger-shape.js';
import { boundedInt, rangedInt } from '../argument-guard.js';
import { builder } from '../builder.js';
import { pageComplexity } from '../limits.js';
import { resourceObjectType } from '../resource-types.js';
import type { PublicLedgerEntry, RevealedLedgerPick } from '../../services/ledger.js';
import type { PickReceipt } from '../../services/ledger-log.js';

/**
 * Entries of one pick counted for the cost: published, settled and a reschedule, or a hold and a
 * republication. More are possible but rare; the list is never cut.
 */
const ENTRIES_PER_PICK = 4;

/** The declared types (src/domain/ledger-shape.ts); LedgerPage holds LedgerEntry, the same type as here. */
const LedgerEntryRef = resourceObjectType(LEDGER_ENTRY);
const LedgerPageRef = resourceObjectType(LEDGER_PAGE);
const LedgerHeadRef = resourceObjectType(LEDGER_HEAD);
const LedgerInclusionProofRef = resourceObjectType(LEDGER_INCLUSION_PROOF);
const LedgerConsistencyProofRef = resourceObjectType(LEDGER_CONSISTENCY_PROOF);
const LedgerSignedCheckpointRef = resourceObjectType(LEDGER_SIGNED_CHECKPOINT);
export const PickReceiptRef = resourceObjectType(PICK_RECEIPT);

/** A receipt as declared: each entry's pick as canonical JSON text (GraphQL's form). */
export function pickReceiptRecord(receipt: PickReceipt) {
  return {
    ...receipt,
    entries: receipt.entries.map(({ pick_id, reveal_after, prev_hash, pick, ...entry }) => ({
      ...entry,
      pickId: pick_id,
      revealAfter: reveal_after,
      prevHash: prev_hash,
      get pick() {
        return canonicalJson(pick);
      },
    })),
  };
}

/** An entry as declared: GraphQL's names, its pick as canonical JSON text (made only when asked for). */
function ledgerEntryRecord(entry: PublicLedgerEntry): LedgerEntryRecord {
  const { pick } = entry;
  return {
    seq: entry.seq,
    type: entry.type,
    at: entry.at,
    pickId: entry.pick_id,
    revealAfter: entry.reveal_after,
    commitment: entry.commitment,
    prevHash: entry.prev_hash,
    hash: entry.hash,
    get pick() {
      return pick === null ? null : canonicalJson(pick);
    },
    salt: entry.salt,
  };
}

const RevealedLedgerPickRef = builder.objectRef<RevealedLedgerPick>('RevealedLedgerPick').implement({
  description: 'A pick whose kickoff has passed, with its revealed ledger entries. Anonymous.',
  fields: (t) => ({
    pickId: t.exposeString('pickId'),
    withdrawn: t.exposeBoolean('withdrawn', { description: 'Its last entry is pick.held: withdrawn before kickoff (the verifier lists it as withdrawn).' }),
    entries: t.field({
      type: [LedgerEntryRef],
      description: 'Its revealed entries in seq order, each with its pick and salt.',
      complexity: { field: 1, multiplier: ENTRIES_PER_PICK },
      resolve: (pick) => pick.entries.map(ledgerEntryRecord),
    }),
  }),
});

builder.queryFields((t) => ({
  ledger: t.field({
    type: LedgerPageRef,
    description: 'The public ledger in seq order, revealed entries with their pick and salt. Anonymous.',
    complexity: (args) => pageComplexity(args.limit, LEDGER_PAGE_SIZE),
    args: {
      after: boundedInt(t.arg, LEDGER_AFTER, 'Entries after this seq (0: from the start),'),
      limit: boundedInt(t.arg, LEDGER_PAGE_SIZE, 'Entries per page,'),
    },
    resolve: async (_root, args, context) => {
      const page = await context.services.ledger.page(args.after ?? LEDGER_AFTER.default, args.limit ?? LEDGER_PAGE_SIZE.default);
      return { ...page, entries: page.entries.map(ledgerEntryRecord) };
    },
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
    resolve: async (_root, _args, context) => {
      const head = await context.services.ledger.head();
      return head === null ? null : { ...head, checkpoint: null, treeSize: null, note: null };
    },
  }),
  ledgerCheckpoints: t.field({
    type: [LedgerHeadRef],
    description: 'The head at every 00:00 UTC since the first entry, oldest first. Anonymous.',
    resolve: (_root, _args, context) => context.services.ledger.checkpoints(),
  }),
  ledgerSignedCheckpoint: t.field({
    type: LedgerSignedCheckpointRef,
    nullable: true,
    description: "The latest signed checkpoint of the ledger's Merkle tree, with its witnesses' cosignatures; null before the first. Anonymous.",
    resolve: (_root, _args, context) => context.services.ledgerLog.latest(),
  }),
  ledgerKey: t.string({
    description: "The verifier key of the ledger's checkpoints (C2SP signed-note: `<origin>+<key id>+<base64 key>`). Pin it. Anonymous.",
    resolve: (_root, _args, context) => context.services.ledgerLog.verifierKey,
  }),
  ledgerInclusionProof: t.field({
    type: LedgerInclusionProofRef,
    description: 'The RFC 9162 inclusion proof of entry seq in the tree of the first treeSize entries. Anonymous.',
    args: {
      seq: rangedInt(t.arg, LEDGER_SIZE, 'The entry,', true),
      treeSize: rangedInt(t.arg, LEDGER_SIZE, "The tree's size (at least seq); default: the latest checkpoint's,", false),
    },
    resolve: (_root, args, context) => context.services.ledgerLog.inclusionProof(args.seq, args.treeSize),
  }),
  ledgerConsistencyProof: t.field({
    type: LedgerConsistencyProofRef,
    description: 'The RFC 9162 consistency proof from the tree of the first `from` entries to the tree of the first `to`. Anonymous.',
    args: {
      from: rangedInt(t.arg, LEDGER_SIZE, 'The older size (an archived checkpoint),', true),
      to: rangedInt(t.arg, LEDGER_SIZE, "The newer size (at least from); default: the latest checkpoint's,", false),
    },
    resolve: (_root, args, context) => context.services.ledgerLog.consistencyProof(args.from, args.to),
  }),
}));
