#!/usr/bin/env node
/**
 * Verifies the public ledger of a picks service (docs/API.md, "Verifying the record"), as a
 * customer would: this file uses nothing but Node (>= 20) itself, so you can read all of it.
 *
 *   node docs/examples/verify-ledger.mjs <base_url> [--anchor <seq>:<hash>]... [--received <file.jsonl>] [--verbose]
 *   npm run verify-ledger -- <base_url> ...
 *
 * It prints a summary first (the result, or the first check that fails; entries; picks, imported
 * and withdrawn; settlements and their mean CLV), then every failure. --verbose also lists the ids
 * of the imported and withdrawn picks, every settled pick with its recomputed result and CLV, and
 * the notes.
 *
 * It downloads the whole chain (GET <base_url>/api/public/ledger, 500 entries a page) and checks,
 * reporting each failure with the entry's seq and the check's name:
 *
 *  1. hash, prev_hash  every hash is the SHA-256 of the RFC 8785 canonical JSON of the entry's
 *     seven clear fields; every prev_hash is the previous entry's hash (64 zeros for seq 1);
 *  2. seq  seq runs 1, 2, 3, ... without gaps or repeats;
 *  3. at_order  append times never go backwards;
 *  4. commitment  every revealed entry's commitment is the SHA-256 of the canonical JSON of
 *     {"pick": pick, "salt": salt}: the pick shown now is the pick committed then. (The salt is 32
 *     random bytes: nobody could guess a hidden pick by hashing the few plausible ones.) An entry
 *     failing this is not read any further;
 *  5. reveal  no entry is still hidden 5 minutes after its reveal_after (the kickoff rounded up to
 *     the quarter hour), unless a later pick.rescheduled entry of the pick moved the kickoff and
 *     that is not 5 minutes past;
 *  6. imported  a pick whose pick.published came at or after its kickoff (once revealed; before,
 *     at or after its reveal_after) is "imported" (published before the ledger existed) and
 *     listed apart, not failed: the ledger proves nothing about when it was published. (A pick
 *     whose entry says it came earlier than it did breaks check 8, which ties reveal_after to the
 *     revealed kickoff, or check 1.);
 *  7. one_published  exactly one pick.published per pick, and no entry of the pick before it;
 *  8. pick_fields  a pick's revealed entries agree on every field but status, settled_at, result,
 *     closing_odds, final_score, warnings and kickoff_at, and kickoff_at changes only at a
 *     pick.rescheduled entry; a revealed pick has its entry's pick_id, and its entry's reveal_after
 *     is its kickoff rounded up to the quarter hour (UTC; entries appended before that rule name
 *     the kickoff itself, which is also accepted). A field the earlier entry lacks is no change: the Pick gains fields
 *     (docs/API.md, "Versioning"), and an entry commits the Pick as it was shown then;
 *  9. settlement  a settled pick with a final score has the result the rules of docs/API.md
 *     ("Settlement of lines") give for that score; the closing-line value (CLV) is printed;
 *  and head, checkpoint: the service's head and daily checkpoints are entries of the chain.
 *
 * With --anchor seq:hash (repeatable) the chain's entry at seq must still have that hash: give it
 * the heads (GET /api/public/ledger/head) you archived earlier. With --received file.jsonl (one
 * webhook body per line) each body's data.ledger_seq / data.ledger_hash must be in the chain, and
 * once revealed, the pick you received must be the pick committed.
 *
 * What this proves: the record was not changed after the fact. A pick's commitment was public
 * before kickoff and its reveal matches it, so odds, selection or line cannot have been edited
 * once the result was known; entries cannot be removed, reordered or rewritten without breaking
 * every later hash. Against an operator rewriting the whole chain, only a head kept outside the
 * service protects you: an archived head (--anchor), the ledger_hash of a webhook you received
 * (--received), or someone else's copy. The times in the chain are the operator's own word,
 * backed only by such outside copies.
 *
 * What it cannot prove: that the operator published every pick it found (a pick it never
 * published is not in the ledger, so a record can still be flattered by picks it chose not to
 * publish), that final scores and closing odds are the real ones (compare them with a source you
 * trust), or anything about the timing of imported picks.
 *
 * Exit code: 0 when every check holds, 1 when one fails, 2 when the ledger could not be read.
 */
