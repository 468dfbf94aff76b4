/**
 * The public ledger's resources (docs/API.md, "Verifying the record"), declared once: the GraphQL
 * LedgerEntry, LedgerPage and LedgerHead, the documented JSON Schemas and examples, the REST
 * selections and JSON all derive from these declarations (src/domain/resource-shape.ts).
 *
 * Customers hash and verify these bodies, so their JSON keeps its bytes, key order included:
 * properties are declared in the order the JSON shows them. Where REST and GraphQL differ:
 * - an entry's pick is canonical JSON text in GraphQL, the object in JSON (jsonText); it and its
 *   salt are null in GraphQL until revealed, absent from JSON (absentWhenNull);
 * - GraphQL has one LedgerHead, the current head's and each checkpoint's: REST shows the current
 *   head without a checkpoint (and stands in for an empty ledger, which GraphQL answers with
 *   null), a checkpoint with its midnight, never null there. Both views are derived below.
 */
import Type, { type Static } from 'typebox';
import { GENESIS_HASH, LEDGER_ENTRY_TYPES } from './ledger.js';
import { absentWhenNull, dateTime, jsonText, nullable, resource, resourceObject } from './resource-shape.js';

/** A hex SHA-256 (or 32 random bytes), as the ledger writes it. */
const hex256 = (description?: string) => Type.String({ pattern: '^[0-9a-f]{64}$', ...(description === undefined ? {} : { description }) });

const EXAMPLE_HASH = 'b5bb9d8014a0f9b1d61e21e796d78dccdf1352f23cd32812f4850b878ae4944c';

/** Documented as the LedgerEntry schema, which the page refers to. No example of its own. */
export const LEDGER_ENTRY = resourceObject(
  'LedgerEntry',
  {
    // The seven clear fields its hash covers (src/domain/ledger.ts, entryHash), then its hash.
    seq: Type.Integer({ minimum: 1, description: '1, 2, 3, ... without gaps.' }),
    type: Type.String({ enum: [...LEDGER_ENTRY_TYPES], description: 'pick.published, pick.held, pick.republished, pick.rescheduled or pick.settled.' }),
    // Strings, not points in time: shown exactly as hashed.
    at: Type.String({ format: 'date-time', description: 'Append time, ISO 8601 with milliseconds, exactly as hashed.' }),
    pickId: Type.String({ format: 'uuid' }),
    revealAfter: Type.String({
      format: 'date-time',
      description: "The pick's kickoff when the entry was appended, rounded up to the quarter hour (UTC), exactly as hashed.",
    }),
    commitment: hex256('hex SHA-256 of the RFC 8785 canonical JSON of {"pick": pick, "salt": salt}.'),
    prevHash: hex256("The previous entry's hash; 64 zeros for seq 1."),
    hash: hex256('hex SHA-256 of the canonical JSON of seq, type, at, pick_id, reveal_after, commitment and prev_hash.'),
    // Only the clear fields before the reveal: a paid pick is not given away.
    pick: absentWhenNull(
      jsonText({ type: 'object' }, { description: 'The Pick as it was committed, without ledger_seq and ledger_hash (in GraphQL, its canonical JSON text). Revealed entries only.' }),
    ),
    salt: absentWhenNull(hex256('32 random bytes, hex. Revealed entries only.')),
  },
  {
    description: 'One entry of the public ledger (see "Verifying the record"), readable by anyone. pick and salt appear from reveal_after on (and not while the pick\'s current kickoff is ahead).',
    jsonComponent: 'LedgerEntry',
  },
);

export type LedgerEntryRecord = Static<typeof LEDGER_ENTRY>;

export const LEDGER_PAGE = resource(
  'LedgerPage',
  {
    // GraphQL's cost counts the page size on the ledger field itself, so each entry once here.
    entries: Type.Array(LEDGER_ENTRY, { graphqlCostItems: 1 }),
    nextAfter: nullable(Type.Integer({ description: 'Ask again with after=next_after; null at the end of the chain.' })),
    // What the REST adapter's kept page needs to know (docs/DECISIONS.md, "Ledger cache"); the documented JSON does not show it.
    nextRevealAt: nullable(
      dateTime({
        json: false,
        description:
          "When the next of this page's hidden entries is revealed (its revealAfter, or its pick's current kickoff when later); null when every entry is revealed. " +
          'Until then only an append can change the page: a cache may keep it that long.',
      }),
    ),
  },
  { example: { entries: [], nextAfter: null, nextRevealAt: null } },
);

