/**
 * The ledger as a signed, witnessed transparency log, end to end over loopback HTTP: checkpoints
 * signed at most every LEDGER_CHECKPOINT_SECONDS, served as C2SP signed notes with their key;
 * RFC 9162 proofs checked by the witness's own code (docs/examples/witness.mjs, written apart from
 * the service's); receipts; a witness (the example witness, really listening) that cosigns an honest
 * log and refuses a rewritten one; the tree built at start for entries appended without it; and
 * the wrong forms of every parameter.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it, onTestFinished } from 'vitest';
import { ManualClock } from '../../src/domain/clock.js';
import { entryHash } from '../../src/domain/ledger.js';
import { leafHash } from '../../src/domain/merkle.js';
import { COSIGNATURE_ALGORITHM_ED25519, generateSignerKey, parseSignerKey } from '../../src/domain/signed-note.js';
import { executeBound } from '../../src/persistence/sql.js';
import { ADMIN_TOKEN, createTestApp, LEDGER_SIGNING_KEY, WEBHOOK_SECRET_KEY, type TestApp } from '../helpers/app.js';
import { loadConfig } from '../../src/config.js';
import { createRuntime } from '../../src/runtime.js';
import { CREATE_KEY, PUBLISH, pickInput } from '../helpers/fixtures.js';
// @ts-expect-error The example is plain JavaScript, as a customer would copy it.
import { parseCheckpoint, parseNote, parseVerifierKey, startWitness, verifyConsistency as witnessVerifiesConsistency, verifyLogSignatures } from '../../docs/examples/witness.mjs';
// @ts-expect-error The example is plain JavaScript, as a customer would copy it.
import { treeRoot, verifyInclusion, verifyLedger, verifyReceipt } from '../../docs/examples/verify-ledger.mjs';

const LOG_KEY = parseSignerKey(LEDGER_SIGNING_KEY).text;
const b64 = (text: string) => Buffer.from(text, 'base64');

interface Witness { url: string; verifierKey: string; close(): Promise<void> }

async function witness(): Promise<Witness> {
  const stateDir = mkdtempSync(path.join(tmpdir(), 'witness-'));
  const started = (await startWitness({ logKeys: [LOG_KEY], name: 'witness.test/w1', stateDir, port: 0, host: '127.0.0.1' })) as Witness;
  onTestFinished(async () => {
    await started.close();
    rmSync(stateDir, { recursive: true, force: true });
  });
  return started;
}

interface Booted { t: TestApp; clock: ManualClock; base: string }

async function boot(env: Record<string, string> = {}): Promise<Booted> {
  const clock = new ManualClock('2026-11-22T12:00:00Z');
  const t = await createTestApp({ clock, env: { LEDGER_CHECKPOINT_SECONDS: '60', ...env } });
  onTestFinished(() => t.close());
  await t.app.listen({ port: 0, host: '127.0.0.1' });
  return { t, clock, base: `http://127.0.0.1:${(t.app.server.address() as AddressInfo).port}` };
}

async function publish(t: TestApp, n: number, from = 0): Promise<string[]> {
  const ids: string[] = [];
  for (let i = from; i < from + n; i++) {
    const res = await t.graphql<{ publishPick: { id: string } }>(PUBLISH, { input: pickInput({ awayTeam: `Away ${i}`, kickoffAt: '2026-12-01T15:00:00Z' }) });
    expect(res.errors).toBeUndefined();
    ids.push(res.data!.publishPick.id);
  }
  return ids;
}

const sql = (t: TestApp, text: string, parameters: unknown[] = []) => executeBound<Record<string, unknown>>(t.runtime.orm.em.fork(), text, parameters);

/** The chain's entry hashes in seq order, straight from the table. */
async function entryHashes(t: TestApp): Promise<string[]> {
  return (await sql(t, 'select hash from ledger_entries order by seq')).map((row) => String(row.hash));
}

