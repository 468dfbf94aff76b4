/**
 * The soak's invariants, checked once everything has drained and stopped (docs in
 * bench/soak.mjs, a to h): each returns { id, title, pass, headline, ...details }.
 */
import { instanceUpThroughout } from './instances.mjs';
import { LIMIT_CODES, fmtS, monthOf, settings } from './settings.mjs';
import { adminPicks, calls, keys, lives, rel, run, streamClients, streamConnections, timeline } from './state.mjs';

export function classify(rec) {
  if (rec.kind === 'usage') return 'uncounted-endpoint';
  if (rec.status === 'lost') return 'lost';
  if (rec.status === 401) return 'unauthorized';
  if (rec.status === 429) return LIMIT_CODES.has(rec.code) ? 'refused' : 'counted';
  if (rec.status === 503) return 'unavailable';
  if (rec.status >= 500) return 'error';
  if (rec.status >= 200 && rec.status < 500) return 'counted';
  return 'other';
}

export function checkMonthlyUsage(db) {
  const rows = [];
  const byKey = new Map(keys.map((k) => [k.label, k]));
  const stored = new Map(db.monthlyUsage.map((u) => [`${u.api_key_id}|${u.month}`, Number(u.request_count)]));
  const perKeyMonth = new Map();
  const bucket = (label, month) => {
    const id = `${label}|${month}`;
    if (!perKeyMonth.has(id)) perKeyMonth.set(id, { key: label, month, counted: 0, lost: 0, uncertain: 0, unavailable: 0, refused: 0, unauthorized: 0, errors: 0, usageReads: 0 });
    return perKeyMonth.get(id);
  };
  for (const k of keys) bucket(k.label, monthOf(run.startedAt));
  for (const rec of calls) {
    if (!rec.key || rec.key === 'admin' || !byKey.has(rec.key)) continue;
    const cls = classify(rec);
    const m1 = monthOf(rec.sent);
    const m2 = monthOf(rec.answered ?? rec.sent);
    const b = bucket(rec.key, m1);
    if (cls === 'uncounted-endpoint') b.usageReads += 1;
    else if (cls === 'lost') {
      b.lost += 1;
      if (m2 !== m1) bucket(rec.key, m2).lost += 1;
    } else if (cls === 'counted') {
      if (m1 === m2) b.counted += 1;
      else {
        b.uncertain += 1;
        bucket(rec.key, m2).uncertain += 1;
      }
    } else if (cls === 'error') {
      b.errors += 1;
      b.uncertain += 1;
    } else if (cls === 'unavailable') b.unavailable += 1;
    else if (cls === 'refused') b.refused += 1;
    else if (cls === 'unauthorized') b.unauthorized += 1;
  }
  for (const b of perKeyMonth.values()) {
    const key = byKey.get(b.key);
    b.tier = key.tier;
    b.stored = stored.get(`${key.id}|${b.month}`) ?? 0;
    b.upper = b.counted + b.lost + b.uncertain;
    b.pass = b.stored >= b.counted && b.stored <= b.upper && b.unauthorized === 0;
    b.verdict =
      b.unauthorized > 0
        ? '401 answers'
        : b.stored < b.counted
          ? `${b.counted - b.stored} answered requests missing`
          : b.stored > b.upper
            ? `${b.stored - b.upper} more than answered + lost${b.stored - b.upper <= b.unavailable ? `, within its ${b.unavailable} answers 503: were they counted?` : ''}`
            : 'ok';
    rows.push(b);
  }
  rows.sort((a, b) => a.key.localeCompare(b.key) || a.month.localeCompare(b.month));
  const failing = rows.filter((row) => !row.pass);
  return {
    id: 'a',
    title: 'monthly_usage per key within [answered-counted, answered-counted + lost]',
    pass: failing.length === 0,
    headline: `${rows.length - failing.length}/${rows.length} key-months within bounds${failing.length ? `; failing: ${failing.map((f) => `${f.key} (${f.verdict})`).join(', ')}` : ''}`,
    rows,
  };
}

