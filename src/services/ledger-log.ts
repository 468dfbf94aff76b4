/**
 * The ledger as a transparency log (docs/API.md, "Verifying the record"): signed checkpoints of
 * the Merkle tree over the entries (C2SP tlog-checkpoint and signed-note, Ed25519), inclusion and
 * consistency proofs (RFC 9162), per-pick receipts, and the witnesses (C2SP tlog-witness) each
 * checkpoint is submitted to. The tree itself is extended with every append
 * (src/persistence/ledger-tree-repository.ts).
 *
 * Checkpoints: every instance ticks; the first to find the tree grown and the last checkpoint at
 * least LEDGER_CHECKPOINT_SECONDS old signs one, under the ledger's write lock, so the size it
 * signs is the chain's length at that moment and two instances never sign two roots for one size.
 */
import type { Clock } from '../domain/clock.js';
import { InvalidParameterError } from '../domain/errors.js';
import { consistencyProofRanges, inclusionProofRanges, nodesFor, proofHashes, rootRange, EMPTY_ROOT } from '../domain/merkle.js';
import { checkpointBody, cosignedAt, noteSignedBy, parseCheckpointBody, parseNote, signNote, type SignerKey, type VerifierKey } from '../domain/signed-note.js';
import type { CommittedPick, LedgerEntry } from '../domain/ledger.js';
import { ledgerEntriesOfPick, ledgerHead, lockLedger } from '../persistence/ledger-repository.js';
import {
  extendTree,
  insertCheckpoint,
  insertCosignature,
  lastCosignedSize,
  latestCheckpoint,
  readTreeNodes,
  replaceCheckpointNote,
  treeSize,
  type StoredCheckpoint,
} from '../persistence/ledger-tree-repository.js';
import type { Em, Orm } from '../persistence/orm.js';
import type { ServiceLog } from './log.js';
import type { WitnessOutcome } from './metrics/catalog.js';
import type { ServiceMetrics } from './metrics/metrics.js';

export interface Witness {
  key: VerifierKey;
  /** Its base URL: checkpoints are POSTed to `{url}/add-checkpoint`. */
  url: string;
}

export interface LedgerLogOptions {
  signer: SignerKey;
  checkpointIntervalMs: number;
  witnesses?: readonly Witness[];
  log?: ServiceLog;
  metrics?: ServiceMetrics;
  /** How long a witness may take to answer (default 10 s). */
  witnessTimeoutMs?: number;
}

/** A signed checkpoint as served: the note with the log's signature, then every cosignature received. */
export interface SignedCheckpoint {
  treeSize: number;
  rootHash: string;
  note: string;
  signedAt: Date;
}

export interface InclusionProof {
  seq: number;
  leafIndex: number;
  treeSize: number;
  hashes: string[];
}

export interface ConsistencyProof {
  from: number;
  to: number;
  hashes: string[];
}

/** A pick's receipt: its entries, each with its inclusion proof against one signed checkpoint. */
export interface PickReceipt {
  pickId: string;
  key: string;
  treeSize: number | null;
  checkpoint: string | null;
  entries: (LedgerEntry & { pick: CommittedPick; salt: string; leafIndex: number; inclusion: string[] })[];
  /** Entries appended after the checkpoint: covered by a later one. */
  pending: number[];
}

/** A witness answered, and not with a cosignature that verifies (a fetch that got no answer throws anything else). */
class WitnessRefusal extends Error {}

const TICK_MS = 5_000;
/** A witness's answer is a few signature lines; anything longer is refused unread. */
const WITNESS_ANSWER_MAX_BYTES = 64 * 1024;