const CHECKPOINT_MIDNIGHT = dateTime({ description: 'For a checkpoint: the midnight (00:00 UTC) it is the head at.' });

/** The chain's head: GraphQL's LedgerHead, for ledgerHead and for each of ledgerCheckpoints (with its midnight). */
export const LEDGER_HEAD = resourceObject('LedgerHead', {
  checkpoint: nullable(CHECKPOINT_MIDNIGHT),
  seq: Type.Integer({ minimum: 1 }),
  hash: hex256(),
  at: dateTime(),
  treeSize: nullable(Type.Integer({ minimum: 1, description: 'For a checkpoint: the tree size of the latest signed checkpoint before that midnight; null when none was signed before it.' })),
  note: nullable(Type.String({ description: 'For a checkpoint: that signed checkpoint, as GET /api/public/ledger/checkpoint serves it (with its cosignatures).' })),
});

/**
 * GET /ledger/head: LEDGER_HEAD without a checkpoint (it is the current head), or, for an empty
 * ledger, EMPTY_LEDGER_HEAD; hence seq from 0 and at that may be null.
 */
export const CURRENT_LEDGER_HEAD = resource(
  'LedgerHead',
  {
    seq: Type.Integer({ minimum: 0, description: '0 while the ledger is empty.' }),
    hash: hex256('64 zeros while the ledger is empty.'),
    at: nullable(LEDGER_HEAD.properties.at),
  },
  { example: { seq: 1042, hash: EXAMPLE_HASH, at: new Date('2026-11-22T12:00:00.000Z') } },
);

/** The head of a ledger without entries, as GET /ledger/head shows it. */
export const EMPTY_LEDGER_HEAD: Static<typeof CURRENT_LEDGER_HEAD> = { seq: 0, hash: GENESIS_HASH, at: null };

/** GET /ledger/checkpoints: GraphQL's ledgerCheckpoints, each head with its midnight. */
export const LEDGER_CHECKPOINTS = resource(
  'LedgerCheckpoints',
  { checkpoints: Type.Array(resourceObject('LedgerHead', { ...LEDGER_HEAD.properties, checkpoint: CHECKPOINT_MIDNIGHT })) },
  {
    example: {
      checkpoints: [
        {
          checkpoint: new Date('2026-11-23T00:00:00.000Z'),
          seq: 1042,
          hash: EXAMPLE_HASH,
          at: new Date('2026-11-22T23:58:12.345Z'),
          treeSize: 1042,
          note: 'api.example.com/ledger\n1042\nA1b2...=\n\n\u2014 api.example.com/ledger 3ba5c1e2...\n',
        },
      ],
    },
  },
);

/** A base64 SHA-256 (RFC 9162 proofs and roots, as the tlog formats write them). */
const base64Hash = () => Type.String({ pattern: '^[A-Za-z0-9+/]{43}=$' });

/** GET /ledger/proof/inclusion and ledgerInclusionProof: RFC 9162 2.1.3, entry seq being leaf seq - 1. */
export const LEDGER_INCLUSION_PROOF = resource(
  'LedgerInclusionProof',
  {
    seq: Type.Integer({ minimum: 1 }),
    leafIndex: Type.Integer({ minimum: 0, description: 'seq - 1: the leaf of the entry, SHA-256(0x00 || its hash as 32 bytes).' }),
    treeSize: Type.Integer({ minimum: 1, description: 'The tree the proof is for: the first tree_size entries.' }),
    hashes: Type.Array(base64Hash(), { maxItems: 64, description: 'The inclusion proof (RFC 9162 section 2.1.3), leaf side first, base64.' }),
  },
  { example: { seq: 3, leafIndex: 2, treeSize: 5, hashes: ['lqKW0iTyhcZ77pPDD4owkVfw2qNdxbh+QQt4YwoJz8c=', 'XDafsFgrUEDz0iOgzFtqNTNAUStEWHdZjG/b61wySMw=', 'vBoGQ7EuTS18d5GPxJX1+UdSG9n2O6dI+fgXtKDCWLA='] } },
);