export function redisOutages() {
  return timeline
    .filter((f) => f.kind === 'redis')
    .map((f) => {
      const start = f.startedAt;
      const end = f.recoveredAt ?? Date.now();
      const processes = lives.filter((life) => life.spawnedAt <= end && (life.exitedAt === null || life.exitedAt >= start));
      return { start, end, processes: processes.length };
    });
}

export function checkHourly() {
  const outages = redisOutages();
  const rows = [];
  for (const key of keys) {
    const limit = settings.tierLimits[key.tier].hourly;
    const admitted = calls.filter((rec) => rec.key === key.label && classify(rec) === 'counted').sort((a, b) => a.sent - b.sent);
    // Requests whose [sent, answered] touches no Redis outage were decided by Redis, whose hourly
    // window counts its own decisions only (the fallback's admissions reach the month counters):
    // at most the limit of them in any window, outages or not.
    const outside = (rec) => !outages.some((o) => rec.sent <= o.end && rec.answered >= o.start);
    let worst = { count: 0, bound: limit, start: null, outages: 0, processes: 0, ratio: 0 };
    let maxOutside = 0;
    let violations = 0;
    let outsideViolations = 0;
    for (let i = 0; i < admitted.length; i += 1) {
      const start = admitted[i].sent;
      const end = start + 3_600_000;
      // Only requests certainly decided inside the window: sent at or after its start, answered by its end.
      let count = 0;
      let countOutside = 0;
      for (let j = i; j < admitted.length && admitted[j].sent <= end; j += 1) {
        if (admitted[j].answered > end) continue;
        count += 1;
        if (outside(admitted[j])) countOutside += 1;
      }
      const overlapping = outages.filter((o) => o.start <= end && o.end >= start);
      const processes = overlapping.reduce((sum, o) => sum + o.processes, 0);
      const bound = limit * (1 + processes);
      if (count > bound) violations += 1;
      if (countOutside > limit) outsideViolations += 1;
      maxOutside = Math.max(maxOutside, countOutside);
      const ratio = count / bound;
      if (ratio > worst.ratio || (worst.start === null && i === 0)) worst = { count, bound, start, outages: overlapping.length, processes, ratio };
    }
    // Per outage, the brief's formula as it stands: requests sent and answered inside one outage
    // were decided by the fallbacks (at most the limit per process) or by Redis once it was back
    // (at most the limit in the hour).
    let maxInOutage = 0;
    let outageViolations = 0;
    for (const o of outages) {
      const inside = admitted.filter((rec) => rec.sent >= o.start && rec.answered <= o.end).length;
      maxInOutage = Math.max(maxInOutage, inside);
      if (inside > limit * (1 + o.processes)) outageViolations += 1;
    }
    rows.push({
      key: key.label,
      tier: key.tier,
      limit,
      admitted: admitted.length,
      maxInOneOutage: maxInOutage,
      violatingOutages: outageViolations,
      maxInWindow: worst.count,
      bound: worst.bound,
      windowStart: rel(worst.start),
      outagesInWindow: worst.outages,
      processesInOutages: worst.processes,
      violatingWindows: violations,
      maxOutsideOutagesInWindow: maxOutside,
      outsideViolatingWindows: outsideViolations,
      pass: violations === 0 && outsideViolations === 0 && outageViolations === 0,
    });
  }
  const failing = rows.filter((row) => !row.pass);
  return {
    id: 'b',
    title: 'admitted per rolling 3600 s <= hourly limit (x (1 + P) when the window overlaps a Redis outage)',
    pass: failing.length === 0,
    headline: `${rows.length - failing.length}/${rows.length} keys within bounds; ${outages.length} Redis outage(s)${outages.length ? ` (P = ${outages.map((o) => o.processes).join(', ')})` : ''}${failing.length ? `; failing: ${failing.map((f) => (f.violatingWindows ? `${f.key} ${f.maxInWindow} > ${f.bound}` : f.outsideViolatingWindows ? `${f.key} ${f.maxOutsideOutagesInWindow} > ${f.limit} outside outages` : `${f.key} ${f.maxInOneOutage} in one outage`)).join(', ')}` : ''}`,
    rows,
    outages: outages.map((o) => ({ start: rel(o.start), end: rel(o.end), processes: o.processes })),
  };
}