import { createHash } from 'node:crypto';
import { readFileSync, realpathSync } from 'node:fs';
import { pathToFileURL } from 'node:url';

const GENESIS_HASH = '0'.repeat(64);
const PAGE_LIMIT = 500;
const REVEAL_GRACE_MS = 5 * 60 * 1000;
/** reveal_after is the kickoff rounded up to the quarter hour (UTC); entries appended before that rule name the kickoff itself. */
const REVEAL_WINDOW_MS = 15 * 60 * 1000;
const revealAfterOf = (kickoffMs) => Math.ceil(kickoffMs / REVEAL_WINDOW_MS) * REVEAL_WINDOW_MS;
/** The pick fields that may change between a pick's entries (kickoff_at: only when rescheduled). */
const CHANGING_FIELDS = new Set(['status', 'settled_at', 'result', 'closing_odds', 'final_score', 'warnings']);
const HEX_256 = /^[0-9a-f]{64}$/;

// ---- RFC 8785 (JCS) canonical JSON and hashes

/**
 * RFC 8785 canonical JSON of a JSON value: no whitespace, object keys sorted by UTF-16 code
 * units (JavaScript's default sort), strings as JSON.stringify escapes them and numbers in
 * ECMAScript's shortest round-trip form, which is what RFC 8785 prescribes.
 */
export function canonicalJson(value) {
  if (value === null || typeof value === 'boolean' || typeof value === 'string') return JSON.stringify(value);
  if (typeof value === 'number') {
    if (!Number.isFinite(value)) throw new TypeError('canonical JSON has no NaN or Infinity');
    return JSON.stringify(value);
  }
  if (Array.isArray(value)) return `[${value.map(canonicalJson).join(',')}]`;
  if (typeof value === 'object') {
    const members = Object.keys(value)
      .sort()
      .map((key) => `${JSON.stringify(key)}:${canonicalJson(value[key])}`);
    return `{${members.join(',')}}`;
  }
  throw new TypeError(`not a JSON value: ${typeof value}`);
}

export function sha256Hex(text) {
  return createHash('sha256').update(text, 'utf8').digest('hex');
}

/** The hash of an entry: over exactly these seven fields. */
export function entryHash({ seq, type, at, pick_id, reveal_after, commitment, prev_hash }) {
  return sha256Hex(canonicalJson({ seq, type, at, pick_id, reveal_after, commitment, prev_hash }));
}

export function commitmentOf(pick, salt) {
  return sha256Hex(canonicalJson({ pick, salt }));
}

// ---- Settlement rules (docs/API.md, "Settlement of lines")

/** One whole or half line: above it wins, on it is void (a push), below it loses. */
const marginResult = (margin) => (margin > 0 ? 'won' : margin < 0 ? 'lost' : 'void');

/** A line bet; a quarter line is half the stake on each neighbouring half and whole line. */
function lineResult(point, marginAt) {
  if (typeof point !== 'number' || !Number.isInteger(point * 4)) return null;
  if (Number.isInteger(point * 2)) return marginResult(marginAt(point));
  const lower = marginResult(marginAt(point - 0.25));
  const upper = marginResult(marginAt(point + 0.25));
  if (lower === upper) return lower;
  if (lower !== 'void' && upper !== 'void') return null;
  return lower === 'won' || upper === 'won' ? 'half_won' : 'half_lost';
}

/**
 * The results a final score allows for a pick: usually one; for an h2h team pick on a level score
 * `lost` (three-way market) or `void` (two-way market). Null when the rules do not cover the pick.
 */