/** The answer's text, refused (WitnessRefusal) past WITNESS_ANSWER_MAX_BYTES without reading the rest. */
async function boundedText(response: Response): Promise<string> {
  const declared = Number(response.headers.get('content-length') ?? 0);
  const tooLong = () => new WitnessRefusal(`HTTP ${response.status} with an answer over ${WITNESS_ANSWER_MAX_BYTES} bytes`);
  if (declared > WITNESS_ANSWER_MAX_BYTES) {
    await response.body?.cancel();
    throw tooLong();
  }
  const reader = response.body?.getReader();
  if (!reader) return '';
  const chunks: Uint8Array[] = [];
  let size = 0;
  for (;;) {
    const { done, value } = await reader.read();
    if (done) return Buffer.concat(chunks).toString('utf8');
    size += value.byteLength;
    if (size > WITNESS_ANSWER_MAX_BYTES) {
      await reader.cancel();
      throw tooLong();
    }
    chunks.push(value);
  }
}
const WITNESS_TIMEOUT_MS = 10_000;
/** A witness that failed is tried again after this long, doubling to at most 10 minutes. */
const WITNESS_RETRY_MS = 15_000;
const WITNESS_RETRY_MAX_MS = 600_000;

const base64 = (hash: Buffer) => hash.toString('base64');

/** The note with its cosignature lines appended. */
export function servedNote(checkpoint: StoredCheckpoint): SignedCheckpoint {
  return {
    treeSize: checkpoint.treeSize,
    rootHash: base64(checkpoint.root),
    note: checkpoint.note + checkpoint.cosignatures.map((cosignature) => cosignature.line).join(''),
    signedAt: checkpoint.signedAt,
  };
}

export class LedgerLog {
  private timer: NodeJS.Timeout | null = null;
  private ticking: Promise<void> | null = null;
  /** Per witness: when it may be tried again, and the wait after the next failure. */
  private readonly witnessBackoff = new Map<string, { notBefore: number; waitMs: number }>();

  constructor(
    private readonly orm: Orm,
    private readonly clock: Clock,
    private readonly options: LedgerLogOptions,
  ) {}

  /** The log's verifier key, `<origin>+<key id>+<key>`. */
  get verifierKey(): string {
    return this.options.signer.text;
  }

  get origin(): string {
    return this.options.signer.name;
  }

  /**
   * At start: the latest checkpoint must be signed by this key, which customers and witnesses
   * pinned. A key replaced on purpose names the one it replaces (LEDGER_PREVIOUS_KEY_ID): the
   * latest checkpoint is then signed again by the new key (the same body, so its cosignatures
   * still hold). Anything else is refused: a lost key file, a key of another deployment.
   */
  async checkKey(previousKeyId: string | null): Promise<void> {
    const em = this.orm.em.fork();
    const latest = await latestCheckpoint(em);
    if (!latest) return;
    const note = parseNote(latest.note);
    if (noteSignedBy(note, this.options.signer)) return;
    const signedBy = note.signatures[0]!;
    const signedById = signedBy.keyId.toString('hex');
    const ours = `${this.options.signer.name}+${this.options.signer.keyId.toString('hex')}`;
    if (previousKeyId !== signedById) {
      throw new Error(
        `Invalid configuration: LEDGER_SIGNING_KEY ${ours} did not sign the ledger's latest checkpoint (size ${latest.treeSize}, signed by ${signedBy.name}+${signedById}). ` +
          'Customers and witnesses pinned that key: give it back (embedded mode keeps it in DATA_DIR/ledger-signing-key), or, to replace it on purpose, ' +
          `set LEDGER_PREVIOUS_KEY_ID=${signedById} once and publish the new verifier key`,
      );
    }
    const { origin } = parseCheckpointBody(note.body);
    if (origin !== this.origin) throw new Error(`Invalid configuration: LEDGER_SIGNING_KEY is named ${this.origin}, but the log's origin is ${origin}: a replacing key keeps the origin`);
    await replaceCheckpointNote(em, latest.treeSize, signNote(note.body, this.options.signer));
    this.options.log?.warn({ treeSize: latest.treeSize, previousKey: `${signedBy.name}+${signedById}`, key: ours }, 'ledger: the signing key was replaced; the latest checkpoint is signed again by the new key');
  }