export function checkAdminPicks(db) {
  const visible = new Map(db.picks.map((p) => [p.id, p.status]));
  const missing = adminPicks.published.filter((id) => !visible.has(id));
  const invisible = adminPicks.published.filter((id) => visible.has(id) && !['published', 'settled'].includes(visible.get(id)));
  const settledMismatch = [...adminPicks.settled].filter((id) => visible.get(id) !== 'settled');
  return {
    id: 'c',
    title: 'every pick id the admin received exists',
    pass: missing.length === 0 && invisible.length === 0,
    headline: `${adminPicks.published.length - missing.length}/${adminPicks.published.length} published picks found${invisible.length ? `, ${invisible.length} not visible` : ''}; ${adminPicks.settled.size} settled by the admin (${settledMismatch.length} not settled in PostgreSQL)`,
    missing,
    invisible,
    settledMismatch,
  };
}

export function checkWebhooks(db, receiver, drain) {
  const subsById = new Map(db.subscriptions.map((s) => [s.id, s]));
  const ourSubs = db.subscriptions.filter((s) => receiver.subscriptions.has(new URL(s.url).pathname));
  const deliveries = new Map(db.deliveries.map((d) => [`${d.subscription_id}|${d.event_id}`, d]));
  // What the receiver saw, by (path, event id): verified arrivals.
  const verified = new Map();
  let badSignatures = 0;
  let unknownPaths = 0;
  let deliveryIdMismatch = 0;
  const arrivalsByDelivery = new Map();
  for (const a of receiver.arrivals) {
    if (!receiver.subscriptions.has(a.path)) {
      unknownPaths += 1;
      continue;
    }
    if (!(a.standardOk && a.serviceOk)) {
      badSignatures += 1;
      continue;
    }
    const id = `${a.path}|${a.eventId}`;
    verified.set(id, (verified.get(id) ?? 0) + 1);
    arrivalsByDelivery.set(a.delivery, (arrivalsByDelivery.get(a.delivery) ?? 0) + 1);
  }
  let expected = 0;
  let notFannedOut = 0;
  let notReceived = 0;
  let notSucceeded = 0;
  const samples = [];
  const statuses = {};
  for (const s of ourSubs) {
    const subPath = new URL(s.url).pathname;
    const events = typeof s.events === 'string' ? JSON.parse(s.events) : s.events;
    for (const e of db.outbox) {
      if (!events.includes(e.type) || new Date(e.created_at) < new Date(s.created_at)) continue;
      expected += 1;
      const d = deliveries.get(`${s.id}|${e.id}`);
      if (!d) {
        notFannedOut += 1;
        if (samples.length < 10) samples.push({ problem: 'no delivery row', subscription: subPath, event: e.id, seq: e.seq });
        continue;
      }
      statuses[d.status] = (statuses[d.status] ?? 0) + 1;
      if (d.status !== 'succeeded') {
        notSucceeded += 1;
        if (samples.length < 10) samples.push({ problem: `delivery ${d.status}`, subscription: subPath, event: e.id, attempts: d.attempt_count });
      }
      if (!verified.has(`${subPath}|${e.id}`)) {
        notReceived += 1;
        if (samples.length < 10) samples.push({ problem: 'never reached the receiver with valid signatures', subscription: subPath, event: e.id, delivery: d.id });
      } else if (!arrivalsByDelivery.has(d.id)) deliveryIdMismatch += 1;
    }
  }
  const pendingAnywhere = db.deliveries.filter((d) => d.status === 'pending').length;
  const duplicates = [...arrivalsByDelivery.values()].filter((n) => n > 1).length;
  const pass = ourSubs.length > 0 && notFannedOut === 0 && notReceived === 0 && notSucceeded === 0 && badSignatures === 0 && unknownPaths === 0 && pendingAnywhere === 0;
  return {
    id: 'd',
    title: 'every webhook event reached the receiver with valid signatures; none pending',
    pass,
    headline: `${expected} (event x subscription) over ${ourSubs.length} subscriptions: ${expected - notReceived} received verified, ${notFannedOut} without a delivery row, ${notSucceeded} not succeeded (${JSON.stringify(statuses)}); ${receiver.arrivals.length} attempts arrived, ${badSignatures} with a bad signature, ${unknownPaths} to unknown paths, ${duplicates} deliveries received more than once (at least once: allowed), ${pendingAnywhere} pending at the end${drain.timedOut ? ' (the drain timed out)' : ''}`,
    expected,
    notFannedOut,
    notReceived,
    notSucceeded,
    badSignatures,
    unknownPaths,
    deliveryIdMismatch,
    pendingAnywhere,
    attempts: receiver.arrivals.length,
    injectedFailures: receiver.arrivals.filter((a) => a.answered !== 200).length,
    samples,
    subscriptions: subsById.size,
  };
}

