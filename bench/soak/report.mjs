/**
 * The soak's report: per-key table, fault timeline and summary on stdout, and
 * bench/soak-results.json (its format is read by docs/OPERATIONS.md and docs/PERFORMANCE.md).
 */
import { writeFileSync } from 'node:fs';
import path from 'node:path';
import { ROOT, log, machine } from '../common.mjs';
import { mean } from '../lib/stats.mjs';
import { INSTANCES, RESULTS_FILE, fmtS, lpad, pad, settings } from './settings.mjs';
import { adminPicks, calls, lives, rel, run, timeline } from './state.mjs';

export function report({ invariants, drain, feed, receiver }) {
  const statuses = {};
  const lost = {};
  for (const rec of calls) {
    statuses[rec.status] = (statuses[rec.status] ?? 0) + 1;
    if (rec.status === 'lost') lost[rec.lost] = (lost[rec.lost] ?? 0) + 1;
  }
  const byKind = {};
  for (const rec of calls) {
    byKind[rec.kind] ??= {};
    byKind[rec.kind][rec.status] = (byKind[rec.kind][rec.status] ?? 0) + 1;
  }
  const faults = {};
  for (const f of timeline) {
    faults[f.kind] ??= { count: 0, downMs: [], backMs: [], notRecovered: 0 };
    faults[f.kind].count += 1;
    faults[f.kind].downMs.push((f.restartedAt ?? f.recoveredAt) - f.startedAt);
    faults[f.kind].backMs.push(f.recoveredAt - (f.restartedAt ?? f.startedAt));
    if (!f.recovered) faults[f.kind].notRecovered += 1;
  }
  const faultSummary = Object.fromEntries(Object.entries(faults).map(([kind, f]) => [kind, { count: f.count, meanDownS: Math.round(mean(f.downMs) / 100) / 10, meanBackAfterRestartS: Math.round(mean(f.backMs) / 100) / 10, notRecovered: f.notRecovered }]));
  const ranMinutes = Math.round(((Date.now() - run.startedAt) / 60_000) * 10) / 10;

  const [a, b] = invariants;
  log('\n== per key: monthly usage (a) and hourly window (b)');
  log(`  ${pad('key', 4)} ${pad('tier', 10)} ${lpad('counted', 8)} ${lpad('lost', 5)} ${lpad('stored', 7)} ${lpad('503', 4)} ${lpad('429', 5)} ${lpad('usage', 5)}  a     | ${lpad('hour', 5)} ${lpad('max/win', 8)} ${lpad('bound', 6)} ${lpad('P', 3)} ${lpad('outside', 7)} ${lpad('1 outage', 8)}  b`);
  for (const row of a.rows) {
    const h = b.rows.find((x) => x.key === row.key);
    log(
      `  ${pad(row.key, 4)} ${pad(row.tier, 10)} ${lpad(row.counted, 8)} ${lpad(row.lost, 5)} ${lpad(row.stored, 7)} ${lpad(row.unavailable, 4)} ${lpad(row.refused, 5)} ${lpad(row.usageReads, 5)}  ${row.pass ? 'PASS' : 'FAIL'}  | ${lpad(h.limit, 5)} ${lpad(h.maxInWindow, 8)} ${lpad(h.bound, 6)} ${lpad(h.processesInOutages, 3)} ${lpad(h.maxOutsideOutagesInWindow, 7)} ${lpad(h.maxInOneOutage, 8)}  ${h.pass ? 'PASS' : 'FAIL'}${row.pass ? '' : `  (a: ${row.verdict})`}`,
    );
  }
  log('  counted: answers 2xx/4xx other than the limiter\'s 429 (GET /api/v1/usage excluded: not counted by design); lost: no answer; stored: monthly_usage.request_count');
  log('  max/win: admitted requests certainly inside one rolling 3600 s; bound: hourly limit x (1 + P), P = instance processes alive during the Redis outages the window overlaps (summed: the fallback starts empty at each outage)');
  log('  outside: the most admitted in one window that touched no Redis outage (decided by Redis): must stay <= the hourly limit too');
  log('  1 outage: the most admitted sent and answered within one Redis outage: must stay <= hourly limit x (1 + P of that outage)');

  log('\n== fault timeline');
  for (const f of timeline) {
    log(`  +${lpad(rel(f.startedAt), 6)} s  ${pad(f.kind, 8)} ${pad(f.target, 8)} down ${fmtS((f.restartedAt ?? f.recoveredAt) - f.startedAt)}, back ${fmtS(f.recoveredAt - (f.restartedAt ?? f.startedAt))} after restart${f.recovered ? '' : ' NOT RECOVERED'}${f.kind === 'redis' ? ` (AOF: ${f.redisKeysAfter}/${f.redisKeysBefore} keys)` : ''}${f.note ? ` (${f.note.split('\n')[0]})` : ''}`);
  }
  if (timeline.length === 0) log('  (none)');

  const lines = [
    '',
    '== soak summary',
    `seed            ${settings.seed} (SOAK_SEED=${settings.seed} to replay the fault schedule)`,
    `minutes         ${settings.minutes} planned, ${ranMinutes} run; ${INSTANCES} instances; Redis appendonly yes + appendfsync always (SIGKILLed Redis restarts with every acknowledged write)`,
    `faults          ${timeline.length ? Object.entries(faultSummary).map(([kind, f]) => `${kind} x${f.count} (mean down ${f.meanDownS} s, back ${f.meanBackAfterRestartS} s after restart${f.notRecovered ? `, ${f.notRecovered} not recovered` : ''})`).join('; ') : 'none'}`,
    `requests        ${calls.length}: ${Object.entries(statuses).sort().map(([s, n]) => `${s} x${n}`).join(', ')}${Object.keys(lost).length ? `; lost: ${Object.entries(lost).map(([k, n]) => `${k} x${n}`).join(', ')}` : ''}`,
    `by kind         ${Object.entries(byKind).map(([kind, s]) => `${kind} {${Object.entries(s).sort().map(([k, n]) => `${k}:${n}`).join(' ')}}`).join('; ')}`,
    `picks           ${adminPicks.published.length} published and ${adminPicks.settled.size} settled by the admin; feed: ${feed.stats.matches} matches, ${feed.stats.valueOffers} value offers, ${feed.stats.oddsRequests} odds polls`,
    `webhooks        ${receiver.arrivals.length} attempts at the receiver (${receiver.arrivals.filter((x) => x.answered !== 200).length} answered 503 on purpose); drain ${drain.seconds} s${drain.timedOut ? ' TIMED OUT' : ''}`,
    ...invariants.map((inv) => `${inv.id}. ${inv.pass ? 'PASS' : 'FAIL'}  ${inv.title}: ${inv.headline}`),
    `result          ${invariants.every((inv) => inv.pass) ? 'PASS' : `FAIL (${invariants.filter((inv) => !inv.pass).map((inv) => inv.id).join(', ')})`}`,
  ];
  log(lines.join('\n'));

  const failedDetails = invariants.filter((inv) => !inv.pass && inv.id !== 'a' && inv.id !== 'b');
  for (const inv of failedDetails) {
    const { id, title, pass, headline, rows, ...details } = inv;
    log(`\n-- ${id} details: ${JSON.stringify(details).slice(0, 3_000)}`);
  }
  const errorLogs = lives.filter((life) => life.proc.errors > 0).map((life) => ({ name: life.name, pid: life.pid, errors: life.proc.errors, warns: life.proc.warns, samples: life.proc.errorSamples.slice(0, 5) }));
  if (errorLogs.length) {
    log(`\n-- instance error-level log lines (information): ${errorLogs.map((e) => `${e.name}/${e.pid}: ${e.errors}`).join(', ')}`);
    for (const e of errorLogs) for (const line of e.samples.slice(0, 2)) log(`   ${e.name}/${e.pid}: ${line.slice(0, 400)}`);
  }

  const results = {
    ranAt: new Date(run.startedAt).toISOString(),
    finishedAt: new Date().toISOString(),
    machine: machine(),
    seed: settings.seed,
    settings,
    minutesRun: ranMinutes,
    summary: lines.slice(2),
    faults: faultSummary,
    timeline: timeline.map((f) => ({ ...f, startedAt: rel(f.startedAt), restartedAt: rel(f.restartedAt), recoveredAt: rel(f.recoveredAt) })),
    processes: lives.map((life) => ({ name: life.name, port: life.port, pid: life.pid, spawnedAt: rel(life.spawnedAt), readyAt: rel(life.readyAt), exitedAt: rel(life.exitedAt), exit: life.exit, killedByUs: life.killedByUs, stoppedByUs: life.stoppedByUs, errorLogLines: life.proc.errors, warnLogLines: life.proc.warns })),
    requests: { total: calls.length, byStatus: statuses, lost, byKind },
    drain,
    instanceErrorLogs: errorLogs,
    invariants: invariants.map((inv) => ({ ...inv })),
    pass: invariants.every((inv) => inv.pass),
  };
  writeFileSync(RESULTS_FILE, `${JSON.stringify(results, null, 2)}\n`);
  log(`\nwrote ${path.relative(ROOT, RESULTS_FILE)}`);
}