  /** Builds the tree of entries appended without it (before it existed): once, at start. */
  async catchUp(): Promise<void> {
    const em = this.orm.em.fork();
    const head = (await ledgerHead(em))?.seq ?? 0;
    if ((await treeSize(em)) >= head) return;
    await this.orm.em.fork().transactional(async (tx) => {
      await lockLedger(tx);
      await extendTree(tx, (await ledgerHead(tx))?.seq ?? 0);
    });
  }

  /**
   * Signs a checkpoint when the chain grew since the last one and that one is at least the
   * interval old; returns it (null: nothing to sign yet). Then submits it to the witnesses.
   */
  async signIfDue(): Promise<SignedCheckpoint | null> {
    const now = this.clock.now();
    const em = this.orm.em.fork();
    const [latest, head] = await Promise.all([latestCheckpoint(em), ledgerHead(em)]);
    if (!this.due(latest, head?.seq ?? 0, now)) {
      if (latest) await this.submitToWitnesses(latest);
      return null;
    }
    const signed = await this.orm.em.fork().transactional(async (tx) => {
      await lockLedger(tx);
      const [current, chain] = await Promise.all([latestCheckpoint(tx), ledgerHead(tx)]);
      const size = chain?.seq ?? 0;
      if (!this.due(current, size, now)) return null;
      // An older instance may have appended without the tree (a rolling deploy): it catches up here.
      await extendTree(tx, size);
      const root = await this.root(tx, size);
      const note = signNote(checkpointBody({ origin: this.origin, size, root }), this.options.signer);
      // The time the size was read under the lock: every entry it covers was appended before it.
      const checkpoint = { treeSize: size, root, note, signedAt: this.clock.now() };
      return (await insertCheckpoint(tx, checkpoint)) ? { ...checkpoint, cosignatures: [] } : null;
    });
    if (!signed) return null;
    // Routine, once a minute at most: the gauges show it; failures are warnings.
    this.options.log?.debug?.({ treeSize: signed.treeSize }, 'ledger: checkpoint signed');
    // A new checkpoint is worth a try at once, whatever the wait after an earlier failure.
    this.witnessBackoff.clear();
    await this.submitToWitnesses(signed);
    return servedNote((await latestCheckpoint(this.orm.em.fork())) ?? signed);
  }

  private due(latest: StoredCheckpoint | null, chainSize: number, now: Date): boolean {
    if (chainSize === 0 || (latest !== null && latest.treeSize >= chainSize)) return false;
    return latest === null || now.getTime() - latest.signedAt.getTime() >= this.options.checkpointIntervalMs;
  }

  private async root(em: Em, size: number): Promise<Buffer> {
    const ranges = rootRange(size);
    if (ranges.length === 0) return EMPTY_ROOT;
    return proofHashes(ranges, await readTreeNodes(em, nodesFor(ranges)))[0]!;
  }

  /** The latest signed checkpoint with its cosignatures; null before the first. */
  async latest(): Promise<SignedCheckpoint | null> {
    const checkpoint = await latestCheckpoint(this.orm.em.fork());
    return checkpoint && servedNote(checkpoint);
  }

  /** The size proofs default to: the latest checkpoint's; refused before the first. */
  private async defaultSize(em: Em, parameter: string): Promise<number> {
    const latest = await latestCheckpoint(em);
    if (!latest) throw new InvalidParameterError(parameter, `${parameter} is required while no checkpoint is signed`);
    return latest.treeSize;
  }

  /** The tree's size, checked against a requested size. */
  private async checkSize(em: Em, parameter: string, size: number): Promise<void> {
    const stored = await treeSize(em);
    if (size > stored) throw new InvalidParameterError(parameter, `${parameter} must be at most ${stored}, the size of the ledger's tree`);
  }