describe('signed checkpoints', () => {
  it('are signed when due, verify with the served key, and commit to the entries', async () => {
    const { t, clock, base } = await boot();
    expect((await fetch(`${base}/api/public/ledger/checkpoint`)).status).toBe(404);
    const key = await (await fetch(`${base}/api/public/ledger/key`)).text();
    expect(key).toBe(`${LOG_KEY}\n`);

    await publish(t, 3);
    const first = await t.runtime.services.ledgerLog.signIfDue();
    expect(first?.treeSize).toBe(3);
    // Not due again within the interval, even though the chain grew.
    await publish(t, 2, 3);
    clock.advance(59_000);
    expect(await t.runtime.services.ledgerLog.signIfDue()).toBeNull();
    clock.advance(1_000);
    expect((await t.runtime.services.ledgerLog.signIfDue())?.treeSize).toBe(5);
    // Nothing new: nothing signed, however long it has been.
    clock.advance(3_600_000);
    expect(await t.runtime.services.ledgerLog.signIfDue()).toBeNull();

    const res = await fetch(`${base}/api/public/ledger/checkpoint`);
    expect(res.headers.get('content-type')).toBe('text/plain; charset=utf-8');
    const note = parseNote(await res.text());
    expect(verifyLogSignatures(note, [parseVerifierKey(key.trim())])).toBeTruthy();
    const checkpoint = parseCheckpoint(note.body);
    expect({ origin: checkpoint.origin, size: Number(checkpoint.size) }).toEqual({ origin: 'test.localhost/ledger', size: 5 });
    // The root is the customer's verifier's RFC 9162 root of the stored entries' leaves.
    expect(Buffer.from(checkpoint.root)).toEqual(treeRoot((await entryHashes(t)).map(leafHash)));
  });
});