/** GET /ledger/proof/consistency and ledgerConsistencyProof: RFC 9162 2.1.4. */
export const LEDGER_CONSISTENCY_PROOF = resource(
  'LedgerConsistencyProof',
  {
    from: Type.Integer({ minimum: 1, description: 'The older tree size (an archived checkpoint).' }),
    to: Type.Integer({ minimum: 1, description: 'The newer tree size.' }),
    hashes: Type.Array(base64Hash(), { maxItems: 64, description: 'The consistency proof (RFC 9162 section 2.1.4), base64; empty when from = to.' }),
  },
  { example: { from: 3, to: 5, hashes: ['lqKW0iTyhcZ77pPDD4owkVfw2qNdxbh+QQt4YwoJz8c=', 'XDafsFgrUEDz0iOgzFtqNTNAUStEWHdZjG/b61wySMw='] } },
);

/** ledgerSignedCheckpoint: the latest signed note (GET /ledger/checkpoint serves its note as text). */
export const LEDGER_SIGNED_CHECKPOINT = resourceObject('LedgerSignedCheckpoint', {
  treeSize: Type.Integer({ minimum: 1 }),
  rootHash: base64Hash(),
  note: Type.String({ description: 'The C2SP signed note: origin, tree size and base64 root, a blank line, the log\'s signature line, then each witness\'s cosignature line.' }),
  signedAt: dateTime(),
});

/** One entry of a receipt: the entry, its pick and salt, and its inclusion proof against the receipt's checkpoint. */
const RECEIPT_ENTRY = resourceObject('PickReceiptEntry', {
  seq: LEDGER_ENTRY.properties.seq,
  type: LEDGER_ENTRY.properties.type,
  at: LEDGER_ENTRY.properties.at,
  pickId: LEDGER_ENTRY.properties.pickId,
  revealAfter: LEDGER_ENTRY.properties.revealAfter,
  commitment: LEDGER_ENTRY.properties.commitment,
  prevHash: LEDGER_ENTRY.properties.prevHash,
  hash: LEDGER_ENTRY.properties.hash,
  pick: jsonText({ type: 'object' }, { description: 'The Pick as committed (in GraphQL, its canonical JSON text): with salt, recompute the commitment.' }),
  salt: hex256('32 random bytes, hex.'),
  leafIndex: Type.Integer({ minimum: 0 }),
  inclusion: Type.Array(base64Hash(), { maxItems: 64, description: "The entry's inclusion proof against the receipt's checkpoint, base64." }),
});

/** GET /api/v1/picks/:id/receipt and Pick.receipt: what a customer archives to check a pick offline. */
export const PICK_RECEIPT = resource(
  'PickReceipt',
  {
    pickId: Type.String({ format: 'uuid' }),
    key: Type.String({ description: "The log's verifier key as the service states it: pin the one you fetched from /api/public/ledger/key before, not this." }),
    treeSize: nullable(Type.Integer({ minimum: 1, description: "The checkpoint's tree size; null before the first checkpoint." })),
    checkpoint: nullable(Type.String({ description: 'The signed note (with cosignatures) every inclusion proof is against; null before the first checkpoint.' })),
    entries: Type.Array(RECEIPT_ENTRY, { graphqlCostItems: 4, description: "The pick's entries the checkpoint covers, in seq order." }),
    pending: Type.Array(Type.Integer({ minimum: 1 }), { graphqlCostItems: 1, description: 'The seqs of its entries appended after the checkpoint: a later receipt covers them.' }),
  },
  {
    example: { pickId: '0b7f3c9e-1a2b-4c3d-8e9f-001122334455', key: 'api.example.com/ledger+3ba5c1e2+AYsW...', treeSize: null, checkpoint: null, entries: [], pending: [1042] },
  },
);