  /** RFC 9162 inclusion proof of entry `seq` in the tree of `size` entries (default: the latest checkpoint's). */
  async inclusionProof(seq: number, size?: number | null): Promise<InclusionProof> {
    const em = this.orm.em.fork();
    const treeSizeAsked = size ?? (await this.defaultSize(em, 'treeSize'));
    if (seq > treeSizeAsked) throw new InvalidParameterError('seq', `seq must be at most the tree's size, ${treeSizeAsked}`);
    // A checkpoint's size is within the tree: only a size asked for is read against it.
    if (size != null) await this.checkSize(em, 'treeSize', size);
    const ranges = inclusionProofRanges(seq - 1, treeSizeAsked);
    const hashes = proofHashes(ranges, await readTreeNodes(em, nodesFor(ranges))).map(base64);
    return { seq, leafIndex: seq - 1, treeSize: treeSizeAsked, hashes };
  }

  /** RFC 9162 consistency proof from the tree of `from` entries to the tree of `to` (default: the latest checkpoint's). */
  async consistencyProof(from: number, to?: number | null): Promise<ConsistencyProof> {
    const em = this.orm.em.fork();
    const toSize = to ?? (await this.defaultSize(em, 'to'));
    if (from > toSize) throw new InvalidParameterError('from', `from must be at most the newer size, ${toSize}`);
    if (to != null) await this.checkSize(em, 'to', to);
    const ranges = consistencyProofRanges(from, toSize);
    const hashes = proofHashes(ranges, await readTreeNodes(em, nodesFor(ranges))).map(base64);
    return { from, to: toSize, hashes };
  }

  /**
   * A pick's receipt against the latest checkpoint: its entries that checkpoint covers, each with
   * its pick, salt and inclusion proof; the later ones as pending. Null for a pick without
   * entries (never visible). Whether the caller may see the pick is the caller's to decide.
   */
  async receipt(pickId: string): Promise<PickReceipt | null> {
    const em = this.orm.em.fork();
    // The checkpoint first: every entry it covers is committed by then, so the entries read next
    // hold all of them (read in the other order, an entry appended in between and covered by a
    // newer checkpoint would be in neither list).
    const checkpoint = await latestCheckpoint(em);
    const entries = await ledgerEntriesOfPick(em, pickId);
    if (entries.length === 0) return null;
    const size = checkpoint?.treeSize ?? 0;
    const covered = entries.filter((entry) => entry.seq <= size);
    const rangesByEntry = covered.map((entry) => inclusionProofRanges(entry.seq - 1, size));
    const nodes = await readTreeNodes(em, nodesFor(rangesByEntry.flat()));
    return {
      pickId,
      key: this.verifierKey,
      treeSize: checkpoint?.treeSize ?? null,
      checkpoint: checkpoint && servedNote(checkpoint).note,
      entries: covered.map(({ currentKickoff: _kickoff, ...entry }, i) => ({
        ...entry,
        leafIndex: entry.seq - 1,
        inclusion: proofHashes(rangesByEntry[i]!, nodes).map(base64),
      })),
      pending: entries.filter((entry) => entry.seq > size).map((entry) => entry.seq),
    };
  }

  /** Submits the checkpoint to each witness without its cosignature yet (and not backing off). */
  private async submitToWitnesses(checkpoint: StoredCheckpoint): Promise<void> {
    const have = new Set(checkpoint.cosignatures.map((cosignature) => cosignature.witness));
    const now = this.clock.now().getTime();
    await Promise.all(
      (this.options.witnesses ?? [])
        .filter((witness) => !have.has(witness.key.text) && (this.witnessBackoff.get(witness.key.text)?.notBefore ?? 0) <= now)
        .map(async (witness) => {
          try {
            await this.submit(witness, checkpoint);
            this.witnessBackoff.delete(witness.key.text);
            this.count(witness, 'cosigned');
          } catch (error) {
            this.count(witness, error instanceof WitnessRefusal ? 'refused' : 'unreachable');
            const waitMs = this.witnessBackoff.get(witness.key.text)?.waitMs ?? WITNESS_RETRY_MS;
            this.witnessBackoff.set(witness.key.text, { notBefore: this.clock.now().getTime() + waitMs, waitMs: Math.min(waitMs * 2, WITNESS_RETRY_MAX_MS) });
            this.options.log?.warn(
              { witness: witness.key.name, url: new URL(witness.url).origin, treeSize: checkpoint.treeSize, err: (error as Error).message, retryInSeconds: waitMs / 1000 },
              'ledger: a witness did not cosign the checkpoint; trying again later',
            );
          }
        }),
    );
  }

