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
      checkpoints: [{ checkpoint: new Date('2026-11-23T00:00:00.000Z'), seq: 1042, hash: EXAMPLE_HASH, at: new Date('2026-11-22T23:58:12.345Z') }],
    },
  },
);