export function resultsFromScore(pick, home, away) {
  const { market, selection, line, home_team: homeTeam, away_team: awayTeam } = pick;
  const isHome = selection === homeTeam;
  const isAway = selection === awayTeam;
  if (market === 'h2h') {
    if (selection === 'Draw') return [home === away ? 'won' : 'lost'];
    if (!isHome && !isAway) return null;
    if (home === away) return ['lost', 'void'];
    return [(home > away) === isHome ? 'won' : 'lost'];
  }
  let result = null;
  if (market === 'spreads' && (isHome || isAway)) {
    const [own, other] = isHome ? [home, away] : [away, home];
    result = lineResult(line, (point) => own + point - other);
  } else if (market === 'totals' && (selection === 'Over' || selection === 'Under')) {
    const total = home + away;
    result = lineResult(line, (point) => (selection === 'Over' ? total - point : point - total));
  }
  return result === null ? null : [result];
}

// ---- Reading the ledger

async function getJson(url) {
  const response = await fetch(url, { headers: { accept: 'application/json' } });
  if (!response.ok) throw new Error(`GET ${url} answered HTTP ${response.status}`);
  return response.json();
}

/** Every entry, in seq order, page by page. */
async function fetchChain(base) {
  const entries = [];
  let after = 0;
  for (;;) {
    const page = await getJson(`${base}/api/public/ledger?after=${after}&limit=${PAGE_LIMIT}`);
    entries.push(...page.entries);
    if (page.next_after === null || page.next_after === undefined) return entries;
    if (!(page.next_after > after)) throw new Error(`the ledger's next_after ${page.next_after} does not move past ${after}`);
    after = page.next_after;
  }
}

/** An entry's hash; null when a field is missing, so the hash check fails. */
function hashOrNull(entry) {
  try {
    return entryHash(entry);
  } catch {
    return null;
  }
}

const isRevealed = (entry) => entry.pick !== undefined && entry.pick !== null;
const time = (iso) => Date.parse(iso);

// ---- The checks

/**
 * Downloads and checks the ledger of the service at `baseUrl`. anchors: [{ seq, hash }] heads
 * archived earlier; received: webhook bodies (objects or JSON text); now: the time check 5 uses.
 */