export function checkEnginePicks(db, feed) {
  const engine = db.picks.filter((p) => p.event_id !== null);
  const slots = new Map();
  for (const p of engine) {
    const slot = `${p.event_id}|${p.event_generation}|${p.market}|${p.selection}`;
    slots.set(slot, (slots.get(slot) ?? 0) + 1);
  }
  const duplicates = [...slots.entries()].filter(([, n]) => n > 1);
  // Also per (event, market, selection) across generations: the feed never reuses an id, so any repeat is suspect.
  const loose = new Map();
  for (const p of engine) {
    const slot = `${p.event_id}|${p.market}|${p.selection}`;
    loose.set(slot, (loose.get(slot) ?? 0) + 1);
  }
  const looseDuplicates = [...loose.entries()].filter(([, n]) => n > 1);
  const byStatus = {};
  for (const p of engine) byStatus[p.status] = (byStatus[p.status] ?? 0) + 1;
  return {
    id: 'e',
    title: 'no duplicate engine pick (event, generation, market, selection)',
    pass: duplicates.length === 0 && looseDuplicates.length === 0,
    headline: `${engine.length} engine picks ${JSON.stringify(byStatus)} from ${feed.stats.valueOffers} value offers (${feed.stats.reviewOffers} priced to be held for review, ${feed.stats.betterPrices} better prices on picked outcomes); ${duplicates.length} duplicate slots${looseDuplicates.length ? `, ${looseDuplicates.length} across generations` : ''}`,
    duplicates: duplicates.slice(0, 20),
    looseDuplicates: looseDuplicates.slice(0, 20),
  };
}

export function checkStreams(db) {
  const hidden = new Set(db.picks.filter((p) => !['published', 'settled'].includes(p.status)).map((p) => p.id));
  const published = db.outbox.filter((e) => e.type === 'pick.published' && !hidden.has(e.pick_id)).map((e) => ({ seq: Number(e.seq), pickId: e.pick_id })).sort((a, b) => a.seq - b.seq);
  const pickOfSeq = new Map(published.map((e) => [e.seq, e.pickId]));
  const maxSeq = published.length ? published.at(-1).seq : null;
  const inRange = (lo, hi) => published.filter((e) => e.seq > lo && e.seq <= hi).map((e) => e.seq);
  let resumed = 0;
  let resumedChecked = 0;
  let checkedEvents = 0;
  let gaps = 0;
  let duplicates = 0;
  let outOfOrder = 0;
  let wrongPick = 0;
  const samples = [];
  const opened = streamConnections.filter((c) => c.status === 200);
  for (const c of opened) {
    duplicates += c.duplicates;
    outOfOrder += c.outOfOrder;
    c.seqs.forEach((seq, i) => {
      if (pickOfSeq.has(seq) && c.pickIds[i] !== pickOfSeq.get(seq)) wrongPick += 1;
    });
    if (c.resumeFrom !== null) resumed += 1;
    if (c.seqs.length === 0) continue;
    const from = c.resumeFrom !== null ? c.resumeFrom : c.seqs[0] - 1;
    const expected = inRange(from, c.seqs.at(-1));
    const got = new Set(c.seqs);
    const missing = expected.filter((seq) => !got.has(seq));
    checkedEvents += expected.length;
    if (c.resumeFrom !== null) resumedChecked += 1;
    if (missing.length) {
      gaps += missing.length;
      if (samples.length < 10) samples.push({ client: c.client, port: c.port, resumeFrom: c.resumeFrom, opened: rel(c.headersAt), ended: rel(c.endedAt), end: c.end, missing: missing.slice(0, 10), received: c.seqs.length });
    }
  }
  // Each client's stream reached the newest event by the end of the drain.
  const behind = streamClients.filter((client) => maxSeq !== null && client.lastSeq !== maxSeq).map((client) => ({ client: client.index, lastSeq: client.lastSeq, maxSeq }));
  const resumedRefused = streamConnections.filter((c) => c.resumeFrom !== null && c.status !== 200).length;
  return {
    id: 'f',
    title: 'SSE streams resumed with Last-Event-ID got every sequence after it, without a gap',
    pass: gaps === 0 && duplicates === 0 && outOfOrder === 0 && wrongPick === 0 && behind.length === 0 && (streamClients.length === 0 || resumedChecked > 0),
    headline: `${opened.length} connections (${resumed} resumed with Last-Event-ID, ${resumedChecked} of them received events; ${resumedRefused} resume attempts refused or lost), ${checkedEvents} sequence numbers checked against outbox_events: ${gaps} missing, ${duplicates} duplicated, ${outOfOrder} out of order, ${wrongPick} with another pick; ${streamClients.length - behind.length}/${streamClients.length} clients reached the newest seq ${maxSeq}`,
    samples,
    behind,
  };
}