describe('proofs and receipts', () => {
  it('proves every entry included and every older checkpoint consistent, as the verifier checks them', async () => {
    const { t, base } = await boot();
    await publish(t, 11);
    await t.runtime.services.ledgerLog.signIfDue();
    const hashes = await entryHashes(t);
    const leaves = hashes.map(leafHash);
    for (const size of [1, 4, 7, 11]) {
      const root = treeRoot(leaves.slice(0, size));
      for (let seq = 1; seq <= size; seq++) {
        const proof = await (await fetch(`${base}/api/public/ledger/proof/inclusion?seq=${seq}&tree_size=${size}`)).json();
        expect(proof).toMatchObject({ seq, leaf_index: seq - 1, tree_size: size });
        expect(verifyInclusion(seq - 1, size, leaves[seq - 1], proof.hashes.map(b64), root), `${seq} in ${size}`).toBe(true);
      }
      const consistency = await (await fetch(`${base}/api/public/ledger/proof/consistency?from=${size}`)).json();
      expect(consistency).toMatchObject({ from: size, to: 11 });
      // The witness's own RFC 9162 code, written apart from the service's.
      expect(witnessVerifiesConsistency(BigInt(size), root, 11n, treeRoot(leaves), consistency.hashes.map(b64)), `${size} to 11`).toBe(true);
    }
    // tree_size defaults to the latest checkpoint's.
    expect(await (await fetch(`${base}/api/public/ledger/proof/inclusion?seq=3`)).json()).toMatchObject({ tree_size: 11 });
  });

  it('refuses the wrong forms of every proof parameter with invalid_parameter, never a 500', async () => {
    const { t, base } = await boot();
    await publish(t, 3);
    // No checkpoint yet: a default size cannot be given.
    const early = await fetch(`${base}/api/public/ledger/proof/inclusion?seq=1`);
    expect({ status: early.status, code: (await early.json()).error }).toEqual({ status: 400, code: 'invalid_parameter' });
    await t.runtime.services.ledgerLog.signIfDue();
    const cases: [string, string][] = [
      ['inclusion', ''],
      ['inclusion', 'seq=0'],
      ['inclusion', 'seq=-1'],
      ['inclusion', 'seq=abc'],
      ['inclusion', 'seq=1.5'],
      ['inclusion', 'seq=1&seq=2'],
      ['inclusion', 'seq=4'],
      ['inclusion', 'seq=2&tree_size=1'],
      ['inclusion', 'seq=1&tree_size=4'],
      ['inclusion', 'seq=1&tree_size=99999999999'],
      ['inclusion', 'seq=1&tree_size=0'],
      ['consistency', ''],
      ['consistency', 'from=0'],
      ['consistency', 'from=3&to=2'],
      ['consistency', 'from=1&to=4'],
      ['consistency', 'from=x'],
    ];
    for (const [kind, query] of cases) {
      const res = await fetch(`${base}/api/public/ledger/proof/${kind}?${query}`);
      const body = await res.json();
      expect({ status: res.status, code: body.error, cache: res.headers.get('cache-control') }, `${kind}?${query}`).toEqual({ status: 400, code: 'invalid_parameter', cache: 'no-store' });
      expect(body.parameter, `${kind}?${query}`).toMatch(/^(seq|tree_size|from|to)$/);
    }
    // Swapped names are unknown parameters: a missing required one is what is reported.
    const swapped = await fetch(`${base}/api/public/ledger/proof/inclusion?tree_size=1&leaf=1`);
    expect(await swapped.json()).toMatchObject({ error: 'invalid_parameter', parameter: 'seq' });
  });

  it("gives a customer a receipt of the pick that verifies offline, and lists what the checkpoint does not cover yet", async () => {
    const { t, clock, base } = await boot();
    const id = (await publish(t, 1))[0]!;
    await publish(t, 2, 1);
    const created = await t.graphql<{ createApiKey: { key: string } }>(CREATE_KEY, { input: { tier: 'STARTER', label: 'receipts' } });
    const headers = { authorization: `Bearer ${created.data!.createApiKey.key}` };
    const before = await (await fetch(`${base}/api/v1/picks/${id}/receipt`, { headers })).json();
    expect(before).toMatchObject({ pick_id: id, checkpoint: null, tree_size: null, entries: [], pending: [1] });
    // A receipt that proves nothing yet is not passed as one.
    expect(verifyReceipt(before, { key: LOG_KEY }).failures.map((failure: { check: string }) => failure.check)).toEqual(['receipt']);

    await t.runtime.services.ledgerLog.signIfDue();
    const receipt = await (await fetch(`${base}/api/v1/picks/${id}/receipt`, { headers })).json();
    expect(receipt).toMatchObject({ pick_id: id, tree_size: 3, key: LOG_KEY, pending: [] });
    expect(receipt.entries).toHaveLength(1);
    expect(verifyReceipt(receipt, { key: LOG_KEY }).failures).toEqual([]);
    // Settled after the checkpoint: the new entry is pending until the next one.
    const settled = await t.graphql('mutation($input: SettlePickInput!) { settlePick(input: $input) { id } }', { input: { id, result: 'WON', closingOdds: 2.0 } });
    expect(settled.errors).toBeUndefined();
    clock.advance(61_000);
    const stale = await t.runtime.services.ledgerLog.receipt(id);
    expect(stale?.pending).toEqual([4]);
    await t.runtime.services.ledgerLog.signIfDue();
    const full = (await t.runtime.services.ledgerLog.receipt(id))!;
    expect(full.entries.map((entry) => entry.seq)).toEqual([1, 4]);

    // Tampered receipts fail offline, at the right check.
    const tampered = structuredClone(receipt);
    tampered.entries[0].pick.odds = 9.99;
    expect(verifyReceipt(tampered, { key: LOG_KEY }).failures.map((failure: { check: string }) => failure.check)).toContain('commitment');
    const badProof = structuredClone(receipt);
    badProof.entries[0].inclusion[0] = Buffer.alloc(32, 9).toString('base64');
    expect(verifyReceipt(badProof, { key: LOG_KEY }).failures.map((failure: { check: string }) => failure.check)).toContain('inclusion');
    const hidden = { ...structuredClone(receipt), entries: [], pending: [1] };
    expect(verifyReceipt(hidden, { key: LOG_KEY }).failures.map((failure: { check: string }) => failure.check)).toContain('pending');
    const otherKey = parseSignerKey(generateSignerKey('test.localhost/ledger')).text;
    expect(verifyReceipt(receipt, { key: otherKey }).failures.map((failure: { check: string }) => failure.check)).toContain('signature');

    // Unknown ids, other forms, no key.
    expect((await fetch(`${base}/api/v1/picks/${crypto.randomUUID()}/receipt`, { headers })).status).toBe(404);
    const malformed = await fetch(`${base}/api/v1/picks/not-a-uuid/receipt`, { headers });
    // As every /api/v1 path id: an id of another form names no pick.
    expect({ status: malformed.status, error: (await malformed.json()).error }).toEqual({ status: 404, error: 'not_found' });
    expect((await fetch(`${base}/api/v1/picks/${id}/receipt`)).status).toBe(401);
    // GraphQL gives the same receipt.
    const graphql = await t.graphql<{ pick: { receipt: { treeSize: number; entries: { seq: number }[] } } }>(`{ pick(id: "${id}") { receipt { treeSize entries { seq } } } }`);
    expect(graphql.data!.pick.receipt).toEqual({ treeSize: 4, entries: [{ seq: 1 }, { seq: 4 }] });
  });
});