export async function verifyLedger(baseUrl, { anchors = [], received = [], now = new Date() } = {}) {
  const base = baseUrl.replace(/\/+$/, '');
  // The head and checkpoints first: the chain fetched after them must contain them.
  const head = await getJson(`${base}/api/public/ledger/head`);
  const { checkpoints } = await getJson(`${base}/api/public/ledger/checkpoints`);
  const entries = await fetchChain(base);

  const failures = [];
  const notes = [];
  const fail = (seq, check, message) => failures.push({ seq, check, message });
  const bySeq = new Map(entries.map((entry) => [entry.seq, entry]));
  /** Revealed entries whose pick and salt match their commitment: the only picks worth reading. */
  const trusted = new Set();

  // 1-4: the chain itself.
  let previous = null;
  for (const entry of entries) {
    const expectedSeq = previous === null ? 1 : previous.seq + 1;
    if (entry.seq > expectedSeq) {
      const missing = entry.seq - 1 === expectedSeq ? `seq ${expectedSeq} is missing` : `seqs ${expectedSeq} to ${entry.seq - 1} are missing`;
      fail(expectedSeq, 'seq', `${missing}: ${previous === null ? 'the chain starts' : `seq ${previous.seq} is followed`} at ${entry.seq}`);
    } else if (entry.seq < expectedSeq) {
      fail(entry.seq, 'seq', `seq ${entry.seq} comes after seq ${previous.seq}: repeated or out of order`);
    }
    if (entry.hash !== hashOrNull(entry)) fail(entry.seq, 'hash', 'the hash is not the hash of the entry\'s fields: the entry was changed');
    const expectedPrev = previous === null ? GENESIS_HASH : previous.hash;
    if (entry.prev_hash !== expectedPrev) {
      fail(entry.seq, 'prev_hash', previous === null ? 'the first entry does not link to 64 zeros' : `prev_hash is not the hash of seq ${previous.seq}: an entry was removed, added or moved`);
    }
    if (previous !== null && !(time(entry.at) >= time(previous.at))) fail(entry.seq, 'at_order', `appended at ${entry.at}, before seq ${previous.seq} (${previous.at})`);
    if (isRevealed(entry)) {
      if (typeof entry.salt === 'string' && HEX_256.test(entry.salt) && commitmentOf(entry.pick, entry.salt) === entry.commitment) trusted.add(entry);
      else fail(entry.seq, 'commitment', 'the revealed pick and salt do not give the commitment: the pick shown is not the pick committed');
    }
    previous = entry;
  }

  // Per pick, in seq order.
  const picks = new Map();
  for (const entry of entries) {
    if (!picks.has(entry.pick_id)) picks.set(entry.pick_id, []);
    picks.get(entry.pick_id).push(entry);
  }

  const imported = [];
  const withdrawn = [];
  const settlements = [];
  for (const [pickId, pickEntries] of picks) {
    // A pick whose last entry is a hold was withdrawn before kickoff: it stays on the record.
    if (pickEntries.at(-1).type === 'pick.held') withdrawn.push(pickId);
    // 5: hidden too long, unless a later reschedule moved the kickoff (postponed).
    pickEntries.forEach((entry, i) => {
      if (isRevealed(entry) || now.getTime() < time(entry.reveal_after) + REVEAL_GRACE_MS) return;
      const postponed = pickEntries.slice(i + 1).some((later) => later.type === 'pick.rescheduled' && now.getTime() < time(later.reveal_after) + REVEAL_GRACE_MS);
      if (!postponed) fail(entry.seq, 'reveal', `still not revealed more than 5 minutes after its reveal_after ${entry.reveal_after}`);
    });

    // 7: one pick.published, first.
    const published = pickEntries.filter((entry) => entry.type === 'pick.published');
    if (pickEntries[0].type !== 'pick.published') fail(pickEntries[0].seq, 'one_published', `pick ${pickId} has a ${pickEntries[0].type} entry before any pick.published`);
    for (const extra of published.slice(1)) fail(extra.seq, 'one_published', `a second pick.published of pick ${pickId} (the first is seq ${published[0].seq})`);

    // 6: published before kickoff, or imported.
    if (published.length > 0) {
      const first = published[0];
      // reveal_after may be up to 15 minutes after the kickoff: once revealed, the kickoff itself decides.
      const kickoff = trusted.has(first) ? time(first.pick.kickoff_at) : time(first.reveal_after);
      if (time(first.at) >= kickoff) imported.push(pickId);
    }

    // 8: the revealed picks agree with each other and with their entries.
    let before = null;
    for (const entry of pickEntries.filter((e) => trusted.has(e))) {
      const { pick } = entry;
      if (pick.id !== entry.pick_id) fail(entry.seq, 'pick_fields', `the revealed pick is ${pick.id}, the entry is about ${entry.pick_id}`);
      const kickoffMs = time(pick.kickoff_at);
      if (time(entry.reveal_after) !== revealAfterOf(kickoffMs) && time(entry.reveal_after) !== kickoffMs) {
        fail(entry.seq, 'pick_fields', `reveal_after ${entry.reveal_after} is not the pick's kickoff ${pick.kickoff_at} rounded up to the quarter hour`);
      }
      if (before !== null) {
        for (const field of new Set([...Object.keys(before.pick), ...Object.keys(pick)])) {
          if (CHANGING_FIELDS.has(field) || (field === 'kickoff_at' && entry.type === 'pick.rescheduled')) continue;
          // Added to the Pick after the earlier entry was committed; a field that disappears is still a change.
          if (!Object.hasOwn(before.pick, field)) continue;
          const [was, is] = [canonicalJson(before.pick[field] ?? null), canonicalJson(pick[field] ?? null)];
          if (was !== is) fail(entry.seq, 'pick_fields', `${field} changed from ${was} (seq ${before.seq}) to ${is}`);
        }
      }
      before = entry;
    }

    // 9: settlements.
    for (const entry of pickEntries.filter((e) => e.type === 'pick.settled' && trusted.has(e))) {
      const { pick } = entry;
      const settlement = { seq: entry.seq, pickId, pick, result: pick.result, byHand: false, recomputed: null, clv: null };
      const { home, away } = pick.final_score ?? {};
      if (typeof home === 'number' && typeof away === 'number') {
        const allowed = resultsFromScore(pick, home, away);
        settlement.recomputed = allowed === null ? null : allowed.join(' or ');
        if (allowed === null) notes.push(`seq ${entry.seq}: ${pick.market} ${pick.selection} ${pick.line ?? ''} is not covered by the settlement rules, not recomputed`);
        else if (!allowed.includes(pick.result)) fail(entry.seq, 'settlement', `settled ${pick.result}, but the final ${home}-${away} gives ${settlement.recomputed}`);
      } else {
        settlement.byHand = true; // settled by hand, not recomputable: no final score
      }
      if (typeof pick.closing_odds === 'number' && pick.closing_odds > 0) settlement.clv = 100 * (pick.odds / pick.closing_odds - 1);
      settlements.push(settlement);
    }
  }

  // The service's own head and checkpoints must be entries of the chain.
  if (head.seq > 0 && bySeq.get(head.seq)?.hash !== head.hash) fail(head.seq, 'head', `the head (seq ${head.seq}, ${head.hash}) is not in the chain served`);
  for (const checkpoint of checkpoints) {
    if (bySeq.get(checkpoint.seq)?.hash !== checkpoint.hash) fail(checkpoint.seq, 'checkpoint', `the checkpoint of ${checkpoint.checkpoint} is not in the chain served`);
  }

  // --anchor: heads archived earlier.
  for (const anchor of anchors) {
    const entry = bySeq.get(anchor.seq);
    if (!entry) fail(anchor.seq, 'anchor', `the archived head ${anchor.seq}:${anchor.hash} is not in the chain (it ends at ${entries.at(-1)?.seq ?? 0})`);
    else if (entry.hash !== anchor.hash) fail(anchor.seq, 'anchor', `the archived hash ${anchor.hash} is now ${entry.hash}: history was rewritten`);
  }

  // --received: webhook bodies.
  const receivedSummary = { checked: 0, skipped: 0, unrevealed: 0 };
  for (const item of received) {
    const body = typeof item === 'string' ? JSON.parse(item) : item;
    const data = body?.data;
    if (!Number.isInteger(data?.ledger_seq) || typeof data?.ledger_hash !== 'string') {
      receivedSummary.skipped += 1;
      continue;
    }
    receivedSummary.checked += 1;
    const entry = bySeq.get(data.ledger_seq);
    if (!entry || entry.hash !== data.ledger_hash) {
      fail(data.ledger_seq, 'received', `webhook ${body.id} names ${data.ledger_seq}:${data.ledger_hash}, the chain has ${entry ? entry.hash : 'no such entry'}`);
    } else if (!trusted.has(entry)) {
      receivedSummary.unrevealed += 1;
    } else {
      // The fields the entry committed must be those received. Others are not committed: the
      // ledger's own, the market watch (availability, best_odds_since_published: they change after
      // publication without an entry), and any the Pick gained after the entry was made.
      const differs = Object.keys(entry.pick).some((field) => canonicalJson(data[field] ?? null) !== canonicalJson(entry.pick[field] ?? null));
      if (differs) fail(entry.seq, 'received', `webhook ${body.id} carried a pick that differs from the one committed at seq ${entry.seq}`);
    }
  }

  const counts = {};
  for (const entry of entries) counts[entry.type] = (counts[entry.type] ?? 0) + 1;
  const clvs = settlements.map((s) => s.clv).filter((clv) => clv !== null);
  return {
    ok: failures.length === 0,
    failures,
    notes,
    entries,
    head,
    counts,
    picks: picks.size,
    imported,
    withdrawn,
    settlements,
    meanClv: clvs.length === 0 ? null : clvs.reduce((sum, clv) => sum + clv, 0) / clvs.length,
    anchors: anchors.length,
    received: receivedSummary,
  };
}