export function checkErrorsAndHangs() {
  const errors = calls.filter((rec) => (typeof rec.status === 'number' && rec.status >= 500 && rec.status !== 503) || rec.internal);
  const timeouts = calls.filter((rec) => rec.lost === 'timeout');
  const hung = timeouts.filter((rec) => instanceUpThroughout(rec.port, rec.sent, rec.answered));
  const lostWhileUp = calls.filter((rec) => rec.status === 'lost' && rec.lost !== 'timeout' && instanceUpThroughout(rec.port, rec.sent, rec.answered));
  const byKind = {};
  for (const rec of lostWhileUp) byKind[rec.lost] = (byKind[rec.lost] ?? 0) + 1;
  const sample = (rec) => ({ key: rec.key, kind: rec.kind, ep: rec.ep, port: rec.port, status: rec.status, code: rec.code, lost: rec.lost, sent: rel(rec.sent), ms: rec.answered - rec.sent });
  return {
    id: 'g',
    title: 'no 500 and no request hung past its timeout while its instance was up',
    pass: errors.length === 0 && hung.length === 0,
    headline: `${errors.length} answers 5xx other than 503 (or GraphQL internal_error), ${timeouts.length} timeouts of which ${hung.length} while the instance was up; for information, ${lostWhileUp.length} other lost answers while the instance was up ${JSON.stringify(byKind)}`,
    errors: errors.slice(0, 20).map(sample),
    hung: hung.slice(0, 20).map(sample),
    lostWhileUp: lostWhileUp.slice(0, 20).map(sample),
  };
}

export function checkProcesses(stopExits, infra) {
  const unexpected = lives.filter((life) => life.exitedAt !== null && !life.killedByUs && !life.stoppedByUs).map((life) => ({ name: life.name, pid: life.pid, exit: life.exit, at: rel(life.exitedAt) }));
  const badStops = stopExits.filter((s) => !(s.exit && s.exit.code === 0)).map((s) => ({ name: s.name, exit: s.exit }));
  const notRecovered = timeline.filter((f) => !f.recovered).map((f) => ({ kind: f.kind, target: f.target, at: rel(f.startedAt), note: f.note }));
  const pass = unexpected.length === 0 && badStops.length === 0 && notRecovered.length === 0 && infra.unexpected.length === 0;
  return {
    id: 'h',
    title: 'no process died that the scheduler did not kill; every fault recovered; SIGTERM exits 0',
    pass,
    headline: `${lives.length} instance processes over the run, ${unexpected.length} unexpected exits, ${notRecovered.length} faults not recovered, SIGTERM exits ${stopExits.map((s) => `${s.name} ${s.exit?.code ?? s.exit?.signal ?? 'none'}${s.ms !== undefined ? ` in ${fmtS(s.ms)}` : ''}`).join(', ')}${infra.unexpected.length ? `; PostgreSQL/Redis died on their own: ${infra.unexpected.join(', ')}` : ''}`,
    unexpected,
    badStops,
    notRecovered,
  };
}