  private count(witness: Witness, outcome: WitnessOutcome): void {
    this.options.metrics?.ledgerWitnessSubmissions.inc({ witness: witness.key.name, outcome });
  }

  /**
   * One submission by the tlog-witness protocol: `old` is the last size the witness cosigned for
   * us (0: none); a 409 names the size it has, and the submission is made again from that size.
   * The cosignature returned is kept only when it verifies with the witness's configured key.
   */
  private async submit(witness: Witness, checkpoint: StoredCheckpoint): Promise<void> {
    // Known by its key, not its name: a witness given a new key starts over.
    let old = await lastCosignedSize(this.orm.em.fork(), witness.key.text);
    for (let attempt = 0; attempt < 2; attempt++) {
      if (old > checkpoint.treeSize) throw new WitnessRefusal(`the witness has size ${old}, beyond this checkpoint's ${checkpoint.treeSize}`);
      const proof = await this.consistencyProof(old, checkpoint.treeSize);
      const body = `old ${old}\n${proof.hashes.map((hash) => `${hash}\n`).join('')}\n${checkpoint.note}`;
      const response = await fetch(`${witness.url}/add-checkpoint`, {
        method: 'POST',
        body,
        headers: { 'content-type': 'text/plain; charset=utf-8' },
        // A witness is someone else's server: it may not send our POSTs elsewhere.
        redirect: 'error',
        signal: AbortSignal.timeout(this.options.witnessTimeoutMs ?? WITNESS_TIMEOUT_MS),
      });
      const text = await boundedText(response);
      if (response.status === 409 && /^text\/x\.tlog\.size\b/.test(response.headers.get('content-type') ?? '') && /^\d+\n?$/.test(text)) {
        old = Number(text.trim());
        continue;
      }
      if (response.status !== 200) throw new WitnessRefusal(`HTTP ${response.status}: ${text.slice(0, 200)}`);
      const signedBody = parseNote(checkpoint.note).body;
      const line = text
        .split(/(?<=\n)/)
        .find((candidate) => {
          try {
            return cosignedAt(parseNote(`${signedBody}\n${candidate}`), witness.key) !== null;
          } catch {
            return false;
          }
        });
      if (!line) throw new WitnessRefusal('the answer holds no cosignature that verifies with the configured witness key');
      await insertCosignature(this.orm.em.fork(), checkpoint.treeSize, witness.key.text, line, this.clock.now());
      this.options.log?.debug?.({ witness: witness.key.name, treeSize: checkpoint.treeSize }, 'ledger: checkpoint cosigned');
      return;
    }
    throw new WitnessRefusal('the witness answered 409 twice');
  }

  /** Ticks every 5 s: a checkpoint when due, witnesses retried. */
  start(): void {
    if (this.timer) return;
    this.timer = setInterval(() => {
      if (this.ticking) return;
      this.ticking = this.signIfDue()
        .then(() => undefined)
        .catch((error: unknown) => this.options.log?.error({ err: (error as Error).message }, 'ledger: signing a checkpoint failed'))
        .finally(() => {
          this.ticking = null;
        });
    }, Math.min(TICK_MS, this.options.checkpointIntervalMs));
    this.timer.unref();
  }

  async close(): Promise<void> {
    if (this.timer) clearInterval(this.timer);
    this.timer = null;
    await this.ticking;
  }
}