// ---- The command line

function parseArguments(args) {
  const options = { baseUrl: null, anchors: [], received: [], verbose: false };
  for (let i = 0; i < args.length; i += 1) {
    const arg = args[i];
    if (arg === '--verbose' || arg === '-v') {
      options.verbose = true;
    } else if (arg === '--anchor') {
      const match = /^(\d+):([0-9a-f]{64})$/.exec(args[++i] ?? '');
      if (!match) throw new Error('--anchor takes <seq>:<hash>, the hash in 64 lower-case hex digits');
      options.anchors.push({ seq: Number(match[1]), hash: match[2] });
    } else if (arg === '--received') {
      const file = args[++i];
      if (!file) throw new Error('--received takes a file of webhook bodies, one JSON body a line');
      options.received.push(...readReceived(file));
    } else if (options.baseUrl === null && !arg.startsWith('--')) {
      options.baseUrl = arg;
    } else {
      throw new Error(`unexpected argument ${arg}`);
    }
  }
  if (options.baseUrl === null) throw new Error('the service\'s base URL is missing');
  return options;
}

/** The bodies of a JSON-lines file; a line that is not JSON is kept as null (skipped, counted). */
function readReceived(file) {
  return readFileSync(file, 'utf8')
    .split('\n')
    .filter((line) => line.trim() !== '')
    .map((line) => {
      try {
        return JSON.parse(line);
      } catch {
        return null;
      }
    });
}