describe('witnesses', () => {
  it('cosign an honest log, and a rewritten history is refused by the witness and caught by the verifier', async () => {
    const w = await witness();
    const { t, clock, base } = await boot({ LEDGER_WITNESSES: `${w.verifierKey} ${w.url}` });
    await publish(t, 4);
    await t.runtime.services.ledgerLog.signIfDue();
    const archived = await (await fetch(`${base}/api/public/ledger/checkpoint`)).text();
    expect(archived).toContain('\u2014 witness.test/w1 ');
    await publish(t, 2, 4);
    clock.advance(60_000);
    await t.runtime.services.ledgerLog.signIfDue();
    const honest = await verifyLedger(base, { key: LOG_KEY, witnesses: [w.verifierKey], archived: [archived] });
    expect(honest.failures).toEqual([]);

    // The operator rewrites entry 2 (a loser turned into a winner, say) and re-forges the chain
    // and the tree after it, then signs: a self-consistent history, forked from what was shown.
    await sql(t, "update ledger_entries set commitment = repeat('ab', 32) where seq = 2");
    const rows = await sql(t, 'select seq, type, at, pick_id, reveal_after, commitment, prev_hash from ledger_entries order by seq');
    let previous = String(rows[0]!.prev_hash);
    for (const row of rows) {
      const clear = { seq: Number(row.seq), type: String(row.type), at: new Date(String(row.at)).toISOString(), pick_id: String(row.pick_id), reveal_after: new Date(String(row.reveal_after)).toISOString(), commitment: String(row.commitment), prev_hash: previous };
      previous = entryHash(clear as never);
      await sql(t, 'update ledger_entries set prev_hash = $1, hash = $2 where seq = $3', [clear.prev_hash, previous, clear.seq]);
    }
    await sql(t, 'delete from ledger_tree_nodes');
    await publish(t, 1, 6);
    clock.advance(60_000);
    const forged = await t.runtime.services.ledgerLog.signIfDue();
    expect(forged?.treeSize).toBe(7);
    // The witness refused it (422): no cosignature is served with it, and the service logged it.
    expect(forged!.note).not.toContain('witness.test/w1');
    const caught = await verifyLedger(base, { key: LOG_KEY, witnesses: [w.verifierKey], archived: [archived] });
    const failed = caught.failures.map((failure: { check: string }) => failure.check);
    expect(failed).toContain('consistency');
    expect(failed).toContain('witness');
    // The operator sees it: one refusal after two cosignatures, and the gauges of the latest checkpoint.
    const metrics = await t.runtime.metrics.text();
    expect(metrics).toContain('picks_ledger_witness_submissions_total{witness="witness.test/w1",outcome="cosigned"} 2');
    expect(metrics).toContain('picks_ledger_witness_submissions_total{witness="witness.test/w1",outcome="refused"} 1');
    expect(metrics).toMatch(/^picks_ledger_checkpoint_size 7$/m);
    expect(metrics).toMatch(/^picks_ledger_entries 7$/m);
  });
});