/** Failures listed without --verbose: enough to act on; a rewritten chain can fail at every entry. */
const FAILURES_SHOWN = 20;

const signedPercent = (value) => `${value >= 0 ? '+' : ''}${value.toFixed(2)} %`;
const plural = (count, one, many = `${one}s`) => `${count} ${count === 1 ? one : many}`;

/** The summary, then every failure; with `verbose` the ids of imported and withdrawn picks, the settlements and the notes. */
export function formatReport(baseUrl, report, { verbose = false } = {}) {
  const lines = [];
  const out = (line = '') => lines.push(line);
  const last = report.entries.at(-1);
  const first = report.failures[0];
  const settlements = report.settlements;
  const recomputed = settlements.filter((s) => s.recomputed !== null).length;
  const byHand = settlements.filter((s) => s.byHand).length;
  const withClv = settlements.filter((s) => s.clv !== null).length;

  out(`Ledger of ${baseUrl}`);
  out(
    report.ok
      ? '  Result       OK: every check holds.'
      : `  Result       FAILED: ${plural(report.failures.length, 'check')} do${report.failures.length === 1 ? 'es' : ''} not hold; the first at seq ${first.seq} (${first.check}): ${first.message}`,
  );
  out(`  Entries      ${report.entries.length}${last ? ` (seq 1 to ${last.seq}; last hash ${last.hash})` : ''}`);
  out(`  Picks        ${report.picks}: ${report.imported.length} imported, ${report.withdrawn.length} withdrawn`);
  out(
    `  Settlements  ${settlements.length}: ${recomputed} recomputed from the final score, ${byHand} settled by hand, ${settlements.length - recomputed - byHand} not covered by the rules` +
      (report.meanClv === null ? '' : `; mean CLV ${signedPercent(report.meanClv)} over ${withClv} with closing odds`),
  );
  if (report.anchors > 0) out(`  Anchors      ${report.anchors} checked`);
  const { checked, skipped, unrevealed } = report.received;
  if (checked + skipped > 0) out(`  Webhooks     ${checked} bodies checked (${unrevealed} not revealed yet: hash only), ${skipped} skipped without ledger_seq/ledger_hash`);
  if (report.notes.length > 0) out(`  Notes        ${report.notes.length}${verbose ? '' : ' (--verbose lists them)'}`);
  out(`  By type      ${Object.entries(report.counts).map(([type, count]) => `${type} ${count}`).join(', ') || 'none'}`);
  if (report.imported.length > 0) out('Imported picks were published at or after their kickoff, before the ledger existed: the ledger says nothing about their timing.');
  if (report.withdrawn.length > 0) out('Withdrawn picks were held before kickoff and not shown again; they are revealed like the others.');
  if (!verbose && report.imported.length + report.withdrawn.length + settlements.length > 0) out('--verbose lists the imported and withdrawn picks by id, and every settled pick.');

  if (!report.ok) {
    const shown = verbose ? report.failures : report.failures.slice(0, FAILURES_SHOWN);
    out(`FAILED: ${plural(report.failures.length, 'check')} do${report.failures.length === 1 ? 'es' : ''} not hold:`);
    for (const failure of shown) out(`  seq ${failure.seq}  ${failure.check}: ${failure.message}`);
    if (shown.length < report.failures.length) out(`  ... and ${report.failures.length - shown.length} more (--verbose lists them all)`);
  }
  if (!verbose) return `${lines.join('\n')}\n`;

  if (report.imported.length > 0) {
    out(`Imported picks: ${report.imported.length}`);
    for (const id of report.imported) out(`  ${id}`);
  }
  if (report.withdrawn.length > 0) {
    out(`Withdrawn picks: ${report.withdrawn.length}`);
    for (const id of report.withdrawn) out(`  ${id}`);
  }
  if (settlements.length > 0) {
    out(`Settled picks: ${settlements.length}`);
    for (const s of [...settlements].sort((a, b) => a.seq - b.seq)) {
      const score = s.byHand
        ? 'settled by hand, not recomputable'
        : s.recomputed === null
          ? 'not covered by the settlement rules'
          : `final ${s.pick.final_score.home}-${s.pick.final_score.away} gives ${s.recomputed}`;
      const clv = s.clv === null ? 'no closing odds' : `CLV ${signedPercent(s.clv)} (odds ${s.pick.odds}, closing odds ${s.pick.closing_odds})`;
      out(`  seq ${s.seq}  ${s.pick.home_team} v ${s.pick.away_team}: ${s.pick.pick}  ${s.result}  (${score}; ${clv})`);
    }
  }
  for (const note of report.notes) out(`Note: ${note}`);
  return `${lines.join('\n')}\n`;
}

async function main(args) {
  let options;
  try {
    options = parseArguments(args);
  } catch (error) {
    process.stderr.write(`${error.message}\nUsage: node verify-ledger.mjs <base_url> [--anchor <seq>:<hash>]... [--received <file.jsonl>] [--verbose]\n`);
    return 2;
  }
  let report;
  try {
    report = await verifyLedger(options.baseUrl, { anchors: options.anchors, received: options.received });
  } catch (error) {
    process.stderr.write(`Could not read the ledger: ${error.message}\n`);
    return 2;
  }
  process.stdout.write(formatReport(options.baseUrl, report, { verbose: options.verbose }));
  return report.ok ? 0 : 1;
}

/** Run as a program (not imported): this file is the script node was started with. */
function isMainModule() {
  try {
    return process.argv[1] !== undefined && import.meta.url === pathToFileURL(realpathSync(process.argv[1])).href;
  } catch {
    return false;
  }
}
if (isMainModule()) process.exitCode = await main(process.argv.slice(2));