describe('a hostile witness', () => {
  it('cannot make the service read a huge answer or follow a redirect; it is counted and logged, and publication goes on', async () => {
    const posted: string[] = [];
    const server = createServer((req, res) => {
      posted.push(req.url ?? '');
      req.resume();
      if (req.url?.startsWith('/huge/')) {
        res.writeHead(200, { 'content-type': 'text/plain' });
        // An answer without end or length: read past 64 KiB it is refused at once (read whole,
        // it would hold the submission until the timeout, and the memory with it).
        const chunk = Buffer.alloc(64 * 1024, 0x61);
        let open = true;
        res.on('close', () => (open = false));
        const pump = () => {
          while (open) if (!res.write(chunk)) return void res.once('drain', pump);
        };
        pump();
      } else if (req.url?.startsWith('/redirect/')) {
        res.writeHead(307, { location: '/elsewhere/add-checkpoint' }).end();
      } else {
        res.writeHead(404).end();
      }
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    onTestFinished(() => new Promise<void>((resolve) => server.close(() => resolve())));
    const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
    const key = (name: string) => parseSignerKey(generateSignerKey(name, COSIGNATURE_ALGORITHM_ED25519)).text;
    const { t } = await boot({ LEDGER_WITNESSES: `${key('huge')} ${url}/huge,${key('redirect')} ${url}/redirect` });
    await publish(t, 2);
    const signed = await t.runtime.services.ledgerLog.signIfDue();
    expect(signed?.treeSize).toBe(2);
    expect(signed!.note).not.toMatch(/\u2014 (huge|redirect) /);
    // The redirect was not followed: nothing was POSTed to where it pointed.
    expect(posted).toEqual(expect.arrayContaining(['/huge/add-checkpoint', '/redirect/add-checkpoint']));
    expect(posted).not.toContain('/elsewhere/add-checkpoint');
    const metrics = await t.runtime.metrics.text();
    expect(metrics).toContain('picks_ledger_witness_submissions_total{witness="huge",outcome="refused"} 1');
    expect(metrics).toContain('picks_ledger_witness_submissions_total{witness="redirect",outcome="unreachable"} 1');
    await publish(t, 1, 2);
  });
});

describe('the tree of entries appended without it', () => {
  it('is built at start, giving the same root', async () => {
    const { t } = await boot();
    await publish(t, 9);
    const hashes = await entryHashes(t);
    // As before the tree existed (or after an older instance appended): no node at all.
    await sql(t, 'delete from ledger_tree_nodes');
    await t.runtime.services.ledgerLog.catchUp();
    expect((await t.runtime.services.ledgerLog.signIfDue())!.rootHash).toBe(treeRoot(hashes.map(leafHash)).toString('base64'));
  });

  it('is caught up by the next append (an older instance appended without it during a rolling deploy)', async () => {
    const { t, clock } = await boot();
    await publish(t, 5);
    await t.runtime.services.ledgerLog.signIfDue();
    // Entries 6 to 8 as an instance that knows no tree appends them: their nodes are missing.
    await publish(t, 3, 5);
    await sql(t, 'delete from ledger_tree_nodes where (level = 0 and idx >= 5) or (level = 1 and idx >= 2) or (level = 2 and idx >= 1) or level >= 3');
    await publish(t, 1, 8);
    clock.advance(60_000);
    const hashes = await entryHashes(t);
    expect(hashes).toHaveLength(9);
    expect((await t.runtime.services.ledgerLog.signIfDue())!.rootHash).toBe(treeRoot(hashes.map(leafHash)).toString('base64'));
    expect((await sql(t, 'select count(*)::int as n from ledger_tree_nodes where level = 0'))[0]!.n).toBe(9);
  });
});


describe('the signing key', () => {
  it('is checked at start against the latest checkpoint: another key is refused, a replacement named by LEDGER_PREVIOUS_KEY_ID signs it again', async () => {
    const dataDir = mkdtempSync(path.join(tmpdir(), 'ledger-key-'));
    onTestFinished(() => rmSync(dataDir, { recursive: true, force: true }));
    const clock = new ManualClock('2026-11-22T12:00:00Z');
    const start = (env: Record<string, string>) =>
      createRuntime(loadConfig({ ADMIN_TOKEN, WEBHOOK_SECRET_KEY, DEMO_SEED: 'false', LOG_LEVEL: 'silent', ...env }), {
        adminToken: ADMIN_TOKEN,
        clock,
        database: { kind: 'pglite', dataDir },
        migrate: true,
        startPoller: false,
        startDispatcher: false,
        startCheckpointer: false,
      });
    const first = await start({ LEDGER_SIGNING_KEY });
    await first.services.picks.publish(pickInput() as never);
    const signed = (await first.services.ledgerLog.signIfDue())!;
    await first.close();

    // A lost key file, or another deployment's key: refused, naming what to do.
    const other = generateSignerKey('test.localhost/ledger');
    await expect(start({ LEDGER_SIGNING_KEY: other })).rejects.toThrow(/did not sign the ledger's latest checkpoint \(size 1, signed by test\.localhost\/ledger\+7f448092\).*LEDGER_PREVIOUS_KEY_ID=7f448092/);
    await expect(start({ LEDGER_SIGNING_KEY: other, LEDGER_PREVIOUS_KEY_ID: 'deadbeef' })).rejects.toThrow(/LEDGER_PREVIOUS_KEY_ID=7f448092/);
    // Another origin is another log.
    await expect(start({ LEDGER_SIGNING_KEY: generateSignerKey('elsewhere.example/ledger'), LEDGER_PREVIOUS_KEY_ID: '7f448092' })).rejects.toThrow(/keeps the origin/);

    // Replaced on purpose: the latest checkpoint, same body, now signed by the new key.
    const replaced = await start({ LEDGER_SIGNING_KEY: other, LEDGER_PREVIOUS_KEY_ID: '7f448092' });
    const latest = (await replaced.services.ledgerLog.latest())!;
    expect(latest.rootHash).toBe(signed.rootHash);
    expect(verifyLogSignatures(parseNote(latest.note), [parseVerifierKey(parseSignerKey(other).text)])).toBeTruthy();
    await replaced.close();
    // And the next start, with the new key alone, is a normal one.
    await (await start({ LEDGER_SIGNING_KEY: other })).close();
  });
});
